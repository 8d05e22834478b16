/* Tests of models/hfconfig_nas: Nemotron-NAS / DeciLM block_configs read as
 * one sub-layer a block (a no-op removes the sub-layer and its norm), the
 * KV grouping from n_heads_in_group, the FFN widths from ffn_mult (DeciLM's
 * rule), the mean width said as approximated, and bad block_configs
 * refused in one line naming the entry's key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hfconfig.h"
#include "models/model.h"
#include "tests/testing.h"

static int read_nas(const char *blocks, int layers, model_t *m, notes_t *n, err_t *e)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"model_type\": \"nemotron-nas\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
             "\"num_hidden_layers\": %d, \"vocab_size\": 100, \"tie_word_embeddings\": false, "
             "\"hidden_act\": \"silu\", \"block_configs\": %s}",
             layers, blocks);
    cJSON *root = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    int rc = model_from_config_ex(root, "nas.json", "nas", NULL, m, n, e);
    cJSON_Delete(root);
    return rc;
}

#define ATT(g) "\"attention\": {\"n_heads_in_group\": " #g ", \"no_op\": false}"
#define NO_ATT "\"attention\": {\"n_heads_in_group\": null, \"no_op\": true}"
#define FFN(x) "\"ffn\": {\"ffn_mult\": " #x ", \"no_op\": false}"
#define NO_FFN "\"ffn\": {\"no_op\": true}"

/* By hand (hidden 64, 4 heads of 16, vocab 100, untied): ffn_mult 6 gives
 * int(2 x 6 x 64 / 3) = 256 (a multiple of 256); n_heads_in_group 2 gives
 * 2 KV heads. Layer 0 attention + FFN, layer 1 FFN only, layer 2 attention
 * only: 2 attention sub-layers of 64 x 64 + 2 x 64 x 32 + 64 x 64 = 12,288
 * and a norm of 64 each; 2 FFNs of 3 x 64 x 256 = 49,152 and a norm each;
 * embedding and head 2 x 6,400, final norm 64: 136,000. Ignoring the
 * no-ops (3 full layers) would count 3 x (12,352 + 49,216) + 12,864. */
static void test_nas_counted(void)
{
    model_t m;
    err_t e;
    notes_t n;
    notes_init(&n);
    int rc = read_nas("[{" ATT(2) ", " FFN(6.0) "}, {" NO_ATT ", " FFN(6.0) "}, {" ATT(2)
                      ", " NO_FFN "}]",
                      3, &m, &n, &e);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    model_params_t p;
    model_params(&m, &p);
    CU_ASSERT_EQUAL(m.n_layers, 4);
    CU_ASSERT_EQUAL(m.n_kv_heads, 2);
    CU_ASSERT_EQUAL(m.ffn, 256);
    CHECK_REL(p.total, 136000.0, 0);
    CU_ASSERT_FALSE(notes_has(&n, "block_configs")); /* one width: nothing approximated */
    notes_free(&n);
}

/* Different widths: 256 (ffn_mult 6) and 512 (ffn_mult 12) are priced at
 * their mean to a multiple of 256 (384 -> 512), and the note says so. */
static void test_nas_mean_width_said(void)
{
    model_t m;
    err_t e;
    notes_t n;
    notes_init(&n);
    int rc = read_nas("[{" ATT(2) ", " FFN(6) "}, {" ATT(2) ", " FFN(12) "}]", 2, &m, &n, &e);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(m.ffn, 512);
    bool said = false;
    for (size_t i = 0; i < n.n; i++)
        said |= strstr(n.items[i].text, "APPROXIMATED") && strstr(n.items[i].text, "256 to 512");
    CU_ASSERT_TRUE(said);
    notes_free(&n);
}

/* Llama-3.3-Nemotron-Super-49B-v1 (tests/fixtures/real/configs): counted
 * sub-layer by sub-layer with each block's own width (DeciLM's rule,
 * outside scaleplan) it has 49,867,145,216 parameters; scaleplan's mean
 * width keeps the total within the bound its note gives (100,663,296). */
static void test_nas_super_total(void)
{
    char path[512];
    snprintf(path, sizeof path, "%sreal/configs/Llama-3_3-Nemotron-Super-49B-v1/config.json",
             fixture(""));
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(path, &m, &e), 0);
    model_params_t p;
    model_params(&m, &p);
    CU_ASSERT_EQUAL(m.n_layers, 49 + 80);
    CU_ASSERT_EQUAL(m.n_kv_heads, 8);
    CU_ASSERT_TRUE(fabs(p.total - 49867145216.0) <= 100663296.0);
}

/* Bad block_configs: one line naming the file and the entry's key. */
static void test_nas_bad_input(void)
{
    static const struct {
        const char *blocks;
        int layers;
        const char *key, *why;
    } rows[] = {
        {"[{" ATT(2) ", " FFN(6) "}, {" ATT(2) ", " FFN(6) "}]", 1, "block_configs",
         "2 entries but num_hidden_layers is 1"},
        {"[{" ATT(2) ", " FFN(-1.5) "}]", 1, "block_configs[0].ffn.ffn_mult", NULL},
        {"[{" ATT(2) ", \"ffn\": {\"no_op\": false}}]", 1, "block_configs[0].ffn.ffn_mult",
         NULL},
        {"[{" ATT(3) ", " FFN(6) "}]", 1, "n_heads_in_group", "divide"},
        {"[{" ATT(2) ", " FFN(6) "}, {" ATT(4) ", " FFN(6) "}]", 2,
         "block_configs[1].attention.n_heads_in_group", "per-block KV"},
        {"[{\"attention\": {\"replace_with_linear\": true}, " FFN(6) "}]", 1,
         "block_configs[0].attention.replace_with_linear", "linear layer"},
        {"[{" ATT(2) ", " NO_FFN "}]", 1, "block_configs", "every ffn is a no-op"},
        {"[7]", 1, "block_configs[0]", NULL},
        {"{\"attention\": {}}", 1, "block_configs", NULL},
        {"[{" ATT(2) "}]", 1, "ffn", NULL},
        {"null", 1, "block_configs", "missing"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        model_t m;
        err_t e;
        int rc = read_nas(rows[i].blocks, rows[i].layers, &m, NULL, &e);
        if (rows[i].why)
            CHECK_ERR(rc, &e, ERR_INPUT, "nas.json", rows[i].key, rows[i].why);
        else
            CHECK_ERR(rc, &e, ERR_INPUT, "nas.json", rows[i].key);
        CU_ASSERT_PTR_NULL(strchr(e.msg, '\n'));
    }
}

/* The command: a malformed block_configs file exits 2 with one line naming
 * the file and the field. */
static void test_nas_cli_bad_file(void)
{
    char args[512], *err = NULL;
    snprintf(args, sizeof args, "model --model %sconfigs/nas-negative-ffn-mult.json",
             fixture(""));
    cmd_expect(args, 2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "nas-negative-ffn-mult.json"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "block_configs[1].ffn.ffn_mult"));
    char *nl = strchr(err, '\n');
    CU_ASSERT_TRUE(nl == NULL || nl[1] == '\0'); /* one line */
    free(err);
}

/* A framework without supports.hybrid is refused for a NAS model naming
 * what the model has (attention-only and MLP-only blocks), not Mamba. */
static void test_nas_framework_refusal(void)
{
    char args[512], *err = NULL;
    snprintf(args, sizeof args,
             "sim --model %sreal/configs/Llama-3_3-Nemotron-Super-49B-v1/config.json --gpu "
             "h100-sxm --gpus 64 --framework deepspeed",
             fixture(""));
    cmd_expect(args, 2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--framework"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "attention-only and MLP-only"));
    CU_ASSERT_PTR_NULL(strstr(err, "Mamba"));
    free(err);
}

TEST_SUITE(suite_hfnas, "hfnas", TEST(test_nas_counted), TEST(test_nas_mean_width_said),
           TEST(test_nas_super_total), TEST(test_nas_bad_input), TEST(test_nas_cli_bad_file),
           TEST(test_nas_framework_refusal));
