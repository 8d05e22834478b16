/* ladder: the scale ladder - the best plan at each doubling of the GPU
 * count, what each rung costs in time and money, what grew as it scaled,
 * and where adding GPUs stops paying.
 *
 * For every rung the planner searches every layout (plan/plan.h); the best
 * one's step feeds a reliability simulation (failures, checkpoints,
 * restarts) for time-to-train P50/P90 and interruptions, and the budget.
 * Scaling efficiency is the per-GPU throughput against the first rung that
 * fits. The best rung follows the objective under the deadline and budget;
 * when none meets them, the nearest one is reported with what would have
 * to change.
 */
#ifndef SCALEPLAN_PLAN_LADDER_H
#define SCALEPLAN_PLAN_LADDER_H

#include <stdbool.h>

#include "plan/plan.h"
#include "run/reliability.h"
#include "sim/scenario.h"
#include "topologies/price.h"

#define LADDER_MAX_RUNGS 24
#define LADDER_ALTERNATIVES 4   /* runners-up kept per rung */
#define LADDER_SWEEP_POINTS 25  /* checkpoint intervals swept for the detail */

/* A runner-up layout at a rung, with its own time to train and cost. */
typedef struct {
    layout_t layout;
    char framework[FW_NAME_MAX];
    double step_time_s;
    double days_p10, days_p50, days_p90;
    double cost_usd;
} rung_alt_t;

typedef struct {
    int gpus;
    bool feasible;          /* some layout fits */
    char why_not[256];      /* when not */
    double leanest_gib;     /* memory the leanest layout needs per GPU */
    layout_t layout;
    char framework[FW_NAME_MAX]; /* that runs it */
    plan_moe_pick_t moe;    /* with this dispatcher and CUDA graph scopes */
    sim_result_t step;
    double tokens_per_s;
    double scaling_efficiency; /* per-GPU throughput against the best per-GPU
                                  throughput of any smaller rung (1 on the
                                  first rung that fits) */
    int scaling_base;       /* GPUs of that rung */
    double marginal;        /* speed-up per added GPU against the previous rung */
    bool stops_paying;      /* marginal below the threshold */
    const char *main_loss;  /* what grew: "pipeline bubble", ... */
    const char *main_loss_key; /* breakdown key or "failures" */
    double main_loss_share; /* its share of the time at this rung */
    double days_p10, days_p50, days_p90, ideal_days, goodput, interruptions;
    double gpu_hours, cost_usd, cost_per_day_usd;
    double usd_per_gpu_hour;  /* the rung's price */
    double checkpoint_interval_s; /* compute between checkpoints at this rung */
    bool interval_best;       /* the best for its storage and failure rates */
    char price_provider[32];  /* whose quote, or "given" */
    long candidates, simulated;
    long pruned[PRUNE_REASON_COUNT];
    double search_s;
    int n_alt;
    rung_alt_t alt[LADDER_ALTERNATIVES]; /* next-fastest layouts, fastest first */
    int n_frameworks;       /* searched at this rung, with each one's best */
    plan_fw_best_t frameworks[PLAN_MAX_FRAMEWORKS];
} rung_t;

typedef struct {
    const model_t *model;
    const cluster_t *base;   /* GPU, fabrics and node shape; n_gpus ignored */
    const profile_t *profile;
    const failure_set_t *failures;
    double tokens;           /* to train */
    double usd_per_gpu_hour; /* every rung's price unless price_gpu is set */
    /* Per-rung prices: with price_gpu set, each rung is priced at the
     * catalog quote for its own job size (the provider's, or the default
     * for that size), at price_end; a size without a quote keeps
     * usd_per_gpu_hour. */
    char price_gpu[32];
    char price_provider[32]; /* "" = the default quote for each size */
    price_end_t price_end;
    plan_space_t space;
    plan_objective_t objective;
    double deadline_s;       /* 0 = none */
    double budget_usd;       /* 0 = none */
    double min_marginal;     /* stop-paying threshold (default 0.5) */
    int min_gpus, max_gpus;  /* rungs: min, 2 min, ... <= max */
    /* reliability: the template's cluster-dependent fields are refilled
     * per rung unless the user fixed them */
    rel_config_t rel;        /* checkpoint interval, mode, restart times, trials, seed */
    double ckpt_bytes;
    double storage_bps;      /* 0 = the cluster's default */
    bool progress;
} ladder_input_t;

typedef struct {
    int n;
    rung_t rung[LADDER_MAX_RUNGS];
    int best;                /* index of the recommended rung, -1 if none fits */
    bool meets_constraints;  /* best meets the deadline and budget */
    int first_feasible;      /* index, -1 if none */
    int stops_paying_at;     /* first rung whose marginal is below the threshold, -1 */
    long layouts;            /* enumerated over all rungs */
    long simulated;
    double elapsed_s;
} ladder_t;

/* The planning defaults, every one of which the plan command prints or
 * lets the user change: time objective, rungs 8 to 4096 GPUs, a doubling
 * stops paying below half of linear speed-up, the default search space
 * with sequences of min(the model's length, 8192) tokens and a global batch
 * of SCENARIO_DEFAULT_BATCH_TOKENS, 300 Monte Carlo trials per rung (enough
 * for P50/P90) and 2% spare nodes per rung. Leaves model, base, profile,
 * failures, tokens, price and the reliability template to the caller. */
void ladder_input_defaults(ladder_input_t *in, const model_t *m);

/* Tokens to plan for when the user names none: 20 per parameter, the
 * compute-optimal ratio of Hoffmann et al. 2022 (Chinchilla), counted over
 * all parameters (an assumption the plan command prints). */
#define LADDER_TOKENS_PER_PARAM 20.0
double ladder_default_tokens(const model_t *m);


/* Give s the fastest layout of its model that fits on its cluster, as the
 * planner finds it, when the user named none: the default search space for
 * s's framework and sequence length, with global_batch sequences (0 = the
 * default tokens per step). On success s->layout is the layout and *out
 * the search with its simulated step; ERR_INPUT when nothing fits (naming
 * the memory the leanest layout needs). */
int ladder_fastest_layout(scenario_t *s, int global_batch, plan_search_t *out, err_t *err);

int plan_ladder(const ladder_input_t *in, ladder_t *out, err_t *err);

/* What the report shows of one rung beyond the ladder row: goodput against
 * the checkpoint interval (swept with common random numbers) next to the
 * Young/Daly interval, and the simulated timeline of one step. */
typedef struct {
    int n_sweep;
    double interval_s[LADDER_SWEEP_POINTS], goodput[LADDER_SWEEP_POINTS];
    double optimal_interval_s, young_daly_interval_s, checkpoint_interval_s;
    sim_event_t *timeline; /* heap; ladder_rung_detail_free */
    int n_events;
} rung_detail_t;

/* Fill d for a feasible rung r of a ladder run with in. */
int ladder_rung_detail(const ladder_input_t *in, const rung_t *r, rung_detail_t *d, err_t *err);
void ladder_rung_detail_free(rung_detail_t *d);

/* Two or three plain sentences: what to reserve and why, what to measure at
 * each doubling (expected step time and tokens/s, and the tolerance beyond
 * which something is wrong), and the first thing to fix if it falls short.
 * Writes into buf (cap bytes). */
void plan_recommend(const ladder_input_t *in, const ladder_t *l, char *buf, size_t cap);

/* The tolerance of the measure-before-you-scale check (10%). */
#define LADDER_TOLERANCE 0.10

#endif
