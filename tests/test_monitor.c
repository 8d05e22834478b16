/* monitor and optim: the alerts planning guides define, the learning-rate
 * schedule, clipping and one AdamW step worked by hand. */
#include <math.h>
#include <string.h>

#include "trainer/monitor.h"
#include "trainer/optim.h"

#include "tests/testing.h"

static void test_alerts(void)
{
    monitor_t m;
    mon_init(&m, 1000);
    /* a quiet start: loss 3, healthy norms, fast enough */
    for (long s = 0; s < 8; s++)
        CU_ASSERT_EQUAL(mon_step(&m, s, 3.0, 1.0, 900, 1.0), 0);
    /* over 2x the moving average */
    CU_ASSERT_EQUAL(mon_step(&m, 8, 6.5, 1.0, 900, 1.0), 1);
    CU_ASSERT_TRUE(mon_raised(&m, 8, "loss_spike"));
    /* 1.9x is not a spike */
    mon_init(&m, 0);
    for (long s = 0; s < 8; s++)
        mon_step(&m, s, 3.0, 1.0, 1, 1.0);
    CU_ASSERT_EQUAL(mon_step(&m, 8, 5.7, 1.0, 1, 1.0), 0);
    /* gradient norms outside [0.001, 100]; NaN */
    CU_ASSERT_EQUAL(mon_step(&m, 9, 3.0, 150, 1, 1.0), 1);
    CU_ASSERT_TRUE(mon_raised(&m, 9, "grad_norm_high"));
    CU_ASSERT_EQUAL(mon_step(&m, 10, 3.0, 1e-4, 1, 1.0), 1);
    CU_ASSERT_TRUE(mon_raised(&m, 10, "grad_norm_low"));
    CU_ASSERT_EQUAL(mon_step(&m, 11, NAN, 1.0, 1, 1.0), 1);
    CU_ASSERT_TRUE(mon_raised(&m, 11, "nan_inf"));
    CU_ASSERT_EQUAL(mon_step(&m, 12, 3.0, INFINITY, 1, 1.0), 1);
    /* throughput under 80% of the prediction (and not at 85%) */
    mon_init(&m, 1000);
    CU_ASSERT_EQUAL(mon_step(&m, 0, 3.0, 1.0, 850, 1.0), 0);
    CU_ASSERT_EQUAL(mon_step(&m, 1, 3.0, 1.0, 790, 1.0), 1);
    CU_ASSERT_TRUE(mon_raised(&m, 1, "throughput_low"));
    /* a checkpoint taking 6% of the time since the last: over 5% */
    mon_init(&m, 0);
    for (long s = 0; s < 10; s++)
        mon_step(&m, s, 3.0, 1.0, 1, 1.0);
    CU_ASSERT_EQUAL(mon_checkpoint(&m, 9, 0.6), 1);
    CU_ASSERT_TRUE(mon_raised(&m, 9, "checkpoint_io"));
    for (long s = 10; s < 20; s++)
        mon_step(&m, s, 3.0, 1.0, 1, 1.0);
    CU_ASSERT_EQUAL(mon_checkpoint(&m, 19, 0.4), 0);
}

static void test_schedule_and_clipping(void)
{
    optim_config_t c;
    optim_defaults(&c);
    c.lr = 1e-3;
    c.min_lr = 1e-4;
    c.warmup_steps = 10;
    c.total_steps = 110;
    CHECK_REL(optim_lr(&c, 0), 1e-4, 1e-12);    /* 1/10 of the way up */
    CHECK_REL(optim_lr(&c, 9), 1e-3, 1e-12);    /* warmed up */
    CHECK_REL(optim_lr(&c, 60), 5.5e-4, 1e-12); /* half-way down the cosine */
    CHECK_REL(optim_lr(&c, 110), 1e-4, 1e-12);
    CHECK_REL(optim_lr(&c, 500), 1e-4, 1e-12);  /* stays at the floor */
    c.grad_clip = 1.0;
    CHECK_REL(optim_clip_factor(&c, 0.5), 1.0, 0);
    CHECK_REL(optim_clip_factor(&c, 4.0), 0.25, 1e-6);
    c.grad_clip = 0;
    CHECK_REL(optim_clip_factor(&c, 4.0), 1.0, 0);
}

/* AdamW by hand, first update: m = 0.1 g, v = 0.05 g^2 (betas 0.9/0.95),
 * corrected mhat = g, vhat = g^2, so p -= lr (sign(g) + wd p) when g >> eps. */
static void test_adamw_first_step(void)
{
    optim_config_t c;
    optim_defaults(&c);
    float p[2] = {1.0f, 1.0f}, g[2] = {0.5f, -2.0f}, m[2] = {0}, v[2] = {0};
    unsigned char decay[2] = {1, 0};
    optim_adamw(&c, p, g, m, v, decay, 2, 1, 0.01, 1.0);
    CHECK_REL(p[0], 1.0 - 0.01 * (1.0 + 0.1 * 1.0), 1e-6);
    CHECK_REL(p[1], 1.0 + 0.01, 1e-6);
    CHECK_REL(m[0], 0.05, 1e-6);
    CHECK_REL(v[1], 0.05 * 4.0, 1e-5);
    /* a gradient scale of 0.5 (clipping) halves what enters the moments */
    float q[1] = {0}, h[1] = {2.0f}, mm[1] = {0}, vv[1] = {0};
    optim_adamw(&c, q, h, mm, vv, NULL, 1, 1, 0.01, 0.5);
    CHECK_REL(mm[0], 0.1, 1e-6);
}

TEST_SUITE(suite_monitor, "monitor", TEST(test_alerts), TEST(test_schedule_and_clipping),
           TEST(test_adamw_first_step));
