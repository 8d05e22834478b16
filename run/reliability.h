/* reliability: a whole training run as work, checkpoints, failures and
 * restarts, simulated by Monte Carlo.
 *
 * The job computes in cycles of `ckpt_interval_s` of compute followed by a
 * checkpoint: blocking for its whole write (sync), only for the snapshot to
 * host memory with the write draining in the background (async; a
 * checkpoint counts once its write has completed), or only for the
 * snapshot with a copy to a peer node's memory (peer: redundant in-memory
 * checkpoints, read back from the peer on a restart). The write and the
 * read back go at what the storage system gives the job (topologies/
 * storage.h). Failures of every class of a failure-rate set (topologies/
 * failure.h) arrive per wall-clock hour, as the published rates count
 * them: while the job runs and while it restarts (a failure during a
 * restart starts the restart over). An unexpected failure loses the work
 * since the last completed checkpoint; a planned one is announced, so the
 * job saves first and loses nothing. Each interruption costs detection,
 * then a spare swapped in (waiting for a repair when none is left), the
 * job continuing elastically with fewer replicas, or a relaunch, then
 * initialisation growing with the GPU count, the checkpoint read back and
 * warm-up steps (run/restart.h). Spot capacity adds preemptions.
 *
 * The checkpoint interval defaults to the best one for the storage and the
 * failure rates (rel_best_policy: the interval that maximises the expected
 * goodput of the renewal model below, which Young/Daly's sqrt(2 d M)
 * approximates when the save time d is far below the MTBF M). The number
 * of trials defaults to as many as the standard errors of P50 and P90 need
 * to fall below a stated tolerance.
 *
 * Each trial draws from its own random stream (seed, trial), so results do
 * not depend on how trials are spread over threads.
 */
#ifndef SCALEPLAN_RUN_RELIABILITY_H
#define SCALEPLAN_RUN_RELIABILITY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "run/restart.h"
#include "topologies/cluster.h"
#include "topologies/failure.h"
#include "topologies/storage.h"

typedef enum { CKPT_SYNC = 0, CKPT_ASYNC = 1, CKPT_PEER = 2 } ckpt_mode_t;

typedef enum {
    REPAIR_POLICY_SPARES = 0, /* swap in a hot spare node; wait if none left */
    REPAIR_POLICY_ELASTIC,    /* continue with fewer DP replicas until repaired */
    REPAIR_POLICY_WAIT        /* no spares: wait for the repair */
} repair_policy_t;

#define REL_MAX_CLASSES (FAILURE_MAX_CLASSES + 1) /* + spot preemption */

/* Adaptive Monte Carlo: trials double from REL_MIN_TRIALS until the
 * relative standard errors of P50 and P90 are below the tolerance, or
 * REL_MAX_TRIALS are done. */
#define REL_MIN_TRIALS 500
#define REL_MAX_TRIALS 32000

/* Interruptions one trial may see before it is given up on: a run
 * interrupted a million times is all restarts whatever its length
 * (Llama 3 405B's 54 days on 16,384 GPUs saw 466; Dubey et al. 2024
 * Table 5), and the cap bounds a trial at about 20 ms of simulation when
 * failures come faster than restarts complete. */
#define REL_MAX_INTERRUPTIONS 1000000L

/* Interruptions a Monte Carlo simulates at most (a fraction of a second on
 * one core, so that a plan pricing a rung and its runners-up stays within
 * seconds; 1e8 before spot rates from evidence made day-long checkpoint
 * intervals on spot capacity reach it): its first batch is smaller than
 * REL_MIN_TRIALS, or than the trials asked for, (never under
 * REL_MIN_FIRST_TRIALS) when the renewal model expects more, and an
 * adaptive run does not double past it; the trial count and standard
 * errors it reports say what precision it reached. */
#define REL_EVENT_BUDGET 1e7
#define REL_MIN_FIRST_TRIALS 32
#define REL_DEFAULT_TOLERANCE 0.002

/* PyTorch's default collective timeout for the NCCL backend: 10 minutes
 * (torch.distributed.init_process_group, 'timeout': "default value is 10
 * minutes for NCCL"; ProcessGroupNCCL kProcessGroupNCCLDefaultTimeout). A
 * hang is noticed only when the watchdog fires, so it costs the timeout
 * plus the restart (--watchdog-timeout). */
#define REL_WATCHDOG_TIMEOUT_S 600.0

typedef struct {
    /* the job */
    const cluster_t *cluster;  /* GPUs, hosts, NICs for the failure rates */
    const failure_set_t *failures;
    double step_time_s;        /* one step without failures */
    double tokens_per_step;
    double target_tokens;      /* run until this many tokens are trained, or */
    double duration_s;         /* run for this wall time (when > 0) */
    int dp;                    /* data-parallel replicas (elastic policy, format) */
    /* checkpoints */
    double ckpt_interval_s;    /* compute time between checkpoints; 0 = the best */
    double ckpt_bytes;         /* one checkpoint, all ranks together */
    ckpt_mode_t ckpt_mode;
    ckpt_format_t ckpt_format;
    storage_t storage;         /* storage_load; an empty name needs both bandwidths below */
    double storage_capacity_tib; /* per-TiB storage: provisioned capacity (0 = keep_checkpoints' worth) */
    int keep_checkpoints;      /* checkpoints kept (sizes per-TiB storage) */
    double storage_write_bps;  /* > 0: the user's aggregate write bandwidth, bytes/s */
    double storage_read_bps;   /* > 0: the user's aggregate read bandwidth, bytes/s */
    double snapshot_bps;       /* > 0: device-to-host copy, bytes/s aggregate (else PCIe) */
    restart_async_t async;     /* snapshot fixed cost, drain slowdown, loader reads */
    /* restarts */
    restart_profile_t restart; /* restart_load */
    double restart_overhead_s; /* >= 0: replaces the profile's swap/relaunch, start-up and warm-up */
    double repair_s;           /* a failed node returns to the pool */
    double watchdog_timeout_s; /* a hung collective (a class with hang set) is
                                  found only when the watchdog times out:
                                  it costs this instead of the class's
                                  detect_s (default REL_WATCHDOG_TIMEOUT_S) */
    double cluster_age_s;      /* the cluster's age at the run's start: every
                                  class's rate is multiplied by the burn-in
                                  decay (failures.json "burn_in"); < 0 =
                                  mature, no decay (the default) */
    failure_burnin_t burnin;   /* failure_load_burnin; read when cluster_age_s >= 0 */
    int spares;                /* hot spare nodes */
    repair_policy_t policy;
    /* spot capacity */
    double preempt_per_node_hour; /* 0 = not spot; a gang of n nodes is
                                     preempted this x n^preempt_node_exponent
                                     times an hour */
    double preempt_node_exponent; /* in [0, 1]: 1 = nodes preempted
                                     independently (the default), 0 = the gang
                                     preempted as one (bulk) */
    double preempt_wait_s;        /* waiting for capacity after a preemption */
    /* Monte Carlo */
    int trials;                /* 0 = adaptive (see REL_MIN_TRIALS) */
    double event_budget;       /* interruptions to simulate at most; 0 = REL_EVENT_BUDGET */
    double tolerance;          /* adaptive: relative standard error of P50 and P90 */
    uint64_t seed;
    bool progress;             /* draw a progress bar (on a terminal) */
} rel_config_t;

typedef struct {
    int trials;
    bool adaptive;                /* trials chosen by the tolerance */
    double tolerance;             /* the tolerance (adaptive) */
    double se_p50, se_p90;        /* relative standard errors of the main figure's P50/P90
                                     (wall time, or tokens for a fixed duration) */
    double wall_s_p10, wall_s_p50, wall_s_p90, wall_s_mean;
    double tokens_p10, tokens_p50, tokens_p90; /* tokens trained (fixed-duration runs) */
    double goodput_mean;          /* useful compute time / wall time */
    double tokens_mean;           /* tokens trained (fixed-duration runs) */
    double interruptions_mean;
    double unexpected_mean;       /* interruptions not planned */
    double during_restart_mean;   /* failures that hit a restart in progress */
    int n_classes;
    char class_name[REL_MAX_CLASSES][32];
    failure_kind_t class_kind[REL_MAX_CLASSES];
    double class_mean[REL_MAX_CLASSES]; /* interruptions by cause */
    double kind_mean[FAIL_KIND_COUNT];  /* interruptions by kind */
    double useful_s_mean;         /* compute that counts */
    double lost_work_s_mean;      /* compute thrown away by failures */
    double checkpoint_s_mean;     /* blocking checkpoint time */
    double restart_s_mean;        /* detection + repair wait + restart + load */
    double checkpoints_mean;      /* checkpoints completed */
    double lost_gpu_hours_mean;   /* GPUs x (wall - useful) */
    double mtbf_s;                /* job mean time between interruptions (all) */
    double unexpected_mtbf_s;     /* ... between unexpected ones */
    double cluster_failures_mean; /* cluster view: failures of the job's GPUs and its
                                     spares over the wall time, whatever runs on them */
    double per_1000_node_days;    /* the set's unexpected rate on this cluster */
    /* the policy and what it costs */
    double ckpt_interval_s;       /* the interval used */
    bool interval_best;           /* chosen by rel_best_policy */
    double save_blocking_s;       /* one checkpoint's blocking time */
    double save_write_s;          /* one checkpoint's full write (durable) */
    double load_s;                /* reading it back on restart */
    double write_bps, read_bps;   /* storage bandwidth the job gets */
    const char *write_limit;      /* what limits it (storage_job_bandwidth) */
    const char *read_limit;
    double storage_capacity_tib;  /* per-TiB storage */
    double restart_mean_s;        /* mean downtime of one interruption (no waits) */
    double detect_mean_s;         /* its parts, rate-weighted */
    double relaunch_mean_s;
    double init_s;
    double warmup_s;
    double young_daly_s;          /* sqrt(2 x blocking save x unexpected MTBF) */
    double model_goodput;         /* the renewal model's goodput at the interval */
    int unfinished;               /* > 0: the run never finishes (trials that
                                     had not trained the target within
                                     REL_MAX_WALL_S); rel_simulate then fails
                                     and the other figures are not set */
    bool interrupted_out;         /* unfinished because a trial passed
                                     REL_MAX_INTERRUPTIONS (failures faster
                                     than restarts complete), not the century */
} rel_result_t;

/* The longest wall time a trial may take (a century): a run that needs
 * more never finishes, whatever the dice. */
#define REL_MAX_WALL_S (100 * 365 * 86400.0)

/* Fill a config with defaults for a job on cluster c with failure set f:
 * the best interval, sync sharded checkpoints, adaptive trials, 2% spare
 * nodes, repairs in a day. Leaves the storage system, the restart profile
 * and the asynchronous-checkpoint figures empty (rel_config_init loads the
 * catalog's). The caller sets the work. */
void rel_config_default(rel_config_t *cfg, const cluster_t *c, const failure_set_t *f);

/* rel_config_default, then the catalog's default storage system, the
 * restart profile of environment (NULL = dedicated) and the asynchronous-
 * checkpoint figures. Errors from the catalogs. */
int rel_config_init(rel_config_t *cfg, const cluster_t *c, const failure_set_t *f,
                    const char *environment, err_t *err);

/* Bytes saved per parameter when the user names no checkpoint size: fp32
 * master weights and two fp32 Adam moments (12); a 70B model then makes
 * about 840 GB, as planning guides say (DESIGN.md). */
#define REL_CKPT_BYTES_PER_PARAM 12.0

/* Check a config: positive step time and bandwidths, a target, ... One
 * clear line naming the flag on error (ERR_INPUT). */
int rel_validate(const rel_config_t *cfg, err_t *err);

/* The policy's costs without the Monte Carlo: storage bandwidth, save,
 * write and load times, restart parts, MTBFs, the interval (the best when
 * cfg's is 0) and Young/Daly, into the corresponding fields of out (the
 * rest zero). */
int rel_policy(const rel_config_t *cfg, rel_result_t *out, err_t *err);

/* Run the Monte Carlo. A run of target_tokens that cannot finish (so little
 * work between checkpoints that even without failures it would take more
 * than REL_MAX_WALL_S, or failures so frequent for the checkpoint interval
 * that some trial has not finished after REL_MAX_WALL_S) is ERR_INPUT
 * naming --checkpoint-every ("never finishes"), with out->unfinished > 0.
 * No figure of such a run is ever returned. */
int rel_simulate(const rel_config_t *cfg, rel_result_t *out, err_t *err);

/* Sweep checkpoint intervals (n, log-spaced from lo_s to hi_s) with common
 * random numbers (an interval at which the run never finishes counts as
 * goodput 0) and return the interval with the best mean goodput, the
 * goodput at each interval in goodput[] (may be NULL) and the intervals in
 * intervals[] (may be NULL). */
int rel_best_interval(const rel_config_t *cfg, double lo_s, double hi_s, int n,
                      double *intervals, double *goodput, double *best_s, err_t *err);

/* The interval range worth sweeping after a run r: from twice the blocking
 * save (and at least the full write, and 1 s) to a day. */
void rel_sweep_bounds(const rel_result_t *r, double *lo_s, double *hi_s);

/* Job-level failure rate (per second) of a failure class on a cluster. */
double rel_class_rate(const failure_class_t *f, const cluster_t *c);

/* Interruptions per week of a job of c's size with set f: all, unexpected
 * and the MTBF in hours (INFINITY when no class fails). */
void rel_weekly(const failure_set_t *f, const cluster_t *c, double *all, double *unexpected,
                double *mtbf_hours);

#endif
