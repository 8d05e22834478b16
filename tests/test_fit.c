/* Tests of calibrate/fit: every fit recovers the parameters that generated
 * synthetic data (with seeded multiplicative noise, GSL RNG), reports
 * sensible quality figures, and its 95% prediction interval holds the
 * noise-free truth. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "calibrate/fit.h"
#include "profile/profile.h"
#include "common/rng.h"
#include "tests/testing.h"

/* exp(sigma N(0,1)): relative noise of a timing */
static double noise(gsl_rng *r, double sigma)
{
    return exp(gsl_ran_gaussian(r, sigma));
}

/* Memory-bound kernels: time = 2 us + bytes / 3000 GB/s, 2% noise, three
 * kernels at 11 sizes. The fit recovers alpha within 10% and the bandwidth
 * within 2% (the 1 MiB runs carry alpha at ~85% of their time; 33 points
 * at 2% noise give a standard error near 0.4% on the slope). */
static void test_line_recovers_alpha_beta(void)
{
    err_t e;
    gsl_rng *r = rng_create(RNG_DEFAULT_SEED, 1, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double x[33], y[33];
    int n = 0;
    for (int k = 0; k < 3; k++)
        for (double b = 1 << 20; b <= (double)(1 << 30); b *= 2) {
            x[n] = b * (k + 2);
            y[n] = (2e-6 + x[n] / 3000e9) * noise(r, 0.02);
            n++;
        }
    fit_line_t f;
    CU_ASSERT_EQUAL_FATAL(fit_line(x, y, (size_t)n, &f, &e), 0);
    CHECK_REL(f.alpha, 2e-6, 0.10);
    CHECK_REL(1 / f.beta, 3000e9, 0.02);
    CU_ASSERT_EQUAL(f.q.n, n);
    CU_ASSERT_EQUAL(f.dof, n - 2);
    CU_ASSERT_TRUE(f.q.r2 > 0.999 && f.q.r2 <= 1);
    CU_ASSERT_TRUE(f.q.worst_rel_err > 0.01 && f.q.worst_rel_err < 0.08);
    /* about 2 sigma of 2% noise plus the parameters' share */
    CU_ASSERT_TRUE(f.q.pi95_rel > 0.03 && f.q.pi95_rel < 0.07);
    CU_ASSERT_TRUE(sqrt(f.cov[1][1]) < 0.01 * f.beta);
    for (double b = 3e6; b < 3e9; b *= 10) {
        double p, lo, hi, truth = 2e-6 + b / 3000e9;
        fit_line_predict(&f, b, &p, &lo, &hi);
        CU_ASSERT_TRUE(lo < truth && truth < hi);
        CU_ASSERT_TRUE(lo < p && p < hi);
    }
    rng_destroy(r);
}

/* Without noise the line is exact and its interval collapses. */
static void test_line_exact_and_bounds(void)
{
    double x[5] = {1e3, 1e4, 1e5, 1e6, 1e7}, y[5];
    for (int i = 0; i < 5; i++)
        y[i] = 5e-6 + x[i] / 100e9;
    fit_line_t f;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(fit_line(x, y, 5, &f, &e), 0);
    CHECK_REL(f.alpha, 5e-6, 1e-9);
    CHECK_REL(f.beta, 1 / 100e9, 1e-9);
    CU_ASSERT_TRUE(f.q.worst_rel_err < 1e-9);
    CU_ASSERT_TRUE(f.q.pi95_rel < 1e-6);
    CU_ASSERT_FALSE(f.constrained);
    /* falling times would need a negative bandwidth: the slope is held at
     * its floor and the line flagged */
    double yd[5] = {5e-6, 4e-6, 3e-6, 2e-6, 1e-6};
    CU_ASSERT_EQUAL_FATAL(fit_line(x, yd, 5, &f, &e), 0);
    CU_ASSERT_TRUE(f.constrained);
    CU_ASSERT_TRUE(f.beta > 0 && f.alpha >= 0);
    /* bad input */
    int rc = fit_line(x, y, 2, &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "at least 3 points");
    double yn[5] = {1, 2, -3, 4, 5};
    rc = fit_line(x, yn, 5, &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "point 2", "positive");
}

/* The three NCCL protocols of an 8-rank all-reduce, as alpha-beta lines
 * on bus bytes: LL 12 us + 60 GB/s, LL128 25 us + 250 GB/s, Simple 60 us +
 * 370 GB/s; time is the fastest of them (NCCL's choice) x 2% noise, at
 * 8 B .. 1 GiB by factors of 2. */
static const double true_alpha[3] = {12e-6, 25e-6, 60e-6};
static const double true_bw[3] = {60e9, 250e9, 370e9};

static double protocol_time(double bus)
{
    double best = INFINITY;
    for (int i = 0; i < 3; i++) {
        double t = true_alpha[i] + bus / true_bw[i];
        if (t < best)
            best = t;
    }
    return best;
}

static int protocol_points(double *x, double *y, gsl_rng *r, double sigma)
{
    int n = 0;
    for (double b = 8; b <= (double)(1 << 30); b *= 2) {
        x[n] = 1.75 * b;
        y[n] = protocol_time(x[n]) * (r ? noise(r, sigma) : 1);
        n++;
    }
    return n;
}

/* Noise-free: three regimes, each line exact. */
static void test_regimes_exact(void)
{
    double x[64], y[64];
    int n = protocol_points(x, y, NULL, 0);
    fit_regimes_t f;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(fit_regimes(x, y, (size_t)n, 8, &f, &e), 0);
    CU_ASSERT_EQUAL_FATAL(f.n_lines, 3);
    for (int i = 0; i < 3; i++) {
        CHECK_REL(f.lines[i].alpha, true_alpha[i], 1e-6);
        CHECK_REL(1 / f.lines[i].beta, true_bw[i], 1e-6);
    }
    CU_ASSERT_TRUE(f.q.worst_rel_err < 1e-9);
    CU_ASSERT_EQUAL(f.first[0], 0);
    CU_ASSERT_EQUAL(f.first[2] + f.count[2], (size_t)n);
    for (int i = 0; i < n; i++)
        CHECK_REL(fit_regimes_eval(&f, x[i]), y[i], 1e-9);
}

/* With 2% noise (seeded): still three regimes; every bandwidth within 6%
 * and every alpha within 15% (the LL128 regime spans only 1-8 MiB, 4
 * points); R^2 on log time above 0.999; the envelope's worst error within
 * 4 sigma of the noise; the 95% prediction interval holds the noise-free
 * time at every measured size but a few (5% may fall outside). */
static void test_regimes_recover_with_noise(void)
{
    err_t e;
    gsl_rng *r = rng_create(RNG_DEFAULT_SEED, 2, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    double x[64], y[64];
    int n = protocol_points(x, y, r, 0.02);
    fit_regimes_t f;
    CU_ASSERT_EQUAL_FATAL(fit_regimes(x, y, (size_t)n, 8, &f, &e), 0);
    CU_ASSERT_EQUAL_FATAL(f.n_lines, 3);
    for (int i = 0; i < 3; i++) {
        CHECK_REL(f.lines[i].alpha, true_alpha[i], 0.15);
        CHECK_REL(1 / f.lines[i].beta, true_bw[i], 0.06);
    }
    CU_ASSERT_TRUE(f.q.r2 > 0.999);
    CU_ASSERT_TRUE(f.q.worst_rel_err < 0.08);
    CU_ASSERT_TRUE(f.q.pi95_rel > 0.02 && f.q.pi95_rel < 0.5);
    int outside = 0;
    for (int i = 0; i < n; i++) {
        double p, lo, hi, truth = protocol_time(x[i]);
        fit_regimes_predict(&f, x[i], &p, &lo, &hi);
        CHECK_REL(p, fit_regimes_eval(&f, x[i]), 1e-12);
        if (!(lo < truth && truth < hi))
            outside++;
    }
    CU_ASSERT_TRUE(outside <= 2);
    rng_destroy(r);
}

/* Envelope: no line undercuts the measurements of another regime by more
 * than the slack (here, measurements that are not a min of lines: the
 * A100 log's flat 1-4 MiB region, collectives.csv C001-C020). */
static void test_regimes_envelope_and_errors(void)
{
    static const double bytes[] = {32768,     65536,      131072,     262144,     524288,
                                   1048576,   2097152,    4194304,    8388608,    16777216,
                                   33554432,  67108864,   134217728,  268435456,  536870912,
                                   1073741824, 2147483648., 4294967296., 8589934592., 17179869184.};
    static const double us[] = {43.83, 46.8,   51.76,  61.38,  80.4,   101.9,   101.4,
                                101.5, 133.5,  276.6,  424.0,  684.6,  1327.6,  2420.6,
                                4218.4, 8203.9, 16240, 32136, 64074, 127997};
    double x[20], y[20];
    for (int i = 0; i < 20; i++) {
        x[i] = 1.75 * bytes[i];
        y[i] = us[i] * 1e-6;
    }
    fit_regimes_t f;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(fit_regimes(x, y, 20, 8, &f, &e), 0);
    CU_ASSERT_TRUE(f.n_lines >= 2 && f.n_lines <= 8);
    for (int l = 0; l < f.n_lines; l++) {
        CU_ASSERT_TRUE(f.lines[l].alpha >= 0 && f.lines[l].beta > 0);
        for (int i = 0; i < 20; i++) {
            bool own = (size_t)i >= f.first[l] && (size_t)i < f.first[l] + f.count[l];
            if (!own)
                CU_ASSERT_TRUE(f.lines[l].alpha + f.lines[l].beta * x[i] >= 0.95 * y[i]);
        }
    }
    /* the published large-message plateau (~235 GB/s busbw) is the last line */
    CHECK_REL(1 / f.lines[f.n_lines - 1].beta / 1e9, 235, 0.03);
    double xs[3] = {1, 3, 2}, ys[3] = {1, 1, 1};
    int rc = fit_regimes(xs, ys, 3, 8, &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "sizes must increase");
    rc = fit_regimes(x, y, 20, 0, &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "max_lines");
}

/* GEMM: data from the profile's own model on H100 SXM figures (peak bf16
 * 989.4, fp8 1978.9 TFLOP/s, 132 SMs, 3350 GB/s) with max efficiency bf16
 * 0.78 and fp8 0.70, k_half 300, wave_penalty 0.6, tile 128x256, launch
 * 3 us, over squares, transformer shapes and a grid, x 3% noise. */
typedef struct {
    double m, n, k;
} shape_t;

static size_t gemm_shapes(shape_t *s, size_t cap)
{
    size_t n = 0;
    for (double x = 256; x <= 16384 && n < cap; x *= 2)
        s[n++] = (shape_t){x, x, x};
    static const double g[] = {512, 1536, 4096, 12288};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 4 && n < cap; c++)
                s[n++] = (shape_t){g[a], g[b], g[c]};
    /* Llama 3 70B layer at TP 8, 4096 tokens */
    static const shape_t model[] = {{4096, 1280, 8192}, {4096, 8192, 1024}, {4096, 7168, 8192},
                                    {4096, 8192, 3584}, {1024, 8192, 4096}, {3584, 8192, 4096}};
    for (size_t i = 0; i < sizeof model / sizeof model[0] && n < cap; i++)
        s[n++] = model[i];
    return n;
}

static void truth_profile(profile_t *t)
{
    t->gemm_max_eff[DTYPE_BF16] = 0.78;
    t->gemm_max_eff[DTYPE_FP8] = 0.70;
    t->k_half = 300;
    t->wave_penalty = 0.6;
    t->tile_m = 128;
    t->tile_n = 256;
    t->gemm_launch_us = 3;
    t->sustained_factor = 1;
    t->n_gemm_points = 0;
}

static void test_gemm_recovers_parameters(void)
{
    err_t e;
    profile_t base, truth;
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &base, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &truth, &e), 0);
    base.gemm_launch_us = 3;
    truth_profile(&truth);
    gsl_rng *r = rng_create(RNG_DEFAULT_SEED, 3, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    shape_t s[128];
    size_t ns = gemm_shapes(s, 128);
    prof_gemm_point_t pts[256];
    size_t n = 0;
    for (int d = 0; d < 2; d++)
        for (size_t i = 0; i < ns; i++) {
            dtype_t dt = d ? DTYPE_FP8 : DTYPE_BF16;
            double t = prof_gemm_time(&truth, dt, s[i].m, s[i].n, s[i].k, 1) * noise(r, 0.03);
            pts[n++] = (prof_gemm_point_t){dt, s[i].m, s[i].n, s[i].k,
                                           2 * s[i].m * s[i].n * s[i].k / t / 1e12};
        }
    fit_gemm_t f;
    CU_ASSERT_EQUAL_FATAL(fit_gemm(&base, pts, n, &f, &e), 0);
    CU_ASSERT_EQUAL(f.tile_m, 128);
    CU_ASSERT_EQUAL(f.tile_n, 256);
    /* 3% noise over ~90 points per dtype: a few tenths of a percent on the
     * efficiencies; k_half and wave_penalty are shape effects, looser */
    CHECK_REL(f.max_eff[DTYPE_BF16], 0.78, 0.02);
    CHECK_REL(f.max_eff[DTYPE_FP8], 0.70, 0.02);
    CHECK_REL(f.k_half, 300, 0.15);
    CU_ASSERT_TRUE(fabs(f.wave_penalty - 0.6) < 0.08);
    CU_ASSERT_EQUAL(f.n_used, n);
    CU_ASSERT_EQUAL(f.n_skipped, 0);
    CU_ASSERT_EQUAL(f.n_params, 4);
    /* the standard errors are small and cover the truth within ~3 se */
    CU_ASSERT_TRUE(f.se_max_eff[DTYPE_BF16] > 0 && f.se_max_eff[DTYPE_BF16] < 0.01);
    CU_ASSERT_TRUE(fabs(f.max_eff[DTYPE_BF16] - 0.78) < 4 * f.se_max_eff[DTYPE_BF16]);
    CU_ASSERT_TRUE(fabs(f.k_half - 300) < 4 * f.se_k_half);
    /* quality: R^2 on log TFLOP/s, worst error about 3-4 sigma of 3% */
    CU_ASSERT_TRUE(f.q.r2 > 0.98);
    CU_ASSERT_TRUE(f.q.worst_rel_err > 0.03 && f.q.worst_rel_err < 0.15);
    CU_ASSERT_TRUE(f.q.pi95_rel > 0.04 && f.q.pi95_rel < 0.10);
    /* the interval at shapes never measured holds the truth */
    static const shape_t fresh[] = {{6144, 6144, 6144}, {2048, 14336, 4096}, {8192, 1024, 16384}};
    for (int i = 0; i < 3; i++) {
        double rate, lo, hi;
        CU_ASSERT_EQUAL(fit_gemm_predict(&f, &base, DTYPE_BF16, fresh[i].m, fresh[i].n,
                                         fresh[i].k, &rate, &lo, &hi, &e),
                        0);
        double t = prof_gemm_time(&truth, DTYPE_BF16, fresh[i].m, fresh[i].n, fresh[i].k, 1);
        double truth_rate = 2 * fresh[i].m * fresh[i].n * fresh[i].k / t / 1e12;
        CU_ASSERT_TRUE(lo < truth_rate && truth_rate < hi);
        CU_ASSERT_TRUE(lo < rate && rate < hi);
    }
    /* applied to a profile (sustained factor 1, as for measured rates),
     * the model predicts the truth within a few % */
    fit_gemm_apply(&f, &base);
    base.sustained_factor = 1;
    double a = prof_gemm_time(&base, DTYPE_BF16, 8192, 8192, 8192, 1);
    double b = prof_gemm_time(&truth, DTYPE_BF16, 8192, 8192, 8192, 1);
    CHECK_REL(a, b, 0.02);
    rng_destroy(r);
    prof_free(&base);
    prof_free(&truth);
}

/* Noise-free data give the parameters back almost exactly. */
static void test_gemm_exact(void)
{
    err_t e;
    profile_t base, truth;
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &base, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &truth, &e), 0);
    base.gemm_launch_us = 3;
    truth_profile(&truth);
    shape_t s[128];
    size_t ns = gemm_shapes(s, 128);
    prof_gemm_point_t pts[128];
    for (size_t i = 0; i < ns; i++) {
        double t = prof_gemm_time(&truth, DTYPE_BF16, s[i].m, s[i].n, s[i].k, 1);
        pts[i] = (prof_gemm_point_t){DTYPE_BF16, s[i].m, s[i].n, s[i].k,
                                     2 * s[i].m * s[i].n * s[i].k / t / 1e12};
    }
    fit_gemm_t f;
    CU_ASSERT_EQUAL_FATAL(fit_gemm(&base, pts, ns, &f, &e), 0);
    CHECK_REL(f.max_eff[DTYPE_BF16], 0.78, 1e-4);
    CHECK_REL(f.k_half, 300, 1e-3);
    CHECK_REL(f.wave_penalty, 0.6, 1e-3);
    CU_ASSERT_TRUE(f.q.worst_rel_err < 1e-4);
    CU_ASSERT_TRUE(f.q.r2 > 0.999999);
    CU_ASSERT_EQUAL(f.max_eff[DTYPE_FP8], 0); /* not measured, not fitted */
    prof_free(&base);
    prof_free(&truth);
}

/* Too few points, dtypes the GPU has no peak for, rates above its peak. */
static void test_gemm_errors(void)
{
    err_t e;
    profile_t a100;
    CU_ASSERT_EQUAL_FATAL(prof_load_default("a100-80g", &a100, &e), 0);
    prof_gemm_point_t pts[4] = {{DTYPE_BF16, 4096, 4096, 4096, 250},
                                {DTYPE_BF16, 8192, 8192, 8192, 260},
                                {DTYPE_BF16, 1024, 1024, 1024, 150},
                                {DTYPE_FP8, 4096, 4096, 4096, 500}};
    fit_gemm_t f;
    int rc = fit_gemm(&a100, pts, 4, &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "more than 3 measurements", "got 3");
    rc = fit_gemm(&a100, pts + 3, 1, &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "no GEMM measurement", "a100-80g");
    prof_gemm_point_t bad = {DTYPE_BF16, 0, 4096, 4096, 250};
    rc = fit_gemm(&a100, &bad, 1, &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "must be positive");
    /* issue 35: a measurement above the A100's 312 TFLOP/s bf16 peak is
     * not one of this GPU; it is refused, not fitted */
    prof_gemm_point_t fast[5] = {{DTYPE_BF16, 4096, 4096, 4096, 250},
                                 {DTYPE_BF16, 8192, 8192, 8192, 260},
                                 {DTYPE_BF16, 1024, 1024, 1024, 150},
                                 {DTYPE_BF16, 2048, 2048, 2048, 200},
                                 {DTYPE_BF16, 16384, 16384, 16384, 400}};
    rc = fit_gemm(&a100, fast, 5, &f, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "GEMM point 4", "above a100-80g's dense peak");
    prof_free(&a100);
}

TEST_SUITE(suite_fit, "fit", TEST(test_line_recovers_alpha_beta), TEST(test_line_exact_and_bounds),
           TEST(test_regimes_exact), TEST(test_regimes_recover_with_noise),
           TEST(test_regimes_envelope_and_errors), TEST(test_gemm_recovers_parameters),
           TEST(test_gemm_exact), TEST(test_gemm_errors));
