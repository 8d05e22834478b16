#include "bench/bench_api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "scaleplan.h"

#define CALLS 1000
#define SWEEP 512

static const char SPEC[] =
    "{\"model\": \"gpt3-175b\", \"gpu\": \"a100-80g\", \"gpus\": 64, \"tp\": 8, \"pp\": 8, "
    "\"micro_batch\": 1, \"global_batch\": 64, \"seq_len\": 2048, \"sequence_parallel\": true, "
    "\"recompute\": \"selective\"}";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds of CALLS calls: through the document (sp_run) or not. */
static int median_call_s(sp_context_t *ctx, int document, double *median_s)
{
    static double t[CALLS];
    for (int i = 0; i < CALLS; i++) {
        double t0 = clock_now_s(), step_s;
        char *doc = NULL;
        int rc = document ? sp_run(ctx, "sim", SPEC, &doc) : sp_step_time(ctx, SPEC, &step_s);
        t[i] = clock_now_s() - t0;
        sp_free(doc);
        if (rc != SP_OK) {
            fprintf(stderr, "bench: api: %s\n", sp_last_error(ctx));
            return 1;
        }
    }
    qsort(t, CALLS, sizeof t[0], cmp_double);
    *median_s = 0.5 * (t[CALLS / 2 - 1] + t[CALLS / 2]);
    return 0;
}

typedef struct {
    sp_context_t *ctx;
    int calls, failed;
} sweep_t;

static void *sweep(void *arg)
{
    sweep_t *w = arg;
    double step_s;
    for (int i = 0; i < w->calls; i++)
        w->failed |= sp_step_time(w->ctx, SPEC, &step_s) != SP_OK;
    return NULL;
}

/* Seconds of SWEEP calls on one thread, and on two (a context each). */
static int sweep_s(sp_context_t *ctxs[2], double *one_s, double *two_s)
{
    sweep_t one = {ctxs[0], SWEEP, 0}, two[2] = {{ctxs[0], SWEEP / 2, 0}, {ctxs[1], SWEEP / 2, 0}};
    double t0 = clock_now_s();
    sweep(&one);
    *one_s = clock_now_s() - t0;
    pthread_t th[2];
    t0 = clock_now_s();
    int started = 0;
    for (; started < 2; started++)
        if (pthread_create(&th[started], NULL, sweep, &two[started]))
            break;
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    *two_s = clock_now_s() - t0;
    if (started < 2 || one.failed || two[0].failed || two[1].failed) {
        fprintf(stderr, "bench: api: the sweep failed (%s)\n",
                started < 2 ? "no thread" : sp_last_error(ctxs[0]));
        return 1;
    }
    return 0;
}

/* One of two_processes_s's children: a context, its catalog parsed by one
 * untimed call, "ready" said, then the sweep on "go". Does not return. */
static void sweep_child(int ready_fd, int go_fd)
{
    sp_context_t *ctx = sp_context_new();
    double step_s;
    char c = 1;
    int failed = !ctx || sp_step_time(ctx, SPEC, &step_s) != SP_OK ||
                 write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1;
    sweep_t w = {ctx, SWEEP / 2, failed};
    if (!failed)
        sweep(&w);
    sp_context_free(ctx);
    _exit(w.failed ? 1 : 0);
}

/* Seconds of SWEEP / 2 calls in each of two processes at once (a context
 * each, nothing shared, both started together once warm): what the
 * machine's two cores give this work without threads, the yardstick for
 * the two threads. -1 on failure. */
static double two_processes_s(void)
{
    int ready[2], go[2];
    if (pipe(ready) || pipe(go))
        return -1;
    pid_t pid[2];
    int started = 0;
    for (; started < 2; started++) {
        if ((pid[started] = fork()) < 0)
            break;
        if (pid[started] == 0)
            sweep_child(ready[1], go[0]);
    }
    char buf[2] = {1, 1};
    int ok = started == 2 && read(ready[0], buf, 1) == 1 && read(ready[0], buf, 1) == 1;
    double t0 = clock_now_s();
    ok = ok && write(go[1], buf, 2) == 2;
    close(go[1]); /* a child still waiting reads end-of-file and fails */
    for (int i = 0; i < started; i++) {
        int status = 0;
        ok &= waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0;
    }
    double t = clock_now_s() - t0;
    close(go[0]);
    close(ready[0]);
    close(ready[1]);
    return ok ? t : -1;
}

int bench_api(void)
{
    sp_context_t *ctxs[2] = {sp_context_new(), sp_context_new()};
    double fast_s = 0, doc_s = 0, one_s = 0, two_s = 0, step_s;
    int rc = !ctxs[0] || !ctxs[1];
    if (rc)
        fprintf(stderr, "bench: api: out of memory\n");
    /* the first call parses the catalog: not timed */
    rc = rc || sp_step_time(ctxs[0], SPEC, &step_s) || sp_step_time(ctxs[1], SPEC, &step_s) ||
         median_call_s(ctxs[0], 0, &fast_s) || median_call_s(ctxs[0], 1, &doc_s) ||
         sweep_s(ctxs, &one_s, &two_s);
    double procs_s = rc ? -1 : two_processes_s();
    if (!rc && procs_s < 0) {
        fprintf(stderr, "bench: api: the two processes failed\n");
        rc = 1;
    }
    if (!rc) {
        printf("api: GPT-3 175B step (64 A100, TP8 PP8) through sp_step_time %.3f ms median over "
               "%d calls (target < 0.1 ms: %s), through sp_run's document %.3f ms\n",
               1e3 * fast_s, CALLS, fast_s < 1e-4 ? "met" : "NOT met", 1e3 * doc_s);
        printf("api: %d steps on 1 thread %.1f ms, on 2 threads (a context each) %.1f ms: "
               "%.2fx (target >= 1.7x: %s)\n",
               SWEEP, 1e3 * one_s, 1e3 * two_s, one_s / two_s,
               one_s / two_s >= 1.7 ? "met" : "NOT met");
        printf("api: the same %d steps in two processes at once (nothing shared) %.1f ms: "
               "%.2fx, what the machine gives this work\n",
               SWEEP, 1e3 * procs_s, one_s / procs_s);
    }
    sp_context_free(ctxs[0]);
    sp_context_free(ctxs[1]);
    return rc ? 1 : 0;
}
