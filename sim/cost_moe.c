/* cost_moe: a mixture-of-experts block: router, permutes, the local
 * experts and the busiest rank's extra, the dispatch and combine on the
 * topology (sim/moe_dispatch.h) and what hides them (sim/costsInt.h). */
#include "sim/costsInt.h"

#include <math.h>

#include "sim/moe_dispatch.h"

/* The local experts of one MoE block: E/EP of them, each on its share of
 * the EP x ETP group's tokens (tok, padded to capacity when asked), width
 * split over ETP, as a grouped or a sequential GEMM; the busiest rank's
 * extra time goes into imbalance. */
static void price_experts(pricer_t *pr, double tok, double pad)
{
    const model_t *m = pr->in->model;
    const model_moe_t *x = &m->moe;
    const layout_t *l = pr->in->layout;
    const moe_opts_t *mo = &pr->in->opt.moe;
    step_costs_t *out = pr->out;
    double h = model_moe_io(m), e = pr->e, gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    double local = (double)x->n_experts / l->ep, fe = (double)x->expert_ffn / layout_etp(l);
    /* (with EP 1 every rank holds every expert: no rank waits for another) */
    double imb = mo->imbalance > 1 && l->ep > 1 ? mo->imbalance : 1;
    /* a capacity factor drops what is beyond it; padded, every expert runs
     * exactly its capacity (no rank waits, all do the padding) */
    double cf = mo->capacity_factor;
    if (cf > 0 && mo->pad_to_capacity) {
        tok *= pad;
        imb = 1;
    } else if (cf > 0 && imb > cf) {
        imb = cf;
    }
    gemm_cost_t in = cost_grouped_linear(pr, tok, fe * gate, h, local, mo->grouped_gemm);
    gemm_cost_t outg = cost_grouped_linear(pr, tok, h, fe, local, mo->grouped_gemm);
    double act = local * tok * fe * e * pr->in->opt.eager_act;
    double act_f = mem(pr, (gate > 1 ? 3 : 2) * act), act_b = mem(pr, (gate > 1 ? 5 : 3) * act);
    add_gemm_op(pr, "experts_in", in.fwd, in.dgrad, in.wgrad);
    add_op(pr, "expert_act", act_f, act_b);
    add_gemm_op(pr, "experts_out", outg.fwd, outg.dgrad, outg.wgrad);
    if (imb > 1) {
        /* the busiest rank's experts run imb x the mean tokens; the others
         * wait for it at the combine */
        gemm_cost_t in2 = cost_grouped_linear(pr, tok * imb, fe * gate, h, local, mo->grouped_gemm);
        gemm_cost_t out2 = cost_grouped_linear(pr, tok * imb, h, fe, local, mo->grouped_gemm);
        out->fwd.imbalance = in2.fwd + out2.fwd - in.fwd - outg.fwd + (imb - 1) * act_f;
        out->bwd.imbalance = in2.dgrad + in2.wgrad + out2.dgrad + out2.wgrad - in.dgrad -
                             in.wgrad - outg.dgrad - outg.wgrad + (imb - 1) * act_b;
    }
}

/* One direction's dispatch and combine of one MoE block on the topology
 * (routed: this rank's token copies in bytes, padding included). */
static double price_dispatch(pricer_t *pr, double routed, double pad)
{
    const model_t *m = pr->in->model;
    const layout_t *l = pr->in->layout;
    const moe_opts_t *mo = &pr->in->opt.moe;
    const cluster_t *c = pr->in->cluster;
    double h = model_moe_io(m), e = pr->e, k = m->moe.top_k, Tn = pr->Tn;
    int etp = layout_etp(l);
    coll_span_t g = cost_ep_span(c, l, etp);
    if (mo->dispatcher == MOE_DISPATCH_ALLGATHER) {
        /* every rank gathers the group's tokens and keeps those for its
         * experts; the outputs are reduce-scattered back */
        coll_span_t all = cost_consecutive_span(c, l->ep * etp);
        all.nodes = g.nodes > all.nodes ? g.nodes : all.nodes;
        double gathered = Tn * h * e * l->ep * etp;
        return coll(pr, COLL_ALL_GATHER, &all, gathered) +
               coll(pr, COLL_REDUCE_SCATTER, &all, gathered);
    }
    /* the dispatch's element: 16 bits unless the framework sends DeepEP
     * fp8 tokens (sim/moe_dispatch.h); the combine stays in 16 bits */
    bool deepep = mo->dispatcher == MOE_DISPATCH_DEEPEP;
    double disp_e = moe_dispatch_elem_bytes(mo->dispatcher, mo->fp8_dispatch, pr->q->quantized, e);
    /* copies of a token on the wire: the all-to-all dispatchers send one
     * per chosen expert; DeepEP sends one per destination rank inside a
     * node, and across nodes one per destination node over the network,
     * forwarded over NVLink there (the DeepSeek-V3 report, section 3.2.2;
     * deepseek-ai/DeepEP's dispatch layout counts tokens per rank and per
     * RDMA rank), its combine reducing the same way; the NVLink forwarding
     * runs alongside and is not priced */
    double copies = deepep ? model_moe_destinations(m, g.nodes > 1 ? g.nodes : l->ep) : k;
    double comm = coll(pr, COLL_ALL_TO_ALL, &g, Tn * copies * h * disp_e * pad) +
                  coll(pr, COLL_ALL_TO_ALL, &g, routed * copies / k);
    /* where DeepEP's or HybridEP's own bandwidth has been published for
     * this architecture and span, at this EP size or between two measured
     * ones, those kernels' figures replace NCCL's all-to-all (sim/
     * moe_dispatch.h); beyond the measured sizes NCCL's stands in */
    double bw_d, bw_c;
    double nic = pr->p->net_gpu_gbs > 0 ? pr->p->net_gpu_gbs : g.nic_gbs_per_gpu;
    if (deepep && moe_dispatch_flex_gbs(c->gpu.architecture, g.nodes > 1, g.n_ranks, nic / g.taper,
                                        &bw_d, &bw_c) == MOE_FLEX_MEASURED)
        comm = Tn * copies * h * pad * (disp_e / (bw_d * 1e9) + e / (bw_c * 1e9));
    if (etp > 1) {
        coll_span_t et = cost_consecutive_span(c, etp);
        comm += coll(pr, COLL_ALL_GATHER, &et, routed * etp) +
                coll(pr, COLL_REDUCE_SCATTER, &et, routed * etp);
    }
    return comm;
}

/* SMs the dispatcher's kernels hold while they run: Megatron-Core's
 * moe_deepep_num_sms default 20 (megatron/core/transformer/
 * transformer_config.py; DeepEP's own Buffer.num_sms is 20 too); NCCL's
 * all-to-all and all-gather over its channels, one SM each, 32 (ASSUMED:
 * NCCL's default channel limit). */
#define DEEPEP_SMS 20
#define NCCL_A2A_SMS 32

/* Of a stage's passes (micro-batches x virtual chunks), the share that
 * runs beside another micro-batch's opposite pass in Megatron-Core's
 * combined 1F1B (--overlap-moe-expert-parallel-comm): all but the warm-up
 * forwards, whose backward partners come only in the steady state, as many
 * as Megatron's schedules count them (pp - rank - 1, interleaved
 * 2 (pp - rank - 1) + (vpp - 1) pp; without a pipeline the first forward),
 * averaged over the stages. */
static double a2a_pair_share(const layout_t *l)
{
    double v = l->vpp > 1 ? l->vpp : 1;
    double passes = (l->grad_accum > 0 ? l->grad_accum : 1) * v, warm = 0;
    for (int s = 0; s < l->pp; s++) {
        double w = l->pp == 1 ? 1 : v > 1 ? 2.0 * (l->pp - s - 1) + (v - 1) * l->pp
                                          : (double)(l->pp - s - 1);
        warm += fmin(w, passes);
    }
    warm /= l->pp > 0 ? l->pp : 1;
    return passes > warm ? (passes - warm) / passes : 0;
}

/* The all-to-alls of an overlapped MoE block (comm: one direction's
 * dispatch and combine): in a steady-state pair a forward's and another
 * micro-batch's backward run together, their exchanges beside the pair's
 * compute on the SMs the dispatcher leaves (the compute slowed by its share
 * of the SMs while they overlap, what is longer than the compute exposed);
 * warm-up and cool-down passes have no partner and wait for theirs. */
static void a2a_overlap_exposed(pricer_t *pr, double comm)
{
    step_costs_t *out = pr->out;
    const moe_opts_t *mo = &pr->in->opt.moe;
    double sms = pr->p->sm_count > 0 ? pr->p->sm_count : 1;
    double held = mo->dispatcher == MOE_DISPATCH_DEEPEP ? DEEPEP_SMS : NCCL_A2A_SMS;
    double share = fmin(1, held / sms);
    double C = out->fwd.compute + out->bwd.compute, X = 2 * comm;
    double pair = fmax(0, X - C) + fmin(C, X) * share;
    double f = a2a_pair_share(pr->in->layout);
    out->fwd.ep = f * pair / 2 + (1 - f) * comm;
    out->bwd.ep = out->fwd.ep;
}

/* An MoE block's shared experts, a dense MLP split over TP (sh1, sh2: its
 * GEMMs for the TP pricing); *fwd and *bwd their seconds, which the
 * dispatch can hide behind. */
static void price_shared(pricer_t *pr, gemm_cost_t *sh1, gemm_cost_t *sh2, double *fwd,
                         double *bwd)
{
    const model_t *m = pr->in->model;
    double h = m->hidden, e = pr->e, gate = m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
    double fs = m->moe.shared_ffn, t = pr->t;
    *sh1 = cost_linear_col(pr, pr->T, fs * gate / t, h, false);
    *sh2 = cost_linear_row(pr, pr->T, h, fs / t);
    double sact = pr->T * fs / t * e * pr->in->opt.eager_act;
    double sa_f = mem(pr, (gate > 1 ? 3 : 2) * sact), sa_b = mem(pr, (gate > 1 ? 5 : 3) * sact);
    add_gemm_op(pr, "shared_in", sh1->fwd, sh1->dgrad, sh1->wgrad);
    add_op(pr, "shared_act", sa_f, sa_b);
    add_gemm_op(pr, "shared_out", sh2->fwd, sh2->dgrad, sh2->wgrad);
    *fwd = sh1->fwd + sa_f + sh2->fwd;
    *bwd = sh1->dgrad + sh1->wgrad + sa_b + sh2->dgrad + sh2->wgrad;
}

/* One MoE block's MLP part (after the second norm): router, token permute,
 * dispatch, the local experts, combine, unpermute, and the shared experts
 * (TP-split like a dense MLP: sh1/sh2 for the TP pricing, *shared false
 * when there are none). Communication goes into ep, what overlap does not
 * hide. */
void cost_moe(pricer_t *pr, gemm_cost_t *sh1, gemm_cost_t *sh2, bool *shared)
{
    const model_t *m = pr->in->model;
    const model_moe_t *x = &m->moe;
    const layout_t *l = pr->in->layout;
    const moe_opts_t *mo = &pr->in->opt.moe;
    step_costs_t *out = pr->out;
    double h = m->hidden, e = pr->e, k = x->top_k, E = x->n_experts;
    /* Tokens entering the block on this rank: 1/TP of the micro-batch with
     * sequence parallelism (Megatron requires it for MoE with TP). */
    double Tn = pr->Tn;
    /* router: fp32 scores, top-k and softmax over the experts */
    double router_f = prof_gemm_time(pr->p, DTYPE_BF16, Tn, E, h, 1) + mem(pr, 3 * Tn * E * 4);
    double router_b = prof_gemm_time(pr->p, DTYPE_BF16, Tn, h, E, 1) +
                      prof_gemm_time(pr->p, DTYPE_BF16, h, E, Tn, 1) + mem(pr, 4 * Tn * E * 4);
    add_op(pr, "router", router_f, router_b);
    if (x->latent > 0) {
        /* LatentMoE: hidden -> latent before the permute and back after the
         * unpermute, replicated over TP (ASSUMED); what moves and what the
         * experts read from here on is latent wide */
        double L = x->latent;
        double pf = 2 * prof_gemm_time(pr->p, DTYPE_BF16, Tn, L, h, 1);
        double pb = 2 * (prof_gemm_time(pr->p, DTYPE_BF16, Tn, h, L, 1) +
                         prof_gemm_time(pr->p, DTYPE_BF16, h, L, Tn, 1));
        add_op(pr, "latent_proj", pf, pb);
        h = L;
    }
    /* permute: each token copied once per chosen expert, grouped by expert
     * (an unfused permute sorts indices and gathers in separate kernels:
     * about twice the traffic, an assumption); padded to capacity, the
     * padding is copied and sent too */
    double pad = mo->capacity_factor > 0 && mo->pad_to_capacity ? mo->capacity_factor : 1;
    double routed = Tn * k * h * e * pad;
    double perm = mem(pr, Tn * h * e + routed) * (mo->permute_fusion ? 1 : 2);
    /* unfused permutes scatter with atomic adds: an unpermute by
     * scatter_add_ in the forward, the gather's gradient by index_add_ in
     * the backward (the framework's scatter_adds_fwd/bwd) */
    double adds = Tn * k * h * pad;
    double scatter_f = prof_atomic_time(pr->p, mo->scatter_adds_fwd * adds);
    double scatter_b = prof_atomic_time(pr->p, mo->scatter_adds_bwd * adds);
    add_op(pr, "permute", perm, perm + scatter_b);
    /* an all-to-all by rank regroups what arrives by local expert, and the
     * outputs back by source rank before the combine (sim/moe_dispatch.h) */
    double tok = Tn * k * l->ep * layout_etp(l) / E, local = E / l->ep;
    double sort = mem(pr, moe_dispatch_local_sort_bytes(mo->dispatcher, l->ep, layout_etp(l),
                                                        local, tok * pad * local * h * e));
    if (sort > 0)
        add_op(pr, "sort_chunks", sort, sort);
    price_experts(pr, tok, pad);
    if (sort > 0)
        add_op(pr, "unsort_chunks", sort, sort);
    add_op(pr, "unpermute", perm + scatter_f, perm);
    /* shared experts: a dense MLP, TP-split */
    double shared_f = 0, shared_b = 0;
    *shared = x->shared_ffn > 0;
    if (*shared)
        price_shared(pr, sh1, sh2, &shared_f, &shared_b);
    double comm = price_dispatch(pr, routed, pad);
    out->ep_comm_layer_s = 2 * comm;
    /* what hides it: the shared experts run during the all-to-alls; with
     * the combined 1F1B overlap, another micro-batch's compute */
    double hide_f = mo->shared_overlap ? shared_f : 0;
    double hide_b = mo->shared_overlap ? shared_b : 0;
    if (mo->a2a_overlap) {
        a2a_overlap_exposed(pr, comm);
        return;
    }
    out->fwd.ep = fmax(0, comm - hide_f);
    out->bwd.ep = fmax(0, comm - hide_b);
}
