/* kern_norm: LayerNorm and RMSNorm of the CUDA trainer, forward and
 * backward, and the bias gradient (the same deterministic column sums as
 * the norm weights'). Conventions in kern.h.
 */
#ifndef SCALEPLAN_TRAINER_KERN_NORM_H
#define SCALEPLAN_TRAINER_KERN_NORM_H

#include <stdbool.h>

#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LayerNorm (layernorm: (x - mean) rstd w + b) or RMSNorm (x rstd w) of
 * each row of inp [n, C] fp32 into out [n, C] of type t; mean (LayerNorm
 * only, else ignored and may be NULL) and rstd [n] fp32 kept for the
 * backward; w, b [C] fp32 (b NULL when absent). rstd = 1 / sqrt(var + eps)
 * with the variance over C (as cpu_ops computes it). */
int kern_norm_fwd(kern_stream_t s, kern_dtype_t t, void *out, float *mean, float *rstd,
                  const float *inp, const float *w, const float *b, int n, int C, double eps,
                  bool layernorm, err_t *err);

/* The norm's backward for dout [n, C] fp32:
 *   LayerNorm: dx = rstd (g w - mean(g w) - xhat mean(g w xhat)), xhat = (x - mean) rstd
 *   RMSNorm:   dx = rstd g w - rstd^3 x sum(g w x) / C
 * dx [n, C] fp32 is added to (accumulate) or overwritten; dx_copy (type t,
 * may be NULL) receives the resulting dx rounded to t. dw [C] += the
 * weight gradient, db [C] += the bias gradient (LayerNorm with a bias
 * only; NULL otherwise). inp, w, mean (LayerNorm) and rstd as the forward
 * had them. pa, pb: scratch of KERN_PART_MAX x C floats each. */
int kern_norm_bwd(kern_stream_t s, kern_dtype_t t, float *dx, void *dx_copy, float *dw, float *db,
                  const float *dout, const float *inp, const float *w, const float *mean,
                  const float *rstd, int n, int C, bool layernorm, bool accumulate, float *pa,
                  float *pb, err_t *err);

/* dbias[c] += sum over the n rows of dout[r, c] (dout [n, ld] of type
 * t_in, columns [0, C) used). pa: scratch of KERN_PART_MAX x C floats. */
int kern_bias_grad(kern_stream_t s, kern_dtype_t t_in, float *dbias, const void *dout, int ld, int n,
                   int C, float *pa, err_t *err);

#ifdef __cplusplus
}
#endif

#endif
