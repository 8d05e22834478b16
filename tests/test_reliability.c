/* Tests of sim/reliability: the Llama 3 405B run, Meta's ETTR figures,
 * Young/Daly, policies, determinism and bad inputs. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim/reliability.h"
#include "tests/testing.h"

static cluster_t cluster_of(const char *gpu, int gpus)
{
    cluster_t c;
    err_t e;
    cluster_spec_t spec = {.gpu = gpu, .n_gpus = gpus};
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, &c, &e), 0);
    return c;
}

/* Llama 3 405B: 16,384 H100s for 54 days with the catalog's rates.
 * Assumptions (Meta-like policy): asynchronous checkpoints every 15
 * minutes of ~4.9 TB (405B parameters x 12 bytes) to storage sustaining
 * 2 TB/s (Tectonic, failures.csv F062), a 5-minute restart (the low end of
 * F039, Meta's automation), hot spares taken during the restart. The paper
 * counts 419 unexpected interruptions (F021) and more than 90% effective
 * training time (F024). Failures arrive only while the job runs, so the
 * expected count is 419 less the share of time spent restarting. */
static void test_llama3_405b_run(void)
{
    cluster_t c = cluster_of("h100-sxm", 16384);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    rel_config_t cfg;
    rel_config_default(&cfg, &c, &fs);
    cfg.step_time_s = 7.3;
    cfg.tokens_per_step = 16e6;
    cfg.duration_s = 54 * 86400.0;
    cfg.ckpt_bytes = 405.8e9 * 12;
    cfg.storage_write_bps = cfg.storage_read_bps = 2e12;
    cfg.ckpt_mode = CKPT_ASYNC;
    cfg.ckpt_interval_s = 900;
    cfg.restart_overhead_s = 300;
    cfg.trials = 1000;
    rel_result_t r;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
    CHECK_REL(r.unexpected_mean, 419, 0.15);
    CU_ASSERT_TRUE(r.goodput_mean >= 0.90);
    CHECK_REL(r.mtbf_s, 54 * 86400.0 / 466, 1e-9); /* 466 interruptions in 54 days */
    /* the by-cause counts keep the table's proportions: faulty GPUs lead */
    int top = 0;
    for (int i = 1; i < r.n_classes; i++)
        if (r.class_mean[i] > r.class_mean[top])
            top = i;
    CU_ASSERT_STRING_EQUAL(r.class_name[top], "gpu");
    CU_ASSERT_TRUE(r.lost_gpu_hours_mean > 0);
}

/* Meta's model of a hypothetical 16,000-GPU job on RSC-1 (failures.csv
 * F034, F035): expected ETTR 0.7 with a 60-minute checkpoint interval and
 * 0.93 with 5 minutes, restart overhead 5-20 minutes (F039; the low end
 * reproduces both) and checkpoints that cost nothing to write. */
static void test_meta_ettr(void)
{
    cluster_t c = cluster_of("a100-80g", 16000);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("meta-rsc1", &fs, &e), 0);
    rel_config_t cfg;
    rel_config_default(&cfg, &c, &fs);
    cfg.step_time_s = 10;
    cfg.tokens_per_step = 4e6;
    cfg.duration_s = 30 * 86400.0;
    cfg.ckpt_bytes = 0;
    cfg.restart_overhead_s = 300;
    cfg.trials = 500;
    for (int i = 0; i < fs.n_classes; i++)
        fs.classes[i].detect_s = 0;
    double expected[2] = {0.70, 0.93}, interval[2] = {3600, 300};
    for (int k = 0; k < 2; k++) {
        cfg.ckpt_interval_s = interval[k];
        rel_result_t r;
        CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
        CHECK_REL(r.goodput_mean, expected[k], 0.05);
    }
}

/* The simulated best interval agrees with Young/Daly sqrt(2 d M) within
 * 20% when the save time d is far below the MTBF M (one exponential
 * failure class, MTBF 3 h, 60 s saves: 1,138 s), and drifts from it when
 * d approaches M (a 1-hour save with a 3-hour MTBF), where the formula's
 * first-order derivation no longer holds. */
static void test_young_daly(void)
{
    cluster_t c = cluster_of("h100-sxm", 1024);
    failure_set_t fs;
    memset(&fs, 0, sizeof fs);
    snprintf(fs.name, sizeof fs.name, "synthetic");
    fs.n_classes = 1;
    failure_class_t *f = &fs.classes[0];
    snprintf(f->name, sizeof f->name, "all");
    f->component = FAIL_PER_JOB;
    f->rate_per_component_hour = 1.0 / 3;
    f->weibull_shape = 1;
    f->unexpected = true;
    f->repair = REPAIR_RESCHEDULE;
    rel_config_t cfg;
    rel_config_default(&cfg, &c, &fs);
    cfg.step_time_s = 5;
    cfg.tokens_per_step = 4e6;
    cfg.duration_s = 60 * 86400.0;
    cfg.storage_write_bps = cfg.storage_read_bps = 1e11;
    cfg.ckpt_bytes = 60 * 1e11; /* 60 s to write */
    cfg.restart_overhead_s = 600;
    cfg.trials = 300;
    err_t e;
    double best;
    CU_ASSERT_EQUAL_FATAL(rel_best_interval(&cfg, 200, 8000, 21, NULL, NULL, &best, &e), 0);
    double young = sqrt(2 * 60 * 3 * 3600.0);
    CHECK_REL(young, 1138.4, 1e-3);
    CHECK_REL(best, young, 0.20);
    /* a save of an hour against a 3-hour MTBF */
    cfg.ckpt_bytes = 3600 * 1e11;
    double best_slow;
    CU_ASSERT_EQUAL_FATAL(rel_best_interval(&cfg, 1800, 60000, 21, NULL, NULL, &best_slow, &e), 0);
    double young_slow = sqrt(2 * 3600 * 3 * 3600.0);
    double gap_fast = fabs(best / young - 1), gap_slow = fabs(best_slow / young_slow - 1);
    fprintf(stderr, "\n  Young/Daly: save 60 s: best %.0f s vs %.0f s (%.0f%%); save 1 h: best "
                    "%.0f s vs %.0f s (%.0f%%)\n",
            best, young, 100 * gap_fast, best_slow, young_slow, 100 * gap_slow);
    CU_ASSERT_TRUE(gap_slow > gap_fast);
    CU_ASSERT_TRUE(gap_slow > 0.20);
}

/* Waiting for repairs is slower than hot spares; spot capacity adds
 * preemptions; the same seed gives the same answer and another seed does
 * not; finishing a token count gives P10 <= P50 <= P90. */
static void test_policies_and_determinism(void)
{
    cluster_t c = cluster_of("h100-sxm", 2048);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set(NULL, &fs, &e), 0);
    rel_config_t cfg;
    rel_config_default(&cfg, &c, &fs);
    cfg.step_time_s = 8;
    cfg.tokens_per_step = 4e6;
    cfg.target_tokens = 1e12;
    cfg.ckpt_bytes = 70e9 * 12;
    cfg.dp = 16;
    cfg.trials = 400;
    rel_result_t spares, wait, elastic, spot, again, other;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &spares, &e), 0);
    CU_ASSERT_TRUE(spares.wall_s_p10 <= spares.wall_s_p50 && spares.wall_s_p50 <= spares.wall_s_p90);
    double ideal = 1e12 / 4e6 * 8;
    CU_ASSERT_TRUE(spares.wall_s_p50 > ideal);
    CHECK_REL(spares.useful_s_mean, ideal, 1e-9);
    rel_config_t w = cfg;
    w.policy = REPAIR_POLICY_WAIT;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&w, &wait, &e), 0);
    CU_ASSERT_TRUE(wait.wall_s_mean > spares.wall_s_mean);
    rel_config_t el = cfg;
    el.policy = REPAIR_POLICY_ELASTIC;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&el, &elastic, &e), 0);
    CU_ASSERT_TRUE(elastic.wall_s_mean < wait.wall_s_mean);
    rel_config_t sp = cfg;
    sp.preempt_per_node_hour = 0.01;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&sp, &spot, &e), 0);
    CU_ASSERT_TRUE(spot.interruptions_mean > spares.interruptions_mean);
    CU_ASSERT_STRING_EQUAL(spot.class_name[spot.n_classes - 1], "spot_preemption");
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &again, &e), 0);
    CU_ASSERT_EQUAL(again.wall_s_mean, spares.wall_s_mean);
    rel_config_t s2 = cfg;
    s2.seed = 99;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&s2, &other, &e), 0);
    CU_ASSERT_NOT_EQUAL(other.wall_s_mean, spares.wall_s_mean);
}

static void test_bad_inputs(void)
{
    cluster_t c = cluster_of("h100-sxm", 64);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set(NULL, &fs, &e), 0);
    rel_config_t cfg;
    rel_config_default(&cfg, &c, &fs);
    cfg.step_time_s = 1;
    cfg.tokens_per_step = 1e6;
    cfg.target_tokens = 1e9;
    rel_result_t r;
    rel_config_t x = cfg;
    x.storage_write_bps = 0;
    int rc = rel_simulate(&x, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--storage-bw", "greater than zero");
    x = cfg;
    x.step_time_s = -1;
    rc = rel_simulate(&x, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--step-time");
    x = cfg;
    x.target_tokens = 0;
    rc = rel_simulate(&x, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--tokens", "--days");
    x = cfg;
    fs.classes[0].rate_per_component_hour = -1;
    rc = rel_simulate(&x, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "llama3-405b", "gpu", "negative");
    x = cfg;
    x.trials = 0;
    rc = rel_simulate(&x, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--trials");
}

/* Issue 17 row 3: an interval longer than the run is no periodic
 * checkpoint (only the final save), never more useful time than wall
 * time. A 2-day job on 64 H100s (MTBF about 4.7 days with the Llama 3
 * rates): 2 days of compute plus a 50 s final save, more when a failure
 * restarts it from scratch. */
static void test_interval_longer_than_run(void)
{
    cluster_t c = cluster_of("h100-sxm", 64);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    rel_config_t cfg;
    rel_config_default(&cfg, &c, &fs);
    cfg.step_time_s = 10;
    cfg.tokens_per_step = 1e6;
    cfg.target_tokens = 2 * 86400 / 10 * 1e6; /* 2 days of steps */
    cfg.ckpt_bytes = 100e9;
    cfg.storage_write_bps = cfg.storage_read_bps = 2e9;
    cfg.trials = 300;
    static const double intervals[] = {3 * 86400.0, 1e12, 1e308};
    for (size_t i = 0; i < sizeof intervals / sizeof intervals[0]; i++) {
        cfg.ckpt_interval_s = intervals[i];
        rel_result_t r;
        CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
        CU_ASSERT_TRUE(r.goodput_mean > 0 && r.goodput_mean <= 1);
        CU_ASSERT_TRUE(r.wall_s_p10 >= 2 * 86400.0 + 50 - 1e-6);
        CU_ASSERT_TRUE(r.lost_gpu_hours_mean >= 0);
        CU_ASSERT_TRUE(r.checkpoint_s_mean >= 50 - 1e-9 && r.checkpoint_s_mean <= 50 + 1e-9);
        /* the fastest trials had no failure: exactly compute + final save */
        CHECK_REL(r.wall_s_p10, 2 * 86400.0 + 50, 1e-9);
    }
}

/* Issue 17 row 2: a run that cannot finish is refused quickly with one
 * line naming --checkpoint-every; no figure comes back. */
static void test_never_finishes(void)
{
    cluster_t c = cluster_of("h100-sxm", 1024);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    rel_config_t cfg;
    rel_config_default(&cfg, &c, &fs);
    cfg.step_time_s = 5;
    cfg.tokens_per_step = 4e6;
    cfg.target_tokens = 1e12;
    cfg.ckpt_bytes = 1e12;
    cfg.trials = 1;
    /* 1e-12 s of work per checkpoint cycle: over a century without failures */
    cfg.ckpt_interval_s = 1e-12;
    rel_result_t r;
    double t0 = clock();
    int rc = rel_simulate(&cfg, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--checkpoint-every", "never finishes");
    CU_ASSERT_TRUE(r.unfinished > 0);
    CU_ASSERT_EQUAL(r.interruptions_mean, 0); /* nothing of a loop guard */
    /* no checkpoint on a 100T-token run: every failure restarts it, and
     * the job's MTBF (44 h) is far shorter than its 1,400 days of compute */
    cfg.target_tokens = 100e12;
    cfg.ckpt_interval_s = 1e308;
    cfg.trials = 2000;
    rc = rel_simulate(&cfg, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--checkpoint-every", "never finishes");
    CU_ASSERT_TRUE(r.unfinished > 0);
    /* a checkpoint bigger than the storage can write between failures */
    cfg.target_tokens = 1e12;
    cfg.ckpt_interval_s = 1800;
    cfg.ckpt_bytes = 1e18;
    rc = rel_simulate(&cfg, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "never finishes");
    CU_ASSERT_TRUE((clock() - t0) / CLOCKS_PER_SEC < 10);
    /* the sweep counts such intervals as goodput 0 instead of failing */
    cfg.ckpt_bytes = 1e12;
    cfg.target_tokens = 100e12;
    cfg.trials = 200;
    double x[5], g[5], best;
    CU_ASSERT_EQUAL_FATAL(rel_best_interval(&cfg, 600, 1e9, 5, x, g, &best, &e), 0);
    CU_ASSERT_EQUAL(g[4], 0);
    CU_ASSERT_TRUE(g[0] > 0.5 && best < 1e6);
}

TEST_SUITE(suite_reliability, "reliability", TEST(test_llama3_405b_run), TEST(test_meta_ettr),
           TEST(test_young_daly), TEST(test_policies_and_determinism), TEST(test_bad_inputs),
           TEST(test_interval_longer_than_run), TEST(test_never_finishes));
