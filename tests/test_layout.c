/* Tests of models/layout: derived degrees, every refusal with its one-line
 * reason, uneven pipeline splits, DeepSpeed configs. */
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "models/layout_json.h"
#include "models/model.h"
#include "tests/testing.h"

static model_t load(const char *name)
{
    model_t m;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(model_load(name, &m, &e), 0);
    return m;
}

static void test_derived(void)
{
    model_t m = load("llama3-70b");
    layout_t l;
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 4;
    l.micro_batch = 1;
    l.global_batch = 512;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 256, &e), 0);
    CU_ASSERT_EQUAL(l.dp, 8);
    CU_ASSERT_EQUAL(l.grad_accum, 64);
    CU_ASSERT_EQUAL(l.seq_len, 8192); /* the model's, capped at 8192 */
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 0), 20);
    layout_t d;
    layout_defaults(&d);
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&d, &m, 8, &e), 0);
    CU_ASSERT_EQUAL(d.dp, 8);
    CU_ASSERT_EQUAL(d.global_batch, 8); /* one micro-batch per rank */
    /* SP is meaningless without TP and is dropped, not an error */
    layout_defaults(&d);
    d.sequence_parallel = true;
    CU_ASSERT_EQUAL(layout_finalize(&d, &m, 1, &e), 0);
    CU_ASSERT_FALSE(d.sequence_parallel);
}

typedef struct {
    const char *what;
    int tp, pp, cp, ep, vpp, mb, gb, seq, gpus;
    schedule_t sched;
    const char *n1, *n2;
} bad_case_t;

static void test_refusals(void)
{
    model_t m = load("llama3-70b"); /* 80 layers, 64 heads, 8 kv heads */
    static const bad_case_t cases[] = {
        {"tp not dividing heads", 3, 1, 1, 1, 1, 1, 0, 0, 3, SCHEDULE_1F1B, "--tp",
         "num_attention_heads 64 must divide by TP (3 does not divide 64)"},
        {"tp beyond kv heads", 16, 1, 1, 1, 1, 1, 0, 0, 16, SCHEDULE_1F1B, "--tp",
         "num_key_value_heads 8"},
        {"pp not dividing layers", 8, 3, 1, 1, 1, 1, 0, 0, 24, SCHEDULE_1F1B, "--pp",
         "num_layers 80 must divide by PP 3"},
        {"more stages than layers", 1, 81, 1, 1, 1, 1, 0, 0, 81, SCHEDULE_1F1B, "--pp",
         "81 pipeline stages (x 1 virtual) for 80 layers"},
        {"gpus not a multiple", 8, 4, 1, 1, 1, 1, 0, 0, 100, SCHEDULE_1F1B, "--gpus",
         "100 GPUs cannot be split"},
        {"fewer gpus than the layout", 8, 4, 1, 1, 1, 1, 0, 0, 16, SCHEDULE_1F1B, "--gpus",
         "cannot be split"},
        {"global batch not divisible", 8, 1, 1, 1, 1, 2, 100, 0, 64, SCHEDULE_1F1B,
         "--global-batch", "100 sequences must divide by micro-batch x DP = 2 x 8"},
        {"vpp without interleaved", 8, 4, 1, 1, 2, 1, 0, 0, 32, SCHEDULE_1F1B, "--vpp",
         "interleaved"},
        {"interleaved without vpp", 8, 4, 1, 1, 1, 1, 0, 0, 32, SCHEDULE_INTERLEAVED,
         "--schedule", "--vpp"},
        {"interleaved m not multiple of pp", 8, 4, 1, 1, 2, 1, 6, 0, 32, SCHEDULE_INTERLEAVED,
         "--global-batch", "multiple of PP 4"},
        {"pp x vpp not dividing layers", 8, 4, 1, 1, 3, 1, 4, 0, 32, SCHEDULE_INTERLEAVED,
         "--vpp", "PP x VPP = 4 x 3"},
        {"cp not dividing seq", 8, 1, 3, 1, 1, 1, 0, 1000, 24, SCHEDULE_1F1B, "--cp",
         "2 x CP = 6"},
        {"expert parallel on a dense model", 8, 1, 1, 2, 1, 1, 0, 0, 16, SCHEDULE_1F1B, "--ep",
         "dense"},
        {"zero tp", 0, 1, 1, 1, 1, 1, 0, 0, 8, SCHEDULE_1F1B, "--tp", "from 1"},
        {"negative micro-batch", 8, 1, 1, 1, 1, -1, 0, 0, 8, SCHEDULE_1F1B, "--micro-batch",
         "from 1"},
        {"zero gpus", 1, 1, 1, 1, 1, 1, 0, 0, 0, SCHEDULE_1F1B, "--gpus", "from 1"},
        {"huge gpus", 1, 1, 1, 1, 1, 1, 0, 0, 1 << 30, SCHEDULE_1F1B, "--gpus", "from 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_case_t *c = &cases[i];
        layout_t l;
        layout_defaults(&l);
        l.tp = c->tp;
        l.pp = c->pp;
        l.cp = c->cp;
        l.ep = c->ep;
        l.vpp = c->vpp;
        l.micro_batch = c->mb;
        l.global_batch = c->gb;
        l.seq_len = c->seq;
        l.schedule = c->sched;
        err_t e;
        int rc = layout_finalize(&l, &m, c->gpus, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, c->n1, c->n2);
        if (rc != ERR_INPUT)
            fprintf(stderr, "case '%s' was accepted\n", c->what);
    }
    /* sequence parallel needs the sequence to split over TP */
    layout_t l;
    layout_defaults(&l);
    l.tp = 8;
    l.seq_len = 1001;
    l.sequence_parallel = true;
    err_t e;
    int rc = layout_finalize(&l, &m, 8, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--seq-len", "must divide by TP 8");
    /* learned positions cap the sequence */
    model_t g = load("gpt2-124m");
    layout_defaults(&l);
    l.seq_len = 2048;
    rc = layout_finalize(&l, &g, 1, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--seq-len", "1024 learned positions");
}

static void test_uneven_pipeline(void)
{
    model_t m = load("llama3-405b"); /* 126 layers: PP16 needs an uneven split */
    layout_t l;
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 16;
    err_t e;
    int rc = layout_finalize(&l, &m, 128, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--pp", "uneven split");
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 16;
    l.first_stage_layers = 7;
    l.last_stage_layers = 7;
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 128, &e), 0); /* 7 + 14 x 8 + 7 */
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 0), 7);
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 1), 8);
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 15), 7);
    int total = 0;
    for (int s = 0; s < 16; s++)
        total += layout_stage_layers(&l, &m, s);
    CU_ASSERT_EQUAL(total, 126);
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 16;
    l.first_stage_layers = 5;
    rc = layout_finalize(&l, &m, 128, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--first-stage-layers", "split evenly");
    /* one layer a chunk with the embedding and the loss counted (NVIDIA's
     * 30-layer 405B proxy on PP 4 x VPP 8): the first chunk holds the
     * embedding alone, the last the loss alone, 30 chunks one layer each */
    m.n_layers = 30;
    layout_defaults(&l);
    l.tp = 8;
    l.pp = 4;
    l.vpp = 8;
    l.schedule = SCHEDULE_INTERLEAVED;
    l.global_batch = 64;
    l.first_stage_layers = LAYOUT_STAGE_EMPTY;
    l.last_stage_layers = LAYOUT_STAGE_EMPTY;
    rc = layout_finalize(&l, &m, 32, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(layout_chunk_layers(&l, &m, 0), 0);
    CU_ASSERT_EQUAL(layout_chunk_layers(&l, &m, 1), 1);
    CU_ASSERT_EQUAL(layout_chunk_layers(&l, &m, 31), 0);
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 0), 7);
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 1), 8);
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 3), 7);
    /* more empty stages than that is a stage without layers */
    l.vpp = 9;
    rc = layout_finalize(&l, &m, 32, &e);
    CU_ASSERT_NOT_EQUAL(rc, 0);
    /* a framework's split with the embedding alone on its first stage */
    int sizes[4] = {0, 10, 10, 10};
    bool approx = true;
    layout_defaults(&l);
    l.pp = 4;
    CU_ASSERT_EQUAL_FATAL(layout_set_stage_sizes(&l, sizes, 4, 30, "test", &approx, &e), 0);
    CU_ASSERT_FALSE(approx);
    CU_ASSERT_EQUAL(l.first_stage_layers, LAYOUT_STAGE_EMPTY);
    CU_ASSERT_EQUAL_FATAL(layout_finalize(&l, &m, 4, &e), 0);
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 0), 0);
    CU_ASSERT_EQUAL(layout_stage_layers(&l, &m, 3), 10);
}

static void test_enum_names(void)
{
    err_t e;
    schedule_t s;
    CU_ASSERT_EQUAL(layout_parse_schedule("interleaved-1f1b", &s, &e), 0);
    CU_ASSERT_EQUAL(s, SCHEDULE_INTERLEAVED);
    int rc = layout_parse_schedule("zigzag", &s, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--schedule", "gpipe, 1f1b, interleaved");
    recompute_t r;
    rc = layout_parse_recompute("most", &r, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--recompute", "none, selective, full");
    precision_t p;
    CU_ASSERT_EQUAL(layout_parse_precision("FP8", &p, &e), 0);
    CU_ASSERT_EQUAL(p, PRECISION_FP8);
}

/* rule splits layers over n stages (embedding and output weighing w_in and
 * w_out layers) into exactly want. */
static void check_split(layout_split_rule_t rule, int layers, int w_in, int w_out,
                        const int *want, int n)
{
    int got[128];
    err_t e;
    CU_ASSERT_FATAL(n <= 128);
    CU_ASSERT_EQUAL_FATAL(
        layout_rule_stage_sizes(rule, layers, n, w_in, w_out, got, "pp", &e), 0);
    for (int i = 0; i < n; i++)
        CU_ASSERT_EQUAL(got[i], want[i]);
}

/* Framework split rules and their mapping onto the simulator's first,
 * equal middle and last stages. */
static void test_stage_sizes(void)
{
    int sizes[16];
    err_t e;
    /* torchtitan 2024: 126 layers on 8 stages: 15, 16 x 6, 15 */
    static const int tt24[8] = {15, 16, 16, 16, 16, 16, 16, 15};
    check_split(LAYOUT_SPLIT_EXTRA_MIDDLE, 126, 0, 0, tt24, 8);
    /* torchtitan 2025: 32 layers + 2 on 4 stages: 8, 9, 8, 7 */
    static const int tt25[4] = {8, 9, 8, 7};
    check_split(LAYOUT_SPLIT_WEIGHTED, 32, 1, 1, tt25, 4);
    /* DeepSpeed's balanced partition: BLOOM's 70 layers on 12 stages, the
     * heaviest 6; 7 layers on 4 stages: 1, 2, 2, 2; 5 on 4, where the
     * middle stages' ceiling leaves the ends too little: 2, 1, 1, 1 */
    int ds[12];
    CU_ASSERT_EQUAL_FATAL(
        layout_rule_stage_sizes(LAYOUT_SPLIT_BALANCED, 70, 12, 1, 1, ds, "pp", &e), 0);
    CU_ASSERT_EQUAL(ds[0], 5);
    CU_ASSERT_EQUAL(ds[1], 6);
    CU_ASSERT_EQUAL(ds[10], 6);
    CU_ASSERT_EQUAL(ds[11], 5);
    static const int ds7[4] = {1, 2, 2, 2}, ds5[4] = {2, 1, 1, 1};
    check_split(LAYOUT_SPLIT_BALANCED, 7, 1, 1, ds7, 4);
    check_split(LAYOUT_SPLIT_BALANCED, 5, 1, 1, ds5, 4);
    /* 'type:transformer|embedding' (BLOOM's): the two embeddings count as
     * layers; 70 layers on 72 stages leave each end stage its embedding
     * alone, on 12 stages 5/6 x 10/5 as above; 70 on 2 stages cannot be
     * shared evenly by this rule */
    int dse[72];
    CU_ASSERT_EQUAL_FATAL(
        layout_rule_stage_sizes(LAYOUT_SPLIT_BALANCED_EMBED, 70, 72, 1, 1, dse, "pp", &e), 0);
    CU_ASSERT_EQUAL(dse[0], 0);
    CU_ASSERT_EQUAL(dse[1], 1);
    CU_ASSERT_EQUAL(dse[70], 1);
    CU_ASSERT_EQUAL(dse[71], 0);
    CU_ASSERT_EQUAL_FATAL(
        layout_rule_stage_sizes(LAYOUT_SPLIT_BALANCED_EMBED, 70, 12, 1, 1, dse, "pp", &e), 0);
    CU_ASSERT_EQUAL(dse[0], 5);
    CU_ASSERT_EQUAL(dse[5], 6);
    CU_ASSERT_EQUAL(dse[11], 5);
    CHECK_ERR(layout_rule_stage_sizes(LAYOUT_SPLIT_BALANCED_EMBED, 70, 2, 1, 1, dse, "pp", &e), &e,
              ERR_INPUT, "pp", "cannot share");
    /* 3 layers + 2 + 1 on 4 stages: one layer a stage, short of the first
     * stage's weight of 2 (torchtitan refuses) */
    CHECK_ERR(layout_rule_stage_sizes(LAYOUT_SPLIT_WEIGHTED, 3, 4, 2, 1, sizes, "pp", &e), &e,
              ERR_INPUT, "pp", "without what it must hold");
    layout_t l;
    layout_defaults(&l);
    bool approx;
    /* exact: 15 / 16 x 6 / 15 */
    CU_ASSERT_EQUAL(layout_set_stage_sizes(&l, tt24, 8, 126, "pp", &approx, &e), 0);
    CU_ASSERT_FALSE(approx);
    CU_ASSERT_EQUAL(l.first_stage_layers, 15);
    CU_ASSERT_EQUAL(l.last_stage_layers, 15);
    /* approximated: 8 / 9 x 2 / 6 keeps the largest stage and the total */
    CU_ASSERT_EQUAL(layout_set_stage_sizes(&l, tt25, 4, 32, "pp", &approx, &e), 0);
    CU_ASSERT_TRUE(approx);
    CU_ASSERT_EQUAL(l.first_stage_layers, 8);
    CU_ASSERT_EQUAL(l.last_stage_layers, 6);
    /* two stages: the second is the rest; even: no split */
    static const int two[2] = {14, 18}, even[4] = {8, 8, 8, 8}, empty_last[3] = {4, 4, 0};
    CU_ASSERT_EQUAL(layout_set_stage_sizes(&l, two, 2, 32, "pp", &approx, &e), 0);
    CU_ASSERT_EQUAL(l.first_stage_layers, 14);
    CU_ASSERT_EQUAL(l.last_stage_layers, 0);
    CU_ASSERT_EQUAL(layout_set_stage_sizes(&l, even, 4, 32, "pp", &approx, &e), 0);
    CU_ASSERT_EQUAL(l.first_stage_layers, 0);
    CU_ASSERT_EQUAL(layout_set_stage_sizes(&l, empty_last, 3, 8, "pp", &approx, &e), 0);
    CU_ASSERT_EQUAL(l.last_stage_layers, LAYOUT_STAGE_EMPTY);
    /* the list for messages, cut short with "/..." where the buffer ends */
    char list[16];
    layout_format_stage_sizes(tt25, 4, list, sizeof list);
    CU_ASSERT_STRING_EQUAL(list, "8/9/8/7");
    static const int many[8] = {10, 11, 12, 13, 14, 15, 16, 17};
    layout_format_stage_sizes(many, 8, list, sizeof list);
    CU_ASSERT_STRING_EQUAL(list, "10/11/12/...");
    /* an empty first stage (the embedding alone) */
    static const int empty_first[3] = {0, 4, 4};
    CU_ASSERT_EQUAL(layout_set_stage_sizes(&l, empty_first, 3, 8, "pp", &approx, &e), 0);
    CU_ASSERT_EQUAL(l.first_stage_layers, LAYOUT_STAGE_EMPTY);
    CU_ASSERT_EQUAL(l.last_stage_layers, 4);
    /* refused: sizes that do not sum to the layers */
    CHECK_ERR(layout_set_stage_sizes(&l, even, 4, 33, "pp", &approx, &e), &e, ERR_INPUT, "pp",
              "not the model's 33");
}

/* A layout's JSON carries DTensor's sequence parallelism (sp_saves_gathered)
 * only where it is set, and reads it back. */
static void test_json_sp_saves_gathered(void)
{
    for (int set = 0; set < 2; set++) {
        layout_t l, back;
        layout_defaults(&l);
        l.tp = 8;
        l.sequence_parallel = true;
        l.sp_saves_gathered = set;
        l.global_batch = 8;
        l.seq_len = 4096;
        cJSON *o = layout_to_json(&l);
        CU_ASSERT_PTR_NOT_NULL_FATAL(o);
        CU_ASSERT_EQUAL(cJSON_GetObjectItemCaseSensitive(o, "sp_saves_gathered") != NULL, set);
        layout_defaults(&back);
        json_ctx_t ctx = json_ctx_root("plan.json");
        err_t e;
        int rc = layout_from_json(o, &ctx, &back, &e);
        if (rc)
            fprintf(stderr, "layout json: %s\n", e.msg);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(back.sp_saves_gathered, set);
        CU_ASSERT_EQUAL(back.tp, 8);
        cJSON_Delete(o);
    }
}

/* Megatron-Core's --recompute-modules: the names as its flag, a Python
 * list or a comma list give one mask; the layout says them and JSON keeps
 * them; an unknown name, an empty list or modules without selective
 * recompute are refused naming the flag; no modules is the attention core. */
static void test_recompute_modules(void)
{
    unsigned m = 0;
    err_t e;
    CU_ASSERT_EQUAL(layout_parse_recompute_modules("layernorm mlp", "--recompute-modules", &m, &e),
                    0);
    CU_ASSERT_EQUAL(m, LAYOUT_RC_LAYERNORM | LAYOUT_RC_MLP);
    CU_ASSERT_EQUAL(layout_parse_recompute_modules("['moe_act', 'mla_up_proj']", "x", &m, &e), 0);
    CU_ASSERT_EQUAL(m, LAYOUT_RC_MOE_ACT | LAYOUT_RC_MLA_UP_PROJ);
    CU_ASSERT_EQUAL(layout_parse_recompute_modules("[core_attn,moe,shared_experts]", "x", &m, &e),
                    0);
    CU_ASSERT_EQUAL(m, LAYOUT_RC_CORE_ATTN | LAYOUT_RC_MOE | LAYOUT_RC_SHARED_EXPERTS);
    int rc = layout_parse_recompute_modules("core_attn,attention", "--recompute-modules", &m, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--recompute-modules", "unknown module 'attention'");
    rc = layout_parse_recompute_modules("[]", "--recompute-modules", &m, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--recompute-modules", "names no module");
    char names[160];
    layout_recompute_modules_name(LAYOUT_RC_MLP | LAYOUT_RC_CORE_ATTN, ",", false, names,
                                  sizeof names);
    CU_ASSERT_STRING_EQUAL(names, "core_attn,mlp");

    layout_t l, back;
    layout_defaults(&l);
    l.global_batch = 8;
    l.seq_len = 4096;
    l.recompute = RECOMPUTE_SELECTIVE;
    CU_ASSERT_EQUAL(layout_rc_modules(&l), LAYOUT_RC_CORE_ATTN);
    l.recompute_modules = LAYOUT_RC_LAYERNORM | LAYOUT_RC_MLP;
    CU_ASSERT_EQUAL(layout_rc_modules(&l), LAYOUT_RC_LAYERNORM | LAYOUT_RC_MLP);
    char line[256];
    layout_describe(&l, line, sizeof line);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "recompute=selective(layernorm,mlp)"));
    cJSON *o = layout_to_json(&l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    layout_defaults(&back);
    json_ctx_t ctx = json_ctx_root("plan.json");
    CU_ASSERT_EQUAL(layout_from_json(o, &ctx, &back, &e), 0);
    CU_ASSERT_EQUAL(back.recompute_modules, l.recompute_modules);
    CU_ASSERT_EQUAL(back.recompute, RECOMPUTE_SELECTIVE);
    cJSON_Delete(o);

    model_t mdl;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-8b", &mdl, &e), 0);
    l.recompute = RECOMPUTE_FULL;
    rc = layout_finalize(&l, &mdl, 8, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--recompute-modules", "needs --recompute selective");
}

/* The brief module names the tables print (sel-rc(attn,norm,act,up,shared),
 * layout_recompute_modules_name) read back as Megatron's: "act" is moe_act,
 * "moe" the whole MoE block, in any case (issue 36: --recompute-modules read
 * only Megatron's spellings, so a layout copied from a plan table failed). */
static void test_recompute_module_words(void)
{
    unsigned m = 0;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(
        layout_parse_recompute_modules("attn,norm,mlp,act,moe,up,shared", "x", &m, &e), 0);
    CU_ASSERT_EQUAL(m, LAYOUT_RC_ALL);
    CU_ASSERT_EQUAL_FATAL(layout_parse_recompute_modules("ACT Moe_Act", "x", &m, &e), 0);
    CU_ASSERT_EQUAL(m, LAYOUT_RC_MOE_ACT);
    int rc = layout_parse_recompute_modules("activation", "--recompute-modules", &m, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "--recompute-modules", "unknown module 'activation'");
    char names[160];
    layout_recompute_modules_name(LAYOUT_RC_ALL, ",", true, names, sizeof names);
    CU_ASSERT_EQUAL_FATAL(layout_parse_recompute_modules(names, "x", &m, &e), 0);
    CU_ASSERT_EQUAL(m, LAYOUT_RC_ALL);
}

TEST_SUITE(suite_layout, "layout", TEST(test_derived), TEST(test_refusals),
           TEST(test_uneven_pipeline), TEST(test_stage_sizes), TEST(test_enum_names),
           TEST(test_json_sp_saves_gathered), TEST(test_recompute_modules),
           TEST(test_recompute_module_words));
