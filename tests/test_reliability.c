/* Tests of sim/reliability, sim/restart and topologies/storage: the Llama 3
 * 405B run under the default policy, storage limits, the restart model,
 * Meta's ETTR figures, the chosen interval against Young/Daly and the
 * simulated sweep, wall-clock failure rates, planned interruptions,
 * adaptive trials, policies, determinism and bad inputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/reliability.h"
#include "tests/testing.h"
#include "topologies/price.h"

static cluster_t cluster_of(const char *gpu, int gpus)
{
    cluster_t c;
    err_t e;
    cluster_spec_t spec = {.gpu = gpu, .n_gpus = gpus};
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, &c, &e), 0);
    return c;
}

/* Llama 3 405B: 16,384 H100s for 54 days with the default policy and the
 * Llama 3 storage figures: the catalog's default rates for Hopper on a
 * dedicated cluster (llama3-405b), Meta's Tectonic (2 TB/s sustained,
 * failures.csv F062), a 4.43 TiB checkpoint (405B x 12 bytes), synchronous
 * sharded saves at the best interval, the 'automated' restart profile. The
 * paper counts 419 unexpected interruptions (F021) and more than 90%
 * effective training time (F024). The rates are per wall-clock hour, so
 * the count does not fall with the time spent restarting. */
static void llama3_config(rel_config_t *cfg, const cluster_t *c, const failure_set_t *fs)
{
    err_t e;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(cfg, c, fs, NULL, &e), 0);
    CU_ASSERT_EQUAL_FATAL(storage_load("tectonic-llama3", &cfg->storage, &e), 0);
    cfg->step_time_s = 7.3;
    cfg->tokens_per_step = 16e6;
    cfg->duration_s = 54 * 86400.0;
    cfg->ckpt_bytes = 4.43 * 1099511627776.0;
}

static void test_llama3_405b_run(void)
{
    cluster_t c = cluster_of("h100-sxm", 16384);
    failure_set_t fs;
    err_t e;
    failure_choice_t ch;
    CU_ASSERT_EQUAL_FATAL(failure_choose(NULL, "hopper", &ch, &e), 0);
    CU_ASSERT_STRING_EQUAL(ch.set, "llama3-405b");
    CU_ASSERT_FALSE(ch.assumed);
    CU_ASSERT_EQUAL_FATAL(failure_load_set(ch.set, &fs, &e), 0);
    rel_config_t cfg;
    llama3_config(&cfg, &c, &fs);
    rel_result_t r;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
    fprintf(stderr, "\n  Llama 3 405B, default policy: %.1f unexpected interruptions (419), "
                    "goodput %.1f%% (>90%%), interval %.0f s, save %.2f s, restart %.0f s\n",
            r.unexpected_mean, 100 * r.goodput_mean, r.ckpt_interval_s, r.save_blocking_s,
            r.restart_mean_s);
    CHECK_REL(r.unexpected_mean, 419, 0.15);
    CU_ASSERT_TRUE(r.goodput_mean >= 0.90);
    CU_ASSERT_TRUE(r.interval_best);
    CHECK_REL(r.mtbf_s, 54 * 86400.0 / 466, 1e-9); /* 466 interruptions in 54 days */
    /* 4.43 TiB at 2 TB/s */
    CHECK_REL(r.save_blocking_s, 4.43 * 1099511627776.0 / 2e12, 1e-9);
    CU_ASSERT_STRING_EQUAL(r.write_limit, "storage aggregate");
    /* the by-cause counts keep the table's proportions: faulty GPUs lead */
    int top = 0;
    for (int i = 1; i < r.n_classes; i++)
        if (r.class_mean[i] > r.class_mean[top])
            top = i;
    CU_ASSERT_STRING_EQUAL(r.class_name[top], "faulty_gpu");
    CHECK_REL(r.kind_mean[FAIL_KIND_PLANNED], 47, 0.15);
    CU_ASSERT_TRUE(r.lost_gpu_hours_mean > 0);
    /* the renewal model the interval comes from agrees with the simulation */
    CHECK_REL(r.model_goodput, r.goodput_mean, 0.01);
}

/* Halving the storage bandwidth lowers the goodput, every time (the best
 * interval is chosen again at each bandwidth; the same seed throughout). */
static void test_storage_bandwidth_monotone(void)
{
    cluster_t c = cluster_of("h100-sxm", 16384);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    rel_config_t cfg;
    llama3_config(&cfg, &c, &fs);
    double prev = 1, bw = 4e12;
    for (int i = 0; i < 6; i++, bw /= 2) {
        cfg.storage_write_bps = cfg.storage_read_bps = bw;
        rel_result_t r;
        CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
        CU_ASSERT_TRUE(r.goodput_mean < prev);
        prev = r.goodput_mean;
    }
}

/* What a job gets from its storage: the smallest of the aggregate, the
 * clients, the nodes' storage network and PCIe. */
static void test_storage_limits(void)
{
    storage_t s;
    err_t e;
    storage_bw_t bw;
    CU_ASSERT_EQUAL_FATAL(storage_load(NULL, &s, &e), 0);
    CU_ASSERT_STRING_EQUAL(s.name, "site-pfs");
    CU_ASSERT_TRUE(s.assumed);
    /* 16,384 H100s: 2,048 nodes x 8 GB/s = 16 TB/s, capped at 2 TB/s */
    cluster_t big = cluster_of("h100-sxm", 16384);
    storage_job_bandwidth(&s, &big, CKPT_FORMAT_SHARDED, 128, 0, &bw);
    CHECK_REL(bw.write_bps, 2e12, 1e-12);
    CU_ASSERT_STRING_EQUAL(bw.write_limit, "storage aggregate");
    /* 256 GPUs: 32 nodes x 8 GB/s */
    cluster_t small = cluster_of("h100-sxm", 256);
    storage_job_bandwidth(&s, &small, CKPT_FORMAT_SHARDED, 16, 0, &bw);
    CHECK_REL(bw.write_bps, 256e9, 1e-12);
    CU_ASSERT_STRING_EQUAL(bw.write_limit, "node storage network");
    /* one DP replica of 16 writes: 2 nodes; one process: 1 node */
    storage_job_bandwidth(&s, &small, CKPT_FORMAT_REPLICA, 16, 0, &bw);
    CHECK_REL(bw.write_bps, 16e9, 1e-12);
    CHECK_REL(bw.read_bps, 256e9, 1e-12);
    storage_job_bandwidth(&s, &small, CKPT_FORMAT_RANK0, 16, 0, &bw);
    CHECK_REL(bw.write_bps, 8e9, 1e-12);
    /* BLOOM's GPFS: 1.2 GB/s per node (2.3 TB in 40 s from 48 nodes) */
    CU_ASSERT_EQUAL_FATAL(storage_load("gpfs-jeanzay-bloom", &s, &e), 0);
    cluster_t bloom = cluster_of("a100-80g", 384);
    storage_job_bandwidth(&s, &bloom, CKPT_FORMAT_SHARDED, 12, 0, &bw);
    CHECK_REL(2.3e12 / bw.write_bps, 40, 0.01);
    /* FSx for Lustre: 1 GB/s per TiB provisioned */
    CU_ASSERT_EQUAL_FATAL(storage_load("fsx-lustre-p2-1000", &s, &e), 0);
    storage_job_bandwidth(&s, &big, CKPT_FORMAT_SHARDED, 128, 100, &bw);
    CHECK_REL(bw.write_bps, 100e9, 1e-12);
    int rc = storage_load("lustre-of-dreams", &s, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--storage");
    ckpt_format_t f;
    rc = storage_format_parse("zip", &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--checkpoint-format");
}

/* The restart grows with the GPU count: 'automated' (optimised start-up,
 * 2.5e-4 s per GPU: 265 s at 96K GPUs cut 11x) and 'requeue' (stock NCCL,
 * 2.76e-3 s per GPU, an 11-minute requeue). */
static void test_restart_model(void)
{
    restart_profile_t p;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(restart_load(NULL, "dedicated", &p, &e), 0);
    CU_ASSERT_STRING_EQUAL(p.name, "automated");
    CHECK_REL(restart_init_s(&p, 16384), 30 + 2.5e-4 * 16384, 1e-12);
    CHECK_REL(restart_overhead_s(&p, 16384, 7.3, true), 60 + 30 + 4.096 + 3 * 7.3, 1e-12);
    CU_ASSERT_EQUAL_FATAL(restart_load(NULL, "cloud", &p, &e), 0);
    CU_ASSERT_STRING_EQUAL(p.name, "requeue");
    CHECK_REL(restart_init_s(&p, 98304), 30 + 2.76e-3 * 98304, 1e-12);
    CU_ASSERT_TRUE(restart_init_s(&p, 16384) > 4 * restart_init_s(&p, 1024) / 2);
    int rc = restart_load("instant", NULL, &p, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--restart");
}

/* Meta's model of a hypothetical 16,000-GPU job on RSC-1 (failures.csv
 * F034, F035): expected ETTR 0.7 with a 60-minute checkpoint interval and
 * 0.93 with 5 minutes, from the node failure rate r_f alone (F032),
 * restart overhead 5-20 minutes (F039; the low end reproduces both) and
 * checkpoints that cost nothing to write. */
static void test_meta_ettr(void)
{
    cluster_t c = cluster_of("a100-80g", 16000);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("meta-rsc1", &fs, &e), 0);
    CU_ASSERT_STRING_EQUAL(fs.classes[0].name, "node_failure");
    fs.n_classes = 1; /* r_f only, as in the paper's model */
    rel_config_t cfg;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, "research", &e), 0);
    cfg.step_time_s = 10;
    cfg.tokens_per_step = 4e6;
    cfg.duration_s = 30 * 86400.0;
    cfg.ckpt_bytes = 0;
    cfg.restart_overhead_s = 300;
    fs.classes[0].detect_s = 0;
    double expected[2] = {0.70, 0.93}, interval[2] = {3600, 300};
    for (int k = 0; k < 2; k++) {
        cfg.ckpt_interval_s = interval[k];
        rel_result_t r;
        CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
        CHECK_REL(r.goodput_mean, expected[k], 0.05);
    }
}

/* One exponential failure class, MTBF 3 h, 60 s saves: Young/Daly's
 * sqrt(2 d M) = 1,138 s. The chosen (best) interval agrees with the
 * simulated sweep's optimum within 15% and its simulated goodput is within
 * 0.1 point of the best swept; Young/Daly itself agrees within 20% here
 * and drifts away when the save approaches the MTBF (a 1-hour save). */
static void test_best_interval(void)
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
    err_t e;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
    cfg.step_time_s = 5;
    cfg.tokens_per_step = 4e6;
    cfg.duration_s = 60 * 86400.0;
    cfg.storage_write_bps = cfg.storage_read_bps = 1e11;
    cfg.ckpt_bytes = 60 * 1e11; /* 60 s to write */
    cfg.restart_overhead_s = 600;
    cfg.trials = 300;
    rel_result_t chosen;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &chosen, &e), 0);
    double best, g[21];
    CU_ASSERT_EQUAL_FATAL(rel_best_interval(&cfg, 200, 8000, 21, NULL, g, &best, &e), 0);
    double young = sqrt(2 * 60 * 3 * 3600.0), top = 0;
    for (int i = 0; i < 21; i++)
        top = fmax(top, g[i]);
    CHECK_REL(young, 1138.4, 1e-3);
    CHECK_REL(chosen.young_daly_s, young, 1e-9);
    CHECK_REL(chosen.ckpt_interval_s, best, 0.15);
    CU_ASSERT_TRUE(chosen.goodput_mean >= top - 0.001);
    CHECK_REL(best, young, 0.20);
    /* a save of an hour against a 3-hour MTBF */
    cfg.ckpt_bytes = 3600 * 1e11;
    double best_slow;
    CU_ASSERT_EQUAL_FATAL(rel_best_interval(&cfg, 1800, 60000, 21, NULL, NULL, &best_slow, &e), 0);
    rel_result_t slow;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &slow, &e), 0);
    double young_slow = sqrt(2 * 3600 * 3 * 3600.0);
    double gap_fast = fabs(best / young - 1), gap_slow = fabs(best_slow / young_slow - 1);
    fprintf(stderr, "\n  intervals: save 60 s: chosen %.0f s, swept %.0f s, Young/Daly %.0f s; "
                    "save 1 h: chosen %.0f s, swept %.0f s, Young/Daly %.0f s (%.0f%% off)\n",
            chosen.ckpt_interval_s, best, young, slow.ckpt_interval_s, best_slow, young_slow,
            100 * gap_slow);
    CU_ASSERT_TRUE(gap_slow > gap_fast);
    CU_ASSERT_TRUE(gap_slow > 0.20);
    CHECK_REL(slow.ckpt_interval_s, best_slow, 0.25);
}

/* A published rate is per wall-clock hour: one job-level failure an hour
 * with 30-minute restarts still gives 240 failures in 10 days (not the 160
 * of a clock that stops while the job restarts), some of them during
 * restarts. */
static void test_wall_clock_rates(void)
{
    cluster_t c = cluster_of("h100-sxm", 64);
    failure_set_t fs;
    memset(&fs, 0, sizeof fs);
    snprintf(fs.name, sizeof fs.name, "synthetic");
    fs.n_classes = 1;
    failure_class_t *f = &fs.classes[0];
    snprintf(f->name, sizeof f->name, "all");
    f->component = FAIL_PER_JOB;
    f->rate_per_component_hour = 1.0;
    f->weibull_shape = 1;
    f->unexpected = true;
    f->repair = REPAIR_RESCHEDULE;
    rel_config_t cfg;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
    cfg.step_time_s = 1;
    cfg.tokens_per_step = 1e6;
    cfg.duration_s = 10 * 86400.0;
    cfg.ckpt_bytes = 0;
    cfg.restart_overhead_s = 1800;
    cfg.ckpt_interval_s = 600;
    cfg.trials = 400;
    rel_result_t r;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
    CHECK_REL(r.interruptions_mean, 240, 0.02);
    CU_ASSERT_TRUE(r.during_restart_mean > 0.3 * r.interruptions_mean);
    /* a Weibull clock with the same mean (shape 0.7: failures cluster) keeps
     * the long-run count of a renewal process, T / mean = 240, within the
     * start-up transient */
    rel_result_t w;
    f->weibull = true;
    f->weibull_shape = 0.7;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &w, &e), 0);
    CHECK_REL(w.interruptions_mean, 240, 0.05);
    f->weibull = false;
    f->weibull_shape = 1;
    /* Daly: each failure costs its restart (with failures during it,
     * e^{lam R}) and half an interval: goodput e^{-0.5} (600 / (e^{1/6} - 1)
     * / 3600) = 0.546 */
    CHECK_REL(r.goodput_mean, exp(-0.5) * 600 / (expm1(1.0 / 6) * 3600), 0.02);
}

/* Planned maintenance is announced: the job saves and loses no work. */
static void test_planned_loses_nothing(void)
{
    cluster_t c = cluster_of("h100-sxm", 2048);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    int planned = -1;
    for (int i = 0; i < fs.n_classes; i++)
        if (fs.classes[i].kind == FAIL_KIND_PLANNED)
            planned = i;
    CU_ASSERT_FATAL(planned >= 0);
    fs.classes[0] = fs.classes[planned];
    fs.classes[0].rate_per_component_hour *= 50;
    fs.n_classes = 1;
    rel_config_t cfg;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
    cfg.step_time_s = 5;
    cfg.tokens_per_step = 4e6;
    cfg.target_tokens = 2e11;
    cfg.ckpt_bytes = 1e12;
    cfg.ckpt_interval_s = 3600;
    cfg.trials = 100;
    rel_result_t r;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
    CU_ASSERT_TRUE(r.interruptions_mean > 5);
    CU_ASSERT_EQUAL(r.lost_work_s_mean, 0);
    CHECK_REL(r.useful_s_mean, 2e11 / 4e6 * 5, 1e-9);
}

/* Adaptive trials stop once the standard errors of P50 and P90 are within
 * the tolerance; a tighter tolerance takes more; --trials is exact. */
static void test_adaptive_trials(void)
{
    cluster_t c = cluster_of("h100-sxm", 2048);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set(NULL, &fs, &e), 0);
    rel_config_t cfg;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
    cfg.step_time_s = 8;
    cfg.tokens_per_step = 4e6;
    cfg.target_tokens = 1e12;
    cfg.ckpt_bytes = 70e9 * 12;
    rel_result_t loose, tight, fixed;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &loose, &e), 0);
    CU_ASSERT_TRUE(loose.adaptive);
    CU_ASSERT_TRUE(loose.se_p50 <= cfg.tolerance && loose.se_p90 <= cfg.tolerance);
    CU_ASSERT_TRUE(loose.trials >= REL_MIN_TRIALS);
    cfg.tolerance = 2e-5;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &tight, &e), 0);
    CU_ASSERT_TRUE(tight.trials > loose.trials);
    CU_ASSERT_TRUE(tight.trials == REL_MAX_TRIALS ||
                   (tight.se_p50 <= 2e-5 && tight.se_p90 <= 2e-5));
    CU_ASSERT_TRUE(tight.se_p50 < loose.se_p50);
    CHECK_REL(tight.wall_s_p50, loose.wall_s_p50, 3 * loose.se_p50);
    cfg.trials = 777;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &fixed, &e), 0);
    CU_ASSERT_EQUAL(fixed.trials, 777);
    CU_ASSERT_FALSE(fixed.adaptive);
}

/* Waiting for repairs is slower than hot spares; spot capacity adds
 * preemptions; in-memory peer copies beat writing to storage; the same
 * seed gives the same answer and another seed does not; finishing a token
 * count gives P10 <= P50 <= P90. */
static void test_policies_and_determinism(void)
{
    cluster_t c = cluster_of("h100-sxm", 2048);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set(NULL, &fs, &e), 0);
    rel_config_t cfg;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
    cfg.step_time_s = 8;
    cfg.tokens_per_step = 4e6;
    cfg.target_tokens = 1e12;
    cfg.ckpt_bytes = 70e9 * 12;
    cfg.dp = 16;
    cfg.trials = 400;
    rel_result_t spares, wait, elastic, spot, again, other, peer;
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
    CU_ASSERT_TRUE(spot.kind_mean[FAIL_KIND_PREEMPTION] > 0);
    /* against storage at 50 GB/s, where a save takes 17 s */
    rel_config_t st = cfg, pc = cfg;
    st.storage_write_bps = st.storage_read_bps = 50e9;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&st, &spares, &e), 0);
    pc.ckpt_mode = CKPT_PEER;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&pc, &peer, &e), 0);
    CU_ASSERT_TRUE(peer.save_blocking_s < spares.save_blocking_s);
    CU_ASSERT_TRUE(peer.load_s < spares.load_s);
    CU_ASSERT_TRUE(peer.goodput_mean > spares.goodput_mean);
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &spares, &e), 0);
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
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
    cfg.step_time_s = 1;
    cfg.tokens_per_step = 1e6;
    cfg.target_tokens = 1e9;
    rel_result_t r;
    rel_config_t x = cfg;
    x.storage.name[0] = '\0';
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
    x.tolerance = 0;
    rc = rel_simulate(&x, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--tolerance");
    x = cfg;
    fs.classes[0].rate_per_component_hour = -1;
    rc = rel_simulate(&x, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "llama3-405b", "faulty_gpu", "negative");
    x = cfg;
    x.trials = -1;
    rc = rel_simulate(&x, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--trials");
    failure_choice_t ch;
    rc = failure_choose("moon", "hopper", &ch, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--environment", "dedicated");
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
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
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
        /* the final save, and one more for each planned interruption
         * (announced: the job saves first; 0.007 of them in 2 days) */
        CU_ASSERT_TRUE(r.checkpoint_s_mean >= 50 - 1e-9 && r.checkpoint_s_mean <= 50 * 1.05);
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
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
    cfg.step_time_s = 5;
    cfg.tokens_per_step = 4e6;
    cfg.target_tokens = 1e12;
    cfg.ckpt_bytes = 1e12;
    cfg.trials = 1;
    /* without planned maintenance, whose announced saves would let a run
     * without periodic checkpoints creep forward */
    int k = 0;
    for (int i = 0; i < fs.n_classes; i++)
        if (fs.classes[i].kind != FAIL_KIND_PLANNED)
            fs.classes[k++] = fs.classes[i];
    fs.n_classes = k;
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


/* Issue 35.1: interruptions faster than a restart completes. Each
 * interruption that strikes a restart starts it again, so the restart
 * loop had no end (spot preemptions every 85 s against 42-minute restarts
 * on 32,768 H100s; a day's restart on 131,072). Every command that runs
 * the Monte Carlo must say "never finishes" within seconds. The storm is
 * given (--spot-preemption-rate 40: every 90 s): the catalog's spot rate,
 * from AWS's 2023 preemption traces, takes a gang as preempted as one,
 * 0.33 an hour at any size, and no longer makes one. */
static void test_restarts_never_end(void)
{
    static const char *const cmds[] = {
        "reliability --gpu h100-sxm --gpus 32768 --model llama3-8b --tokens 100B "
        "--environment cloud --spot --spot-preemption-rate 40 --trials 1",
        "reliability --gpu h100-sxm --gpus 32768 --model llama3-8b --tokens 100B "
        "--environment cloud --spot --spot-preemption-rate 40",
        "budget --gpu h100-sxm --gpus 32768 --model llama3-8b --tokens 100B --environment cloud "
        "--spot --spot-preemption-rate 40",
        "reliability --gpu h100-sxm --gpus 131072 --model llama3-8b --tokens 100B "
        "--restart-overhead 1d",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char *err = NULL;
        int rc = run_cli_limited(20, cmds[i], NULL, &err);
        CU_ASSERT_EQUAL(rc, 2);
        CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "never finishes"));
        CU_ASSERT_PTR_NOT_NULL(err && strstr(err, "restarts are interrupted before they complete"));
        CU_ASSERT_EQUAL(count_lines(err ? err : ""), 1);
        free(err);
    }
    /* plan: each rung says why, and the sentence says what helps */
    char *out = NULL;
    int rc = run_cli_limited(30,
                             "plan --gpu h100-sxm --model llama3-8b --tokens 100B --environment "
                             "cloud --spot --spot-preemption-rate 40 --min-gpus 16384 "
                             "--max-gpus 32768",
                             &out, NULL);
    CU_ASSERT_EQUAL(rc, 1);
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "never finishes: an interruption every"));
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "a steadier --environment"));
    free(out);
}

/* The same through the library: the trial stops at REL_MAX_INTERRUPTIONS
 * and the refusal says why (interrupted_out), never a figure. */
/* A 5 s step of 4M tokens on 1,024 H100s (128 nodes) under the default
 * rates and spot preemptions at per_node_hour, each restart taking
 * restart_s. */
static void storm_config(rel_config_t *cfg, const cluster_t *c, const failure_set_t *fs,
                         double per_node_hour, double restart_s)
{
    err_t e;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(cfg, c, fs, NULL, &e), 0);
    cfg->step_time_s = 5;
    cfg->tokens_per_step = 4e6;
    cfg->preempt_per_node_hour = per_node_hour;
    cfg->restart_overhead_s = restart_s;
}

static void test_restart_loop_bounded(void)
{
    cluster_t c = cluster_of("h100-sxm", 1024);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    rel_config_t cfg;
    storm_config(&cfg, &c, &fs, 1, 3600); /* a preemption every 28 s, hour-long restarts */
    cfg.target_tokens = 1e12;
    cfg.ckpt_bytes = 1e12;
    rel_result_t r;
    int rc = rel_simulate(&cfg, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "never finishes", "restarts are interrupted");
    CU_ASSERT_TRUE(r.unfinished > 0 && r.interrupted_out);
    CU_ASSERT_EQUAL(r.wall_s_p50, 0);
    /* a fixed reservation under the same storm trains nothing, and says so */
    cfg.target_tokens = 0;
    cfg.duration_s = 365 * 86400.0;
    rc = rel_simulate(&cfg, &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "trains nothing");
}

/* A year's reservation interrupted about 350,000 times a trial: the first
 * batch is cut to REL_EVENT_BUDGET's worth instead of REL_MIN_TRIALS (500
 * trials would be 1.75e8 interruptions), and the result is still within
 * the tolerance (such trials vary little). */
static void test_event_budget(void)
{
    cluster_t c = cluster_of("h100-sxm", 1024);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    rel_config_t cfg;
    storm_config(&cfg, &c, &fs, 0.3125, 60); /* a preemption every 90 s, minute restarts */
    cfg.duration_s = 365 * 86400.0;
    cfg.ckpt_bytes = 1e11;
    cfg.preempt_wait_s = 0; /* capacity back at once */
    rel_result_t r;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
    fprintf(stderr, "\n  event budget: %d trials, %.0f interruptions a trial, se of P50 %.4f\n",
            r.trials, r.interruptions_mean, r.se_p50);
    CU_ASSERT_TRUE(r.interruptions_mean > 1e5);
    CU_ASSERT_TRUE(r.trials < REL_MIN_TRIALS);
    /* the budget's worth of trials, never under REL_MIN_FIRST_TRIALS */
    CU_ASSERT_TRUE(r.trials * r.interruptions_mean <= 1.1 * REL_EVENT_BUDGET ||
                   r.trials == REL_MIN_FIRST_TRIALS);
    CU_ASSERT_TRUE(r.se_p50 <= r.tolerance && r.goodput_mean > 0 && r.goodput_mean < 1);
}


/* A hung collective costs the watchdog timeout, not a health check's
 * detection (--watchdog-timeout): Llama 3's 7 NCCL watchdog timeouts
 * (F009) of 466 interruptions. With the default 600 s (PyTorch's NCCL
 * timeout) and with 60 s the mean detection differs by 7/466 x 540 s =
 * 8.11 s, the restart by as much, and the goodput falls with a longer
 * timeout. A catalog that ignored the flag (or a class without hang)
 * would give equal figures. */
static void test_watchdog_timeout(void)
{
    cluster_t c = cluster_of("h100-sxm", 16384);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    int hangs = 0;
    for (int i = 0; i < fs.n_classes; i++)
        hangs += fs.classes[i].hang;
    CU_ASSERT_EQUAL(hangs, 1);
    rel_config_t cfg;
    llama3_config(&cfg, &c, &fs);
    CHECK_REL(cfg.watchdog_timeout_s, 600, 1e-12);
    cfg.ckpt_interval_s = 1800;
    rel_result_t lo, hi;
    memset(&lo, 0, sizeof lo);
    memset(&hi, 0, sizeof hi);
    CU_ASSERT_EQUAL_FATAL(rel_policy(&cfg, &hi, &e), 0);
    cfg.watchdog_timeout_s = 60;
    CU_ASSERT_EQUAL_FATAL(rel_policy(&cfg, &lo, &e), 0);
    CHECK_REL(hi.detect_mean_s - lo.detect_mean_s, 7.0 / 466 * 540, 1e-6);
    CHECK_REL(hi.restart_mean_s - lo.restart_mean_s, 7.0 / 466 * 540, 1e-6);
    CU_ASSERT_TRUE(hi.model_goodput < lo.model_goodput);
    cfg.watchdog_timeout_s = NAN;
    CU_ASSERT_NOT_EQUAL(rel_validate(&cfg, &e), 0);
}

/* Infant mortality (failures.json burn_in): the catalog's decay must give
 * back the published early-vs-late ratio of OPT-175B's cloud cluster: 40+
 * restarts in 16 days at cluster age 12-28 days (metaseq chronicles,
 * 27_percent_update.md) against 8 hardware failures in the 7 days at age
 * 50-57 (final_update.md): (40 / 16) / (8 / 7) = 2.1875. */
static void test_burnin_published_ratio(void)
{
    failure_burnin_t b;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_burnin(&b, &e), 0);
    CHECK_REL(b.published_ratio, (40.0 / 16) / (8.0 / 7), 1e-9);
    CHECK_REL(b.early_from_s, 12 * 86400.0, 1e-12);
    CHECK_REL(b.late_to_s, 57 * 86400.0, 1e-12);
    double early = failure_burnin_mean(&b, b.early_from_s, b.early_to_s);
    double late = failure_burnin_mean(&b, b.late_from_s, b.late_to_s);
    fprintf(stderr, "\n  burn-in: x%.2f at age 0, window means x%.3f (12-28 d) and x%.3f "
                    "(50-57 d), ratio %.3f (published %.3f)\n",
            b.initial_multiple, early, late, early / late, b.published_ratio);
    CHECK_REL(early / late, b.published_ratio, 0.01);
    CHECK_REL(failure_burnin_multiple(&b, 0), b.initial_multiple, 1e-12);
    CU_ASSERT_TRUE(failure_burnin_multiple(&b, 365 * 86400.0) < 1 + 1e-9);
    /* the window mean is the integral's: m(a) at the midpoint of a short window */
    CHECK_REL(failure_burnin_mean(&b, 10 * 86400.0, 10 * 86400.0 + 1),
              failure_burnin_multiple(&b, 10 * 86400.0 + 0.5), 1e-6);
}

/* The simulated run sees the decay: 28 days on 2,048 H100s with Llama 3's
 * rates on a cluster 0 days old expects failure_burnin_mean(0, 28 d) times
 * the mature count (every interruption is counted per wall-clock hour,
 * restarts included), one a year old the mature count. Switching the decay
 * off (or mis-inverting the stress clock) breaks the first ratio. */
static void test_burnin_simulated(void)
{
    cluster_t c = cluster_of("h100-sxm", 2048);
    failure_set_t fs;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    rel_config_t cfg;
    llama3_config(&cfg, &c, &fs);
    cfg.duration_s = 28 * 86400.0;
    cfg.ckpt_bytes = 1e12;
    cfg.ckpt_interval_s = 3600;
    cfg.trials = 2000;
    rel_result_t mature, young, old;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &mature, &e), 0);
    cfg.cluster_age_s = 0;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &young, &e), 0);
    cfg.cluster_age_s = 365 * 86400.0;
    CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &old, &e), 0);
    double expect = failure_burnin_mean(&cfg.burnin, 0, cfg.duration_s);
    fprintf(stderr, "\n  burn-in run: %.1f interruptions mature, %.1f at age 0 (x%.3f, expected "
                    "x%.3f), %.1f at a year; goodput %.3f vs %.3f\n",
            mature.interruptions_mean, young.interruptions_mean,
            young.interruptions_mean / mature.interruptions_mean, expect,
            old.interruptions_mean, young.goodput_mean, mature.goodput_mean);
    CHECK_REL(young.interruptions_mean / mature.interruptions_mean, expect, 0.03);
    CHECK_REL(old.interruptions_mean, mature.interruptions_mean, 0.03);
    CU_ASSERT_TRUE(young.goodput_mean < mature.goodput_mean);
    cfg.cluster_age_s = NAN;
    CU_ASSERT_NOT_EQUAL(rel_validate(&cfg, &e), 0);
}

/* Spot capacity from AWS's 2023 preemption traces (SkyPilot spot-traces,
 * Wu et al. NSDI 2024; topologies/catalog/prices.json spot): 381
 * preemptions in 1,166.2 hours of jobs of 1 and 4 instances = 0.33 an
 * hour, a gang preempted as one (node_exponent 0: the 4-instance gangs
 * broke 0.24 times an hour where independent instances would break them
 * 0.78 times), 1.80 h on average to get capacity back. Over a 30-day
 * reservation a job of 8 nodes and one of 64 both see about 0.33 x 720 =
 * 238 preemptions; with independent nodes (exponent 1) the 64-node job
 * sees 8x the 8-node one's. reliability --spot says where the figures
 * come from. */
static void test_spot_from_evidence(void)
{
    double rate, expo, wait;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(price_spot_defaults(&rate, &expo, &wait, &e), 0);
    CHECK_REL(rate, 381 / 1166.2, 0.02);
    CU_ASSERT_EQUAL(expo, 0);
    CHECK_REL(wait, 1.80 * 3600, 1e-9);
    failure_set_t fs;
    CU_ASSERT_EQUAL_FATAL(failure_load_set("llama3-405b", &fs, &e), 0);
    double seen[2][2];
    const int gpus[2] = {64, 512};
    for (int k = 0; k < 2; k++)
        for (int x = 0; x < 2; x++) {
            cluster_t c = cluster_of("h100-sxm", gpus[k]);
            rel_config_t cfg;
            CU_ASSERT_EQUAL_FATAL(rel_config_init(&cfg, &c, &fs, NULL, &e), 0);
            cfg.step_time_s = 5;
            cfg.tokens_per_step = 4e6;
            cfg.duration_s = 30 * 86400.0;
            cfg.ckpt_bytes = 1e11;
            cfg.trials = 50;
            cfg.preempt_per_node_hour = rate;
            cfg.preempt_node_exponent = x ? 1 : expo;
            cfg.preempt_wait_s = wait;
            rel_result_t r;
            CU_ASSERT_EQUAL_FATAL(rel_simulate(&cfg, &r, &e), 0);
            seen[k][x] = r.kind_mean[FAIL_KIND_PREEMPTION];
        }
    fprintf(stderr, "\n  spot, 30 days: 8 nodes %.0f, 64 nodes %.0f preemptions (gang as one); "
                    "independent nodes %.0f and %.0f\n",
            seen[0][0], seen[1][0], seen[0][1], seen[1][1]);
    CHECK_REL(seen[0][0], 0.327 * 720, 0.1);
    CHECK_REL(seen[1][0], seen[0][0], 0.1);
    CHECK_REL(seen[1][1] / seen[0][1], 8, 0.1);
    char *out = NULL;
    int rc = run_cli_limited(60,
                             "reliability --gpu h100-sxm --gpus 64 --model llama3-8b --tokens 10B "
                             "--environment cloud --spot --trials 100",
                             &out, NULL);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "spot: 0.33 preemptions an hour of one node"));
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "Wu et al. NSDI 2024"));
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "ASSUMED"));
    free(out);
    /* catalog failures lists the spot rate beside the failure rates */
    out = NULL;
    rc = run_cli_limited(30, "catalog failures", &out, NULL);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "Spot capacity (--spot, budget's spot quotes): "
                                             "0.33 preemptions an hour of one node, x nodes^0"));
    free(out);
}

TEST_SUITE(suite_reliability, "reliability", TEST(test_llama3_405b_run),
           TEST(test_storage_bandwidth_monotone), TEST(test_storage_limits),
           TEST(test_restart_model), TEST(test_meta_ettr), TEST(test_best_interval),
           TEST(test_wall_clock_rates), TEST(test_planned_loses_nothing),
           TEST(test_adaptive_trials), TEST(test_policies_and_determinism),
           TEST(test_bad_inputs), TEST(test_interval_longer_than_run), TEST(test_never_finishes),
           TEST(test_restarts_never_end), TEST(test_restart_loop_bounded), TEST(test_event_budget),
           TEST(test_watchdog_timeout), TEST(test_burnin_published_ratio),
           TEST(test_burnin_simulated), TEST(test_spot_from_evidence));
