#include "common/dist.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Environment variables that launchers set in every process they start. */
static const char *const LAUNCHER_VARS[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                            "MPI_LOCALNRANKS", "SLURM_STEP_NUM_TASKS"};

bool dist_launched(void)
{
    for (size_t i = 0; i < sizeof LAUNCHER_VARS / sizeof LAUNCHER_VARS[0]; i++)
        if (getenv(LAUNCHER_VARS[i]))
            return true;
    return false;
}

/* Everything below is the one place MPI and its absence differ. */
#ifdef SCALEPLAN_HAVE_MPI
#include <mpi.h>

bool dist_have_mpi(void) { return true; }

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

static size_t type_size(dist_type_t t)
{
    switch (t) {
    case DIST_F32: return 4;
    case DIST_F64: return 8;
    case DIST_I64: return 8;
    default: return 1;
    }
}

int dist_start(int *argc, char ***argv, dist_group_t *world, err_t *err)
{
    memset(world, 0, sizeof *world);
    world->size = 1;
    if (!dist_launched())
        return ERR_OK;
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
    MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &world->rank), "Comm_rank");
    MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &world->size), "Comm_size");
    return ERR_OK;
}

void dist_stop(dist_group_t *world)
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

int dist_split(const dist_group_t *g, int color, int key, dist_group_t *out, err_t *err)
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
    MPI_TRY(MPI_Comm_rank(*c, &out->rank), "Comm_rank");
    MPI_TRY(MPI_Comm_size(*c, &out->size), "Comm_size");
    return ERR_OK;
}

void dist_group_free(dist_group_t *g)
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
static int allreduce(const dist_group_t *g, void *buf, size_t n, dist_type_t type, MPI_Op op,
                     err_t *err)
{
    if (!g->comm || g->size == 1)
        return ERR_OK;
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

int dist_allreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type, err_t *err)
{
    return allreduce(g, buf, n, type, MPI_SUM, err);
}

int dist_allreduce_max(const dist_group_t *g, void *buf, size_t n, dist_type_t type, err_t *err)
{
    return allreduce(g, buf, n, type, MPI_MAX, err);
}

int dist_bcast(const dist_group_t *g, void *buf, size_t bytes, int root, err_t *err)
{
    if (!g->comm || g->size == 1)
        return ERR_OK;
    char *p = buf;
    while (bytes > 0) {
        int count = bytes > (size_t)INT_MAX / 2 ? INT_MAX / 2 : (int)bytes;
        MPI_TRY(MPI_Bcast(p, count, MPI_BYTE, root, *(MPI_Comm *)g->comm), "Bcast");
        p += count;
        bytes -= (size_t)count;
    }
    return ERR_OK;
}

int dist_allgather(const dist_group_t *g, const void *in, void *out, size_t bytes, err_t *err)
{
    if (!g->comm || g->size == 1) {
        memmove(out, in, bytes);
        return ERR_OK;
    }
    if (bytes > (size_t)INT_MAX)
        return err_set(err, ERR_RUNTIME, "allgather of %zu bytes per rank is too large", bytes);
    MPI_TRY(MPI_Allgather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE,
                          *(MPI_Comm *)g->comm),
            "Allgather");
    return ERR_OK;
}

int dist_barrier(const dist_group_t *g, err_t *err)
{
    if (!g->comm || g->size == 1)
        return ERR_OK;
    MPI_TRY(MPI_Barrier(*(MPI_Comm *)g->comm), "Barrier");
    return ERR_OK;
}

int dist_reduce_scatter_sum(const dist_group_t *g, const void *in, void *out, size_t n_per_rank,
                            dist_type_t type, err_t *err)
{
    if (!g->comm || g->size == 1) {
        memmove(out, in, n_per_rank * type_size(type));
        return ERR_OK;
    }
    if (n_per_rank > (size_t)INT_MAX)
        return err_set(err, ERR_RUNTIME, "reduce-scatter of %zu elements per rank is too large",
                       n_per_rank);
    MPI_TRY(MPI_Reduce_scatter_block(in, out, (int)n_per_rank, mpi_type(type), MPI_SUM,
                                     *(MPI_Comm *)g->comm),
            "Reduce_scatter_block");
    return ERR_OK;
}

int dist_iallreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type,
                        dist_request_t *r, err_t *err)
{
    r->req = NULL;
    if (!g->comm || g->size == 1)
        return ERR_OK;
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

int dist_wait(dist_request_t *r, err_t *err)
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

void dist_abort(const dist_group_t *g, int code)
{
    if (g && g->comm)
        MPI_Abort(MPI_COMM_WORLD, code);
}

#else /* built without MPI: one process, one rank */

/* The job size the launcher announced, 1 when none or unreadable. */
static int launched_size(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_SIZE");
    if (!v)
        v = getenv("PMI_SIZE");
    if (!v)
        v = getenv("SLURM_STEP_NUM_TASKS");
    int n = v ? atoi(v) : 1;
    return n > 0 ? n : 1;
}


bool dist_have_mpi(void) { return false; }

int dist_start(int *argc, char ***argv, dist_group_t *world, err_t *err)
{
    (void)argc;
    (void)argv;
    memset(world, 0, sizeof *world);
    world->size = 1;
    if (launched_size() > 1)
        return err_set(err, ERR_RUNTIME,
                       "started as one of %d ranks, but scaleplan was built without MPI; install "
                       "libopenmpi-dev (make deps) and rebuild",
                       launched_size());
    return ERR_OK;
}

void dist_stop(dist_group_t *world) { (void)world; }

int dist_split(const dist_group_t *g, int color, int key, dist_group_t *out, err_t *err)
{
    (void)g;
    (void)color;
    (void)key;
    (void)err;
    memset(out, 0, sizeof *out);
    out->size = 1;
    return ERR_OK;
}

void dist_group_free(dist_group_t *g)
{
    memset(g, 0, sizeof *g);
    g->size = 1;
}

int dist_allreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type, err_t *err)
{
    (void)g, (void)buf, (void)n, (void)type, (void)err;
    return ERR_OK;
}

int dist_allreduce_max(const dist_group_t *g, void *buf, size_t n, dist_type_t type, err_t *err)
{
    (void)g, (void)buf, (void)n, (void)type, (void)err;
    return ERR_OK;
}

int dist_bcast(const dist_group_t *g, void *buf, size_t bytes, int root, err_t *err)
{
    (void)g, (void)buf, (void)bytes, (void)root, (void)err;
    return ERR_OK;
}

int dist_allgather(const dist_group_t *g, const void *in, void *out, size_t bytes, err_t *err)
{
    (void)g, (void)err;
    memmove(out, in, bytes);
    return ERR_OK;
}

int dist_barrier(const dist_group_t *g, err_t *err)
{
    (void)g, (void)err;
    return ERR_OK;
}

int dist_reduce_scatter_sum(const dist_group_t *g, const void *in, void *out, size_t n_per_rank,
                            dist_type_t type, err_t *err)
{
    (void)g, (void)err;
    size_t es = type == DIST_F32 ? 4 : type == DIST_BYTE ? 1 : 8;
    memmove(out, in, n_per_rank * es);
    return ERR_OK;
}

int dist_iallreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type,
                        dist_request_t *r, err_t *err)
{
    (void)g, (void)buf, (void)n, (void)type, (void)err;
    r->req = NULL;
    return ERR_OK;
}

int dist_wait(dist_request_t *r, err_t *err)
{
    (void)err;
    r->req = NULL;
    return ERR_OK;
}

void dist_abort(const dist_group_t *g, int code) { (void)g, (void)code; }

#endif

int dist_local_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                        "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                                        "LOCAL_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v)
            continue;
        char *end;
        long r = strtol(v, &end, 10);
        if (*end == '\0' && r >= 0 && r < 1 << 20)
            return (int)r;
    }
    return -1;
}
