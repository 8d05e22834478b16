/* cost_hybrid: the blocks of a hybrid model (models/hybrid.h): attention,
 * Mamba and linear-attention mixers, dense and MoE MLPs, each kind priced
 * on its own and the layer their mean by count (sim/costsInt.h). */
#include "sim/costsInt.h"

#include <string.h>

#include "models/hybrid.h"
#include "sim/ssm_cost.h"

/* Mixer widths of kind k: the input projection's output, the conv's
 * channels, the inner width (out_proj's input), heads and B/C groups (key
 * heads for Gated DeltaNet), conv width. */
typedef struct {
    double in_w, conv_w, inner, heads, groups, conv;
} mixer_dims_t;

static mixer_dims_t mixer_dims(const model_t *m, model_mixer_t k)
{
    const model_hybrid_t *x = &m->hybrid;
    mixer_dims_t d;
    if (k == MODEL_MIXER_MAMBA1) { /* channels for heads; x_proj/dt_proj apart */
        d.inner = d.conv_w = d.heads = x->ssm_inner;
        d.in_w = 2.0 * x->ssm_inner; /* x, z */
        d.groups = 1, d.conv = x->ssm_conv;
    } else if (k == MODEL_MIXER_MAMBA2) {
        d.inner = (double)x->ssm_heads * x->ssm_head_dim;
        d.conv_w = d.inner + 2.0 * x->ssm_groups * x->ssm_state;
        d.in_w = d.inner + d.conv_w + x->ssm_heads; /* z, x B C, dt */
        d.heads = x->ssm_heads, d.groups = x->ssm_groups, d.conv = x->ssm_conv;
    } else if (k == MODEL_MIXER_LIGHTNING) { /* no conv */
        d.inner = (double)x->gdn_k_heads * x->gdn_k_dim;
        d.conv_w = 0;
        d.in_w = 4 * d.inner; /* q k v, output gate */
        d.heads = d.groups = x->gdn_k_heads, d.conv = 0;
    } else if (k == MODEL_MIXER_KDA) { /* the low-rank gates apart */
        d.inner = (double)x->gdn_k_heads * x->gdn_k_dim;
        d.conv_w = 3 * d.inner;
        d.in_w = d.conv_w + x->gdn_k_heads; /* q k v, beta */
        d.heads = d.groups = x->gdn_k_heads, d.conv = x->gdn_conv;
    } else {
        double kd = (double)x->gdn_k_heads * x->gdn_k_dim;
        d.inner = (double)x->gdn_v_heads * x->gdn_v_dim;
        d.conv_w = 2 * kd + d.inner;
        d.in_w = d.conv_w + d.inner + 2.0 * x->gdn_v_heads; /* q k v, z, b a */
        d.heads = x->gdn_v_heads, d.groups = x->gdn_k_heads, d.conv = x->gdn_conv;
    }
    return d;
}

/* A Mamba-2 or Gated DeltaNet mixer as Megatron's MambaMixer runs it
 * (megatron/core/ssm/mamba_mixer.py): the column-parallel input projection,
 * the causal conv1d and the chunked kernel (sim/ssm_cost.h) on this rank's
 * heads, the gated RMSNorm, the row-parallel output projection; *in and
 * *out return the projections for the TP pricing. With CP a Mamba-2 mixer
 * runs Megatron's all-to-all context parallelism
 * (megatron/core/ssm/mamba_context_parallel.py): the conv and scan inputs
 * move from the sequence split to a head split, the scan output back,
 * forward and again backward. */
static void price_mixer(pricer_t *pr, model_mixer_t k, gemm_cost_t *in, gemm_cost_t *out)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    const sim_options_t *o = &pr->in->opt;
    double h = m->hidden, t = pr->t, e = pr->e, T = pr->T, cp = l->cp;
    mixer_dims_t d = mixer_dims(m, k);
    *in = cost_linear_col(pr, T, d.in_w / t, h, true);
    add_gemm_op(pr, "mixer_in", in->fwd, in->dgrad, in->wgrad);
    /* causal_conv1d with SiLU: memory-bound, read and write each channel */
    double conv_el = T * d.conv_w / t;
    add_op(pr, "conv1d", mem(pr, 2 * conv_el * e), mem(pr, 3 * conv_el * e));
    if (k == MODEL_MIXER_MAMBA1) { /* x_proj to dt, B, C and dt_proj back */
        const model_hybrid_t *x = &m->hybrid;
        double R = x->ssm_dt_rank, bc = 2.0 * x->ssm_state;
        gemm_cost_t xp = cost_linear(pr, T, R + bc, d.inner / t);
        gemm_cost_t dp = cost_linear(pr, T, d.inner / t, R);
        add_gemm_op(pr, "x_dt_proj", xp.fwd + dp.fwd, xp.dgrad + dp.dgrad, xp.wgrad + dp.wgrad);
    }
    if (k == MODEL_MIXER_KDA) { /* f_a, g_a (replicated) and f_b, g_b (split) */
        double r = m->hybrid.kda_gate_rank;
        gemm_cost_t ga = cost_linear(pr, T, 2 * r, h), gb = cost_linear(pr, T, 2 * d.inner / t, r);
        add_gemm_op(pr, "gate_lowrank", ga.fwd + gb.fwd, ga.dgrad + gb.dgrad,
                    ga.wgrad + gb.wgrad);
    }
    ssm_call_t call = {l->micro_batch, (double)l->seq_len / cp, d.heads / t, d.groups / t,
                       dtype16(pr), e};
    if (cp > 1) { /* all-to-all CP: the whole sequence, heads / cp */
        call.seq = l->seq_len;
        call.heads /= cp;
        call.groups /= cp;
    }
    double kf, kb;
    ssm_kernel_time(pr->p, m, k, &call, &kf, &kb);
    add_op(pr, k == MODEL_MIXER_MAMBA2 ? "ssd_scan"
               : k == MODEL_MIXER_GDN   ? "delta_rule"
               : k == MODEL_MIXER_KDA   ? "kda_delta_rule"
               : k == MODEL_MIXER_LIGHTNING ? "lightning_attn"
                                        : "selective_scan",
           kf, kb);
    double y = T * d.inner / t; /* gated RMSNorm: read y and z, write */
    add_op(pr, "gated_norm", mem(pr, 3 * y * e * o->eager_norm),
           mem(pr, 5 * y * e * o->eager_norm));
    *out = cost_linear_row(pr, T, h, d.inner / t);
    add_gemm_op(pr, "mixer_out", out->fwd, out->dgrad, out->wgrad);
    if (cp > 1) {
        coll_span_t s = cost_span(pr->in->cluster, &pr->out->placement.group[GROUP_CP]);
        pr->out->cp_span = s;
        double a2a = coll(pr, COLL_ALL_TO_ALL, &s, (conv_el + T * d.heads / t) * e) +
                     coll(pr, COLL_ALL_TO_ALL, &s, y * e);
        pr->out->fwd.cp += a2a;
        pr->out->bwd.cp += a2a;
    }
}

/* An attention half without the MLP (cost_layer's first half). */
static double price_attn_half(pricer_t *pr, gemm_cost_t *qkv, gemm_cost_t *proj)
{
    const model_t *m = pr->in->model;
    double t = pr->t, qw = model_q_width(m), kvw = model_kv_width(m);
    *qkv = cost_qkv(pr);
    if (m->pos == MODEL_POS_ROPE) {
        double bytes = 2 * pr->T * (qw + kvw) / t * pr->e * pr->in->opt.eager_rope;
        add_op(pr, "rope", mem(pr, bytes), mem(pr, bytes));
    }
    double attn_f, attn_b;
    cost_attention(pr, &attn_f, &attn_b);
    add_op(pr, "attention", attn_f, attn_b);
    *proj = cost_linear_row(pr, pr->T, m->hidden, qw / t);
    add_gemm_op(pr, "attn_out", proj->fwd, proj->dgrad, proj->wgrad);
    return attn_f;
}

/* Recompute of one hybrid block (as cost_layer does it, without the
 * early stop): selective by Megatron's modules, or the whole forward. */
static void hybrid_recompute(pricer_t *pr, int first_op, bool moe, double attn_f)
{
    const layout_t *l = pr->in->layout;
    step_costs_t *out = pr->out;
    if (l->recompute == RECOMPUTE_SELECTIVE) {
        out->bwd.recompute = cost_selective_recompute(pr, first_op, moe, attn_f);
    } else if (l->recompute == RECOMPUTE_FULL) {
        out->bwd.recompute = out->fwd.compute + out->fwd.imbalance;
        out->recompute_tp_s = out->fwd.tp;
        out->bwd.tp += out->recompute_tp_s;
        out->bwd.cp += out->fwd.cp;
        out->bwd.ep += out->fwd.ep;
    }
}

/* One block of a hybrid model: its mixer (attention, Mamba-2, Gated
 * DeltaNet or none) with its norm and residual, its MLP (dense, MoE or
 * none) likewise, their TP collectives (one pair per half that has
 * TP-split GEMMs), attention's CP exchange, recompute and host issue. */
static void price_hybrid_block(pricer_t *pr, model_mixer_t k, bool has_mlp, bool moe)
{
    const model_t *m = pr->in->model;
    const sim_options_t *o = &pr->in->opt;
    int first_op = pr->out->n_ops;
    double h = m->hidden, e = pr->e, attn_f = 0;
    double norm_f = mem(pr, 2 * pr->Tn * h * e * o->eager_norm);
    double norm_b = mem(pr, 3 * pr->Tn * h * e * o->eager_norm);
    double resid = 3 * pr->Tn * h * e;
    gemm_cost_t a = {0}, b = {0}, fc1 = {0}, fc2 = {0};
    bool tp_mix = k != MODEL_MIXER_NONE, tp_mlp = has_mlp;
    if (tp_mix) {
        add_op(pr, "norm_1", norm_f, norm_b);
        if (k == MODEL_MIXER_ATTENTION)
            attn_f = price_attn_half(pr, &a, &b);
        else
            price_mixer(pr, k, &a, &b);
        if (k == MODEL_MIXER_ATTENTION && m->hybrid.par_mamba2) { /* Falcon-H1 */
            gemm_cost_t ma, mb; /* one TP exchange: the two outputs are summed */
            price_mixer(pr, MODEL_MIXER_MAMBA2, &ma, &mb);
        }
        add_op(pr, "residual_1", mem(pr, resid), mem(pr, 2 * resid));
    }
    if (has_mlp) {
        add_op(pr, "norm_2", norm_f, norm_b);
        if (moe)
            cost_moe(pr, &fc1, &fc2, &tp_mlp);
        else
            cost_dense_mlp(pr, &fc1, &fc2);
        add_op(pr, "residual_2", mem(pr, resid), mem(pr, 2 * resid));
    }
    const gemm_cost_t *c1 = tp_mix ? &a : tp_mlp ? &fc1 : NULL;
    const gemm_cost_t *r1 = tp_mix ? &b : tp_mlp ? &fc2 : NULL;
    if (c1)
        cost_tp(pr, c1, r1, tp_mix && tp_mlp ? &fc1 : NULL, tp_mix && tp_mlp ? &fc2 : NULL);
    if (k == MODEL_MIXER_ATTENTION)
        cost_cp(pr);
    hybrid_recompute(pr, first_op, moe, attn_f);
    cost_host(pr, first_op, moe);
}

/* What Megatron's hybrid model can run, checked against the layout:
 * MambaMixer splits the heads and B/C groups over TP (and, with CP, over
 * TP x CP: mamba_context_parallel.py); no context-parallel form of Gated
 * DeltaNet or of torchtitan's op-level recompute is priced. */
static int hybrid_layout_ok(const model_t *m, const layout_t *l, err_t *err)
{
    if (l->recompute == RECOMPUTE_OPS)
        return err_setf(err, ERR_INPUT, NULL, "--recompute",
                        "ops (torchtitan's op-level policy) is not priced for hybrid layers; "
                        "use full or selective");
    if ((l->tp > 1 || l->cp > 1) && model_hybrid_count(m, MODEL_MIXER_MAMBA1) > 0)
        return err_setf(err, ERR_INPUT, NULL, l->tp > 1 ? "--tp" : "--cp",
                        "Mamba-1 (selective scan) layers have no tensor- or context-parallel "
                        "form scaleplan prices (their x_proj reduces over d_inner; Megatron "
                        "runs Mamba-2 only)");
    if (l->cp > 1 && model_hybrid_count(m, MODEL_MIXER_GDN) +
                             model_hybrid_count(m, MODEL_MIXER_KDA) +
                             model_hybrid_count(m, MODEL_MIXER_LIGHTNING) >
                         0)
        return err_setf(err, ERR_INPUT, NULL, "--cp",
                        "Gated DeltaNet / Kimi Delta Attention / lightning attention layers "
                        "have no context-parallel form scaleplan prices (Megatron's "
                        "MambaContextParallel covers Mamba-2 only; MiniMax's LASP+ is not "
                        "modelled)");
    for (int k = MODEL_MIXER_MAMBA2; k <= MODEL_MIXER_LAST_SCAN; k++) {
        if (model_hybrid_count(m, (model_mixer_t)k) == 0)
            continue;
        mixer_dims_t d = mixer_dims(m, (model_mixer_t)k);
        long split = (long)l->tp * l->cp;
        if ((long)d.heads % split != 0 || (long)d.groups % split != 0)
            return err_setf(err, ERR_INPUT, NULL, l->cp > 1 ? "--tp x --cp" : "--tp",
                            "%ld must divide the %s heads %.0f and %s %.0f (Megatron splits "
                            "them over TP x CP)",
                            split, model_mixer_name((model_mixer_t)k), d.heads,
                            k == MODEL_MIXER_MAMBA2 ? "groups" : "key heads", d.groups);
    }
    return ERR_OK;
}

/* Add op list src (weight w) into dst, merging ops of the same name. */
static void merge_ops(step_costs_t *dst, const step_costs_t *src, double w)
{
    for (int i = 0; i < src->n_ops; i++) {
        int j = 0;
        while (j < dst->n_ops && strcmp(dst->ops[j].name, src->ops[i].name) != 0)
            j++;
        if (j == dst->n_ops) {
            if (dst->n_ops == SIM_MAX_OPS)
                continue;
            dst->ops[dst->n_ops++] = (op_cost_t){src->ops[i].name, 0, 0};
        }
        dst->ops[j].fwd_s += w * src->ops[i].fwd_s;
        dst->ops[j].bwd_s += w * src->ops[i].bwd_s;
    }
}

/* A hybrid model's layer: each kind of block (mixer, MLP, experts) priced
 * on its own and the step's layer their mean by count, the op list merged
 * by name (as dense and MoE blocks are mixed in sim_costs). */
int cost_hybrid(pricer_t *pr, err_t *err)
{
    const model_t *m = pr->in->model;
    int rc = hybrid_layout_ok(m, pr->in->layout, err);
    if (rc)
        return rc;
    int count[2][2][MODEL_MIXER_COUNT] = {{{0}}}; /* [moe][mlp][mixer] */
    for (int i = 0; i < m->n_layers; i++) {
        bool mlp = model_block_has_mlp(m, i);
        count[mlp && model_moe_layer(m, i)][mlp][model_block_mixer(m, i)]++;
    }
    step_costs_t *out = pr->out, base = *out, acc = *out;
    memset(&acc.fwd, 0, sizeof acc.fwd);
    memset(&acc.bwd, 0, sizeof acc.bwd);
    acc.bwd_wgrad_s = acc.recompute_tp_s = acc.ep_comm_layer_s = 0;
    acc.n_ops = 0;
    for (int moe = 0; moe < 2; moe++)
        for (int mlp = 0; mlp < 2; mlp++)
            for (int k = 0; k < MODEL_MIXER_COUNT; k++) {
                if (count[moe][mlp][k] == 0)
                    continue;
                step_costs_t kind = base;
                pr->out = &kind;
                pr->cp_f0 = pr->cp_b0 = pr->cp_fs = pr->cp_bs = 0;
                price_hybrid_block(pr, (model_mixer_t)k, mlp, moe);
                double w = (double)count[moe][mlp][k] / m->n_layers;
                acc.fwd = cost_parts_mix(&acc.fwd, 1, &kind.fwd, w);
                acc.bwd = cost_parts_mix(&acc.bwd, 1, &kind.bwd, w);
                acc.bwd_wgrad_s += w * kind.bwd_wgrad_s;
                acc.recompute_tp_s += w * kind.recompute_tp_s;
                acc.ep_comm_layer_s += w * kind.ep_comm_layer_s;
                if (kind.cp_span.n_ranks > 0)
                    acc.cp_span = kind.cp_span, acc.cp_pair_span = kind.cp_pair_span;
                merge_ops(&acc, &kind, w);
            }
    pr->out = out;
    *out = acc;
    return ERR_OK;
}
