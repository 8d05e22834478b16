/* Tests of sim/inference_sizing: Sardana et al.'s 13B-to-7B example, the
 * law's compute-optimal point, and that the saving comes from the inference
 * demand alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/inference_sizing.h"
#include "tests/testing.h"

static infsize_law_t law(void)
{
    infsize_law_t l;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(infsize_law_load(NULL, &l, &e), 0);
    return l;
}

/* Sardana, Doubov and Frankle (ICML 2024), Figure 1: a developer planning a
 * 13B model (Chinchilla-optimal) who expects 2 trillion tokens of inference
 * demand saves 1.7e22 FLOPs, 17% of its lifetime compute, by training a 7B
 * model on more data. Under the catalog's Chinchilla law the 13B's
 * compute-optimal data is 619B tokens (checked separately below); the least
 * lifetime compute for its loss is at ~7.1B parameters, 16.3% less and
 * 1.6e22 FLOPs (by hand: Python golden search over the same law). The
 * issue's acceptance: within 3 points of -17%. */
static void test_sardana_13b_to_7b(void)
{
    infsize_law_t l = law();
    double n = 13e9, d = infsize_optimal_tokens(&l, n);
    infsize_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(infsize_optimize(&l, n, d, 2e12, &r, &e), 0);
    CU_ASSERT(fabs(r.saving - 0.17) <= 0.03);
    CU_ASSERT(r.best.params > 6e9 && r.best.params < 8e9);  /* "a 7B model" */
    CU_ASSERT(r.best.train_tokens > d);                      /* trained longer */
    CHECK_REL(r.given.total_flops - r.best.total_flops, 1.7e22, 0.10);
    /* the same loss, within rounding */
    CHECK_REL(infsize_loss(&l, r.best.params, r.best.train_tokens), r.loss, 1e-9);
    /* a 7B model exactly, as the figure names it */
    infsize_point_t p7 = infsize_point(&l, 7e9, r.loss, 2e12);
    CU_ASSERT(fabs((1 - p7.total_flops / r.given.total_flops) - 0.17) <= 0.03);
}

/* The law's compute-optimal tokens for 13B: 619B (alpha A / N^alpha =
 * beta B / D^beta with the catalog's figures; by hand 6.19e11), about 48
 * tokens a parameter; and at that point nothing smaller or larger reaches
 * the same loss with less training compute. */
static void test_optimal_tokens(void)
{
    infsize_law_t l = law();
    double d = infsize_optimal_tokens(&l, 13e9);
    CHECK_REL(d, 6.19e11, 0.01);
    double loss = infsize_loss(&l, 13e9, d);
    double at = 13e9 * d;
    for (double f = 0.8; f <= 1.25; f += 0.05) {
        double n = 13e9 * f;
        CU_ASSERT(n * infsize_tokens_for_loss(&l, n, loss) >= at * (1 - 1e-9));
    }
    /* below the loss floor no amount of data reaches it */
    CU_ASSERT(isinf(infsize_tokens_for_loss(&l, 1e8, loss)));
}

/* Switch the mechanism off: with no inference demand a compute-optimal
 * model is already the least (saving 0); with demand it is not. */
static void test_no_demand_no_saving(void)
{
    infsize_law_t l = law();
    double d = infsize_optimal_tokens(&l, 13e9);
    infsize_result_t r;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(infsize_optimize(&l, 13e9, d, 0, &r, &e), 0);
    CU_ASSERT(r.saving < 1e-6);
    CHECK_REL(r.best.params, 13e9, 0.01);
    CU_ASSERT_EQUAL_FATAL(infsize_optimize(&l, 13e9, d, 1e13, &r, &e), 0);
    CU_ASSERT(r.saving > 0.3); /* heavier demand, smaller model */
    CU_ASSERT(r.best.params < 6e9);
}

static void test_bad_input(void)
{
    infsize_law_t l = law();
    infsize_result_t r;
    err_t e;
    CHECK_ERR(infsize_optimize(&l, 13e9, 1e12, -1, &r, &e), &e, ERR_INPUT, "--inference-tokens");
    CHECK_ERR(infsize_optimize(&l, 0, 1e12, 1, &r, &e), &e, ERR_INPUT, "--tokens");
}

/* End to end: plan prints the lifetime compute and the smaller model. */
static void test_plan_inference_cli(void)
{
    char *out = NULL;
    int rc = run_cli("plan --model llama2-13b --gpu h100-sxm --gpus 64 --tokens 619B "
                     "--inference-tokens 2T --framework megatron-core --trials 20",
                     &out, NULL);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "Inference-aware sizing"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "Sardana"));
    free(out);
    rc = run_cli("plan --model llama2-13b --gpu h100-sxm --gpus 64 --inference-tokens -2T", NULL,
                 NULL);
    CU_ASSERT_EQUAL(rc, 2);
}

TEST_SUITE(suite_inference_sizing, "inference_sizing", TEST(test_sardana_13b_to_7b),
           TEST(test_optimal_tokens), TEST(test_no_demand_no_saving), TEST(test_bad_input),
           TEST(test_plan_inference_cli));
