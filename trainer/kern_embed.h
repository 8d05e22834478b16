/* kern_embed: the token and position embeddings of the CUDA trainer,
 * forward and backward (fp32: embeddings are parameters). The backward
 * sums without atomics: kern_embed_group orders the micro-batch's rows by
 * token on the host, so each (token, channel) is summed by one thread in a
 * fixed order. Conventions in kern.h.
 */
#ifndef SCALEPLAN_TRAINER_KERN_EMBED_H
#define SCALEPLAN_TRAINER_KERN_EMBED_H

#include <stdint.h>

#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[r, c] = wte[tok[r], c] + (wpe ? wpe[r % t, c] : 0) for r < n, c < C;
 * out [n, C], wte [vocab, C], wpe [max_seq, C] fp32 (wpe may be NULL).
 * Tokens must lie in [0, vocab) (the caller checks them). */
int kern_embed_fwd(kern_stream_t s, float *out, const int32_t *tok, const float *wte,
                   const float *wpe, int n, int t, int C, err_t *err);

/* Host: group the n rows by token. Writes uniq[0..*n_uniq) the distinct
 * tokens in order of first appearance, start[0..*n_uniq] the offsets of
 * each token's rows in rows[0..n), rows in increasing order within a
 * token. count has one entry per vocabulary token and must be all zero;
 * it is all zero again on return. */
void kern_embed_group(const int32_t *tokens, int n, int32_t *count, int32_t *rows, int32_t *start,
                      int32_t *uniq, int *n_uniq);

/* dwte[uniq[u], c] += sum of dx[rows[k], c] over the u-th group, and
 * (dwpe not NULL) dwpe[p, c] += sum over b < nb of dx[b t + p, c]; dx
 * [nb t, C] fp32; uniq, start, rows on the device as kern_embed_group
 * made them. */
int kern_embed_bwd(kern_stream_t s, float *dwte, float *dwpe, const float *dx, const int32_t *uniq,
                   const int32_t *start, const int32_t *rows, int n_uniq, int nb, int t, int C,
                   err_t *err);

#ifdef __cplusplus
}
#endif

#endif
