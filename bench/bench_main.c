/* bench: speed of the simulator (make bench). Prints figures; it is a
 * benchmark, not a test, and fails only if something cannot run.
 *
 *   1. one step of Llama 3 405B on 16,384 H100s (TP8 PP16 DP128, interleaved,
 *      seq 8192, global batch 2048) through the real binary, wall time
 *      including process start (target: under 50 ms);
 *   2. 1,000 different layouts of a 70B model simulated in-process on one
 *      core (target: under 0.5 s), with layouts and events per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "sim/ladder.h"
#include "sim/reliability.h"
#include "sim/step.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *LLAMA405_ARGS =
    "sim --model llama3-405b --gpu h100-sxm --gpus 16384 --tp 8 --pp 16 --vpp 4 "
    "--first-stage-layers 1 --last-stage-layers 1 --seq-len 8192 --micro-batch 1 "
    "--global-batch 2048 --sequence-parallel --distributed-optimizer --json";

static int bench_405b_process(void)
{
    const char *bin = getenv("SCALEPLAN_BIN");
    if (!bin)
        bin = "bin/scaleplan";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s > /dev/null", bin, LLAMA405_ARGS);
    enum { RUNS = 15 };
    double t[RUNS];
    for (int i = 0; i < RUNS; i++) {
        double t0 = clock_now_s();
        if (system(cmd) != 0) {
            fprintf(stderr, "bench: '%s' failed\n", cmd);
            return 1;
        }
        t[i] = clock_now_s() - t0;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    printf("llama3-405b step on 16,384 H100 (whole process): median %.1f ms, best %.1f ms "
           "(target < 50 ms)\n",
           1e3 * t[RUNS / 2], 1e3 * t[0]);
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
    rel_config_default(&cfg, &c, &fs);
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
               "(target < 2 s on one core), %.0f interruptions per trial\n",
               threads, threads > 1 ? "s" : "", dt, r.interruptions_mean);
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
    rel_config_default(&in.rel, &c, &f);
    in.rel.trials = 300;
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
    int rc = bench_405b_process();
    rc |= bench_405b_inprocess();
    rc |= bench_70b_layouts();
    rc |= bench_reliability();
    rc |= bench_ladder();
    return rc;
}
