/* collbench: NCCL collectives measured the way nccl-tests measures them.
 *
 * all_reduce, all_gather, reduce_scatter, broadcast, send/recv (each rank to
 * the next) and all-to-all (grouped send/recv) in float, sizes from
 * min_bytes to max_bytes by factors of 2, out-of-place, warm-up then iters
 * operations back to back timed with CUDA events, averaged over ranks;
 * busbw by the nccl-tests definitions (profile.h prof_bus_factor).
 *
 * Two ways to run:
 *   one process   (world->size == 1) one thread per visible GPU, one
 *                 communicator per group size measured;
 *   MPI           (mpirun -np N / srun) one rank per process, each on its
 *                 node-local GPU, the ncclUniqueId broadcast by MPI.
 * Each algorithm variant (NCCL's default, NCCL_ALGO=Ring, NCCL_ALGO=Tree;
 * the last two for all-reduce, the only collective with both) gets its own
 * communicator, since NCCL reads NCCL_ALGO when a communicator is created.
 *
 * A watchdog bounds every wait: communicators are non-blocking, and a rank
 * that sees no completion within timeout_s aborts its communicator
 * (ncclCommAbort). The error then names the rank that stalled - the one
 * that issued the fewest operations - instead of hanging forever.
 *
 * Like gpubench, the measurement runs in the CUDA plug-in (collbench.cu)
 * and these functions (collbench.c) forward to it; built without CUDA, or
 * when the plug-in cannot be opened, every function returns ERR_RUNTIME
 * with one line.
 */
#ifndef SCALEPLAN_CALIBRATE_COLLBENCH_H
#define SCALEPLAN_CALIBRATE_COLLBENCH_H

#include <stddef.h>

#include "calibrate/gpubench.h"
#include "calibrate/measurements.h"
#include "common/dist.h"
#include "common/error.h"

#define COLLB_MAX_GROUPS 8
#define COLLB_MAX_ALGOS 3

typedef struct {
    coll_op_t ops[COLL_OP_COUNT];
    int n_ops;
    double min_bytes, max_bytes; /* sizes min_bytes * 2^i up to max_bytes */
    int warmup, iters;
    const char *algos[COLLB_MAX_ALGOS]; /* "default", "ring", "tree" */
    int n_algos;
    int group_sizes[COLLB_MAX_GROUPS];  /* one process: GPUs per group; 0 = all */
    int n_groups;
    double timeout_s; /* watchdog: longest wait for any operation */
} collb_plan_t;

/* The NCCL library version ("2.28.9"). */
int collb_nccl_version(char *buf, size_t cap, err_t *err);

/* Units of progress collb_run reports in total for plan on n_gpus GPUs. */
double collb_work(const collb_plan_t *plan, int n_gpus);

/* Measure the plan. One process: n_local GPUs (ordinals 0..n_local-1).
 * MPI: every rank of world takes part with its node-local GPU, and the
 * series is appended on rank 0 only. Appends one meas_coll_t per op,
 * group size and algorithm to set, and sets set->env nodes, gpus_per_node
 * and ranks. */
int collb_run(const dist_group_t *world, int n_local, const collb_plan_t *plan, meas_set_t *set,
              gpub_progress_fn progress, void *ctx, err_t *err);

/* The plug-in's implementation, exported by scaleplan-cuda.so under
 * COLLB_SYMBOL. */
typedef struct {
    int (*nccl_version)(char *buf, size_t cap, err_t *err);
    double (*work)(const collb_plan_t *plan, int n_gpus);
    int (*run)(const dist_group_t *world, int n_local, const collb_plan_t *plan, meas_set_t *set,
               gpub_progress_fn progress, void *ctx, err_t *err);
} collb_ops_t;

#define COLLB_SYMBOL "scaleplan_collbench"

#endif
