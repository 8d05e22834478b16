/* Tests of sim/doubling: measured runs against the simulator.
 *
 * The measured runs are made from the simulator's own predictions times
 * chosen factors (a rung 15% slow, every rung 8% slow, ...), so what the
 * tests assert - which rung is flagged, that a cause is named and the
 * shared factor is not it, that the next rung's interval holds its
 * prediction - survives changes of the cost model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "validate/doubling.h"
#include "sim/scenario.h"
#include "tests/testing.h"

#define RUNGS 3
static const int rung_gpus[RUNGS] = {64, 128, 256};

typedef struct {
    scenario_t s[RUNGS];
    dbl_measured_t m[RUNGS];
    double predicted[RUNGS];
} ladder_fixture_t;

/* Llama 3 8B, data parallel only, 512 sequences of 8192 tokens per step,
 * on 64, 128 and 256 H100: strong scaling, so the gradient reduction's
 * share of the step grows at each doubling. Measured = predicted x f[i]. */
static int make_ladder(ladder_fixture_t *x, const double *f)
{
    memset(x, 0, sizeof *x);
    sim_ctx_t *ctx = sim_ctx_create();
    if (!ctx)
        return -1;
    err_t e;
    for (int i = 0; i < RUNGS; i++) {
        scenario_spec_t sp = {0};
        sp.model = "llama3-8b";
        sp.cluster.gpu = "h100-sxm";
        sp.cluster.n_gpus = rung_gpus[i];
        if (scenario_begin(&sp, &x->s[i], &e))
            goto fail;
        x->s[i].layout.global_batch = 512;
        x->s[i].layout.seq_len = 8192;
        x->s[i].layout.distributed_optimizer = true;
        sim_result_t r;
        if (scenario_finish(&x->s[i], NULL, &e) || sim_run_step(ctx, &x->s[i].input, &r, &e))
            goto fail;
        x->predicted[i] = r.step_time_s;
        dbl_measured_t *m = &x->m[i];
        m->label = i == 0 ? "64.log" : i == 1 ? "128.log" : "256.log";
        m->in = x->s[i].input;
        m->step_time_s = r.step_time_s * f[i];
        m->step_cv = 0.003;
        m->memory_gib = NAN;
        for (int k = 0; k < DBL_COMP_COUNT; k++)
            m->comp_s[k] = NAN;
    }
    sim_ctx_destroy(ctx);
    return 0;
fail:
    fprintf(stderr, "doubling fixture: %s\n", e.msg);
    sim_ctx_destroy(ctx);
    return -1;
}

static void free_ladder(ladder_fixture_t *x)
{
    for (int i = 0; i < RUNGS; i++)
        scenario_free(&x->s[i]);
}

/* A run measured exactly as predicted: no error anywhere; a memory figure
 * 20% above the prediction is flagged. */
static void test_check_run(void)
{
    static ladder_fixture_t x;
    const double f[RUNGS] = {1, 1, 1};
    CU_ASSERT_EQUAL_FATAL(make_ladder(&x, f), 0);
    sim_ctx_t *ctx = sim_ctx_create();
    dbl_check_t c;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(dbl_check_run(ctx, &x.m[0], 0.10, &c, &e), 0);
    CHECK_REL(c.error, 0, 1e-12);
    CU_ASSERT_TRUE(c.within);
    for (int q = DBL_Q_STEP; q <= DBL_Q_MFU; q++) {
        CHECK_REL(c.q[q].error, 0, 1e-12);
        CU_ASSERT_FALSE(c.q[q].flagged);
    }
    CU_ASSERT_TRUE(isnan(c.q[DBL_Q_MEMORY].measured) && !c.q[DBL_Q_MEMORY].flagged);
    /* tokens/s is the step's tokens over the measured time */
    CHECK_REL(c.q[DBL_Q_TOKENS].measured, 512.0 * 8192 / x.m[0].step_time_s, 1e-12);
    x.m[0].memory_gib = 1.2 * c.predicted.memory.total_bytes / (1024.0 * 1024 * 1024);
    x.m[0].step_time_s *= 1.25;
    CU_ASSERT_EQUAL_FATAL(dbl_check_run(ctx, &x.m[0], 0.10, &c, &e), 0);
    CHECK_REL(c.error, 1 / 1.25 - 1, 1e-12);
    CU_ASSERT_FALSE(c.within);
    CU_ASSERT_TRUE(c.q[DBL_Q_MEMORY].flagged);
    CHECK_REL(c.q[DBL_Q_MEMORY].error, 1 / 1.2 - 1, 1e-9);
    sim_ctx_destroy(ctx);
    free_ladder(&x);
}

/* The acceptance case: 64, 128 and 256 GPUs, the 256-GPU rung 15% slow.
 * It is flagged (and only it), a cause is named and the shared compute
 * factor is ruled out (it would slow the rungs that matched as much), the
 * re-fit carries the cause's factor, and the 512-GPU rung is predicted
 * with an interval around the corrected prediction, slower than the
 * profile as it was says. */
static void test_slow_rung(void)
{
    static ladder_fixture_t x;
    const double f[RUNGS] = {1, 1, 1.15};
    CU_ASSERT_EQUAL_FATAL(make_ladder(&x, f), 0);
    static dbl_ladder_t l;
    err_t e;
    int rc = dbl_ladder(x.m, RUNGS, NULL, 0, 0.10, &l, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(l.n, 3);
    CHECK_REL(l.offset, 1, 1e-12);
    CU_ASSERT_EQUAL(l.worst, 2);
    CU_ASSERT_FALSE(l.rung[0].flagged);
    CU_ASSERT_FALSE(l.rung[1].flagged);
    CU_ASSERT_TRUE(l.rung[2].flagged);
    CHECK_REL(l.rung[2].shortfall, 0.15, 1e-9);
    CHECK_REL(l.rung[2].measured_efficiency, l.rung[2].predicted_efficiency / 1.15, 1e-9);
    CU_ASSERT_EQUAL(l.n_causes, DBL_N_CAUSES);
    CU_ASSERT_TRUE(l.cause[0].explains);
    CU_ASSERT_PTR_NOT_NULL(l.cause[0].part);
    CU_ASSERT_TRUE(l.cause[0].part_after_s > l.cause[0].part_before_s);
    for (int i = 0; i < l.n_causes; i++)
        if (strcmp(l.cause[i].field, "sustained_factor") == 0)
            CU_ASSERT_FALSE(l.cause[i].explains);
    CU_ASSERT_EQUAL(l.n_fit, 2);
    CU_ASSERT_STRING_EQUAL(l.fit[1].field, l.cause[0].field);
    CU_ASSERT_TRUE(l.has_next);
    CU_ASSERT_EQUAL(l.next_gpus, 512);
    CU_ASSERT_EQUAL(l.next_layout.n_gpus, 512);
    CU_ASSERT_EQUAL(l.next_layout.global_batch, 512);
    double t = l.next_corrected.step_time_s;
    CU_ASSERT_TRUE(l.next_low_s > 0 && l.next_low_s < t && t < l.next_high_s);
    CU_ASSERT_TRUE(t > l.next_uncorrected.step_time_s);
    CHECK_REL(l.next_tokens_per_s, 512.0 * 8192 / t, 1e-12);
    free_ladder(&x);
}

/* Every rung as predicted: nothing flagged, no cause, the re-fit leaves
 * the profile alone and the next rung's prediction with it. */
static void test_all_match(void)
{
    static ladder_fixture_t x;
    const double f[RUNGS] = {1, 1, 1};
    CU_ASSERT_EQUAL_FATAL(make_ladder(&x, f), 0);
    static dbl_ladder_t l;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(dbl_ladder(x.m, RUNGS, NULL, 0, 0.10, &l, &e), 0);
    CU_ASSERT_EQUAL(l.worst, -1);
    CU_ASSERT_EQUAL(l.n_causes, 0);
    CU_ASSERT_EQUAL(l.n_fit, 1);
    CHECK_REL(l.fit[0].slowdown, 1, 0.01);
    CHECK_REL(l.next_corrected.step_time_s, l.next_uncorrected.step_time_s, 0.01);
    for (int i = 0; i < RUNGS; i++)
        CHECK_REL(l.rung[i].measured_efficiency, l.rung[i].predicted_efficiency, 1e-9);
    free_ladder(&x);
}

/* Every rung 8% slow: a profile that is optimistic everywhere is not a
 * scaling problem. Nothing is flagged; the re-fit finds compute 8% slower
 * and carries it to the next rung. */
static void test_shared_offset(void)
{
    static ladder_fixture_t x;
    const double f[RUNGS] = {1.08, 1.08, 1.08};
    CU_ASSERT_EQUAL_FATAL(make_ladder(&x, f), 0);
    static dbl_ladder_t l;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(dbl_ladder(x.m, RUNGS, NULL, 0, 0.10, &l, &e), 0);
    CHECK_REL(l.offset, 1.08, 1e-12);
    CU_ASSERT_EQUAL(l.worst, -1);
    CHECK_REL(l.fit[0].slowdown, 1.08, 0.02);
    CU_ASSERT_TRUE(l.fit[0].after < l.fit[0].before); /* sustained factor down */
    CHECK_REL(l.next_corrected.step_time_s, 1.08 * l.next_uncorrected.step_time_s, 0.02);
    free_ladder(&x);
}

/* The middle rung alone 15% slow: whatever would slow it would slow the
 * 256-GPU rung too, which ran as predicted, so no factor explains it. */
static void test_one_off(void)
{
    static ladder_fixture_t x;
    const double f[RUNGS] = {1, 1.15, 1};
    CU_ASSERT_EQUAL_FATAL(make_ladder(&x, f), 0);
    static dbl_ladder_t l;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(dbl_ladder(x.m, RUNGS, NULL, 0, 0.10, &l, &e), 0);
    CU_ASSERT_EQUAL(l.worst, 1);
    CU_ASSERT_EQUAL(l.n_causes, DBL_N_CAUSES);
    CU_ASSERT_FALSE(l.cause[0].explains);
    CU_ASSERT_EQUAL(l.n_fit, 1); /* compute only */
    free_ladder(&x);
}

/* The next rung as the plan has it, instead of the last rung doubled. */
static void test_next_from_plan(void)
{
    static ladder_fixture_t x;
    const double f[RUNGS] = {1, 1, 1};
    CU_ASSERT_EQUAL_FATAL(make_ladder(&x, f), 0);
    layout_t next = x.s[2].layout;
    next.tp = 2;
    next.dp = next.grad_accum = 0;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&next, &x.s[2].model, 1024, &e), 0);
    static dbl_ladder_t l;
    CU_ASSERT_EQUAL_FATAL(dbl_ladder(x.m, RUNGS, &next, 1024, 0.10, &l, &e), 0);
    CU_ASSERT_EQUAL(l.next_gpus, 1024);
    CU_ASSERT_EQUAL(l.next_layout.tp, 2);
    CU_ASSERT_EQUAL(l.next_layout.dp, 512);
    free_ladder(&x);
}

/* Runs that do not form a ladder are refused, naming the run. */
static void test_not_a_ladder(void)
{
    static ladder_fixture_t x;
    const double f[RUNGS] = {1, 1, 1};
    CU_ASSERT_EQUAL_FATAL(make_ladder(&x, f), 0);
    static dbl_ladder_t l;
    err_t e;
    CHECK_ERR(dbl_ladder(x.m, 1, NULL, 0, 0.10, &l, &e), &e, ERR_INPUT, "2 to");
    dbl_measured_t two[2] = {x.m[1], x.m[1]};
    two[1].label = "again.log";
    CHECK_ERR(dbl_ladder(two, 2, NULL, 0, 0.10, &l, &e), &e, ERR_INPUT, "again.log",
              "same GPU count");
    two[1] = x.m[2];
    two[1].step_time_s = NAN;
    CHECK_ERR(dbl_ladder(two, 2, NULL, 0, 0.10, &l, &e), &e, ERR_INPUT, "256.log",
              "no measured step time");
    free_ladder(&x);
}

TEST_SUITE(suite_doubling, "doubling", TEST(test_check_run), TEST(test_slow_rung),
           TEST(test_all_match), TEST(test_shared_offset), TEST(test_one_off),
           TEST(test_next_from_plan), TEST(test_not_a_ladder));
