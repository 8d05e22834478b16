/* reliability: a whole training run as work, checkpoints, failures and
 * restarts, simulated by Monte Carlo.
 *
 * The job computes in cycles of `ckpt_interval_s` of compute followed by a
 * checkpoint save: blocking for its whole write (sync) or only for the
 * snapshot to host memory, the write then finishing in the background
 * (async; a checkpoint counts only once its write has completed). Failures
 * of every class in a failure-rate set (topologies/failure.h) arrive while
 * the job runs, each class with its own exponential or Weibull clock on the
 * job's up-time. A failure loses the work since the last completed
 * checkpoint and costs detection, then a replacement (a hot spare if one is
 * left, else waiting for a repair; or continuing elastically with fewer
 * data-parallel replicas) or a plain reschedule, the restart overhead and
 * the checkpoint load. Spot capacity adds preemptions at a given rate.
 *
 * Each trial draws from its own random stream (seed, trial), so results do
 * not depend on how trials are spread over threads.
 */
#ifndef SCALEPLAN_SIM_RELIABILITY_H
#define SCALEPLAN_SIM_RELIABILITY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "topologies/cluster.h"
#include "topologies/failure.h"

typedef enum { CKPT_SYNC = 0, CKPT_ASYNC = 1 } ckpt_mode_t;

typedef enum {
    REPAIR_POLICY_SPARES = 0, /* swap in a hot spare node; wait if none left */
    REPAIR_POLICY_ELASTIC,    /* continue with fewer DP replicas until repaired */
    REPAIR_POLICY_WAIT        /* no spares: wait for the repair */
} repair_policy_t;

#define REL_MAX_CLASSES (FAILURE_MAX_CLASSES + 1) /* + spot preemption */

typedef struct {
    /* the job */
    const cluster_t *cluster;  /* GPUs, hosts, NICs for the failure rates */
    const failure_set_t *failures;
    double step_time_s;        /* one step without failures */
    double tokens_per_step;
    double target_tokens;      /* run until this many tokens are trained, or */
    double duration_s;         /* run for this wall time (when > 0) */
    int dp;                    /* data-parallel replicas (elastic policy) */
    /* checkpoints */
    double ckpt_interval_s;    /* compute time between checkpoints */
    double ckpt_bytes;         /* one checkpoint, all ranks together */
    double storage_write_bps;  /* aggregate write bandwidth, bytes/s */
    double storage_read_bps;   /* aggregate read bandwidth, bytes/s */
    ckpt_mode_t ckpt_mode;
    double snapshot_bps;       /* async: device-to-host copy, bytes/s aggregate */
    /* restarts */
    double restart_overhead_s; /* reschedule, initialise, warm up */
    double replace_s;          /* swap a spare node in */
    double repair_s;           /* a failed node returns to the pool */
    int spares;                /* hot spare nodes */
    repair_policy_t policy;
    /* spot capacity */
    double preempt_per_node_hour; /* 0 = not spot */
    double preempt_wait_s;        /* waiting for capacity after a preemption */
    /* Monte Carlo */
    int trials;
    uint64_t seed;
    bool progress;             /* draw a progress bar (on a terminal) */
} rel_config_t;

typedef struct {
    int trials;
    double wall_s_p10, wall_s_p50, wall_s_p90, wall_s_mean;
    double goodput_mean;          /* useful compute time / wall time */
    double tokens_mean;           /* tokens trained (fixed-duration runs) */
    double interruptions_mean;
    double unexpected_mean;       /* interruptions not planned */
    int n_classes;
    char class_name[REL_MAX_CLASSES][32];
    double class_mean[REL_MAX_CLASSES]; /* interruptions by cause */
    double useful_s_mean;         /* compute that counts */
    double lost_work_s_mean;      /* compute thrown away by failures */
    double checkpoint_s_mean;     /* blocking checkpoint time */
    double restart_s_mean;        /* detection + repair wait + restart + load */
    double lost_gpu_hours_mean;   /* GPUs x (wall - useful) */
    double mtbf_s;                /* job mean time between interruptions */
    double save_blocking_s;       /* one checkpoint's blocking time */
    double save_write_s;          /* one checkpoint's full write */
    double load_s;                /* reading it back on restart */
    double young_daly_s;          /* sqrt(2 x blocking save x MTBF) */
    int unfinished;               /* > 0: the run never finishes (trials that
                                     had not trained the target within
                                     REL_MAX_WALL_S); rel_simulate then fails
                                     and the other figures are not set */
} rel_result_t;

/* The longest wall time a trial may take (a century): a run that needs
 * more never finishes, whatever the dice. */
#define REL_MAX_WALL_S (100 * 365 * 86400.0)

/* Fill a config with defaults (see reliability.c for their sources) for a
 * job on cluster c with failure set f. The caller sets the work. */
void rel_config_default(rel_config_t *cfg, const cluster_t *c, const failure_set_t *f);

/* Bytes saved per parameter when the user names no checkpoint size: fp32
 * master weights and two fp32 Adam moments (12); a 70B model then makes
 * about 840 GB, as planning guides say (DESIGN.md). */
#define REL_CKPT_BYTES_PER_PARAM 12.0

/* Check a config: positive step time and bandwidths, a target, ... One
 * clear line naming the flag on error (ERR_INPUT). */
int rel_validate(const rel_config_t *cfg, err_t *err);

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

#endif
