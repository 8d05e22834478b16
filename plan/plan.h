/* plan: search the layouts a framework runs for one GPU count, and climb
 * the scale ladder (plan/ladder.h).
 *
 * The space of one framework is what its preset says it runs
 * (frameworks/framework.h fw_caps_t), within the user's constraints:
 *
 *   TP    every degree that divides the GPU count, the attention heads
 *         and the key/value heads, up to twice the GPUs of a node (an
 *         NVLink domain of 72 on NVL72 racks);
 *   CP    every degree the sequence splits into (2 x CP chunks), while
 *         each rank keeps at least 1024 tokens (any degree when the user
 *         names it);
 *   PP    every degree that divides what is left, layers split evenly or,
 *         where the framework allows it, with lighter first and last
 *         stages; the interleaved schedule with every number of virtual
 *         stages that divides the layers (or the layers plus the
 *         embedding and the loss, counted as one layer each, down to one
 *         layer a chunk with the embedding and the loss alone on theirs,
 *         as Llama 3 405B was trained);
 *   micro-batch 1..16 sequences, the global batch the largest in the
 *         requested range that micro-batch x DP (x PP when interleaved)
 *         divides;
 *   sequence length seq_len, or from seq_len to seq_len_max its ends and
 *         the powers of two between (plan_seq_lens), each with its own
 *         global batch range (plan_batch_range);
 *   precision the space's, or each of precision_mask's that the framework
 *         trains in (a framework in a precision is searched as one entry
 *         of per_framework);
 *   ZeRO  every stage the framework runs (1 is the distributed
 *         optimizer), with pipeline stages only where it allows;
 *   recompute the framework's modes, each searched only where the
 *         lighter ones do not fit (recompute never speeds a step up); where
 *         the framework has Megatron-Core's recompute modules, selective
 *         recompute of the attention core, then (before op-level or full
 *         recompute) of more modules: a dense model's MLP; an MoE or MLA
 *         model's separate norms, expert activations, MLA up-projections and
 *         shared experts, then its whole MoE blocks (and dense MLPs) -
 *         or only the modules rc_modules names;
 *   schedule 1F1B, interleaved and GPipe as the framework runs them;
 *   EP    for mixture-of-experts models, every degree that divides the
 *         routed experts and the stage's TP x CP x DP ranks, experts kept
 *         whole (expert TP 1) where the framework has expert parallelism
 *         (else EP 1, experts split over TP);
 *   dispatcher for mixture-of-experts models under a framework with
 *         expert parallelism, each MoE token dispatcher it offers (DeepEP
 *         only on GPUs it runs on), unless the user or the run's file
 *         names one;
 *   CUDA graphs where the framework prices its host's issue costs, the
 *         scopes its recipe captures, none, and attn+moe_router+
 *         moe_preprocess (what a dropless run can capture), unless the
 *         user or the run's file names them. The dispatcher and scopes
 *         change no memory the model counts: each framework's
 *         PLAN_VARIANT_TRIES kept layouts of the highest bound are priced
 *         once per pair (plan_moe_pick_t);
 *   sequence parallelism whenever TP > 1 and the framework has it;
 *   offload (allow_offload) the optimizer state, and with ZeRO-3 the
 *         parameters, to host memory: tried only for sharded layouts whose
 *         every recompute mode is over GPU memory, and kept when the
 *         host's memory holds it.
 *
 * Every candidate is checked with the simulator's memory model; those that
 * fit are ranked by a lower bound on their step time and simulated in that
 * order (branch and bound). The result - best layout, runners-up, the
 * reference layout's rank among every candidate - does not depend on the
 * number of threads. With no framework named, every preset marked
 * plannable is searched and the best of each is reported.
 */
#ifndef SCALEPLAN_PLAN_PLAN_H
#define SCALEPLAN_PLAN_PLAN_H

#include <stdbool.h>

#include "frameworks/framework.h"
#include "sim/step.h"

/* The largest global batch (sequences per step) the planner searches. */
#define PLAN_MAX_GLOBAL_BATCH (1 << 24)
/* Frameworks one search can compare. */
#define PLAN_MAX_FRAMEWORKS 16 /* presets x precisions searched */
/* Their MoE dispatcher and CUDA graph variants, all together. */
#define PLAN_MAX_VARIANTS 96
/* Layouts of each framework priced under its variants: those of the
 * highest bounds (an upper bound on tokens/s under the framework's own
 * dispatcher and scopes), which keeps a MoE plan's search within a small
 * multiple of one framework's. */
#define PLAN_VARIANT_TRIES 256
/* Sequence lengths one search takes (a range's ends and powers of two). */
#define PLAN_MAX_SEQ_LENS 32
/* Runners-up kept. */
#define PLAN_TOP 5

typedef enum {
    PLAN_TIME = 0,         /* fastest step (default) */
    PLAN_COST,             /* cheapest run */
    PLAN_TOKENS_PER_DOLLAR /* most tokens per dollar (same ranking as cost
                              for a fixed token count) */
} plan_objective_t;

/* An inclusive range of a layout dimension; {0, 0} leaves it free. */
typedef struct {
    int lo, hi;
} plan_range_t;

typedef struct {
    int global_batch_min, global_batch_max; /* sequences; equal = fixed */
    int seq_len;
    int seq_len_max; /* above seq_len: sequence lengths from seq_len to this
                        are searched (both ends and the powers of two
                        between); 0 = seq_len alone */
    double batch_tokens_min, batch_tokens_max; /* with a length range and
                        above 0: the global batch in tokens (each length's
                        in sequences rounded); else global_batch_min/max
                        sequences at every length */
    const char *framework; /* preset; NULL = every plannable preset */
    precision_t precision; /* of every candidate ("fp8": the framework's recipe) */
    unsigned precision_mask; /* bit 1 << precision_t: the precisions to
                                search, each framework in each it trains in
                                (PRECISION_FP8: its recipe); 0 = precision */
    plan_range_t tp, pp, cp, vpp, micro_batch, zero; /* constraints */
    plan_range_t ep;         /* expert parallel degrees (MoE models) */
    plan_range_t etp;        /* expert tensor parallel degrees searched with
                                EP > 1: 1 and the layout's TP (Megatron-Core's
                                two settings) within this range; free = both */
    unsigned recompute_mask; /* bit 1 << recompute_t; 0 = the framework's */
    unsigned rc_modules;     /* selective recompute of these modules only
                                (LAYOUT_RC_*); 0 = the ladder above */
    unsigned schedule_mask;  /* bit 1 << schedule_t; 0 = the framework's */
    bool allow_offload;      /* also offload the optimizer (and ZeRO-3's
                                parameters) to host memory where it is sharded */
    finetune_t ft;           /* every candidate's fine-tuning (LoRA, QLoRA:
                                a frozen base); default pretraining */
    /* The user's simulation switches (overlap, compile, buckets, ...),
     * applied over every searched framework's options after its preset's;
     * NULL = the presets' alone. Called from the planner's threads: it
     * must only read ctx. */
    int (*adjust_options)(sim_options_t *o, const void *ctx, err_t *err);
    const void *adjust_ctx;
    bool keep_moe_options; /* search no dispatcher or CUDA graph scope: every
                              candidate runs the options as adjusted (the
                              search for one scenario's run) */
} plan_space_t;

void plan_space_default(plan_space_t *s);

/* An adjust_options for a search of one scenario's framework: every
 * candidate runs with *ctx (that scenario's sim_options_t: its preset's
 * with the user's switches and input files). */
int plan_use_options(sim_options_t *o, const void *ctx, err_t *err);

/* The MoE token dispatcher and CUDA graph scopes a searched layout ran
 * with, where the search chose them (searched); else the framework's own
 * options stand. */
typedef struct {
    bool searched;           /* more than one dispatcher or scope set tried */
    bool dispatchers_searched;
    bool scopes_searched;
    moe_dispatch_t dispatcher;
    unsigned graph_scopes;   /* HOST_GRAPH_* */
} plan_moe_pick_t;

/* The options a searched candidate of preset `framework` ran with: the
 * preset's, its recipe for the GPU and model (options.moe.by_gpu), the
 * user's switches (s->adjust_options), precision's costs and, when pick
 * is not NULL and searched, the dispatcher and scopes the search chose.
 * Whatever re-simulates or writes a planned layout (the rung's timeline,
 * --emit, codecs) takes them from here, so it runs what the plan priced. */
int plan_options(const plan_space_t *s, const char *framework, const char *gpu,
                 const char *model, precision_t precision, const plan_moe_pick_t *pick,
                 sim_options_t *o, err_t *err);

/* "deepep", "deepep graphs=attn+moe_router+moe_preprocess", "alltoall graphs=none"
 * (what the search chose, each part only where it was searched); "" when
 * nothing was. */
void plan_moe_pick_name(const plan_moe_pick_t *p, char *buf, int cap);

/* Why candidates were dropped. */
typedef enum {
    PRUNE_INVALID = 0, /* the framework would refuse it */
    PRUNE_MEMORY,      /* does not fit in GPU memory */
    PRUNE_BOUND,       /* provably slower than the runners-up */
    PRUNE_SIZE,        /* fits, but too many micro-batches to simulate
                          (sim_check_size) */
    PRUNE_REASON_COUNT
} plan_prune_t;

/* The best layout one framework runs. */
typedef struct {
    char name[FW_NAME_MAX];
    precision_t precision; /* it was searched in */
    bool found;
    long candidates;       /* layouts of this framework enumerated */
    double tokens_per_s;   /* of its best layout */
    layout_t layout;
    plan_moe_pick_t moe;   /* its dispatcher and CUDA graph scopes */
} plan_fw_best_t;

typedef struct {
    bool found;
    char framework[FW_NAME_MAX]; /* that runs the best layout */
    plan_moe_pick_t moe;     /* with this dispatcher and CUDA graph scopes */
    layout_t layout;         /* the best layout */
    sim_result_t result;     /* its simulated step */
    long candidates;         /* layouts enumerated */
    long simulated;          /* layouts whose bound needed a simulation to
                                settle the best PLAN_TOP (the same with any
                                number of threads) */
    long pruned[PRUNE_REASON_COUNT];
    int rank_of_reference;   /* rank of the reference layout among every
                                candidate of its framework that fits (1 =
                                best), 0 if none or if it does not fit */
    bool reference_fits;     /* the reference fits in GPU memory */
    long reference_of;       /* ... out of this many */
    double reference_step_s; /* its step time */
    double elapsed_s;
    int n_ranked;            /* top layouts kept, best first */
    layout_t top_layout[PLAN_TOP];
    double top_step_s[PLAN_TOP];
    char top_framework[PLAN_TOP][FW_NAME_MAX];
    int n_frameworks;        /* searched */
    plan_fw_best_t per_framework[PLAN_MAX_FRAMEWORKS];
    double smallest_memory_gib; /* least memory any layout needs (when none fits) */
    layout_t smallest_memory_layout;
    char constraint_note[240];  /* when nothing is left: the constraint that
                                   emptied the space and why */
} plan_search_t;

/* Search every layout of m on cluster c (its n_gpus) with profile p.
 * reference, when not NULL, is a layout (of space->framework, or the
 * first framework searched) whose rank among every candidate that fits is
 * reported. ERR_INPUT when the space is empty: no batch size divides, a
 * named framework cannot train in the precision, or the constraints
 * exclude every layout (the message names the constraint). */
int plan_search(const model_t *m, const cluster_t *c, const profile_t *p,
                const plan_space_t *space, const layout_t *reference, plan_search_t *out,
                err_t *err);

/* Tokens per second that no simulated step of in's layout exceeds, from its
 * per-layer costs c (sim_costs): the busiest pipeline stage's work and,
 * under one-direction schedules of a dense model, each stage's work plus
 * the pipeline's fill and drain. The search simulates only candidates whose
 * bound beats the k-th best found, so a bound below the simulated
 * throughput would drop layouts wrongly (a test holds it above). */
double plan_tps_bound(const sim_input_t *in, const step_costs_t *c);

/* Parse a constraint "8" or "1..8" for flag (ERR_INPUT naming it). */
int plan_parse_range(const char *text, const char *flag, int max, plan_range_t *out, err_t *err);

/* Parse a comma-separated list of recompute modes or schedules into a
 * mask for flag. */
int plan_parse_recompute_set(const char *text, unsigned *mask, err_t *err);
int plan_parse_schedule_set(const char *text, unsigned *mask, err_t *err);
/* The sequence lengths s searches, ascending (at most cap); how many. */
int plan_seq_lens(const plan_space_t *s, int *out, int cap);

/* The global batch range, in sequences, s gives sequences of seq tokens. */
void plan_batch_range(const plan_space_t *s, int seq, int *lo, int *hi);

/* "bf16,fp8" into a mask of 1 << precision_t for plan_space_t.precision_mask;
 * ERR_INPUT naming --precision. */
int plan_parse_precision_set(const char *text, unsigned *mask, err_t *err);

/* The entry of all[0..n) for framework name in precision; -1 when none
 * (the recommended one: the search's framework and its layout's precision). */
int plan_fw_index(const plan_fw_best_t *all, int n, const char *name, precision_t precision);

/* "nemo-25.04", or "nemo-25.04 fp8" when the n frameworks searched span more
 * than one precision, and the dispatcher and scopes the search chose for its
 * best layout ("megatron-core deepep"): how output names f. */
void plan_fw_label(const plan_fw_best_t *f, const plan_fw_best_t *all, int n, char *buf,
                   int cap);

#endif
