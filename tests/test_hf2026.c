/* Tests of the 2026 config features read from the frameworks' own code:
 * Laguna's query heads per block and per-head output gate (transformers
 * LagunaConfig / LagunaAttention), GLM-5.2's shared sparse-attention
 * indexers (indexer_types), moe_layer_freq as a list of one flag a block
 * (MiniMax-M3, MiMo-V2-Flash), the deepseek_sparse_attention layer type,
 * MLA heads that do not divide hidden_size (Kimi-K3), and the per-kind
 * shapes reading by structure cannot count refused naming the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/model.h"
#include "tests/testing.h"

/* A config text in a temporary file, loaded; the file removed. */
static int load_text(const char *text, model_t *m, err_t *e)
{
    char path[64];
    CU_ASSERT_EQUAL_FATAL(write_temp_text(text, path, sizeof path), 0);
    int rc = model_load(path, m, e);
    remove(path);
    return rc;
}

/* Laguna XS.2 as transformers builds it: 40 blocks of 2048, the full-
 * attention ones (every fourth) with 48 query heads and the sliding ones
 * with 64, each with 8 key/value heads of 128, q/k norms over the head, a
 * g_proj of one gate a head, the first block dense (8192), the others 256
 * experts of 512 (top 8) with a 512-wide shared expert and a router with
 * its score-correction bias; untied 100352-token embeddings. Summed module
 * by module: 33,442,617,088 parameters, 3,017,135,872 active (the release:
 * 33B, 3B). Without the per-block heads (48 everywhere) or the gate the sum
 * is another. */
static void test_laguna_counts(void)
{
    char path[512];
    snprintf(path, sizeof path, "%sreal/configs/Laguna-XS.2-FP8/config.json", fixture(""));
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(path, &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CU_ASSERT_DOUBLE_EQUAL(p.total, 33442617088.0, 0.5);
    CU_ASSERT_DOUBLE_EQUAL(p.active, 3017135872.0, 0.5);
    CU_ASSERT_EQUAL(m.n_heads, 64);
    CU_ASSERT_EQUAL(m.full_attn.n_heads, 48);
    CU_ASSERT_EQUAL(m.n_layers - m.window_layers, 10);
    CU_ASSERT_TRUE(m.attn_head_gate);
    model_t flat = m;
    flat.n_heads = 48;
    flat.full_attn = (model_full_attn_t){0};
    model_params(&flat, &p);
    /* 30 sliding blocks lose 16 heads' q, o and gate: 30 x 16 x (2 x 2048 x
     * 128 + 2048) */
    CU_ASSERT_DOUBLE_EQUAL(p.total, 33442617088.0 - 30.0 * 16 * (2 * 2048 * 128 + 2048), 0.5);
    flat = m;
    flat.attn_head_gate = false;
    model_params(&flat, &p);
    CU_ASSERT_DOUBLE_EQUAL(p.total, 33442617088.0 - 40.0 * 2048 * (10 * 48 + 30 * 64) / 40, 0.5);
}

/* TP splits every block's heads: Laguna XS.2's 48 and 64 query heads and 8
 * key/value heads allow TP 8, and 16 is refused naming the flag. */
static void test_laguna_tp(void)
{
    char args[768], *err = NULL;
    snprintf(args, sizeof args, "sim --model %sreal/configs/Laguna-XS.2-FP8/config.json --gpu "
             "h100-sxm --gpus 64 --tp 16 --allow-oom", fixture(""));
    cmd_expect(args, 2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--tp"));
    free(err);
    snprintf(args, sizeof args, "sim --model %sreal/configs/Laguna-XS.2-FP8/config.json --gpu "
             "h100-sxm --gpus 64 --tp 8 --ep 8 --allow-oom", fixture(""));
    cmd_expect(args, 0, NULL, NULL);
}

/* An MLA model with three blocks, two of them MoE: the base for the
 * indexer and placement cases (24 heads of 64 + 32 do not divide 1000). */
#define MLA_BASE                                                                                  \
    "\"model_type\": \"future_dsa\", \"hidden_size\": 1000, \"num_hidden_layers\": 4, "           \
    "\"num_attention_heads\": 24, \"intermediate_size\": 2048, \"vocab_size\": 1000, "            \
    "\"kv_lora_rank\": 128, \"q_lora_rank\": 256, \"qk_nope_head_dim\": 64, "                     \
    "\"qk_rope_head_dim\": 32, \"v_head_dim\": 64, \"n_routed_experts\": 8, "                     \
    "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 128, \"index_n_heads\": 4, "         \
    "\"index_head_dim\": 32, \"index_topk\": 64"

/* GLM-5.2's indexer_types: a "shared" block reuses the last full block's
 * selection and holds no indexer weights (q_b 256 x 4 x 32, wk 1000 x 32,
 * its LayerNorm 2 x 32, weights_proj 1000 x 4 = 40,896 a block). Of four
 * blocks, one shared: one indexer fewer. An entry of another kind is
 * refused naming the key. */
static void test_shared_indexers(void)
{
    model_t all, shared;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(load_text("{" MLA_BASE "}", &all, &e), 0);
    CU_ASSERT_EQUAL_FATAL(load_text("{" MLA_BASE ", \"indexer_types\": [\"full\", \"full\", "
                                    "\"shared\", \"full\"], \"layer_types\": "
                                    "[\"deepseek_sparse_attention\", \"deepseek_sparse_attention\", "
                                    "\"deepseek_sparse_attention\", \"deepseek_sparse_attention\"]}",
                                    &shared, &e),
                          0);
    CU_ASSERT_EQUAL(all.head_dim, 96);
    CU_ASSERT_EQUAL(shared.indexer.own_layers, 3);
    model_params_t a, s;
    model_params(&all, &a);
    model_params(&shared, &s);
    CU_ASSERT_DOUBLE_EQUAL(a.total - s.total, 256.0 * 4 * 32 + 1000.0 * 32 + 64 + 1000.0 * 4, 0.5);
    CU_ASSERT_EQUAL(load_text("{" MLA_BASE ", \"indexer_types\": [\"full\", \"half\", \"full\", "
                              "\"full\"]}",
                              &shared, &e),
                    ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "indexer_types"));
}

/* moe_layer_freq as a list (one 0 or 1 a block) places the experts as
 * given; a list of another length or an entry not 0/1 is refused naming
 * the key. */
static void test_moe_freq_list(void)
{
    static const char *base =
        "{\"model_type\": \"future_moe\", \"hidden_size\": 256, \"num_hidden_layers\": 4, "
        "\"num_attention_heads\": 4, \"intermediate_size\": 512, \"vocab_size\": 1000, "
        "\"num_experts\": 8, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 64, "
        "\"moe_layer_freq\": %s}";
    char text[768];
    model_t m;
    err_t e;
    snprintf(text, sizeof text, base, "[0, 1, 0, 1]");
    CU_ASSERT_EQUAL_FATAL(load_text(text, &m, &e), 0);
    CU_ASSERT_EQUAL(m.moe.n_moe_layers, 2);
    CU_ASSERT_FALSE(model_moe_layer(&m, 0));
    CU_ASSERT_TRUE(model_moe_layer(&m, 1));
    snprintf(text, sizeof text, base, "[0, 1, 1]");
    CU_ASSERT_EQUAL(load_text(text, &m, &e), ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "moe_layer_freq"));
    snprintf(text, sizeof text, base, "[0, 1, 2, 1]");
    CU_ASSERT_EQUAL(load_text(text, &m, &e), ERR_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "entry 2"));
}

/* Shapes reading by structure cannot count are refused naming the key:
 * values of another head size than the keys outside MLA, and
 * num_attention_heads_per_layer that varies within one kind of block. */
static void test_structure_refusals(void)
{
    static const char *base =
        "{\"model_type\": \"future\", \"hidden_size\": 256, \"num_hidden_layers\": 4, "
        "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64, "
        "\"intermediate_size\": 512, \"vocab_size\": 1000%s}";
    static const struct {
        const char *extra, *key;
    } rows[] = {
        {", \"v_head_dim\": 32", "v_head_dim"},
        {", \"num_attention_heads_per_layer\": [4, 8, 4, 4]", "num_attention_heads_per_layer"},
        {", \"swa_num_key_value_heads\": 4", "swa_num_key_value_heads"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[768];
        snprintf(text, sizeof text, base, rows[i].extra);
        model_t m;
        err_t e;
        CU_ASSERT_EQUAL(load_text(text, &m, &e), ERR_INPUT);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, rows[i].key));
    }
}

TEST_SUITE(suite_hf2026, "hf2026", TEST(test_laguna_counts), TEST(test_laguna_tp),
           TEST(test_shared_indexers), TEST(test_moe_freq_list), TEST(test_structure_refusals));
