/* hybrid: per-block mixers of hybrid models (see hybrid.h for sources). */
#include "models/hybrid.h"

#include <string.h>

#include "models/moe_layers.h"

bool model_is_hybrid(const model_t *m)
{
    return m->hybrid.n_layers_hybrid > 0;
}

model_mixer_t model_block_mixer(const model_t *m, int layer)
{
    if (!model_is_hybrid(m) || layer < 0 || layer >= m->hybrid.n_layers_hybrid)
        return MODEL_MIXER_ATTENTION;
    return (model_mixer_t)(m->hybrid.block[layer] & MODEL_BLOCK_MIXER_MASK);
}

bool model_block_has_mlp(const model_t *m, int layer)
{
    if (!model_is_hybrid(m) || layer < 0 || layer >= m->hybrid.n_layers_hybrid)
        return true;
    return !(m->hybrid.block[layer] & MODEL_BLOCK_NO_MLP);
}

int model_hybrid_count(const model_t *m, model_mixer_t k)
{
    if (!model_is_hybrid(m))
        return k == MODEL_MIXER_ATTENTION ? m->n_layers : 0;
    bool par = k == MODEL_MIXER_MAMBA2 && m->hybrid.par_mamba2; /* Falcon-H1 */
    int n = 0;
    for (int i = 0; i < m->n_layers; i++)
        n += model_block_mixer(m, i) == k ||
             (par && model_block_mixer(m, i) == MODEL_MIXER_ATTENTION);
    return n;
}

const char *model_mixer_name(model_mixer_t k)
{
    static const char *const names[MODEL_MIXER_COUNT] = {"attention", "mamba2",
                                                         "gated_deltanet", "mamba1", "kda",
                                                         "lightning", "mlp_only"};
    return k < MODEL_MIXER_COUNT ? names[k] : "?";
}

int model_hybrid_set_pattern(model_t *m, const char *pattern, const char *file, const char *key,
                             err_t *err)
{
    int n = 0;
    for (const char *c = pattern; *c; c++) {
        if (*c == '|')
            continue; /* Megatron's pipeline-stage separator */
        unsigned char b;
        switch (*c) {
        case 'M': b = MODEL_MIXER_MAMBA2 | MODEL_BLOCK_NO_MLP; break;
        case '*': b = MODEL_MIXER_ATTENTION | MODEL_BLOCK_NO_MLP; break;
        case '-': b = MODEL_MIXER_NONE; break;
        case 'E': b = MODEL_MIXER_NONE; break;
        default:
            return err_setf(err, ERR_INPUT, file, key,
                            "layer %d is '%c': a pattern has 'M' (Mamba-2), '*' (attention), "
                            "'-' (MLP), 'E' (MoE) and '|' (stage separator) only",
                            n, (unsigned char)*c >= 32 && (unsigned char)*c < 127 ? *c : '?');
        }
        if (*c == 'E' && m->moe.n_experts <= 0)
            return err_setf(err, ERR_INPUT, file, key,
                            "layer %d is 'E' (MoE) but the model has no routed experts", n);
        if (n >= MODEL_MAX_MOE_LAYERS)
            return err_setf(err, ERR_INPUT, file, key, "more than %d layers",
                            MODEL_MAX_MOE_LAYERS);
        m->hybrid.block[n] = b;
        model_moe_set_layer(m, n, *c == 'E');
        n++;
    }
    if (n == 0)
        return err_setf(err, ERR_INPUT, file, key, "has no layers");
    m->n_layers = n;
    m->hybrid.n_layers_hybrid = n;
    return ERR_OK;
}

int model_hybrid_validate(const model_t *m, const char *ctx, err_t *err)
{
    if (!model_is_hybrid(m))
        return ERR_OK;
    const model_hybrid_t *h = &m->hybrid;
    if (h->n_layers_hybrid != m->n_layers || m->n_layers > MODEL_MAX_MOE_LAYERS)
        return err_setf(err, ERR_INPUT, ctx, "layers",
                        "the layer pattern has %d layers but the model %d (at most %d)",
                        h->n_layers_hybrid, m->n_layers, MODEL_MAX_MOE_LAYERS);
    const long cap = 10000000L;
    if (model_hybrid_count(m, MODEL_MIXER_MAMBA2) > 0 &&
        (h->ssm_state < 1 || h->ssm_heads < 1 || h->ssm_head_dim < 1 || h->ssm_groups < 1 ||
         h->ssm_conv < 1 || h->ssm_chunk < 1 || h->ssm_state > cap || h->ssm_heads > cap ||
         h->ssm_head_dim > cap || h->ssm_conv > 1024 || h->ssm_chunk > cap ||
         h->ssm_heads % h->ssm_groups != 0))
        return err_setf(err, ERR_INPUT, ctx, "mamba",
                        "Mamba-2 layers need positive state size, heads, head size, groups "
                        "(dividing the heads), conv width and chunk (got %d, %d, %d, %d, %d, %d)",
                        h->ssm_state, h->ssm_heads, h->ssm_head_dim, h->ssm_groups, h->ssm_conv,
                        h->ssm_chunk);
    if (model_hybrid_count(m, MODEL_MIXER_GDN) > 0 &&
        (h->gdn_k_heads < 1 || h->gdn_v_heads < 1 || h->gdn_k_dim < 1 || h->gdn_v_dim < 1 ||
         h->gdn_conv < 1 || h->gdn_chunk < 1 || h->gdn_k_heads > cap || h->gdn_v_heads > cap ||
         h->gdn_k_dim > cap || h->gdn_v_dim > cap || h->gdn_conv > 1024 || h->gdn_chunk > cap ||
         h->gdn_v_heads % h->gdn_k_heads != 0))
        return err_setf(err, ERR_INPUT, ctx, "linear_num_value_heads",
                        "Gated DeltaNet layers need positive key/value heads (value heads a "
                        "multiple of key heads), head sizes, conv width and chunk (got %d, %d, "
                        "%d, %d, %d)",
                        h->gdn_k_heads, h->gdn_v_heads, h->gdn_k_dim, h->gdn_v_dim, h->gdn_conv);
    if (model_hybrid_count(m, MODEL_MIXER_KDA) > 0 &&
        (h->gdn_k_heads < 1 || h->gdn_k_dim < 1 || h->gdn_conv < 1 || h->gdn_chunk < 1 ||
         h->kda_gate_rank < 1 || h->gdn_k_heads > cap || h->gdn_k_dim > cap ||
         h->gdn_conv > 1024 || h->gdn_chunk > cap || h->kda_gate_rank > cap ||
         h->gdn_v_heads != h->gdn_k_heads || h->gdn_v_dim != h->gdn_k_dim ||
         model_hybrid_count(m, MODEL_MIXER_GDN) > 0))
        return err_setf(err, ERR_INPUT, ctx, "linear_attn_config",
                        "Kimi Delta Attention layers need positive heads, head size, conv width, "
                        "chunk and gate rank, keys and values of one shape, and no Gated "
                        "DeltaNet layers beside them (got %d heads of %d, conv %d)",
                        h->gdn_k_heads, h->gdn_k_dim, h->gdn_conv);
    if (model_hybrid_count(m, MODEL_MIXER_LIGHTNING) > 0 &&
        (h->gdn_k_heads < 1 || h->gdn_k_dim < 1 || h->gdn_chunk < 1 || h->gdn_k_heads > cap ||
         h->gdn_k_dim > cap || h->gdn_chunk > cap))
        return err_setf(err, ERR_INPUT, ctx, "attn_type_list",
                        "lightning attention layers need positive heads, head size and block "
                        "(got %d, %d, %d)",
                        h->gdn_k_heads, h->gdn_k_dim, h->gdn_chunk);
    if (model_hybrid_count(m, MODEL_MIXER_MAMBA1) > 0 &&
        (h->ssm_state < 1 || h->ssm_inner < 1 || h->ssm_dt_rank < 1 || h->ssm_conv < 1 ||
         h->ssm_state > cap || h->ssm_inner > cap || h->ssm_dt_rank > cap || h->ssm_conv > 1024))
        return err_setf(err, ERR_INPUT, ctx, "mamba_d_state",
                        "Mamba layers need positive state size, inner width, dt rank and conv "
                        "width (got %d, %d, %d, %d)",
                        h->ssm_state, h->ssm_inner, h->ssm_dt_rank, h->ssm_conv);
    return ERR_OK;
}

/* Mamba-2 widths: d_inner (heads x head size) and the B, C width (2 x
 * groups x state). */
static void mamba_widths(const model_t *m, double *di, double *bc)
{
    const model_hybrid_t *h = &m->hybrid;
    *di = (double)h->ssm_heads * h->ssm_head_dim;
    *bc = 2.0 * h->ssm_groups * h->ssm_state;
}

double model_hybrid_mixer_params(const model_t *m, model_mixer_t k, double t)
{
    const model_hybrid_t *x = &m->hybrid;
    double h = m->hidden;
    if (t < 1)
        t = 1;
    if (k == MODEL_MIXER_MAMBA2) {
        /* in_proj h -> [z, x, B, C, dt]; conv1d over [x, B, C] with bias;
         * A_log, D, dt_bias per head; gated RMSNorm over d_inner; out_proj */
        double di, bc, nh = x->ssm_heads;
        mamba_widths(m, &di, &bc);
        double in = h * (2 * di + bc + nh), conv = (di + bc) * (x->ssm_conv + 1.0);
        return (in + conv + 3 * nh + (x->ssm_no_norm ? 0 : di) + di * h) / t;
    }
    if (k == MODEL_MIXER_GDN) {
        /* in_proj_qkvz h -> [q, k, v, z]; in_proj_ba h -> [b, a] per value
         * head; conv1d over [q, k, v] without bias; dt_bias, A_log per value
         * head; RMSNormGated over one value head (replicated); out_proj */
        double kd = (double)x->gdn_k_heads * x->gdn_k_dim;
        double vd = (double)x->gdn_v_heads * x->gdn_v_dim, nv = x->gdn_v_heads;
        double split = h * (2 * kd + 2 * vd) + h * 2 * nv + (2 * kd + vd) * x->gdn_conv +
                       2 * nv + vd * h;
        return split / t + x->gdn_v_dim;
    }
    if (k == MODEL_MIXER_MAMBA1) {
        /* transformers' JambaMambaMixer: in_proj h -> [x, z]; conv1d over x;
         * x_proj d_inner -> [dt, B, C] (no bias); dt_proj dt_rank -> d_inner
         * with bias; A_log d_inner x N; D; out_proj; dt/B/C RMSNorms */
        double di = x->ssm_inner, N = x->ssm_state, R = x->ssm_dt_rank;
        double p = h * 2 * di + (x->ssm_proj_bias ? 2 * di : 0) + di * x->ssm_conv +
                   (x->ssm_conv_bias ? di : 0) + di * (R + 2 * N) + R * di + di + di * N + di +
                   di * h + (x->ssm_proj_bias ? h : 0);
        return p / t + (x->ssm_dt_norms ? R + 2 * N : 0);
    }
    if (k == MODEL_MIXER_KDA) {
        /* Kimi's KimiDeltaAttention (modeling_kimi.py; vLLM kimi_linear):
         * q, k, v projections h -> P (P = heads x head_dim) with a short
         * conv each (no bias); A_log per head; dt_bias over P; the decay
         * gate f_a h -> r, f_b r -> P; beta b_proj h -> heads; the output
         * gate g_a h -> r, g_b r -> P; o_norm over one head; o_proj P -> h.
         * vLLM replicates f_a, g_a and o_norm over TP, splits the rest. */
        double P = (double)x->gdn_k_heads * x->gdn_k_dim, H = x->gdn_k_heads;
        double r = x->kda_gate_rank;
        double split = 3 * h * P + 3 * P * x->gdn_conv + H + P + 2 * r * P + h * H + P * h;
        return split / t + 2 * h * r + x->gdn_k_dim;
    }
    if (k == MODEL_MIXER_LIGHTNING) {
        /* MiniMaxText01LightningAttention / MiniMaxM1LightningAttention:
         * qkv_proj h -> 3P, output_gate h -> P, RMSNorm over P, out_proj
         * P -> h, no biases (P = heads x head_dim); the per-head decay
         * slopes are fixed, not parameters. All split over TP by heads. */
        double P = (double)x->gdn_k_heads * x->gdn_k_dim;
        return (4 * h * P + P + P * h) / t;
    }
    return 0;
}

/* SSD forward FLOPs per token (Dao & Gu 2024, sec. 6, chunk length Q):
 * step 1, the diagonal blocks: C B^T per group (2QN) and its masked
 * product with X per head (2QP); step 2, each chunk's state B^T X per
 * head (2NP); step 3, passing states between chunks (2NP / Q); step 4,
 * the states' contribution C h per head (2NP). Full Q x Q blocks, no
 * causal halving (the convention of models/flops.h). */
static double ssd_flops(const model_hybrid_t *x)
{
    double Q = x->ssm_chunk, N = x->ssm_state, P = x->ssm_head_dim;
    return x->ssm_groups * 2 * Q * N + x->ssm_heads * (2 * Q * P + 4 * N * P + 2 * N * P / Q);
}

/* Gated DeltaNet forward FLOPs per token per value head in the chunkwise
 * (WY) form with chunk C, key size dk, value size dv (Yang et al. 2025,
 * sec. 3; fla chunk_gated_delta_rule): K K^T in the chunk (2C dk), the
 * triangular solve (2C^2/3), W = T K and U = T V (2C dk + 2C dv), the
 * intra-chunk Q K^T (2C dk) and its product with U - W S (2C dv), W S,
 * Q S and the state update K^T (U - W S) (3 x 2 dk dv). */
static double gdn_flops(const model_hybrid_t *x)
{
    double C = x->gdn_chunk, dk = x->gdn_k_dim, dv = x->gdn_v_dim;
    return 6 * C * dk + 4 * C * dv + 2 * C * C / 3 + 6 * dk * dv;
}

void model_hybrid_mixer_flops(const model_t *m, model_mixer_t k, int seq_len, double *in,
                              double *scan, double *out)
{
    const model_hybrid_t *x = &m->hybrid;
    double h = m->hidden;
    (void)seq_len; /* both kernels are linear in the sequence */
    *in = *scan = *out = 0;
    if (k == MODEL_MIXER_MAMBA2) {
        double di, bc;
        mamba_widths(m, &di, &bc);
        *in = 2 * h * (2 * di + bc + x->ssm_heads);
        *scan = 2 * (di + bc) * x->ssm_conv + ssd_flops(x);
        *out = 2 * di * h;
    } else if (k == MODEL_MIXER_GDN) {
        double kd = (double)x->gdn_k_heads * x->gdn_k_dim;
        double vd = (double)x->gdn_v_heads * x->gdn_v_dim;
        *in = 2 * h * (2 * kd + 2 * vd + 2.0 * x->gdn_v_heads);
        *scan = 2 * (2 * kd + vd) * x->gdn_conv + x->gdn_v_heads * gdn_flops(x);
        *out = 2 * vd * h;
    } else if (k == MODEL_MIXER_MAMBA1) {
        /* in_proj, x_proj and dt_proj as projections; the conv1d and the
         * selective scan (ASSUMED 6 d_inner N: the recurrence h = dA h + dB x
         * and y = C h, one multiply-add each per state element, and the
         * discretization's multiply, 2 FLOPs each) as the kernel */
        double di = x->ssm_inner, N = x->ssm_state, R = x->ssm_dt_rank;
        *in = 2 * h * 2 * di + 2 * di * (R + 2 * N) + 2 * R * di;
        *scan = 2 * di * x->ssm_conv + 6 * di * N;
        *out = 2 * di * h;
    } else if (k == MODEL_MIXER_KDA) {
        /* q, k, v, beta and both low-rank gates as projections; the three
         * short convs and the chunkwise delta rule (the gated delta rule's
         * products at key = value size; the per-channel decay is
         * elementwise) as the kernel */
        double P = (double)x->gdn_k_heads * x->gdn_k_dim, r = x->kda_gate_rank;
        *in = 2 * h * (3 * P + x->gdn_k_heads + 2 * r) + 2 * 2 * r * P;
        *scan = 2 * 3 * P * x->gdn_conv + x->gdn_k_heads * gdn_flops(x);
        *out = 2 * P * h;
    } else if (k == MODEL_MIXER_LIGHTNING) {
        /* Lightning Attention-2 (Qin et al., arXiv 2401.04658, Algorithm 1)
         * in blocks of B tokens, per head of size d: the intra-block
         * masked Q K^T and its product with V (2 B d each), the inter-block
         * Q KV (2 d^2) and the state update K^T V (2 d^2); full B x B
         * blocks, no causal halving (the convention of models/flops.h) */
        double P = (double)x->gdn_k_heads * x->gdn_k_dim, B = x->gdn_chunk, d = x->gdn_k_dim;
        *in = 2 * h * 4 * P;
        *scan = x->gdn_k_heads * (4 * B * d + 4 * d * d);
        *out = 2 * P * h;
    }
}

/* The tensors Kimi Delta Attention and lightning attention keep for their
 * backward (model_hybrid_mixer_saved), appended to t from n; the new
 * count. */
static int linear_saved(const model_t *m, model_mixer_t k, double sb, double e,
                        hybrid_saved_t *t, int n)
{
    const model_hybrid_t *x = &m->hybrid;
    if (k == MODEL_MIXER_KDA) {
        /* the q, k, v, beta projections and the conv outputs; fla's
         * chunk_kda saves the per-channel decay g (fp32), beta and the WY
         * matrix A; the kernel output, the output gate and o_proj's input;
         * the replicated low-rank gates' rank-wide outputs */
        double P = (double)x->gdn_k_heads * x->gdn_k_dim, H = x->gdn_k_heads;
        t[n++] = (hybrid_saved_t){sb * (3 * P + H), e, true, false};
        t[n++] = (hybrid_saved_t){sb * 3 * P, e, true, false};
        t[n++] = (hybrid_saved_t){sb * P, 4, true, false};
        t[n++] = (hybrid_saved_t){sb * H * x->gdn_chunk, e, true, false};
        t[n++] = (hybrid_saved_t){sb * P, e, true, false};
        t[n++] = (hybrid_saved_t){sb * P, e, true, false};
        t[n++] = (hybrid_saved_t){sb * P, e, true, false};
        t[n++] = (hybrid_saved_t){sb * 2.0 * x->kda_gate_rank, e, false, false};
    }
    if (k == MODEL_MIXER_LIGHTNING) {
        /* qkv after its SiLU, the kernel output (the norm's input), the
         * output gate's projection and out_proj's input; the block states
         * are recomputed in the backward (Lightning Attention-2, sec. 3) */
        double P = (double)x->gdn_k_heads * x->gdn_k_dim;
        t[n++] = (hybrid_saved_t){sb * 3 * P, e, true, false};
        t[n++] = (hybrid_saved_t){sb * P, e, true, false};
        t[n++] = (hybrid_saved_t){sb * P, e, true, false};
        t[n++] = (hybrid_saved_t){sb * P, e, true, false};
    }
    return n;
}

int model_hybrid_mixer_saved(const model_t *m, model_mixer_t k, double sb, double e,
                             hybrid_saved_t *out, int cap)
{
    const model_hybrid_t *x = &m->hybrid;
    hybrid_saved_t t[8];
    int n = 0;
    if (k == MODEL_MIXER_MAMBA2) {
        /* Megatron MambaMixer on mamba_ssm's fused
         * mamba_split_conv1d_scan_combined (checkpoint_lvl 1): the in_proj
         * output zxbcdt, the scan output before the gate (out_x) and the
         * norm's rstd per group (fp32); conv output and gated norm are
         * rebuilt in the backward; out_proj keeps its input (d_inner). */
        double di, bc, nh = x->ssm_heads;
        mamba_widths(m, &di, &bc);
        t[n++] = (hybrid_saved_t){sb * (2 * di + bc + nh), e, true, false};
        t[n++] = (hybrid_saved_t){sb * di, e, true, false};
        t[n++] = (hybrid_saved_t){sb * x->ssm_groups, 4, true, false};
        t[n++] = (hybrid_saved_t){sb * di, e, true, false};
    } else if (k == MODEL_MIXER_GDN) {
        /* the two in_proj outputs (q, k, v, z; b, a), the conv outputs
         * q, k, v, and what fla's chunk_gated_delta_rule saves: g (fp32),
         * beta and the chunk's solved WY matrix A (v_heads x C per token);
         * the kernel output before the gated norm and out_proj's input */
        double kd = (double)x->gdn_k_heads * x->gdn_k_dim;
        double vd = (double)x->gdn_v_heads * x->gdn_v_dim, nv = x->gdn_v_heads;
        t[n++] = (hybrid_saved_t){sb * (2 * kd + 2 * vd + 2 * nv), e, true, false};
        t[n++] = (hybrid_saved_t){sb * (2 * kd + vd), e, true, false};
        t[n++] = (hybrid_saved_t){sb * nv, 4 + e, true, false};
        t[n++] = (hybrid_saved_t){sb * nv * x->gdn_chunk, e, true, false};
        t[n++] = (hybrid_saved_t){sb * vd, e, true, false};
        t[n++] = (hybrid_saved_t){sb * vd, e, true, false};
    }
    if (k == MODEL_MIXER_MAMBA1) {
        /* mamba_ssm's mamba_inner_fn saves xz, the conv output, x_dbl (dt,
         * B, C), delta and the gated output out_z (out_proj's input) */
        double di = x->ssm_inner, N = x->ssm_state, R = x->ssm_dt_rank;
        t[n++] = (hybrid_saved_t){sb * 2 * di, e, true, false};
        t[n++] = (hybrid_saved_t){sb * di, e, true, false};
        t[n++] = (hybrid_saved_t){sb * (R + 2 * N), e, false, false};
        t[n++] = (hybrid_saved_t){sb * di, e, true, false};
        t[n++] = (hybrid_saved_t){sb * di, e, true, false};
    }
    n = linear_saved(m, k, sb, e, t, n);
    if (n > cap)
        n = cap;
    memcpy(out, t, (size_t)n * sizeof *t);
    return n;
}

double model_hybrid_state_bytes(const model_t *m, model_mixer_t k)
{
    const model_hybrid_t *x = &m->hybrid;
    if (k == MODEL_MIXER_MAMBA2)
        return 4.0 * x->ssm_heads * x->ssm_head_dim * x->ssm_state;
    if (k == MODEL_MIXER_GDN || k == MODEL_MIXER_KDA)
        return 4.0 * x->gdn_v_heads * x->gdn_k_dim * x->gdn_v_dim;
    if (k == MODEL_MIXER_MAMBA1)
        return 4.0 * x->ssm_inner * x->ssm_state;
    if (k == MODEL_MIXER_LIGHTNING)
        return 4.0 * x->gdn_k_heads * x->gdn_k_dim * x->gdn_k_dim;
    return 0;
}
