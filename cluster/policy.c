#include "cluster/policy.h"

#include <string.h>

static void key_arrival(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    (void)p;
    *k1 = 0;
    *k2 = (double)j->submit_ms;
}

static void key_priority(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    (void)p;
    *k1 = -(double)j->priority;
    *k2 = (double)j->submit_ms;
}

static void key_srtf(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    (void)p;
    *k1 = (double)j->remaining_ms;
    *k2 = (double)j->submit_ms;
}

/* las: the queue is the number of limits the attained service has passed. */
/* srsf: remaining GPU-time (run time left x GPUs), smaller first. */
static void key_srsf(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    (void)p;
    *k1 = (double)j->remaining_ms * j->gpus;
    *k2 = (double)j->submit_ms;
}

/* las: the queue is the number of limits the attained service has passed. */
static void key_las(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    int q = 0;
    while (q < p->n_las_limits && (double)j->attained_gpu_ms >= p->las_limits_gpu_ms[q])
        q++;
    *k1 = q;
    *k2 = (double)j->submit_ms;
}

/* sjf: the key of the greedy "SJF + Oracle" policy of Alibaba's GPU-cluster
 * simulator (alibaba/clusterdata, cluster-trace-gpu-v2020/simulator/
 * scheduler.py @ 7a6c496e, alloc_policy 0: alloc_job_sort by duration):
 * the recorded run time alone (not the remaining one: the policy never
 * preempts, so a waiting job has not run), arrival order among equals.
 * Its fifo-fit twin (alloc_policy 8) is key_arrival, fit-first. */
static void key_sjf(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    (void)p;
    *k1 = (double)j->duration_ms;
    *k2 = (double)j->submit_ms;
}

static int64_t never(const cpolicy_job_t *j, const cpolicy_params_t *p)
{
    (void)j;
    (void)p;
    return -1;
}

/* Run time until GPUs x time reaches the next limit, rounded up to a whole
 * millisecond so that the job is over it when the event fires. */
static int64_t las_change(const cpolicy_job_t *j, const cpolicy_params_t *p)
{
    int q = 0;
    while (q < p->n_las_limits && (double)j->attained_gpu_ms >= p->las_limits_gpu_ms[q])
        q++;
    if (q == p->n_las_limits)
        return -1;
    double left = p->las_limits_gpu_ms[q] - (double)j->attained_gpu_ms;
    int64_t ms = (int64_t)(left / j->gpus);
    while ((double)ms * j->gpus < left)
        ms++;
    return ms;
}

/* rho, Themis's finish-time fairness: the time to finish if the job ran
 * from now on, over its run time alone. Largest first. */
static void key_ftf(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    (void)p;
    double shared = (double)(j->now_ms - j->submit_ms + j->remaining_ms);
    *k1 = -shared / (double)j->duration_ms;
    *k2 = (double)j->submit_ms;
}

/* Borrowing jobs after those within quota (QUOTA_BORROW apart, beyond
 * any class), higher classes first among each; a running job within its
 * quota below every waiting key, so nothing preempts it. */
#define QUOTA_BORROW 1e7
static void key_quota(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2)
{
    (void)p;
    bool borrowing = j->team_used_gpus + j->gpus > j->team_quota_gpus;
    *k1 = borrowing ? QUOTA_BORROW - j->priority : j->running ? -QUOTA_BORROW : -j->priority;
    *k2 = (double)j->submit_ms;
}

static int64_t ftf_lease(const cpolicy_job_t *j, const cpolicy_params_t *p)
{
    (void)j;
    return p->lease_ms > 0 ? p->lease_ms : -1;
}

static const cpolicy_t policies[] = {
    {"fifo", "first come, first served; the head of the queue blocks it", false, false, false,
     false, false, key_arrival, never},
    {"backfill", "FIFO with EASY backfill (jobs start early when the head's reservation holds)",
     false, false, true, false, false, key_arrival, never},
    {"priority", "higher class first; preempts preemptible jobs of lower classes", true, false,
     false, false, false, key_priority, never},
    {"srtf", "shortest remaining time first (oracle durations), preemptive", true, true, false,
     false, false, key_srtf, never},
    {"srsf", "shortest remaining service (GPU-time) first (oracle durations), preemptive",
     true, true, false, false, false, key_srsf, never},
    {"las", "Tiresias 2D least-attained-service: queues split at 3600 GPU-seconds "
     "(--las-threshold)", true,
     true, false, false, false, key_las, las_change},
    {"ftf", "Themis finish-time fairness: the job furthest behind its fair finish first, "
     "preempting after a lease", true, true, false, true, true, key_ftf, ftf_lease},
    {"quota", "per-team quotas (Kueue-like): borrow idle GPUs, reclaim them by preemption", true,
     true, false, true, false, key_quota, never},
    /* Alibaba's GPU-cluster simulator's greedy pair (key_sjf above). */
    {"sjf", "shortest job first by recorded duration, non-preemptive, fit-first "
     "(Alibaba's simulator)", false, true, false, false, false, key_sjf, never},
    {"fifo-fit", "arrival order, fit-first: a job that does not fit is passed over "
     "(Alibaba's simulator's FIFO)", false, true, false, false, false, key_arrival, never},
};

const cpolicy_t *cpolicy_all(int *n_out)
{
    *n_out = (int)(sizeof policies / sizeof policies[0]);
    return policies;
}

const cpolicy_t *cpolicy_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof policies / sizeof policies[0]; i++)
        if (strcmp(policies[i].name, name) == 0)
            return &policies[i];
    return NULL;
}
