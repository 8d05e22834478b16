/* kern_rope: the rotary position embedding of the CUDA trainer (rotate-half
 * convention, as cpu_rope_fwd/bwd). Conventions in kern.h.
 */
#ifndef SCALEPLAN_TRAINER_KERN_ROPE_H
#define SCALEPLAN_TRAINER_KERN_ROPE_H

#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Host: cos_t, sin_t [t, hd/2] = cos/sin(pos theta^(-2i/hd)) for pos < t,
 * i < hd/2, computed in double as cpu_ops does and rounded to float. */
void kern_rope_table(int t, int hd, double theta, float *cos_t, float *sin_t);

/* In place on the q and k heads of qkv [n, (nh + 2 nkv) hd] (type dt; row
 * r at position r % t): for i < hd/2,
 *   x[i] = x1 cos - x2 sin', x[i + hd/2] = x2 cos + x1 sin',  sin' = sign sin,
 * sign +1 the forward rotation, -1 its inverse (the backward on dqkv).
 * cos_t, sin_t on the device as kern_rope_table made them. */
int kern_rope(kern_stream_t s, kern_dtype_t dt, void *qkv, const float *cos_t, const float *sin_t,
              int n, int t, int nh, int nkv, int hd, float sign, err_t *err);

#ifdef __cplusplus
}
#endif

#endif
