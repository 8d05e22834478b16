/* bench: speed of the simulator (make bench). Prints figures; it is a
 * benchmark, not a test, and fails only if something cannot run.
 *
 *   1. whole processes of the real binary, started directly (posix_spawn,
 *      no shell), interleaved round by round so that a busy machine slows
 *      all alike, with /bin/true as the cost of starting any process:
 *      `scaleplan --help` (target: under 5 ms), a 70B `sim` (under 10 ms)
 *      and one step of Llama 3 405B on 16,384 H100s (TP8 PP16 DP128,
 *      interleaved, seq 8192, global batch 2048; under 10 ms), with the
 *      peak resident memory of each; BENCH_COMPARE_BIN=path adds the same
 *      commands of another build (an older one, say) to the same rounds;
 *   2. the 405B step in-process;
 *   3. 1,000 different layouts of a 70B model simulated in-process on one
 *      core (target: under 0.5 s), with layouts and events per second;
 *   4. 10,000 reliability trials (target: under 0.2 s on 2 cores) and the
 *      adaptive default; 5. the full plan ladder.
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
#include <unistd.h>

#include "common/clock.h"
#include "sim/ladder.h"
#include "sim/reliability.h"
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
    "--global-batch 2048 --sequence-parallel --distributed-optimizer --json";

static int bench_processes(void)
{
    const char *bin = getenv("SCALEPLAN_BIN");
    if (!bin)
        bin = "bin/scaleplan";
    const char *other = getenv("BENCH_COMPARE_BIN");
    enum { RUNS = 41, MAX_N = 7 };
    static proc_t p[MAX_N];
    int N = other && *other ? 7 : 4;
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
    if (N == 7) {
        static char labels[3][200];
        const char *what[] = {"--help", "sim, 70B", "sim, 405B"};
        const char *args[] = {"--help", SIM70_ARGS, LLAMA405_ARGS};
        for (int i = 0; i < 3; i++) {
            snprintf(labels[i], sizeof labels[i], "%s %s", other, what[i]);
            p[4 + i].label = labels[i];
            split(&p[4 + i], other, args[i]);
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
        printf("  %-36.60s %6.2f ms  best %6.2f ms  %6.1f MiB", p[i].label, 1e3 * med,
               1e3 * p[i].t[0], p[i].rss_mib);
        if (i > 0)
            printf("  (%.1fx a bare process start)", base > 0 ? med / base : 0);
        if (p[i].target)
            printf("  target %s: %s", p[i].target,
                   1e3 * med < atof(p[i].target + 2) ? "met" : "NOT MET");
        printf("\n");
        free(p[i].t);
    }
    return 0;
}

static int bench_405b_inprocess(void)
{
    err_t e;
    model_t m;
    cluster_t c;
    profile_t p;
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = 16384};
    layout_t l;
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 16;
    l.vpp = 4;
    l.schedule = SCHEDULE_INTERLEAVED;
    l.first_stage_layers = l.last_stage_layers = 1;
    l.seq_len = 8192;
    l.global_batch = 2048;
    l.sequence_parallel = true;
    l.distributed_optimizer = true;
    if (model_load("llama3-405b", &m, &e) || cluster_resolve(&spec, &c, &e) ||
        prof_load_default("h100-sxm", &p, &e) || layout_finalize(&l, &m, 16384, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    sim_input_t in = {&m, &l, &c, &p, {0}};
    sim_options_default(&in.opt);
    sim_ctx_t *ctx = sim_ctx_create();
    sim_result_t r;
    int rc = 0;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        in.opt.layer_events = pass == 1;
        double t0 = clock_now_s();
        enum { REPS = 20 };
        for (int i = 0; i < REPS && !rc; i++)
            rc = sim_run_step(ctx, &in, &r, &e);
        double dt = (clock_now_s() - t0) / REPS;
        if (!rc)
            printf("  in-process, %s events: %.2f ms per step, %d tasks, %.2fM events/s "
                   "(step %.2f s, MFU %.1f%%)\n",
                   pass ? "per-layer" : "per-chunk", 1e3 * dt, r.tasks, r.events / dt / 1e6,
                   r.step_time_s, 100 * r.mfu);
    }
    if (rc)
        fprintf(stderr, "bench: %s\n", e.msg);
    sim_ctx_destroy(ctx);
    prof_free(&p);
    return rc ? 1 : 0;
}

/* 1,000 distinct valid layouts of Llama 3 70B across GPU counts. */
static int bench_70b_layouts(void)
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
    sim_ctx_t *ctx = sim_ctx_create();
    long events = 0;
    double t0 = clock_now_s();
    for (int i = 0; i < n; i++) {
        sim_input_t in = {&m, &layouts[i], &clusters[which[i]], &p, {0}};
        sim_options_default(&in.opt);
        sim_result_t r;
        if (sim_run_step(ctx, &in, &r, &e)) {
            fprintf(stderr, "bench: %s\n", e.msg);
            return 1;
        }
        events += r.events;
    }
    double dt = clock_now_s() - t0;
    printf("%d layouts of llama3-70b (64-2048 H100s) on one core: %.3f s (target < 0.5 s), "
           "%.0f layouts/s, %.2fM events/s\n",
           n, dt, n / dt, events / dt / 1e6);
    sim_ctx_destroy(ctx);
    prof_free(&p);
    free(layouts);
    free(clusters);
    free(which);
    return 0;
}

/* 10,000 trials of a 54-day run on 16,384 H100s (Llama 3 405B rates). */
static int bench_reliability(void)
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
        double t0 = clock_now_s();
        if (rel_simulate(&cfg, &r, &e)) {
            fprintf(stderr, "bench: %s\n", e.msg);
            return 1;
        }
        double dt = clock_now_s() - t0;
        printf("reliability: 10,000 trials of 54 days on 16,384 H100s on %d core%s: %.3f s "
               "(target < 0.2 s on 2 cores), %.0f interruptions per trial\n",
               threads, threads > 1 ? "s" : "", dt, r.interruptions_mean);
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

/* The full ladder for Llama 3 70B, 8 to 16,384 H100s, every valid layout. */
static int bench_ladder(void)
{
    err_t e;
    model_t m;
    cluster_t c;
    profile_t p;
    failure_set_t f;
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = 8};
    if (model_load("llama3-70b", &m, &e) || cluster_resolve(&spec, &c, &e) ||
        prof_load_default("h100-sxm", &p, &e) || failure_load_set(NULL, &f, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    ladder_input_t in;
    memset(&in, 0, sizeof in);
    in.model = &m;
    in.base = &c;
    in.profile = &p;
    in.failures = &f;
    in.tokens = 2e12;
    in.usd_per_gpu_hour = 2.49;
    plan_space_default(&in.space);
    in.space.seq_len = 8192;
    in.space.global_batch_min = 512;
    in.space.global_batch_max = 2048;
    in.min_marginal = 0.5;
    in.min_gpus = 8;
    in.max_gpus = 16384;
    if (rel_config_init(&in.rel, &c, &f, NULL, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    in.rel.trials = 0; /* adaptive, as plan runs it */
    in.rel.spares = -1;
    in.ckpt_bytes = 12 * 70.6e9;
    static ladder_t l;
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    if (plan_ladder(&in, &l, &e)) {
        fprintf(stderr, "bench: %s\n", e.msg);
        return 1;
    }
    printf("plan ladder llama3-70b, 8 to 16,384 H100s (%d rungs, global batch 512-2048): %.2f s on "
           "2 threads (target < 10 s), %ld layouts (%.0f layouts/s), %ld simulated\n",
           l.n, l.elapsed_s, l.layouts, l.layouts / l.elapsed_s, l.simulated);
    prof_free(&p);
    return 0;
}

int main(void)
{
    int rc = bench_processes();
    rc |= bench_405b_inprocess();
    rc |= bench_70b_layouts();
    rc |= bench_reliability();
    rc |= bench_ladder();
    return rc;
}
