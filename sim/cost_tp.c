/* cost_tp: the tensor-parallel collectives of a layer that stay on the
 * critical path, with sequence parallelism and with the GEMM overlap of
 * sim/tp_overlap.h (sim/costsInt.h). */
#include "sim/costsInt.h"

#include <math.h>

/* What one GEMM and the TP collective overlapped with it cost beyond the
 * GEMM alone (sim/tp_overlap.h): the collective's uncovered part, the last
 * chunk of a reduce-scatter that nothing follows (the first chunk an
 * aggregated ring gather waits for), the GEMM cut into chunks
 * (smaller GEMMs run less efficiently) and the SMs the communication
 * takes. rows/cols/inner: the GEMM's shape, cut along rows; gemm_s its
 * time whole; rs: the collective reduce-scatters the GEMM's output. */
static double tpo_cost(const pricer_t *pr, const tpo_role_t *r, double rows, double cols,
                       double inner, double gemm_s, double comm_s, bool rs)
{
    double chunks = r->method == TPO_RING ? pr->t : r->method == TPO_PIPELINE ? r->splits : 1;
    /* an aggregated ring gather: the first GEMM waits for one chunk from the
     * paired neighbour, then TP/2 GEMMs of two chunks each hide the rest */
    double head = 0;
    if (r->method == TPO_RING && r->aggregate && !rs && pr->t >= 2) {
        chunks = pr->t / 2;
        head = comm_s / (pr->t - 1);
        comm_s -= head;
    }
    double split = 0;
    if (chunks > 1)
        split = chunks * gemm(pr, rows / chunks, cols, inner, 1) - gemm(pr, rows, cols, inner, 1);
    double g = gemm_s + fmax(0, split);
    double tail = (rs && chunks > 1 ? comm_s / chunks : 0) + head;
    double sms = pr->in->cluster->gpu.sm_count > 0 ? pr->in->cluster->gpu.sm_count : 1;
    double share = fmin(r->sms / sms, 0.9);
    /* with a margin the GEMM runs on the SMs left for all of its length;
     * without, the two share the SMs while the communication runs */
    double sm = r->sm_margin ? g * share / (1 - share) : fmin(g, comm_s) * share;
    return fmax(0, split) + fmax(0, comm_s - g) + tail + sm;
}

/* One half's collectives with sequence parallelism, overlapped with its
 * GEMMs by roles r (sim/tp_overlap.h): c its column-parallel GEMM, w its
 * row-parallel one, ag and rs the gather and the reduce-scatter whole,
 * bytes the full activation. Forward: gather | column GEMM, row GEMM |
 * scatter; backward: gather the output gradient | row dgrad, re-gather the
 * input | column dgrad, scatter the input gradient | column wgrad. Returns
 * the forward's scatter. */
static double tp_overlapped(pricer_t *pr, const tpo_role_t *r, const gemm_cost_t *c,
                            const gemm_cost_t *w, double ag, double rs, double bytes)
{
    const layout_t *l = pr->in->layout;
    const sim_options_t *o = &pr->in->opt;
    step_costs_t *out = pr->out;
    /* symmetric-memory async TP adds the reduce-scatter's t partial
     * sums in one kernel after the last chunk: the whole output read,
     * the shard written, for the forward's scatter and the input
     * gradient's (PyTorch _fused_matmul_reduce_scatter_impl) */
    double reduce = o->tp_overlap.reduce_pass ? mem(pr, bytes * (1 + 1 / pr->t)) : 0;
    double scatter =
        tpo_cost(pr, &r[TPO_PROJ_FPROP], w->m, w->n, w->k, w->fwd, rs, true) + reduce;
    /* row-scaled fp8 gathers that the async TP pass leaves unfused
     * run whole before their GEMMs (pytorch/pytorch#149990) */
    bool unfused = o->tp_overlap.rowwise_gather_unfused && l->precision == PRECISION_FP8_ROWWISE;
    out->fwd.tp +=
        (unfused ? ag : tpo_cost(pr, &r[TPO_QKV_FPROP], c->m, c->n, c->k, c->fwd, ag, false)) +
        scatter;
    out->bwd.tp +=
        (unfused ? 2 * ag
                 : tpo_cost(pr, &r[TPO_PROJ_DGRAD], w->m, w->k, w->n, w->dgrad, ag, false) +
                       tpo_cost(pr, &r[TPO_QKV_DGRAD], c->m, c->k, c->n, c->dgrad, ag, false)) +
        tpo_cost(pr, &r[TPO_QKV_WGRAD], c->k, c->n, c->m, c->wgrad, rs, false) + reduce;
    return scatter;
}

/* TP collectives of one layer: forward, backward (what stays exposed).
 * Returns the forward cost of the MLP's last collective (the one after its
 * row-parallel GEMM; 0 without a TP MLP), which an early-stopping
 * recompute does not run again. */
double cost_tp(pricer_t *pr, const gemm_cost_t *qkv, const gemm_cost_t *proj,
               const gemm_cost_t *fc1, const gemm_cost_t *fc2)
{
    const layout_t *l = pr->in->layout;
    const sim_options_t *o = &pr->in->opt;
    step_costs_t *out = pr->out;
    double tail = 0;
    if (l->tp <= 1)
        return 0;
    const coll_span_t *s = &out->tp_span;
    double bytes = pr->T * pr->in->model->hidden * pr->e; /* full activation */
    /* per-tensor fp8 recipes quantize before sequence parallelism's
     * all-gathers (sim_options_t.fp8_tp_gather): 1 byte an element */
    double ag_bytes = o->fp8_tp_gather && (l->precision == PRECISION_FP8 ||
                                           l->precision == PRECISION_FP8_CS)
                          ? pr->T * pr->in->model->hidden
                          : bytes;
    const gemm_cost_t *col[2] = {qkv, fc1}, *row[2] = {proj, fc2};
    int halves = fc1 && fc2 ? 2 : 1; /* an MoE block's routed experts have no TP MLP */
    const tpo_role_t *roles = NULL;
    if (o->tp_comm_overlap && l->sequence_parallel && !(o->tp_overlap_off & (1u << l->precision)))
        roles = tpo_select(&o->tp_overlap, pr->in->cluster->gpu.architecture,
                           pr->in->model->hidden, l->tp);
    for (int i = 0; i < halves; i++) {
        if (!l->sequence_parallel) {
            /* forward: all-reduce after the row-parallel GEMM; backward:
             * all-reduce of the column-parallel input gradient, which can
             * run during that layer's weight-gradient GEMM. */
            double ar = coll(pr, COLL_ALL_REDUCE, s, bytes);
            out->fwd.tp += ar;
            tail = halves == 2 && i == 1 ? ar : 0;
            out->bwd.tp += o->async_tp_grad ? fmax(0, ar - col[i]->wgrad) : ar;
            continue;
        }
        double ag = coll(pr, COLL_ALL_GATHER, s, ag_bytes);
        double rs = coll(pr, COLL_REDUCE_SCATTER, s, bytes);
        if (roles) {
            const tpo_role_t *r = roles + (i == 0 ? 0 : TPO_FC1_FPROP - TPO_QKV_FPROP);
            double scatter = tp_overlapped(pr, r, col[i], row[i], ag, rs, bytes);
            tail = halves == 2 && i == 1 ? scatter : 0;
        } else {
            /* forward: gather before the column-parallel GEMM, scatter
             * after the row-parallel one; backward: gather the output
             * gradient, re-gather the input for the weight gradient (during
             * the input-gradient GEMM) and reduce-scatter the input
             * gradient (during the weight-gradient GEMM). */
            out->fwd.tp += ag + rs;
            tail = halves == 2 && i == 1 ? rs : 0;
            double hidden = o->async_tp_grad ? fmax(0, ag + rs - col[i]->dgrad - col[i]->wgrad)
                                             : ag + rs;
            out->bwd.tp += ag + hidden;
        }
    }
    return tail;
}
