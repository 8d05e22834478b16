/* framework: what each training framework and version runs (catalog data).
 *
 * A preset (sim/catalog/frameworks.json) says what a framework does by
 * default - which communication it overlaps with what, its attention
 * kernel, the dtypes of its gradient reduction and parameter gathers, its
 * ZeRO/FSDP implementation, how it forms pipeline micro-batches, what its
 * recipes switch on - and what it can run at all (ZeRO stages, FSDP with
 * pipelines, context parallelism, schedules, recompute modes,
 * precisions). The simulator reads these fields; nothing in sim/ tests a
 * framework's name. The scalar options are rows of frameworks/options.def. Every field carries its source in the JSON.
 *
 * Presets are found by name or alias ("megatron-core", "nemo-25.02",
 * "torchtitan", "deepspeed", ...); published runs' framework columns are
 * matched through each preset's "match" patterns.
 */
#ifndef SCALEPLAN_FRAMEWORKS_FRAMEWORK_H
#define SCALEPLAN_FRAMEWORKS_FRAMEWORK_H

#include <stdbool.h>

#include "common/catalog.h"
#include "common/error.h"
#include "frameworks/options.h"
#include "models/layout.h"
#include "models/model.h"

#define FW_NAME_MAX 32

/* How a framework turns its batch settings into pipeline micro-batches. */
typedef enum {
    FW_BATCH_MICRO = 0,    /* "micro_batch": a micro-batch size; gradient
                              accumulation fills the global batch (Megatron,
                              DeepSpeed, FSDP) */
    FW_BATCH_WHOLE_SHARE,  /* "whole_share": no accumulation, each DP rank
                              runs its share of the batch at once (2020) */
    FW_BATCH_LOCAL_SPLIT_PP, /* "local_split_pp": a local batch per DP rank
                              split into PP micro-batches (torchtitan 2024) */
    FW_BATCH_LOCAL_SIZE1   /* "local_size1": a local batch per DP rank in
                              micro-batches of one sequence (torchtitan 2025) */
} fw_batch_rule_t;

/* What a framework can run at all ("supports" in the catalog). */
typedef struct {
    bool zero[4];          /* ZeRO stages: 0 none, 1 distributed optimizer /
                              ZeRO-1, 2 gradients sharded, 3 FSDP */
    bool tp, sp, pp;       /* tensor, sequence (with TP), pipeline parallelism */
    bool zero3_with_pp;    /* FSDP/ZeRO-3 together with pipeline stages */
    bool uneven_split;     /* first/last stages with other layer counts */
    bool accumulation;     /* gradient accumulation over micro-batches without
                              pipeline stages ("grad_accumulation", default
                              true) */
    bool cp[3];            /* context parallelism by cp_comm_t; none = no CP */
    bool ep;               /* expert parallelism for mixture-of-experts models */
    bool hybrid;           /* runs hybrid models (Mamba-2 / linear-attention
                              blocks beside attention: Megatron-Core's
                              megatron/core/ssm); "hybrid", default false */
    bool dispatchers[3];   /* the MoE token dispatchers it offers, by
                              moe_dispatch_t ("moe_dispatchers", required with ep) */
    bool sp_with_moe_tp;   /* runs mixture-of-experts blocks with TP only
                              with sequence parallelism (Megatron-Core's MoE
                              layer refuses to train without it) */
    bool schedule[SCHEDULE_COUNT];
    bool recompute[RECOMPUTE_COUNT];
    bool recompute_block;  /* full recompute of only the first N layers of
                              each chunk (Megatron --recompute-method block) */
    bool recompute_modules; /* selective recompute of named submodules
                               (Megatron-Core's --recompute-modules) */
    unsigned precisions;   /* bit 1 << precision_t */
} fw_caps_t;

/* MoE settings a framework's recipes choose by GPU (Megatron-Bridge's
 * performance configs run DeepEP and the all-to-all overlap on H100 only,
 * for example): they replace the preset's options.moe on these GPUs. */
#define FW_MOE_BY_GPU_MAX 16
typedef struct {
    char gpus[160];          /* catalog GPU names, comma separated */
    char models[240];        /* catalog model names the entry is a recipe of,
                                comma separated ("": every model); an entry
                                naming the run's model wins over one that
                                names none (a framework's per-model recipes) */
    moe_dispatch_t dispatcher;
    bool a2a_overlap;
    bool shared_overlap;
    unsigned graph_scopes;   /* the recipe's CUDA graph scopes on these GPUs ... */
    bool graph_scopes_set;   /* ... when it names them (else the preset's host's) */
    double capacity_factor;  /* the recipe's token drop: tokens an expert takes
                                over the mean (0: dropless, the preset's) */
    bool pad_to_capacity;    /* ... every expert padded to that capacity */
} fw_moe_gpu_t;

typedef struct {
    char name[FW_NAME_MAX];
    char display[96];
    char source[800];     /* where the preset's figures come from */
    sim_options_t opt;    /* the simulator options it runs with */
    /* layout defaults it imposes (before the user's flags) */
    bool flash_attention;
    bool sp_saves_gathered;    /* layout_t sp_saves_gathered */
    int grad_bytes;            /* main-gradient element size (bf16, fp8 and
                                  fp4 training; fp32 training keeps 4) */
    int fp16_grad_bytes;       /* the same when the run trains in fp16 */
    bool distributed_optimizer; /* Megatron distributed optimizer by default */
    bool sp_with_tp;           /* sequence parallel whenever TP > 1 */
    int zero_min;              /* smallest ZeRO stage it runs (3: FSDP-only) */
    recompute_t recompute;     /* default activation recompute */
    fw_batch_rule_t batch;     /* what a run's stated batch size means */
    double gpt_dropout;        /* dropout of GPT models built from a run's columns */
    precision_t fp8_recipe;    /* what a plain "fp8" means in this framework */
    layout_split_rule_t pp_split; /* how its pipeline stages split the layers
                                     when a run does not say */
    fw_caps_t caps;            /* what it can run */
    bool plannable;            /* searched by plan when no framework is named
                                  (the current version of each framework) */
    char assumed[96];          /* sections whose source says ASSUMED
                                  ("options, tp_overlap"), "" if none */
    char family[32];           /* a versioned framework's family ("NeMo"), the
                                  word its runs' framework column carries;
                                  "" for an unversioned preset */
    int released_month;        /* its release, year x 12 + month - 1; 0 if none */
    fw_moe_gpu_t moe_by_gpu[FW_MOE_BY_GPU_MAX]; /* options.moe.by_gpu */
    int n_moe_by_gpu;
    char matched_by[320];      /* fw_match: how a column naming no preset's
                                  pattern was mapped to this one; "" else */
} fw_preset_t;

/* Load the preset called name (or one of its aliases); NULL or "" loads the
 * default (megatron-core). ERR_INPUT names --framework and lists the
 * presets. */
int fw_load(const char *name, fw_preset_t *out, err_t *err);

/* The same, looked up in the parsed catalog cat (NULL: parse it now). */
int fw_load_in(catalog_t *cat, const char *name, fw_preset_t *out, err_t *err);

/* The preset whose "match" patterns fit a published run's framework column
 * (and source title). When none does but the column names a versioned
 * family ("NeMo 25.07", "Megatron-Bridge / NeMo 26.02", "torchtitan" with a
 * month in the column or the source title), the family's latest preset
 * released no later than that version (the oldest when it predates them
 * all; the latest when no version is given), said in out->matched_by.
 * ERR_INPUT when nothing fits; ERR_RUNTIME when the preset that fits
 * cannot be read (a broken catalog: never a reason to try another). */
int fw_match(const char *framework_text, const char *source_text, fw_preset_t *out, err_t *err);

/* The same, looked up in the parsed catalog cat (NULL: parse it now). */
int fw_match_in(catalog_t *cat, const char *framework_text, const char *source_text,
                fw_preset_t *out, err_t *err);

/* Apply the preset's defaults: options into *o (replaced), layout defaults
 * into *l (fields the preset sets; the rest untouched). */
void fw_apply(const fw_preset_t *p, sim_options_t *o, layout_t *l);

/* Bytes of each main-gradient element the framework keeps and reduces when
 * training in precision: fp32 training, 4; fp16, the preset's
 * fp16_grad_bytes (Megatron accumulates fp16 runs' gradients in fp16 unless
 * told otherwise, bf16 runs' in fp32); else its grad_bytes. */
int fw_grad_bytes(const fw_preset_t *p, precision_t precision);

/* The preset's MoE settings for runs of model (a catalog model name, or
 * NULL) on gpu (a catalog GPU name; NULL or one the preset does not list:
 * options.moe as it is), after fw_apply: an options.moe.by_gpu entry that
 * names the model (the framework's recipe for it) before one that names no
 * model. */
void fw_apply_gpu(const fw_preset_t *p, const char *gpu, const char *model, sim_options_t *o);

/* Whether the preset can run layout l (finalized or not) with options o:
 * ERR_INPUT naming the flag and what the framework runs instead
 * ("--cp: megatron-2021 has no context parallelism"). */
int fw_check_layout(const fw_preset_t *p, const layout_t *l, const sim_options_t *o, err_t *err);

/* Whether preset p runs model m at all: a hybrid model (models/hybrid.h)
 * needs supports.hybrid. ERR_INPUT naming --framework otherwise. */
int fw_check_model(const fw_preset_t *p, const model_t *m, err_t *err);

/* The plannable presets without supports.hybrid, comma separated into buf
 * (empty when none): what plan skips for a hybrid model. */
int fw_plannable_without_hybrid(char *buf, size_t cap, err_t *err);

/* Sequence parallelism where the preset needs it: a mixture-of-experts
 * model m with TP > 1 under a preset that runs MoE blocks with TP only with
 * SP (caps.sp_with_moe_tp). Without it, l gets it (*implied true: the
 * caller says so) unless l turns it off by name (l->sp_off): ERR_INPUT
 * naming --sequence-parallel, l unchanged. Otherwise nothing. */
int fw_require_sp(const fw_preset_t *p, const model_t *m, layout_t *l, bool *implied,
                  err_t *err);

/* What the preset runs, in one line: "ZeRO 0/1/3, TP+SP, PP (uneven),
 * CP ring/allgather/a2a; 1f1b/interleaved; recompute none/selective/full". */
void fw_describe_caps(const fw_caps_t *c, char *buf, size_t cap);

/* Whether the framework runs context parallelism of any kind. */
bool fw_caps_cp(const fw_caps_t *c);

/* Whether it splits or shards the model at all (TP, PP or a ZeRO stage):
 * a framework that does neither keeps the whole model on every GPU, so
 * more GPUs never make it fit. */
bool fw_caps_shards(const fw_caps_t *c);

/* The catalog's preset names in file order; free with catalog_free_names. */
int fw_names(char ***names, size_t *count, err_t *err);

/* The same, read from the parsed catalog cat (NULL: parse it now). */
int fw_names_in(catalog_t *cat, char ***names, size_t *count, err_t *err);

#endif
