/* Tests of the planner (sim/plan, sim/ladder): the ladder's properties
 * hold, and impossible requests get the nearest plan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/ladder.h"
#include "tests/testing.h"

static void ladder_for(const char *model, const char *gpu, double tokens, int lo, int hi,
                       ladder_input_t *in, model_t *m, cluster_t *c, profile_t *p,
                       failure_set_t *f)
{
    err_t e;
    cluster_spec_t spec = {.gpu = gpu, .n_gpus = 8};
    CU_ASSERT_EQUAL_FATAL(model_load(model, m, &e), 0);
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, c, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default(c->gpu.name, p, &e), 0);
    CU_ASSERT_EQUAL_FATAL(failure_load_set(NULL, f, &e), 0);
    memset(in, 0, sizeof *in);
    in->model = m;
    in->base = c;
    in->profile = p;
    in->failures = f;
    in->tokens = tokens;
    in->usd_per_gpu_hour = 2.49;
    plan_space_default(&in->space);
    in->space.seq_len = 4096;
    in->space.global_batch_min = in->space.global_batch_max = 1024;
    in->objective = PLAN_TIME;
    in->min_marginal = 0.5;
    in->min_gpus = lo;
    in->max_gpus = hi;
    CU_ASSERT_EQUAL_FATAL(rel_config_init(&in->rel, c, f, NULL, &e), 0);
    in->rel.trials = 200;
    in->rel.spares = -1;
    in->ckpt_bytes = 12 * 8e9;
}

/* Rung 1 runs at 100% efficiency; cost is GPU-hours x price, i.e. the
 * failure-free GPU-hours x price x (1 + the simulated overhead); where a
 * doubling keeps the layout (only DP grows), GPU-hours do not fall. */
static void test_ladder_properties(void)
{
    ladder_input_t in;
    model_t m;
    cluster_t c;
    profile_t p;
    failure_set_t f;
    ladder_for("llama3-8b", "h100-sxm", 1e12, 8, 1024, &in, &m, &c, &p, &f);
    ladder_t *l = calloc(1, sizeof *l);
    err_t e;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_EQUAL(l->n, 8);
    CU_ASSERT_TRUE_FATAL(l->first_feasible >= 0);
    CHECK_REL(l->rung[l->first_feasible].scaling_efficiency, 1.0, 1e-12);
    for (int i = 0; i < l->n; i++) {
        const rung_t *r = &l->rung[i];
        if (!r->feasible)
            continue;
        double overhead = r->days_p50 / r->ideal_days - 1;
        double ideal_gpu_hours = r->gpus * r->ideal_days * 24;
        CHECK_REL(r->cost_usd, ideal_gpu_hours * 2.49 * (1 + overhead), 1e-9);
        CU_ASSERT_TRUE(r->main_loss != NULL);
        if (i > l->first_feasible) {
            const rung_t *q = &l->rung[i - 1];
            layout_t a = q->layout, b = r->layout;
            a.dp = b.dp = 0;
            a.n_gpus = b.n_gpus = 0;
            a.grad_accum = b.grad_accum = 0;
            if (memcmp(&a, &b, sizeof a) == 0) {
                CU_ASSERT_TRUE(r->gpu_hours >= q->gpu_hours * (1 - 0.005));
                CU_ASSERT_TRUE(r->gpus * r->ideal_days >= q->gpus * q->ideal_days * (1 - 1e-9));
            }
        }
    }
    CU_ASSERT_TRUE(l->best >= 0 && l->meets_constraints);
    char text[4096];
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "Reserve"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "more than 10% slower"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "first look at"));
    prof_free(&p);
    free(l);
}

/* The guide's "70B on 2T tokens, 256 H100s, about 14 days": no plan on 256
 * GPUs meets it, the answer says how far off it is and that the MFU it
 * would need exceeds the peak. A budget below the cheapest plan and a model
 * too big for every rung get the nearest plan and what must change. */
static void test_impossible_requests(void)
{
    ladder_input_t in;
    model_t m;
    cluster_t c;
    profile_t p;
    failure_set_t f;
    ladder_for("llama3-70b", "h100-sxm", 2e12, 256, 256, &in, &m, &c, &p, &f);
    in.space.seq_len = 8192;
    in.space.global_batch_min = in.space.global_batch_max = 512;
    in.deadline_s = 14 * 86400.0;
    ladder_t *l = calloc(1, sizeof *l);
    err_t e;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_FALSE(l->meets_constraints);
    CU_ASSERT_TRUE_FATAL(l->best >= 0);
    CU_ASSERT_TRUE(l->rung[l->best].days_p50 > 14);
    char text[4096];
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "No plan meets the 14.0-day deadline"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "more than the GPUs' peak"));
    /* budget */
    in.deadline_s = 0;
    in.budget_usd = 1000;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_FALSE(l->meets_constraints);
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "No plan meets the $1,000 budget (the cheapest"));
    /* issue 17 row 12: both broken, both named before the nearest plan */
    in.deadline_s = 86400;
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_FALSE(l->meets_constraints);
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_EQUAL(strncmp(text, "No plan meets the 1.0-day deadline (the fastest plan takes ",
                            59), 0);
    const char *budget = strstr(text, "the $1,000 budget (the cheapest plan costs $");
    const char *reserve = strstr(text, "Reserve");
    CU_ASSERT_TRUE(budget && reserve && budget < reserve);
    in.deadline_s = 0;
    prof_free(&p);
    /* too big everywhere */
    ladder_for("llama3-405b", "h100-sxm", 15e12, 8, 16, &in, &m, &c, &p, &f);
    CU_ASSERT_EQUAL_FATAL(plan_ladder(&in, l, &e), 0);
    CU_ASSERT_EQUAL(l->best, -1);
    plan_recommend(&in, l, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "No GPU count from 8 to 16"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "GPUs or more"));
    prof_free(&p);
    free(l);
}

/* The search is exhaustive: the same answer from one thread and from all,
 * and a layout the search lists is never beaten by one it pruned. */
static void test_search_consistent(void)
{
    err_t e;
    model_t m;
    cluster_t c;
    profile_t p;
    cluster_spec_t spec = {.gpu = "h100-sxm", .n_gpus = 64};
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-8b", &m, &e), 0);
    CU_ASSERT_EQUAL_FATAL(cluster_resolve(&spec, &c, &e), 0);
    CU_ASSERT_EQUAL_FATAL(prof_load_default("h100-sxm", &p, &e), 0);
    plan_space_t s;
    plan_space_default(&s);
    s.seq_len = 4096;
    s.global_batch_min = 256;
    s.global_batch_max = 1024; /* a range: the search may use any batch in it */
    plan_search_t a;
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, NULL, &a, &e), 0);
    CU_ASSERT_TRUE_FATAL(a.found);
    CU_ASSERT_TRUE(a.candidates > 100 && a.simulated > 0);
    CU_ASSERT_TRUE(a.layout.global_batch >= 256 && a.layout.global_batch <= 1024);
    CU_ASSERT_TRUE(a.n_ranked >= 2);
    for (int k = 1; k < a.n_ranked; k++)
        CU_ASSERT_TRUE(a.top_step_s[k - 1] / a.top_layout[k - 1].global_batch <=
                       a.top_step_s[k] / a.top_layout[k].global_batch * (1 + 1e-9));
    plan_search_t b;
    layout_t ref = a.top_layout[1];
    CU_ASSERT_EQUAL_FATAL(plan_search(&m, &c, &p, &s, &ref, &b, &e), 0);
    CU_ASSERT_EQUAL(memcmp(&a.layout, &b.layout, sizeof a.layout), 0);
    CU_ASSERT_EQUAL(b.rank_of_reference, 2);
    prof_free(&p);
}

TEST_SUITE(suite_plan, "plan", TEST(test_ladder_properties),
           TEST(test_impossible_requests), TEST(test_search_consistent));
