/* restart: what it costs to get a job going again after an interruption
 * (sim/catalog/restart.json), and what an asynchronous checkpoint costs the
 * job while it is taken.
 *
 * A restart is detection (the failure class's detect_s, topologies/
 * failure.h), then a hot spare swapped in (replace_s) or the job relaunched
 * on its allocation (reschedule_s), then process start and communicator
 * initialisation growing with the GPU count (init_fixed_s + init_per_gpu_s
 * x GPUs), the checkpoint read back (the storage model, topologies/
 * storage.h) and a few warm-up steps. Profiles differ by how a site runs:
 * "automated" (owner-run, hot spares, optimised start-up) or "requeue"
 * (a shared cluster or cloud whose scheduler requeues the job).
 */
#ifndef SCALEPLAN_RUN_RESTART_H
#define SCALEPLAN_RUN_RESTART_H

#include <stdbool.h>

#include "common/error.h"

typedef struct {
    char name[32];
    char description[160];
    double replace_s;       /* a hot spare swapped into the allocation */
    double reschedule_s;    /* the job relaunched on its allocation */
    double init_fixed_s;    /* process launch, imports, CUDA contexts */
    double init_per_gpu_s;  /* communicator bootstrap, per GPU of the job */
    double warmup_steps;    /* steps lost to warm-up after a restart */
    char source[1000];
} restart_profile_t;

/* Asynchronous checkpoints: the fixed part of the blocking snapshot, the
 * share of training speed lost while the background write drains, and the
 * data loader's reads that share the node's storage network with it. */
typedef struct {
    double snapshot_fixed_s;
    double drain_slowdown;        /* 0..1 */
    double loader_bytes_per_token;
    char source[1000];
} restart_async_t;

/* Load a profile by name; NULL or "" loads the default for environment
 * (NULL = "dedicated"). Unknown names are ERR_INPUT naming --restart. */
int restart_load(const char *name, const char *environment, restart_profile_t *out, err_t *err);

/* The asynchronous-checkpoint figures. */
int restart_async_load(restart_async_t *out, err_t *err);

/* Process start and communicator initialisation of a job of gpus GPUs. */
double restart_init_s(const restart_profile_t *p, int gpus);

/* The fixed part of a restart after detection, without the checkpoint
 * load: spare swap or relaunch, initialisation and warm-up steps of
 * step_s each. replace: a node was replaced (else relaunched in place). */
double restart_overhead_s(const restart_profile_t *p, int gpus, double step_s, bool replace);

#endif
