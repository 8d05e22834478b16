/* cost_dp: the data-parallel group's costs: ZeRO-3's gathers and
 * reductions inside each layer's passes, fp8 delayed scaling's amax syncs
 * (sim/amax.h), and the step's gradient reduction, parameter gather and
 * optimizer step (sim/costs.h; sim/costsInt.h). */
#include "sim/costsInt.h"

#include <math.h>

#include "sim/amax.h"

/* Bytes per element of the gradients a DP reduction moves. */
static double reduce_bytes(const sim_input_t *in)
{
    if (finetune_frozen(&in->layout->ft))
        return 4; /* fp32 adapters' gradients */
    return in->opt.reduce_bytes > 0 ? in->opt.reduce_bytes : in->layout->grad_bytes;
}

/* Bytes per parameter a gather moves: fp8 when the framework gathers fp8
 * copies of an fp8 run's weights, else the weights' own size. */
static double gather_bytes(const sim_input_t *in)
{
    if (finetune_frozen(&in->layout->ft))
        return finetune_base_bytes_per_param(&in->layout->ft); /* FSDP-QLoRA gathers 4-bit */
    if (in->opt.gather_bytes > 0)
        return in->opt.gather_bytes; /* a codec's quantized gather */
    if (in->opt.fp8_param_gather && layout_precision_quantized(in->layout->precision))
        return layout_precision_fp4(in->layout->precision) ? 0.5 + 1.0 / 16 : 1;
    return layout_weight_bytes(in->layout->precision);
}

/* A DP-group collective as the framework's ZeRO-3 path moves it: NCCL's
 * time, or the implementation's own throughput limit when that is slower. */
static double zero3_coll(const sim_input_t *in, const step_costs_t *c, coll_op_t op, double bytes)
{
    double t = prof_coll_time(in->profile, op, &c->dp_span, bytes);
    double cap = in->opt.zero3.path_gbs;
    if (cap > 0) {
        double bus = prof_bus_factor(op, c->dp_span.n_ranks) * bytes;
        t = fmax(t, bus / (cap * 1e9));
    }
    return t;
}

/* ZeRO-3 / FSDP per layer and micro-batch (zero3_opts_t): the exposed part
 * of the parameter gathers and gradient reductions goes into the passes'
 * dp time. */
void cost_zero3(const sim_input_t *in, step_costs_t *out)
{
    const zero3_opts_t *z = &in->opt.zero3;
    const layout_t *l = in->layout;
    double g = zero3_coll(in, out, COLL_ALL_GATHER, out->layer_params * gather_bytes(in));
    double r = zero3_coll(in, out, z->grad_all_reduce ? COLL_ALL_REDUCE : COLL_REDUCE_SCATTER,
                          out->layer_trainable_params * reduce_bytes(in));
    /* With pipeline stages and no resharding, a layer is gathered once per
     * step (each micro-batch carries 1/m of it) and its gradients are
     * reduce-scattered once, after the stage's last backward: sim/step
     * places that reduction, not the layer's passes. */
    if (l->pp > 1 && !z->reshard_with_pp) {
        if (l->grad_accum > 1)
            g /= l->grad_accum;
        r = 0;
    }
    double g_bwd = z->regather_backward ? g : 0;
    if (z->regather_backward && z->hpz) {
        /* hpZ: the backward gathers from the node's secondary shards, kept
         * in the weights' type and quantized like the forward's gathers when
         * qwZ is on (DeepSpeed partition_parameters.py _all_gather_coalesced
         * quantizes ds_secondary_tensor too, since the ZeRO++ commit
         * d18aa2c79 of 2023-06-23) */
        coll_span_t node = out->dp_span;
        node.n_ranks = node.ranks_per_node;
        node.nodes = 1;
        g_bwd = node.n_ranks > 1 ? prof_coll_time(in->profile, COLL_ALL_GATHER, &node,
                                                  out->layer_params * gather_bytes(in))
                                 : 0;
    }
    out->zero3_gather_layer_s = g;
    out->zero3_reduce_layer_s = r;
    double fwd_compute = out->fwd.compute, bwd_compute = out->bwd.compute + out->bwd.recompute;
    if (z->gather_blocks_compute) {
        /* each gather waits for the compute before it and blocks the next */
        out->fwd.dp = g;
        out->bwd.dp = g_bwd + fmax(0, r - bwd_compute);
    } else if (z->prefetch_backward) {
        /* prefetched one layer ahead: exposed when a gather outlasts the
         * compute it hides behind; gathers and reductions share the links */
        out->fwd.dp = fmax(0, g - fwd_compute);
        out->bwd.dp = fmax(0, g_bwd + r - bwd_compute);
    } else {
        /* the backward's gather waits for the current layer's gradients:
         * only the reduction overlaps the compute */
        out->fwd.dp = fmax(0, g - fwd_compute);
        out->bwd.dp = g_bwd + fmax(0, r - bwd_compute);
    }
}

/* fp8 delayed scaling's amax all-reduce in each layer's passes' dp time
 * (sim/amax.h): the dispatcher reaches it through here, so that
 * sim/costs.c includes no header that includes sim/costs.h back. */
void cost_amax(const sim_input_t *in, step_costs_t *out)
{
    amax_price_layers(in, out);
}

/* The routed experts' share of a GPU's layer parameters (0 when dense, and
 * with a frozen base, whose adapters are on the attention only). */
static double expert_share(const sim_input_t *in, const step_costs_t *c)
{
    if (finetune_frozen(&in->layout->ft))
        return 0;
    return c->layer_params > 0 ? c->layer_expert_params / c->layer_params : 0;
}

double sim_grad_reduce_time(const sim_input_t *in, const step_costs_t *c, double params)
{
    const layout_t *l = in->layout;
    bool sharded = l->zero >= 1 || l->distributed_optimizer;
    if (in->opt.bf16_grad_all_reduce && l->precision == PRECISION_BF16 && l->zero <= 1)
        sharded = false; /* BF16_Optimizer: all-reduced, then its shard updated */
    coll_op_t op = sharded ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE;
    double x = expert_share(in, c);
    if (x <= 0)
        return prof_coll_time(in->profile, op, &c->dp_span, params * reduce_bytes(in));
    /* experts over their own group, the rest over DP x CP */
    return prof_coll_time(in->profile, op, &c->dp_span, params * (1 - x) * reduce_bytes(in)) +
           prof_coll_time(in->profile, op, &c->edp_span, params * x * reduce_bytes(in));
}

double sim_param_gather_time(const sim_input_t *in, const step_costs_t *c, double params)
{
    double x = expert_share(in, c);
    if (x <= 0)
        return prof_coll_time(in->profile, COLL_ALL_GATHER, &c->dp_span,
                              params * gather_bytes(in));
    return prof_coll_time(in->profile, COLL_ALL_GATHER, &c->dp_span,
                          params * (1 - x) * gather_bytes(in)) +
           prof_coll_time(in->profile, COLL_ALL_GATHER, &c->edp_span,
                          params * x * gather_bytes(in));
}

double sim_optimizer_time(const sim_input_t *in, double params_on_gpu)
{
    /* Adam over fp32 state, per parameter: read the gradient for the norm
     * and again for the update (2 x grad bytes), read and write the master
     * weight, momentum and variance (24), write the 16-bit weight (2), zero
     * the gradient buffer (grad bytes). */
    const layout_t *l = in->layout;
    double bytes = 3.0 * l->grad_bytes + 24 + 2;
    if (finetune_frozen(&l->ft))
        bytes = 3.0 * 4 + 24; /* fp32 adapters: no 16-bit copy to write */
    return prof_mem_time(in->profile, params_on_gpu * bytes);
}
