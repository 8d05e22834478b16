/* policy: the scheduling policies of the pool replay, one table row each.
 *
 * A policy orders the jobs that wait (and, when it preempts, the running
 * ones) by a key (k1, k2), smaller first, from a job's state at the
 * moment. It says whether it preempts (a running preemptible job whose k1
 * is strictly larger than a waiting job's gives way when that lets the
 * waiting job start), whether a waiting job that does not fit blocks the
 * ones behind it (FIFO) or is skipped (fit-first), and whether it
 * backfills (EASY: cluster/replay.c).
 *
 *   fifo      arrival order; the head blocks the queue.
 *   backfill  arrival order; jobs behind the blocked head start when they
 *             cannot delay the head's reservation (EASY backfill, Lifka
 *             1995; Slurm's sched/backfill), on stated or recorded durations.
 *   priority  higher class first, arrival order within a class; preempts
 *             preemptible jobs of lower classes; the head blocks its queue
 *             (Kueue's StrictFIFO).
 *   srtf      shortest remaining run time first, known in advance (an
 *             oracle: the lower bound on mean completion time); preemptive;
 *             fit-first.
 *   las       Tiresias's discretized 2D least-attained-service (Gu et al.,
 *             NSDI 2019, sec. 4.2): attained service is GPUs x run time;
 *             jobs below the threshold are in queue 0, above it in queue 1;
 *             arrival order within a queue; a queue-0 job preempts queue-1
 *             jobs; fit-first. The threshold is the Tiresias simulator's
 *             (SymbioticLab/Tiresias simulator/jobs.py: num_queue = 2,
 *             queue_limit[0] = 3600, GPU-seconds for dlas-gpu).
 */
#ifndef SCALEPLAN_CLUSTER_POLICY_H
#define SCALEPLAN_CLUSTER_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* Tiresias's queue-0 limit, GPU-seconds (see above). */
#define CPOLICY_LAS_THRESHOLD_GPU_S 3600.0

/* What a key may look at: a job's state at the moment. */
typedef struct {
    int64_t submit_ms;
    int64_t remaining_ms;    /* run time still needed */
    int64_t attained_gpu_ms; /* GPUs x run time received so far */
    int priority;
    int gpus;
} cpolicy_job_t;

typedef struct {
    const char *name;
    const char *summary;     /* one line for --help */
    bool preemptive;
    bool skip_blocked;       /* fit-first: a job that does not fit is passed over */
    bool backfill;           /* EASY backfill behind a blocked head */
    /* The key of job j (smaller runs first); las_threshold_gpu_ms for las. */
    void (*key)(const cpolicy_job_t *j, double las_threshold_gpu_ms, double *k1, double *k2);
    /* Milliseconds of running after which j's key class changes (las: the
     * threshold is crossed), or -1 when it does not. */
    int64_t (*class_change_ms)(const cpolicy_job_t *j, double las_threshold_gpu_ms);
} cpolicy_t;

/* The policies, in the order --help lists them. */
const cpolicy_t *cpolicy_all(int *n_out);
const cpolicy_t *cpolicy_find(const char *name);

#endif
