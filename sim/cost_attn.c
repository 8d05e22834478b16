/* cost_attn: the attention half's projections (Q/K/V or multi-latent
 * attention's) and its core, fused or materialized, with sliding windows
 * (sim/costsInt.h). Context parallelism's ring blocks are sim/cost_cp.c. */
#include "sim/costsInt.h"

/* The attention core over the blocks' kinds: the blocks that attend to
 * the whole sequence at `full` (their own shape with Gemma 4's
 * full-attention blocks, model_full_attn_t), the sliding-window ones
 * (model_t.window over window_layers of the layers) at the model's head
 * size. A fused kernel skips the key blocks outside the window as it skips
 * the masked ones, so a query attends to at most `window` keys (causal: on
 * average w - w^2/2s of them; FlashAttention-2's and cuDNN's window_size).
 * The layer priced stands for every block, so its attention is the blocks'
 * average. Kept whole (said by the model reader) with context parallelism,
 * whose ring splits the sequence first. */
static void price_window(const pricer_t *pr, const prof_attn_call_t *full, dtype_t dt,
                         double width, double *fwd, double *bwd)
{
    const model_t *m = pr->in->model;
    double s = pr->in->layout->seq_len, w = m->window;
    bool windowed = w > 0 && w < s && m->window_layers > 0;
    if (!windowed && !model_has_full_attn(m))
        return;
    double keys = full->causal ? s / 2 : s;
    prof_attn_call_t call = *full;
    if (windowed) {
        keys = full->causal ? w - w * w / (2 * s) : w;
        call.keys = w;
    }
    double flops = 4 * pr->T * keys * width;
    double share = (double)m->window_layers / m->n_layers;
    *fwd = (1 - share) * *fwd + share * prof_attn_time(pr->p, dt, &call, flops, false);
    *bwd = (1 - share) * *bwd + share * prof_attn_time(pr->p, dt, &call, 2.5 * flops, true);
}

/* Attention core of one layer: returns forward and backward seconds. */
void cost_attention(pricer_t *pr, double *fwd, double *bwd)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    double s = l->seq_len, s_loc = s / l->cp, b = l->micro_batch;
    double heads = m->n_heads / pr->t, hd = m->head_dim;
    /* multi-latent attention: queries and keys of qk_nope + qk_rope per
     * head, values of v_dim (the kernel runs at the query-key width) */
    double qk_dim = hd, v_dim = hd;
    if (model_is_mla(m)) {
        qk_dim = m->mla.qk_nope_dim + m->mla.qk_rope_dim;
        v_dim = m->mla.v_dim;
        hd = (qk_dim + v_dim) / 2;
    }
    if (l->flash_attention) {
        /* Fused kernels do the work they cannot skip: half of it under a
         * causal mask. Backward does 2.5x the forward's matmuls (five
         * GEMM-shaped products to the forward's two). */
        bool causal = pr->in->opt.causal;
        double flops = 4 * pr->T * s * heads * hd * (causal ? 0.5 : 1.0);
        dtype_t dt = dtype16(pr);
        if (l->cp > 1 && pr->in->opt.cp_comm != CP_A2A) {
            /* the ring at the blocks' mean width */
            if (model_has_full_attn(m))
                flops *= model_q_width(m) / (m->n_heads * hd);
            cost_cp_blocks(pr, dt, flops, s_loc, (int)qk_dim, fwd, bwd);
            return;
        }
        prof_attn_call_t call = {pr->in->opt.attn_kernel, causal, s, (int)qk_dim};
        if (model_has_full_attn(m)) {
            /* the blocks that attend to every key, at their own head size */
            double g = m->full_attn.head_dim, gheads = m->full_attn.n_heads / pr->t;
            prof_attn_call_t wide = call;
            wide.head_dim = (int)g;
            double gflops = 4 * pr->T * s * gheads * g * (causal ? 0.5 : 1.0);
            *fwd = prof_attn_time(pr->p, dt, &wide, gflops, false);
            *bwd = prof_attn_time(pr->p, dt, &wide, 2.5 * gflops, true);
        } else {
            *fwd = prof_attn_time(pr->p, dt, &call, flops, false);
            *bwd = prof_attn_time(pr->p, dt, &call, 2.5 * flops, true);
        }
        price_window(pr, &call, dt, heads * hd, fwd, bwd);
        return;
    }
    /* Materialized scores (Megatron's fused scale-mask-softmax): batched
     * GEMMs over the full s x s product, softmax and dropout over it. */
    dtype_t dt = dtype16(pr);
    double batch = b * heads;
    double E = batch * s_loc * s; /* score elements */
    double qk = prof_gemm_time(pr->p, dt, s_loc, s, qk_dim, batch);
    double av = prof_gemm_time(pr->p, dt, s_loc, v_dim, s, batch);
    double softmax = mem(pr, 2 * E * pr->e);
    double dropout = m->dropout > 0 ? mem(pr, E * (2 * pr->e + 1)) : 0;
    *fwd = qk + softmax + dropout + av;
    double av_b = prof_gemm_time(pr->p, dt, s_loc, s, v_dim, batch) +
                  prof_gemm_time(pr->p, dt, s, v_dim, s_loc, batch);
    double qk_b = prof_gemm_time(pr->p, dt, s_loc, qk_dim, s, batch) +
                  prof_gemm_time(pr->p, dt, s, qk_dim, s_loc, batch);
    double softmax_b = mem(pr, 3 * E * pr->e);
    double dropout_b = m->dropout > 0 ? mem(pr, E * (2 * pr->e + 1)) : 0;
    *bwd = av_b + dropout_b + softmax_b + qk_b;
    /* the framework's layout copies into and out of the batched products
     * (each pass reads and writes every element once) */
    const sim_options_t *o = &pr->in->opt;
    double out_el = b * s_loc * heads * v_dim;
    double qkv_el = b * s_loc * (model_q_width(m) + 2.0 * model_kv_width(m)) / pr->t;
    *fwd += mem(pr, 2 * pr->e * o->attn_copy_fwd_qkv * qkv_el) +
            mem(pr, 2 * pr->e * o->attn_copy_fwd_out * out_el);
    *bwd += mem(pr, 2 * pr->e * o->attn_copy_bwd_qkv * qkv_el) +
            mem(pr, 2 * pr->e * o->attn_copy_bwd_out * out_el);
    /* with CP, each ring step an equal share of the products */
    pr->cp_f0 = pr->cp_fs = *fwd / l->cp;
    pr->cp_b0 = pr->cp_bs = *bwd / l->cp;
}

/* The attention half's projections before the core: Q, K and V (or
 * multi-latent attention's down- and up-projections), as one column-
 * parallel GEMM cost for the TP pricing; the ops go into the layer. */
gemm_cost_t cost_qkv(pricer_t *pr)
{
    const model_t *m = pr->in->model;
    double h = m->hidden, t = pr->t, e = pr->e;
    if (!model_is_mla(m)) {
        double qw = model_q_width(m), kvpw = model_kv_proj_width(m);
        double gate_w = m->hybrid.attn_out_gate ? qw : 0; /* Qwen3-Next's output gate */
        if (m->attn_head_gate)
            gate_w += model_heads_mean(m); /* Laguna's gate a head */
        gemm_cost_t qkv = cost_linear_col(pr, pr->T, (qw + kvpw + gate_w) / t, h, true);
        add_gemm_op(pr, "qkv", qkv.fwd, qkv.dgrad, qkv.wgrad);
        return qkv;
    }
    /* MLA (Megatron-Core's MLASelfAttention): the down-projections are
     * replicated over TP (each rank runs them on the gathered tokens), the
     * up-projections column-parallel; RMSNorm on both latents. */
    const model_mla_t *a = &m->mla;
    double nh = m->n_heads, qk = a->qk_nope_dim + a->qk_rope_dim;
    double kv_down_w = (double)a->kv_lora_rank + a->qk_rope_dim;
    double q_down_w = a->q_lora_rank > 0 ? a->q_lora_rank : 0;
    gemm_cost_t down = cost_linear(pr, pr->T, q_down_w + kv_down_w, h);
    gemm_cost_t q_up = a->q_lora_rank > 0 ? cost_linear(pr, pr->T, nh * qk / t, a->q_lora_rank)
                                          : cost_linear(pr, pr->T, nh * qk / t, h);
    gemm_cost_t kv_up =
        cost_linear(pr, pr->T, nh * (a->qk_nope_dim + a->v_dim) / t, a->kv_lora_rank);
    add_gemm_op(pr, "mla_down", down.fwd, down.dgrad, down.wgrad);
    double latent = pr->T * (q_down_w + a->kv_lora_rank) * e * pr->in->opt.eager_norm;
    if (!a->no_latent_norms)
        add_op(pr, "mla_norm", mem(pr, 2 * latent), mem(pr, 3 * latent));
    add_gemm_op(pr, "mla_up", q_up.fwd + kv_up.fwd, q_up.dgrad + kv_up.dgrad,
                q_up.wgrad + kv_up.wgrad);
    gemm_cost_t all = {down.fwd + q_up.fwd + kv_up.fwd, down.dgrad + q_up.dgrad + kv_up.dgrad,
                       down.wgrad + q_up.wgrad + kv_up.wgrad,
                       pr->T, (q_down_w + kv_down_w + nh * (qk + a->qk_nope_dim + a->v_dim)) / t,
                       h};
    return all;
}
