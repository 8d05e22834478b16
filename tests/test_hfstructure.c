/* Tests of models/hfconfig's reading by structure and of the 2025-26
 * configs (issue 37 item 1, issue 36 "Models"): every config under
 * tests/fixtures/real/configs read with the library call model_load and
 * checked against the total and active counts its model card publishes
 * (tests/fixtures/real/configs/SOURCES.md), the catalog entries built from
 * them checked the same way, the layer kinds scaleplan cannot price refused
 * naming the key, and --assume-architecture refused where the named reader
 * would drop experts or MLA. */
#include <stdio.h>
#include <string.h>

#include "models/hfconfig.h"
#include "models/model.h"
#include "tests/testing.h"

/* tests/fixtures/real/configs/DIR/config.json into path (cap bytes). */
static const char *real(const char *dir, char *path, size_t cap)
{
    snprintf(path, cap, "%sreal/configs/%s/config.json", fixture(""), dir);
    return path;
}

/* How a publisher counts "active" parameters. */
enum {
    ACT_DENSE = 0,    /* dense: active = total */
    ACT_ALL = 1,      /* embeddings and output head included (Qwen, Llama 4) */
    ACT_NO_INPUT = 2, /* input embedding excluded (DeepSeek, Kimi) */
    ACT_NO_EMB = 3    /* both excluded (GLM, MiniMax) */
};

typedef struct {
    const char *dir;     /* fixture directory */
    const char *catalog; /* the catalog entry built from it, or NULL */
    double pub_total, tol_total;   /* the card's figure and its printed precision */
    double pub_active, tol_active;
    int conv;
    bool with_mtp; /* the published total includes the MTP modules */
} real_row_t;

/* Published figures: tests/fixtures/real/configs/SOURCES.md names each
 * card. The tolerance is 3% of the figure or the card's rounding (half its
 * last printed digit, e.g. "1T" -> 0.05T, "355B" -> 0.5B), whichever is
 * wider. */
static const real_row_t ROWS[] = {
    {"Kimi-K2-Instruct", "kimi-k2", 1e12, 0.03e12, 32e9, 0.96e9, ACT_NO_INPUT, false},
    {"DeepSeek-V3.2-Exp", "deepseek-v3.2", 685e9, 20.55e9, 37e9, 1.11e9, ACT_NO_INPUT, true},
    {"GLM-5", "glm-5", 744e9, 22.32e9, 40e9, 1.2e9, ACT_NO_EMB, false},
    {"GLM-4.5", "glm-4.5", 355e9, 10.65e9, 32e9, 0.96e9, ACT_NO_EMB, false},
    {"GLM-4.5-Air", "glm-4.5-air", 106e9, 3.18e9, 12e9, 0.5e9, ACT_NO_EMB, false},
    {"MiniMax-M2", "minimax-m2", 230e9, 6.9e9, 10e9, 0.5e9, ACT_NO_EMB, false},
    {"Llama-4-Maverick-17B-128E", "llama4-maverick", 400e9, 12e9, 17e9, 0.51e9, ACT_ALL, false},
    {"Qwen3-Coder-480B-A35B-Instruct", NULL, 480e9, 14.4e9, 35e9, 1.05e9, ACT_ALL, false},
    {"Qwen3-0.6B", NULL, 0.6e9, 0.05e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-1.7B", NULL, 1.7e9, 0.051e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-4B", NULL, 4.0e9, 0.12e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-14B", NULL, 14.8e9, 0.444e9, 0, 0, ACT_DENSE, false},
    {"Qwen3-32B", NULL, 32.8e9, 0.984e9, 0, 0, ACT_DENSE, false},
    {"Llama-3.2-1B", NULL, 1.23e9, 0.0369e9, 0, 0, ACT_DENSE, false},
    {"Llama-3.2-3B", NULL, 3.21e9, 0.0963e9, 0, 0, ACT_DENSE, false},
    {"Llama-3.3-70B-Instruct", NULL, 70.6e9, 2.118e9, 0, 0, ACT_DENSE, false},
    {"Mistral-Small-24B-Base-2501", NULL, 24e9, 0.72e9, 0, 0, ACT_DENSE, false},
    {"Mistral-Nemo-Base-2407", NULL, 12e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"Phi-4-mini-instruct", NULL, 3.8e9, 0.114e9, 0, 0, ACT_DENSE, false},
    {"OLMo-2-0325-32B", NULL, 32e9, 0.96e9, 0, 0, ACT_DENSE, false},
    {"SmolLM3-3B", NULL, 3e9, 0.5e9, 0, 0, ACT_DENSE, false},
    {"MiMo-7B-Base", NULL, 7.83e9, 0.235e9, 0, 0, ACT_DENSE, true},
    /* Gemma 3 report: 1,416M embedding + 25,600M non-embedding */
    {"gemma-3-27b-pt", NULL, 27.016e9, 0.81e9, 0, 0, ACT_DENSE, false},
};

/* The published basis of p's active count under convention conv. */
static double active_basis(const model_params_t *p, int conv)
{
    switch (conv) {
    case ACT_NO_INPUT:
        return p->active - p->word_embedding;
    case ACT_NO_EMB:
        return p->active - p->word_embedding - p->output_head;
    default:
        return p->active;
    }
}

static void check_row(const real_row_t *r, const model_t *m, const char *what)
{
    model_params_t p;
    model_params(m, &p);
    char label[160];
    snprintf(label, sizeof label, "%s total", what);
    double total = p.total + (r->with_mtp ? p.mtp : 0);
    check_rel_at(total, r->pub_total, r->tol_total / r->pub_total, label, __FILE__, __LINE__);
    snprintf(label, sizeof label, "%s active", what);
    if (r->conv == ACT_DENSE) {
        CU_ASSERT_FALSE(model_is_moe(m));
        return;
    }
    CU_ASSERT_TRUE(model_is_moe(m));
    check_rel_at(active_basis(&p, r->conv), r->pub_active, r->tol_active / r->pub_active, label,
                 __FILE__, __LINE__);
}

/* Every real config, and the catalog entry made from it, against its card. */
static void test_real_configs(void)
{
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        char path[512];
        model_t m;
        err_t e;
        if (model_load(real(ROWS[i].dir, path, sizeof path), &m, &e)) {
            fprintf(stderr, "%s: %s\n", ROWS[i].dir, e.msg);
            CU_FAIL("real config did not load");
            continue;
        }
        check_row(&ROWS[i], &m, ROWS[i].dir);
        if (!ROWS[i].catalog)
            continue;
        if (model_load(ROWS[i].catalog, &m, &e)) {
            fprintf(stderr, "%s: %s\n", ROWS[i].catalog, e.msg);
            CU_FAIL("catalog entry did not load");
            continue;
        }
        check_row(&ROWS[i], &m, ROWS[i].catalog);
    }
}

/* The catalog's Grok-1 (xai-org/grok-1 run.py/model.py): 314B (README).
 * By hand: tied embedding 131072 x 6144 = 805,306,368; a block: attention
 * 6144 x (6144 + 2 x 1024) + 6144 x 6144 = 88,080,384, router 8 x 6144,
 * 8 gated experts of 3 x 6144 x 32768, two RMSNorms of 6144: 4,919,980,032;
 * 64 blocks + embedding + final norm = 315,684,034,560. A dense reading
 * (the failure issue 36 names) would be about 8x smaller per block. */
static void test_grok1(void)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load("grok-1", &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CU_ASSERT_EQUAL(m.moe.n_experts, 8);
    CU_ASSERT_EQUAL(m.moe.top_k, 2);
    CU_ASSERT_EQUAL(m.moe.n_moe_layers, 64);
    CHECK_REL(p.total, 315684034560.0, 0);
    CHECK_REL(p.total, 314e9, 0.03);
}

/* GLM-4.5-Air counted tensor by tensor (transformers' Glm4Moe modules):
 * embedding and untied head 2 x 151552 x 4096; a block's two RMSNorms
 * 2 x 4096 and attention q 4096 x 12288 + 12288 bias, k and v 4096 x 1024
 * + 1024 bias each, o 12288 x 4096 without bias (attention_bias covers Q, K
 * and V only); block 0 a dense MLP 3 x 4096 x 10944; blocks 1-45 a router
 * 128 x 4096 with its 128 score-correction biases, 128 experts and one
 * shared expert of 3 x 4096 x 1408; final norm 4096. Total
 * 106,852,251,264; active (8 experts) 13,424,129,664. */
static void test_glm45_air_exact(void)
{
    char path[512];
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(real("GLM-4.5-Air", path, sizeof path), &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CHECK_REL(p.total, 106852251264.0, 0);
    CHECK_REL(p.active, 13424129664.0, 0);
}

/* MiniMax-M2 tensor by tensor (MiniMaxM2 modules): embedding and untied
 * head 2 x 200064 x 3072; a block's two RMSNorms, q 3072 x 6144, k and v
 * 3072 x 1024, o 6144 x 3072, QK norms over the whole projections (6144 +
 * 1024: qk_norm_type per_layer), router 256 x 3072 with 256 routing biases
 * and 256 experts of 3 x 3072 x 1536 (intermediate_size is the experts'
 * width); final norm. Total 228,689,764,864; active 11,030,553,088. */
static void test_minimax_m2_exact(void)
{
    char path[512];
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(real("MiniMax-M2", path, sizeof path), &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CHECK_REL(p.total, 228689764864.0, 0);
    CHECK_REL(p.active, 11030553088.0, 0);
}

/* DeepSeek-V3.2's indexer, counted: the same config as DeepSeek-V3
 * (tests/fixtures/hf) plus, a block, wq_b 1536 x 64 x 128 = 12,582,912,
 * wk 7168 x 128 = 917,504, k_norm 2 x 128 and weights_proj 7168 x 64 =
 * 458,752: 13,959,424 x 61 blocks = 851,524,864. */
static void test_indexer_counted(void)
{
    char path[512];
    model_t v32, v3;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(real("DeepSeek-V3.2-Exp", path, sizeof path), &v32, &e), 0);
    snprintf(path, sizeof path, "%shf/DeepSeek-V3/config.json", fixture(""));
    CU_ASSERT_EQUAL_FATAL(model_load(path, &v3, &e), 0);
    model_params_t a, b;
    model_params(&v32, &a);
    model_params(&v3, &b);
    CU_ASSERT_EQUAL(v32.indexer.n_heads, 64);
    CU_ASSERT_EQUAL(v32.indexer.topk, 2048);
    CHECK_REL(a.total - b.total, 851524864.0, 0);
}

/* Parse text and read it; returns the status. */
static int read_text(const char *text, const char *assume, model_t *m, notes_t *n, err_t *e)
{
    cJSON *root = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    model_load_opts_t o = {.assume_architecture = assume};
    int rc = model_from_config_ex(root, "config.json", "x", &o, m, n, e);
    cJSON_Delete(root);
    return rc;
}

/* A model_type scaleplan does not know is read from its keys and said so;
 * the experts' keys and their placement are read in every naming (each
 * expert naming with each placement below). By hand for the config
 * below (hidden 64, 4 heads of 16, 2 kv heads, vocab 100, untied, 4
 * blocks, the first dense of 256, 8 experts of 32 top 2 and 2 shared):
 * attention 64 x 64 + 2 x 64 x 32 + 64 x 64 = 12,288; norms 128; a dense
 * MLP 3 x 64 x 256 = 49,152; an expert 3 x 64 x 32 = 6,144; a MoE block
 * 12,288 + 128 + 8 x 64 + 8 x 6,144 + 2 x 6,144 = 74,368; total 2 x 6,400
 * + 64 + (12,288 + 128 + 49,152) + 3 x 74,368 = 297,536. */
static void test_unknown_type_by_structure(void)
{
    static const char *const namings[] = {
        "\"moe_num_experts\": 8, \"moe_k\": 2, \"moe_num_shared_experts\": 2",
        "\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"n_shared_experts\": 2",
        "\"num_local_experts\": 8, \"top_k\": 2, \"shared_expert_intermediate_size\": 64",
    };
    /* the first dense block placed by each naming of the placement */
    static const char *const placements[] = {
        "\"first_k_dense_replace\": 1",
        "\"mlp_only_layers\": [0]",
        "\"moe_layer_start_index\": 1, \"moe_layer_interval\": 1",
        "\"moe_layers\": [1, 2, 3]",
        "\"mlp_layer_types\": [\"dense\", \"sparse\", \"sparse\", \"sparse\"]",
    };
    for (size_t k = 0; k < 15; k++) {
        size_t i = k % 3, j = k % 5; /* every naming with every placement */
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"model_type\": \"future_moe\", \"hidden_size\": 64, \"num_hidden_layers\": 4, "
                 "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": "
                 "256, \"moe_intermediate_size\": 32, %s, "
                 "\"vocab_size\": 100, \"tie_word_embeddings\": false, %s}",
                 placements[j], namings[i]);
        model_t m;
        err_t e;
        notes_t n;
        notes_init(&n);
        CU_ASSERT_EQUAL_FATAL(read_text(text, NULL, &m, &n, &e), 0);
        CU_ASSERT_TRUE(notes_has(&n, "model_type"));
        CU_ASSERT_STRING_EQUAL(m.arch, "future_moe");
        model_params_t p;
        model_params(&m, &p);
        CHECK_REL(p.total, 297536.0, 0);
        CU_ASSERT_EQUAL(m.moe.n_moe_layers, 3);
        notes_free(&n);
    }
}

/* Kimi K2 under a name scaleplan does not know counts as kimi_k2 does, and
 * what structure cannot read is refused naming the key. */
static void test_structure_matches_named(void)
{
    char path[512];
    model_t named, renamed;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(real("Kimi-K2-Instruct", path, sizeof path), &named, &e), 0);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    static char buf[8192];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *t = strstr(buf, "\"kimi_k2\"");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    memcpy(t, "\"kimi_k9\"", 9);
    CU_ASSERT_EQUAL_FATAL(read_text(buf, NULL, &renamed, NULL, &e), 0);
    model_params_t a, b;
    model_params(&named, &a);
    model_params(&renamed, &b);
    CHECK_REL(b.total, a.total, 0);
    CHECK_REL(b.active, a.active, 0);
    /* and inside a wrapper scaleplan does not know (Kimi K2.5's kimi_k25
     * holds its language model in text_config): the language model, the
     * vision tower said to be left out */
    memcpy(t, "\"kimi_k2\"", 9);
    static char wrapped[9000];
    snprintf(wrapped, sizeof wrapped,
             "{\"model_type\": \"kimi_k25\", \"vision_config\": {}, \"text_config\": %s}", buf);
    notes_t wn;
    notes_init(&wn);
    CU_ASSERT_EQUAL_FATAL(read_text(wrapped, NULL, &renamed, &wn, &e), 0);
    model_params(&renamed, &b);
    CHECK_REL(b.total, a.total, 0);
    CU_ASSERT_STRING_EQUAL(renamed.arch, "kimi_k2");
    CU_ASSERT_TRUE(notes_has(&wn, "vision_config"));
    notes_free(&wn);
    /* a decoder's keys without any model_type: read by structure, said */
    notes_t n;
    notes_init(&n);
    CU_ASSERT_EQUAL(read_text("{\"hidden_size\": 64, \"num_hidden_layers\": 2, "
                              "\"num_attention_heads\": 4, \"intermediate_size\": 128, "
                              "\"vocab_size\": 10}",
                              NULL, &renamed, &n, &e),
                    0);
    CU_ASSERT_TRUE(notes_has(&n, "model_type"));
    notes_free(&n);
    /* what structure cannot read is refused naming the key */
    CHECK_ERR(read_text("{\"model_type\": \"future\", \"hidden_size\": 64}", NULL, &renamed, NULL,
                        &e),
              &e, ERR_INPUT, "num_hidden_layers", "by structure");
    CHECK_ERR(read_text("{\"model_type\": \"future\", \"hidden_size\": 64, \"num_hidden_layers\": "
                        "2, \"num_attention_heads\": 4, \"intermediate_size\": 128, "
                        "\"vocab_size\": 10, \"num_experts\": 4}",
                        NULL, &renamed, NULL, &e),
              &e, ERR_INPUT, "num_experts_per_tok", "num_experts");
}

/* Layers the simulator cannot price, and blocks of a shape reading by
 * structure cannot count (Gemma 4's wider full-attention heads), are
 * refused naming the key, also inside a multimodal wrapper's text_config. */
static void test_unpriced_layers_refused(void)
{
    static const struct {
        const char *dir, *key, *what, *why;
    } rows[] = {
        {"Nemotron-H-8B-Base-8K", "hybrid_override_pattern", "Mamba", "not modelled"},
        {"Qwen3-Next-80B-A3B-Instruct", "full_attention_interval", "linear-attention",
         "not modelled"},
        {"Qwen3.5-35B-A3B", "layer_types", "'linear_attention' layers", "not modelled"},
        {"Gemma-4-31B-it", "global_head_dim", "another head size", "by structure cannot"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char path[512];
        model_t m;
        err_t e;
        CHECK_ERR(model_load(real(rows[i].dir, path, sizeof path), &m, &e), &e, ERR_INPUT,
                  rows[i].key, rows[i].what, rows[i].why);
    }
    model_t m;
    err_t e;
    CHECK_ERR(read_text("{\"model_type\": \"lfm2\", \"hidden_size\": 64, \"layer_types\": "
                        "[\"conv\", \"full_attention\"]}",
                        NULL, &m, NULL, &e),
              &e, ERR_INPUT, "layer_types", "'conv' layers");
    CHECK_ERR(read_text("{\"model_type\": \"nemotron-nas\", \"hidden_size\": 64, \"block_configs\": "
                        "[{\"attention\": {\"no_op\": true}}]}",
                        NULL, &m, NULL, &e),
              &e, ERR_INPUT, "block_configs", "not modelled");
}

/* Bad values in the keys reading by structure uses: one line naming the
 * key (and the entry), never a model. */
static void test_structure_bad_values(void)
{
    static const struct {
        const char *extra, *key, *why;
    } rows[] = {
        {"\"num_experts\": 0, \"top_k\": 1", "num_experts", "between 1"},
        {"\"num_experts\": 4, \"top_k\": 9", "num_experts_per_tok", "routed experts"},
        {"\"num_experts\": 4, \"top_k\": 2, \"mlp_layer_types\": [\"dense\"]",
         "mlp_layer_types", "1 entries for 4 blocks"},
        {"\"num_experts\": 4, \"top_k\": 2, \"moe_layers\": [99]", "moe_layers[0]", "0 to 3"},
        {"\"num_experts\": 4, \"top_k\": 2, \"n_shared_experts\": -1", "n_shared_experts",
         "between 0"},
        {"\"kv_lora_rank\": 16, \"qk_nope_head_dim\": 8, \"qk_rope_head_dim\": 8, "
         "\"v_head_dim\": 16, \"index_n_heads\": 4",
         "index_head_dim", "missing"},
        {"\"hybrid_override_pattern\": 5", "hybrid_override_pattern", "string"},
        {"\"use_qk_norm\": \"yes\"", "use_qk_norm", "true or false"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"model_type\": \"zz\", \"hidden_size\": 64, \"num_hidden_layers\": 4, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 10, "
                 "%s}",
                 rows[i].extra);
        model_t m;
        err_t e;
        CHECK_ERR(read_text(text, NULL, &m, NULL, &e), &e, ERR_INPUT, rows[i].key, rows[i].why);
    }
}

/* --assume-architecture naming a reader that would drop what the config
 * describes is refused with the key and a reading that counts it (Kimi K2
 * read as llama would be 39B, not 1.03T). */
static void test_assume_checked(void)
{
    char path[512];
    model_t m;
    err_t e;
    model_load_opts_t o = {.assume_architecture = "llama"};
    real("Kimi-K2-Instruct", path, sizeof path);
    CHECK_ERR(model_load_ex(path, &o, &m, NULL, &e), &e, ERR_INPUT, "kv_lora_rank",
              "deepseek_v3");
    o.assume_architecture = "deepseek_v3";
    CU_ASSERT_EQUAL(model_load_ex(path, &o, &m, NULL, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CHECK_REL(p.total, 1e12, 0.03);
    o.assume_architecture = "llama";
    CHECK_ERR(model_load_ex(real("MiniMax-M2", path, sizeof path), &o, &m, NULL, &e), &e,
              ERR_INPUT, "num_local_experts", "routed experts", "by structure");
}

TEST_SUITE(suite_hfstructure, "hfstructure", TEST(test_real_configs), TEST(test_grok1), TEST(test_glm45_air_exact),
           TEST(test_minimax_m2_exact),
           TEST(test_indexer_counted), TEST(test_unknown_type_by_structure),
           TEST(test_structure_matches_named),
           TEST(test_unpriced_layers_refused), TEST(test_structure_bad_values),
           TEST(test_assume_checked));
