/* kern_optim: the optimizer's kernels of the CUDA trainer - the squared
 * gradient norm and the AdamW update (as optim_adamw does it on the CPU).
 * Conventions in kern.h.
 */
#ifndef SCALEPLAN_TRAINER_KERN_OPTIM_H
#define SCALEPLAN_TRAINER_KERN_OPTIM_H

#include <stdint.h>

#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[0] = sum of g[i]^2 (double) over i < n whose flags[i] has bit 1
 * (counted in the norm), in a fixed order; part: scratch of
 * KERN_SUMSQ_BLOCKS doubles. */
int kern_sumsq(kern_stream_t s, double *out, double *part, const float *g, const uint8_t *flags,
               size_t n, err_t *err);

/* One AdamW update of n fp32 elements: g = grads scale; m, v in fp32;
 * bias-corrected ratio (bc1 = 1 - beta1^t, bc2 = 1 - beta2^t) and
 * decoupled weight decay (where flags bit 0 is set) in double. p16 (may be
 * NULL) receives the new weights rounded to bf16. */
int kern_adamw(kern_stream_t s, float *p, void *p16, const float *grads, float *m, float *v,
               const uint8_t *flags, size_t n, float beta1, float beta2, double bc1, double bc2,
               double lr, double eps, double weight_decay, float scale, err_t *err);

#ifdef __cplusplus
}
#endif

#endif
