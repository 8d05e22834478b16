/* kern_attn: causal attention of the CUDA trainer with the scores
 * materialised (as cpu_attention_fwd/bwd and the simulator's layout of a
 * trainer run assume): the q, k, v heads split out of qkv (GQA K/V heads
 * repeated for their query heads), S = scale Q K^T and Y = P V as
 * strided-batched cuBLASLt products over (batch, head), the causal softmax
 * in place, and the backward dP = dY V^T, dV = P^T dY, dS, dQ = dS K,
 * dK = dS^T Q. Conventions in kern.h.
 */
#ifndef SCALEPLAN_TRAINER_KERN_ATTN_H
#define SCALEPLAN_TRAINER_KERN_ATTN_H

#include "trainer/cuda_gemm.h"
#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Scratch of the attention, all of the activation type: q, k, v, y, dq,
 * dk, dv hold [nb, nh, t, hd] each, dp [nb, nh, t, t]. */
typedef struct {
    void *q, *k, *v, *y, *dq, *dk, *dv, *dp;
} kern_attn_scratch_t;

/* att [nb t, nh hd] (rows of heads) and probs [nb, nh, t, t] (the causal
 * softmax, zero above the diagonal, kept for the backward) of qkv
 * [nb t, (nh + 2 nkv) hd] after RoPE. nh must be a multiple of nkv. Uses
 * q, k, v, y of the scratch. */
int kern_attention_fwd(gemm_t *g, kern_stream_t s, kern_dtype_t t, void *att, void *probs,
                       const void *qkv, const kern_attn_scratch_t *sc, int nb, int seq, int nh,
                       int nkv, int hd, err_t *err);

/* dqkv [nb t, (nh + 2 nkv) hd] (overwritten) of datt [nb t, nh hd], with
 * qkv and probs as the forward had them. Uses the whole scratch. */
int kern_attention_bwd(gemm_t *g, kern_stream_t s, kern_dtype_t t, void *dqkv, const void *datt,
                       const void *qkv, const void *probs, const kern_attn_scratch_t *sc, int nb,
                       int seq, int nh, int nkv, int hd, err_t *err);

#ifdef __cplusplus
}
#endif

#endif
