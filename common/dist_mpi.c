/* dist_mpi: the MPI operations of common/dist, built as the plug-in
 * scaleplan-mpi.so (see distInt.h). Only this file includes mpi.h. Every
 * MPI call's status is checked and turned into one line; errors on the
 * world communicator are returned (MPI_ERRORS_RETURN), never fatal. */
#include "common/distInt.h"

#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ------------------------------------------------------------ watchdog */

#define WATCH_TAG 7717 /* heartbeats travel as point-to-point messages on the
                          group's communicator, apart from its collectives */

typedef struct {
    int n_alloc;        /* ranks the arrays hold */
    double timeout_s;
    long seq;           /* collectives this rank has entered on the group */
    long *seen;         /* per group rank: the latest collective it announced */
    long *in, *out;     /* per group rank: receive and send buffers */
    MPI_Request *rreq, *sreq;
    int *world_rank;    /* group rank -> world rank, for messages */
    char what[48];      /* the collective in progress */
} watch_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void watch_free(watch_t *w)
{
    if (!w)
        return;
    bool sends_done = true;
    for (int p = 0; w->rreq && p < w->n_alloc; p++) {
        if (w->rreq[p] != MPI_REQUEST_NULL) {
            MPI_Cancel(&w->rreq[p]);
            MPI_Wait(&w->rreq[p], MPI_STATUS_IGNORE); /* a cancelled receive completes here */
        }
        if (w->sreq[p] != MPI_REQUEST_NULL) {
            int done = 0;
            MPI_Test(&w->sreq[p], &done, MPI_STATUS_IGNORE);
            if (!done) {
                /* a peer that stopped draining (the job is failing): let the
                 * send finish on its own and keep its buffer */
                MPI_Request_free(&w->sreq[p]);
                sends_done = false;
            }
        }
    }
    free(w->seen);
    free(w->in);
    if (sends_done)
        free(w->out);
    free(w->rreq);
    free(w->sreq);
    free(w->world_rank);
    free(w);
}

/* Take in every heartbeat that has arrived. */
static void watch_drain(const dist_group_t *g, watch_t *w)
{
    for (int p = 0; p < g->size; p++) {
        if (p == g->rank)
            continue;
        for (;;) {
            int flag = 0;
            if (w->rreq[p] == MPI_REQUEST_NULL ||
                MPI_Test(&w->rreq[p], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag)
                break;
            if (w->in[p] > w->seen[p])
                w->seen[p] = w->in[p];
            if (MPI_Irecv(&w->in[p], 1, MPI_LONG, p, WATCH_TAG, *(MPI_Comm *)g->comm,
                          &w->rreq[p]) != MPI_SUCCESS) {
                w->rreq[p] = MPI_REQUEST_NULL;
                break;
            }
        }
    }
}

/* This rank enters a collective: tell the others. */
static int watch_enter(const dist_group_t *g, const char *what, err_t *err)
{
    watch_t *w = g->watch;
    if (!w)
        return ERR_OK;
    w->seq++;
    snprintf(w->what, sizeof w->what, "%s", what);
    for (int p = 0; p < g->size; p++) {
        if (p == g->rank)
            continue;
        if (w->sreq[p] != MPI_REQUEST_NULL) {
            int done = 0;
            MPI_TRY(MPI_Test(&w->sreq[p], &done, MPI_STATUS_IGNORE), "Test");
            if (!done)
                continue; /* the peer has not taken the last one: it is stuck */
        }
        w->out[p] = w->seq;
        MPI_TRY(MPI_Isend(&w->out[p], 1, MPI_LONG, p, WATCH_TAG, *(MPI_Comm *)g->comm,
                          &w->sreq[p]),
                "Isend");
    }
    watch_drain(g, w);
    return ERR_OK;
}

static void watch_reason(const dist_group_t *g, double waited_s, char *buf, size_t cap)
{
    watch_t *w = g->watch;
    if (!w) {
        snprintf(buf, cap, "a collective did not complete within %.0f s", waited_s);
        return;
    }
    watch_drain(g, w);
    char who[200] = "";
    int absent = 0;
    for (int p = 0; p < g->size; p++) {
        if (p == g->rank || w->seen[p] >= w->seq)
            continue;
        size_t l = strlen(who);
        if (absent < 8 && l < sizeof who)
            snprintf(who + l, sizeof who - l, "%s%d", absent ? ", " : "", w->world_rank[p]);
        absent++;
    }
    if (absent > 0)
        snprintf(buf, cap,
                 "waited %.0f s in %s (collective %ld of a group of %d) for rank%s %s%s, which "
                 "did not reach it (stopped, hung or far slower; --collective-timeout)",
                 waited_s, w->what, w->seq, g->size, absent > 1 ? "s" : "", who,
                 absent > 8 ? ", ..." : "");
    else
        snprintf(buf, cap,
                 "waited %.0f s in %s (collective %ld of a group of %d): every rank reached it "
                 "but it did not complete (a rank stopped inside it, or the network hung; "
                 "--collective-timeout)",
                 waited_s, w->what, w->seq, g->size);
}

/* Wait for req under the watchdog (plain MPI_Wait without one). */
static int watch_wait(const dist_group_t *g, MPI_Request *req, const char *what, err_t *err)
{
    watch_t *w = g ? g->watch : NULL;
    if (!w) {
        MPI_TRY(MPI_Wait(req, MPI_STATUS_IGNORE), what);
        return ERR_OK;
    }
    double start = now_s();
    for (;;) {
        int done = 0;
        MPI_TRY(MPI_Test(req, &done, MPI_STATUS_IGNORE), what);
        if (done)
            return ERR_OK;
        double t = now_s();
        if (t - start > w->timeout_s) {
            char why[400];
            watch_reason(g, t - start, why, sizeof why);
            return err_set(err, ERR_RUNTIME, "%s", why);
        }
        if (t - start > 1e-3) {
            /* past a millisecond the others are computing: stop spinning */
            struct timespec nap = {0, 100000};
            nanosleep(&nap, NULL);
        }
    }
}

static int watch_start(dist_group_t *g, double timeout_s, err_t *err)
{
    watch_free(g->watch);
    g->watch = NULL;
    if (!(timeout_s > 0) || !g->comm || g->size < 2)
        return ERR_OK;
    watch_t *w = calloc(1, sizeof *w);
    size_t n = (size_t)g->size;
    if (!w || !(w->seen = calloc(n, sizeof *w->seen)) || !(w->in = calloc(n, sizeof *w->in)) ||
        !(w->out = calloc(n, sizeof *w->out)) || !(w->rreq = malloc(n * sizeof *w->rreq)) ||
        !(w->sreq = malloc(n * sizeof *w->sreq)) ||
        !(w->world_rank = malloc(n * sizeof *w->world_rank))) {
        watch_free(w);
        return err_set(err, ERR_RUNTIME, "out of memory for the collective watchdog");
    }
    w->n_alloc = g->size;
    w->timeout_s = timeout_s;
    for (int p = 0; p < g->size; p++)
        w->rreq[p] = w->sreq[p] = MPI_REQUEST_NULL;
    /* world ranks, for messages */
    MPI_Group mine, world;
    int *ranks = malloc(n * sizeof *ranks);
    int rc = ranks ? ERR_OK : err_set(err, ERR_RUNTIME, "out of memory");
    for (int p = 0; ranks && p < g->size; p++)
        ranks[p] = p;
    if (!rc && (MPI_Comm_group(*(MPI_Comm *)g->comm, &mine) != MPI_SUCCESS ||
                MPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS ||
                MPI_Group_translate_ranks(mine, g->size, ranks, world, w->world_rank) !=
                    MPI_SUCCESS ||
                MPI_Group_free(&mine) != MPI_SUCCESS || MPI_Group_free(&world) != MPI_SUCCESS))
        rc = err_set(err, ERR_RUNTIME, "MPI group translation failed");
    free(ranks);
    for (int p = 0; !rc && p < g->size; p++)
        if (p != g->rank && MPI_Irecv(&w->in[p], 1, MPI_LONG, p, WATCH_TAG,
                                      *(MPI_Comm *)g->comm, &w->rreq[p]) != MPI_SUCCESS)
            rc = err_set(err, ERR_RUNTIME, "MPI Irecv failed starting the watchdog");
    if (rc) {
        watch_free(w);
        return rc;
    }
    g->watch = w;
    return ERR_OK;
}

static int watchdog(dist_group_t *g, double timeout_s, err_t *err)
{
    if (!g->comm || g->size < 2)
        return ERR_OK;
    /* every rank posts its receives before anyone announces */
    int rc = watch_start(g, timeout_s, err);
    if (!rc)
        MPI_TRY(MPI_Barrier(*(MPI_Comm *)g->comm), "Barrier");
    return rc;
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
    watch_free(world->watch);
    world->watch = NULL;
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
    /* the parent's watchdog watches its parts too */
    const watch_t *pw = g->watch;
    return pw ? watchdog(out, pw->timeout_s, err) : ERR_OK;
}

static void group_free(dist_group_t *g)
{
    watch_free(g->watch);
    if (g->comm) {
        MPI_Comm *c = g->comm;
        if (*c != MPI_COMM_WORLD)
            MPI_Comm_free(c);
        free(c);
    }
    memset(g, 0, sizeof *g);
    g->size = 1;
}

/* MPI counts are int: large buffers go in pieces. Under the watchdog each
 * piece is a non-blocking call waited for with a deadline. */
static int allreduce(const dist_group_t *g, void *buf, size_t n, dist_type_t type, dist_op_t which,
                     err_t *err)
{
    MPI_Op op = which == DIST_OP_MAX ? MPI_MAX : MPI_SUM;
    char *p = buf;
    size_t es = type_size(type);
    int rc;
    while (n > 0) {
        int count = n > (size_t)INT_MAX / 2 ? INT_MAX / 2 : (int)n;
        MPI_Comm comm = *(MPI_Comm *)g->comm;
        if (g->watch) {
            MPI_Request q;
            if ((rc = watch_enter(g, "an all-reduce", err)))
                return rc;
            MPI_TRY(MPI_Iallreduce(MPI_IN_PLACE, p, count, mpi_type(type), op, comm, &q),
                    "Iallreduce");
            if ((rc = watch_wait(g, &q, "Allreduce", err)))
                return rc;
        } else {
            MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, p, count, mpi_type(type), op, comm), "Allreduce");
        }
        p += (size_t)count * es;
        n -= (size_t)count;
    }
    return ERR_OK;
}

static int bcast(const dist_group_t *g, void *buf, size_t bytes, int root, err_t *err)
{
    char *p = buf;
    int rc;
    while (bytes > 0) {
        int count = bytes > (size_t)INT_MAX / 2 ? INT_MAX / 2 : (int)bytes;
        MPI_Comm comm = *(MPI_Comm *)g->comm;
        if (g->watch) {
            MPI_Request q;
            if ((rc = watch_enter(g, "a broadcast", err)))
                return rc;
            MPI_TRY(MPI_Ibcast(p, count, MPI_BYTE, root, comm, &q), "Ibcast");
            if ((rc = watch_wait(g, &q, "Bcast", err)))
                return rc;
        } else {
            MPI_TRY(MPI_Bcast(p, count, MPI_BYTE, root, comm), "Bcast");
        }
        p += count;
        bytes -= (size_t)count;
    }
    return ERR_OK;
}

static int allgather(const dist_group_t *g, const void *in, void *out, size_t bytes, err_t *err)
{
    if (bytes > (size_t)INT_MAX)
        return err_set(err, ERR_RUNTIME, "allgather of %zu bytes per rank is too large", bytes);
    MPI_Comm comm = *(MPI_Comm *)g->comm;
    if (g->watch) {
        MPI_Request q;
        int rc = watch_enter(g, "an all-gather", err);
        if (rc)
            return rc;
        MPI_TRY(MPI_Iallgather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, comm, &q),
                "Iallgather");
        return watch_wait(g, &q, "Allgather", err);
    }
    MPI_TRY(MPI_Allgather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, comm), "Allgather");
    return ERR_OK;
}

static int barrier(const dist_group_t *g, err_t *err)
{
    MPI_Comm comm = *(MPI_Comm *)g->comm;
    if (g->watch) {
        MPI_Request q;
        int rc = watch_enter(g, "a barrier", err);
        if (rc)
            return rc;
        MPI_TRY(MPI_Ibarrier(comm, &q), "Ibarrier");
        return watch_wait(g, &q, "Barrier", err);
    }
    MPI_TRY(MPI_Barrier(comm), "Barrier");
    return ERR_OK;
}

static int reduce_scatter_sum(const dist_group_t *g, const void *in, void *out, size_t n_per_rank,
                              dist_type_t type, err_t *err)
{
    if (n_per_rank > (size_t)INT_MAX)
        return err_set(err, ERR_RUNTIME, "reduce-scatter of %zu elements per rank is too large",
                       n_per_rank);
    MPI_Comm comm = *(MPI_Comm *)g->comm;
    if (g->watch) {
        MPI_Request q;
        int rc = watch_enter(g, "a reduce-scatter", err);
        if (rc)
            return rc;
        MPI_TRY(MPI_Ireduce_scatter_block(in, out, (int)n_per_rank, mpi_type(type), MPI_SUM,
                                          comm, &q),
                "Ireduce_scatter_block");
        return watch_wait(g, &q, "Reduce_scatter_block", err);
    }
    MPI_TRY(MPI_Reduce_scatter_block(in, out, (int)n_per_rank, mpi_type(type), MPI_SUM, comm),
            "Reduce_scatter_block");
    return ERR_OK;
}

static int iallreduce_sum(const dist_group_t *g, void *buf, size_t n, dist_type_t type,
                          dist_request_t *r, err_t *err)
{
    r->req = NULL;
    r->mpi = &OPS;
    r->g = g;
    if (n > (size_t)INT_MAX)
        return err_set(err, ERR_RUNTIME, "all-reduce of %zu elements in one piece is too large", n);
    int erc = watch_enter(g, "a gradient all-reduce", err);
    if (erc)
        return erc;
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
    int rc = watch_wait(r->g, q, "Wait", err);
    free(q);
    return rc;
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
    .watchdog = watchdog,
    .watch_enter = watch_enter,
    .watch_reason = watch_reason,
};

/* The plug-in's one exported symbol (DIST_MPI_SYMBOL). */
PLUGIN_EXPORT const dist_mpi_ops_t *const scaleplan_dist_mpi = &OPS;
