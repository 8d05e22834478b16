/* elastic: one job on a GPU count that changes (elastic or spot capacity):
 * for each count, the fastest layout whose global batch stays within a
 * band around the target, and what a run at that count takes in days and
 * money (the ladder's reliability model: failures, checkpoints, restarts
 * and, on spot capacity, preemptions); and the fewest GPUs that meet a
 * date.
 *
 * The batch rule is Fast-LLM's (ServiceNow Fast-LLM issue #241, "Elastic
 * training", 2025): when the world size changes, keep the global batch
 * within a tolerance band of the target by changing the micro-batch and
 * the gradient accumulation (and, if memory needs it, the ZeRO stage),
 * micro-batch x accumulation x DP. A count is infeasible when no
 * combination that fits in memory lands in the band.
 */
#ifndef SCALEPLAN_PLAN_ELASTIC_H
#define SCALEPLAN_PLAN_ELASTIC_H

#include <stdbool.h>

#include "plan/ladder.h"

#define ELASTIC_MAX_COUNTS 1024

/* The batch band around target sequences: [ceil(t (1 - band)),
 * floor(t (1 + band))]. */
void elastic_band(int target, double band, int *lo, int *hi);

/* One DP size's batch under Fast-LLM's rule: the global batch in [lo, hi]
 * closest to target (the smaller when two are as close) that some
 * micro-batch <= mb_max times an accumulation times dp gives, with the
 * largest such micro-batch (fewest accumulation steps). */
typedef struct {
    bool feasible;
    int micro_batch, accumulation, global_batch;
    double deviation; /* global / target - 1 */
} elastic_batch_t;

void elastic_batch_fit(int dp, int target, int lo, int hi, int mb_max, elastic_batch_t *out);

/* GPU counts lo, lo + step, ... <= hi (at most cap); how many. */
int elastic_counts(int lo, int hi, int step, int *out, int cap);

/* One count's plan: the ladder's single rung at that count (the search
 * within in->space, whose global batch range is the band). */
typedef struct {
    int gpus;
    rung_t rung; /* rung.feasible false: nothing fits in the band */
} elastic_row_t;

/* Plan every count of counts[0..n) with in (its min/max GPUs ignored);
 * rows[i] for counts[i]. Errors as plan_ladder's. */
int elastic_plan(const ladder_input_t *in, const int *counts, int n, elastic_row_t *rows,
                 err_t *err);

/* The first row (fewest GPUs) that is feasible and whose P50 days are at
 * most days; -1 if none. */
int elastic_fewest_for_days(const elastic_row_t *rows, int n, double days);

#endif
