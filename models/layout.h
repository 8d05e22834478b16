/* layout: how a training step is split across GPUs.
 *
 * A layout_t holds the parallel degrees (TP, PP, CP, EP, DP), the batch
 * shape, the pipeline schedule and the memory-saving options (ZeRO stage,
 * recompute, sequence parallel). layout_finalize derives DP and gradient
 * accumulation from the GPU count and checks the layout against a model,
 * returning one clear error for anything Megatron-LM would refuse:
 *     --tp 6: num_attention_heads 64 must divide by TP (6 does not divide 64)
 *
 * Megatron rank order is TP fastest, then CP, then EP (inside DP), then DP,
 * then PP; topologies/placement.h uses it to put groups onto nodes.
 */
#ifndef SCALEPLAN_MODELS_LAYOUT_H
#define SCALEPLAN_MODELS_LAYOUT_H

#include <stdbool.h>

#include "common/error.h"
#include "models/finetune.h"
#include "models/model.h"

typedef enum {
    SCHEDULE_GPIPE = 0,   /* all forwards, then all backwards */
    SCHEDULE_1F1B = 1,    /* PipeDream-Flush: warm-up, steady 1F1B, cool-down */
    SCHEDULE_INTERLEAVED = 2, /* Megatron interleaved 1F1B with vpp chunks */
    SCHEDULE_DUALPIPEV = 3,   /* DeepSeek's DualPipeV: two stages per rank in a V,
                                 paired forward-backward chunks, split weight
                                 gradients (sim/schedule.h) */
    SCHEDULE_COUNT
} schedule_t;

/* Megatron-Core's --recompute-modules (transformer_config.py
 * recompute_modules): what selective recompute rebuilds in the backward. */
enum {
    LAYOUT_RC_CORE_ATTN = 1u << 0,      /* the attention core (the default) */
    LAYOUT_RC_LAYERNORM = 1u << 1,      /* the norms before attention and MLP */
    LAYOUT_RC_MLP = 1u << 2,            /* a dense MLP, whole */
    LAYOUT_RC_MOE_ACT = 1u << 3,        /* the experts' activation function */
    LAYOUT_RC_MOE = 1u << 4,            /* a mixture-of-experts block, whole */
    LAYOUT_RC_MLA_UP_PROJ = 1u << 5,    /* MLA's up-projections */
    LAYOUT_RC_SHARED_EXPERTS = 1u << 6, /* the shared experts */
    LAYOUT_RC_ALL = (1u << 7) - 1
};

typedef enum {
    RECOMPUTE_NONE = 0,
    RECOMPUTE_SELECTIVE = 1, /* attention core only (Korthikanti et al.) */
    RECOMPUTE_FULL = 2,      /* whole layers; only layer inputs kept */
    RECOMPUTE_OPS = 3,       /* torchtitan's op-level selective policy: every
                                other matmul and all elementwise ops
                                recomputed; attention outputs kept */
    RECOMPUTE_COUNT
} recompute_t;

/* Training precision: what the GEMMs of the transformer layers run in. The
 * low-precision recipes keep weights, activations and attention in bf16 and
 * quantize each GEMM's inputs; they differ in how they scale (per tensor
 * with an amax history or from the current amax, per block, per row) and so
 * in what the quantization costs (sim/catalog/precisions.json). */
typedef enum {
    PRECISION_BF16 = 0,
    PRECISION_FP16 = 1,
    PRECISION_FP8 = 2,       /* fp8, per-tensor delayed scaling (Transformer Engine) */
    PRECISION_FP32 = 3,
    PRECISION_FP8_CS = 4,    /* fp8, per-tensor current (dynamic) scaling */
    PRECISION_MXFP8 = 5,     /* MXFP8: 32-element blocks, e8m0 scales (Blackwell) */
    PRECISION_FP8_BLOCK = 6, /* fp8 with 128x128 weight / 1x128 activation blocks */
    PRECISION_FP8_ROWWISE = 7, /* fp8 with per-row scales (torchao rowwise) */
    PRECISION_NVFP4 = 8,     /* NVFP4: fp4 with 16-element blocks, fp8 scales (Blackwell) */
    PRECISION_MXFP4 = 9,     /* MXFP4: fp4 with 32-element blocks, e8m0 scales */
    PRECISION_COUNT
} precision_t;

/* Whether p quantizes the GEMM inputs (fp8 or fp4 recipes). */
bool layout_precision_quantized(precision_t p);
/* Whether p runs its GEMMs in fp4. */
bool layout_precision_fp4(precision_t p);

/* What training keeps off the GPU (layout_t.offload bits): ZeRO-Offload /
 * ZeRO-Infinity, FSDP CPU offload, Megatron's optimizer and activation
 * offload. */
enum {
    LAYOUT_OFFLOAD_OPTIMIZER = 1,  /* fp32 master weights and Adam moments on the host;
                                      the optimizer step runs on the CPU */
    LAYOUT_OFFLOAD_PARAMS = 2,     /* parameter shards on the host, fetched for each
                                      layer's forward and backward (ZeRO-3 / FSDP) */
    LAYOUT_OFFLOAD_ACTIVATIONS = 4 /* activations of offload_act_layers blocks per
                                      stage moved to the host after their forward and
                                      back before their backward (Megatron
                                      --cpu-offloading-num-layers) */
};

/* Most pipeline stages a layout may have (bounds the uneven-split table). */
#define LAYOUT_MAX_PP 1024

/* first_stage_layers or last_stage_layers of a first or last (virtual)
 * stage without transformer layers (0 means "not set"; --first-stage-layers
 * 0 and --last-stage-layers 0 give this). */
#define LAYOUT_STAGE_EMPTY (-1)

typedef struct {
    int tp;  /* tensor parallel degree */
    int pp;  /* pipeline parallel degree (stages) */
    int cp;  /* context parallel degree (sequence split across ranks) */
    int ep;  /* expert parallel degree (1 for dense models): routed experts
                are split, whole, over EP ranks carved out of TP x CP x DP */
    int etp; /* expert tensor parallel degree: each expert's width split
                over ETP ranks; 0 = the same as TP (Megatron's default) */
    int dp;  /* data parallel degree: gpus / (tp * pp * cp), derived */
    int vpp; /* model chunks per pipeline rank (interleaved only; else 1) */
    int micro_batch;  /* sequences per micro-batch on one DP rank */
    int global_batch; /* sequences per optimizer step over all DP ranks */
    int grad_accum;   /* micro-batches per step per DP rank; derived by
                         layout_finalize (a value set before asks for it
                         when global_batch is 0) */
    int seq_len;      /* tokens per sequence */
    int zero;         /* ZeRO stage 0..3 (3 = FSDP full shard) */
    bool distributed_optimizer; /* Megatron: optimizer state sharded over
                                   DP x CP, like ZeRO-1 */
    recompute_t recompute;
    unsigned recompute_modules; /* with selective recompute: the submodules
                                   the backward rebuilds (LAYOUT_RC_*,
                                   Megatron-Core's --recompute-modules);
                                   0 = its default, the attention core */
    int recompute_layers; /* with full recompute: only the first N layers of
                             each (virtual) pipeline stage are recomputed,
                             the rest keep their activations (Megatron's
                             --recompute-method block --recompute-num-layers
                             N); 0 = every layer */
    bool sequence_parallel;     /* Megatron SP: norms/dropout split over TP */
    bool sp_off;                /* sequence parallelism turned off by name
                                   (--no-sequence-parallel, a Bridge override
                                   model.sequence_parallel=false, a published
                                   row's "no SP"): a framework that needs it
                                   refuses the layout rather than imply it */
    bool sp_saves_gathered;     /* SP as PyTorch's DTensor runs it (torchtitan):
                                   the column-parallel GEMMs' inputs (QKV,
                                   first MLP) are kept for the backward as
                                   all-gathered, whole; Megatron keeps the
                                   shard and gathers again in the backward */
    precision_t precision;
    schedule_t schedule;
    bool flash_attention; /* fused attention: no s x s scores kept */
    int grad_bytes;       /* bytes per gradient element: 2, or 4 for fp32
                             main grads (Megatron's default) */
    int first_stage_layers; /* uneven pipeline split: layers on the first
                               (virtual) stage, 0 = even split;
                               LAYOUT_STAGE_EMPTY: none (the stage holds
                               only the embedding, as Megatron's
                               --account-for-embedding-in-pipeline-split
                               leaves it when the chunks hold one layer
                               each) */
    int last_stage_layers;  /* likewise for the last (virtual) stage;
                               LAYOUT_STAGE_EMPTY: none (the stage holds
                               only the loss, or the MTP modules and the
                               loss, as Megatron-Bridge's DeepSeek-V3
                               layout "Et|(tt|)*30mL") */
    int n_gpus;             /* tp * pp * cp * dp */
    int offload;            /* LAYOUT_OFFLOAD_* bits; 0 = everything on the GPU */
    bool offload_nvme;      /* offloaded optimizer state / parameters go on to the
                               node's NVMe (ZeRO-Infinity) instead of CPU memory */
    double offload_fraction; /* share of the optimizer state offloaded (Megatron
                                --optimizer-offload-fraction); 0 = all of it */
    int offload_act_layers; /* blocks per pipeline rank whose activations are
                               offloaded; 0 = all but the last one */
    finetune_t ft;          /* pretraining, full fine-tuning, or LoRA/QLoRA
                               with a frozen base (models/finetune.h) */
} layout_t;

/* The sequence length a layout without one trains at: the model's
 * max_seq, capped at 8192. */
int layout_default_seq_len(const model_t *m);

/* Expert tensor parallel degree (etp, or tp when 0). */
int layout_etp(const layout_t *l);

/* Ranks holding the same routed experts, over which ZeRO and the
 * distributed optimizer shard them: TP x CP x DP / (EP x ETP). 1 before
 * the layout is finalized with a DP. */
double layout_expert_dp(const layout_t *l);

/* A single-GPU layout: every degree 1, micro-batch 1, global batch 1,
 * sequence from the model, no ZeRO, no recompute, bf16, 1F1B, flash
 * attention, 2-byte gradients. */
void layout_defaults(layout_t *l);

/* Derive dp and grad_accum for n_gpus and check l against m. seq_len 0
 * means "the model's max_seq, at most 8192"; global_batch 0 means
 * micro_batch x dp x grad_accum (grad_accum 0 counts as 1). Errors are
 * ERR_INPUT and name the flag to change. On error l may be partly
 * updated. */
int layout_finalize(layout_t *l, const model_t *m, int n_gpus, err_t *err);

/* Layers held by pipeline rank stage (all its chunks together). Assumes a
 * finalized layout. */
int layout_stage_layers(const layout_t *l, const model_t *m, int stage);

/* Layers of virtual stage vs that full recompute rebuilds: all of them, or
 * the first recompute_layers (0 without full recompute). */
int layout_chunk_recomputed(const layout_t *l, const model_t *m, int vs);

/* The same summed over the virtual stages of pipeline rank stage. */
int layout_stage_recomputed(const layout_t *l, const model_t *m, int stage);

/* The layers an uneven-split field (first_stage_layers, last_stage_layers)
 * puts on its stage: LAYOUT_STAGE_EMPTY is none; 0 (not set) is returned
 * as 0 too, so callers test the field itself for "set". */
int layout_split_layers(int stage_layers);

/* Layers of virtual stage vs (chunk c of rank s is virtual stage c*pp + s);
 * the uneven split sets the first and last virtual stages. */
int layout_chunk_layers(const layout_t *l, const model_t *m, int vs);

/* How a framework splits the layers over its pipeline's stages by
 * default. */
typedef enum {
    LAYOUT_SPLIT_MEGATRON = 0,  /* even; uneven only as the run's flags say
                                   (Megatron-LM --decoder-first/last-pipeline-
                                   num-layers, --account-for-embedding/loss-
                                   in-pipeline-split) */
    LAYOUT_SPLIT_EXTRA_MIDDLE,  /* layers / stages each, the remainder one
                                   apiece to the middle stages, the last the
                                   rest (torchtitan 2024) */
    LAYOUT_SPLIT_WEIGHTED,      /* the first and last stages count in_w and
                                   out_w layers for the embedding and the
                                   output head, the remainder one apiece to
                                   the first stages (torchtitan 2025 on) */
    LAYOUT_SPLIT_BALANCED,      /* the heaviest stage as light as it can be,
                                   ceil(layers / stages): the middle stages
                                   hold that many, the first and last share
                                   the rest (DeepSpeed's pipeline engine,
                                   which balances the transformer layers) */
    LAYOUT_SPLIT_BALANCED_EMBED /* the same over the layers and the two
                                   embeddings (the input one and the tied
                                   output one), each counted as a layer on
                                   the first and last stage (partition_method
                                   'type:transformer|embedding', BLOOM's):
                                   an end stage may hold its embedding alone */
} layout_split_rule_t;

/* Layers on each of n_stages (virtual) stages under rule (not MEGATRON),
 * into sizes[n_stages]; ERR_INPUT (naming `what`) when a stage would be
 * left without what it must hold. */
int layout_rule_stage_sizes(layout_split_rule_t rule, int n_layers, int n_stages, int in_w,
                            int out_w, int *sizes, const char *what, err_t *err);

/* "8/9/8/7": the layers of n stages for messages, "/..." where buf ends
 * before the list does. */
void layout_format_stage_sizes(const int *sizes, int n, char *buf, size_t cap);

/* Sets l's uneven split (first_stage_layers, last_stage_layers) from the
 * layers a framework puts on each of its n_stages = pp x vpp (virtual)
 * stages, sizes[] summing to n_layers. The simulator's middle stages hold
 * equal layers; where the framework's differ, every middle stage gets the
 * largest of them and the last stage what is left, which keeps the
 * largest stage and the total: what a pipeline's step time depends on
 * ((micro-batches - 1) x the slowest stage + the sum of the stages, for
 * the one-forward-one-backward schedules). *approximated says whether
 * that happened. A first or last stage without layers is
 * LAYOUT_STAGE_EMPTY. ERR_INPUT (naming `what`) when no such split exists:
 * sizes that do not sum to n_layers, or too few layers left for the last
 * stage. */
int layout_set_stage_sizes(layout_t *l, const int *sizes, int n_stages, int n_layers,
                           const char *what, bool *approximated, err_t *err);

/* Virtual stage of chunk `chunk` on pipeline rank `stage`: chunk x pp +
 * stage, except under DualPipeV, where the stages form a V (chunk 0 of rank
 * r is stage r, chunk 1 is stage 2pp - 1 - r: the first and the last stage,
 * embedding and loss, both live on rank 0). */
int layout_vstage(const layout_t *l, int stage, int chunk);

/* The pipeline rank and the chunk that hold virtual stage vs. */
int layout_vstage_rank(const layout_t *l, int vs);
int layout_vstage_chunk(const layout_t *l, int vs);

/* The rank holding the output head (the last virtual stage). */
int layout_head_rank(const layout_t *l);

/* Micro-batches whose activations pipeline rank stage holds at its peak,
 * in units of "all of this rank's layers for one micro-batch" (may be
 * fractional under the interleaved schedule). GPipe keeps all m; 1F1B keeps
 * min(p - stage, m); interleaved keeps min(m*v, 2(p-stage-1) + (v-1)p + 1)
 * chunks (Megatron's warm-up count plus one), i.e. p(1 + (p-1)/(pv)) on the
 * first stage when m is large (Korthikanti et al. 2022, sec. 4.2.3).
 * DualPipeV holds PP + 1 stages' worth on a device, PP counting the 2pp
 * stages (deepseek-ai/DualPipe README, "Activation Per Device"): (2pp + 1)
 * chunks, pp + 1/2 of this rank's two chunks, at most m. */
double layout_inflight_microbatches(const layout_t *l, int stage);

/* Names for the enums (stable, used in JSON and flags) and their parsers.
 * Parsers return ERR_INPUT listing the accepted names. */
const char *layout_schedule_name(schedule_t s);
const char *layout_recompute_name(recompute_t r);
const char *layout_precision_name(precision_t p);

/* Megatron-Bridge's mixed_precision recipe for p ("bf16_mixed",
 * "bf16_with_fp8_current_scaling_mixed", ...), NULL where Bridge has none:
 * the one table its overrides are written (reports/launch) and read
 * (inputs/bridge) with. */
const char *layout_bridge_precision(precision_t p);
int layout_parse_schedule(const char *text, schedule_t *out, err_t *err);
int layout_parse_recompute(const char *text, recompute_t *out, err_t *err);
int layout_parse_precision(const char *text, precision_t *out, err_t *err);

/* Megatron's module names ("core_attn", "layernorm", "mlp", "moe_act",
 * "moe", "mla_up_proj", "shared_experts") or the brief ones tables print
 * (layout_recompute_modules_name: "attn", "norm", "mlp", "act", "moe",
 * "up", "shared"), in any case, separated by commas, spaces or written as a
 * Python list ("['core_attn', 'mlp']") into a LAYOUT_RC_* mask; ERR_INPUT
 * naming flag and the unknown name. */
int layout_parse_recompute_modules(const char *text, const char *flag, unsigned *out, err_t *err);

/* The LAYOUT_RC_* bit of one module word of n characters (a Megatron name
 * or a brief one, as above, in any case); 0 when it names none. */
unsigned layout_rc_module_word(const char *word, size_t n);

/* The mask's names joined by sep, in the order above ("" for 0): Megatron's
 * ("layernorm,mlp"), or brief ones for tables ("norm,mlp": attn, norm,
 * mlp, act, moe, up, shared). Returns the length the whole list takes, as
 * snprintf does: cap or more means buf holds only the names that fit. All
 * seven of Megatron's names with one-character separators take 62. */
int layout_recompute_modules_name(unsigned modules, const char *sep, bool brief, char *buf,
                                  int cap);

/* The submodules l's selective recompute rebuilds (the attention core when
 * none are named); 0 without selective recompute. */
unsigned layout_rc_modules(const layout_t *l);

/* Parse an offload list "optimizer,params,activations" (also "none",
 * "nvme" for ZeRO-Infinity's NVMe tier, "activations=N" for N blocks per
 * stage) into l's offload fields. ERR_INPUT naming --offload. */
int layout_parse_offload(const char *text, layout_t *l, err_t *err);

/* "optimizer,params" (what l offloads; "" when nothing). */
void layout_offload_name(const layout_t *l, char *buf, int cap);

/* Blocks of a stage with `layers` blocks whose activations are offloaded. */
int layout_offload_act_layers(const layout_t *l, int layers);

/* Bytes per element of weights and activations for a precision (fp8 keeps
 * bf16 weights and activations; only its GEMMs run in fp8). */
int layout_weight_bytes(precision_t p);

/* One-line description: "TP8 PP4 DP8 CP1 mb1 gb512 (x4) 1f1b ZeRO-0 recompute=selective SP bf16",
 * then offload and fine-tuning where set (" offload=optimizer", " lora r16 base16"). */
void layout_describe(const layout_t *l, char *buf, int cap);

#endif
