/* kern_loss: the fused softmax cross-entropy of the CUDA trainer and the
 * sum of its per-row losses. Conventions in kern.h.
 */
#ifndef SCALEPLAN_TRAINER_KERN_LOSS_H
#define SCALEPLAN_TRAINER_KERN_LOSS_H

#include <stdint.h>

#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Softmax cross-entropy of logits [n, ld] (type t; the first v columns are
 * the vocabulary, ld >= v): losses[r] = log sum_k exp(z_k - max) -
 * (z_target - max) (fp32), and each row overwritten with its gradient
 * (softmax - onehot(target)) scale. Columns [v, ld) are never read or
 * written. Targets must lie in [0, v). */
int kern_crossentropy(kern_stream_t s, kern_dtype_t t, void *logits, float *losses,
                      const int32_t *targets, int n, int v, int ld, float scale, err_t *err);

/* out[0] = the sum of x[0 .. n) in double, in a fixed order. */
int kern_sum(kern_stream_t s, double *out, const float *x, size_t n, err_t *err);

#ifdef __cplusplus
}
#endif

#endif
