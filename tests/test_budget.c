/* Tests of sim/budget: the arithmetic by hand, own-cluster break-even, the
 * reality check. */
#include <math.h>

#include "sim/budget.h"
#include "tests/testing.h"

/* 256 GPUs for 10 days (9 of them useful compute) at $2.49/GPU-h, five
 * 840 GB checkpoints kept at $0.02/GB-month, 10 TB moved at $50/TB:
 *   GPU-hours  256 x 240 h                    = 61,440
 *   compute    61,440 x 2.49                  = $152,985.60
 *   storage    5 x 840 GB x 0.02 x 240/730    = $27.6164
 *   transfer   10 x 50                        = $500
 *   overhead   10/9 - 1                       = 11.11%
 *   per day    256 x 24 x 2.49                = $15,298.56 */
static void test_budget_by_hand(void)
{
    budget_input_t in = {256, 10 * 86400.0, 9 * 86400.0, 2.49, 840e9, 5, 0.02, 10e12, 50};
    budget_t b;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(budget_compute(&in, &b, &e), 0);
    CHECK_REL(b.gpu_hours, 61440, 1e-12);
    CHECK_REL(b.ideal_gpu_hours, 55296, 1e-12);
    CHECK_REL(b.compute_usd, 152985.6, 1e-12);
    CHECK_REL(b.storage_usd, 5 * 840 * 0.02 * 240 / 730.0, 1e-12);
    CHECK_REL(b.storage_usd, 27.6164, 1e-5);
    CHECK_REL(b.egress_usd, 500, 1e-12);
    CHECK_REL(b.cost_usd, 152985.6 + 27.6164383561644 + 500, 1e-12);
    CHECK_REL(b.overhead_fraction, 1.0 / 9, 1e-12);
    CHECK_REL(b.cost_per_day_usd, 15298.56, 1e-12);
    /* cost = GPU-hours (ideal) x price x (1 + simulated overhead) */
    CHECK_REL(b.compute_usd, b.ideal_gpu_hours * 2.49 * (1 + b.overhead_fraction), 1e-12);
}

static void test_budget_bad_inputs(void)
{
    budget_t b;
    err_t e;
    budget_input_t neg = {256, 86400, 86400, -2.49, 0, 5, 0.02, 0, 0};
    int rc = budget_compute(&neg, &b, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--price", ">= 0");
    budget_input_t none = {0, 86400, 86400, 2.49, 0, 5, 0.02, 0, 0};
    rc = budget_compute(&none, &b, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--gpus");
    budget_input_t nan_price = {8, 86400, 86400, NAN, 0, 5, 0.02, 0, 0};
    rc = budget_compute(&nan_price, &b, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--price", "finite");
}

/* An own cluster of 64 H100s for $2.5M (planning-guide figure): $39,062.50
 * per GPU; running cost 1.275 kW x 1.3 PUE x $0.10 + $26/730 h =
 * $0.201366 per GPU-hour; against $3.99/GPU-h (top of the specialty-cloud
 * range, hardware.csv H079) at full use it pays back after
 * 39,062.5 / (730 x (3.99 - 0.201366)) = 14.1 months, the order of the
 * guides' "about 18 months". */
static void test_own_cluster(void)
{
    own_cluster_t o;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(own_cluster_load("h100-sxm", &o, &e), 0);
    CHECK_REL(o.capex_usd_per_gpu, 39062.5, 1e-12);
    CHECK_REL(own_opex_per_gpu_hour(&o), 1.275 * 1.3 * 0.10 + 26 / 730.0, 1e-12);
    double months = own_breakeven_months(&o, 3.99, 1.0);
    CHECK_REL(months, 39062.5 / (730 * (3.99 - (0.16575 + 26 / 730.0))), 1e-9);
    CHECK_REL(months, 14.1, 0.01);
    CU_ASSERT_TRUE(isinf(own_breakeven_months(&o, 0.10, 1.0))); /* cloud cheaper than power */
    /* full cost at 80% use: capex over 36 months of 730 h x 0.8 */
    CHECK_REL(own_usd_per_gpu_hour(&o, 0.8), 39062.5 / (36 * 730 * 0.8) + own_opex_per_gpu_hour(&o),
              1e-12);
    int rc = own_cluster_load("l40s", &o, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--capex", "l40s");
}

/* The planning guide's "70B on 2T tokens, 256 H100s, about 14 days":
 * 6 x 70.6e9 x 2e12 FLOPs in 14 days would need
 * 8.47e23 / (256 x 1,209,600 s x 989.4e12) = 276% of the bf16 peak. */
static void test_required_mfu(void)
{
    double flops = 6 * 70.6e9 * 2e12;
    CHECK_REL(budget_required_mfu(flops, 256, 14 * 86400.0, 989.4), 2.766, 0.001);
    CU_ASSERT_TRUE(isinf(budget_required_mfu(flops, 256, 0, 989.4)));
}

TEST_SUITE(suite_budget, "budget", TEST(test_budget_by_hand), TEST(test_budget_bad_inputs),
           TEST(test_own_cluster), TEST(test_required_mfu));
