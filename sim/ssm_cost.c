/* ssm_cost: chunked scan and delta-rule kernels as their products (ssm_cost.h). */
#include "sim/ssm_cost.h"

#include <math.h>

/* Mamba-2 SSD forward (mamba_ssm ssd_combined.py _mamba_chunk_scan_combined_fwd):
 * chunk length Q, state N, head size P. */
static double ssd_fwd(const profile_t *p, const model_hybrid_t *x, const ssm_call_t *c)
{
    double Q = x->ssm_chunk, N = x->ssm_state, P = x->ssm_head_dim;
    double nc = ceil(c->seq / Q), T = c->seqs * c->seq, H = c->heads, G = c->groups;
    double per_head = c->seqs * nc * H, per_group = c->seqs * nc * G;
    dtype_t d = c->dtype;
    /* _bmm_chunk_fwd: C B^T per chunk and group, written in fp32 */
    double bmm = prof_gemm_time(p, d, Q, Q, N, per_group);
    /* _chunk_state_fwd: B^T X per chunk and head */
    double state = prof_gemm_time(p, d, N, P, Q, per_head);
    /* _chunk_scan_fwd: the masked C B^T times X, and C times the passed state */
    double scan = prof_gemm_time(p, d, Q, P, Q, per_head) + prof_gemm_time(p, d, Q, P, N, per_head);
    /* passes without products: dt's cumsum (read dt, write fp32 dA_cumsum),
     * state passing (read and write the fp32 states), CB read back by the
     * scan */
    double bytes = T * H * (c->e + 4) + 2 * per_head * N * P * 4 + per_group * Q * Q * 4;
    return bmm + state + scan + prof_mem_time(p, bytes);
}

/* Gated DeltaNet forward (fla chunk_gated_delta_rule_fwd): chunk C, key and
 * value sizes dk, dv, the key heads repeated to the value heads. */
static double gdn_fwd(const profile_t *p, const model_hybrid_t *x, const ssm_call_t *c)
{
    double C = x->gdn_chunk, dk = x->gdn_k_dim, dv = x->gdn_v_dim;
    double nc = ceil(c->seq / C), T = c->seqs * c->seq, H = c->heads;
    double b = c->seqs * nc * H;
    dtype_t d = c->dtype;
    /* chunk_scaled_dot_kkt and solve_tril: beta K K^T, its triangular inverse */
    double wy = prof_gemm_time(p, d, C, C, dk, b);
    /* recompute_w_u: W = A (beta K), U = A (beta V) */
    double wu = prof_gemm_time(p, d, C, dk, C, b) + prof_gemm_time(p, d, C, dv, C, b);
    /* chunk_gated_delta_rule_fwd_h: W S and the state update K^T (U - W S) */
    double h = prof_gemm_time(p, d, C, dv, dk, b) + prof_gemm_time(p, d, dk, dv, C, b);
    /* chunk_fwd_o: Q K^T, Q S and the intra-chunk product with U - W S */
    double o = prof_gemm_time(p, d, C, C, dk, b) + prof_gemm_time(p, d, C, dv, dk, b) +
               prof_gemm_time(p, d, C, dv, C, b);
    /* passes without products: g's cumsum (fp32), the WY matrix written
     * and read back, the chunk states written and read back */
    double bytes = 2 * T * H * 4 + 2 * b * C * C * c->e + 2 * b * dk * dv * c->e;
    return wy + wu + h + o + prof_mem_time(p, bytes);
}

/* Kimi Delta Attention forward (fla chunk_kda_fwd): the gated delta rule's
 * chunkwise products at key = value size (gdn_fwd, heads = value heads),
 * plus the passes its per-channel decay adds over Gated DeltaNet's
 * per-head one: the decay's cumsum over P = heads x head_dim channels
 * (read in the activation type, write fp32) and the gated q and k
 * (q exp(g), k exp(-g)) written and read back for the products. */
static double kda_fwd(const profile_t *p, const model_hybrid_t *x, const ssm_call_t *c)
{
    double T = c->seqs * c->seq, P = c->heads * x->gdn_k_dim;
    return gdn_fwd(p, x, c) + prof_mem_time(p, T * P * (c->e + 4) + 2 * 2 * T * P * c->e);
}

/* Lightning attention forward (Qin et al., "Lightning Attention-2",
 * arXiv 2401.04658, Algorithm 1; MiniMax's lightning_attention kernel): per
 * block of B tokens and head of size d, the intra-block masked Q K^T and
 * its product with V, the inter-block Q KV and the KV state update
 * K^T V, each a batched product; the running KV state (fp32) written after
 * each block and read by the next. */
static double lightning_fwd(const profile_t *p, const model_hybrid_t *x, const ssm_call_t *c)
{
    double B = x->gdn_chunk, d = x->gdn_k_dim;
    double nb = ceil(c->seq / B), b = c->seqs * nb * c->heads;
    dtype_t t = c->dtype;
    double intra = prof_gemm_time(p, t, B, B, d, b) + prof_gemm_time(p, t, B, d, B, b);
    double inter = prof_gemm_time(p, t, B, d, d, b) + prof_gemm_time(p, t, d, d, B, b);
    return intra + inter + prof_mem_time(p, 2 * b * d * d * 4);
}

/* Mamba-1's selective scan (mamba_ssm selective_scan_cuda, Gu & Dao 2023
 * sec. 3.3.2: the fused kernel reads its inputs from HBM once, runs the
 * recurrence in SRAM and writes only the output): memory-bound, priced as
 * reading u, delta and z (c->heads channels each), B and C (state each)
 * and writing y. */
static double scan1_fwd(const profile_t *p, const model_hybrid_t *x, const ssm_call_t *c)
{
    double T = c->seqs * c->seq;
    return prof_mem_time(p, T * (4 * c->heads + 2.0 * x->ssm_state) * c->e);
}

void ssm_kernel_time(const profile_t *p, const model_t *m, model_mixer_t k, const ssm_call_t *c,
                     double *fwd_s, double *bwd_s)
{
    *fwd_s = *bwd_s = 0;
    if (!(c->seqs > 0 && c->seq > 0 && c->heads > 0))
        return;
    if (k == MODEL_MIXER_MAMBA2)
        *fwd_s = ssd_fwd(p, &m->hybrid, c);
    else if (k == MODEL_MIXER_GDN)
        *fwd_s = gdn_fwd(p, &m->hybrid, c);
    else if (k == MODEL_MIXER_MAMBA1)
        *fwd_s = scan1_fwd(p, &m->hybrid, c);
    else if (k == MODEL_MIXER_KDA)
        *fwd_s = kda_fwd(p, &m->hybrid, c);
    else if (k == MODEL_MIXER_LIGHTNING)
        *fwd_s = lightning_fwd(p, &m->hybrid, c);
    *bwd_s = SSM_BWD_RATIO * *fwd_s;
}
