/* timeline: every run of every job of a replay (cluster/replay.h's
 * on_segment), and what is drawn from it: the GPUs in use over time and
 * the fairness figures of the jobs' completion times.
 *
 * A collector is a plain growable array; ctimeline_record is the replay's
 * callback (ctx: the collector). Times are the replay's milliseconds.
 */
#ifndef SCALEPLAN_CLUSTER_TIMELINE_H
#define SCALEPLAN_CLUSTER_TIMELINE_H

#include <stdint.h>

#include "cluster/jobs.h"
#include "cluster/replay.h"
#include "common/error.h"

typedef struct {
    int job;              /* index in the job list */
    int64_t start_ms, end_ms;
    int gpus, group;
    int how;              /* 0 finished, 1 preempted, 2 failed, 3 reclaimed (spot) */
} cseg_t;

typedef struct {
    cseg_t *seg;          /* [n], in the order runs stopped; owned */
    int n, cap;
} ctimeline_t;

/* on_segment for creplay_config_t (ctx: a ctimeline_t); -1 on OOM. */
int ctimeline_record(void *ctx, int job, int64_t start_ms, int64_t end_ms, int gpus, int group,
                     int how);

/* GPUs in use as a step function: *at_ms and *gpus (heap, [*n], the
 * caller frees both) hold each time the count changes and the count from
 * then on, ascending, the last point 0. ERR_RUNTIME on OOM (nothing to
 * free then). */
int ctimeline_in_use(const ctimeline_t *t, int64_t **at_ms, int **gpus, int *n, err_t *err);

void ctimeline_free(ctimeline_t *t);

/* Jain's fairness index of the jobs' speeds (run time alone over
 * completion time: 1/rho of Themis): (sum x)^2 / (n sum x^2), 1 when all
 * wait alike, 1/n when one job takes it all (Jain, Chiu and Hawe, DEC-TR-301,
 * 1984). 0 for no jobs. */
double ctimeline_jain(const cjobs_t *l, const creplay_result_t *r);

/* MFU-weighted utilization: the GPU time allocated to jobs whose MFU is
 * known (model + tokens jobs, cjob_t.mfu), each weighted by it, over the
 * pool's GPUs x the makespan: the share of the pool's peak FLOPs spent on
 * model FLOPs. *covered (may be NULL) gets the share of the allocated GPU
 * time those jobs hold (1 = every job's MFU known). 0 when none is. */
double ctimeline_mfu_utilization(const cjobs_t *l, const creplay_result_t *r, int pool_gpus,
                                 double *covered);

#endif
