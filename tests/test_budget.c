/* Tests of sim/budget: the arithmetic by hand, own-cluster break-even, the
 * reality check. */
#include <math.h>
#include <string.h>

#include "run/budget.h"
#include "tests/testing.h"

static budget_input_t input_of(int gpus, double wall_s, double ideal_s, double price)
{
    budget_input_t in;
    memset(&in, 0, sizeof in);
    in.gpus = gpus;
    in.wall_s = wall_s;
    in.ideal_s = ideal_s;
    in.usd_per_gpu_hour = price;
    in.egress_usd_per_tb = -1;
    err_t e;
    CU_ASSERT_EQUAL(price_storage_load(NULL, &in.storage, &e), 0); /* $0.02/GB-month */
    return in;
}

/* 256 GPUs for 10 days (9 of them useful compute) at $2.49/GPU-h, 240
 * checkpoints of 840 GB written, five kept at $0.02/GB-month, 10 TB moved
 * out at $50/TB:
 *   GPU-hours  256 x 240 h                    = 61,440
 *   compute    61,440 x 2.49                  = $152,985.60
 *   storage    the five kept fill up after 5 of 240 checkpoints (t0 = 5 h),
 *              then stay: 840 GB x 5 x (240 - 2.5) h / 730 = 1,366.4 GB-months
 *              x $0.02 = $27.329
 *   transfer   10 x 50                        = $500
 *   overhead   10/9 - 1                       = 11.11%
 *   per day    256 x 24 x 2.49                = $15,298.56 */
static void test_budget_by_hand(void)
{
    budget_input_t in = input_of(256, 10 * 86400.0, 9 * 86400.0, 2.49);
    in.ckpt_bytes = 840e9;
    in.ckpt_keep = 5;
    in.checkpoints = 240;
    in.egress_bytes = 10e12;
    in.egress_usd_per_tb = 50;
    budget_t b;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(budget_compute(&in, &b, &e), 0);
    CHECK_REL(b.gpu_hours, 61440, 1e-12);
    CHECK_REL(b.ideal_gpu_hours, 55296, 1e-12);
    CHECK_REL(b.compute_usd, 152985.6, 1e-12);
    CHECK_REL(b.storage_tb, 4.2, 1e-12);
    CHECK_REL(b.storage_gb_months, 840 * 5 * (240 - 2.5) / 730.0, 1e-12);
    CHECK_REL(b.storage_usd, 27.329, 1e-4);
    CHECK_REL(b.storage_usd_per_month_after, 4200 * 0.02, 1e-12);
    CHECK_REL(b.egress_usd, 500, 1e-12);
    CHECK_REL(b.cost_usd, 152985.6 + b.storage_usd + 500, 1e-12);
    CHECK_REL(b.overhead_fraction, 1.0 / 9, 1e-12);
    CHECK_REL(b.cost_per_day_usd, 15298.56, 1e-12);
    /* cost = GPU-hours (ideal) x price x (1 + simulated overhead) */
    CHECK_REL(b.compute_usd, b.ideal_gpu_hours * 2.49 * (1 + b.overhead_fraction), 1e-12);
}

/* The planning guide's checkpoint example (DESIGN.md): a 70B model with
 * Adam (840 GB) checkpointed hourly for two weeks keeps 336 x 840 GB =
 * 282 TB when all are kept; at $0.02/GB-month that is $5,645 a month once
 * written, and half of it (the volume grows linearly) over the two weeks:
 * 282,240 GB x 336 h / 2 / 730 h x 0.02 = $1,299. */
static void test_guide_checkpoint_storage(void)
{
    budget_input_t in = input_of(256, 14 * 86400.0, 14 * 86400.0, 2.49);
    in.ckpt_bytes = 840e9;
    in.ckpt_keep = 0; /* all */
    in.checkpoints = 336;
    budget_t b;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(budget_compute(&in, &b, &e), 0);
    CHECK_REL(b.storage_tb, 282.24, 1e-12);
    CHECK_REL(b.storage_usd_per_month_after, 282240 * 0.02, 1e-12);
    CHECK_REL(b.storage_usd, 282240 * 336 / 2.0 / 730 * 0.02, 1e-12);
    CHECK_REL(b.storage_usd, 1299.2, 1e-3);
    /* three more months of keeping it */
    in.retain_months = 3;
    CU_ASSERT_EQUAL_FATAL(budget_compute(&in, &b, &e), 0);
    CHECK_REL(b.storage_usd, 1299.24 + 3 * 5644.8, 1e-4);
    /* on S3 the tiers blend: 50 TB at $0.023, 232.24 TB at $0.022 */
    CU_ASSERT_EQUAL_FATAL(price_storage_load("s3-standard", &in.storage, &e), 0);
    in.retain_months = 0;
    in.export_checkpoints = 1; /* the last one out: 0.84 TB at $90/TB */
    CU_ASSERT_EQUAL_FATAL(budget_compute(&in, &b, &e), 0);
    CHECK_REL(b.storage_usd_per_gb_month, (50 * 0.023 + 232.24 * 0.022) / 282.24, 1e-12);
    CHECK_REL(b.egress_usd, 0.84 * 90, 1e-12);
}

static void test_budget_bad_inputs(void)
{
    budget_t b;
    err_t e;
    budget_input_t neg = input_of(256, 86400, 86400, -2.49);
    int rc = budget_compute(&neg, &b, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--price", ">= 0");
    budget_input_t none = input_of(0, 86400, 86400, 2.49);
    rc = budget_compute(&none, &b, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--gpus");
    budget_input_t nan_price = input_of(8, 86400, 86400, NAN);
    rc = budget_compute(&nan_price, &b, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--price", "finite");
}

/* An own cluster of 64 H100s for $2.5M (planning-guide figure): $39,062.50
 * per GPU; running cost 0.956 kW x 1.25 PUE x $0.08 + $26/730 h =
 * $0.13122 per GPU-hour; against $3.99/GPU-h (top of the specialty-cloud
 * range, hardware.csv H079) at full use it pays back after
 * 39,062.5 / (730 x (3.99 - 0.13122)) = 13.9 months, the order of the
 * guides' "about 18 months". */
static void test_own_cluster(void)
{
    own_cluster_t o;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(own_cluster_load("h100-sxm", &o, &e), 0);
    CHECK_REL(o.capex_usd_per_gpu, 39062.5, 1e-12);
    CHECK_REL(own_opex_per_gpu_hour(&o), 0.956 * 1.25 * 0.08 + 26 / 730.0, 1e-12);
    double months = own_breakeven_months(&o, 3.99, 1.0);
    CHECK_REL(months, 39062.5 / (730 * (3.99 - (0.0956 + 26 / 730.0))), 1e-9);
    CHECK_REL(months, 13.9, 0.01);
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

TEST_SUITE(suite_budget, "budget", TEST(test_budget_by_hand), TEST(test_guide_checkpoint_storage),
           TEST(test_budget_bad_inputs),
           TEST(test_own_cluster), TEST(test_required_mfu));
