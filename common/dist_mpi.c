/* dist_mpi: the MPI operations of common/dist, built as the plug-in
 * scaleplan-mpi.so (see dist_mpi.h). Only this file includes mpi.h. Every
 * MPI call's status is checked and turned into one line; errors on the
 * world communicator are returned (MPI_ERRORS_RETURN), never fatal. */
#include "common/dist_mpi.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "common/plugin.h"

static int mpi_fail(err_t *err, int code, const char *what)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(code, text, &len);
    return err_set(err, ERR_RUNTIME, "MPI %s failed: %s", what, text);
}

#define MPI_TRY(call, what)                                                                    \
    do {                                                                                       \
        int mpi_rc_ = (call);                                                                  \
        if (mpi_rc_ != MPI_SUCCESS)                                                            \
            return mpi_fail(err, mpi_rc_, what);                                               \
    } while (0)

static MPI_Datatype mpi_type(dist_type_t t)
{
    switch (t) {
    case DIST_F32: return MPI_FLOAT;
    case DIST_F64: return MPI_DOUBLE;
    case DIST_I64: return MPI_INT64_T;
    default: return MPI_BYTE;
    }
}

static const dist_mpi_ops_t OPS;

static size_t type_size(dist_type_t t)
{
    switch (t) {
    case DIST_F32: return 4;
    case DIST_F64: return 8;
    case DIST_I64: return 8;
    default: return 1;
    }
}

static int start(int *argc, char ***argv, dist_group_t *world, err_t *err)
{
    memset(world, 0, sizeof *world);
    world->size = 1;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
        MPI_TRY(MPI_Init(argc, argv), "MPI_Init");
    /* errors come back as codes, so a failure is reported, not fatal */
    MPI_TRY(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "set_errhandler");
    MPI_Comm *c = malloc(sizeof *c);
    if (!c)
        return err_set(err, ERR_RUNTIME, "out of memory");
    *c = MPI_COMM_WORLD;
    world->comm = c;
    world->mpi = &OPS;
    MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &world->rank), "Comm_rank");
    MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &world->size), "Comm_size");
    return ERR_OK;
}

static void stop(dist_group_t *world)
{
    if (world->comm) {
        free(world->comm);
        world->comm = NULL;
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized)
            MPI_Finalize();
    }
}

static int split(const dist_group_t *g, int color, int key, dist_group_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    out->size = 1;
    if (!g->comm)
        return ERR_OK;
    MPI_Comm *c = malloc(sizeof *c);
    if (!c)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = MPI_Comm_split(*(MPI_Comm *)g->comm, color, key, c);
    if (rc != MPI_SUCCESS) {
        free(c);
        return mpi_fail(err, rc, "Comm_split");
    }
    out->comm = c;
    out->mpi = &OPS;
    MPI_TRY(MPI_Comm_rank(*c, &out->rank), "Comm_rank");
    MPI_TRY(MPI_Comm_size(*c, &out->size), "Comm_size");
    return ERR_OK;
}

static void group_free(dist_group_t *g)
{
    if (g->comm) {
        MPI_Comm *c = g->comm;
        if (*c != MPI_COMM_WORLD)
            MPI_Comm_free(c);
        free(c);
    }
    memset(g, 0, sizeof *g);
    g->size = 1;
}

/* MPI counts are int: large buffers go in pieces. */
static int allreduce(const dist_group_t *g, void *buf, size_t n, dist_type_t type, dist_op_t which,
                     err_t *err)
{
    MPI_Op op = which == DIST_OP_MAX ? MPI_MAX : MPI_SUM;
    char *p = buf;
    size_t es = type_size(type);
    while (n > 0) {
        int count = n > (size_t)INT_MAX / 2 ? INT_MAX / 2 : (int)n;
        MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, p, count, mpi_type(type), op, *(MPI_Comm *)g->comm),
                "Allreduce");
        p += (size_t)count * es;
        n -= (size_t)count;
    }
    return ERR_OK;
}

static int bcast(const dist_group_t *g, void *buf, size_t bytes, int root, err_t *err)
{
    char *p = buf;
    while (bytes > 0) {
        int count = bytes > (size_t)INT_MAX / 2 ? INT_MAX / 2 : (int)bytes;
        MPI_TRY(MPI_Bcast(p, count, MPI_BYTE, root, *(MPI_Comm *)g->comm), "Bcast");
        p += count;
        bytes -= (size_t)count;
    }
    return ERR_OK;
}

static int allgather(const dist_group_t *g, const void *in, void *out, size_t bytes, err_t *err)
{
    if (bytes > (size_t)INT_MAX)
        return err_set(err, ERR_RUNTIME, "allgather of %zu bytes per rank is too large", bytes);
    MPI_TRY(MPI_Allgather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE,
                          *(MPI_Comm *)g->comm),
            "Allgather");
    return ERR_OK;
}

static int barrier(const dist_group_t *g, err_t *err)
{
    MPI_TRY(MPI_Barrier(*(MPI_Comm *)g->comm), "Barrier");
    return ERR_OK;
}

static int reduce_scatter_sum(const dist_group_t *g, const void *in, void *out, size_t n_per_rank,
                              dist_type_t type, err_t *err)
{
    if (n_per_rank > (size_t)INT_MAX)
        return err_set(err, ERR_RUNTIME, "reduce-scatter of %zu elements per rank is too large",
                       n_per_rank);
    MPI_TRY(MPI_Reduce_scatter_block(in, out, (int)n_per_rank, mpi_type(type), MPI_SUM,
                                     *(MPI_Comm *)g->comm),
            "Reduce_scatter_block");
    return ERR_OK;
}

static int iallreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type,
                          dist_request_t *r, err_t *err)
{
    r->req = NULL;
    r->mpi = &OPS;
    if (n > (size_t)INT_MAX)
        return err_set(err, ERR_RUNTIME, "all-reduce of %zu elements in one piece is too large", n);
    MPI_Request *q = malloc(sizeof *q);
    if (!q)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, mpi_type(type), MPI_SUM,
                            *(MPI_Comm *)g->comm, q);
    if (rc != MPI_SUCCESS) {
        free(q);
        return mpi_fail(err, rc, "Iallreduce");
    }
    r->req = q;
    return ERR_OK;
}

static int wait_request(dist_request_t *r, err_t *err)
{
    if (!r->req)
        return ERR_OK;
    MPI_Request *q = r->req;
    r->req = NULL;
    int rc = MPI_Wait(q, MPI_STATUS_IGNORE);
    free(q);
    if (rc != MPI_SUCCESS)
        return mpi_fail(err, rc, "Wait");
    return ERR_OK;
}

static void abort_job(const dist_group_t *g, int code)
{
    if (g && g->comm)
        MPI_Abort(MPI_COMM_WORLD, code);
}

static const dist_mpi_ops_t OPS = {
    .start = start,
    .stop = stop,
    .split = split,
    .group_free = group_free,
    .allreduce = allreduce,
    .bcast = bcast,
    .allgather = allgather,
    .barrier = barrier,
    .reduce_scatter_sum = reduce_scatter_sum,
    .iallreduce_sum = iallreduce_sum,
    .wait = wait_request,
    .abort = abort_job,
};

/* The plug-in's one exported symbol (DIST_MPI_SYMBOL). */
PLUGIN_EXPORT const dist_mpi_ops_t *const scaleplan_dist_mpi = &OPS;
