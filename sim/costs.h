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
 * with what) is a sim_options_t, with presets for the frameworks whose
 * published runs scaleplan is validated against.
 *
 * sim/costs.c and the cost modules it calls, one per mechanism, implement
 * this (sim/costsInt.h, private to them, lists them).
 */
#ifndef SCALEPLAN_SIM_COSTS_H
#define SCALEPLAN_SIM_COSTS_H

#include <stdbool.h>

#include "profile/profile.h"
#include "sim/precision.h"
#include "sim/tp_overlap.h"
#include "common/error.h"
#include "models/layout.h"
#include "models/model.h"
#include "topologies/cluster.h"
#include "topologies/placement.h"
#include "sim/offload.h"
#include "sim/host.h"

/* Context parallelism's K/V exchange. */
typedef enum {
    CP_RING = 0,  /* P2P ring (Megatron/Transformer Engine "p2p"): cp - 1 steps,
                     each attending over one K/V block of s/cp while the next
                     block arrives */
    CP_ALLGATHER, /* PyTorch's all-gather rotation (torchtitan "allgather"):
                     K/V gathered once during the local block, attention
                     block by block as in the ring, the fp32 K/V gradients
                     passed round a ring */
    CP_A2A        /* all-to-all between sequence and head splits (Ulysses):
                     each rank attends over all s keys with heads/cp heads */
} cp_comm_t;

/* ZeRO-3 / FSDP as a framework runs it: per layer and micro-batch the
 * parameters are gathered for the forward and, when they are resharded
 * after it, again for the backward; the gradients are reduce-scattered (or
 * all-reduced) after the backward. */
typedef struct {
    bool gather_blocks_compute; /* compute waits for each gather (DeepSpeed
                                   2021 synchronized before every gather);
                                   false: gathers prefetched a layer ahead */
    bool regather_backward;     /* resharded after the forward: gathered again
                                   for the backward (FSDP FULL_SHARD, ZeRO-3) */
    bool grad_all_reduce;       /* gradients all-reduced, not reduce-scattered */
    bool reshard_with_pp;       /* with pipeline stages, gather and reduce per
                                   micro-batch (false: once per step, the
                                   parameters kept across micro-batches) */
    bool prefetch_backward;     /* the backward's gathers issued a layer ahead
                                   (FSDP BACKWARD_PRE, FSDP2); false: after the
                                   current layer's gradients (BACKWARD_POST),
                                   so the next layer waits for its gather */
    double path_gbs;            /* the implementation's own throughput limit per
                                   GPU for gathers and reductions, GB/s of bus
                                   traffic; 0 = what NCCL reaches */
    double max_live_params;     /* parameters gathered at once at most (DeepSpeed's
                                   stage3_max_live_parameters); 0 = two blocks
                                   whole (the current and the prefetched) */
    bool hpz;                   /* ZeRO++ hpZ: a secondary copy of the weights
                                   sharded inside each node, so the backward's
                                   gathers stay on the node (sim/codec.h) */
} zero3_opts_t;

/* Which ranks reduce fp8 delayed scaling's amaxes (sim/amax.h). */
typedef enum {
    AMAX_RED_TP_DP = 0, /* tensor x data x context parallel (Megatron's default) */
    AMAX_RED_TP,        /* tensor (x context) parallel only: tp_only_amax_red */
    AMAX_RED_OFF        /* not priced (tests switch the mechanism off) */
} amax_red_t;

/* How a mixture-of-experts block moves tokens to its experts. */
typedef enum {
    MOE_DISPATCH_ALLTOALL = 0, /* all-to-all over the EP group (NCCL), then an
                                  all-gather over expert-TP ranks */
    MOE_DISPATCH_ALLGATHER,    /* every token all-gathered over EP x ETP, the
                                  outputs reduce-scattered back (Megatron's
                                  default --moe-token-dispatcher-type) */
    MOE_DISPATCH_DEEPEP        /* DeepEP's fused all-to-all kernels ("flex"):
                                  fp8 dispatch in quantized runs */
} moe_dispatch_t;

/* "alltoall", "allgather", "deepep" (Megatron's "flex" reads as deepep);
 * ERR_INPUT naming field when text is none of them. */
int moe_dispatch_parse(const char *text, const char *field, moe_dispatch_t *out, err_t *err);

/* Megatron-LM's --moe-token-dispatcher-type for d ("flex" for DeepEP). */
const char *moe_dispatch_megatron_name(moe_dispatch_t d);

/* Mixture-of-experts behaviour of a framework (and of the run). */
typedef struct {
    moe_dispatch_t dispatcher;
    bool dispatcher_given; /* named by the user or the run's file (else the preset's) */
    bool grouped_gemm;    /* the local experts in one grouped GEMM; false: one
                             GEMM per expert, one after another */
    bool permute_fusion;  /* token permute/unpermute as one fused kernel each */
    bool shared_overlap;  /* shared experts computed while the dispatch and
                             combine all-to-alls run */
    bool a2a_overlap;     /* EP all-to-alls of one micro-batch hidden behind
                             another's compute (Megatron-Core's combined 1F1B
                             with --overlap-moe-expert-parallel-comm) */
    double imbalance;     /* tokens on the busiest EP rank over the mean: 1 =
                             balanced (forced balance, or measured) */
    bool imbalance_given; /* set by the user or the run's notes (else assumed) */
    double capacity_factor; /* tokens an expert takes, over the mean; those
                               beyond are dropped (0 = dropless) */
    bool pad_to_capacity; /* every expert padded to its capacity (Megatron
                             --moe-pad-expert-input-to-capacity) */
    /* Atomic scatter-adds over the routed tokens (element adds per routed
     * element): in the forward (an unpermute by scatter_add_) and in the
     * backward (the gradient of an index gather, index_add_); 0 for fused
     * permutes. Priced at the profile's atomic rate. */
    double scatter_adds_fwd, scatter_adds_bwd;
    bool pair_overlap_no_recompute; /* DualPipeV's paired passes hide each
                                       other's all-to-alls only without
                                       activation recompute */
    bool fp8_dispatch;    /* DeepEP's dispatch sends quantized tokens (fp8
                             with an fp32 scale per 128 values) in low-precision
                             runs, as DeepSeek-V3's training did; Megatron-Core
                             passes its 16-bit tokens to DeepEP and HybridEP
                             (sim/moe_dispatch.h) */
    bool probs_in_act;    /* the router's probabilities weight the expert
                             activation (Megatron-Core 0.13 on), so the expert
                             outputs are not kept for their gradient */
} moe_opts_t;

typedef struct {
    bool overlap_grad_reduce;  /* DP gradient buckets reduced during backward */
    bool grad_reduce_after_pipeline; /* with pipeline stages every reduction
                                        waits for the stage's schedule to end
                                        (DeepSpeed's pipeline engine: ReduceGrads
                                        after the last backward), whatever
                                        overlap_grad_reduce says */
    bool bf16_grad_all_reduce; /* bf16 with ZeRO 0-1 runs DeepSpeed's
                                  BF16_Optimizer: the fp32 gradients are
                                  all-reduced whole (its shard of the update
                                  then all-gathers the parameters), not
                                  reduce-scattered */
    bool overlap_param_gather; /* updated parameters gathered during the next
                                  step's forward (distributed optimizer) */
    bool tp_comm_overlap;      /* TP all-gather/reduce-scatter pipelined with
                                  GEMMs (Transformer Engine userbuffers; needs SP) */
    cp_comm_t cp_comm;         /* how context parallelism exchanges K/V */
    tp_overlap_t tp_overlap;   /* how each GEMM's collective is overlapped */
    unsigned tp_overlap_off;   /* precisions (bit 1 << precision_t) the
                                  framework runs without TP overlap */
    bool async_tp_grad;        /* backward TP reduction of input gradients
                                  overlapped with the weight-gradient GEMM */
    bool p2p_whole_tensor;     /* without sequence parallelism every TP rank
                                  sends the whole activation to the next stage
                                  (DeepSpeed's pipeline engine), not 1/t of it
                                  re-gathered over NVLink (Megatron's
                                  scatter/gather optimization) */
    int overlap_p2p;           /* pipeline transfers asynchronous: 1 yes, 0 no,
                                  -1 the schedule's default */
    double bucket_params;      /* DP gradient bucket size, parameters */
    bool causal;               /* causal mask: fused attention skips masked blocks */
    bool layer_events;         /* a task per layer (for traces) instead of per chunk */
    double straggler_cv;       /* per-rank compute jitter; < 0 = the profile's */
    int dp_comm_ctas;          /* SMs a DP collective holds while it overlaps
                                  the passes (sim/dp_contention.h); < 0 =
                                  DPC_NCCL_CTAS, 0 = not priced */
    int amax_reduction;        /* fp8 delayed scaling's blocking amax all-reduce
                                  per chunk and micro-batch (sim/amax.h):
                                  AMAX_RED_TP_DP (Megatron's default group),
                                  AMAX_RED_TP (tp_only_amax_red), AMAX_RED_OFF */
    double reduce_bytes;       /* bytes per gradient element on the wire in DP
                                  reductions; 0 = the main gradients' (layout) */
    double gather_bytes;       /* bytes per parameter on the wire in parameter
                                  gathers; 0 = the weights' own (a codec's
                                  quantized gather, sim/codec.h) */
    bool fp8_param_gather;     /* fp8 runs gather parameters in fp8 (1 byte) */
    bool fp8_tp_gather;        /* per-tensor fp8 runs (delayed or current scaling)
                                  quantize before sequence parallelism's
                                  all-gathers (forward input, backward output
                                  gradient, the weight gradient's re-gathered
                                  input: 1 byte an element); reduce-scatters stay
                                  in the 16-bit type */
    char attn_kernel[16];      /* fused attention kernel ("cudnn", "flash2", ...) */
    bool recompute_early_stop; /* full recompute by PyTorch's non-reentrant
                                  checkpoint, which stops re-running a block's
                                  forward once every tensor its backward saved
                                  is rebuilt: a dense layer's last GEMM (the MLP
                                  down projection, its TP collective) and the
                                  residual add after it are not run again */
    bool fp8_weight_cache;     /* quantized weights reused for the step's micro-batches */
    bool fp8_saves_quantized;  /* a low-precision run keeps each GEMM's input
                                  quantized for the weight gradient (Transformer
                                  Engine's modules), not in 16 bits (memory) */
    /* Memory traffic of the elementwise ops relative to one fused kernel
     * (1 = fused, e.g. Transformer Engine or torch.compile; eager PyTorch
     * decomposes RMSNorm, rotary embeddings and SwiGLU into several
     * kernels, each reading and writing the tensor). */
    double eager_norm, eager_rope, eager_act;
    double eager_cp_merge;     /* the same for the forward's merge of a
                                  context-parallel ring step (cp_merge_bytes) */
    double cp_merge_bytes;     /* memory traffic per element of merging one
                                  later ring step's partial attention output
                                  (forward) and accumulating its query and
                                  K/V gradients (backward), fused */
    bool fp8_norm_cast;        /* Transformer Engine's LayerNormLinear: the norm
                                  before the Q/K/V and first MLP GEMMs writes a
                                  delayed-scaling fp8 input itself; only the
                                  weight gradient's transposed copy remains */
    bool kv_repeated;          /* the model repeats grouped K/V heads to every
                                  query head before attention (torchtitan's
                                  Llama repeat_kv): a context-parallel
                                  exchange moves query-width K and V */
    /* Memory traffic of the loss per logit element on this GPU, forward
     * and backward (bytes): how the framework computes cross entropy over
     * the vocabulary (fp32 copies, separate max/exp/sum/div passes, or one
     * fused kernel that writes the gradient in the forward). */
    double ce_fwd_bytes, ce_bwd_bytes;
    double ce_peak_bytes;      /* bytes per logit element alive at the loss's
                                  peak (memory); 0 = the memory model's default */
    /* The same three with TP > 1, where a framework computes the loss over
     * vocabulary shards another way (torchtitan's loss_parallel); 0 = as
     * without TP */
    double ce_tp_fwd_bytes, ce_tp_bwd_bytes, ce_tp_peak_bytes;
    /* The three when torch.compile covers the loss too (the framework's
     * compile switch compiles it: sim_options_compiled); 0 = its compile
     * leaves the loss eager */
    double ce_compiled_fwd_bytes, ce_compiled_bwd_bytes, ce_compiled_peak_bytes;
    /* Layout copies around materialized attention's batched products:
     * read-and-write passes over Q/K/V (qkv) and over the attention
     * output (out), forward and backward (0 = none: the products read
     * strided views). */
    double attn_copy_fwd_qkv, attn_copy_fwd_out, attn_copy_bwd_qkv, attn_copy_bwd_out;
    prec_costs_t prec;         /* the precision recipe's costs ... */
    int prec_for;              /* ... for precision prec_for - 1 (0: not loaded;
                                  sim_costs loads them) */
    zero3_opts_t zero3;
    moe_opts_t moe;
    host_opts_t host;          /* the host thread issuing the kernels (sim/host.h) */
} sim_options_t;

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

/* Megatron-Core defaults: overlapped grad reduce and param gather, async
 * TP gradient reduction, no TP comm overlap, 40M-parameter buckets, causal
 * attention, chunk-level tasks, the profile's straggler CV. */
void sim_options_default(sim_options_t *o);

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
    double host;      /* the GPU waiting for the host to issue kernels (sim/host.h) */
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
