/* plan: search every valid parallel layout for a GPU count, and climb the
 * scale ladder.
 *
 * plan_search enumerates, for one GPU count, every combination Megatron-LM
 * would accept: TP up to and across a node, CP, PP dividing the layers (or
 * an uneven split that balances them), virtual stages, micro-batch sizes,
 * recompute none/selective/full, sequence parallel, ZeRO-0 / distributed
 * optimizer / ZeRO-3, the pipeline schedule and, when asked, offloading the
 * optimizer (and ZeRO-3's parameters) to host memory. Layouts that do not
 * fit in GPU (or host) memory are pruned before simulation and counted by reason; the others are
 * simulated, with branch-and-bound on a lower bound of the step time so
 * the search stays exhaustive without simulating hopeless layouts. The
 * search runs on every core (OpenMP) and its result does not depend on the
 * number of threads.
 */
#ifndef SCALEPLAN_SIM_PLAN_H
#define SCALEPLAN_SIM_PLAN_H

#include <stdbool.h>

#include "sim/step.h"

/* The largest global batch (sequences per step) the planner searches. */
#define PLAN_MAX_GLOBAL_BATCH (1 << 24)

typedef enum {
    PLAN_TIME = 0,         /* fastest step (default) */
    PLAN_COST,             /* cheapest run */
    PLAN_TOKENS_PER_DOLLAR /* most tokens per dollar (same ranking as cost
                              for a fixed token count) */
} plan_objective_t;

typedef struct {
    int global_batch_min, global_batch_max; /* sequences; equal = fixed */
    int seq_len;
    bool allow_cp, allow_fsdp, allow_gpipe;
    bool allow_sp, allow_selective; /* features of Megatron-LM since 2022 */
    bool allow_offload;   /* also try offloading the optimizer state (and, with
                             ZeRO-3, the parameters) to host memory */
    int max_tp;           /* 0 = 2 x GPUs per node */
    int max_vpp;          /* 0 = 8 */
    const char *framework; /* preset for sim options (NULL = megatron-core) */
    precision_t precision; /* training precision of every candidate */
} plan_space_t;

void plan_space_default(plan_space_t *s);

/* Why candidates were dropped. */
typedef enum {
    PRUNE_INVALID = 0, /* Megatron would refuse it */
    PRUNE_MEMORY,      /* does not fit in GPU memory */
    PRUNE_BOUND,       /* provably slower than the best found */
    PRUNE_SIZE,        /* fits, but too many micro-batches to simulate
                          (sim_check_size) */
    PRUNE_REASON_COUNT
} plan_prune_t;

typedef struct {
    bool found;
    layout_t layout;         /* the best layout */
    sim_result_t result;     /* its simulated step */
    long candidates;         /* layouts enumerated */
    long simulated;          /* layouts simulated event by event */
    long pruned[PRUNE_REASON_COUNT];
    int rank_of_reference;   /* rank of plan_search's reference layout
                                among simulated ones (1 = best), 0 if none */
    double reference_step_s; /* its step time */
    double elapsed_s;
    int n_ranked;            /* top layouts kept, best first */
    layout_t top_layout[5];
    double top_step_s[5];
    double smallest_memory_gib; /* least memory any layout needs (when none fits) */
    layout_t smallest_memory_layout;
} plan_search_t;

/* Search every layout of m on cluster c (its n_gpus) with profile p.
 * reference, when not NULL, is a layout whose rank among the simulated
 * candidates is reported (it is always simulated, even when pruned by the
 * bound). ERR_INPUT only for an empty space (e.g. no batch size divides). */
int plan_search(const model_t *m, const cluster_t *c, const profile_t *p,
                const plan_space_t *space, const layout_t *reference, plan_search_t *out,
                err_t *err);

#endif
