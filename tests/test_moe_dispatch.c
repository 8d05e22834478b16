/* sim/moe_dispatch: the copies a token dispatcher makes around its
 * exchange, checked as a formula and as priced operations (the test fails
 * when the regrouping by local expert is not priced). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/model.h"
#include "sim/moe_dispatch.h"
#include "sim/scenario.h"
#include "tests/testing.h"

typedef struct {
    scenario_t s;
    step_costs_t c;
} priced_t;

/* model on gpus x gpu under the megatron-core preset, EP ep, one 4,096-token
 * micro-batch per rank, bf16, dispatcher d; priced (the caller frees). */
static int price_moe(priced_t *p, const char *model, const char *gpu, int gpus, int ep,
                     moe_dispatch_t d)
{
    memset(p, 0, sizeof *p);
    scenario_spec_t spec = {0};
    spec.model = model;
    spec.cluster.gpu = gpu;
    spec.cluster.n_gpus = gpus;
    spec.framework = "megatron-core";
    err_t e;
    int rc = scenario_begin(&spec, &p->s, &e);
    if (rc) {
        fprintf(stderr, "begin: %s\n", e.msg);
        return rc;
    }
    layout_t *l = &p->s.layout;
    l->tp = 1;
    l->micro_batch = 1;
    l->global_batch = gpus;
    l->seq_len = 4096;
    l->ep = ep;
    l->etp = 1;
    l->precision = PRECISION_BF16;
    moe_opts_t *m = &p->s.opt.moe;
    m->dispatcher = d;
    m->dispatcher_given = true;
    m->a2a_overlap = m->shared_overlap = false;
    m->grouped_gemm = m->permute_fusion = true;
    m->imbalance = 1;
    rc = scenario_finish(&p->s, NULL, &e);
    if (!rc)
        rc = sim_costs(&p->s.input, &p->c, &e);
    if (rc)
        fprintf(stderr, "price: %s\n", e.msg);
    return rc;
}

static const op_cost_t *find_op(const step_costs_t *c, const char *name)
{
    for (int i = 0; i < c->n_ops; i++)
        if (strcmp(c->ops[i].name, name) == 0)
            return &c->ops[i];
    return NULL;
}

/* The formula: two bytes moved per received byte (read, write) for the
 * all-to-all dispatcher with several ranks and several local experts;
 * nothing for one local expert, one rank, or a dispatcher that writes the
 * received tokens in place (DeepEP) or gathers everything (allgather). */
static void test_local_sort_bytes(void)
{
    CHECK_REL(moe_dispatch_local_sort_bytes(MOE_DISPATCH_ALLTOALL, 8, 1, 16, 1e6), 2e6, 1e-12);
    CHECK_REL(moe_dispatch_local_sort_bytes(MOE_DISPATCH_ALLTOALL, 1, 2, 16, 1e6), 2e6, 1e-12);
    CU_ASSERT_EQUAL(moe_dispatch_local_sort_bytes(MOE_DISPATCH_ALLTOALL, 8, 1, 1, 1e6), 0);
    CU_ASSERT_EQUAL(moe_dispatch_local_sort_bytes(MOE_DISPATCH_ALLTOALL, 1, 1, 16, 1e6), 0);
    CU_ASSERT_EQUAL(moe_dispatch_local_sort_bytes(MOE_DISPATCH_DEEPEP, 8, 1, 16, 1e6), 0);
    CU_ASSERT_EQUAL(moe_dispatch_local_sort_bytes(MOE_DISPATCH_ALLGATHER, 8, 1, 16, 1e6), 0);
    CU_ASSERT_EQUAL(moe_dispatch_local_sort_bytes(MOE_DISPATCH_ALLTOALL, 8, 1, 16, 0), 0);
}

/* Qwen3-30B-A3B (128 experts, top-8, hidden 2,048) at EP8 on one H100
 * node: each rank's 16 experts take 4,096 x 8 copies of 2,048 bf16 values
 * (134 MB); the all-to-all dispatcher regroups them by expert and back, one
 * read and one write each way, forward and backward, at the profile's
 * memory rate. DeepEP prices no such step, and the step is slower by
 * exactly the four copies a layer. */
static void test_local_sort_priced(void)
{
    priced_t a, d;
    CU_ASSERT_EQUAL_FATAL(price_moe(&a, "qwen3-30b-a3b", "h100-sxm", 8, 8, MOE_DISPATCH_ALLTOALL),
                          0);
    CU_ASSERT_EQUAL_FATAL(price_moe(&d, "qwen3-30b-a3b", "h100-sxm", 8, 8, MOE_DISPATCH_DEEPEP), 0);
    double received = 4096.0 * 8 * 2048 * 2; /* tokens x top-k x hidden x bf16 */
    double t = prof_mem_time(&a.s.profile, 2 * received);
    const op_cost_t *s = find_op(&a.c, "sort_chunks"), *u = find_op(&a.c, "unsort_chunks");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    CHECK_REL(s->fwd_s, t, 1e-12);
    CHECK_REL(s->bwd_s, t, 1e-12);
    CHECK_REL(u->fwd_s, t, 1e-12);
    CHECK_REL(u->bwd_s, t, 1e-12);
    CU_ASSERT_PTR_NULL(find_op(&d.c, "sort_chunks"));
    CU_ASSERT_PTR_NULL(find_op(&d.c, "unsort_chunks"));
    /* the experts and the permutes around them cost the same either way */
    CHECK_REL(find_op(&a.c, "experts_in")->fwd_s, find_op(&d.c, "experts_in")->fwd_s, 1e-12);
    CHECK_REL(find_op(&a.c, "permute")->fwd_s, find_op(&d.c, "permute")->fwd_s, 1e-12);
    scenario_free(&a.s);
    scenario_free(&d.s);
}

/* Mixtral 8x7B at EP8: one expert a rank, nothing to regroup. */
static void test_one_local_expert(void)
{
    priced_t a;
    CU_ASSERT_EQUAL_FATAL(price_moe(&a, "mixtral-8x7b", "h100-sxm", 8, 8, MOE_DISPATCH_ALLTOALL),
                          0);
    CU_ASSERT_PTR_NULL(find_op(&a.c, "sort_chunks"));
    scenario_free(&a.s);
}

/* The wire element of a dispatch: fp8 plus a scale per 128 values only
 * where the framework quantizes before DeepEP in a quantized run. Every
 * Megatron preset sends 16 bits (its fused_a2a.py): DeepSeek-V3 fp8 with
 * DeepEP at EP16 over two H100 nodes under Megatron-Bridge 25.11 prices the
 * dispatch as large as the combine, and switching fp8_dispatch on makes
 * the exchange cheaper by the dispatch's (2 - 1.03125) / 2 share. */
static void test_dispatch_element(void)
{
    CHECK_REL(moe_dispatch_elem_bytes(MOE_DISPATCH_DEEPEP, true, true, 2), 1 + 4.0 / 128, 1e-12);
    CU_ASSERT_EQUAL(moe_dispatch_elem_bytes(MOE_DISPATCH_DEEPEP, false, true, 2), 2);
    CU_ASSERT_EQUAL(moe_dispatch_elem_bytes(MOE_DISPATCH_DEEPEP, true, false, 2), 2);
    CU_ASSERT_EQUAL(moe_dispatch_elem_bytes(MOE_DISPATCH_ALLTOALL, true, true, 2), 2);
    static const char *const megatron[] = {"megatron-core", "nemo-25.04", "megatron-bridge-25.09",
                                           "megatron-bridge-25.11", "megatron-bridge-26.04"};
    for (size_t i = 0; i < sizeof megatron / sizeof megatron[0]; i++) {
        scenario_t s;
        memset(&s, 0, sizeof s);
        scenario_spec_t spec = {0};
        spec.model = "deepseek-v3";
        spec.cluster.gpu = "h100-sxm";
        spec.cluster.n_gpus = 64;
        spec.framework = megatron[i];
        err_t e;
        CU_ASSERT_EQUAL_FATAL(scenario_begin(&spec, &s, &e), 0);
        CU_ASSERT_FALSE(s.opt.moe.fp8_dispatch);
        scenario_free(&s);
    }
    priced_t a, b;
    CU_ASSERT_EQUAL_FATAL(price_moe(&a, "deepseek-v2-lite", "h100-sxm", 16, 16, MOE_DISPATCH_DEEPEP),
                          0);
    memset(&b, 0, sizeof b);
    CU_ASSERT_EQUAL_FATAL(price_moe(&b, "deepseek-v2-lite", "h100-sxm", 16, 16, MOE_DISPATCH_DEEPEP),
                          0);
    /* bf16: no quantization, the option changes nothing */
    b.s.opt.moe.fp8_dispatch = true;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(sim_costs(&b.s.input, &b.c, &e), 0);
    CHECK_REL(b.c.ep_comm_layer_s, a.c.ep_comm_layer_s, 1e-12);
    /* fp8: 16-bit dispatch by default, fp8 with the option */
    a.s.layout.precision = b.s.layout.precision = PRECISION_FP8_CS;
    b.s.opt.moe.fp8_dispatch = false;
    CU_ASSERT_EQUAL_FATAL(scenario_finish(&a.s, NULL, &e), 0);
    CU_ASSERT_EQUAL_FATAL(sim_costs(&a.s.input, &a.c, &e), 0);
    double span_bytes16 = a.c.ep_comm_layer_s;
    b.s.opt.moe.fp8_dispatch = true;
    CU_ASSERT_EQUAL_FATAL(scenario_finish(&b.s, NULL, &e), 0);
    CU_ASSERT_EQUAL_FATAL(sim_costs(&b.s.input, &b.c, &e), 0);
    CU_ASSERT_TRUE(b.c.ep_comm_layer_s < 0.9 * span_bytes16);
    CU_ASSERT_TRUE(b.c.ep_comm_layer_s > 0.7 * span_bytes16);
    scenario_free(&a.s);
    scenario_free(&b.s);
}

/* The published flex-dispatcher bandwidths: measured points as given,
 * linear between them, the nearest beyond them (said), none where nothing
 * was measured (NVLink on Hopper, RDMA on Blackwell). */
static void test_flex_table(void)
{
    double d, c;
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs("blackwell", false, 8, 0, &d, &c), MOE_FLEX_MEASURED);
    CHECK_REL(d, 550.10, 1e-12);
    CHECK_REL(c, 538.44, 1e-12);
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs("blackwell", false, 20, 0, &d, &c), MOE_FLEX_MEASURED);
    CHECK_REL(d, (472.84 + 441.89) / 2, 1e-12);
    CHECK_REL(c, (474.48 + 444.40) / 2, 1e-12);
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs("blackwell", false, 64, 0, &d, &c), MOE_FLEX_EXTRAPOLATED);
    CHECK_REL(d, 469.96, 1e-12);
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs("hopper", true, 32, 50, &d, &c), MOE_FLEX_MEASURED);
    CHECK_REL(d, 58, 1e-12);
    CHECK_REL(c, 57, 1e-12);
    /* across nodes the figures scale with the NIC: twice the line rate, twice
     * the bandwidth; inside a domain the NIC is not read */
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs("hopper", true, 32, 100, &d, &c), MOE_FLEX_MEASURED);
    CHECK_REL(d, 116, 1e-12);
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs("blackwell", false, 8, 100, &d, &c), MOE_FLEX_MEASURED);
    CHECK_REL(d, 550.10, 1e-12);
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs("hopper", false, 8, 50, &d, &c), MOE_FLEX_NONE);
    CU_ASSERT_EQUAL(d, 0);
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs("blackwell", true, 16, 50, &d, &c), MOE_FLEX_NONE);
    CU_ASSERT_EQUAL(moe_dispatch_flex_gbs(NULL, false, 8, 0, &d, &c), MOE_FLEX_NONE);
}

/* DeepSeek-V3 at EP32 inside a GB200 NVL72, bf16, DeepEP: each direction
 * moves the token once to each of its destination ranks (7.2 of 32 on
 * average for top-8 of 256 experts), at HybridEP's measured 485.5 GB/s
 * dispatch and 423.19 GB/s combine, not NCCL's all-to-all; the exchange is
 * slower than the NCCL all-to-all the alltoall dispatcher gets, per byte.
 * Beyond the measured EP sizes the collective model stays. */
static void test_flex_priced(void)
{
    priced_t p;
    CU_ASSERT_EQUAL_FATAL(price_moe(&p, "deepseek-v3", "gb200", 64, 32, MOE_DISPATCH_DEEPEP), 0);
    CU_ASSERT_EQUAL(p.c.ep_span.nodes, 1);
    CU_ASSERT_EQUAL(p.c.ep_span.n_ranks, 32);
    double copies = model_moe_destinations(&p.s.model, 32);
    double bytes = 4096.0 * copies * 7168 * 2;
    double comm = bytes / 485.50e9 + bytes / 423.19e9;
    double moe_share = 58.0 / 61; /* DeepSeek-V3: 58 of 61 layers MoE */
    CHECK_REL(p.c.ep_comm_layer_s, 2 * comm * moe_share, 1e-9);
    double nccl = prof_coll_time(&p.s.profile, COLL_ALL_TO_ALL, &p.c.ep_span, bytes);
    CU_ASSERT_TRUE(comm > 2 * nccl);
    scenario_free(&p.s);
    /* EP64 is beyond the measured sizes (36): NCCL's all-to-all stands in */
    priced_t w;
    CU_ASSERT_EQUAL_FATAL(price_moe(&w, "deepseek-v3", "gb200", 64, 64, MOE_DISPATCH_DEEPEP), 0);
    double c64 = model_moe_destinations(&w.s.model, 64);
    double b64 = 4096.0 * c64 * 7168 * 2;
    double n64 = prof_coll_time(&w.s.profile, COLL_ALL_TO_ALL, &w.c.ep_span, b64);
    CHECK_REL(w.c.ep_comm_layer_s, 2 * 2 * n64 * moe_share, 1e-9);
    scenario_free(&w.s);
}

TEST_SUITE(suite_moe_dispatch, "moe_dispatch", TEST(test_local_sort_bytes),
           TEST(test_local_sort_priced), TEST(test_one_local_expert), TEST(test_dispatch_element), TEST(test_flex_table),
           TEST(test_flex_priced));
