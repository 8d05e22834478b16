/* bench: speed of the simulator (make bench). Prints figures; it is a
 * benchmark, not a test, and fails only if something cannot run.
 *
 * Every figure is also given as a multiple of a fixed reference workload
 * timed in the same rounds (interleaved with it), so that a regression
 * shows whatever the machine's load: a busy machine slows both alike, a
 * slower scaleplan moves only the figure. Whole processes are measured
 * against starting /bin/true; in-process work against sorting a fixed set
 * of pseudo-random numbers (qsort: calls, branches and memory, like the
 * simulator), on one core or on each of two cores for two-thread figures.
 * The multiples are comparable between runs and machines of one kind; the
 * targets are in seconds, as the issues state them (2 cores).
 *
 *   1. whole processes of the real binary, started directly (posix_spawn,
 *      no shell): `scaleplan --help` (target: under 5 ms), a 70B `sim`
 *      (under 10 ms) and one step of Llama 3 405B on 16,384 H100s (TP8 PP16
 *      DP128, interleaved, seq 8192, global batch 2048; it needs 87 GiB of
 *      the 80, hence --allow-oom; under 10 ms), with
 *      the peak resident memory of each; BENCH_COMPARE_BIN=path adds the
 *      same commands of another build (an older one, say) to the same
 *      rounds;
 *   2. the 405B step in-process (target: under 0.15 ms), and the same step
 *      graph (16 micro-batches per DP rank) at 1,024 and 131,072 GPUs:
 *      the cost must not grow with the GPU count (target: ratio <= 1.2);
 *   3. 1,000 different layouts of a 70B model simulated in-process on one
 *      core (target: under 0.5 s), with layouts and events per second;
 *   4. 10,000 reliability trials (target: under 0.2 s on 2 cores) and the
 *      adaptive default;
 *   5. plans as `scaleplan plan` makes them (its defaults: 4M tokens per
 *      step, 300 Monte Carlo trials per rung, 2 threads): the 70B ladder to
 *      16,384 H100s, Llama 3 405B at 131,072 H100s alone (target: under
 *      0.3 s) and its ladder from 8 to 131,072 (target: under 1.5 s), with
 *      the layout search's share;
 *   6. a GPU-pool replay (cluster/replay.h) of 1,000,000 synthesized jobs
 *      (cluster/synth.h's assumed heavy-tailed mix, load 0.9) on 1,024
 *      GPUs under fifo, backfill and las, on one core (target for fifo and
 *      backfill: under 30 s), with the workload's generation timed apart.
 *
 *   7. `scaleplan cluster --synthesize helios` (the Helios trace's published
 *      statistics, cluster/tracesynth.h) at its published arrival rate on
 *      6,224 GPUs under fifo, 1,000,000 jobs (target: under 30 s) and
 *      3,362,981 jobs, Helios's whole count (target: under 120 s), each a
 *      whole process (generation, replay, report), with its peak memory per
 *      job (linear in jobs: the two within 25%).
 *
 *   8. --policy planner on the demo portfolio (tests/fixtures/cluster/
 *      portfolio_10_models.csv: ten LLM jobs, each priced by the step
 *      simulator's layout search at every size of its range on H100s, then
 *      the sizes searched by replay on 512 GPUs), in process, one cold run
 *      with its own catalog (target: under 5 s, issue 39).
 *
 *   9. the public C API (bench/bench_api.h): the 175B step through
 *      sp_step_time and sp_run, and a two-thread sweep.
 *
 * run_bench [processes] [steps] [layouts] [reliability] [plans] [cluster] [traces] [portfolio] [api]
 * runs only
 * those sections (make bench: all).
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_api.h"
#include "cluster/formats.h"
#include "cluster/planner.h"
#include "cluster/replay.h"
#include "cluster/synth.h"
#include "common/catalog.h"
#include "common/clock.h"
#include "plan/ladder.h"
#include "run/reliability.h"
#include "sim/step.h"

#ifdef _OPENMP
#include <omp.h>
#endif

extern char **environ;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------ the reference */

/* The reference workload: qsort of REF_N doubles drawn from a fixed seed,
 * a few milliseconds, on each of `threads` cores at once. It does not use
 * scaleplan's code, so it stays the same while scaleplan changes. */
enum { REF_N = 1 << 14 };

static int cmp_ref(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double reference_sort(double *buf)
{
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < REF_N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        buf[i] = (double)(x >> 11);
    }
    qsort(buf, REF_N, sizeof *buf, cmp_ref);
    return buf[REF_N / 2];
}

/* The reference's buffers, one per core, and what its sorts returned
 * (kept so that they cannot be optimized away). */
typedef struct {
    double *buf[2];
    double sink;
} reference_t;

/* Seconds of one reference run on `threads` (1 or 2) cores at once. */
static double reference_s(reference_t *ref, int threads)
{
    double got[2] = {0, 0};
    double t0 = clock_now_s();
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; t++)
        got[t] = reference_sort(ref->buf[t]);
    double dt = clock_now_s() - t0;
    ref->sink += got[0] + got[1];
    return dt;
}

/* Work measured in rounds: each round times `reps` calls of the work
 * between two runs of the reference; the figure is the median seconds per
 * call, its multiple the median over rounds of seconds per call over the
 * mean of the two references around it. */
typedef int (*work_fn)(void *arg, err_t *err);

typedef struct {
    double s;        /* median seconds per call */
    double multiple; /* of the reference */
} figure_t;

static int measure(reference_t *refw, work_fn work, void *arg, int rounds, int reps, int threads,
                   figure_t *out, err_t *err)
{
    double t[64], ratio[64];
    if (rounds > 64)
        rounds = 64;
    for (int r = 0; r < rounds; r++) {
        double before = reference_s(refw, threads);
        double t0 = clock_now_s();
        for (int i = 0; i < reps; i++)
            if (work(arg, err))
                return 1;
        t[r] = (clock_now_s() - t0) / reps;
        ratio[r] = t[r] / (0.5 * (before + reference_s(refw, threads)));
    }
    out->s = median(t, rounds);
    out->multiple = median(ratio, rounds);
    return 0;
}

static const char *verdict(double value, double target)
{
    return value < target ? "met" : "NOT MET";
}

#define MAX_ARGS 40

/* One command line, split at spaces, with its timings. */
typedef struct {
    const char *label;
    const char *target; /* "< 5 ms", or NULL */
    char *argv[MAX_ARGS];
    char line[600];
    double *t;      /* seconds, one per run */
    double rss_mib; /* largest peak resident set of a run */
} proc_t;

static void split(proc_t *p, const char *prog, const char *args)
{
    snprintf(p->line, sizeof p->line, "%s", args);
    int n = 0;
    p->argv[n++] = (char *)prog;
    for (char *tok = strtok(p->line, " "); tok && n < MAX_ARGS - 1; tok = strtok(NULL, " "))
        p->argv[n++] = tok;
    p->argv[n] = NULL;
}

/* Start argv with stdout and stderr on /dev/null, wait; the wall time in
 * *s, the child's peak resident memory in *rss_mib. Non-zero on failure. */
static int run_once(char *const argv[], double *s, double *rss_mib)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = clock_now_s();
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return 1;
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        return 1;
    *s = clock_now_s() - t0;
    *rss_mib = (double)ru.ru_maxrss / 1024.0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static const char *SIM70_ARGS = "sim --model llama3-70b --gpu h100-sxm --gpus 256 --tp 8 --pp 4 "
                                "--sequence-parallel --recompute selective --global-batch 512";

static const char *LLAMA405_ARGS =
    "sim --model llama3-405b --gpu h100-sxm --gpus 16384 --tp 8 --pp 16 --vpp 4 "
    "--first-stage-layers 1 --last-stage-layers 1 --seq-len 8192 --micro-batch 1 "
    "--global-batch 2048 --sequence-parallel --distributed-optimizer --json --allow-oom";

/* DeepSeek-V3 as NVIDIA's H100 recipe lays it out (Megatron-Bridge
 * DEEPSEEK_V3_PRETRAIN_CONFIG_H100_V1: TP2 PP8 EP64 on 1,024 GPUs, 8,192
 * sequences of 4,096; the 61 blocks split 7/8x6/6). */
static const char *DSV3_ARGS =
    "sim --model deepseek-v3 --gpu h100-sxm --gpus 1024 --tp 2 --pp 8 --ep 64 --micro-batch 1 "
    "--global-batch 8192 --seq-len 4096 --sequence-parallel --distributed-optimizer "
    "--first-stage-layers 7 --last-stage-layers 6 --json --allow-oom";

static int bench_processes(void)
{
    const char *bin = getenv("SCALEPLAN_BIN");
    if (!bin)
        bin = "bin/scaleplan";
    const char *other = getenv("BENCH_COMPARE_BIN");
    enum { RUNS = 41, MAX_N = 8 };
    static proc_t p[MAX_N];
    int N = other && *other ? 8 : 5;
    p[0].label = "process start (/bin/true)";
    split(&p[0], "/bin/true", "");
    p[1].label = "scaleplan --help";
    p[1].target = "< 5 ms";
    split(&p[1], bin, "--help");
    p[2].label = "scaleplan sim, 70B on 256 H100";
    p[2].target = "< 10 ms";
    split(&p[2], bin, SIM70_ARGS);
    p[3].label = "scaleplan sim, 405B on 16,384 H100";
    p[3].target = "< 10 ms";
    split(&p[3], bin, LLAMA405_ARGS);
    p[4].label = "scaleplan sim, DeepSeek-V3 on 1,024 H100";
    split(&p[4], bin, DSV3_ARGS);
    if (N == 8) {
        static char labels[3][200];
        const char *what[] = {"--help", "sim, 70B", "sim, 405B"};
        const char *args[] = {"--help", SIM70_ARGS, LLAMA405_ARGS};
        for (int i = 0; i < 3; i++) {
            snprintf(labels[i], sizeof labels[i], "%s %s", other, what[i]);
            p[5 + i].label = labels[i];
            split(&p[5 + i], other, args[i]);
        }
    }
    for (int i = 0; i < N; i++)
        if (!(p[i].t = calloc(RUNS, sizeof(double))))
            return 1;
    for (int r = 0; r < RUNS; r++)
        for (int i = 0; i < N; i++) {
            double rss = 0;
            if (run_once(p[i].argv, &p[i].t[r], &rss)) {
                fprintf(stderr, "bench: '%s' %s failed\n", p[i].argv[0],
                        p[i].argv[1] ? p[i].argv[1] : "");
                return 1;
            }
            if (rss > p[i].rss_mib)
                p[i].rss_mib = rss;
        }
    printf("whole processes (%d runs each, interleaved; median, best, peak memory):\n", RUNS);
    double base = 0;
    for (int i = 0; i < N; i++) {
        qsort(p[i].t, RUNS, sizeof(double), cmp_double);
        double med = p[i].t[RUNS / 2];
        if (i == 0)
            base = med;
        printf("  %-40.60s %6.2f ms  best %6.2f ms  %6.1f MiB", p[i].label, 1e3 * med,
               1e3 * p[i].t[0], p[i].rss_mib);
        if (i > 0)
            printf("  (%.1fx a bare process start)", base > 0 ? med / base : 0);
        if (p[i].target)
            printf("  target %s: %s", p[i].target,
                   1e3 * med < atof(p[i].target + 2) ? "met" : "NOT MET");
        printf("\n");
    }
    /* issue 36: a MoE step within 2x a dense 405B step at 16x the GPUs,
     * both net of the process start */
    double moe = p[4].t[RUNS / 2] - base, dense = p[3].t[RUNS / 2] - base;
    printf("  DeepSeek-V3 on 1,024 over 405B on 16,384 (net of the process start): %.2fx  "
           "target < 2x: %s\n",
           dense > 0 ? moe / dense : 0, dense > 0 && moe < 2 * dense ? "met" : "NOT MET");
    for (int i = 0; i < N; i++)
        free(p[i].t);
    return 0;
}

/* One step of Llama 3 405B, TP8 PP16, 4 virtual stages, seq 8192, on gpus
 * H100s with global_batch sequences, simulated again and again. */
typedef struct {
    model_t m;
    cluster_t c;
    profile_t p;
    layout_t l;
    sim_input_t in;
    sim_ctx_t *ctx;
    sim_result_t r;
} step_work_t;

static int step_setup(step_work_t *w, int gpus, int global_batch, bool layer_events, err_t *e)
{
    memset(w, 0, sizeof *w);
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = gpus};
    layout_t *l = &w->l;
    layout_defaults(l);
    l->tp = 8;
    l->pp = 16;
    l->vpp = 4;
    l->schedule = SCHEDULE_INTERLEAVED;
    l->first_stage_layers = l->last_stage_layers = 1;
    l->seq_len = 8192;
    l->global_batch = global_batch;
    l->sequence_parallel = true;
    l->distributed_optimizer = true;
    if (model_load("llama3-405b", &w->m, e) || cluster_resolve(&spec, &w->c, e) ||
        prof_load_default("h100-sxm", &w->p, e) || layout_finalize(l, &w->m, gpus, e))
        return 1;
    w->in = (sim_input_t){&w->m, l, &w->c, &w->p, {0}};
    sim_options_default(&w->in.opt);
    w->in.opt.layer_events = layer_events;
    if (!(w->ctx = sim_ctx_create()))
        return err_set(e, ERR_RUNTIME, "out of memory");
    return sim_run_step(w->ctx, &w->in, &w->r, e);
}

static void step_free(step_work_t *w)
{
    sim_ctx_destroy(w->ctx);
    prof_free(&w->p);
}

static int step_once(void *arg, err_t *e)
{
    step_work_t *w = arg;
    return sim_run_step(w->ctx, &w->in, &w->r, e);
}

static int bench_405b_inprocess(reference_t *ref)
{
    err_t e;
    step_work_t w;
    figure_t f;
    for (int pass = 0; pass < 2; pass++) {
        if (step_setup(&w, 16384, 2048, pass == 1, &e) ||
            measure(ref, step_once, &w, 31, 40, 1, &f, &e)) {
            fprintf(stderr, "bench: %s\n", e.msg);
            step_free(&w);
            return 1;
        }
        printf("  in-process, %s events: %.3f ms per step (%.3f x reference), %d tasks, "
               "%.2fM events/s (step %.2f s, MFU %.1f%%)",
               pass ? "per-layer" : "per-chunk", 1e3 * f.s, f.multiple, w.r.tasks,
               w.r.events / f.s / 1e6, w.r.step_time_s, 100 * w.r.mfu);
        if (!pass)
            printf("  target < 0.15 ms: %s", verdict(f.s, 0.15e-3));
        printf("\n");
        step_free(&w);
    }
    /* The same graph (16 micro-batches per DP rank) at 1,024 and 131,072
     * GPUs, interleaved round by round. */
    step_work_t small, large;
    memset(&large, 0, sizeof large);
    if (step_setup(&small, 1024, 128, false, &e) || step_setup(&large, 131072, 16384, false, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        step_free(&small);
        step_free(&large);
        return 1;
    }
    enum { ROUNDS = 31, REPS = 40 };
    double ts[ROUNDS], tl[ROUNDS], ratio[ROUNDS];
    int rc = 0;
    for (int r = 0; r < ROUNDS && !rc; r++) {
        /* each goes first in every other round */
        step_work_t *first = r % 2 ? &large : &small, *second = r % 2 ? &small : &large;
        double t0 = clock_now_s();
        for (int i = 0; i < REPS && !rc; i++)
            rc = step_once(first, &e);
        double t1 = clock_now_s();
        for (int i = 0; i < REPS && !rc; i++)
            rc = step_once(second, &e);
        double t2 = clock_now_s();
        ts[r] = (r % 2 ? t2 - t1 : t1 - t0) / REPS;
        tl[r] = (r % 2 ? t1 - t0 : t2 - t1) / REPS;
        ratio[r] = tl[r] / ts[r];
    }
    if (rc) {
        fprintf(stderr, "bench: %s\n", e.msg);
    } else {
        double q = median(ratio, ROUNDS);
        printf("  in-process, the same %d-task graph at 1,024 GPUs %.3f ms, at 131,072 GPUs %.3f ms: "
               "%.2f x  target <= 1.2: %s\n",
               small.r.tasks, 1e3 * median(ts, ROUNDS), 1e3 * median(tl, ROUNDS), q,
               q <= 1.2 ? "met" : "NOT MET");
    }
    step_free(&small);
    step_free(&large);
    return rc ? 1 : 0;
}

/* 1,000 distinct valid layouts of Llama 3 70B across GPU counts. */
typedef struct {
    sim_ctx_t *ctx;
    const model_t *m;
    const profile_t *p;
    const layout_t *layouts;
    const cluster_t *clusters;
    const int *which;
    int n;
    long events;
} layouts_work_t;

static int layouts_once(void *arg, err_t *e)
{
    layouts_work_t *w = arg;
    w->events = 0;
    for (int i = 0; i < w->n; i++) {
        sim_input_t in = {w->m, &w->layouts[i], &w->clusters[w->which[i]], w->p, {0}};
        sim_options_default(&in.opt);
        sim_result_t r;
        if (sim_run_step(w->ctx, &in, &r, e))
            return 1;
        w->events += r.events;
    }
    return 0;
}

static int bench_70b_layouts(reference_t *ref)
{
    err_t e;
    model_t m;
    profile_t p;
    if (model_load("llama3-70b", &m, &e) || prof_load_default("h100-sxm", &p, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    enum { WANT = 1000 };
    static const int gpus_list[] = {64, 128, 256, 512, 1024, 2048};
    static const int tps[] = {1, 2, 4, 8}, pps[] = {1, 2, 4, 5, 8, 10, 16, 20};
    static const int mbs[] = {1, 2, 4};
    layout_t *layouts = calloc(WANT, sizeof *layouts);
    cluster_t *clusters = calloc(sizeof gpus_list / sizeof gpus_list[0], sizeof *clusters);
    int *which = calloc(WANT, sizeof *which);
    if (!layouts || !clusters || !which)
        return 1;
    int n = 0;
    for (size_t g = 0; g < sizeof gpus_list / sizeof gpus_list[0]; g++) {
        cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = gpus_list[g]};
        if (cluster_resolve(&spec, &clusters[g], &e))
            return 1;
    }
    for (size_t g = 0; g < sizeof gpus_list / sizeof gpus_list[0] && n < WANT; g++)
        for (size_t a = 0; a < 4 && n < WANT; a++)
            for (size_t b = 0; b < sizeof pps / sizeof pps[0] && n < WANT; b++)
                for (size_t c = 0; c < 3 && n < WANT; c++)
                    for (int rc = 0; rc <= RECOMPUTE_FULL && n < WANT; rc++)
                        for (int sp = 0; sp < 2 && n < WANT; sp++) {
                            layout_t l;
                            layout_defaults(&l);
                            l.tp = tps[a];
                            l.pp = pps[b];
                            l.micro_batch = mbs[c];
                            l.global_batch = 512;
                            l.seq_len = 4096;
                            l.recompute = (recompute_t)rc;
                            l.sequence_parallel = sp;
                            l.distributed_optimizer = true;
                            err_t ignore;
                            if (layout_finalize(&l, &m, gpus_list[g], &ignore) ||
                                (sp && l.tp == 1))
                                continue;
                            layouts[n] = l;
                            which[n++] = (int)g;
                        }
    layouts_work_t w = {sim_ctx_create(), &m, &p, layouts, clusters, which, n, 0};
    figure_t f;
    if (!w.ctx || measure(ref, layouts_once, &w, 5, 1, 1, &f, &e)) {
        fprintf(stderr, "bench: %s\n", w.ctx ? e.msg : "out of memory");
        return 1;
    }
    printf("%d layouts of llama3-70b (64-2048 H100s) on one core: %.3f s (%.1f x reference)  "
           "target < 0.5 s: %s; %.0f layouts/s, %.2fM events/s\n",
           n, f.s, f.multiple, verdict(f.s, 0.5), n / f.s, w.events / f.s / 1e6);
    sim_ctx_destroy(w.ctx);
    prof_free(&p);
    free(layouts);
    free(clusters);
    free(which);
    return 0;
}

/* 10,000 trials of a 54-day run on 16,384 H100s (Llama 3 405B rates). */
static int bench_reliability(reference_t *ref)
{
    err_t e;
    cluster_t c;
    failure_set_t fs;
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = 16384};
    if (cluster_resolve(&spec, &c, &e) || failure_load_set(NULL, &fs, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    rel_config_t cfg;
    if (rel_config_init(&cfg, &c, &fs, NULL, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    cfg.step_time_s = 7.3;
    cfg.tokens_per_step = 16e6;
    cfg.duration_s = 54 * 86400.0;
    cfg.ckpt_bytes = 405.8e9 * 12;
    cfg.trials = 10000;
    rel_result_t r;
    for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#else
        if (threads > 1)
            break;
#endif
        double ref_s = reference_s(ref, threads);
        double t0 = clock_now_s();
        if (rel_simulate(&cfg, &r, &e)) {
            fprintf(stderr, "bench: %s\n", e.msg);
            return 1;
        }
        double dt = clock_now_s() - t0;
        printf("reliability: 10,000 trials of 54 days on 16,384 H100s on %d core%s: %.3f s "
               "(%.1f x reference; target < 0.2 s on 2 cores), %.0f interruptions per trial\n",
               threads, threads > 1 ? "s" : "", dt, dt / ref_s, r.interruptions_mean);
        if (threads == 2) {
            /* the default: trials until P50/P90 are within the tolerance */
            rel_config_t ad = cfg;
            ad.trials = 0;
            t0 = clock_now_s();
            if (rel_simulate(&ad, &r, &e)) {
                fprintf(stderr, "bench: %s\n", e.msg);
                return 1;
            }
            printf("reliability, adaptive (the default): %d trials to standard errors of "
                   "P50/P90 under %.2g%% in %.3f s on 2 cores\n",
                   r.trials, 100 * ad.tolerance, clock_now_s() - t0);
        }
    }
    return 0;
}

/* A plan as `scaleplan plan --model M --tokens T --gpu h100-sxm --min-gpus
 * MIN --max-gpus MAX` makes it (cmd_plan's defaults: ladder_input_defaults,
 * the reliability template for the base cluster with 300 trials and 2%
 * spares per rung, 12 bytes per parameter checkpointed, $2.49/GPU-h);
 * global_batch_max > 0 replaces the default batch with a range. */
typedef struct {
    model_t m;
    cluster_t c;
    profile_t p;
    failure_set_t f;
    ladder_input_t in;
    ladder_t l;
    double search_s; /* of the last run: the layout searches, all rungs */
} plan_work_t;

static int plan_setup(plan_work_t *w, const char *model, double tokens, int min_gpus,
                      int max_gpus, int global_batch_min, int global_batch_max, err_t *e)
{
    memset(w, 0, sizeof *w);
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = 8};
    if (model_load(model, &w->m, e) || cluster_resolve(&spec, &w->c, e) ||
        prof_load_default("h100-sxm", &w->p, e) || failure_load_set(NULL, &w->f, e))
        return 1;
    ladder_input_t *in = &w->in;
    ladder_input_defaults(in, &w->m);
    in->model = &w->m;
    in->base = &w->c;
    in->profile = &w->p;
    in->failures = &w->f;
    in->tokens = tokens;
    in->usd_per_gpu_hour = 2.49;
    in->min_gpus = min_gpus;
    in->max_gpus = max_gpus;
    if (global_batch_max > 0) {
        in->space.global_batch_min = global_batch_min;
        in->space.global_batch_max = global_batch_max;
    }
    int trials = in->rel.trials, spares = in->rel.spares;
    if (rel_config_init(&in->rel, &w->c, &w->f, NULL, e))
        return 1;
    in->rel.trials = trials;
    in->rel.spares = spares;
    model_params_t mp;
    model_params(&w->m, &mp);
    in->ckpt_bytes = mp.total * REL_CKPT_BYTES_PER_PARAM;
    return 0;
}

static int plan_once(void *arg, err_t *e)
{
    plan_work_t *w = arg;
    if (plan_ladder(&w->in, &w->l, e))
        return 1;
    w->search_s = 0;
    for (int i = 0; i < w->l.n; i++)
        w->search_s += w->l.rung[i].search_s;
    return 0;
}

/* The plan's time, its multiple of the two-core reference, the share of
 * its layout searches, and the target. */
static int bench_plan(reference_t *ref, const char *what, plan_work_t *w, int rounds,
                      double target_s)
{
    err_t e;
    figure_t f;
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    if (measure(ref, plan_once, w, rounds, 1, 2, &f, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    const rung_t *last = &w->l.rung[w->l.n - 1];
    char desc[200] = "nothing fits";
    if (last->feasible)
        layout_describe(&last->layout, desc, sizeof desc);
    printf("plan %s (%d rung%s): %.3f s on 2 threads (%.1f x reference): layout search %.3f s "
           "(%ld layouts, %ld simulated), the rest (reliability of the best layouts) %.3f s; "
           "largest rung %s, step %.2f s",
           what, w->l.n, w->l.n > 1 ? "s" : "", f.s, f.multiple, w->search_s, w->l.layouts,
           w->l.simulated, f.s - w->search_s, desc, last->step.step_time_s);
    if (target_s > 0)
        printf("  target < %g s: %s", target_s, verdict(f.s, target_s));
    printf("\n");
    return 0;
}

static int bench_ladders(reference_t *ref)
{
    err_t e;
    plan_work_t *w = malloc(sizeof *w); /* large: a ladder holds every rung's step */
    if (!w) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    int rc = 0;
    if (plan_setup(w, "llama3-70b", 2e12, 8, 16384, 512, 2048, &e))
        goto fail;
    rc |= bench_plan(ref, "llama3-70b, 8 to 16,384 H100s, global batch 512-2048", w, 3, 10);
    prof_free(&w->p);
    if (plan_setup(w, "llama3-405b", 15e12, 131072, 131072, 0, 0, &e))
        goto fail;
    rc |= bench_plan(ref, "llama3-405b on 131,072 H100s", w, 5, 0.3);
    prof_free(&w->p);
    if (plan_setup(w, "llama3-405b", 15e12, 8, 131072, 0, 0, &e))
        goto fail;
    rc |= bench_plan(ref, "llama3-405b, 8 to 131,072 H100s", w, 3, 1.5);
    prof_free(&w->p);
    free(w);
    return rc;
fail:
    fprintf(stderr, "bench: %s\n", e.msg);
    prof_free(&w->p);
    free(w);
    return 1;
}

/* 1M synthesized jobs replayed on 1,024 GPUs under three policies. */
static int bench_cluster(reference_t *ref)
{
    static const char *const policies[] = {"fifo", "backfill", "las"};
    csynth_spec_t sp = {1000000, 1024, 0.9, 1};
    cjobs_t l;
    err_t e;
    double t0 = clock_now_s();
    if (csynth_make(&sp, &l, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    printf("cluster: 1,000,000 synthesized jobs made in %.2f s\n", clock_now_s() - t0);
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof policies / sizeof policies[0]; i++) {
        creplay_config_t c;
        creplay_config_default(&c, sp.pool_gpus);
        c.policy = cpolicy_find(policies[i]);
        creplay_result_t r;
        double ref_s = reference_s(ref, 1);
        t0 = clock_now_s();
        if ((rc = creplay_run(&l, &c, &r, &e))) {
            fprintf(stderr, "bench: %s\n", e.msg);
            break;
        }
        double dt = clock_now_s() - t0;
        printf("  replay under %-8s %6.2f s (%.0f x reference), %ld passes, %ld preemptions, "
               "utilization %.3f", policies[i], dt, dt / ref_s, r.events, r.preemptions,
               r.utilization);
        if (i < 2)
            printf("  target < 30 s: %s", verdict(dt, 30));
        printf("\n");
        creplay_result_free(&r);
    }
    cjobs_free(&l);
    return rc;
}

/* Helios-like workloads of 1M and 3.4M jobs replayed by the command, each
 * a whole process: its wall time and peak memory per job. */
static int bench_cluster_traces(void)
{
    static const int jobs[] = {1000000, 3362981};
    static const double target_s[] = {30, 120};
    const char *bin = getenv("SCALEPLAN_BIN") ? getenv("SCALEPLAN_BIN") : "bin/scaleplan";
    double per_job[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        char args[200];
        proc_t p = {0};
        double s, rss;
        snprintf(args, sizeof args, "cluster --synthesize helios --jobs %d --gpus 6224 "
                 "--gpus-per-node 8 --policy fifo", jobs[i]);
        split(&p, bin, args);
        if (run_once(p.argv, &s, &rss)) {
            fprintf(stderr, "bench: %s %s failed\n", bin, args);
            return 1;
        }
        per_job[i] = rss * 1048576.0 / jobs[i];
        printf("cluster --synthesize helios: %d jobs, fifo on 6,224 GPUs: %.2f s, peak %.0f MiB "
               "(%.0f bytes a job)  target < %.0f s: %s\n", jobs[i], s, rss, per_job[i],
               target_s[i], verdict(s, target_s[i]));
    }
    double ratio = per_job[1] / per_job[0];
    printf("  memory per job, 3.4M over 1M jobs: %.2f  linear (within 25%%): %s\n", ratio,
           ratio > 0.75 && ratio < 1.25 ? "yes" : "NO");
    return 0;
}

/* The demo portfolio planned: curves priced (per-job layout search at
 * each size), then the sizes searched, as `cluster --policy planner`. */
static int bench_portfolio(reference_t *ref)
{
    const char *path = "tests/fixtures/cluster/portfolio_10_models.csv";
    cjobs_t l = {0};
    err_t e;
    catalog_t *cat = catalog_create();
    cplan_curve_t *c = NULL;
    cplan_result_t r = {0};
    double ref_s = reference_s(ref, 1), t0 = clock_now_s(), t1 = t0;
    clock_t cpu0 = clock(); /* CPU time: what the work costs whatever else the machine runs */
    int rc = cat ? cjobs_read(cjobs_format_find("jobs"), path, &l, &e)
                 : err_set(&e, ERR_RUNTIME, "out of memory");
    if (!rc && !(c = calloc((size_t)l.n, sizeof *c)))
        rc = err_set(&e, ERR_RUNTIME, "out of memory");
    creplay_config_t cfg;
    creplay_config_default(&cfg, 512);
    if (!rc && !(rc = cplan_curves(&l, "h100-sxm", 512, cat, c, NULL, NULL, &e))) {
        t1 = clock_now_s();
        rc = cplan_search(&l, c, &cfg, CPLAN_MAKESPAN, &r, &e);
    }
    double dt = clock_now_s() - t0, cpu_s = (double)(clock() - cpu0) / CLOCKS_PER_SEC;
    if (rc) {
        fprintf(stderr, "bench: %s\n", e.msg);
    } else {
        int sizes = 0;
        for (int i = 0; i < l.n; i++)
            sizes += c[i].n;
        printf("cluster planner: 10-job LLM portfolio on 512 H100s, %d sizes priced in %.2f s, "
               "%ld plans replayed in %.3f s: %.2f s (%.0f x reference; %.2f s of CPU on all "
               "threads), makespan %.1f d (fixed sizes %.1f d)  target < 5 s: %s\n", sizes,
               t1 - t0, r.replays, dt - (t1 - t0), dt, dt / ref_s, cpu_s, r.objective / 86400,
               r.fixed_makespan_s / 86400, verdict(dt, 5));
    }
    cplan_result_free(&r);
    free(c);
    cjobs_free(&l);
    catalog_destroy(cat);
    return rc ? 1 : 0;
}

/* Whether section name was asked for (no arguments: every section). */
static bool wanted(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return true;
    return argc < 2;
}

int main(int argc, char **argv)
{
    reference_t ref = {{malloc(REF_N * sizeof(double)), malloc(REF_N * sizeof(double))}, 0};
    if (!ref.buf[0] || !ref.buf[1]) {
        fprintf(stderr, "bench: out of memory\n");
        return 1;
    }
    double r1[9], r2[9];
    for (int i = 0; i < 9; i++) {
        r1[i] = reference_s(&ref, 1);
        r2[i] = reference_s(&ref, 2);
    }
    printf("reference: qsort of %d doubles, %.2f ms on one core, %.2f ms on each of two at "
           "once (medians of 9)\n",
           REF_N, 1e3 * median(r1, 9), 1e3 * median(r2, 9));
    int rc = 0;
    if (wanted(argc, argv, "processes"))
        rc |= bench_processes();
    if (wanted(argc, argv, "steps"))
        rc |= bench_405b_inprocess(&ref);
    if (wanted(argc, argv, "layouts"))
        rc |= bench_70b_layouts(&ref);
    if (wanted(argc, argv, "reliability"))
        rc |= bench_reliability(&ref);
    if (wanted(argc, argv, "plans"))
        rc |= bench_ladders(&ref);
    if (wanted(argc, argv, "cluster"))
        rc |= bench_cluster(&ref);
    if (wanted(argc, argv, "traces"))
        rc |= bench_cluster_traces();
    if (wanted(argc, argv, "portfolio"))
        rc |= bench_portfolio(&ref);
    if (wanted(argc, argv, "api"))
        rc |= bench_api();
    free(ref.buf[0]);
    free(ref.buf[1]);
    return rc;
}
