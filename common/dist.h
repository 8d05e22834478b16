/* dist: processes that work together - the few MPI operations the trainer
 * and the calibrator need, behind one small interface.
 *
 * A job started by a launcher (mpirun, mpiexec, srun) initialises MPI and
 * sees its rank and size; a job started by hand is one process of one rank
 * and needs no MPI at all. Groups split the world (data-parallel and
 * tensor-parallel groups of the trainer). Every call checks MPI's return
 * code and reports it as a one-line error; nothing here exits.
 *
 * The MPI calls live in a plug-in (scaleplan-mpi.so, dist_mpi.c, see
 * common/plugin.h) that dist_start opens only when a launcher started the
 * process: a process started by hand never loads MPI. Built without MPI
 * (no mpicc found at build time, or MPI=0), or when the plug-in cannot be
 * loaded, a single process works as usual and a launched multi-rank job
 * fails at dist_start with a line saying why.
 */
#ifndef SCALEPLAN_COMMON_DIST_H
#define SCALEPLAN_COMMON_DIST_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

typedef enum { DIST_F32 = 0, DIST_F64, DIST_I64, DIST_BYTE } dist_type_t;

struct dist_mpi_ops;

/* A group of ranks. comm is the MPI communicator (NULL in a one-process
 * job); rank and size are this process's place in the group; mpi the
 * plug-in's operations (NULL in a one-process job). */
typedef struct {
    int rank;
    int size;
    void *comm;                     /* heap MPI_Comm, owned; NULL = just this process */
    const struct dist_mpi_ops *mpi; /* NULL = just this process */
    void *watch;                    /* the collective watchdog's state (dist_watchdog), owned */
} dist_group_t;

/* Whether this binary was built with MPI (its MPI plug-in). */
bool dist_have_mpi(void);

/* Whether a launcher started this process (its environment says so). */
bool dist_launched(void);

/* This process's rank among the processes of its node, as the launcher
 * exports it: Open MPI (OMPI_COMM_WORLD_LOCAL_RANK), Slurm (SLURM_LOCALID),
 * MPICH and Intel MPI (MPI_LOCALRANKID), MVAPICH (MV2_COMM_WORLD_LOCAL_RANK)
 * or torchrun (LOCAL_RANK), in that order; -1 when none says (or says
 * something that is not a small non-negative integer). The GPU a rank uses
 * is its local rank modulo the GPUs it sees. */
int dist_local_rank(void);

/* Join the job: with a launcher, MPI_Init and the world group; without,
 * a world of one. ERR_RUNTIME when MPI fails or is missing for a launched
 * multi-rank job. */
int dist_start(int *argc, char ***argv, dist_group_t *world, err_t *err);

/* Leave the job (MPI_Finalize when dist_start initialised MPI). */
void dist_stop(dist_group_t *world);

/* Split g by color (ranks with the same color form a group), ordered by
 * key. out must be freed with dist_group_free. */
int dist_split(const dist_group_t *g, int color, int key, dist_group_t *out, err_t *err);
void dist_group_free(dist_group_t *g);

/* In-place sum of n elements over the group. */
int dist_allreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type, err_t *err);
/* In-place maximum of n elements over the group. */
int dist_allreduce_max(const dist_group_t *g, void *buf, size_t n, dist_type_t type, err_t *err);
/* Broadcast bytes from root to the group. */
int dist_bcast(const dist_group_t *g, void *buf, size_t bytes, int root, err_t *err);
/* Gather bytes from every rank into out (size x bytes) on every rank. */
int dist_allgather(const dist_group_t *g, const void *in, void *out, size_t bytes, err_t *err);
int dist_barrier(const dist_group_t *g, err_t *err);

/* Sum of n_per_rank x size elements in `in`; rank r receives block r of the
 * sum in `out` (n_per_rank elements). */
int dist_reduce_scatter_sum(const dist_group_t *g, const void *in, void *out, size_t n_per_rank,
                            dist_type_t type, err_t *err);

/* A collective in flight. */
typedef struct {
    void *req; /* heap MPI_Request; NULL when nothing is pending */
    const struct dist_mpi_ops *mpi;
    const dist_group_t *g; /* its group (for the watchdog) */
} dist_request_t;

/* Start an in-place sum (n below 2^31 elements) and return at once; the
 * buffer must not be touched until dist_wait. A one-rank group completes
 * immediately. */
int dist_iallreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type,
                        dist_request_t *r, err_t *err);
/* Wait for r (nothing to do when none is pending). */
int dist_wait(dist_request_t *r, err_t *err);

/* The collective watchdog. With timeout_s > 0, every collective of g (and
 * of the groups split from g afterwards) waits at most timeout_s seconds:
 * past that it fails with ERR_RUNTIME and one line naming the ranks (world
 * ranks) that had not reached that collective - stopped, hung, or far
 * slower - or saying that every rank reached it and the collective itself
 * stalled. To tell who arrived, each rank announces to the others, with a
 * small non-blocking message, every collective it enters (n - 1 messages
 * per collective in a group of n). 0 turns it off (plain blocking MPI
 * calls). Collective over g; nothing to do in a one-process group. */
int dist_watchdog(dist_group_t *g, double timeout_s, err_t *err);

/* For collectives run outside this module on g's ranks (NCCL): announce
 * entering one (what names it in messages), and after it timed out, the
 * one-line reason (as dist_watchdog's) in buf. Without a watchdog on g,
 * enter does nothing and the reason says only that it timed out. */
int dist_watch_enter(const dist_group_t *g, const char *what, err_t *err);
void dist_watch_reason(const dist_group_t *g, double waited_s, char *buf, size_t cap);

/* Stop every rank of the job now (a failed rank must not leave the others
 * waiting in a collective). Used only from cli/. */
void dist_abort(const dist_group_t *g, int code);

#endif
