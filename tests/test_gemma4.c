/* Tests of Gemma 4 (models/hfconfig_gemma4.c and the full-attention
 * blocks of their own shape, model_full_attn_t): the two Hub configs
 * under tests/fixtures/real/configs read to the parameters their modules
 * hold, the attention core priced per block kind, TP limited by the
 * full-attention blocks' key/value heads, and what is not priced (the
 * on-device models' per-layer inputs, Megatron arguments) refused naming
 * the key or flag. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/model.h"
#include "profile/profile.h"
#include "tests/mechanisms.h"
#include "tests/testing.h"

static const char *gemma(const char *dir, char *path, size_t cap)
{
    snprintf(path, cap, "%sreal/configs/%s/config.json", fixture(""), dir);
    return path;
}

/* The parameters transformers' Gemma4ForCausalLM holds for each text
 * config, summed module by module (q/k/v/o at each block's head size and
 * key/value heads, no v_proj where keys are values, q_norm and k_norm over
 * the head, four norms a block, the GeGLU MLP; with experts the router's
 * proj, scale and per_expert_scale, the experts and three more norms;
 * embeddings tied, one final norm). The cards round them to 30.7B and
 * 25.2B (3.8B active). Reading every block at the sliding blocks' shape
 * gives 30,146,837,760 and 25,161,049,600: these exact figures fail without the
 * full-attention blocks' own shape. */
static void test_gemma4_counts(void)
{
    static const struct {
        const char *dir;
        double total, active;
        int full, head_dim, kv_heads;
    } rows[] = {
        {"Gemma-4-31B-it", 30697345280.0, 30697345280.0, 10, 512, 4},
        {"gemma-4-26B-A4B", 25233141760.0, 3822530560.0, 5, 512, 2},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char path[512];
        model_t m;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(model_load(gemma(rows[i].dir, path, sizeof path), &m, &e), 0);
        model_params_t p;
        model_params(&m, &p);
        CU_ASSERT_DOUBLE_EQUAL(p.total, rows[i].total, 0.5);
        CU_ASSERT_DOUBLE_EQUAL(p.active, rows[i].active, 0.5);
        CU_ASSERT_EQUAL(m.n_layers - m.window_layers, rows[i].full);
        CU_ASSERT_EQUAL(m.full_attn.head_dim, rows[i].head_dim);
        CU_ASSERT_EQUAL(m.full_attn.n_kv_heads, rows[i].kv_heads);
        CU_ASSERT_TRUE(m.full_attn.k_eq_v);
        CU_ASSERT_EQUAL(m.window, 1024);
        /* the same blocks at the sliding shape lose the wider heads */
        m.full_attn = (model_full_attn_t){0};
        model_params(&m, &p);
        CU_ASSERT_TRUE(p.total < rows[i].total - 5e7);
    }
}

/* The attention core of the priced layer: the 10 full-attention blocks of
 * Gemma 4 31B at 512-wide heads over every key (causal: half the s x s
 * product), the 50 sliding ones at 256-wide heads over at most 1024 keys,
 * averaged by block count. Without the full blocks' shape every block runs
 * 256-wide heads and the core is cheaper. */
static void test_gemma4_attention_core(void)
{
    char path[512];
    priced_t g, flat;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&g, gemma("Gemma-4-31B-it", path, sizeof path), "h100-sxm",
                                     8, "megatron-core"),
                          0);
    mech_set_batch(&g.s.layout, 1, 1, 8, 8192);
    CU_ASSERT_EQUAL_FATAL(mech_price(&g), 0);
    CU_ASSERT_EQUAL_FATAL(mech_begin(&flat, path, "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&flat.s.layout, 1, 1, 8, 8192);
    flat.s.model.full_attn = (model_full_attn_t){0};
    CU_ASSERT_EQUAL_FATAL(mech_price(&flat), 0);
    const model_t *m = &g.s.model;
    double s = 8192, w = 1024, nh = m->n_heads, share = (double)m->window_layers / m->n_layers;
    prof_attn_call_t full = {g.s.opt.attn_kernel, true, s, 512};
    prof_attn_call_t slide = {g.s.opt.attn_kernel, true, w, 256};
    double full_f = prof_attn_time(&g.s.profile, DTYPE_BF16, &full, 4 * s * s * nh * 512 * 0.5,
                                   false);
    double slide_f = prof_attn_time(&g.s.profile, DTYPE_BF16, &slide,
                                    4 * s * (w - w * w / (2 * s)) * nh * 256, false);
    CHECK_REL(mech_op_fwd(&g.c, "attention"), (1 - share) * full_f + share * slide_f, 1e-12);
    CU_ASSERT_TRUE(mech_op_fwd(&g.c, "attention") > 1.3 * mech_op_fwd(&flat.c, "attention"));
    /* the Q/K projections at the blocks' mean width: wider than the
     * sliding blocks' alone */
    CU_ASSERT_TRUE(mech_op_fwd(&g.c, "qkv") > mech_op_fwd(&flat.c, "qkv"));
    scenario_free(&g.s), scenario_free(&flat.s);
}

/* TP splits whole query groups of every block: Gemma 4 31B's 4 global
 * key/value heads allow TP 4, not TP 8 (its 16 sliding ones would). */
static void test_gemma4_tp_limit(void)
{
    char args[768], *err = NULL;
    snprintf(args, sizeof args, "sim --model %sreal/configs/Gemma-4-31B-it/config.json --gpu "
             "h100-sxm --gpus 64 --tp 8 --allow-oom", fixture(""));
    cmd_expect(args, 2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "full-attention blocks' 32 query and 4 key/value heads"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--tp"));
    free(err);
    snprintf(args, sizeof args, "sim --model %sreal/configs/Gemma-4-31B-it/config.json --gpu "
             "h100-sxm --gpus 64 --tp 4 --allow-oom", fixture(""));
    cmd_expect(args, 0, NULL, NULL);
}

/* Bad Gemma 4 configs are refused in one line naming the key (a layer
 * list of another length, global key/value heads that do not divide the
 * query heads, every block sharing another's keys and values, a negative
 * per-layer input width), and Megatron-LM arguments, which give every
 * block one head size, are refused naming the flag. */
static void test_gemma4_refusals(void)
{
    static const char *base = "{\"model_type\": \"gemma4_text\", \"hidden_size\": 256, "
                              "\"num_hidden_layers\": 6, \"num_attention_heads\": 4, "
                              "\"num_key_value_heads\": 2, \"head_dim\": 64, "
                              "\"intermediate_size\": 512, \"vocab_size\": 1000";
    static const struct {
        const char *extra, *key;
    } rows[] = {
        {", \"hidden_size_per_layer_input\": -1", "hidden_size_per_layer_input"},
        {", \"hidden_size_per_layer_input\": 0, \"num_kv_shared_layers\": 6",
         "num_kv_shared_layers"},
        {", \"hidden_size_per_layer_input\": 0, \"layer_types\": [\"sliding_attention\"]",
         "layer_types"},
        {", \"hidden_size_per_layer_input\": 0, \"attention_k_eq_v\": true, "
         "\"num_global_key_value_heads\": 3",
         "num_global_key_value_heads"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[1024], path[64];
        snprintf(text, sizeof text, "%s%s}", base, rows[i].extra);
        CU_ASSERT_EQUAL_FATAL(write_temp_text(text, path, sizeof path), 0);
        model_t m;
        err_t e;
        CU_ASSERT_EQUAL(model_load(path, &m, &e), ERR_INPUT);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, rows[i].key));
        remove(path);
    }
    char args[768], *err = NULL;
    snprintf(args, sizeof args, "plan --model %sreal/configs/Gemma-4-31B-it/config.json --gpu "
             "h100-sxm --gpus 64 --framework megatron-core --emit megatron", fixture(""));
    cmd_expect(args, 2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--emit"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "head size"));
    free(err);
}

/* Gemma 4 E2B (tests/fixtures/hf/gemma-4-E2B-it): per-layer inputs (a
 * 262144 x 35 x 256 table, a 1536 -> 35 x 256 projection and its norm, a
 * gate, projection and norm in every block) and the last 20 blocks reusing
 * earlier keys and values (no k/v projections or key norm) with MLPs twice
 * 6144 wide. The module sum is 4,628,569,344; scaleplan prices the MLPs at
 * their mean, 9655 (said), which adds 35 x 3 x 1536 x (9655 - 9654.857) =
 * 23,040. The card's 2.3B effective is the total less the table
 * (2,279,782,144). Without the KV sharing or the per-layer inputs the
 * count is another. */
static void test_gemma4_e2b(void)
{
    char path[512];
    snprintf(path, sizeof path, "%shf/gemma-4-E2B-it/config.json", fixture(""));
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(path, &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CU_ASSERT_DOUBLE_EQUAL(p.total, 4628569344.0 + 23040.0, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(p.per_layer_inputs, 262144.0 * 35 * 256, 0.5);
    CHECK_REL(p.total - p.per_layer_inputs, 2.3e9, 0.03);
    CU_ASSERT_EQUAL(m.kv_shared_layers, 20);
    CU_ASSERT_EQUAL(m.kv_shared_full, 4);
    CU_ASSERT_EQUAL(m.ffn, 9655);
    model_t off = m;
    off.kv_shared_layers = off.kv_shared_full = 0;
    model_params(&off, &p);
    /* 16 sliding and 4 full shared blocks regain k and v (1 head) and a
     * key norm */
    CU_ASSERT_DOUBLE_EQUAL(p.total - (4628569344.0 + 23040.0),
                           16 * (2.0 * 1536 * 256 + 256) + 4 * (2.0 * 1536 * 512 + 512), 0.5);
    off = m;
    off.ple = (model_ple_t){0};
    model_params(&off, &p);
    CU_ASSERT_DOUBLE_EQUAL(4628569344.0 + 23040.0 - p.total,
                           262144.0 * 35 * 256 + 1536.0 * 35 * 256 + 256 +
                               35 * (2.0 * 1536 * 256 + 1536),
                           0.5);
    /* the step prices the per-layer input GEMMs */
    priced_t s;
    CU_ASSERT_EQUAL_FATAL(mech_begin(&s, path, "h100-sxm", 8, "megatron-core"), 0);
    mech_set_batch(&s.s.layout, 1, 1, 8, 4096);
    CU_ASSERT_EQUAL_FATAL(mech_price(&s), 0);
    CU_ASSERT_TRUE(mech_op_fwd(&s.c, "per_layer_input") > 0);
    scenario_free(&s.s);
}

TEST_SUITE(suite_gemma4, "gemma4", TEST(test_gemma4_counts), TEST(test_gemma4_attention_core),
           TEST(test_gemma4_tp_limit), TEST(test_gemma4_refusals), TEST(test_gemma4_e2b));
