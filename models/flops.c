#include "models/flops.h"
#include "models/hybrid.h"

#include <string.h>

const char *model_flop_op_name(flop_op_t op)
{
    static const char *names[FLOP_OP_COUNT] = {
        "qkv", "attn_scores", "attn_values", "attn_out", "mlp_in", "mlp_out",
        "logits", "router", "expert_in", "expert_out", "mtp", "mixer_in", "mixer_scan",
        "mixer_out"};
    return op < FLOP_OP_COUNT ? names[op] : "?";
}

/* Forward FLOPs per token of one attention block's projections and core:
 * qkv (all projections before the core), scores, values, out. */
static void attention_flops(const model_t *m, double s, double *qkv, double *scores,
                            double *values, double *out)
{
    double h = m->hidden, nh = m->n_heads;
    if (model_is_mla(m)) {
        const model_mla_t *a = &m->mla;
        double qk = a->qk_nope_dim + a->qk_rope_dim;
        double q = a->q_lora_rank > 0 ? h * a->q_lora_rank + (double)a->q_lora_rank * nh * qk
                                      : h * nh * qk;
        double kv = h * ((double)a->kv_lora_rank + a->qk_rope_dim) +
                    (double)a->kv_lora_rank * nh * (a->qk_nope_dim + a->v_dim);
        *qkv = 2 * (q + kv);
        *scores = 2 * s * nh * qk;
        *values = 2 * s * nh * a->v_dim;
        *out = 2 * nh * a->v_dim * h;
        const model_indexer_t *x = &m->indexer;
        if (x->n_heads > 0) {
            /* The indexer's projections, and its scores of each query
             * against every earlier key (DeepSeek-V3.2 report: O(L^2) with
             * few heads). The attention it selects for is still counted
             * over all s keys, not index_topk: an upper bound said in the
             * reader's note. */
            double q_in = a->q_lora_rank > 0 ? a->q_lora_rank : h;
            double own = model_indexer_share(m); /* blocks with their own indexer */
            *qkv += own * 2 * (q_in * x->n_heads * x->head_dim + h * x->head_dim + h * x->n_heads);
            *scores += own * 2 * s * x->n_heads * x->head_dim;
        }
        return;
    }
    double qw = model_q_width(m), kvpw = model_kv_proj_width(m);
    *qkv = 2 * h * (qw + kvpw);
    *scores = 2 * s * qw; /* each token against s keys */
    *values = 2 * s * qw;
    *out = 2 * qw * h;
}

/* Forward FLOPs per token of one dense MLP. */
static double dense_mlp_flops(const model_t *m)
{
    double h = m->hidden, f = m->ffn, gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    return 2 * h * f * gate + 2 * f * h;
}

/* Forward FLOPs per token of one MoE block's shared experts: the first
 * GEMM (with the shared-expert gate) and the second. */
static void shared_expert_flops(const model_t *m, double *in, double *out)
{
    double h = m->hidden, fs = m->moe.shared_ffn, gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    *in = 2 * h * fs * gate + (m->moe.shared_gate ? 2 * h : 0);
    *out = 2 * fs * h;
}

/* Blocks with attention (La), a dense MLP (Ld) and an MoE MLP (Lm). */
static void block_counts(const model_t *m, double *La, double *Ld, double *Lm)
{
    *La = m->n_layers;
    *Lm = model_is_moe(m) ? m->moe.n_moe_layers : 0;
    *Ld = m->n_layers - *Lm;
    if (!model_is_hybrid(m))
        return;
    *La = *Ld = *Lm = 0;
    for (int i = 0; i < m->n_layers; i++) {
        *La += model_block_mixer(m, i) == MODEL_MIXER_ATTENTION;
        if (model_block_has_mlp(m, i))
            *(model_moe_layer(m, i) ? Lm : Ld) += 1;
    }
}

/* Hybrid models' Mamba-2 and Gated DeltaNet mixers, all blocks. */
static void mixer_flops(const model_t *m, int seq_len, double *op)
{
    for (int k = MODEL_MIXER_MAMBA2; k <= MODEL_MIXER_LAST_SCAN; k++) {
        int n = model_hybrid_count(m, (model_mixer_t)k);
        if (n == 0)
            continue;
        double in, scan, out;
        model_hybrid_mixer_flops(m, (model_mixer_t)k, seq_len, &in, &scan, &out);
        op[FLOP_MIXER_IN] += n * in;
        op[FLOP_MIXER_SCAN] += n * scan;
        op[FLOP_MIXER_OUT] += n * out;
    }
}

void model_flops(const model_t *m, int seq_len, model_flops_t *out)
{
    double h = m->hidden, f = m->ffn, s = seq_len, L, Ld, Lm;
    block_counts(m, &L, &Ld, &Lm); /* L: blocks with attention */
    double gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    memset(out, 0, sizeof *out);
    double *op = out->fwd_per_token;
    double qkv, scores, values, attn_out;
    attention_flops(m, s, &qkv, &scores, &values, &attn_out);
    if (model_is_mla(m)) {
        op[FLOP_QKV] = L * qkv;
        op[FLOP_ATTN_SCORES] = L * scores;
        op[FLOP_ATTN_VALUES] = L * values;
        op[FLOP_ATTN_OUT] = L * attn_out;
    } else {
        /* Written as always, so dense figures keep every bit. */
        double qw = model_q_width(m), kvpw = model_kv_proj_width(m);
        op[FLOP_QKV] = L * 2 * h * (qw + kvpw);
        op[FLOP_ATTN_SCORES] = L * 2 * s * qw;
        op[FLOP_ATTN_VALUES] = L * 2 * s * qw;
        op[FLOP_ATTN_OUT] = L * 2 * qw * h;
        if (m->hybrid.attn_out_gate)
            op[FLOP_QKV] += L * 2 * h * qw; /* the output gate's projection */
        if (m->attn_head_gate)
            op[FLOP_QKV] += L * 2 * h * model_heads_mean(m); /* one gate a head */
    }
    if (model_is_hybrid(m))
        mixer_flops(m, seq_len, op);
    op[FLOP_MLP_IN] = Ld * 2 * h * f * gate;
    op[FLOP_MLP_OUT] = Ld * 2 * f * h;
    if (m->ple.dim > 0) {
        /* Gemma 4's per-layer inputs, counted with the MLPs: every block's
         * gate (hidden -> dim) and the projection before the blocks (hidden
         * -> blocks x dim) in, every block's projection (dim -> hidden) out */
        op[FLOP_MLP_IN] += 2 * (double)m->n_layers * 2 * h * m->ple.dim;
        op[FLOP_MLP_OUT] += (double)m->n_layers * 2 * m->ple.dim * h;
    }
    op[FLOP_LOGITS] = 2 * h * (double)m->vocab;
    double moe_block = 0; /* forward FLOPs of one MoE block's MLP part */
    if (Lm > 0) {
        const model_moe_t *e = &m->moe;
        double k = e->top_k, fe = e->expert_ffn, io = model_moe_io(m);
        double router = 2 * h * e->n_experts, shared_in, shared_out;
        shared_expert_flops(m, &shared_in, &shared_out);
        /* LatentMoE's down projection before the dispatch and up
         * projection after the combine, counted with the MLP's GEMMs */
        double latent = e->latent > 0 ? 2 * h * e->latent : 0;
        op[FLOP_MLP_IN] += Lm * (shared_in + latent);
        op[FLOP_MLP_OUT] += Lm * (shared_out + latent);
        op[FLOP_ROUTER] = Lm * router;
        op[FLOP_EXPERT_IN] = Lm * k * 2 * io * fe * gate;
        op[FLOP_EXPERT_OUT] = Lm * k * 2 * fe * io;
        moe_block = router + shared_in + shared_out + 2 * latent +
                    k * (2 * io * fe * gate + 2 * fe * io);
    }
    if (m->n_mtp > 0) {
        /* Each module: the 2h -> h projection, one block like the last
         * main block, and its own logits. */
        double mlp = model_moe_layer(m, m->n_layers - 1) ? moe_block : dense_mlp_flops(m);
        op[FLOP_MTP] = m->n_mtp * (2 * 2 * h * h + qkv + scores + values + attn_out + mlp +
                                   2 * h * (double)m->vocab);
    }
    for (int i = 0; i < FLOP_OP_COUNT; i++) {
        out->fwd_per_token_total += op[i];
        if (i != FLOP_LOGITS && i != FLOP_MTP)
            out->fwd_per_token_layers += op[i];
    }
    out->model_per_token = 3 * out->fwd_per_token_total;
}

double model_recompute_flops_per_token(const model_t *m, int seq_len,
                                       recompute_t r)
{
    model_flops_t f;
    model_flops(m, seq_len, &f);
    switch (r) {
    case RECOMPUTE_FULL:
        return f.fwd_per_token_layers;
    case RECOMPUTE_SELECTIVE:
        return f.fwd_per_token[FLOP_ATTN_SCORES] + f.fwd_per_token[FLOP_ATTN_VALUES];
    case RECOMPUTE_OPS: {
        /* every second matmul: wk, wo and w3 (w2 without a gate) */
        double qw = model_q_width(m), kw = model_k_proj_width(m);
        double wk = f.fwd_per_token[FLOP_QKV] * kw / (qw + model_kv_proj_width(m));
        double third = m->mlp == MODEL_MLP_SWIGLU ? f.fwd_per_token[FLOP_MLP_IN] / 2
                                                  : f.fwd_per_token[FLOP_MLP_OUT];
        return wk + f.fwd_per_token[FLOP_ATTN_OUT] + third;
    }
    default:
        return 0;
    }
}

double model_recompute_modules_flops_per_token(const model_t *m, int seq_len, unsigned modules)
{
    model_flops_t f;
    model_flops(m, seq_len, &f);
    const double *op = f.fwd_per_token;
    double La, Ld, Lm;
    block_counts(m, &La, &Ld, &Lm);
    double shared = 0;
    if (Lm > 0) {
        double in, out;
        shared_expert_flops(m, &in, &out);
        shared = Lm * (in + out);
    }
    double sum = 0;
    if (modules & LAYOUT_RC_CORE_ATTN)
        sum += op[FLOP_ATTN_SCORES] + op[FLOP_ATTN_VALUES];
    if (modules & LAYOUT_RC_MLP) /* the dense layers' MLPs */
        sum += Ld * dense_mlp_flops(m);
    if (modules & LAYOUT_RC_MOE)
        sum += op[FLOP_ROUTER] + op[FLOP_EXPERT_IN] + op[FLOP_EXPERT_OUT] + shared;
    else if (modules & LAYOUT_RC_SHARED_EXPERTS)
        sum += shared;
    if ((modules & LAYOUT_RC_MLA_UP_PROJ) && model_is_mla(m)) {
        const model_mla_t *a = &m->mla;
        double nh = m->n_heads, qk = a->qk_nope_dim + a->qk_rope_dim;
        double q_up = a->q_lora_rank > 0 ? (double)a->q_lora_rank * nh * qk : 0;
        double kv_up = (double)a->kv_lora_rank * nh * (a->qk_nope_dim + a->v_dim);
        sum += m->n_layers * 2 * (q_up + kv_up);
    }
    return sum;
}

static double tokens_per_step(const layout_t *l)
{
    return (double)l->global_batch * l->seq_len;
}

/* Model FLOPs per token of a frozen-base step (LoRA, QLoRA): every GEMM
 * with a weight runs forward and input gradient (2x its forward) but no
 * weight gradient; the attention core's two products keep their 3x (both
 * operands are activations); the adapters run their own 3x: 2 x rank x
 * (in + out) multiply-adds a token per target, forward. */
static double frozen_per_token(const model_t *m, const layout_t *l, const model_flops_t *f)
{
    double core = f->fwd_per_token[FLOP_ATTN_SCORES] + f->fwd_per_token[FLOP_ATTN_VALUES];
    double adapters = 2 * finetune_adapter_params_block(&l->ft, m, 1) * m->n_layers;
    return 2 * (f->fwd_per_token_total - core) + 3 * core + 3 * adapters;
}

double model_flops_per_step(const model_t *m, const layout_t *l)
{
    model_flops_t f;
    model_flops(m, l->seq_len, &f);
    if (finetune_frozen(&l->ft))
        return frozen_per_token(m, l, &f) * tokens_per_step(l);
    return f.model_per_token * tokens_per_step(l);
}

double model_hw_flops_per_step(const model_t *m, const layout_t *l)
{
    double share = 1;
    if (l->recompute == RECOMPUTE_FULL && l->recompute_layers > 0 && m->n_layers > 0) {
        /* partial recompute: the share of the layers rebuilt */
        int rebuilt = 0;
        for (int s = 0; s < l->pp; s++)
            rebuilt += layout_stage_recomputed(l, m, s);
        share = (double)rebuilt / m->n_layers;
    }
    double rc = l->recompute == RECOMPUTE_SELECTIVE
                    ? model_recompute_modules_flops_per_token(m, l->seq_len, layout_rc_modules(l))
                    : model_recompute_flops_per_token(m, l->seq_len, l->recompute);
    return model_flops_per_step(m, l) + share * rc * tokens_per_step(l);
}
