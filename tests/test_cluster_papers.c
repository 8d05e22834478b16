/* Tests of cluster/ against scheduler papers' published simulation
 * results (issue 39's acceptance "replay fidelity"), and of the policies
 * added to compare with them (cluster/policy.c: sjf and fifo-fit, the
 * greedy pair of Alibaba's GPU-cluster simulator).
 *
 * What is reproduced, and how far (README, "Replay fidelity"):
 *   Alibaba's simulator (alibaba/clusterdata, cluster-trace-gpu-v2020/
 *   simulator/README.md and logs/0228-...-42r.log, commit 7a6c496e):
 *   20,000 PAI jobs arriving 1,000 a minute on 6,500 GPUs; FIFO mean JCT
 *   7,918.47 s (wait 2,879.77 s), SJF 5,988.61 s (wait 949.91 s): SJF /
 *   FIFO = 0.756. The job list it ran (traces/pai/pai_job_duration_
 *   estimate_100K.csv, 12.7 MB) is not in any stored copy of the
 *   repository or its forks, so the replay runs an analog: 20,000 jobs
 *   synthesized from the PAI trace's published statistics
 *   (cluster/tracesynth.h), re-timed as the simulator does (1,000 every
 *   60 s), on a pool calibrated so that FIFO's mean wait is the published
 *   one (ASSUMED: it stands for the CSV's unknown GPU and CPU demand; the
 *   synthesizer gives every PAI job one whole GPU). SJF's result is then a
 *   prediction, pinned within the acceptance's 25%. This is NOT the
 *   paper's job list: the README says so.
 *   Muri (Zhao et al., "Multi-Resource Interleaving for Deep Learning
 *   Training", SIGCOMM 2022; Rivendile/Muri @ 4e69a78): its simulator's
 *   eight Philly-derived job lists (simulator/trace-data/trace1-4.csv and
 *   trace1-4_pr.csv, the same jobs all submitted at 0: the paper's traces
 *   1'-4'), copied whole into tests/fixtures/cluster/muri/, and the mean
 *   JCTs its simulation gave on 8 nodes of 8 GPUs (simulator/
 *   draw_fig9-10.py, the raw values behind Figures 9 and 10, "our test
 *   results"). The policies scaleplan has are three of its baselines, SRTF
 *   (run_sim.py "shortest"), SRSF ("shortest-gpu") and Tiresias-L ("dlas-gpu": three queues at
 *   3250 and 7200 GPU-seconds, simulator/jobs.py); the relative result
 *   replayed is Tiresias-L's mean JCT over SRTF's, per list, and SRSF's
 *   ("shortest-gpu", srsf here) over SRTF's. Muri's own
 *   policy (interleaving jobs' storage, CPU, GPU and network phases) is
 *   not modelled, so its headline (Muri against these) is not replayed.
 *   What the replay leaves out of Muri's simulator: run time is the list's
 *   duration, not iterations x iteration time x 1.015 (within 1% for 95%
 *   to 99% of jobs), no per-event restart overhead (run_sim.py subtracts
 *   4-38 s from a running job's progress at every event), and las places
 *   gangs on whole nodes where Muri's dlas counts free GPUs only. Nothing
 *   here is fitted to the published figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/formats.h"
#include "cluster/replay.h"
#include "cluster/tracesynth.h"
#include "tests/testing.h"

/* Alibaba's published figures (source above). */
#define ALI_JOBS 20000
#define ALI_ARRIVALS_PER_MIN 1000
#define ALI_POOL_GPUS 6500
#define ALI_FIFO_JCT_S 7918.47
#define ALI_FIFO_WAIT_S 2879.77
#define ALI_SJF_JCT_S 5988.61
#define ALI_SJF_WAIT_S 949.91
#define ALI_SEED 42 /* its run's seed, reused for the synthesis */
/* The acceptance's band on a relative result. */
#define PAPER_REL_TOL 0.25

/* A list from rows of (gpus, submit s, duration s). */
static void make_jobs(cjobs_t *l, const double rows[][3], int n)
{
    memset(l, 0, sizeof *l);
    err_t e;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "j%d", i);
        cjob_t j = {.name = name, .gpus = (int)rows[i][0],
                    .submit_ms = (int64_t)(rows[i][1] * 1000),
                    .duration_ms = (int64_t)(rows[i][2] * 1000), .preemptible = true,
                    .trace_start_ms = -1, .line = i + 2};
        CU_ASSERT_EQUAL_FATAL(cjobs_add(l, &j, &e), 0);
    }
}

static int replay(const cjobs_t *l, int gpus, int gpn, const char *policy, creplay_result_t *r)
{
    creplay_config_t c;
    creplay_config_default(&c, gpus);
    c.gpus_per_node = gpn;
    c.policy = cpolicy_find(policy);
    if (!c.policy)
        return -1;
    err_t e;
    int rc = creplay_run(l, &c, r, &e);
    if (rc)
        fprintf(stderr, "\nreplay (%s): %s\n", policy, e.msg);
    return rc;
}

/* One GPU. A: 100 s at 0; B: 50 s at 1; C: 10 s at 1. sjf: A runs alone
 * at 0 and is not preempted; at 100 C (shorter) goes before B: C 100-110,
 * B 110-160, mean JCT (100 + 159 + 109) / 3 = 122.67 s. fifo-fit: B
 * 100-150, C 150-160, mean (100 + 149 + 159) / 3 = 136 s. */
static void test_sjf_by_hand(void)
{
    static const double rows[][3] = {{1, 0, 100}, {1, 1, 50}, {1, 1, 10}};
    cjobs_t l;
    make_jobs(&l, rows, 3);
    creplay_result_t r;
    CU_ASSERT_EQUAL_FATAL(replay(&l, 1, 1, "sjf", &r), 0);
    CU_ASSERT_EQUAL(r.jobs[0].end_ms, 100000);
    CU_ASSERT_EQUAL(r.jobs[0].preemptions, 0);
    CU_ASSERT_EQUAL(r.jobs[2].start_ms, 100000);
    CU_ASSERT_EQUAL(r.jobs[1].start_ms, 110000);
    CHECK_REL(r.jct_mean_s, 368.0 / 3, 1e-9);
    creplay_result_free(&r);
    CU_ASSERT_EQUAL_FATAL(replay(&l, 1, 1, "fifo-fit", &r), 0);
    CU_ASSERT_EQUAL(r.jobs[1].start_ms, 100000);
    CU_ASSERT_EQUAL(r.jobs[2].start_ms, 150000);
    CHECK_REL(r.jct_mean_s, 136.0, 1e-9);
    creplay_result_free(&r);
    cjobs_free(&l);
}

/* Two GPUs. A: 1 GPU x 100 s at 0; B: 2 GPUs x 10 s at 1; C: 1 GPU x 10 s
 * at 2. fifo: B heads the queue and blocks C: B 100-110, C 110-120.
 * fifo-fit and sjf pass B over: C 2-12, B 100-110. */
static void test_fit_first_passes_over(void)
{
    static const double rows[][3] = {{1, 0, 100}, {2, 1, 10}, {1, 2, 10}};
    static const struct {
        const char *policy;
        double c_start_s;
    } want[] = {{"fifo", 110}, {"fifo-fit", 2}, {"sjf", 2}};
    cjobs_t l;
    make_jobs(&l, rows, 3);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        creplay_result_t r;
        CU_ASSERT_EQUAL_FATAL(replay(&l, 2, 2, want[i].policy, &r), 0);
        CU_ASSERT_EQUAL(r.jobs[1].start_ms, 100000);
        CU_ASSERT_EQUAL(r.jobs[2].start_ms, (int64_t)(want[i].c_start_s * 1000));
        creplay_result_free(&r);
    }
    cjobs_free(&l);
}

/* The analog of the simulator's job list: PAI-like jobs re-timed as its
 * set_job_list_arrival_time does (job i at floor(i / rate) x 60 s). */
static void make_alibaba_analog(cjobs_t *l)
{
    ctsynth_profile_t p;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(ctsynth_load("pai", &p, &e), 0);
    ctsynth_spec_t s = {ALI_JOBS, ALI_POOL_GPUS, 0, ALI_SEED};
    CU_ASSERT_EQUAL_FATAL(ctsynth_make(&p, &s, l, NULL, NULL, &e), 0);
    for (int i = 0; i < l->n; i++)
        l->jobs[i].submit_ms = (int64_t)(i / ALI_ARRIVALS_PER_MIN) * 60000;
}

/* fifo-fit's mean wait on a pool of g GPUs (one node each: the
 * simulator's run is "1n", one big node). */
static double fifo_wait_s(const cjobs_t *l, int g)
{
    creplay_result_t r;
    CU_ASSERT_EQUAL_FATAL(replay(l, g, 1, "fifo-fit", &r), 0);
    double w = r.queue_delay_mean_s;
    creplay_result_free(&r);
    return w;
}

/* The pool on which FIFO waits as long as the published run: bisection
 * (the wait falls as the pool grows) to 1% of the published wait. */
static int calibrate_pool(const cjobs_t *l)
{
    int lo = 1000, hi = ALI_POOL_GPUS; /* waits above and below the target */
    CU_ASSERT_FATAL(fifo_wait_s(l, lo) > ALI_FIFO_WAIT_S);
    CU_ASSERT_FATAL(fifo_wait_s(l, hi) < ALI_FIFO_WAIT_S);
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        double w = fifo_wait_s(l, mid);
        if (w > ALI_FIFO_WAIT_S * 1.01)
            lo = mid;
        else if (w < ALI_FIFO_WAIT_S * 0.99)
            hi = mid;
        else
            return mid;
    }
    return hi;
}

/* SJF's mean JCT over FIFO's, the simulator's headline (0.756), within
 * 25% on the calibrated analog; and the same check with sjf swapped for
 * fifo (the mechanism off) lands outside the band. */
static void test_alibaba_sjf_vs_fifo(void)
{
    cjobs_t l;
    make_alibaba_analog(&l);
    int g = calibrate_pool(&l);
    creplay_result_t f, s, off;
    CU_ASSERT_EQUAL_FATAL(replay(&l, g, 1, "fifo-fit", &f), 0);
    CU_ASSERT_EQUAL_FATAL(replay(&l, g, 1, "sjf", &s), 0);
    CU_ASSERT_EQUAL_FATAL(replay(&l, g, 1, "fifo", &off), 0);
    double paper = ALI_SJF_JCT_S / ALI_FIFO_JCT_S, ours = s.jct_mean_s / f.jct_mean_s;
    double swapped = off.jct_mean_s / f.jct_mean_s;
    printf("\n  alibaba analog (ASSUMED pool %d GPUs, calibrated to FIFO wait %.0f s): "
           "FIFO JCT %.0f s wait %.0f s | SJF JCT %.0f s wait %.0f s | SJF/FIFO %.3f "
           "(paper %.3f) | fifo in sjf's place %.3f\n",
           g, ALI_FIFO_WAIT_S, f.jct_mean_s, f.queue_delay_mean_s, s.jct_mean_s,
           s.queue_delay_mean_s, ours, paper, swapped);
    CHECK_REL(f.queue_delay_mean_s, ALI_FIFO_WAIT_S, 0.011); /* the calibration held */
    CHECK_REL(ours, paper, PAPER_REL_TOL);
    CHECK_REL(s.queue_delay_mean_s, ALI_SJF_WAIT_S, PAPER_REL_TOL);
    CU_ASSERT(swapped > paper * (1 + PAPER_REL_TOL)); /* the check would fail */
    creplay_result_free(&f);
    creplay_result_free(&s);
    creplay_result_free(&off);
    cjobs_free(&l);
}

/* Muri's simulation results (draw_fig9-10.py @ 4e69a78; source above),
 * mean JCT in seconds, and the pool it ran (cluster_spec/n8g8.csv). */
#define MURI_NODES 8
#define MURI_GPUS_PER_NODE 8
static const struct {
    const char *list;
    double srtf_jct_s, tiresias_l_jct_s, srsf_jct_s;
} muri[] = {
    {"trace1", 1370603.198, 3330371.307, 980140.5699},
    {"trace1_pr", 2303543.816, 6921682.793, 1801859.995},
    {"trace2", 2665607.375, 7396368.514, 2213949.687},
    {"trace2_pr", 4079154.454, 10555502.040026, 3384600.437},
    {"trace3", 193081.796, 347213.2481, 185021.8802},
    {"trace3_pr", 844394.78, 2213110.128, 798057.6829},
    {"trace4", 581982.9002, 1319382.936, 487167.1688},
    {"trace4_pr", 1430856.446, 2674022.636, 1218501.968},
};

/* Mean JCT of list l on Muri's pool under policy, las at Muri's limits. */
static double muri_jct_s(const cjobs_t *l, const char *policy)
{
    creplay_config_t c;
    creplay_config_default(&c, MURI_NODES * MURI_GPUS_PER_NODE);
    c.gpus_per_node = MURI_GPUS_PER_NODE;
    c.policy = cpolicy_find(policy);
    c.las_limits_gpu_s[0] = 3250; /* Muri simulator/jobs.py: queue_limit, num_queue = 3 */
    c.las_limits_gpu_s[1] = 7200;
    c.n_las_limits = 2;
    creplay_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(creplay_run(l, &c, &r, &e), 0);
    double jct = r.jct_mean_s;
    creplay_result_free(&r);
    return jct;
}

/* Tiresias-L's mean JCT over SRTF's on each of Muri's eight lists, within
 * the acceptance's 25% of the published ratio; fifo in las's place (the
 * mechanism off) lands outside the band on every list. SRSF over SRTF
 * too. */
static void test_muri_tiresias_vs_srtf(void)
{
    const cjobs_format_t *fmt = cjobs_format_find("muri");
    CU_ASSERT_FATAL(fmt != NULL);
    printf("\n  Muri SIGCOMM'22 lists on 64 GPUs: Tiresias-L/SRTF mean JCT, replayed vs "
           "published\n");
    for (size_t i = 0; i < sizeof muri / sizeof muri[0]; i++) {
        char path[64];
        snprintf(path, sizeof path, "cluster/muri/%s.csv", muri[i].list);
        cjobs_t l;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(cjobs_read(fmt, fixture(path), &l, &e), 0);
        double srtf = muri_jct_s(&l, "srtf"), las = muri_jct_s(&l, "las");
        double off = muri_jct_s(&l, "fifo");
        double paper = muri[i].tiresias_l_jct_s / muri[i].srtf_jct_s, ours = las / srtf;
        printf("  %-9s %4d jobs: SRTF %9.0f s (paper %9.0f), Tiresias-L %9.0f s (paper %9.0f)"
               ", ratio %.3f (paper %.3f, %+.1f%%), fifo in its place %.3f\n",
               muri[i].list, l.n, srtf, muri[i].srtf_jct_s, las, muri[i].tiresias_l_jct_s,
               ours, paper, 100 * (ours / paper - 1), off / srtf);
        CHECK_REL(ours, paper, PAPER_REL_TOL);
        CU_ASSERT(off / srtf > paper * (1 + PAPER_REL_TOL));
        /* SRSF over SRTF: published 0.72-0.96, so srtf in srsf's place
         * (a ratio of 1 by construction) leaves the band only where the
         * published ratio is below 0.8 (trace1, trace1_pr): a weak check of
         * the mechanism, printed beside the strong one above. */
        double srsf = muri_jct_s(&l, "srsf");
        double paper_s = muri[i].srsf_jct_s / muri[i].srtf_jct_s, ours_s = srsf / srtf;
        printf("  %-9s SRSF %9.0f s (paper %9.0f), SRSF/SRTF %.3f (paper %.3f, %+.1f%%)\n", "",
               srsf, muri[i].srsf_jct_s, ours_s, paper_s, 100 * (ours_s / paper_s - 1));
        CHECK_REL(ours_s, paper_s, PAPER_REL_TOL);
        cjobs_free(&l);
    }
}

TEST_SUITE(suite_cluster_papers, "cluster_papers", TEST(test_sjf_by_hand),
           TEST(test_fit_first_passes_over), TEST(test_alibaba_sjf_vs_fifo),
           TEST(test_muri_tiresias_vs_srtf));
