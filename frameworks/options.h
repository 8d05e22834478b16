/* options: the simulator options a framework preset sets (sim_options_t).
 *
 * One row per option in frameworks/options.def (its JSON key, field, type,
 * range, default, off value, source and the unit test that pins its
 * mechanism) generates the preset reader's scalar options, the defaults,
 * the option listing and the generic --set KEY=VALUE (fw_option_*
 * below). The records here are plain value structs the simulator (sim/)
 * reads; nothing here prices anything.
 */
#ifndef SCALEPLAN_FRAMEWORKS_OPTIONS_H
#define SCALEPLAN_FRAMEWORKS_OPTIONS_H

#include <stdbool.h>

#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/error.h"
#include "common/json.h"
#include "frameworks/host.h"
#include "frameworks/tp_overlap.h"
#include "models/layout.h"
#include "topologies/gpu.h"

/* The costs of a low-precision recipe (sim/precision.h loads them). */
typedef struct {
    bool quantized;          /* an fp8/fp4 recipe (false: bf16/fp16/fp32) */
    dtype_t gemm_dtype;      /* what the GEMMs run in */
    double cast_input;       /* bytes moved per forward input element */
    double cast_grad;        /* per backward output-gradient element */
    double cast_weight;      /* per weight element */
    bool weight_cast_per_step; /* cached across the step's micro-batches */
    double rescale_grad_out; /* bytes moved per output element of the input-
                                and weight-gradient GEMMs, rescaled after the
                                GEMM (0: the scales applied inside it) */
} prec_costs_t;

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

/* --moe-dispatcher's name of d (what moe_dispatch_parse reads). */
const char *moe_dispatch_name(moe_dispatch_t d);

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
    bool drop_from_recipe; /* capacity and padding came from the framework's
                              recipe for this model and GPU (said as assumed) */
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
    bool zero2_reduce_per_mb;  /* ZeRO-2 reduce-scatters the gradients after
                                  every micro-batch's backward (DeepSpeed
                                  stage_1_and_2.py); false: as ZeRO-1, in
                                  buckets */
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
    host_opts_t host;          /* the host thread issuing the kernels (frameworks/host.h) */
} sim_options_t;

/* Megatron-Core defaults: overlapped grad reduce and param gather, async
 * TP gradient reduction, no TP comm overlap, 40M-parameter buckets, causal
 * attention, chunk-level tasks, the profile's straggler CV. */
void sim_options_default(sim_options_t *o);

/* One row of frameworks/options.def. */
typedef enum { FWO_BOOL, FWO_DOUBLE, FWO_WORD, FWO_TEXT } fw_option_kind_t;

typedef struct {
    const char *key;        /* JSON key in a preset's "options"; --set's name */
    size_t offset, size;    /* where the field sits in sim_options_t */
    fw_option_kind_t kind;
    double lo, hi;          /* FWO_DOUBLE's accepted range */
    const char *words;      /* FWO_WORD: "name=value ..."; FWO_TEXT: the default */
    double dflt;            /* before any preset sets it */
    double off;             /* what SCALEPLAN_OPTION_OFF=key forces */
    bool required;          /* every preset gives it */
    const char *source;     /* where the default comes from */
    const char *test;       /* the unit test that fails with it off */
} fw_option_t;

/* The rows, in table order: fw_option_at(0 .. fw_option_count() - 1);
 * NULL out of range. */
int fw_option_count(void);
const fw_option_t *fw_option_at(int i);

/* The row of JSON key key, or NULL. */
const fw_option_t *fw_option_find(const char *key);

/* Whether the environment's SCALEPLAN_OPTION_OFF (a comma list of option
 * keys) names key: make check-mechanisms switches each mechanism off this
 * way to see its test fail. Reads the environment only. */
bool framework_option_disabled(const char *key);

/* Read every row from a preset's "options" object o into *opt (a row that
 * is absent and optional keeps *opt's value), each checked against its
 * row's type and range; a row SCALEPLAN_OPTION_OFF names gets its off
 * value. ERR_INPUT, one line naming the file and key; *opt is then partly
 * filled. */
int fw_options_read(const cJSON *o, const json_ctx_t *ctx, sim_options_t *opt, err_t *err);

/* Set row r from text ("true", "0.5", "allgather", ...), checked against
 * the row's type and range: ERR_INPUT naming the key, *o unchanged. */
int fw_option_parse(const fw_option_t *r, const char *text, sim_options_t *o, err_t *err);

/* --set KEY=VALUE: the row named KEY set from VALUE. ERR_INPUT naming
 * --set: not KEY=VALUE, an unknown key (with the close names) or a value
 * its row refuses; *o unchanged. */
int fw_option_set(sim_options_t *o, const char *assignment, err_t *err);

/* Row r's value in o: a switch 0/1, a number, a word's int (FWO_TEXT: 0). */
double fw_option_value(const fw_option_t *r, const sim_options_t *o);

/* Store v (FWO_TEXT: text; NULL the row's default) into row r of o. */
void fw_option_store(const fw_option_t *r, sim_options_t *o, double v, const char *text);

/* Row r switched off in o (its off value). */
void fw_option_off(const fw_option_t *r, sim_options_t *o);

/* Row r's value in o as a preset writes it ("true", "4e+07", "ring"). */
void fw_option_format(const fw_option_t *r, const sim_options_t *o, char *buf, size_t cap);

#endif
