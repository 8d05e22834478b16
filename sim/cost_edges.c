/* cost_edges: the embedding on the first virtual stage, and the output
 * layer, loss and multi-token prediction on the last (sim/costsInt.h). */
#include "sim/costsInt.h"

#include <math.h>

/* Embedding on the first virtual stage, output layer and loss on the last. */
void cost_edges(pricer_t *pr)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    step_costs_t *out = pr->out;
    double h = m->hidden, e = pr->e, t = pr->t, V = m->vocab;
    const coll_span_t *s = &out->tp_span;
    double act = pr->T * h * e;
    /* Embedding: gather rows (+ learned positions, dropout); the vocabulary-
     * parallel lookup is combined over TP (reduce-scatter with SP). */
    double emb = mem(pr, 2 * act + (m->pos == MODEL_POS_LEARNED ? 3 * act : 0) +
                             (m->dropout > 0 ? 2 * act : 0));
    out->embed_fwd.compute = emb;
    out->embed_bwd.compute = mem(pr, 3 * pr->T * h * 4); /* fp32 gradient rows */
    if (l->tp > 1) {
        out->embed_fwd.tp = coll(pr, l->sequence_parallel ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE,
                                 s, act);
        if (l->sequence_parallel)
            out->embed_bwd.tp = coll(pr, COLL_ALL_GATHER, s, act);
    }
    /* Head: final norm, logits GEMM, the vocabulary-parallel cross entropy
     * as the framework computes it (sim_options_t ce_*_bytes). */
    gemm_cost_t logits = cost_linear_head(pr, pr->T, V / t, h);
    double logit_el = pr->T * V / t;
    const sim_options_t *o = &pr->in->opt;
    bool tp_loss = l->tp > 1 && o->ce_tp_fwd_bytes > 0;
    double ce_fwd = tp_loss ? o->ce_tp_fwd_bytes : o->ce_fwd_bytes;
    double ce_bwd = tp_loss ? o->ce_tp_bwd_bytes : o->ce_bwd_bytes;
    out->head_fwd.compute = mem(pr, 2 * pr->Tn * h * e) + logits.fwd + mem(pr, logit_el * ce_fwd);
    out->head_bwd.compute = mem(pr, logit_el * ce_bwd) + logits.dgrad + logits.wgrad +
                            mem(pr, 3 * pr->Tn * h * e);
    if (l->tp > 1) {
        /* three tiny all-reduces (max, sum of exponentials, target logit) */
        double ce = 3 * coll(pr, COLL_ALL_REDUCE, s, pr->T * 4);
        double gather = l->sequence_parallel ? coll(pr, COLL_ALL_GATHER, s, act) : 0;
        out->head_fwd.tp = ce + gather;
        double grad = coll(pr, l->sequence_parallel ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, s, act);
        out->head_bwd.tp = pr->in->opt.async_tp_grad ? fmax(0, grad - logits.wgrad) : grad;
    }
    /* Multi-token prediction (DeepSeek-V3, Megatron --mtp-num-layers) on
     * the last stage: per module two norms, the 2h -> h projection, one
     * block (priced as the model's mean layer) and its own logits and
     * loss. */
    for (int k = 0; k < m->n_mtp; k++) {
        gemm_cost_t proj = cost_linear_col(pr, pr->T, h / t, 2 * h, false);
        double norms_f = mem(pr, 2 * 2 * pr->Tn * h * e), norms_b = mem(pr, 2 * 3 * pr->Tn * h * e);
        cost_parts_t f = out->fwd, b = out->bwd;
        f.compute += norms_f + proj.fwd + logits.fwd + mem(pr, logit_el * ce_fwd);
        b.compute += norms_b + proj.dgrad + proj.wgrad + logits.dgrad + logits.wgrad +
                     mem(pr, logit_el * ce_bwd);
        out->head_fwd = cost_parts_mix(&out->head_fwd, 1, &f, 1);
        out->head_bwd = cost_parts_mix(&out->head_bwd, 1, &b, 1);
    }
}

/* A frozen base trains neither the output head nor the embedding: no
 * logits weight gradient, no gradient rows scattered into the table. */
void cost_frozen_edges(pricer_t *pr)
{
    if (!pr->frozen)
        return;
    const model_t *m = pr->in->model;
    gemm_cost_t logits = cost_linear_head(pr, pr->T, m->vocab / pr->t, m->hidden);
    pr->out->head_bwd.compute -= logits.wgrad;
    pr->out->embed_bwd.compute = 0;
}
