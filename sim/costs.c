/* costs: sim_costs, the step's pieces priced one mechanism at a time by
 * the cost modules (sim/costsInt.h lists them), and the group spans they
 * price collectives over. */
#include "sim/costs.h"
#include "sim/costsInt.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "models/hybrid.h"

int sim_model_supported(const model_t *m, err_t *err)
{
    (void)m;
    (void)err;
    return ERR_OK;
}

double cost_total(const cost_parts_t *c)
{
    return c->compute + c->recompute + c->tp + c->cp + c->dp + c->offload + c->ep + c->imbalance +
           c->host;
}

/* a x wa + b x wb, part by part (layers of two kinds averaged). */
cost_parts_t cost_parts_mix(const cost_parts_t *a, double wa, const cost_parts_t *b, double wb)
{
    cost_parts_t r;
    r.compute = a->compute * wa + b->compute * wb;
    r.recompute = a->recompute * wa + b->recompute * wb;
    r.tp = a->tp * wa + b->tp * wb;
    r.cp = a->cp * wa + b->cp * wb;
    r.dp = a->dp * wa + b->dp * wb;
    r.offload = a->offload * wa + b->offload * wb;
    r.ep = a->ep * wa + b->ep * wb;
    r.imbalance = a->imbalance * wa + b->imbalance * wb;
    r.host = a->host * wa + b->host * wb;
    return r;
}

double sim_expected_max_normal(int n)
{
    if (n <= 1)
        return 0;
    /* Blom (1958): E[max of n] ~ Phi^-1((n - 0.375) / (n + 0.25)). */
    return gsl_cdf_ugaussian_Pinv((n - 0.375) / (n + 0.25));
}

/* ---------------------------------------------------------------- spans */

/* The span of a placed group (topologies/placement.h) on the cluster. */
coll_span_t cost_span(const cluster_t *c, const group_place_t *g)
{
    coll_span_t s;
    s.n_ranks = g->size;
    s.ranks_per_node = g->ranks_per_node;
    s.nodes = g->nodes;
    s.intra = &c->intra;
    s.inter = &c->inter;
    s.nic_gbs_per_gpu = cluster_nic_gbs_per_gpu(c);
    /* Beyond one leaf the traffic crosses the tapered spine. */
    s.taper = g->nodes > c->nodes_per_leaf ? c->oversubscription : 1.0;
    return s;
}

/* Two neighbouring pipeline stages: on one node or on two. */
static coll_span_t pp_pair_span(const cluster_t *c, const group_place_t *pp)
{
    group_place_t pair = {2, pp->stride, pp->crosses_nodes ? 2 : 1,
                          pp->crosses_nodes ? 1 : 2, pp->crosses_nodes};
    return cost_span(c, &pair);
}

/* size ranks at a distance of stride on nodes of gpus_per_node: on one
 * node when they fit, one per node when the stride is a node or more, else
 * gpus_per_node / stride on each node. */
static coll_span_t strided_span(const cluster_t *c, int size, long stride)
{
    int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
    group_place_t g;
    g.size = size;
    g.stride = (int)stride;
    if (stride * size <= gpn) {
        g.nodes = 1;
        g.ranks_per_node = size;
    } else if (stride >= gpn) {
        g.nodes = size;
        g.ranks_per_node = 1;
    } else {
        g.ranks_per_node = (int)(gpn / stride);
        g.nodes = (size + g.ranks_per_node - 1) / g.ranks_per_node;
    }
    g.crosses_nodes = g.nodes > 1;
    return cost_span(c, &g);
}

/* The expert-parallel group: Megatron-Core lays expert ranks out as ETP,
 * EP, expert DP, so one EP group is ep ranks at a stride of etp. */
coll_span_t cost_ep_span(const cluster_t *c, const layout_t *l, int etp)
{
    return strided_span(c, l->ep, etp);
}

/* The expert-data-parallel group: ranks holding the same experts, at a
 * stride of EP x ETP. With a stride of a node or more, each member sits on
 * its own node and the group's traffic goes through one NIC per GPU. */
static coll_span_t edp_span_of(const cluster_t *c, const layout_t *l)
{
    return strided_span(c, (int)(layout_expert_dp(l) + 0.5), (long)l->ep * layout_etp(l));
}

/* A group of n consecutive ranks (expert-TP: the ranks of one expert). */
coll_span_t cost_consecutive_span(const cluster_t *c, int n)
{
    return strided_span(c, n, 1);
}

/* ---------------------------------------------------------------- the step */

/* Parameters of one transformer block on one GPU (as memory.c counts). */
static double layer_params_gpu(const model_t *m, const layout_t *l, double *experts_out)
{
    *experts_out = 0;
    if (model_is_moe(m) || model_is_mla(m) || model_is_hybrid(m)) {
        /* blocks differ (dense and MoE, hybrid kinds): their mean */
        double sum = 0, sum_e = 0;
        for (int i = 0; i < m->n_layers; i++) {
            double dense, experts;
            model_block_params_gpu(m, i, l->tp, l->ep, layout_etp(l), &dense, &experts);
            sum += dense + experts;
            sum_e += experts;
        }
        *experts_out = sum_e / m->n_layers;
        return sum / m->n_layers;
    }
    model_params_t p;
    model_params(m, &p);
    double replicated = p.norms + (m->out_bias ? m->hidden : 0) + (m->mlp_bias ? m->hidden : 0);
    return (p.per_layer - replicated) / l->tp + replicated;
}

/* What sim_costs refuses before pricing anything. */
static int check_input(const sim_input_t *in, err_t *err)
{
    const layout_t *l = in->layout;
    const cluster_t *c = in->cluster;
    int rc = sim_model_supported(in->model, err);
    if (rc)
        return rc;
    if ((rc = cost_host_graphs_possible(in, err)))
        return rc;
    if (strcmp(in->profile->gpu, c->gpu.name) != 0)
        return err_setf(err, ERR_INPUT, NULL, "--profile",
                        "the profile describes %s but the cluster's GPU is %s",
                        in->profile->gpu, c->gpu.name);
    if (c->n_gpus != l->n_gpus)
        return err_setf(err, ERR_INPUT, NULL, "--gpus",
                        "the cluster has %d GPUs but the layout uses %d", c->n_gpus,
                        l->n_gpus);
    return ERR_OK;
}

/* The parallel groups placed on the nodes, and the spans of TP, DP x CP
 * and neighbouring pipeline stages. */
static int place_groups(const sim_input_t *in, step_costs_t *out, err_t *err)
{
    const cluster_t *c = in->cluster;
    int rc = topo_place_groups(in->layout, c->gpus_per_node, &out->placement, err);
    if (rc)
        return rc;
    out->tp_span = cost_span(c, &out->placement.group[GROUP_TP]);
    out->dp_span = cost_span(c, &out->placement.group[GROUP_DP_CP]);
    out->pp_span = pp_pair_span(c, &out->placement.group[GROUP_PP]);
    return ERR_OK;
}

/* The pricer of in's layout into out, with the precision recipe's costs in
 * *q (the caller's, alive while the pricer is used). */
static int pricer_init(pricer_t *pr, const sim_input_t *in, step_costs_t *out, prec_costs_t *q,
                       err_t *err)
{
    const layout_t *l = in->layout;
    int rc;
    *pr = (pricer_t){0};
    pr->in = in;
    pr->p = in->profile;
    pr->out = out;
    if (in->opt.prec_for == (int)l->precision + 1) {
        *q = in->opt.prec;
    } else if ((rc = prec_costs(l->precision, q, err))) {
        return rc;
    }
    pr->q = q;
    pr->dt = q->gemm_dtype;
    pr->e = layout_weight_bytes(l->precision);
    pr->t = l->tp;
    pr->T = (double)l->seq_len / l->cp * l->micro_batch;
    pr->Tn = l->sequence_parallel ? pr->T / l->tp : pr->T;
    pr->frozen = finetune_frozen(&l->ft);
    return ERR_OK;
}

/* The layer the step builder places: a hybrid model's blocks by kind, or
 * one transformer layer (dense, MoE, or the two averaged). */
static int price_layers(pricer_t *pr, err_t *err)
{
    const model_t *m = pr->in->model;
    step_costs_t *out = pr->out;
    int L = m->n_layers, Lm = model_is_moe(m) ? m->moe.n_moe_layers : 0;
    if (model_is_hybrid(m))
        return cost_hybrid(pr, err);
    if (Lm > 0 && Lm < L) {
        /* dense and MoE blocks: the step builder prices a layer as one, so
         * a layer is their average by count (the ops shown: the MoE
         * block's) */
        step_costs_t dense = *out;
        pr->out = &dense;
        cost_layer(pr, false);
        pr->out = out;
        cost_layer(pr, true);
        double wm = (double)Lm / L, wd = 1 - wm;
        out->fwd = cost_parts_mix(&out->fwd, wm, &dense.fwd, wd);
        out->bwd = cost_parts_mix(&out->bwd, wm, &dense.bwd, wd);
        out->bwd_wgrad_s = wm * out->bwd_wgrad_s + wd * dense.bwd_wgrad_s;
        out->recompute_tp_s = wm * out->recompute_tp_s + wd * dense.recompute_tp_s;
        out->ep_comm_layer_s *= wm;
    } else {
        cost_layer(pr, Lm > 0);
    }
    return ERR_OK;
}

/* Pipeline transfer of one micro-batch's activations: 1/t of the tensor
 * per TP rank (sequence parallel, or Megatron's scatter/gather
 * optimization, which then re-gathers it over NVLink); the whole tensor
 * from every TP rank where the framework sends it as it is. */
static void price_p2p(const pricer_t *pr)
{
    const sim_input_t *in = pr->in;
    const layout_t *l = in->layout;
    step_costs_t *out = pr->out;
    double act = pr->T * in->model->hidden * pr->e;
    if (l->pp > 1) {
        bool whole = l->tp > 1 && !l->sequence_parallel && in->opt.p2p_whole_tensor;
        out->p2p_bytes = l->tp > 1 && !whole ? act / l->tp : act;
        out->p2p_s = prof_coll_time(in->profile, COLL_SEND_RECV, &out->pp_span, out->p2p_bytes);
        if (l->tp > 1 && !l->sequence_parallel && !whole)
            out->p2p_s += prof_coll_time(in->profile, COLL_ALL_GATHER, &out->tp_span, act);
    }
}

/* The backward of a layer that keeps its activations (partial full
 * recompute): without the recomputed forward and its communication. */
static void price_bwd_keep(const layout_t *l, step_costs_t *out)
{
    out->bwd_keep = out->bwd;
    if (l->recompute == RECOMPUTE_FULL) {
        out->bwd_keep.recompute = 0;
        out->bwd_keep.tp = fmax(0, out->bwd.tp - out->recompute_tp_s);
        out->bwd_keep.cp = fmax(0, out->bwd.cp - out->fwd.cp);
        out->bwd_keep.ep = fmax(0, out->bwd.ep - out->fwd.ep);
    }
}

int sim_costs(const sim_input_t *in, step_costs_t *out, err_t *err)
{
    const layout_t *l = in->layout;
    memset(out, 0, sizeof *out);
    int rc;
    if ((rc = check_input(in, err)) || (rc = place_groups(in, out, err)))
        return rc;
    pricer_t pr;
    prec_costs_t q;
    if ((rc = pricer_init(&pr, in, out, &q, err)))
        return rc;
    out->ep_span = cost_ep_span(in->cluster, l, layout_etp(l));
    out->edp_span = edp_span_of(in->cluster, l);
    if ((rc = price_layers(&pr, err)))
        return rc;
    cost_edges(&pr);
    cost_frozen_edges(&pr);
    price_p2p(&pr);
    out->layer_params = layer_params_gpu(in->model, l, &out->layer_expert_params);
    out->layer_trainable_params =
        pr.frozen ? finetune_adapter_params_block(&l->ft, in->model, l->tp) : out->layer_params;
    if (l->zero >= 3)
        cost_zero3(in, out);
    if (l->offload)
        cost_offload(in, out);
    cost_amax(in, out); /* before bwd_keep copies bwd */
    price_bwd_keep(l, out);
    out->straggler_cv = in->opt.straggler_cv >= 0 ? in->opt.straggler_cv
                                                  : in->profile->straggler_cv;
    out->straggler_sigma_max = sim_expected_max_normal(l->n_gpus);
    return ERR_OK;
}
