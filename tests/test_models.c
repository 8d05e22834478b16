/* Tests of models/model and models/flops: parameter counts against the
 * published figures, FLOPs against SC21 equation 3, Hugging Face configs as
 * they are, and every kind of bad config. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

#include "models/flops.h"
#include "models/layout.h"
#include "models/model.h"
#include "tests/testing.h"

static model_t load(const char *name)
{
    model_t m;
    err_t e;
    int rc = model_load(name, &m, &e);
    if (rc)
        fprintf(stderr, "load %s: %s\n", name, e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return m;
}

static double params_of(const char *name)
{
    model_t m = load(name);
    model_params_t p;
    model_params(&m, &p);
    return p.total;
}

/* Published parameter counts: Llama 3 paper / model cards (8.03B, 70.6B,
 * 405.8B... the 405B card lists 405.85B), GPT-3 175B (174.6B, the figure the
 * paper's architecture gives with its 50257-token vocabulary and 2048
 * learned positions), GPT-2 124M (124,439,808, the count of the HF
 * checkpoint), all within 0.5%. */
static void test_published_param_counts(void)
{
    CHECK_REL(params_of("llama3-8b"), 8.03e9, 0.005);
    CHECK_REL(params_of("llama3-70b"), 70.6e9, 0.005);
    CHECK_REL(params_of("llama3-405b"), 405.8e9, 0.005);
    CHECK_REL(params_of("gpt3-175b"), 174.6e9, 0.005);
    CHECK_REL(params_of("gpt2-124m"), 124439808, 1e-9); /* exact */
    CHECK_REL(params_of("gpt2-350m"), 354.8e6, 0.005);  /* HF gpt2-medium: 354,823,168 */
    CHECK_REL(params_of("gpt2-774m"), 774.0e6, 0.005);  /* HF gpt2-large: 774,030,080 */
    CHECK_REL(params_of("gpt2-1.5b"), 1557.6e6, 0.005); /* HF gpt2-xl: 1,557,611,200 */
    CHECK_REL(params_of("llama2-7b"), 6.74e9, 0.005);   /* Llama 2 card: 6.74B */
    CHECK_REL(params_of("llama2-13b"), 13.0e9, 0.005);  /* 13.02B */
    CHECK_REL(params_of("llama2-70b"), 68.98e9, 0.005); /* 68.98B */
    CHECK_REL(params_of("mistral-7b"), 7.24e9, 0.005);  /* Mistral 7B: 7.24B */
    CHECK_REL(params_of("qwen2.5-7b"), 7.61e9, 0.005);  /* Qwen2.5 card: 7.61B */
    CHECK_REL(params_of("qwen2.5-72b"), 72.7e9, 0.005); /* 72.7B */
    /* HF bigscience/bloom: 176,247,271,424 with the embedding LayerNorm
     * (2 x 14336), which the model leaves out; ALiBi has no parameters */
    CHECK_REL(params_of("bloom-176b"), 176247271424.0 - 2 * 14336, 1e-12);
    /* OPT paper Table 1: 175B (96 layers, 12288 wide, 2,048 + 2 positions) */
    CHECK_REL(params_of("opt-175b"), 175.2e9, 0.005);
}

/* SC21 Table 1 (tests/fixtures/validation/throughput.csv T001-T010):
 * params_B as published, and the paper's own formula
 * P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)). The published figures are
 * rounded; "1.7" and "3.6" carry two digits, so the tolerance is the larger
 * of 0.5% and half a unit of the last published digit. The formula must
 * match to within the final LayerNorm (2h), which it leaves out. */
static void test_sc21_param_counts(void)
{
    static const struct {
        const char *name;
        double published, half_unit;
        int l, h;
    } rows[] = {{"sc21-gpt-1.7b", 1.7e9, 0.05e9, 24, 2304},
                {"sc21-gpt-3.6b", 3.6e9, 0.05e9, 30, 3072},
                {"sc21-gpt-7.5b", 7.5e9, 0.05e9, 36, 4096},
                {"sc21-gpt-18b", 18.4e9, 0.05e9, 40, 6144},
                {"sc21-gpt-39b", 39.1e9, 0.05e9, 48, 8192},
                {"sc21-gpt-76b", 76.1e9, 0.05e9, 60, 10240},
                {"sc21-gpt-145b", 145.6e9, 0.05e9, 80, 12288},
                {"sc21-gpt-310b", 310.1e9, 0.05e9, 96, 16384},
                {"sc21-gpt-530b", 529.6e9, 0.05e9, 105, 20480},
                {"sc21-gpt-1t", 1008.0e9, 0.05e9, 128, 25600}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double p = params_of(rows[i].name);
        double tol = fmax(0.005 * rows[i].published, rows[i].half_unit);
        char what[64];
        snprintf(what, sizeof what, "%s params", rows[i].name);
        check_rel_at(p, rows[i].published, tol / rows[i].published, what, __FILE__, __LINE__);
        double l = rows[i].l, h = rows[i].h, V = 51200, s = 2048;
        double formula = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
        check_rel_at(p - 2 * h, formula, 1e-12, what, __FILE__, __LINE__);
    }
}

/* SC21 equation 3: hardware FLOPs per iteration with full recompute are
 * 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), B the global batch. scaleplan's
 * count must equal it exactly. Model FLOPs drop the recomputed forward of
 * the transformer layers, i.e. 3/4 of their share, while the logits layer
 * (never recomputed) keeps its 6BshV:
 * 72 B s l h^2 (1 + s/(6h) + V/(12 l h)). */
static void test_sc21_equation3(void)
{
    static const struct {
        const char *name;
        int batch;
    } rows[] = {{"sc21-gpt-1.7b", 512},  {"sc21-gpt-3.6b", 512}, {"sc21-gpt-7.5b", 512},
                {"sc21-gpt-18b", 1024},  {"sc21-gpt-39b", 1536}, {"sc21-gpt-76b", 1792},
                {"sc21-gpt-145b", 2304}, {"sc21-gpt-310b", 2160}, {"sc21-gpt-530b", 2520},
                {"sc21-gpt-1t", 3072}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        model_t m = load(rows[i].name);
        layout_t l;
        layout_defaults(&l);
        l.global_batch = rows[i].batch;
        l.seq_len = 2048;
        l.recompute = RECOMPUTE_FULL;
        double B = rows[i].batch, s = 2048, L = m.n_layers, h = m.hidden, V = m.vocab;
        double eq3 = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
        CHECK_REL(model_hw_flops_per_step(&m, &l), eq3, 1e-12);
        double model_flops = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
        CHECK_REL(model_flops_per_step(&m, &l), model_flops, 1e-12);
        /* the transformer layers' share is exactly 3/4 */
        double layers_hw = 96 * B * s * L * h * h * (1 + s / (6 * h));
        double logits = 6 * B * s * h * V;
        CHECK_REL(model_flops_per_step(&m, &l) - logits, 0.75 * layers_hw, 1e-12);
    }
}

/* Per-op forward FLOPs for Llama 3 8B at s = 8192, by hand:
 * qkv 2 h (h + 2 kv) = 2*4096*(4096+2048) = 50,331,648 per layer;
 * scores = values = 2 s h = 67,108,864 per layer; out 2h^2 = 33,554,432;
 * mlp_in 2*2 h f = 234,881,024; mlp_out 2 h f = 117,440,512;
 * logits 2 h V = 1,050,673,152. */
static void test_flops_by_op(void)
{
    model_t m = load("llama3-8b");
    model_flops_t f;
    model_flops(&m, 8192, &f);
    CHECK_REL(f.fwd_per_token[FLOP_QKV], 32 * 50331648.0, 1e-12);
    CHECK_REL(f.fwd_per_token[FLOP_ATTN_SCORES], 32 * 67108864.0, 1e-12);
    CHECK_REL(f.fwd_per_token[FLOP_ATTN_VALUES], 32 * 67108864.0, 1e-12);
    CHECK_REL(f.fwd_per_token[FLOP_ATTN_OUT], 32 * 33554432.0, 1e-12);
    CHECK_REL(f.fwd_per_token[FLOP_MLP_IN], 32 * 234881024.0, 1e-12);
    CHECK_REL(f.fwd_per_token[FLOP_MLP_OUT], 32 * 117440512.0, 1e-12);
    CHECK_REL(f.fwd_per_token[FLOP_LOGITS], 1050673152.0, 1e-12);
    CHECK_REL(f.model_per_token, 3 * f.fwd_per_token_total, 1e-12);
    /* Selective recompute repeats exactly the attention core. */
    CHECK_REL(model_recompute_flops_per_token(&m, 8192, RECOMPUTE_SELECTIVE),
              2 * 32 * 67108864.0, 1e-12);
    CU_ASSERT_EQUAL(model_recompute_flops_per_token(&m, 8192, RECOMPUTE_NONE), 0);
}

/* Hugging Face configs as they are: the HF gpt2 config gives GPT-2 124M,
 * the Meta-Llama-3-8B checkout directory gives Llama 3 8B. */
static void test_hf_configs(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(fixture("configs/gpt2-config.json"), &m, &e), 0);
    CU_ASSERT_EQUAL(m.family, MODEL_FAMILY_GPT);
    CU_ASSERT_EQUAL(m.ffn, 3072); /* n_inner null -> 4 x n_embd */
    CU_ASSERT_TRUE(m.tied_embeddings);
    CU_ASSERT_STRING_EQUAL(m.name, "gpt2-config");
    model_params_t p;
    model_params(&m, &p);
    CHECK_REL(p.total, 124439808, 1e-12);
    CU_ASSERT_EQUAL_FATAL(model_load(fixture("configs/Meta-Llama-3-8B"), &m, &e), 0);
    CU_ASSERT_STRING_EQUAL(m.name, "Meta-Llama-3-8B");
    CU_ASSERT_EQUAL(m.family, MODEL_FAMILY_LLAMA);
    CU_ASSERT_EQUAL(m.n_kv_heads, 8);
    CU_ASSERT_EQUAL(m.head_dim, 128);
    CU_ASSERT_FALSE(m.tied_embeddings);
    model_params(&m, &p);
    CHECK_REL(p.total, params_of("llama3-8b"), 1e-12);
    /* Qwen2 configs carry no bias key, but the architecture biases Q, K, V. */
    model_t q = load("qwen2.5-7b");
    CU_ASSERT_TRUE(q.qkv_bias);
}

static void test_catalog_names_and_aliases(void)
{
    static const char *names[] = {"gpt2-124m",   "gpt2-350m",  "gpt2-774m",  "gpt2-1.5b",
                                  "gpt3-175b",   "llama2-7b",  "llama2-13b", "llama2-70b",
                                  "llama3-8b",   "llama3-70b", "llama3-405b", "mistral-7b",
                                  "qwen2.5-7b",  "qwen2.5-72b", "sc21-gpt-1.7b", "sc21-gpt-1t"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        model_t m = load(names[i]);
        CU_ASSERT_STRING_EQUAL(m.name, names[i]);
        CU_ASSERT_TRUE(strlen(m.source) > 10);
    }
    /* aliases and common spellings */
    CU_ASSERT_STRING_EQUAL(load("gpt2").name, "gpt2-124m");
    CU_ASSERT_STRING_EQUAL(load("Llama-3-70B").name, "llama3-70b");
    CU_ASSERT_STRING_EQUAL(load("meta-llama/Meta-Llama-3-70B").name, "llama3-70b");
    CU_ASSERT_STRING_EQUAL(load("LLAMA3_70B").name, "llama3-70b");
}

/* Every bad config: one line, exit code 2 (ERR_INPUT), naming file, field
 * and reason. */
static void test_bad_configs(void)
{
    static const struct {
        const char *file;
        const char *needle1, *needle2;
    } cases[] = {
        {"configs/malformed.json", "malformed JSON at line 6", "malformed.json"},
        {"configs/truncated.json", "truncated", "truncated.json"},
        {"configs/missing-field.json", "num_hidden_layers", "missing"},
        {"configs/negative.json", "num_hidden_layers", "(got -32)"},
        {"configs/zero.json", "hidden_size", "(got 0)"},
        {"configs/nan.json", "hidden_size", "(got NaN)"},
        {"configs/huge.json", "num_hidden_layers", "between 1 and 100000"},
        {"configs/overflow.json", "vocab_size", "whole number"},
        {"configs/wrong-type.json", "hidden_size", "whole number"},
        {"configs/fractional.json", "hidden_size", "whole number"},
        {"configs/heads-not-dividing.json", "num_attention_heads", "must divide hidden_size"},
        {"configs/kv-not-dividing.json", "num_key_value_heads", "must divide"},
        {"hf/bert-base-uncased/config.json", "encoder-only", "bert"},
        {"configs/not-a-model.json", "not a transformer config", "not-a-model.json"},
        {"configs/empty.json", "empty", "empty.json"},
        {"configs/array.json", "must be a JSON object", "array.json"},
        {"configs/trailing.json", "after the document", "trailing.json"},
        {"configs/does-not-exist.json", "no such file", "does-not-exist.json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model_t m;
        err_t e;
        int rc = model_load(fixture(cases[i].file), &m, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, cases[i].needle1, cases[i].needle2);
    }
}

static void test_unknown_name_suggests(void)
{
    model_t m;
    err_t e;
    int rc = model_load("llama3-70", &m, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--model", "unknown model 'llama3-70'",
              "did you mean 'llama3-70b'");
    rc = model_load("qwen2.5-7", &m, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "did you mean 'qwen2.5-7b'");
    rc = model_load("", &m, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--model");
}

/* C(n - a, k) / C(n, k), written out for the tests */
static double miss(int n, int a, int k)
{
    double p = 1;
    for (int i = 0; i < k; i++)
        p *= (double)(n - a - i) / (n - i);
    return p;
}

/* Distinct destinations of a token's experts under balanced routing: the
 * closed forms for uniform and group-limited routing, and a Monte Carlo
 * estimate (200,000 draws, Python's random.sample) for groups nested in
 * destinations. */
static void test_moe_destinations(void)
{
    model_t v3 = load("deepseek-v3"); /* 256 experts, top-8, 8 groups, 4 per token */
    CU_ASSERT_EQUAL(v3.moe.n_groups, 8);
    CU_ASSERT_EQUAL(v3.moe.group_topk, 4);
    /* EP over 8 nodes (a group per node): 4 of 8 nodes drawn, then 8 of
     * their 128 experts */
    CHECK_REL(model_moe_destinations(&v3, 8), 8 * 0.5 * (1 - miss(128, 32, 8)), 1e-12);
    CHECK_REL(model_moe_destinations(&v3, 8), 3.629, 1e-3);
    CHECK_REL(model_moe_destinations(&v3, 64), 64 * 0.5 * (1 - miss(128, 4, 8)), 1e-12);
    /* two groups per node: Monte Carlo 2.928 (4 nodes), 1.924 (2 nodes) */
    CHECK_REL(model_moe_destinations(&v3, 4), 2.928, 0.005);
    CHECK_REL(model_moe_destinations(&v3, 2), 1.924, 0.005);
    CHECK_REL(model_moe_destinations(&v3, 1), 1, 1e-12);
    /* without the group limit: uniform over the 256 experts */
    v3.moe.n_groups = v3.moe.group_topk = 0;
    CHECK_REL(model_moe_destinations(&v3, 8), 8 * (1 - miss(256, 32, 8)), 1e-12);
    /* one expert per destination: every copy goes somewhere else */
    CHECK_REL(model_moe_destinations(&v3, 256), 8, 1e-12);
    /* blocks that do not divide the experts: no sharing assumed */
    CHECK_REL(model_moe_destinations(&v3, 3), 8, 1e-12);
    model_t mx = load("mixtral-8x7b");
    CHECK_REL(model_moe_destinations(&mx, 8), 2, 1e-12);
    CHECK_REL(model_moe_destinations(&mx, 2), 2 * (1 - miss(8, 4, 2)), 1e-12);
    /* groups that cannot hold the top-k are refused */
    model_t bad = load("deepseek-v3");
    bad.moe.group_topk = 0;
    err_t e;
    CHECK_ERR(model_validate(&bad, "deepseek-v3", &e), &e, ERR_INPUT, "n_group");
    bad.moe.n_groups = 7;
    bad.moe.group_topk = 4;
    CHECK_ERR(model_validate(&bad, "deepseek-v3", &e), &e, ERR_INPUT, "n_group",
              "must divide the experts");
}

/* Issue 35 row 7: a model's name comes from its file's name and identifies
 * it (checkpoints compare it): one that does not fit model_t.name is
 * refused naming the file, not cut to a prefix another file may share. */
static void test_model_name_not_cut(void)
{
    char dir[256], path[512];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char *text = slurp("tests/fixtures/configs/tiny-gpt.json");
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char stem[MODEL_NAME_MAX + 8];
    err_t e;
    for (int len = MODEL_NAME_MAX - 1; len <= MODEL_NAME_MAX; len++) {
        memset(stem, 'm', (size_t)len);
        stem[len] = '\0';
        snprintf(path, sizeof path, "%s/%s.json", dir, stem);
        CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, strlen(text), &e), 0);
        model_t m;
        int rc = model_load(path, &m, &e);
        if (len < MODEL_NAME_MAX) {
            CU_ASSERT_EQUAL(rc, 0);
            CU_ASSERT_STRING_EQUAL(m.name, stem);
        } else {
            CHECK_ERR(rc, &e, ERR_INPUT, "longer than 63 characters", "rename the file");
        }
    }
    free(text);
    remove_tree(dir);
}

TEST_SUITE(suite_models, "models", TEST(test_published_param_counts),
           TEST(test_sc21_param_counts), TEST(test_sc21_equation3), TEST(test_flops_by_op),
           TEST(test_hf_configs), TEST(test_catalog_names_and_aliases), TEST(test_bad_configs),
           TEST(test_unknown_name_suggests), TEST(test_moe_destinations),
           TEST(test_model_name_not_cut));
