/* Tests of the planning side of `scaleplan cluster` (cluster/planner.h):
 * the sizes a job may take, the planner never later than the best
 * fixed-size FIFO/backfill plan (100 random portfolios), a resized job
 * finishing a portfolio sooner (the search switched off, it would not),
 * the demo portfolio at least 10% sooner (issue 39's acceptance), and bad
 * input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster/planner.h"
#include "cluster/replay.h"
#include "cluster/synth.h"
#include "cluster/timeline.h"
#include "common/json.h"
#include "tests/testing.h"

/* A job of l (names borrowed from a static table). */
static void add_job(cjobs_t *l, const char *name, int gpus, double submit_s, double dur_s,
                    int lo, int hi)
{
    cjob_t j;
    memset(&j, 0, sizeof j);
    j.name = (char *)name;
    j.gpus = gpus;
    j.submit_ms = (int64_t)(submit_s * 1000);
    j.duration_ms = (int64_t)(dur_s * 1000);
    j.min_gpus = lo;
    j.max_gpus = hi;
    j.preemptible = true;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(cjobs_add(l, &j, &e), 0);
}

/* Amdahl-like curve: at g GPUs the run time is work / g stretched by
 * (1 + loss x log2(g / asked)) above the asked size (a loss of 0 is
 * perfect scaling), each point rounded to a whole ms. */
static void amdahl_curve(const cjob_t *j, int pool, double loss, cplan_curve_t *c)
{
    int sizes[CPLAN_MAX_SIZES], asked = 0;
    memset(c, 0, sizeof *c);
    c->n = cplan_sizes(j, pool, sizes, &asked);
    c->asked = asked;
    for (int k = 0; k < c->n; k++) {
        double r = (double)sizes[k] / j->gpus;
        double stretch = r > 1 ? 1 + loss * log2(r) : 1;
        c->gpus[k] = sizes[k];
        c->duration_ms[k] = k == asked ? j->duration_ms
                                       : (int64_t)ceil((double)j->duration_ms / r * stretch);
    }
}

static void test_planner_sizes(void)
{
    cjob_t j;
    memset(&j, 0, sizeof j);
    j.gpus = 24;
    j.min_gpus = 8;
    j.max_gpus = 100;
    int s[CPLAN_MAX_SIZES], asked = -1;
    /* 8, its doublings below 100, the asked 24 and the largest 100 */
    int n = cplan_sizes(&j, 512, s, &asked);
    static const int want[] = {8, 16, 24, 32, 64, 100};
    CU_ASSERT_EQUAL_FATAL(n, 6);
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(s[i], want[i]);
    CU_ASSERT_EQUAL(asked, 2);
    n = cplan_sizes(&j, 32, s, &asked); /* capped at the pool: 8 16 24 32 */
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_EQUAL(s[n - 1], 32);
    j.min_gpus = j.max_gpus = 0; /* no range: only the asked size */
    CU_ASSERT_EQUAL(cplan_sizes(&j, 512, s, &asked), 1);
    CU_ASSERT_EQUAL(s[0], 24);
}

/* Hand-worked: a pool of 64; A asks 32 GPUs for 100 h (may take 64,
 * perfect scaling), B asks 32 for 10 h at the same time, fixed. Fixed
 * sizes: both start at 0, makespan 100 h. Plan: A on 64 runs 50 h, B after
 * it 10 h (or before): makespan 60 h, 40% sooner. With the search off
 * (no size but the asked one), it stays 100 h. */
static void test_planner_resizes_dominant_job(void)
{
    cjobs_t l = {0};
    add_job(&l, "A", 32, 0, 100 * 3600.0, 32, 64);
    add_job(&l, "B", 32, 0, 10 * 3600.0, 0, 0);
    cplan_curve_t c[2];
    for (int i = 0; i < 2; i++)
        amdahl_curve(&l.jobs[i], 64, 0, &c[i]);
    creplay_config_t cfg;
    creplay_config_default(&cfg, 64);
    cplan_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(cplan_search(&l, c, &cfg, CPLAN_MAKESPAN, &r, &e), 0);
    check_rel_at(r.fixed_makespan_s, 100 * 3600.0, 1e-9, "fixed makespan", __FILE__, __LINE__);
    check_rel_at(r.objective, 60 * 3600.0, 1e-6, "planned makespan", __FILE__, __LINE__);
    CU_ASSERT_EQUAL(c[0].gpus[r.choice[0]], 64);
    /* the plan written into the list replays to the figure it promised */
    cplan_apply(&l, c, &r);
    cfg.policy = r.policy;
    creplay_result_t x;
    CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &x, &e), 0);
    CU_ASSERT_EQUAL(x.makespan_s, r.objective);
    creplay_result_free(&x);
    cplan_result_free(&r);
    cjobs_free(&l);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* Fixed-size FIFO and backfill of l, replayed here (not by the planner). */
static double best_fixed_makespan(const cjobs_t *l, int pool)
{
    double best = INFINITY;
    for (int p = 0; p < 2; p++) {
        creplay_config_t cfg;
        creplay_config_default(&cfg, pool);
        cfg.policy = cpolicy_find(p ? "backfill" : "fifo");
        creplay_result_t x;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(creplay_run(l, &cfg, &x, &e), 0);
        best = x.makespan_s < best ? x.makespan_s : best;
        creplay_result_free(&x);
    }
    return best;
}

/* 100 random portfolios (5-20 jobs of 1-128 GPUs asked, ranges from a
 * quarter to four times, run times of 10 min to 2 days, scaling losses of
 * 0-40% per doubling, arrivals within a day) on 128 GPUs: the planner is
 * never later than the best fixed-size plan, and on some it is sooner. */
static void test_planner_never_later(void)
{
    static const char *names[20] = {"j0", "j1", "j2", "j3", "j4", "j5", "j6", "j7", "j8", "j9",
                                    "j10", "j11", "j12", "j13", "j14", "j15", "j16", "j17",
                                    "j18", "j19"};
    uint64_t seed = 39;
    int sooner = 0, pool = 128;
    for (int t = 0; t < 100; t++) {
        cjobs_t l = {0};
        int n = 5 + (int)(lcg(&seed) % 16);
        for (int i = 0; i < n; i++) {
            int g = 1 << (lcg(&seed) % 8); /* 1..128 */
            int lo = g / 4 > 0 ? g / 4 : 1, hi = g * 4 < pool ? g * 4 : pool;
            double dur = 600.0 * pow(288.0, (double)(lcg(&seed) % 1000) / 1000);
            add_job(&l, names[i], g, (double)(lcg(&seed) % 86400), dur, lo, hi);
        }
        cplan_curve_t c[20];
        for (int i = 0; i < n; i++)
            amdahl_curve(&l.jobs[i], pool, 0.4 * (double)(lcg(&seed) % 100) / 100, &c[i]);
        creplay_config_t cfg;
        creplay_config_default(&cfg, pool);
        cplan_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(cplan_search(&l, c, &cfg, CPLAN_MAKESPAN, &r, &e), 0);
        double fixed = best_fixed_makespan(&l, pool);
        if (r.objective > fixed)
            fprintf(stderr, "\nportfolio %d: planner %.0f s, fixed %.0f s\n", t, r.objective,
                    fixed);
        CU_ASSERT_TRUE(r.objective <= fixed);
        CU_ASSERT_EQUAL(r.fixed_makespan_s, fixed);
        sooner += r.objective < fixed;
        cplan_result_free(&r);
        cjobs_free(&l);
    }
    CU_ASSERT_TRUE(sooner >= 50);
}

/* Issue 39's acceptance on the demo portfolio (ten model + tokens jobs,
 * each a range of half to double its asked GPUs, priced by the step
 * simulator on 512 H100s): at least 10% sooner than the best fixed-size
 * FIFO/backfill plan; the JSON carries the plan. */
static void test_planner_demo_portfolio(void)
{
    char args[600], *out = NULL;
    snprintf(args, sizeof args, "cluster --trace %s --gpus 512 --gpus-per-node 8 --gpu h100-sxm "
             "--policy planner --json", fixture("cluster/portfolio_10_models.csv"));
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &out, NULL), 0);
    cJSON *j = cJSON_Parse(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *p = cJSON_GetObjectItem(j, "planner");
    double m = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "makespan_s"));
    double fixed = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "fixed_makespan_s"));
    CU_ASSERT_TRUE(m > 0 && fixed > 0 && m <= 0.9 * fixed);
    CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(j, "policy")), "planner");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(p, "jobs")), 10);
    cJSON_Delete(j);
    free(out);
}

/* Bad input of the planner's columns and flags: exit 2, one line. */
static void test_planner_bad_input(void)
{
    char dir[512];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    static const struct {
        const char *text, *args, *needle;
    } cases[] = {
        {"name,gpus,submit_s,duration_s,min_gpus\na,8,0,10,16\n", "", "min_gpus"},
        {"name,gpus,submit_s,duration_s,max_gpus\na,8,0,10,4\n", "", "max_gpus"},
        {"name,gpus,submit_s,duration_s\na,8,0,10\n", "--policy planner --objective speed",
         "--objective"},
        {"name,gpus,submit_s,duration_s\na,8,0,10\n", "--policy planner --cluster "
         "8xh100-sxm,8xa100-80g", "--policy"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[700], args[1600], *err = NULL;
        snprintf(path, sizeof path, "%s/p%zu.csv", dir, i);
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(cases[i].text, f);
        fclose(f);
        snprintf(args, sizeof args, "cluster --trace %s --gpus 16 %s", path, cases[i].args);
        if (strstr(cases[i].args, "--cluster"))
            snprintf(args, sizeof args, "cluster --trace %s %s", path, cases[i].args);
        int rc = run_cli(args, NULL, &err);
        bool ok = rc == 2 && err && count_lines(err) == 1 && strstr(err, cases[i].needle);
        if (!ok)
            fprintf(stderr, "\n$ scaleplan %s: exit %d, stderr: %s\n", args, rc, err ? err : "");
        CU_ASSERT_TRUE(ok);
        free(err);
    }
    remove_tree(dir);
}

/* The timeline: the runs a replay records add up to its GPU time, the
 * GPUs in use never exceed the pool and end at 0; Jain's index by hand. */
static void test_timeline_books(void)
{
    cjobs_t l = {0};
    /* pool 8: A 8 GPUs 1 h at 0; B 4 GPUs 2 h at 0 (waits for A, FIFO) */
    add_job(&l, "A", 8, 0, 3600, 0, 0);
    add_job(&l, "B", 4, 0, 7200, 0, 0);
    creplay_config_t cfg;
    creplay_config_default(&cfg, 8);
    ctimeline_t t = {0};
    cfg.on_segment = ctimeline_record;
    cfg.segment_ctx = &t;
    creplay_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &r, &e), 0);
    CU_ASSERT_EQUAL_FATAL(t.n, 2);
    int64_t gpu_ms = 0;
    for (int i = 0; i < t.n; i++)
        gpu_ms += (t.seg[i].end_ms - t.seg[i].start_ms) * t.seg[i].gpus;
    CU_ASSERT_EQUAL(gpu_ms, r.gpu_ms);
    int64_t *at;
    int *g, n;
    CU_ASSERT_EQUAL_FATAL(ctimeline_in_use(&t, &at, &g, &n, &e), 0);
    /* 8 from 0, 4 from 1 h, 0 from 3 h */
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_TRUE(at[0] == 0 && g[0] == 8 && at[1] == 3600000 && g[1] == 4 &&
                   at[2] == 3 * 3600000 && g[2] == 0);
    /* speeds: A 1 h / 1 h = 1, B 2 h / 3 h = 2/3: (5/3)^2 / (2 (1 + 4/9)) = 25/26 */
    CHECK_REL(ctimeline_jain(&l, &r), 25.0 / 26.0, 1e-12);
    free(at);
    free(g);
    ctimeline_free(&t);
    creplay_result_free(&r);
    cjobs_free(&l);
}

/* --perfetto: one track per job (thread_name metadata), a span per run,
 * the GPUs in use as a counter; --report: index.html with the Gantt chart
 * and the utilization SVG (no external script), result.json with the timeline. */
static void test_cli_trace_and_report(void)
{
    char dir[512], args[1600], path[700];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(args, sizeof args, "cluster --trace %s --trace-format tiresias --gpus 8 --policy las "
             "--perfetto %s/t.json --report %s/rep", fixture("cluster/tiresias_60_job.csv"), dir,
             dir);
    char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &out, NULL), 0);
    free(out);
    snprintf(path, sizeof path, "%s/t.json", dir);
    char *text = slurp(path);
    cJSON *tr = text ? cJSON_Parse(text) : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(tr);
    int names = 0, runs = 0, counters = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(tr, "traceEvents")) {
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph"));
        names += !strcmp(ph, "M");
        runs += !strcmp(ph, "X") && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")),
                                           "waiting") != 0;
        counters += !strcmp(ph, "C");
    }
    CU_ASSERT_EQUAL(names, 61); /* 60 jobs and the counter's track */
    CU_ASSERT_TRUE(runs >= 60); /* las preempts: some jobs run more than once */
    CU_ASSERT_TRUE(counters > 0);
    cJSON_Delete(tr);
    free(text);
    snprintf(path, sizeof path, "%s/rep/index.html", dir);
    text = slurp(path);
    CU_ASSERT_TRUE(text && strstr(text, "Which job runs when") && strstr(text, "<svg") &&
                   strstr(text, "GPUs in use") && !strstr(text, "<script src"));
    free(text);
    remove_tree(dir);
}

/* Spot: 300 synthesized jobs on 64 GPUs, 16 of them spot (2 nodes), each
 * node reclaimed once a node-hour for 30 min, checkpoints every 10 min, under every
 * policy: the GPU time allocated is the jobs' work plus the progress lost
 * exactly; jobs are stopped by reclaims and the per-job counts add up;
 * same seed, same replay; without spot, no reclaims and no loss. */
static void test_spot_books(void)
{
    csynth_spec_t sp = {300, 64, 0.9, 11};
    cjobs_t l;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(csynth_make(&sp, &l, &e), 0);
    int64_t work = 0;
    for (int i = 0; i < l.n; i++)
        work += l.jobs[i].duration_ms * l.jobs[i].gpus;
    int n_pol;
    const cpolicy_t *all = cpolicy_all(&n_pol);
    for (int p = 0; p < n_pol; p++) {
        creplay_config_t cfg;
        creplay_config_default(&cfg, 64);
        cfg.policy = &all[p];
        cfg.spot_gpus = 16;
        cfg.spot_reclaims_per_node_hour = 1;
        cfg.spot_outage_ms = 1800000;
        cfg.checkpoint_ms = 600000;
        cfg.seed = 5;
        creplay_result_t r, again;
        CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &r, &e), 0);
        long per_job = 0;
        for (int i = 0; i < l.n; i++)
            per_job += r.jobs[i].reclaims;
        if (r.gpu_ms != work + r.lost_gpu_ms || r.reclaims == 0)
            fprintf(stderr, "\nspot under %s: %lld allocated, %lld work + %lld lost, %ld "
                    "reclaims\n", all[p].name, (long long)r.gpu_ms, (long long)work,
                    (long long)r.lost_gpu_ms, r.reclaims);
        CU_ASSERT_EQUAL(r.gpu_ms, work + r.lost_gpu_ms);
        CU_ASSERT_EQUAL(r.lost_gpu_ms, r.reclaim_lost_gpu_ms);
        CU_ASSERT_TRUE(r.reclaims > 0 && r.reclaim_lost_gpu_ms > 0);
        CU_ASSERT_EQUAL(per_job, r.reclaims);
        CU_ASSERT_TRUE(r.max_gpus_in_use <= 64);
        CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &again, &e), 0);
        CU_ASSERT_EQUAL(again.last_end_ms, r.last_end_ms);
        CU_ASSERT_EQUAL(again.reclaims, r.reclaims);
        creplay_result_free(&again);
        cfg.spot_gpus = 0;
        CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &again, &e), 0);
        CU_ASSERT_TRUE(again.reclaims == 0 && again.gpu_ms == work);
        creplay_result_free(&again);
        creplay_result_free(&r);
    }
    cjobs_free(&l);
}

/* A job's own checkpoint interval (checkpoint_s) bounds what a reclaim
 * costs it: two 8-GPU jobs on 16 GPUs, 8 of them spot (one node),
 * reclaimed once a node-hour for 10 min; with checkpoints every 60 s it loses under a minute a
 * reclaim, with none kept it loses all its progress each time. */
static void test_spot_checkpoint_per_job(void)
{
    double lost_h[2];
    for (int k = 0; k < 2; k++) {
        cjobs_t l = {0};
        add_job(&l, "a", 8, 0, 10 * 3600.0, 0, 0);
        add_job(&l, "b", 8, 0, 3 * 3600.0, 0, 0); /* takes the other node first */
        l.jobs[1].checkpoint_ms = l.jobs[0].checkpoint_ms = k ? 60000 : 0;
        creplay_config_t cfg;
        creplay_config_default(&cfg, 16);
        cfg.spot_gpus = 8;
        cfg.spot_reclaims_per_node_hour = 1;
        cfg.spot_outage_ms = 600000;
        cfg.seed = 3;
        creplay_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &r, &e), 0);
        lost_h[k] = (double)r.reclaim_lost_gpu_ms / 3.6e6;
        CU_ASSERT_TRUE(r.reclaims > 0);
        if (k)
            CU_ASSERT_TRUE(r.reclaim_lost_gpu_ms <= r.reclaims * 60000LL * 8);
        creplay_result_free(&r);
        cjobs_free(&l);
    }
    CU_ASSERT_TRUE(lost_h[1] < lost_h[0]);
}

/* Quotas with borrowing, by hand: 16 GPUs, teams A and B with 8 each.
 * At 0 B submits b1 and b2 (8 GPUs, 10 h each): b1 within B's quota, b2
 * borrows A's idle 8. At 1 h A submits a1 (8 GPUs, 1 h), within its
 * quota: it reclaims them by preempting b2 (of B's two, the later),
 * runs 1-2 h, and b2 resumes at 2 h, ending at 11 h. Without quotas
 * (every job borrowing alike) a1 waits until 10 h. */
static void test_quota_reclaim(void)
{
    static const char *const teams[] = {"A", "B"};
    static const int quota[] = {8, 8};
    for (int k = 0; k < 2; k++) {
        cjobs_t l = {0};
        add_job(&l, "b1", 8, 0, 10 * 3600.0, 0, 0);
        add_job(&l, "b2", 8, 0, 10 * 3600.0, 0, 0);
        add_job(&l, "a1", 8, 3600, 3600, 0, 0);
        l.jobs[0].team = l.jobs[1].team = (char *)"B"; /* borrowed: not freed below */
        l.jobs[2].team = (char *)"A";
        creplay_config_t cfg;
        creplay_config_default(&cfg, 16);
        cfg.policy = cpolicy_find("quota");
        cfg.n_teams = k ? 0 : 2; /* k = 1: the quotas switched off */
        cfg.team_names = teams;
        cfg.team_quota_gpus = quota;
        creplay_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &r, &e), 0);
        if (k == 0) {
            CU_ASSERT_EQUAL(r.jobs[2].start_ms, 3600000);
            CU_ASSERT_EQUAL(r.jobs[2].end_ms, 2 * 3600000);
            CU_ASSERT_EQUAL(r.jobs[1].preemptions, 1);
            CU_ASSERT_EQUAL(r.jobs[0].preemptions, 0);
            CU_ASSERT_EQUAL(r.jobs[1].end_ms, 11 * 3600000LL);
        } else {
            CU_ASSERT_EQUAL(r.jobs[2].start_ms, 10 * 3600000LL);
            CU_ASSERT_EQUAL(r.preemptions, 0);
        }
        creplay_result_free(&r);
        for (int i = 0; i < l.n; i++)
            l.jobs[i].team = NULL;
        cjobs_free(&l);
    }
}

/* Priority among borrowers: 16 GPUs, A and B 8 each; B runs b1 and b2
 * (8 GPUs, 10 h; b2 borrowing A's idle 8). At 1 h B submits b3 (8 GPUs,
 * 1 h), also beyond B's quota: of a higher class (5) it preempts the
 * borrowing b2 (Kueue's borrowWithinCohort: LowerPriority) and runs 1-2 h;
 * of the same class it waits until 10 h. */
static void test_quota_priority_borrowing(void)
{
    static const char *const teams[] = {"A", "B"};
    static const int quota[] = {8, 8};
    for (int k = 0; k < 2; k++) {
        cjobs_t l = {0};
        add_job(&l, "b1", 8, 0, 10 * 3600.0, 0, 0);
        add_job(&l, "b2", 8, 0, 10 * 3600.0, 0, 0);
        add_job(&l, "b3", 8, 3600, 3600, 0, 0);
        for (int i = 0; i < 3; i++)
            l.jobs[i].team = (char *)"B"; /* borrowed: not freed below */
        l.jobs[2].priority = k ? 0 : 5;
        creplay_config_t cfg;
        creplay_config_default(&cfg, 16);
        cfg.policy = cpolicy_find("quota");
        cfg.n_teams = 2;
        cfg.team_names = teams;
        cfg.team_quota_gpus = quota;
        creplay_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &r, &e), 0);
        CU_ASSERT_EQUAL(r.jobs[2].start_ms, k ? 10 * 3600000LL : 3600000);
        CU_ASSERT_EQUAL(r.jobs[1].preemptions, k ? 0 : 1);
        CU_ASSERT_EQUAL(r.jobs[0].preemptions, 0);
        creplay_result_free(&r);
        for (int i = 0; i < l.n; i++)
            l.jobs[i].team = NULL;
        cjobs_free(&l);
    }
}

/* --what-if: gpus=+64 on the worked example replays on 128 GPUs, no
 * later than on 64; --policy quota with --quota and deadlines runs; the
 * bad input of quotas, deadlines and changes is one line, exit 2. */
static void test_cli_whatif_quota_deadline(void)
{
    char dir[512], path[700], args[1600], *out = NULL;
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(args, sizeof args, "cluster --trace %s --gpus 64 --gpus-per-node 8 --gpu h100-sxm "
             "--what-if gpus=+64,policy=srtf --json", fixture("cluster/jobs_example.csv"));
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &out, NULL), 0);
    cJSON *j = cJSON_Parse(out), *w = cJSON_GetObjectItem(j, "what_if");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(w), 2);
    cJSON *w0 = cJSON_GetArrayItem(w, 0);
    CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(w0, "gpus")), 128);
    CU_ASSERT_TRUE(cJSON_GetNumberValue(cJSON_GetObjectItem(w0, "makespan_s")) <=
                   cJSON_GetNumberValue(cJSON_GetObjectItem(j, "makespan_s")));
    cJSON_Delete(j);
    free(out);
    snprintf(path, sizeof path, "%s/teams.csv", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("name,gpus,submit_s,duration_s,team,deadline_s\nb1,8,0,36000,B,\n"
          "b2,8,0,36000,B,\na1,8,3600,3600,A,7300\n", f);
    fclose(f);
    snprintf(args, sizeof args, "cluster --trace %s --gpus 16 --policy quota --quota A=8,B=8 "
             "--per-job --json", path);
    out = NULL;
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &out, NULL), 0);
    CU_ASSERT_TRUE(out && strstr(out, "\"deadline_met\":\ttrue"));
    free(out);
    static const struct {
        const char *text, *args, *needle;
    } bad[] = {
        {"name,gpus,submit_s,duration_s,deadline_s\na,8,100,10,50\n", "", "deadline_s"},
        {"name,gpus,submit_s,duration_s,team\na,8,0,10,A\n", "--policy quota --quota A=32",
         "--quota"},
        {"name,gpus,submit_s,duration_s,team\na,8,0,10,A\n", "--policy quota --quota A=8,B=12",
         "add up"},
        {"name,gpus,submit_s,duration_s\na,8,0,10\n", "--what-if gpus=+3", "--what-if"},
        {"name,gpus,submit_s,duration_s\na,8,0,10\n", "--what-if cores=2", "--what-if"},
        {"name,gpus,submit_s,duration_s\na,32,0,10\n", "", "32 GPUs but the pool has 16"},
        {"name,gpus,submit_s,duration_s\na,8,0,10\n", "--spot 0.95 --gpus-per-node 16",
         "--spot"},
        {"name,gpus,submit_s,duration_s\na,8,0,10\n", "--spot 0.5 --spot-trace /nonexistent.csv",
         "nonexistent"},
        {"name,gpus,submit_s,duration_s\na,8,0,10\n", "--spares 3 --failures --gpu h100-sxm",
         "--spares"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err = NULL;
        snprintf(path, sizeof path, "%s/bad%zu.csv", dir, i);
        f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(bad[i].text, f);
        fclose(f);
        snprintf(args, sizeof args, "cluster --trace %s --gpus 16 %s", path, bad[i].args);
        int rc = run_cli(args, NULL, &err);
        bool ok = rc == 2 && err && count_lines(err) == 1 && strstr(err, bad[i].needle);
        if (!ok)
            fprintf(stderr, "\n$ scaleplan %s: exit %d, stderr: %s\n", args, rc, err ? err : "");
        CU_ASSERT_TRUE(ok);
        free(err);
    }
    remove_tree(dir);
}

/* A spot availability trace, by hand: 16 GPUs, 8 of them spot (one
 * node), there at 0, gone at 1 h, back at 2 h. A (16 GPUs, 10 h of work,
 * checkpoints every 40 min) runs from 0, is stopped at 1 h having kept 40
 * min (20 min x 16 GPUs lost), waits for the node and restarts at 2 h with
 * 9 h 20 min to go: it ends at 11 h 20 min. */
static void test_spot_trace_by_hand(void)
{
    static const int64_t at_ms[] = {0, 3600000, 7200000};
    static const int nodes[] = {1, 0, 1};
    cjobs_t l = {0};
    add_job(&l, "A", 16, 0, 10 * 3600.0, 0, 0);
    creplay_config_t cfg;
    creplay_config_default(&cfg, 16);
    cfg.spot_gpus = 8;
    cfg.checkpoint_ms = 2400000;
    cfg.spot_trace_n = 3;
    cfg.spot_trace_ms = at_ms;
    cfg.spot_trace_nodes = nodes;
    creplay_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &r, &e), 0);
    CU_ASSERT_EQUAL(r.reclaims, 1);
    CU_ASSERT_EQUAL(r.spot_node_reclaims, 1);
    CU_ASSERT_EQUAL(r.reclaim_lost_gpu_ms, 1200000LL * 16);
    CU_ASSERT_EQUAL(r.jobs[0].end_ms, 11 * 3600000LL + 1200000);
    creplay_result_free(&r);
    cjobs_free(&l);
}

static double half_an_hour(void *ctx, int gpus)
{
    (void)ctx;
    (void)gpus;
    return 0.5; /* interruptions per hour of a running gang */
}

/* Spares: on 8 GPUs under srtf, A (8 GPUs, 10 h, not preemptible) runs
 * and B (8 GPUs, 1 h, shorter) arrives a minute later; A fails about every 2 h. Without
 * spares a failed A queues again and B, shorter, takes the GPUs before A
 * finishes; with a spare node (back after 1 ms) A restarts in place every
 * time, so B starts only once A is done. GPU time stays work + lost +
 * restarts either way. */
static void test_spares_restart_in_place(void)
{
    for (int k = 0; k < 2; k++) {
        cjobs_t l = {0};
        add_job(&l, "A", 8, 0, 10 * 3600.0, 0, 0);
        add_job(&l, "B", 8, 60, 3600.0, 0, 0);
        l.jobs[0].preemptible = false; /* B cannot preempt it: only a failure lets B in */
        creplay_config_t cfg;
        creplay_config_default(&cfg, 8);
        cfg.policy = cpolicy_find("srtf");
        cfg.fail_rate_per_hour = half_an_hour;
        cfg.checkpoint_ms = 600000;
        cfg.restart_ms = 60000;
        cfg.seed = 7;
        cfg.spare_gpus = k ? 8 : 0;
        cfg.repair_ms = 1;
        creplay_result_t r;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &r, &e), 0);
        CU_ASSERT_TRUE_FATAL(r.jobs[0].failures > 0);
        CU_ASSERT_EQUAL(r.gpu_ms, (10 + 1) * 3600000LL * 8 + r.lost_gpu_ms + r.restart_gpu_ms);
        if (k) {
            CU_ASSERT_EQUAL(r.spare_swaps, r.failures);
            CU_ASSERT_TRUE(r.jobs[1].start_ms >= r.jobs[0].end_ms);
        } else {
            CU_ASSERT_EQUAL(r.spare_swaps, 0);
            CU_ASSERT_TRUE(r.jobs[1].end_ms < r.jobs[0].end_ms);
        }
        creplay_result_free(&r);
        cjobs_free(&l);
    }
}

/* Issue 39: a spot reclaim rate so high that a gang never keeps its nodes
 * for a checkpoint interval. One job of a day on all 512 GPUs, half of
 * them spot (32 nodes), each reclaimed 5 times a node-hour and away for
 * 1.8 h: the job has its 64 nodes only while all 32 spot nodes are there,
 * and then the next reclaim comes within 1 / (32 x 5) h = 22 s on
 * average, far short of the hour between checkpoints. The replay used to
 * run forever (the spot nodes come and go without end); now it stops at
 * its bounds, well past any replay that ends (one job that ends takes a
 * few passes), with ERR_INPUT naming the job, the flag and the fix. The
 * default horizon is 100 x (1 day + a 10-min restart + a 1.8-h outage) =
 * 108.2 days. Given bounds stop it where they say. */
static void test_spot_rate_never_ends(void)
{
    cjobs_t l = {0};
    add_job(&l, "big", 512, 0, 86400.0, 0, 0);
    creplay_config_t cfg;
    creplay_config_default(&cfg, 512);
    cfg.spot_gpus = 256;
    cfg.spot_reclaims_per_node_hour = 5;
    cfg.spot_outage_ms = 6480000;
    cfg.checkpoint_ms = 3600000;
    cfg.restart_ms = 600000;
    cfg.seed = 20240723;
    creplay_result_t r;
    err_t e;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = creplay_run(&l, &cfg, &r, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK_ERR(rc, &e, ERR_INPUT, "job 'big' (512 GPUs)", "--spot-preemption-rate 5",
              "lower the rate or the spot share", "1 of 1 jobs unfinished");
    const int64_t horizon_ms = 100LL * (86400 + 600 + 6480) * 1000;
    CU_ASSERT_TRUE(r.last_end_ms > horizon_ms || r.events == CREPLAY_MIN_EVENTS);
    CU_ASSERT_TRUE(r.events > 10000 && r.events <= CREPLAY_MIN_EVENTS);
    CU_ASSERT_TRUE(took_s < 20);
    if (rc != ERR_INPUT || took_s >= 20)
        fprintf(stderr, "\nspot rate never ends: %.1f s, %ld passes, day %.1f: %s\n", took_s,
                r.events, r.last_end_ms / 86.4e6, e.msg);
    /* a horizon of 10 days: stopped at the first event past it (the
     * spot nodes come back within an outage) */
    cfg.horizon_ms = 10 * 86400000LL;
    CHECK_ERR(creplay_run(&l, &cfg, &r, &e), &e, ERR_INPUT, "its horizon of 10.0 days", "'big'");
    CU_ASSERT_TRUE(r.last_end_ms > cfg.horizon_ms &&
                   r.last_end_ms <= cfg.horizon_ms + cfg.spot_outage_ms);
    /* a limit of 1000 passes: stopped at 1000 */
    cfg.horizon_ms = 0;
    cfg.max_events = 1000;
    CHECK_ERR(creplay_run(&l, &cfg, &r, &e), &e, ERR_INPUT, "its limit of 1000 passes",
              "after 1000 scheduling passes");
    CU_ASSERT_EQUAL(r.events, 1000);
    /* at a rate the job can live with, it finishes within the defaults */
    cfg.max_events = 0;
    cfg.spot_reclaims_per_node_hour = 0.01;
    CU_ASSERT_EQUAL_FATAL(creplay_run(&l, &cfg, &r, &e), 0);
    CU_ASSERT_TRUE(r.jobs[0].end_ms >= 86400000LL);
    creplay_result_free(&r);
    cjobs_free(&l);
}

TEST_SUITE(suite_cluster_policy, "cluster_policy", TEST(test_planner_sizes),
           TEST(test_planner_resizes_dominant_job), TEST(test_planner_never_later),
           TEST(test_planner_demo_portfolio), TEST(test_planner_bad_input),
           TEST(test_timeline_books), TEST(test_cli_trace_and_report), TEST(test_spot_books),
           TEST(test_spot_checkpoint_per_job), TEST(test_quota_reclaim),
           TEST(test_cli_whatif_quota_deadline), TEST(test_spares_restart_in_place),
           TEST(test_spot_trace_by_hand), TEST(test_quota_priority_borrowing),
           TEST(test_spot_rate_never_ends));
