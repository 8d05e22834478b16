/* gpt: the whole model's gradients against finite differences, and the
 * tensor-parallel layout against the full model.
 *
 * For a tiny GPT-style model (LayerNorm, GELU, learned positions, tied
 * embeddings, biases) and a tiny Llama-style one (RMSNorm, SwiGLU, RoPE,
 * grouped-query attention, untied head, QKV and output biases), the mean
 * cross-entropy of a random batch is differentiated by the float backward
 * and by central differences of the double forward, on sampled elements of
 * every tensor. Bar: relative error (norm of the difference / norm of the
 * reference, per tensor) below 1e-4 for float, 1e-6 for the double
 * backward.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "models/model.h"
#include "trainer/gpt.h"

#include "tests/testing.h"

#define SAMPLES 6 /* elements per tensor checked by finite differences */

static void load(const char *name, model_t *m)
{
    err_t err;
    int rc = model_load(fixture(name), m, &err);
    if (rc)
        fprintf(stderr, "\n  %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static double loss64(const gpt_t *g, const double *p, gpt_acts_t *a, const int32_t *in,
                     const int32_t *tg)
{
    double loss = 0;
    err_t err;
    CU_ASSERT_EQUAL(gpt_forward_f64(g, p, a, in, tg, NULL, &loss, &err), 0);
    return loss;
}

static void check_model(const char *config)
{
    model_t m;
    load(config, &m);
    gpt_t g;
    err_t err;
    CU_ASSERT_EQUAL_FATAL(gpt_create(&m, 1, 0, &g, &err), 0);
    int b = 2, t = 7;
    gpt_acts_t a64, a32;
    CU_ASSERT_EQUAL_FATAL(gpt_acts_create(&g, b, t, sizeof(double), &a64, &err), 0);
    CU_ASSERT_EQUAL_FATAL(gpt_acts_create(&g, b, t, sizeof(float), &a32, &err), 0);
    double *p64 = malloc(g.n_params * sizeof *p64), *g64 = calloc(g.n_params, sizeof *g64);
    float *p32 = malloc(g.n_params * sizeof *p32), *g32 = calloc(g.n_params, sizeof *g32);
    gpt_init_f64(&g, 42, p64);
    /* norms and biases away from their constant init, so their gradients
     * are exercised through every path */
    for (size_t i = 0; i < g.n_params; i++) {
        p64[i] += 0.05 * ((double)(rng_mix(3, i) >> 11) / 9007199254740992.0 - 0.5);
        p32[i] = (float)p64[i];
    }
    int32_t in[14], tg[14];
    for (int i = 0; i < b * t; i++) {
        in[i] = (int32_t)(rng_mix(5, (uint64_t)i) % (uint64_t)m.vocab);
        tg[i] = (int32_t)(rng_mix(6, (uint64_t)i) % (uint64_t)m.vocab);
    }
    double l64 = 0, l32 = 0;
    CU_ASSERT_EQUAL(gpt_forward_f64(&g, p64, &a64, in, tg, NULL, &l64, &err), 0);
    CU_ASSERT_EQUAL(gpt_backward_f64(&g, p64, g64, &a64, in, tg, 1.0, NULL, NULL, NULL, &err), 0);
    CU_ASSERT_EQUAL(gpt_forward_f32(&g, p32, &a32, in, tg, NULL, &l32, &err), 0);
    CU_ASSERT_EQUAL(gpt_backward_f32(&g, p32, g32, &a32, in, tg, 1.0, NULL, NULL, NULL, &err), 0);
    /* an untrained model over V classes: loss near ln V */
    CHECK_REL(l64, log((double)m.vocab), 0.05);
    CHECK_REL(l32, l64, 1e-5);
    const double h = 1e-5; /* balances truncation (h^2) and rounding (1e-16/h) */
    for (int k = 0; k < g.n_tensors; k++) {
        const gpt_tensor_t *tt = &g.tensors[k];
        double num32 = 0, num64 = 0, den = 0;
        for (int s = 0; s < SAMPLES; s++) {
            size_t i = tt->offset + (size_t)(rng_mix(9, (uint64_t)(k * 100 + s)) % tt->size);
            double v = p64[i];
            p64[i] = v + h;
            double lp = loss64(&g, p64, &a64, in, tg);
            p64[i] = v - h;
            double lm = loss64(&g, p64, &a64, in, tg);
            p64[i] = v;
            double fd = (lp - lm) / (2 * h);
            num32 += (g32[i] - fd) * (g32[i] - fd);
            num64 += (g64[i] - fd) * (g64[i] - fd);
            den += fd * fd;
        }
        double e32 = sqrt(num32 / (den > 1e-30 ? den : 1e-30));
        double e64 = sqrt(num64 / (den > 1e-30 ? den : 1e-30));
        if (!(e32 < 1e-4) || !(e64 < 1e-6))
            fprintf(stderr, "\n  %s %s: float rel err %.2e, double %.2e (|grad| %.2e)\n", m.name,
                    tt->name, e32, e64, sqrt(den));
        CU_ASSERT(e32 < 1e-4);
        CU_ASSERT(e64 < 1e-6);
    }
    free(p64), free(g64), free(p32), free(g32);
    gpt_acts_free(&a64);
    gpt_acts_free(&a32);
    gpt_free(&g);
}

static void test_gpt_gradients(void) { check_model("configs/tiny-gpt.json"); }
static void test_llama_gradients(void) { check_model("configs/tiny-llama.json"); }

/* A TP rank holds exactly its slice of the single-process weights. */
static void test_tensor_parallel_slices(void)
{
    model_t m;
    load("configs/tiny-llama.json", &m);
    gpt_t full, r1;
    err_t err;
    CU_ASSERT_EQUAL_FATAL(gpt_create(&m, 1, 0, &full, &err), 0);
    CU_ASSERT_EQUAL_FATAL(gpt_create(&m, 2, 1, &r1, &err), 0);
    float *pf = malloc(full.n_params * sizeof *pf), *p1 = malloc(r1.n_params * sizeof *p1);
    gpt_init_f32(&full, 7, pf);
    gpt_init_f32(&r1, 7, p1);
    int hd = m.head_dim, q = m.n_heads * hd, kv = m.n_kv_heads * hd, C = m.hidden;
    /* QKV rows of rank 1: q heads 2-3, k head 1, v head 1 */
    const gpt_tensor_t *tf = gpt_find(&full, "h.1.qkv_w"), *t1 = gpt_find(&r1, "h.1.qkv_w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t1);
    CU_ASSERT_EQUAL(t1->rows, (q + 2 * kv) / 2);
    int local_q = q / 2, local_kv = kv / 2;
    for (int c = 0; c < C; c += 5) {
        CU_ASSERT_EQUAL(p1[t1->offset + (size_t)0 * C + c], pf[tf->offset + (size_t)(q / 2) * C + c]);
        CU_ASSERT_EQUAL(p1[t1->offset + (size_t)local_q * C + c],
                        pf[tf->offset + (size_t)(q + kv / 2) * C + c]);
        CU_ASSERT_EQUAL(p1[t1->offset + (size_t)(local_q + local_kv) * C + c],
                        pf[tf->offset + (size_t)(q + kv + kv / 2) * C + c]);
    }
    /* the row-parallel MLP down projection: columns F/2.. of every row */
    tf = gpt_find(&full, "h.0.proj_w");
    t1 = gpt_find(&r1, "h.0.proj_w");
    CU_ASSERT_EQUAL(t1->cols, m.ffn / 2);
    CU_ASSERT_EQUAL(p1[t1->offset + 3 * (size_t)t1->cols + 2],
                    pf[tf->offset + 3 * (size_t)m.ffn + m.ffn / 2 + 2]);
    /* replicated tensors are equal, and the TP layout is smaller */
    tf = gpt_find(&full, "wte");
    t1 = gpt_find(&r1, "wte");
    CU_ASSERT_EQUAL(memcmp(pf + tf->offset, p1 + t1->offset, tf->size * sizeof *pf), 0);
    CU_ASSERT(r1.n_params < full.n_params);
    /* and the layout refuses what does not split */
    gpt_t bad;
    CHECK_ERR(gpt_create(&m, 4, 0, &bad, &err), &err, ERR_INPUT, "key/value heads");
    free(pf), free(p1);
    gpt_free(&full);
    gpt_free(&r1);
}

/* The layout matches the models module's parameter count. */
static void test_parameter_count(void)
{
    const char *configs[] = {"configs/tiny-gpt.json", "configs/tiny-llama.json"};
    for (int i = 0; i < 2; i++) {
        model_t m;
        load(configs[i], &m);
        gpt_t g;
        err_t err;
        CU_ASSERT_EQUAL_FATAL(gpt_create(&m, 1, 0, &g, &err), 0);
        model_params_t mp;
        model_params(&m, &mp);
        CU_ASSERT_EQUAL((double)g.n_params, mp.total);
        gpt_free(&g);
    }
    /* a sequence longer than the model's positions is refused */
    model_t m;
    load("configs/tiny-gpt.json", &m);
    gpt_t g;
    gpt_acts_t a;
    err_t err;
    CU_ASSERT_EQUAL_FATAL(gpt_create(&m, 1, 0, &g, &err), 0);
    CHECK_ERR(gpt_acts_create(&g, 1, m.max_seq + 1, sizeof(float), &a, &err), &err, ERR_INPUT,
              "longer than");
    gpt_free(&g);
}

TEST_SUITE(suite_gpt, "gpt", TEST(test_gpt_gradients), TEST(test_llama_gradients),
           TEST(test_tensor_parallel_slices), TEST(test_parameter_count));
