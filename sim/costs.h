/* costs: how long each piece of a training step takes on one GPU.
 *
 * From the model, the finalized layout, the cluster (with the placement of
 * every parallel group on its nodes) and the cost profile, this module
 * prices one transformer layer's forward and backward for one micro-batch
 * operation by operation (GEMMs at their shapes after the TP split, fused
 * or materialized attention, memory-bound norms and activations, fp8
 * casts), the tensor-parallel collectives that sit on the critical path
 * (or the part of them that overlap does not hide), the context-parallel
 * ring exchange, the embedding and output layers, pipeline transfers,
 * data-parallel reductions and the optimizer step. The step builder
 * (sim/step.h) places these pieces on a timeline.
 *
 * Framework behaviour that changes costs (which communication overlaps
 * with what) is a sim_options_t (frameworks/options.h), with presets for
 * the frameworks whose published runs scaleplan is validated against.
 *
 * sim/costs.c and the cost modules it calls, one per mechanism, implement
 * this (sim/costsInt.h, private to them, lists them).
 */
#ifndef SCALEPLAN_SIM_COSTS_H
#define SCALEPLAN_SIM_COSTS_H

#include <stdbool.h>

#include "profile/profile.h"
#include "frameworks/options.h"
#include "sim/precision.h"
#include "common/error.h"
#include "models/layout.h"
#include "models/model.h"
#include "topologies/cluster.h"
#include "topologies/placement.h"
#include "sim/offload.h"


/* The fused elementwise kernels of a compiled model (torch.compile): the
 * eager multipliers back to 1. */
void sim_options_compiled_model(sim_options_t *o);

/* The loss compiled, where the preset says its compile covers it
 * (ce_compiled_*; otherwise nothing changes). Call after the preset is
 * loaded. */
void sim_options_compiled_loss(sim_options_t *o);

/* The framework's compile switch: both of the above. */
void sim_options_compiled(sim_options_t *o);

/* Load the costs of precision p into o (sim_costs does it when they are
 * missing; callers that price many layouts do it once). */
int sim_options_precision(sim_options_t *o, precision_t p, err_t *err);

/* The same, looked up in the parsed catalog cat (NULL: parse it now). */
int sim_options_precision_in(catalog_t *cat, sim_options_t *o, precision_t p, err_t *err);


/* Presets by framework: "megatron-core" (the default), "megatron-2022"
 * (Korthikanti et al.: async TP grad reduce, no DP overlap), "megatron-2021"
 * (SC21: no overlap at all), "deepspeed" (ZeRO with overlap_comm),
 * "fsdp". They set options and, where the framework fixes it, the layout's
 * attention kind (2021/2022 Megatron materialized the scores). ERR_INPUT
 * names the accepted presets. */
/* gpu (a catalog GPU name, or NULL) picks the preset's per-GPU recipe
 * settings (fw_apply_gpu). */
int sim_options_framework(const char *name, const char *gpu, sim_options_t *o, layout_t *l,
                          err_t *err);

/* The same, looked up in the parsed catalog cat (NULL: parse it now). */
int sim_options_framework_in(catalog_t *cat, const char *name, const char *gpu, sim_options_t *o,
                             layout_t *l, err_t *err);

typedef struct {
    const model_t *model;
    const layout_t *layout; /* finalized */
    const cluster_t *cluster;
    const profile_t *profile;
    sim_options_t opt;
} sim_input_t;

/* Seconds of one piece of work, split by what kind of time it is. */
typedef struct {
    double compute;   /* GEMMs, attention, memory-bound kernels */
    double recompute; /* forward work repeated in the backward */
    double tp;        /* exposed tensor-parallel communication */
    double cp;        /* exposed context-parallel ring exchange */
    double dp;        /* exposed ZeRO-3 parameter gathers inside the pass */
    double ep;        /* exposed expert-parallel dispatch and combine */
    double imbalance; /* experts' extra time on the busiest EP rank */
    double offload;   /* exposed host transfers (layout_t.offload; sim/offload.h) */
    double host;      /* the GPU waiting for the host to issue kernels (frameworks/host.h) */
} cost_parts_t;

double cost_total(const cost_parts_t *c);

#define SIM_MAX_OPS 24

typedef struct {
    const char *name; /* "qkv", "attention", "mlp_in", ... */
    double fwd_s, bwd_s;
} op_cost_t;

typedef struct {
    cost_parts_t fwd;       /* one layer's forward, one micro-batch */
    cost_parts_t bwd;       /* one layer's backward, incl. recompute */
    cost_parts_t bwd_keep;  /* the backward of a layer that keeps its
                               activations (partial full recompute:
                               layout_t.recompute_layers): bwd without the
                               recomputed forward and its communication */
    double bwd_wgrad_s;     /* of bwd.compute: the weight-gradient GEMMs, which
                               a zero-bubble schedule runs apart */
    double recompute_tp_s;  /* of bwd.tp: the forward's TP collectives run
                               again by the recompute (less what an
                               early-stopping recompute skips) */
    cost_parts_t embed_fwd; /* first virtual stage, per micro-batch */
    cost_parts_t embed_bwd;
    cost_parts_t head_fwd;  /* last virtual stage: final norm, logits, loss */
    cost_parts_t head_bwd;
    double p2p_s;           /* one activation or gradient transfer between stages */
    double p2p_bytes;
    double layer_params;    /* parameters of one layer on one GPU */
    double layer_trainable_params; /* of those, or beside them, what is trained
                                   and reduced over DP: layer_params, or with
                                   a frozen base (LoRA) its adapters */
    double layer_expert_params; /* of which routed experts (sharded over the
                                   expert-DP group, not DP x CP) */
    double zero3_gather_layer_s;  /* all-gather one layer's weights (ZeRO-3) */
    double zero3_reduce_layer_s;  /* reduce-scatter one layer's gradients */
    coll_span_t dp_span;    /* gradient reduction group (DP x CP) */
    coll_span_t tp_span;
    coll_span_t pp_span;    /* neighbouring pipeline stages */
    coll_span_t ep_span;    /* expert-parallel group (dispatch and combine) */
    coll_span_t cp_span;    /* context-parallel group */
    coll_span_t cp_pair_span; /* two neighbouring context-parallel ranks */
    coll_span_t edp_span;   /* expert-data-parallel group: reduces and gathers
                               the routed experts' gradients and weights */
    double ep_comm_layer_s; /* one MoE block's dispatch and combine, forward
                               and backward, before overlap */
    placement_t placement;
    int n_ops;
    op_cost_t ops[SIM_MAX_OPS]; /* per-operation breakdown of one layer */
    double straggler_sigma_max; /* E[max of n_gpus standard normals] */
    double straggler_cv;
    offload_costs_t offload;    /* host transfers and CPU step (zeros without offload) */
} step_costs_t;

/* ERR_INPUT, one line, for models the simulator cannot price. Every
 * model scaleplan reads is priced today (dense, mixture-of-experts,
 * multi-latent attention); kept as the one place such a refusal goes. */
int sim_model_supported(const model_t *m, err_t *err);

/* Price every piece. ERR_INPUT if the cluster has fewer GPUs than the
 * layout, or if the profile is for another GPU than the cluster's. */
int sim_costs(const sim_input_t *in, step_costs_t *out, err_t *err);

/* Seconds to reduce `params` parameters' gradients over the DP x CP group
 * (all-reduce with ZeRO-0, reduce-scatter when sharded). */
double sim_grad_reduce_time(const sim_input_t *in, const step_costs_t *c, double params);

/* Seconds to all-gather `params` updated parameters (sharded optimizers). */
double sim_param_gather_time(const sim_input_t *in, const step_costs_t *c, double params);

/* Seconds of the optimizer step over the parameters one GPU updates. */
double sim_optimizer_time(const sim_input_t *in, double params_on_gpu);

/* Expected maximum of n independent standard normal variables (Blom's
 * approximation), 0 for n <= 1. */
double sim_expected_max_normal(int n);

#endif
