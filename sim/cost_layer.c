/* cost_layer: one transformer layer (dense or mixture-of-experts) from its
 * parts, and the forward work recompute runs again (sim/costsInt.h). */
#include "sim/costsInt.h"

#include <string.h>

/* Forward seconds of the ops named in names (NULL-terminated) that the
 * layer being priced added from index `from` of the op list on. */
static double ops_fwd(const pricer_t *pr, int from, const char *const *names)
{
    double sum = 0;
    for (int i = from; i < pr->out->n_ops; i++)
        for (const char *const *n = names; *n; n++)
            if (pr->out->ops[i].name[0] == (*n)[0] && strcmp(pr->out->ops[i].name, *n) == 0)
                sum += pr->out->ops[i].fwd_s;
    return sum;
}

/* Selective recompute of Megatron-Core's modules (layout_rc_modules; its
 * transformer_layer.py): the forward work the backward runs again, for the
 * layer priced from op `from` on. "layernorm" rebuilds only norms that are
 * their own module (MLA's input norm, an MoE block's pre-MLP norm; TE fuses
 * the others into the next GEMM); "mlp" checkpoints a dense MLP whole, its
 * TP collectives included; "moe" an MoE block whole, its expert-parallel
 * exchange included. */
double cost_selective_recompute(pricer_t *pr, int from, bool moe, double attn_f)
{
    const model_t *m = pr->in->model;
    step_costs_t *out = pr->out;
    unsigned rc = layout_rc_modules(pr->in->layout);
    static const char *const norm1[] = {"norm_1", NULL}, *const norm2[] = {"norm_2", NULL};
    static const char *const mlp[] = {"mlp_in", "swiglu", "gelu", "mlp_out", NULL};
    static const char *const act[] = {"expert_act", NULL};
    static const char *const shared[] = {"shared_in", "shared_act", "shared_out", NULL};
    static const char *const block[] = {"router",      "permute",       "sort_chunks",
                                        "experts_in",  "expert_act",    "experts_out",
                                        "unsort_chunks", "unpermute",   "shared_in",
                                        "shared_act",  "shared_out",    NULL};
    static const char *const up[] = {"mla_up", NULL};
    double t = rc & LAYOUT_RC_CORE_ATTN ? attn_f : 0;
    if ((rc & LAYOUT_RC_LAYERNORM) && model_is_mla(m))
        t += ops_fwd(pr, from, norm1);
    if ((rc & LAYOUT_RC_LAYERNORM) && moe)
        t += ops_fwd(pr, from, norm2);
    if ((rc & LAYOUT_RC_MLP) && !moe) {
        t += ops_fwd(pr, from, mlp);
        out->bwd.tp += out->fwd.tp / 2; /* the MLP half's gather and scatter */
    }
    if ((rc & LAYOUT_RC_MOE) && moe) {
        t += ops_fwd(pr, from, block) + out->fwd.imbalance;
        out->bwd.ep += out->fwd.ep;
    } else if (moe) {
        if (rc & LAYOUT_RC_MOE_ACT)
            t += ops_fwd(pr, from, act);
        if (rc & LAYOUT_RC_SHARED_EXPERTS)
            t += ops_fwd(pr, from, shared);
    }
    if ((rc & LAYOUT_RC_MLA_UP_PROJ) && model_is_mla(m))
        t += ops_fwd(pr, from, up);
    return t;
}

/* A dense MLP (as cost_layer prices it). */
void cost_dense_mlp(pricer_t *pr, gemm_cost_t *fc1, gemm_cost_t *fc2)
{
    const model_t *m = pr->in->model;
    const sim_options_t *o = &pr->in->opt;
    double h = m->hidden, f = m->ffn, t = pr->t, e = pr->e;
    double gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    *fc1 = cost_linear_col(pr, pr->T, f * gate / t, h, true);
    add_gemm_op(pr, "mlp_in", fc1->fwd, fc1->dgrad, fc1->wgrad);
    double act = pr->T * f / t * e;
    if (m->mlp == MODEL_MLP_SWIGLU)
        add_op(pr, "swiglu", mem(pr, 3 * act * o->eager_act), mem(pr, 5 * act * o->eager_act));
    else
        add_op(pr, "gelu", mem(pr, 2 * act * o->eager_act), mem(pr, 3 * act * o->eager_act));
    *fc2 = cost_linear_row(pr, pr->T, h, f / t);
    add_gemm_op(pr, "mlp_out", fc2->fwd, fc2->dgrad, fc2->wgrad);
}

/* What recompute needs of the layer priced: where its ops start, whether
 * its MLP is an MoE block, the forward seconds of its GEMMs, attention
 * core and last residual add, and the TP collective after its MLP. */
typedef struct {
    int first_op;
    bool moe;
    gemm_cost_t qkv, proj, fc1, fc2;
    double attn_f, resid_2, tp_tail;
} layer_fwd_t;

/* Recompute runs forward work again inside the backward pass. */
static void layer_recompute(pricer_t *pr, const layer_fwd_t *w)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    const sim_options_t *o = &pr->in->opt;
    step_costs_t *out = pr->out;
    double qw = model_q_width(m);
    if (l->recompute == RECOMPUTE_SELECTIVE)
        out->bwd.recompute = cost_selective_recompute(pr, w->first_op, w->moe, w->attn_f);
    else if (l->recompute == RECOMPUTE_OPS) {
        /* torchtitan's op-level policy (parallelize_llama.py): of the
         * matmuls in execution order (wq, wk, wv, wo, w1, [w3], w2) every
         * second one is recomputed (wk, wo, w3; wk, wo, w2 without a gate),
         * every elementwise op too; the attention output is kept. */
        double mem_ops = out->fwd.compute - w->qkv.fwd - w->attn_f - w->proj.fwd - w->fc1.fwd -
                         w->fc2.fwd;
        double wk = w->qkv.fwd * model_k_proj_width(m) / (qw + model_kv_proj_width(m));
        double third = m->mlp == MODEL_MLP_SWIGLU ? w->fc1.fwd / 2 : w->fc2.fwd;
        out->bwd.recompute = mem_ops + wk + w->proj.fwd + third;
    } else if (l->recompute == RECOMPUTE_FULL) {
        /* PyTorch's non-reentrant checkpoint stops once the tensors the
         * backward saved are rebuilt (torch.utils.checkpoint
         * set_checkpoint_early_stop, on by default): the residual add ending
         * the block saves nothing, and a dense MLP's down projection saves
         * its input, not its output, so neither runs again (an MoE block's
         * combine keeps the experts' outputs for the router's gradient). */
        double skip = 0, skip_tp = 0;
        if (o->recompute_early_stop) {
            skip = w->resid_2 + (w->moe ? 0 : w->fc2.fwd);
            skip_tp = w->moe ? 0 : w->tp_tail;
        }
        out->bwd.recompute = out->fwd.compute + out->fwd.imbalance - skip;
        out->recompute_tp_s = out->fwd.tp - skip_tp;
        out->bwd.tp += out->recompute_tp_s;
        out->bwd.cp += out->fwd.cp;
        out->bwd.ep += out->fwd.ep;
    }
}

/* One transformer layer; moe: its MLP is a mixture-of-experts block. */
void cost_layer(pricer_t *pr, bool moe)
{
    const model_t *m = pr->in->model;
    step_costs_t *out = pr->out;
    layer_fwd_t w = {.first_op = out->n_ops, .moe = moe};
    double h = m->hidden, t = pr->t, e = pr->e;
    double qw = model_q_width(m), kvw = model_kv_width(m);
    const sim_options_t *o = &pr->in->opt;
    double norm_f = mem(pr, 2 * pr->Tn * h * e * o->eager_norm);
    double norm_b = mem(pr, 3 * pr->Tn * h * e * o->eager_norm);
    double resid_bytes = 3 * pr->Tn * h * e + (m->dropout > 0 ? pr->Tn * h : 0);

    add_op(pr, "norm_1", norm_f, norm_b);
    w.qkv = cost_qkv(pr);
    if (m->qk_norm != MODEL_QK_NORM_NONE && !model_is_mla(m)) {
        /* QK norm (Qwen3, OLMo 2, Gemma 3): Megatron-Core's q_layernorm and
         * k_layernorm, RMSNorms over this rank's Q and K heads before RoPE
         * (transformer/attention.py), priced as the layer norms are */
        double qk = pr->T * (qw + kvw) / t * e * o->eager_norm;
        add_op(pr, "qk_norm", mem(pr, 2 * qk), mem(pr, 3 * qk));
    }
    if (m->pos == MODEL_POS_ROPE) {
        double rope_w = model_is_mla(m) ? m->n_heads * 2.0 * m->mla.qk_rope_dim : qw + kvw;
        double bytes = 2 * pr->T * rope_w / t * e * o->eager_rope;
        add_op(pr, "rope", mem(pr, bytes), mem(pr, bytes));
    }
    double attn_b;
    cost_attention(pr, &w.attn_f, &attn_b);
    add_op(pr, "attention", w.attn_f, attn_b);
    double attn_in = model_is_mla(m) ? (double)m->n_heads * m->mla.v_dim : qw;
    w.proj = cost_linear_row(pr, pr->T, h, attn_in / t);
    add_gemm_op(pr, "attn_out", w.proj.fwd, w.proj.dgrad, w.proj.wgrad);
    add_op(pr, "residual_1", mem(pr, resid_bytes), mem(pr, 2 * resid_bytes));
    add_op(pr, "norm_2", norm_f, norm_b);
    bool tp_mlp = true;
    if (moe)
        cost_moe(pr, &w.fc1, &w.fc2, &tp_mlp);
    else
        cost_dense_mlp(pr, &w.fc1, &w.fc2);
    w.resid_2 = mem(pr, resid_bytes);
    add_op(pr, "residual_2", w.resid_2, mem(pr, 2 * resid_bytes));
    if (m->ple.dim > 0) {
        /* Gemma 4's per-layer input: the block's gate and projection, and
         * its share of the projection before the blocks (hidden -> dim a
         * block), as GEMMs split over TP */
        gemm_cost_t gate = cost_linear(pr, pr->T, 2.0 * m->ple.dim / t, h);
        gemm_cost_t back = cost_linear(pr, pr->T, h, m->ple.dim / t);
        add_gemm_op(pr, "per_layer_input", gate.fwd + back.fwd, gate.dgrad + back.dgrad,
                    gate.wgrad + back.wgrad);
    }
    cost_finetune(pr);

    w.tp_tail = cost_tp(pr, &w.qkv, &w.proj, tp_mlp ? &w.fc1 : NULL, tp_mlp ? &w.fc2 : NULL);
    cost_cp(pr);
    layer_recompute(pr, &w);
    cost_host(pr, w.first_op, moe);
}
