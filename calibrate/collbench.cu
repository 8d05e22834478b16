/* collbench: NCCL collectives with a watchdog (see collbench.h).
 *
 * Each rank runs the same sequence of steps - set up, then one step per
 * collective and size - and after every step the ranks exchange a status
 * record (threads through shared memory, processes through MPI). Every
 * wait inside a step is bounded (non-blocking communicators, polled with
 * a deadline), so every rank reaches every exchange; when any rank failed
 * or timed out, all of them abort their communicators and return the
 * same one-line error naming the rank that stalled.
 */
#include <cuda_runtime.h>
#include <nccl.h>

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include "calibrate/collbench.h"
#include "common/dist.h"
#include "common/plugin.h"
}

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "scaleplan's NCCL calibration needs NCCL 2.14 or later (non-blocking communicators)"
#endif

enum { ST_OK = 0, ST_FAILED, ST_TIMEOUT, ST_ABORTED, ST_SKIPPED };

/* What a rank tells the others after each step. */
typedef struct {
    int state;
    int device;
    long launched;  /* NCCL operations issued so far */
    long completed; /* operations known complete */
    double time_us; /* per operation, this step */
    char host[64];
    char msg[240];
} status_t;

typedef struct group group_t;

/* One rank's resources. */
typedef struct {
    int rank, n, device;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t e0, e1;
    float *send, *recv;
    size_t buf_bytes;
    long launched, completed;
    double timeout_s;
    volatile int *abort_flag; /* threads: set when any rank fails; NULL under MPI */
    char host[64];
    group_t *group;           /* threads: the shared exchange */
    const dist_group_t *world; /* MPI: the exchange */
} rank_t;

/* Threads of one communicator. */
struct group {
    int n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count;
    unsigned gen;
    int go; /* 0 wait, 1 run, -1 abandon (a thread could not start) */
    volatile int abort_flag;
    status_t *slots;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap(void)
{
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

static void set_status(status_t *st, int state, const rank_t *r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set_status(status_t *st, int state, const rank_t *r, const char *fmt, ...)
{
    st->state = state;
    st->launched = r->launched;
    st->completed = r->completed;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ exchange */

static void barrier(group_t *g)
{
    pthread_mutex_lock(&g->mu);
    unsigned gen = g->gen;
    if (++g->count == g->n) {
        g->count = 0;
        g->gen++;
        pthread_cond_broadcast(&g->cv);
    } else {
        while (gen == g->gen)
            pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

/* Everyone's status (all[n]) from everyone's mine. ERR_RUNTIME only when
 * MPI itself fails. */
static int exchange(rank_t *r, status_t *mine, status_t *all, err_t *err)
{
    mine->launched = r->launched;
    mine->completed = r->completed;
    mine->device = r->device;
    snprintf(mine->host, sizeof mine->host, "%s", r->host);
    if (r->world)
        return dist_allgather(r->world, mine, all, sizeof *mine, err);
    group_t *g = r->group;
    g->slots[r->rank] = *mine;
    barrier(g);
    memcpy(all, g->slots, (size_t)r->n * sizeof *all);
    barrier(g); /* nobody writes a slot before everyone has read */
    return ERR_OK;
}

/* One line from everyone's status after a failed step. */
static void compose_error(const status_t *all, int n, const char *what, double timeout_s,
                          err_t *err)
{
    for (int i = 0; i < n; i++)
        if (all[i].state == ST_FAILED) {
            err_set(err, ERR_RUNTIME, "%s: rank %d (%s, GPU %d): %s; communicators aborted", what,
                    i, all[i].host, all[i].device, all[i].msg);
            return;
        }
    long lo = -1, hi = -1;
    for (int i = 0; i < n; i++) {
        if (lo < 0 || all[i].launched < lo)
            lo = all[i].launched;
        if (all[i].launched > hi)
            hi = all[i].launched;
    }
    if (lo < hi) {
        char who[160] = "";
        int k = 0;
        for (int i = 0; i < n && k < 8; i++)
            if (all[i].launched == lo) {
                size_t l = strlen(who);
                snprintf(who + l, sizeof who - l, "%s%d (%s, GPU %d)", k ? ", " : "", i,
                         all[i].host, all[i].device);
                k++;
            }
        err_set(err, ERR_RUNTIME,
                "%s: rank%s %s stalled: issued %ld NCCL operations while others issued %ld, and "
                "nothing completed within %.0f s; communicators aborted (ncclCommAbort)",
                what, k > 1 ? "s" : "", who, lo, hi, timeout_s);
        return;
    }
    for (int i = 0; i < n; i++)
        if (all[i].state == ST_TIMEOUT) {
            err_set(err, ERR_RUNTIME,
                    "%s: no completion within %.0f s on rank %d (%s, GPU %d) although all %d "
                    "ranks issued %ld operations: the communicator hung (%s); communicators "
                    "aborted (ncclCommAbort)",
                    what, timeout_s, i, all[i].host, all[i].device, n, lo, all[i].msg);
            return;
        }
    err_set(err, ERR_RUNTIME, "%s: aborted", what);
}

/* ------------------------------------------------------------ waits */

static bool aborted(const rank_t *r)
{
    return r->abort_flag && __atomic_load_n(r->abort_flag, __ATOMIC_ACQUIRE);
}

static void raise_abort(rank_t *r)
{
    if (r->abort_flag)
        __atomic_store_n(r->abort_flag, 1, __ATOMIC_RELEASE);
}

/* After an NCCL call: wait (bounded) while the communicator is still
 * in progress. ST_OK or the failure in st. */
static int settle(rank_t *r, ncclResult_t res, const char *what, status_t *st)
{
    double deadline = now_s() + r->timeout_s;
    while (res == ncclInProgress) {
        ncclResult_t q = ncclCommGetAsyncError(r->comm, &res);
        if (q != ncclSuccess) {
            res = q;
            break;
        }
        if (res != ncclInProgress)
            break;
        if (aborted(r)) {
            set_status(st, ST_ABORTED, r, "%s: another rank failed", what);
            return ST_ABORTED;
        }
        if (now_s() > deadline) {
            set_status(st, ST_TIMEOUT, r, "%s still in progress after %.0f s", what, r->timeout_s);
            return ST_TIMEOUT;
        }
        nap();
    }
    if (res != ncclSuccess) {
        set_status(st, ST_FAILED, r, "%s: %s (%s)", what, ncclGetErrorString(res),
                   ncclGetLastError(r->comm));
        return ST_FAILED;
    }
    return ST_OK;
}

/* Wait (bounded) for an event on the rank's stream, watching NCCL's
 * asynchronous errors meanwhile. */
static int wait_event(rank_t *r, cudaEvent_t ev, const char *what, status_t *st)
{
    double deadline = now_s() + r->timeout_s;
    for (;;) {
        cudaError_t q = cudaEventQuery(ev);
        if (q == cudaSuccess)
            return ST_OK;
        if (q != cudaErrorNotReady) {
            set_status(st, ST_FAILED, r, "%s: %s", what, cudaGetErrorString(q));
            return ST_FAILED;
        }
        ncclResult_t a = ncclSuccess;
        if (ncclCommGetAsyncError(r->comm, &a) != ncclSuccess ||
            (a != ncclSuccess && a != ncclInProgress)) {
            set_status(st, ST_FAILED, r, "%s: %s (%s)", what, ncclGetErrorString(a),
                       ncclGetLastError(r->comm));
            return ST_FAILED;
        }
        if (aborted(r)) {
            set_status(st, ST_ABORTED, r, "%s: another rank failed", what);
            return ST_ABORTED;
        }
        if (now_s() > deadline) {
            set_status(st, ST_TIMEOUT, r, "waiting for %s", what);
            return ST_TIMEOUT;
        }
        nap();
    }
}

/* ------------------------------------------------------------ operations */

/* Elements per call and nccl-tests bytes of a nominal size S: the whole
 * buffer for all-reduce, broadcast, send/recv; per rank (all-gather,
 * reduce-scatter) or per peer (all-to-all) for the others, rounded down
 * to whole elements for every rank. 0 = too small for this group. */
static size_t op_count(coll_op_t op, double S, int n, double *bytes)
{
    size_t elems = (size_t)(S / sizeof(float));
    size_t count;
    switch (op) {
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL:
        count = elems / (size_t)n;
        *bytes = (double)(count * (size_t)n * sizeof(float));
        return count;
    default:
        count = elems;
        *bytes = (double)(count * sizeof(float));
        return count;
    }
}

static ncclResult_t issue(rank_t *r, coll_op_t op, size_t count)
{
    ncclResult_t res = ncclSuccess, first = ncclSuccess;
    switch (op) {
    case COLL_ALL_REDUCE:
        return ncclAllReduce(r->send, r->recv, count, ncclFloat, ncclSum, r->comm, r->stream);
    case COLL_ALL_GATHER:
        return ncclAllGather(r->send, r->recv, count, ncclFloat, r->comm, r->stream);
    case COLL_REDUCE_SCATTER:
        return ncclReduceScatter(r->send, r->recv, count, ncclFloat, ncclSum, r->comm, r->stream);
    case COLL_BROADCAST:
        return ncclBroadcast(r->send, r->recv, count, ncclFloat, 0, r->comm, r->stream);
    case COLL_SEND_RECV:
        /* each rank to the next, as nccl-tests' sendrecv_perf */
        if ((res = ncclGroupStart()) != ncclSuccess)
            return res;
        first = ncclSend(r->send, count, ncclFloat, (r->rank + 1) % r->n, r->comm, r->stream);
        res = ncclRecv(r->recv, count, ncclFloat, (r->rank - 1 + r->n) % r->n, r->comm, r->stream);
        if (first == ncclSuccess)
            first = res;
        res = ncclGroupEnd();
        return first != ncclSuccess ? first : res;
    default:
        /* all-to-all as grouped send/recv (nccl-tests' alltoall_perf) */
        if ((res = ncclGroupStart()) != ncclSuccess)
            return res;
        for (int p = 0; p < r->n; p++) {
            res = ncclSend(r->send + (size_t)p * count, count, ncclFloat, p, r->comm, r->stream);
            if (first == ncclSuccess)
                first = res;
            res = ncclRecv(r->recv + (size_t)p * count, count, ncclFloat, p, r->comm, r->stream);
            if (first == ncclSuccess)
                first = res;
        }
        res = ncclGroupEnd();
        return first != ncclSuccess ? first : res;
    }
}

/* Issue one operation and wait until NCCL accepted it. */
static int issue_settled(rank_t *r, coll_op_t op, size_t count, status_t *st)
{
    char what[64];
    snprintf(what, sizeof what, "%s of %zu floats", prof_coll_name(op), count);
    int s = settle(r, issue(r, op, count), what, st);
    if (s == ST_OK)
        r->launched++;
    return s;
}

/* One step: warm-up, then iters operations timed with events. */
static int measure_step(rank_t *r, coll_op_t op, size_t count, int warmup, int iters,
                        status_t *st)
{
    int s;
    float ms = 0;
    cudaError_t e;
    char what[96];
    snprintf(what, sizeof what, "%s of %zu floats", prof_coll_name(op), count);
    for (int i = 0; i < warmup; i++)
        if ((s = issue_settled(r, op, count, st)) != ST_OK)
            return s;
    if ((e = cudaEventRecord(r->e1, r->stream)) != cudaSuccess) {
        set_status(st, ST_FAILED, r, "cudaEventRecord: %s", cudaGetErrorString(e));
        return ST_FAILED;
    }
    if ((s = wait_event(r, r->e1, what, st)) != ST_OK)
        return s;
    r->completed += warmup;
    if ((e = cudaEventRecord(r->e0, r->stream)) != cudaSuccess) {
        set_status(st, ST_FAILED, r, "cudaEventRecord: %s", cudaGetErrorString(e));
        return ST_FAILED;
    }
    for (int i = 0; i < iters; i++)
        if ((s = issue_settled(r, op, count, st)) != ST_OK)
            return s;
    if ((e = cudaEventRecord(r->e1, r->stream)) != cudaSuccess) {
        set_status(st, ST_FAILED, r, "cudaEventRecord: %s", cudaGetErrorString(e));
        return ST_FAILED;
    }
    if ((s = wait_event(r, r->e1, what, st)) != ST_OK)
        return s;
    r->completed += iters;
    if ((e = cudaEventElapsedTime(&ms, r->e0, r->e1)) != cudaSuccess) {
        set_status(st, ST_FAILED, r, "cudaEventElapsedTime: %s", cudaGetErrorString(e));
        return ST_FAILED;
    }
    st->state = ST_OK;
    st->time_us = (double)ms * 1e3 / iters;
    return ST_OK;
}

/* CUDA resources and the non-blocking communicator of one rank. */
static int setup_rank(rank_t *r, const ncclUniqueId *id, status_t *st)
{
    cudaError_t e;
    const char *call = "";
#define SETUP(c)                                                                               \
    do {                                                                                       \
        call = #c;                                                                             \
        if ((e = (c)) != cudaSuccess)                                                          \
            goto cuda_fail;                                                                    \
    } while (0)
    SETUP(cudaSetDevice(r->device));
    SETUP(cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking));
    SETUP(cudaEventCreate(&r->e0));
    SETUP(cudaEventCreate(&r->e1));
    SETUP(cudaMalloc((void **)&r->send, r->buf_bytes));
    SETUP(cudaMalloc((void **)&r->recv, r->buf_bytes));
    SETUP(cudaMemset(r->send, 0, r->buf_bytes));
    SETUP(cudaMemset(r->recv, 0, r->buf_bytes));
#undef SETUP
    {
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0; /* calls return at once; the watchdog polls */
        ncclResult_t res = ncclCommInitRankConfig(&r->comm, r->n, *id, r->rank, &config);
        if (res != ncclSuccess && res != ncclInProgress) {
            r->comm = NULL;
            set_status(st, ST_FAILED, r, "ncclCommInitRankConfig: %s (%s)",
                       ncclGetErrorString(res), ncclGetLastError(NULL));
            return ST_FAILED;
        }
        return settle(r, res, "ncclCommInitRankConfig", st);
    }
cuda_fail:
    set_status(st, ST_FAILED, r, "%s: %s", call, cudaGetErrorString(e));
    return ST_FAILED;
}

/* Release a rank; abort its communicator after a failure (or when it
 * cannot be finalized in time), else finalize and destroy it. After an
 * abort the stream may still hold a stuck kernel that any synchronising
 * call (cudaFree included) would wait for forever: the device memory is
 * then left to the process's exit, which follows the error. */
static void teardown_rank(rank_t *r, bool failed)
{
    bool clean = !failed, stuck = false;
    if (r->comm) {
        if (clean) {
            status_t st;
            memset(&st, 0, sizeof st);
            clean = settle(r, ncclCommFinalize(r->comm), "ncclCommFinalize", &st) == ST_OK;
        }
        if (clean) {
            ncclCommDestroy(r->comm);
        } else {
            ncclCommAbort(r->comm);
            stuck = true;
        }
        r->comm = NULL;
    }
    if (stuck)
        return;
    if (r->stream)
        cudaStreamSynchronize(r->stream);
    cudaFree(r->send);
    cudaFree(r->recv);
    if (r->e0)
        cudaEventDestroy(r->e0);
    if (r->e1)
        cudaEventDestroy(r->e1);
    if (r->stream)
        cudaStreamDestroy(r->stream);
    r->send = r->recv = NULL;
    r->e0 = r->e1 = NULL;
    r->stream = NULL;
}

/* ------------------------------------------------------------ a session */

/* What one communicator measures; times[o * n_sizes + i] (rank 0) gets the
 * mean over ranks, or -1 for sizes too small for the op. */
typedef struct {
    const collb_plan_t *plan;
    const coll_op_t *ops;
    int n_ops;
    const double *sizes;
    int n_sizes;
    double *times;
    const char *label; /* for messages: "all_reduce on 8 GPUs (ring)" */
    gpub_progress_fn progress;
    void *ctx;
    double *done; /* progress units done (rank 0) */
} session_t;

static int run_session(rank_t *r, const ncclUniqueId *id, const session_t *s, err_t *err)
{
    status_t mine, *all = (status_t *)calloc((size_t)r->n, sizeof *all);
    int rc = ERR_OK;
    bool failed = false;
    char what[160];
    if (!all)
        return err_set(err, ERR_RUNTIME, "out of memory measuring collectives");
    memset(&mine, 0, sizeof mine);
    if (setup_rank(r, id, &mine) != ST_OK) {
        failed = true;
        raise_abort(r);
    }
    if ((rc = exchange(r, &mine, all, err)))
        goto out;
    for (int i = 0; i < r->n; i++)
        if (all[i].state != ST_OK) {
            snprintf(what, sizeof what, "setting up NCCL for %s", s->label);
            compose_error(all, r->n, what, r->timeout_s, err);
            rc = ERR_RUNTIME;
            failed = true;
            goto out;
        }
    for (int o = 0; o < s->n_ops; o++)
        for (int i = 0; i < s->n_sizes; i++) {
            double bytes = 0;
            size_t count = op_count(s->ops[o], s->sizes[i], r->n, &bytes);
            memset(&mine, 0, sizeof mine);
            if (count == 0 || bytes > (double)r->buf_bytes) {
                mine.state = ST_SKIPPED;
            } else if (measure_step(r, s->ops[o], count, s->plan->warmup, s->plan->iters,
                                    &mine) != ST_OK) {
                raise_abort(r);
            }
            if ((rc = exchange(r, &mine, all, err)))
                goto out;
            double sum = 0;
            bool skipped = false;
            for (int k = 0; k < r->n; k++) {
                if (all[k].state == ST_SKIPPED) {
                    skipped = true;
                    continue;
                }
                if (all[k].state != ST_OK) {
                    snprintf(what, sizeof what, "%s of %.0f B (%s)", prof_coll_name(s->ops[o]),
                             bytes, s->label);
                    compose_error(all, r->n, what, r->timeout_s, err);
                    rc = ERR_RUNTIME;
                    failed = true;
                    goto out;
                }
                sum += all[k].time_us;
            }
            if (r->rank == 0) {
                s->times[o * s->n_sizes + i] = skipped ? -1 : sum / r->n;
                *s->done += 1;
                if (s->progress)
                    s->progress(s->ctx, *s->done);
            }
        }
out:
    teardown_rank(r, failed);
    free(all);
    return rc;
}

/* ------------------------------------------------------------ plan helpers */

static int plan_sizes(const collb_plan_t *p, double *sizes, int cap)
{
    int n = 0;
    for (double b = p->min_bytes; b <= p->max_bytes * (1 + 1e-12) && n < cap; b *= 2)
        sizes[n++] = b;
    return n;
}

/* The group sizes a one-process run measures on n_gpus GPUs, distinct,
 * largest first. */
static int plan_groups(const collb_plan_t *p, int n_gpus, int *out)
{
    int n = 0;
    for (int i = 0; i < p->n_groups; i++) {
        int g = p->group_sizes[i] <= 0 ? n_gpus : p->group_sizes[i];
        if (g < 1 || g > n_gpus)
            continue;
        bool dup = false;
        for (int j = 0; j < n; j++)
            dup = dup || out[j] == g;
        if (!dup)
            out[n++] = g;
    }
    if (n == 0)
        out[n++] = n_gpus;
    return n;
}

/* The variants: NCCL's default, Ring, Tree - or only the user's
 * NCCL_ALGO when the environment sets one. */
typedef struct {
    char label[MEAS_ALGO_MAX];
    const char *env; /* NCCL_ALGO value; NULL = unset */
    bool all_ops;
} variant_t;

static int plan_variants(const collb_plan_t *p, const char *user, variant_t *v)
{
    int n = 0;
    if (user) {
        snprintf(v[0].label, sizeof v[0].label, "%.15s", user);
        for (char *c = v[0].label; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        v[0].env = user;
        v[0].all_ops = true;
        return 1;
    }
    for (int i = 0; i < p->n_algos && n < COLLB_MAX_ALGOS; i++) {
        const char *a = p->algos[i];
        if (strcmp(a, "default") == 0)
            v[n] = {"default", NULL, true};
        else if (strcmp(a, "ring") == 0)
            v[n] = {"ring", "Ring", false};
        else if (strcmp(a, "tree") == 0)
            v[n] = {"tree", "Tree", false};
        else
            continue;
        n++;
    }
    return n;
}

static bool has_all_reduce(const collb_plan_t *p)
{
    for (int i = 0; i < p->n_ops; i++)
        if (p->ops[i] == COLL_ALL_REDUCE)
            return true;
    return false;
}

extern "C" double collb_work(const collb_plan_t *plan, int n_gpus)
{
    double sizes[80];
    int groups[COLLB_MAX_GROUPS + 1];
    variant_t v[COLLB_MAX_ALGOS];
    int ns = plan_sizes(plan, sizes, 80), ng = plan_groups(plan, n_gpus, groups);
    int nv = plan_variants(plan, getenv("NCCL_ALGO"), v);
    double per = 0;
    for (int i = 0; i < nv; i++)
        per += v[i].all_ops ? plan->n_ops : (has_all_reduce(plan) ? 1 : 0);
    return per * ns * ng;
}

extern "C" int collb_nccl_version(char *buf, size_t cap, err_t *err)
{
    int v = 0;
    ncclResult_t res = ncclGetVersion(&v);
    if (res != ncclSuccess)
        return err_set(err, ERR_RUNTIME, "ncclGetVersion: %s", ncclGetErrorString(res));
    /* codes from 2.9 on: major x 10000 + minor x 100 + patch */
    if (v >= 10000)
        snprintf(buf, cap, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
    else
        snprintf(buf, cap, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
    return ERR_OK;
}

/* Store rank 0's times as one series per op. */
static int store_series(meas_set_t *set, const session_t *s, const char *algo, int n_ranks,
                        int nodes, const char *hosts, err_t *err)
{
    char ver[24] = "";
    err_t ignore;
    collb_nccl_version(ver, sizeof ver, &ignore);
    meas_coll_t *c = (meas_coll_t *)malloc(sizeof *c);
    if (!c)
        return err_set(err, ERR_RUNTIME, "out of memory storing collectives");
    int rc = ERR_OK;
    for (int o = 0; o < s->n_ops && !rc; o++) {
        memset(c, 0, sizeof *c);
        c->op = s->ops[o];
        snprintf(c->algo, sizeof c->algo, "%.15s", algo);
        c->n_ranks = n_ranks;
        c->nodes = nodes;
        snprintf(c->source, sizeof c->source,
                 "measured by scaleplan calibrate: NCCL %s, float, out-of-place, %d warm-up + %d "
                 "timed operations per size, mean over %d ranks on %d node%s (%s), NCCL_ALGO %s",
                 ver, s->plan->warmup, s->plan->iters, n_ranks, nodes, nodes == 1 ? "" : "s",
                 hosts, strcmp(algo, "default") == 0 ? "unset" : algo);
        for (int i = 0; i < s->n_sizes && c->n < MEAS_MAX_COLL_POINTS; i++) {
            double t = s->times[o * s->n_sizes + i], bytes = 0;
            if (!(t > 0))
                continue;
            op_count(c->op, s->sizes[i], n_ranks, &bytes);
            c->bytes[c->n] = bytes;
            c->time_us[c->n] = t;
            c->busbw_gbs[c->n] = bytes * prof_bus_factor(c->op, n_ranks) / t / 1e3;
            c->n++;
        }
        if (c->n > 0)
            rc = meas_add_coll(set, c, err);
    }
    free(c);
    return rc;
}

/* ------------------------------------------------------------ threads */

typedef struct {
    rank_t r;
    group_t *g;
    const ncclUniqueId *id;
    const session_t *s;
    int rc;
    err_t err;
} thread_arg_t;

static void *rank_thread(void *p)
{
    thread_arg_t *a = (thread_arg_t *)p;
    pthread_mutex_lock(&a->g->mu);
    while (a->g->go == 0)
        pthread_cond_wait(&a->g->cv, &a->g->mu);
    int go = a->g->go;
    pthread_mutex_unlock(&a->g->mu);
    if (go < 0)
        return NULL;
    a->rc = run_session(&a->r, a->id, a->s, &a->err);
    return NULL;
}

/* One communicator over GPUs 0..n-1, one thread each. */
static int run_threads(int n, const ncclUniqueId *id, const session_t *s, double timeout_s,
                       err_t *err)
{
    group_t g;
    memset(&g, 0, sizeof g);
    g.n = n;
    thread_arg_t *args = (thread_arg_t *)calloc((size_t)n, sizeof *args);
    pthread_t *tids = (pthread_t *)calloc((size_t)n, sizeof *tids);
    g.slots = (status_t *)calloc((size_t)n, sizeof *g.slots);
    char host[64] = "localhost";
    int rc = ERR_OK, started = 0;
    if (!args || !tids || !g.slots) {
        free(args);
        free(tids);
        free(g.slots);
        return err_set(err, ERR_RUNTIME, "out of memory starting collective threads");
    }
    gethostname(host, sizeof host - 1);
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    for (int i = 0; i < n; i++) {
        rank_t *r = &args[i].r;
        r->rank = i;
        r->n = n;
        r->device = i;
        r->buf_bytes = (size_t)s->plan->max_bytes;
        r->timeout_s = timeout_s;
        r->abort_flag = &g.abort_flag;
        r->group = &g;
        snprintf(r->host, sizeof r->host, "%s", host);
        args[i].g = &g;
        args[i].id = id;
        args[i].s = s;
        err_clear(&args[i].err);
        if (pthread_create(&tids[i], NULL, rank_thread, &args[i]) != 0) {
            rc = err_set(err, ERR_RUNTIME, "cannot start the thread for GPU %d", i);
            break;
        }
        started++;
    }
    pthread_mutex_lock(&g.mu);
    g.go = rc ? -1 : 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    if (!rc)
        for (int i = 0; i < n; i++)
            if (args[i].rc) {
                *err = args[i].err; /* every rank composed the same line */
                rc = args[i].rc;
                break;
            }
    pthread_mutex_destroy(&g.mu);
    pthread_cond_destroy(&g.cv);
    free(args);
    free(tids);
    free(g.slots);
    return rc;
}

/* ------------------------------------------------------------ entry */

typedef struct {
    int ok;
    ncclUniqueId id;
    char msg[200];
} id_msg_t;

static void set_algo_env(const variant_t *v, const char *user)
{
    if (user)
        return; /* the user's NCCL_ALGO stays */
    if (v->env)
        setenv("NCCL_ALGO", v->env, 1);
    else
        unsetenv("NCCL_ALGO");
}

/* The nodes of world, counted from its ranks' host names (host is this
 * rank's), and the first three named in hosts (cap bytes). */
static int count_nodes(const dist_group_t *world, const char *host, char *hosts, size_t cap,
                       int *nodes, err_t *err)
{
    char *all_hosts = (char *)calloc((size_t)world->size, 64);
    if (!all_hosts)
        return err_set(err, ERR_RUNTIME, "out of memory measuring collectives");
    int rc = dist_allgather(world, host, all_hosts, 64, err);
    if (rc)
        goto out;
    *nodes = 0;
    for (int i = 0; i < world->size; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = strncmp(all_hosts + 64 * i, all_hosts + 64 * j, 64) == 0;
        if (!seen) {
            (*nodes)++;
            size_t l = strlen(hosts);
            if (*nodes <= 3)
                snprintf(hosts + l, cap - l, "%s%.40s", *nodes > 1 ? ", " : "",
                         all_hosts + 64 * i);
            else if (*nodes == 4)
                snprintf(hosts + l, cap - l, ", ...");
        }
    }
out:
    free(all_hosts);
    return rc;
}

/* One session s on a communicator of n ranks: world's ranks under MPI
 * (rank 0's NCCL id broadcast, each rank on its node-local GPU), else n
 * threads of this process, one a GPU. */
static int run_group(const dist_group_t *world, bool mpi, int n, const char *host,
                     const session_t *s, err_t *err)
{
    const collb_plan_t *plan = s->plan;
    id_msg_t idm;
    memset(&idm, 0, sizeof idm);
    if (!mpi || world->rank == 0) {
        ncclResult_t res = ncclGetUniqueId(&idm.id);
        idm.ok = res == ncclSuccess;
        if (!idm.ok)
            snprintf(idm.msg, sizeof idm.msg, "ncclGetUniqueId: %s", ncclGetErrorString(res));
    }
    if (!mpi) {
        if (!idm.ok)
            return err_set(err, ERR_RUNTIME, "%s", idm.msg);
        return run_threads(n, &idm.id, s, plan->timeout_s, err);
    }
    int rc = dist_bcast(world, &idm, sizeof idm, 0, err);
    if (rc)
        return rc;
    if (!idm.ok)
        return err_set(err, ERR_RUNTIME, "%s", idm.msg);
    rank_t r;
    memset(&r, 0, sizeof r);
    r.rank = world->rank;
    r.n = world->size;
    r.buf_bytes = (size_t)plan->max_bytes;
    r.timeout_s = plan->timeout_s;
    r.world = world;
    snprintf(r.host, sizeof r.host, "%s", host);
    /* the node-local GPU: launchers export the local rank */
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0)
        n_dev = 1;
    int local = dist_local_rank();
    r.device = (local >= 0 ? local : world->rank) % n_dev;
    return run_session(&r, &idm.id, s, err);
}

extern "C" int collb_run(const dist_group_t *world, int n_local, const collb_plan_t *plan,
                         meas_set_t *set, gpub_progress_fn progress, void *ctx, err_t *err)
{
    const char *user_env = getenv("NCCL_ALGO");
    char *user = user_env ? strdup(user_env) : NULL;
    double sizes[80], done = 0, *times = NULL;
    int groups[COLLB_MAX_GROUPS + 1];
    variant_t v[COLLB_MAX_ALGOS];
    int ns = plan_sizes(plan, sizes, 80), nv = plan_variants(plan, user, v), rc = ERR_OK;
    bool mpi = world && world->size > 1;
    int ng = mpi ? 1 : plan_groups(plan, n_local, groups);
    char host[64] = "localhost", hosts[160] = "";
    int nodes = 1, max_ranks = 0;
    if (user_env && !user)
        return err_set(err, ERR_RUNTIME, "out of memory");
    if (ns == 0 || plan->n_ops == 0 || nv == 0) {
        free(user);
        return err_set(err, ERR_INPUT, "the collective plan measures nothing");
    }
    times = (double *)calloc((size_t)(plan->n_ops * ns), sizeof *times);
    if (!times) {
        free(user);
        return err_set(err, ERR_RUNTIME, "out of memory measuring collectives");
    }
    gethostname(host, sizeof host - 1);
    if (mpi) {
        if ((rc = count_nodes(world, host, hosts, sizeof hosts, &nodes, err)))
            goto out;
        groups[0] = world->size;
    } else {
        snprintf(hosts, sizeof hosts, "%.60s", host);
    }
    for (int gi = 0; gi < ng; gi++) {
        int n = groups[gi];
        for (int vi = 0; vi < nv; vi++) {
            coll_op_t ops[COLL_OP_COUNT];
            int n_ops = 0;
            for (int o = 0; o < plan->n_ops; o++)
                if (v[vi].all_ops || plan->ops[o] == COLL_ALL_REDUCE)
                    ops[n_ops++] = plan->ops[o];
            if (n_ops == 0)
                continue;
            char label[96];
            snprintf(label, sizeof label, "%d %s (%.15s)", n, mpi ? "ranks" : "GPUs", v[vi].label);
            session_t s = {plan, ops, n_ops, sizes, ns, times, label, progress, ctx, &done};
            set_algo_env(&v[vi], user);
            if ((rc = run_group(world, mpi, n, host, &s, err)))
                goto out;
            if ((!mpi || world->rank == 0) &&
                (rc = store_series(set, &s, v[vi].label, n, nodes, hosts, err)))
                goto out;
            if (n > max_ranks)
                max_ranks = n;
        }
    }
    set->env.nodes = nodes;
    set->env.ranks = max_ranks > 0 ? max_ranks : 1;
    set->env.gpus_per_node = mpi ? (world->size + nodes - 1) / nodes : n_local;
out:
    if (user)
        free(user);
    else
        unsetenv("NCCL_ALGO");
    free(times);
    return rc;
}

/* The plug-in's entry table (COLLB_SYMBOL); collbench.c forwards to it. */
extern "C" PLUGIN_EXPORT const collb_ops_t scaleplan_collbench = {
    collb_nccl_version,
    collb_work,
    collb_run,
};
