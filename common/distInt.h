/* distInt: private to common/dist.c and common/dist_mpi.c (only they
 * include it): the operations of the MPI half of common/dist, built as the plug-in
 * scaleplan-mpi.so (dist_mpi.c) and opened by dist_start only when a
 * launcher started the process. dist.c handles groups of one itself and
 * calls these operations only for groups of two or more ranks (and for
 * start, stop and abort of a launched job). Each returns 0 or fills err
 * with one line, as the dist.h function of the same name.
 */
#ifndef SCALEPLAN_COMMON_DISTINT_H
#define SCALEPLAN_COMMON_DISTINT_H

#include "common/dist.h"

typedef enum { DIST_OP_SUM = 0, DIST_OP_MAX } dist_op_t;

typedef struct dist_mpi_ops {
    /* MPI_Init (unless already done) and the world group; sets world->mpi */
    int (*start)(int *argc, char ***argv, dist_group_t *world, err_t *err);
    void (*stop)(dist_group_t *world);
    int (*split)(const dist_group_t *g, int color, int key, dist_group_t *out, err_t *err);
    void (*group_free)(dist_group_t *g);
    int (*allreduce)(const dist_group_t *g, void *buf, size_t n, dist_type_t type, dist_op_t op,
                     err_t *err);
    int (*bcast)(const dist_group_t *g, void *buf, size_t bytes, int root, err_t *err);
    int (*allgather)(const dist_group_t *g, const void *in, void *out, size_t bytes, err_t *err);
    int (*barrier)(const dist_group_t *g, err_t *err);
    int (*reduce_scatter_sum)(const dist_group_t *g, const void *in, void *out, size_t n_per_rank,
                              dist_type_t type, err_t *err);
    int (*iallreduce_sum)(const dist_group_t *g, void *buf, size_t n, dist_type_t type,
                          dist_request_t *r, err_t *err);
    int (*wait)(dist_request_t *r, err_t *err);
    void (*abort)(const dist_group_t *g, int code);
    /* the collective watchdog (dist_watchdog, dist_watch_enter, dist_watch_reason) */
    int (*watchdog)(dist_group_t *g, double timeout_s, err_t *err);
    int (*watch_enter)(const dist_group_t *g, const char *what, err_t *err);
    void (*watch_reason)(const dist_group_t *g, double waited_s, char *buf, size_t cap);
} dist_mpi_ops_t;

/* The name under which scaleplan-mpi.so exports its dist_mpi_ops_t. */
#define DIST_MPI_SYMBOL "scaleplan_dist_mpi"

#endif
