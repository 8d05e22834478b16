/* planner: --policy planner, each job's GPU count (and layout) chosen from
 * its simulated scaling curve to minimise the pool's makespan, mean
 * completion time or cost.
 *
 * A job that gives a range (min_gpus..max_gpus, cluster/jobs.h) may run at
 * its smallest size, the doublings of it up to the largest, the largest
 * and the size it asks for (capped at the pool). Its run time at each size
 * is its curve: a model + tokens job's from the step simulator (the
 * planner's fastest layout at that size, as cluster/duration.h prices one
 * size), a job given a duration scales it by gpus / size (perfect scaling,
 * ASSUMED and counted for the caller to say).
 *
 * The search is a coordinate descent over the sizes, each candidate plan
 * judged by replaying it (cluster/replay.h) under FIFO and under EASY
 * backfill, keeping the better: it starts from the sizes the jobs ask for
 * (the fixed-size plan) and takes a change only when it improves the
 * objective, so the plan it returns is never worse than the best
 * fixed-size FIFO/backfill plan of the same jobs. Deterministic: the same
 * jobs and curves give the same plan.
 */
#ifndef SCALEPLAN_CLUSTER_PLANNER_H
#define SCALEPLAN_CLUSTER_PLANNER_H

#include "cluster/jobs.h"
#include "cluster/replay.h"
#include "common/catalog.h"
#include "common/error.h"
#include "common/progress.h"

#define CPLAN_MAX_SIZES 16 /* sizes one job may be tried at */
#define CPLAN_MAX_PASSES 8 /* coordinate-descent sweeps over the jobs */

/* One job's scaling curve: its run time at each size it may take. */
typedef struct {
    int n;                               /* sizes, ascending, >= 1 */
    int asked;                           /* index of the size the job asks for */
    int gpus[CPLAN_MAX_SIZES];
    int64_t duration_ms[CPLAN_MAX_SIZES]; /* run time alone at that size, > 0 */
    char layout[CPLAN_MAX_SIZES][96];    /* the simulator's layout ("" if not simulated) */
    double mfu[CPLAN_MAX_SIZES];         /* its MFU (0 if not simulated) */
} cplan_curve_t;

typedef enum { CPLAN_MAKESPAN = 0, CPLAN_JCT, CPLAN_COST } cplan_objective_t;

/* "makespan", "jct", "cost" (cost: the GPU-hours the jobs are allocated,
 * what a pay-per-use pool bills). -1 for another name. */
int cplan_objective_find(const char *name);
const char *cplan_objective_name(cplan_objective_t o);

/* The sizes j may take on a pool of pool_gpus: see above. Writes at most
 * CPLAN_MAX_SIZES into out (ascending) and returns how many; *asked gets
 * the index of j->gpus. */
int cplan_sizes(const cjob_t *j, int pool_gpus, int *out, int *asked);

/* curves[l->n] for every job of l: model + tokens jobs priced on their
 * gpu_type or gpu at each size (a size where no layout fits is dropped;
 * ERR_INPUT naming the job's line when none fits), others scaled from
 * their duration (*n_linear counts them, may be NULL); bar (may be NULL)
 * is told each job priced. ERR_RUNTIME on OOM. */
int cplan_curves(const cjobs_t *l, const char *gpu, int pool_gpus, catalog_t *cat,
                 cplan_curve_t *curves, int *n_linear, progress_t *bar, err_t *err);

typedef struct {
    int *choice;                  /* [n_jobs] index into each curve; owned */
    const cpolicy_t *policy;      /* fifo or backfill: the plan's queue */
    const cpolicy_t *fixed_policy;/* the better of the two at the asked sizes */
    double objective, fixed_objective; /* the plan's and the fixed-size plan's */
    double fixed_makespan_s, fixed_jct_mean_s; /* the fixed-size plan's */
    long replays;                 /* plans replayed */
    int passes;
} cplan_result_t;

/* Choose a size for every job of l (curves as above) on the pool cfg
 * describes (its policy is ignored), for objective obj. out is the
 * caller's (cplan_result_free); nothing to free on error. Errors as
 * creplay_run (ERR_INPUT for a job larger than the pool at every size). */
int cplan_search(const cjobs_t *l, const cplan_curve_t *curves, const creplay_config_t *cfg,
                 cplan_objective_t obj, cplan_result_t *out, err_t *err);

/* Write the plan into l: each job's gpus, duration_ms and mfu at its chosen
 * size (the caller replays l under out->policy for the full result). */
void cplan_apply(cjobs_t *l, const cplan_curve_t *curves, const cplan_result_t *plan);

void cplan_result_free(cplan_result_t *r);

#endif
