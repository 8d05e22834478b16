#include "sim/amax.h"

#include "models/layout.h"
#include "profile/profile.h"

/* The amax group's span: TP innermost, then CP and DP, so the group of one
 * pipeline stage fills whole nodes once it has as many ranks as a node has
 * GPUs (Megatron's rank order tp-cp-ep-dp-pp). */
static coll_span_t amax_span(const sim_input_t *in, const step_costs_t *c)
{
    const layout_t *l = in->layout;
    coll_span_t s = c->tp_span;
    int n = l->tp * l->cp;
    if (in->opt.amax_reduction == AMAX_RED_TP_DP)
        n *= l->dp;
    int per_node = in->cluster->gpus_per_node > 0 ? in->cluster->gpus_per_node : 1;
    s.n_ranks = n;
    s.ranks_per_node = n < per_node ? n : per_node;
    s.nodes = (n + s.ranks_per_node - 1) / s.ranks_per_node;
    if (s.nodes > 1) {
        s.inter = c->dp_span.inter;
        s.nic_gbs_per_gpu = c->dp_span.nic_gbs_per_gpu;
        s.taper = c->dp_span.taper > c->tp_span.taper ? c->dp_span.taper : c->tp_span.taper;
    }
    return s;
}

double amax_sync_s(const sim_input_t *in, const step_costs_t *c, double layers, bool backward)
{
    const layout_t *l = in->layout;
    if (l->precision != PRECISION_FP8 || in->opt.amax_reduction == AMAX_RED_OFF)
        return 0;
    coll_span_t s = amax_span(in, c);
    if (s.n_ranks <= 1)
        return 0;
    /* one fp32 amax per fp8 tensor of the chunk's layers */
    double per_layer = backward ? AMAX_BWD_TENSORS_PER_LAYER : AMAX_FWD_TENSORS_PER_LAYER;
    double bytes = 4.0 * per_layer * (layers > 1 ? layers : 1);
    return prof_coll_time(in->profile, COLL_ALL_REDUCE, &s, bytes);
}

void amax_price_layers(const sim_input_t *in, step_costs_t *c)
{
    const layout_t *l = in->layout;
    int chunks = l->pp * (l->vpp > 1 ? l->vpp : 1);
    double layers = (double)in->model->n_layers / (chunks > 0 ? chunks : 1);
    if (!(layers > 0))
        return;
    c->fwd.dp += amax_sync_s(in, c, layers, false) / layers;
    c->bwd.dp += amax_sync_s(in, c, layers, true) / layers;
}
