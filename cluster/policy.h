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
 *   srsf      shortest remaining service first: run time left x GPUs,
 *             known in advance (oracle); preemptive; fit-first (Muri's and
 *             Tiresias's simulators' "shortest-gpu" baseline, Rivendile/Muri
 *             simulator/run_sim.py shortest_first_sim_jobs(gputime=True)).
 *   las       Tiresias's discretized 2D least-attained-service (Gu et al.,
 *             NSDI 2019, sec. 4.2): attained service is GPUs x run time;
 *             a job is in queue k when it has passed k of the ascending
 *             queue limits; arrival order within a queue; a job of a lower
 *             queue preempts jobs of higher ones; fit-first. The default is
 *             one limit (two queues) at the Tiresias simulator's 3600
 *             GPU-seconds (SymbioticLab/Tiresias simulator/jobs.py:
 *             num_queue = 2, queue_limit[0] = 3600, for dlas-gpu); Muri's
 *             simulator (Rivendile/Muri simulator/jobs.py) runs three
 *             queues at 3250 and 7200.
 *   ftf       finish-time fairness (Themis, Mahajan et al., NSDI 2020): the
 *             job with the largest rho = (time since submit + remaining run
 *             time) / run time alone first, i.e. the one whose finish is
 *             furthest behind its fair share; preempts jobs of a smaller
 *             rho once they have run a lease (Themis's leases), fit-first.
 *             rho changes with time, so waiting jobs are re-ranked each pass.
 *   quota     per-team quotas with borrowing, as Kueue's ClusterQueues in a
 *             cohort (kueue.sigs.k8s.io, "Cluster Queue": nominalQuota,
 *             borrowing, preemption.reclaimWithinCohort: Any,
 *             borrowWithinCohort: LowerPriority): a job that fits its
 *             team's quota (its team's other GPUs + its own <= quota) is
 *             within it, one beyond it borrows idle GPUs (a running job
 *             counts as borrowing while its team holds more than its
 *             quota; the latest submitted is preempted first); waiting jobs go
 *             within-quota first, then by priority class (higher first),
 *             then arrival; a waiting job within its quota reclaims it by
 *             preempting preemptible borrowing jobs, a borrowing one may
 *             preempt borrowing jobs of a lower class; a running job within
 *             its team's quota is never preempted (no priority preemption
 *             inside a quota: that is --policy priority's). Fit-first. A
 *             job with no team (or a team without quota) only borrows.
 *   sjf       shortest recorded duration first, non-preemptive, fit-first;
 *   fifo-fit  arrival order, non-preemptive, fit-first: the greedy pair of
 *             Alibaba's GPU-cluster simulator (alibaba/clusterdata,
 *             cluster-trace-gpu-v2020/simulator/scheduler.py @ 7a6c496e).
 */
#ifndef SCALEPLAN_CLUSTER_POLICY_H
#define SCALEPLAN_CLUSTER_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* Tiresias's queue-0 limit, GPU-seconds (see above), and the most queue
 * limits las takes. */
#define CPOLICY_LAS_THRESHOLD_GPU_S 3600.0
#define CPOLICY_LAS_MAX_LIMITS 8
/* ftf's lease: ASSUMED 10 minutes (Themis grants GPUs in leases of
 * minutes; the replay's default, said by the command). */
#define CPOLICY_FTF_LEASE_S 600.0

/* What a key may look at: a job's state at the moment. */
typedef struct {
    int64_t now_ms;
    int64_t submit_ms;
    int64_t duration_ms;     /* its run time alone on its GPUs */
    int64_t remaining_ms;    /* run time still needed */
    int64_t attained_gpu_ms; /* GPUs x run time received so far */
    int priority;
    int gpus;
    int team_used_gpus;      /* quota: GPUs its team's other jobs hold now */
    int team_quota_gpus;     /* quota: its team's nominal quota (0: none) */
    bool running;            /* it holds GPUs now */
} cpolicy_job_t;

/* The policies' settings. */
typedef struct {
    double las_limits_gpu_ms[CPOLICY_LAS_MAX_LIMITS]; /* las: ascending queue limits */
    int n_las_limits;                                 /* at least 1 */
    int64_t lease_ms;            /* ftf: run time before a job may be preempted */
} cpolicy_params_t;

typedef struct {
    const char *name;
    const char *summary;     /* one line for --help */
    bool preemptive;
    bool skip_blocked;       /* fit-first: a job that does not fit is passed over */
    bool backfill;           /* EASY backfill behind a blocked head */
    bool rekey;              /* waiting jobs' keys change with time: recomputed each pass */
    bool leased;             /* a running job may be preempted only after lease_ms */
    /* The key of job j (smaller runs first). */
    void (*key)(const cpolicy_job_t *j, const cpolicy_params_t *p, double *k1, double *k2);
    /* Milliseconds of running after which the policy looks at j again
     * (las: the threshold is crossed; ftf: its lease ends), or -1. */
    int64_t (*revisit_ms)(const cpolicy_job_t *j, const cpolicy_params_t *p);
} cpolicy_t;

/* The policies, in the order --help lists them. */
const cpolicy_t *cpolicy_all(int *n_out);
const cpolicy_t *cpolicy_find(const char *name);

#endif
