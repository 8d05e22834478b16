/* replay: a discrete-event simulation of a GPU pool running a job list.
 *
 * Jobs arrive at their submit times, wait in the policy's queue
 * (cluster/policy.h), start as a gang on nodes of the pool
 * (cluster/pool.h) and run for their duration; a preempted job goes back
 * to the queue and later resumes where it stopped (preemption is assumed
 * free: its checkpoint and restart costs are not modelled). With failure
 * rates, a running gang is interrupted at exponential times and goes back
 * to its last checkpoint. Events (job
 * ends, LAS queue changes) sit in a binary heap, arrivals are streamed in
 * submit order, so a replay costs O(jobs log jobs) plus the policy's
 * queue scans, and memory is linear in jobs. Times are whole milliseconds
 * and GPU time an integer, so the GPU-seconds every job needs are
 * conserved exactly. Nothing is random: the same list gives the same
 * replay (ties go by event kind, then arrival order).
 */
#ifndef SCALEPLAN_CLUSTER_REPLAY_H
#define SCALEPLAN_CLUSTER_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster/jobs.h"
#include "cluster/policy.h"
#include "common/error.h"

/* Failures of one job past which the replay stops (ERR_INPUT): its
 * failure rate leaves it almost no chance to reach a checkpoint, and the
 * replay would not end. */
#define CREPLAY_MAX_FAILURES_PER_JOB 10000

/* Bounds that keep a replay that cannot end from running forever (issue
 * 39: a spot reclaim rate so high that a gang never keeps its nodes for a
 * checkpoint interval). By default simulated time stops at the latest
 * input time (arrival, spot trace point) plus CREPLAY_HORIZON_FACTOR times
 * every job's run time alone (its slowest group), summed, plus one
 * restart, spot outage and repair: a pool running the jobs one after the
 * other a hundred times over is done by then. The scheduling passes stop
 * at CREPLAY_EVENTS_PER_JOB a job, at least CREPLAY_MIN_EVENTS (a job
 * interrupted CREPLAY_MAX_FAILURES_PER_JOB times needs about twice that). */
#define CREPLAY_HORIZON_FACTOR 100
#define CREPLAY_EVENTS_PER_JOB 25000L
#define CREPLAY_MIN_EVENTS 1000000L

typedef struct {
    int gpus;                   /* pool size (with groups: their sum) */
    int gpus_per_node;          /* node size; gpus (each group's) divides by it */
    /* Groups of one GPU type each (0 = one group of gpus): a gang runs
     * inside one group, the one its job's gpu_type names, else the first
     * listed that holds it (or, with fastest_group, the quickest). */
    int n_groups;
    const int *group_gpus;            /* [n_groups] */
    const char *const *group_types;   /* [n_groups] GPU names, matched to cjob_t.gpu_type */
    /* [n_jobs x n_groups] each job's run time in each group (NULL: its
     * duration_ms everywhere). A job moved to another group keeps its share
     * of the work done. */
    const int64_t *group_duration_ms;
    bool fastest_group;         /* place a job without a type where it runs
                                   shortest among the groups with room
                                   (type-aware); else the first with room */
    const cpolicy_t *policy;
    double las_limits_gpu_s[CPOLICY_LAS_MAX_LIMITS]; /* las: ascending queue limits */
    int n_las_limits;           /* how many (default 1: 3600 GPU-s) */
    int64_t lease_ms;           /* ftf: run time before a job may be preempted */
    double price_per_gpu_h;     /* USD per GPU-hour; 0 = no cost figures */
    /* Failures: interruptions per hour of a running gang of gpus GPUs
     * (cluster/failrate.h), or NULL for none. An interrupted job loses
     * the progress since its last checkpoint, goes back to the queue and,
     * once restarted, runs restart_ms before progressing again. */
    double (*fail_rate_per_hour)(void *ctx, int gpus);
    void *fail_ctx;
    int64_t checkpoint_ms;      /* progress between checkpoints; 0 = none kept */
    int64_t restart_ms;         /* run time a restart costs */
    uint64_t seed;              /* the failure and spot draws' */
    /* Spot: spot_gpus of the pool (whole nodes, below the pool; one GPU
     * type) whose nodes are each reclaimed at Poisson times,
     * spot_reclaims_per_node_hour, and come back spot_outage_ms later;
     * the jobs that free a reclaimed node go back to their last checkpoint
     * (a job's checkpoint_ms, else checkpoint_ms) and pay restart_ms, as
     * after a failure. 0 = no spot. */
    int spot_gpus;
    double spot_reclaims_per_node_hour;
    int64_t spot_outage_ms;
    /* Or an availability trace (cluster/spot.h): from spot_trace_ms[i] on,
     * spot_trace_nodes[i] spot nodes are there (ascending times; all of
     * them before the first); the Poisson rate is then not used. */
    int spot_trace_n;
    const int64_t *spot_trace_ms;
    const int *spot_trace_nodes;
    /* Spares: spare_gpus (whole nodes) outside the pool. A failed gang
     * swaps one in for its failed node and restarts in place instead of
     * queueing again; the spare is back repair_ms later. With none free
     * it queues again (the failed node taken as repaired at once, as
     * without spares). 0 = none. */
    int spare_gpus;
    int64_t repair_ms;
    /* Teams' quotas (--policy quota): a job's team is matched by name; a
     * team not listed has none. */
    int n_teams;
    const char *const *team_names;    /* [n_teams] */
    const int *team_quota_gpus;       /* [n_teams] */
    /* Called for every run of a job as it stops (NULL: none): job index,
     * the run's start and end, its GPUs, its group and how it stopped (0
     * finished, 1 preempted, 2 failed, 3 reclaimed). Non-zero stops the replay
     * (ERR_RUNTIME: out of memory). */
    int (*on_segment)(void *ctx, int job, int64_t start_ms, int64_t end_ms, int gpus, int group,
                      int how);
    void *segment_ctx;
    /* The bounds above (0 = the defaults): simulated time (ms from 0, as
     * the jobs' submit times) and scheduling passes past which the replay
     * stops with ERR_INPUT. */
    int64_t horizon_ms;
    long max_events;
} creplay_config_t;

/* The default config for a pool: fifo, 8 GPUs a node (or the pool when
 * smaller), Tiresias's LAS threshold, ftf's assumed lease, no price. */
void creplay_config_default(creplay_config_t *c, int gpus);

typedef struct {
    int64_t start_ms;    /* first start */
    int64_t end_ms;
    int64_t gpu_ms;      /* GPU-milliseconds allocated to it */
    int64_t reserve_ms;  /* backfill: the start the head of the queue was
                            promised when first blocked; -1 = never blocked */
    int preemptions;
    int failures;
    int reclaims;        /* stopped by a spot reclaim */
} creplay_job_t;

typedef struct {
    int n_jobs;
    creplay_job_t *jobs;       /* [n_jobs], in the list's order; owned */
    int64_t first_submit_ms, last_end_ms;
    double makespan_s;         /* last end - first submit */
    int64_t gpu_ms;            /* allocated, all jobs: their work + lost + restarts */
    int64_t lost_gpu_ms;       /* progress lost to failures (redone) */
    int64_t restart_gpu_ms;    /* spent restarting after failures */
    long failures;
    long reclaims;             /* jobs stopped by spot reclaims */
    long spot_node_reclaims;   /* spot nodes taken back */
    long spare_swaps;          /* failures that restarted in place on a spare */
    int64_t reclaim_lost_gpu_ms; /* of lost_gpu_ms, to spot reclaims */
    double utilization;        /* gpu_ms / (pool GPUs x makespan) */
    double queue_delay_mean_s, queue_delay_p50_s, queue_delay_p99_s; /* first start - submit */
    double jct_mean_s, jct_p50_s, jct_p99_s;                        /* end - submit */
    double ftf_mean, ftf_max;  /* finish-time fairness (Themis's rho): completion
                                  time over the run time alone; 1 = no wait */
    double tokens;             /* of the jobs that give them */
    double goodput_tokens_per_gpu_hour; /* tokens over the GPU-hours of those jobs; 0 if none */
    double cost_usd;           /* pool GPUs x makespan x price (an idle GPU is paid too) */
    long events;               /* scheduling passes */
    long preemptions;
    int max_gpus_in_use;       /* never above the pool (gang admission) */
} creplay_result_t;

/* Replay jobs on the pool cfg describes. ERR_INPUT (naming the file, line
 * and field) for a job larger than the pool (or than its type's group), a
 * GPU type the pool lacks, or a job with no duration; ERR_INPUT too when
 * the replay passes its horizon or its count of scheduling passes (cfg's
 * bounds) with jobs unfinished: the message names one, why it could not
 * finish (spot reclaims, failures) and the flag to change, and how many
 * more are left. ERR_RUNTIME on OOM. out is owned by the caller on success
 * (creplay_result_free); nothing to free on error, where out keeps only
 * events and last_end_ms (the simulated time reached). */
int creplay_run(const cjobs_t *jobs, const creplay_config_t *cfg, creplay_result_t *out,
                err_t *err);

void creplay_result_free(creplay_result_t *r);

#endif
