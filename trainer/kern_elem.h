/* kern_elem: element-wise kernels of the CUDA trainer - the fp32 to
 * activation-type cast (bf16 weight copies) and the residual add.
 * Conventions in kern.h.
 */
#ifndef SCALEPLAN_TRAINER_KERN_ELEM_H
#define SCALEPLAN_TRAINER_KERN_ELEM_H

#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = in[i] rounded to t, i < n (out is t, in fp32). */
int kern_cast(kern_stream_t s, kern_dtype_t t, void *out, const float *in, size_t n, err_t *err);

/* x[i] += res[i] + (bias ? bias[i % C] : 0), i < n, all fp32: the residual
 * connection after a row-parallel projection and its TP sum. */
int kern_residual(kern_stream_t s, float *x, const float *res, const float *bias, size_t n, int C,
                  err_t *err);

#ifdef __cplusplus
}
#endif

#endif
