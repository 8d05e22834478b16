/* Per-layer operations of the fine-grained MoE models' attention side that
 * the dense Llama-style layer lacks, checked as priced operations (the test
 * fails when the operation is not priced). */
#include <stdio.h>
#include <string.h>

#include "sim/scenario.h"
#include "tests/testing.h"

typedef struct {
    scenario_t s;
    step_costs_t c;
} priced_t;

/* model on 8 x gpu, TP tp, one 4,096-token micro-batch per rank, bf16,
 * megatron-core; priced (the caller frees). */
static int price_model(priced_t *p, const char *model, const char *gpu, int tp, int ep)
{
    memset(p, 0, sizeof *p);
    scenario_spec_t spec = {0};
    spec.model = model;
    spec.cluster.gpu = gpu;
    spec.cluster.n_gpus = 8;
    spec.framework = "megatron-core";
    err_t e;
    int rc = scenario_begin(&spec, &p->s, &e);
    if (rc) {
        fprintf(stderr, "begin: %s\n", e.msg);
        return rc;
    }
    layout_t *l = &p->s.layout;
    l->tp = tp;
    l->sequence_parallel = tp > 1;
    l->micro_batch = 1;
    l->global_batch = 8 / tp;
    l->seq_len = 4096;
    l->ep = ep;
    l->precision = PRECISION_BF16;
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

/* Qwen3-30B-A3B's QK norm: RMSNorms over its 32 query and 4 key heads of
 * 128 (Q 4,096 and K 512 wide) for every token of the micro-batch, split
 * over TP: read and write forward (2 bf16 bytes an element each), read
 * input and gradient and write the gradient backward, at the profile's
 * memory rate. Llama 3 8B has none. */
static void test_qk_norm(void)
{
    priced_t q, q2, ll;
    CU_ASSERT_EQUAL_FATAL(price_model(&q, "qwen3-30b-a3b", "h100-sxm", 1, 8), 0);
    CU_ASSERT_EQUAL_FATAL(price_model(&q2, "qwen3-30b-a3b", "h100-sxm", 2, 4), 0);
    CU_ASSERT_EQUAL_FATAL(price_model(&ll, "llama3-8b", "h100-sxm", 1, 1), 0);
    CU_ASSERT_EQUAL(q.s.model.qk_norm, MODEL_QK_NORM_HEAD);
    double el = 4096.0 * (4096 + 512);
    const op_cost_t *n = find_op(&q.c, "qk_norm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    double eager = q.s.opt.eager_norm;
    CHECK_REL(n->fwd_s, prof_mem_time(&q.s.profile, 2 * el * 2 * eager), 1e-12);
    CHECK_REL(n->bwd_s, prof_mem_time(&q.s.profile, 3 * el * 2 * eager), 1e-12);
    const op_cost_t *n2 = find_op(&q2.c, "qk_norm");
    CU_ASSERT_PTR_NOT_NULL_FATAL(n2);
    CHECK_REL(n2->fwd_s, prof_mem_time(&q2.s.profile, 2 * el / 2 * 2 * eager), 1e-12);
    CU_ASSERT_PTR_NULL(find_op(&ll.c, "qk_norm"));
    scenario_free(&q.s);
    scenario_free(&q2.s);
    scenario_free(&ll.s);
}

TEST_SUITE(suite_moe_layers, "moe_layers", TEST(test_qk_norm));
