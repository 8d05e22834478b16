#include "common/dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "common/distInt.h"
#include "common/plugin.h"

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

bool dist_have_mpi(void)
{
    return SCALEPLAN_HAVE_MPI != 0;
}

static size_t type_size(dist_type_t t)
{
    return t == DIST_F32 ? 4 : t == DIST_BYTE ? 1 : 8;
}

/* Whether g spans more than this process (only then is MPI involved). */
static bool many(const dist_group_t *g)
{
    return g && g->mpi && g->size > 1;
}

int dist_start(int *argc, char ***argv, dist_group_t *world, err_t *err)
{
    memset(world, 0, sizeof *world);
    world->size = 1;
    if (!dist_launched())
        return ERR_OK; /* started by hand: one rank, MPI never loaded */
    int n = launched_size();
    if (!SCALEPLAN_HAVE_MPI) {
        if (n > 1)
            return err_set(err, ERR_RUNTIME,
                           "started as one of %d ranks, but scaleplan was built without MPI; "
                           "install libopenmpi-dev (make deps) and rebuild with MPI=1",
                           n);
        return ERR_OK;
    }
    const void *sym = NULL;
    err_t why;
    err_clear(&why);
    /* global: Open MPI's components resolve libmpi's symbols when loaded */
    if (plugin_symbol(PLUGIN_MPI, DIST_MPI_SYMBOL, PLUGIN_GLOBAL,
                      "install Open MPI (libopenmpi) or run one process without mpirun", &sym,
                      &why)) {
        if (n > 1)
            return err_set(err, ERR_RUNTIME, "started as one of %d ranks, but MPI cannot be used: %s",
                           n, why.msg);
        return ERR_OK; /* a launched job of one rank runs without MPI */
    }
    const dist_mpi_ops_t *mpi = *(const dist_mpi_ops_t *const *)sym;
    return mpi->start(argc, argv, world, err);
}

void dist_stop(dist_group_t *world)
{
    if (world->mpi)
        world->mpi->stop(world);
}

int dist_split(const dist_group_t *g, int color, int key, dist_group_t *out, err_t *err)
{
    if (g->mpi)
        return g->mpi->split(g, color, key, out, err);
    memset(out, 0, sizeof *out);
    out->size = 1;
    return ERR_OK;
}

void dist_group_free(dist_group_t *g)
{
    if (g->mpi) {
        g->mpi->group_free(g);
        return;
    }
    memset(g, 0, sizeof *g);
    g->size = 1;
}

int dist_allreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type, err_t *err)
{
    return many(g) ? g->mpi->allreduce(g, buf, n, type, DIST_OP_SUM, err) : ERR_OK;
}

int dist_allreduce_max(const dist_group_t *g, void *buf, size_t n, dist_type_t type, err_t *err)
{
    return many(g) ? g->mpi->allreduce(g, buf, n, type, DIST_OP_MAX, err) : ERR_OK;
}

int dist_bcast(const dist_group_t *g, void *buf, size_t bytes, int root, err_t *err)
{
    return many(g) ? g->mpi->bcast(g, buf, bytes, root, err) : ERR_OK;
}

int dist_allgather(const dist_group_t *g, const void *in, void *out, size_t bytes, err_t *err)
{
    if (many(g))
        return g->mpi->allgather(g, in, out, bytes, err);
    memmove(out, in, bytes);
    return ERR_OK;
}

int dist_barrier(const dist_group_t *g, err_t *err)
{
    return many(g) ? g->mpi->barrier(g, err) : ERR_OK;
}

int dist_reduce_scatter_sum(const dist_group_t *g, const void *in, void *out, size_t n_per_rank,
                            dist_type_t type, err_t *err)
{
    if (many(g))
        return g->mpi->reduce_scatter_sum(g, in, out, n_per_rank, type, err);
    memmove(out, in, n_per_rank * type_size(type));
    return ERR_OK;
}

int dist_iallreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type,
                        dist_request_t *r, err_t *err)
{
    r->req = NULL;
    r->mpi = NULL;
    r->g = g;
    return many(g) ? g->mpi->iallreduce_sum(g, buf, n, type, r, err) : ERR_OK;
}

int dist_wait(dist_request_t *r, err_t *err)
{
    if (!r->req || !r->mpi) {
        r->req = NULL;
        return ERR_OK;
    }
    return r->mpi->wait(r, err);
}

void dist_abort(const dist_group_t *g, int code)
{
    if (g && g->mpi)
        g->mpi->abort(g, code);
}

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

int dist_watchdog(dist_group_t *g, double timeout_s, err_t *err)
{
    return many(g) ? g->mpi->watchdog(g, timeout_s, err) : ERR_OK;
}

int dist_watch_enter(const dist_group_t *g, const char *what, err_t *err)
{
    return many(g) ? g->mpi->watch_enter(g, what, err) : ERR_OK;
}

void dist_watch_reason(const dist_group_t *g, double waited_s, char *buf, size_t cap)
{
    if (many(g))
        g->mpi->watch_reason(g, waited_s, buf, cap);
    else
        snprintf(buf, cap, "a collective did not complete within %.0f s", waited_s);
}
