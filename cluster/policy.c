#include "cluster/policy.h"

#include <string.h>

static void key_arrival(const cpolicy_job_t *j, double t, double *k1, double *k2)
{
    (void)t;
    *k1 = 0;
    *k2 = (double)j->submit_ms;
}

static void key_priority(const cpolicy_job_t *j, double t, double *k1, double *k2)
{
    (void)t;
    *k1 = -(double)j->priority;
    *k2 = (double)j->submit_ms;
}

static void key_srtf(const cpolicy_job_t *j, double t, double *k1, double *k2)
{
    (void)t;
    *k1 = (double)j->remaining_ms;
    *k2 = (double)j->submit_ms;
}

static void key_las(const cpolicy_job_t *j, double threshold, double *k1, double *k2)
{
    *k1 = (double)j->attained_gpu_ms >= threshold ? 1 : 0;
    *k2 = (double)j->submit_ms;
}

static int64_t never(const cpolicy_job_t *j, double t)
{
    (void)j;
    (void)t;
    return -1;
}

/* Run time until GPUs x time reaches the threshold, rounded up to a whole
 * millisecond so that the job is over it when the event fires. */
static int64_t las_change(const cpolicy_job_t *j, double threshold)
{
    double left = threshold - (double)j->attained_gpu_ms;
    if (left <= 0)
        return -1;
    int64_t ms = (int64_t)(left / j->gpus);
    while ((double)ms * j->gpus < left)
        ms++;
    return ms;
}

static const cpolicy_t policies[] = {
    {"fifo", "first come, first served; the head of the queue blocks it", false, false, false,
     key_arrival, never},
    {"backfill", "FIFO with EASY backfill (jobs start early when the head's reservation holds)",
     false, false, true, key_arrival, never},
    {"priority", "higher class first; preempts preemptible jobs of lower classes", true, false,
     false, key_priority, never},
    {"srtf", "shortest remaining time first (oracle durations), preemptive", true, true, false,
     key_srtf, never},
    {"las", "Tiresias 2D least-attained-service: 2 queues split at 3600 GPU-seconds", true,
     true, false, key_las, las_change},
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
