/* kern_act: the MLP activations of the CUDA trainer - GELU (tanh
 * approximation, GPT-2) and SwiGLU (Llama) - forward and backward, in the
 * activation type t. Conventions in kern.h.
 */
#ifndef SCALEPLAN_TRAINER_KERN_ACT_H
#define SCALEPLAN_TRAINER_KERN_ACT_H

#include <stdbool.h>

#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GELU: out [n, f] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) of
 * fc [n, f]. SwiGLU: fc [n, 2f] holds gate then up per row, out [n, f] =
 * silu(gate) up. */
int kern_act_fwd(kern_stream_t s, kern_dtype_t t, bool swiglu, void *out, const void *fc, int n,
                 int f, err_t *err);

/* The input gradient dfc (same shape as fc; overwritten, where cpu_ops
 * adds into zeros) of the output gradient dact [n, f]. */
int kern_act_bwd(kern_stream_t s, kern_dtype_t t, bool swiglu, void *dfc, const void *fc,
                 const void *dact, int n, int f, err_t *err);

#ifdef __cplusplus
}
#endif

#endif
