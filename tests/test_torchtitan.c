/* Tests of inputs/toml (the TOML reader) and inputs/torchtitan: the three
 * upstream Llama 3 job configs (tests/fixtures/torchtitan, verbatim at
 * 238fa995, sources in its README), older key names, what is said, and bad
 * input refused in one line with the line number. */
#include <stdio.h>
#include <string.h>

#include "inputs/toml.h"
#include "inputs/torchtitan.h"
#include "frameworks/framework.h"
#include "tests/testing.h"

static int parse(const char *text, toml_doc_t *d, err_t *e)
{
    return toml_parse(text, strlen(text), "t.toml", d, e);
}

/* Everything torchtitan's configs use, and the rest of the subset. */
static void test_toml_values(void)
{
    toml_doc_t d;
    err_t e;
    const char *text = "# comment\n"
                       "top = 1\n"
                       "[job]\n"
                       "description = \"Llama 3 \\\"8B\\\" \\u00e9\"  # trailing comment\n"
                       "path = 'C:\\raw'\n"
                       "[parallelism]\n"
                       "data_parallel_shard_degree = -1\n"
                       "big = 1_000_000\n"
                       "hex = 0xff\n"
                       "[optimizer]\n"
                       "lr = 3e-4\n"
                       "eps=1e-8\n"
                       "ratio = +1.5\n"
                       "[quantize.linear.float8]\n"
                       "filter_fqns = [\"output\", 'x',\n"
                       "   \"y\",  # a comment inside\n"
                       "]\n"
                       "flag = true\n"
                       "nested = [[1, 2], [3]]\n"
                       "inline = { a = 1, b.c = \"d\" }\n"
                       "\"quoted key\".x = false\n";
    CU_ASSERT_EQUAL_FATAL(parse(text, &d, &e), 0);
    CU_ASSERT_EQUAL(toml_find(&d, "top")->v.i, 1);
    CU_ASSERT_STRING_EQUAL(toml_find(&d, "job.description")->v.str, "Llama 3 \"8B\" \xc3\xa9");
    CU_ASSERT_STRING_EQUAL(toml_find(&d, "job.path")->v.str, "C:\\raw");
    CU_ASSERT_EQUAL(toml_find(&d, "parallelism.data_parallel_shard_degree")->v.i, -1);
    CU_ASSERT_EQUAL(toml_find(&d, "parallelism.big")->v.i, 1000000);
    CU_ASSERT_EQUAL(toml_find(&d, "parallelism.hex")->v.i, 255);
    CHECK_REL(toml_find(&d, "optimizer.lr")->v.f, 3e-4, 1e-15);
    CHECK_REL(toml_find(&d, "optimizer.eps")->v.f, 1e-8, 1e-15);
    CU_ASSERT_EQUAL(toml_find(&d, "optimizer.lr")->v.type, TOML_FLOAT);
    const toml_value_t *a = &toml_find(&d, "quantize.linear.float8.filter_fqns")->v;
    CU_ASSERT_EQUAL_FATAL(a->type, TOML_ARRAY);
    CU_ASSERT_EQUAL(a->n_items, 3);
    CU_ASSERT_STRING_EQUAL(a->items[2].str, "y");
    CU_ASSERT_TRUE(toml_find(&d, "quantize.linear.float8.flag")->v.b);
    CU_ASSERT_EQUAL(toml_find(&d, "quantize.linear.float8.nested")->v.items[0].n_items, 2);
    CU_ASSERT_EQUAL(toml_find(&d, "quantize.linear.float8.inline.a")->v.i, 1);
    CU_ASSERT_STRING_EQUAL(toml_find(&d, "quantize.linear.float8.inline.b.c")->v.str, "d");
    CU_ASSERT_FALSE(toml_find(&d, "quantize.linear.float8.quoted key.x")->v.b);
    CU_ASSERT_TRUE(toml_has_table(&d, "quantize.linear"));
    CU_ASSERT_EQUAL(toml_find(&d, "optimizer.lr")->v.line, 11);
    toml_free(&d);
}

static void test_toml_errors(void)
{
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"a = 1\na = 2\n", "line 2: 'a' is defined twice"},
        {"a = \"open\n", "line 1: a string is not closed"},
        {"a = \"\"\"multi\"\"\"\n", "multi-line strings"},
        {"d = 1979-05-27\n", "dates and times"},
        {"t = 07:32:00\n", "dates and times"},
        {"[[servers]]\n", "arrays of tables"},
        {"a = [1, 2\n", "not closed"},
        {"a = 1 2\n", "unexpected text"},
        {"a == 1\n", "expected a value"},
        {"= 1\n", "expected a key"},
        {"[table\n", "expected ']'"},
        {"a = 1__0\n", "misplaced '_'"},
        {"a = 012\n", "leading zeros"},
        {"a = 99999999999999999999\n", "too large"},
        {"a = \"\\q\"\n", "unknown escape"},
        {"a = [{x = 1}]\n", "arrays of inline tables"},
        {"a = {x = 1\n", "expected ',' or '}'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        toml_doc_t d;
        err_t e;
        int rc = parse(cases[i].text, &d, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "t.toml", cases[i].needle);
        CU_ASSERT_EQUAL(d.n, 0);
    }
}

static int read_fixture(const char *name, int gpus, torchtitan_t *t, err_t *e)
{
    int rc = torchtitan_read_file(fixture(name), gpus, t, e);
    if (rc)
        fprintf(stderr, "%s: %s\n", name, e->msg);
    return rc;
}

static bool has_note(const torchtitan_t *t, const char *field)
{
    return notes_has(&t->notes, field);
}

/* llama3_8b.toml, the 64-A100 preset: FSDP over every GPU, local batch 1,
 * 8192 tokens, op-level selective checkpointing, no Float8. */
static void test_llama3_8b(void)
{
    torchtitan_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(read_fixture("torchtitan/llama3_8b.toml", 64, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.model_name, "llama3-8b");
    CU_ASSERT_EQUAL(t.layout.zero, 3);
    CU_ASSERT_EQUAL(t.layout.tp, 1);
    CU_ASSERT_EQUAL(t.layout.micro_batch, 1);
    CU_ASSERT_EQUAL(t.layout.global_batch, 64); /* local 1 x 64 shards */
    CU_ASSERT_EQUAL(t.layout.seq_len, 8192);
    CU_ASSERT_EQUAL(t.layout.recompute, RECOMPUTE_OPS); /* selective, op-level policy */
    CU_ASSERT_EQUAL(t.layout.precision, PRECISION_BF16);
    CU_ASSERT_EQUAL(t.reduce_bytes, 4); /* FSDP reduces in fp32 by default */
    CU_ASSERT_EQUAL(t.world_size, 64);
    CU_ASSERT_FALSE(has_note(&t, "activation_checkpoint.selective_ac_option"));
    /* its [compile] section (torchtitan 08b8b244f, 2025-08-20; June 2025's
     * job config had training.compile) is a late-2025 key */
    CU_ASSERT_STRING_EQUAL(t.framework, "torchtitan-2025-12");
    CU_ASSERT_FALSE(t.compiled);
    CU_ASSERT_TRUE(has_note(&t, "parallelism.data_parallel_shard_degree"));
    CU_ASSERT_TRUE(has_note(&t, "checkpoint"));
    CU_ASSERT_TRUE(has_note(&t, "quantize")); /* float8 settings without the converter */
    torchtitan_free(&t);
}

/* llama3_70b.toml: TP 8 (sequence-parallel norms), FSDP over the rest,
 * local batch 8, full checkpointing. On 64 GPUs: DP 8, batch 64. */
static void test_llama3_70b(void)
{
    torchtitan_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(read_fixture("torchtitan/llama3_70b.toml", 64, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.model_name, "llama3-70b");
    CU_ASSERT_EQUAL(t.layout.tp, 8);
    CU_ASSERT_TRUE(t.layout.sequence_parallel);
    CU_ASSERT_EQUAL(t.layout.micro_batch, 8);
    CU_ASSERT_EQUAL(t.layout.global_batch, 64);
    CU_ASSERT_EQUAL(t.layout.recompute, RECOMPUTE_FULL);
    CU_ASSERT_FALSE(t.opt.tp_comm_overlap);
    torchtitan_free(&t);
}

/* llama3_405b.toml: the 128-H100 preset with async TP, compile and Float8
 * under the pre-#1763 converter name "float8". */
static void test_llama3_405b(void)
{
    torchtitan_t t;
    fw_preset_t fw;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(read_fixture("torchtitan/llama3_405b.toml", 128, &t, &e), 0);
    CU_ASSERT_STRING_EQUAL(t.model_name, "llama3-405b");
    CU_ASSERT_EQUAL(t.layout.precision, PRECISION_FP8);
    CU_ASSERT_TRUE(t.opt.tp_comm_overlap);
    CU_ASSERT_EQUAL(t.layout.micro_batch, 2);
    CU_ASSERT_EQUAL(t.layout.global_batch, 32); /* local 2 x 16 shards */
    /* torch.compile fuses the elementwise ops; Float8 weights gathered in fp8 */
    CU_ASSERT_TRUE(t.compiled);
    CU_ASSERT_EQUAL(t.opt.eager_norm, 1);
    CU_ASSERT_TRUE(t.opt.fp8_param_gather);
    CU_ASSERT_FALSE(has_note(&t, "compile.enable"));
    CU_ASSERT_FALSE(has_note(&t, "quantize.linear.float8.enable_fsdp_float8_all_gather"));
    sim_options_t o;
    CU_ASSERT_EQUAL_FATAL(fw_load("torchtitan", &fw, &e), 0);
    o = fw.opt;
    CU_ASSERT_TRUE(o.eager_norm > 1); /* the preset runs eager PyTorch ... */
    torchtitan_options(&t, &o);
    CU_ASSERT_EQUAL(o.eager_norm, 1); /* ... the config compiles */
    CU_ASSERT_TRUE(o.tp_comm_overlap && o.fp8_param_gather);
    torchtitan_free(&t);
    /* -1 with no GPU count is an error naming the key. */
    CHECK_ERR(read_fixture("torchtitan/llama3_405b.toml", 0, &t, &e), &e, ERR_INPUT,
              "data_parallel_shard_degree", "--gpus");
    torchtitan_free(&t);
}

/* 2024-era keys: [training] batch_size and data_parallel_degree,
 * [experimental] pipeline_parallel_degree, [float8] enable_float8_linear;
 * an interleaved schedule with 2 layers per stage; the debug model; HSDP
 * and CPU offload. */
static void test_old_keys_and_options(void)
{
    const char *text = "[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n"
                       "[training]\nbatch_size = 4\ndata_parallel_degree = 2\nseq_len = 512\n"
                       "tensor_parallel_degree = 1\n"
                       "[experimental]\npipeline_parallel_degree = 3\n"
                       "pipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                       "[parallelism]\npipeline_parallel_layers_per_stage = 1\n"
                       "pipeline_parallel_microbatch_size = 2\n"
                       "[float8]\nenable_float8_linear = true\n"
                       "[activation_checkpoint]\nmode = 'full'\n";
    torchtitan_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "old.toml", 0, &t, &e), 0);
    CU_ASSERT_TRUE(t.have_model);
    CU_ASSERT_EQUAL(t.model.n_layers, 6);
    CU_ASSERT_EQUAL(t.layout.pp, 3);
    CU_ASSERT_EQUAL(t.layout.vpp, 2); /* 6 layers / (PP 3 x 1 layer per stage) */
    CU_ASSERT_EQUAL(t.layout.schedule, SCHEDULE_INTERLEAVED);
    CU_ASSERT_EQUAL(t.layout.micro_batch, 2);
    CU_ASSERT_EQUAL(t.layout.global_batch, 8); /* local 4 x DP 2 */
    CU_ASSERT_EQUAL(t.world_size, 6);
    CU_ASSERT_EQUAL(t.layout.precision, PRECISION_FP8);
    torchtitan_free(&t);
    const char *hsdp = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                       "[parallelism]\ndata_parallel_replicate_degree = 2\n"
                       "data_parallel_shard_degree = 4\n"
                       "[training]\nenable_cpu_offload = true\nlocal_batch_size = 1\n"
                       "global_batch_size = 32\nmixed_precision_reduce = \"bfloat16\"\n"
                       "unknown_key = 1\n";
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(hsdp, strlen(hsdp), "hsdp.toml", 8, &t, &e), 0);
    CU_ASSERT_EQUAL(t.layout.zero, 3);
    CU_ASSERT_EQUAL(t.layout.offload, LAYOUT_OFFLOAD_OPTIMIZER | LAYOUT_OFFLOAD_PARAMS);
    CU_ASSERT_EQUAL(t.layout.global_batch, 32); /* gradient accumulation 4 */
    CU_ASSERT_EQUAL(t.reduce_bytes, 2);
    CU_ASSERT_TRUE(has_note(&t, "parallelism.data_parallel_replicate_degree"));
    CU_ASSERT_TRUE(has_note(&t, "training.unknown_key"));
    torchtitan_free(&t);
}

/* torchtitan flavors that are catalog models under another name: the
 * deepseek_v3 "16B" flavor (and mid-2025's deepseek_v2 experiment) is
 * DeepSeek-V2-Lite. */
static void test_flavor_names(void)
{
    static const char *const texts[2] = {
        "[model]\nname = \"deepseek_v3\"\nflavor = \"16B\"\n",
        "[model]\nname = \"deepseek_v2\"\nflavor = \"deepseek-ai/DeepSeek-V2-Lite\"\n"};
    for (int i = 0; i < 2; i++) {
        torchtitan_t t;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(torchtitan_read(texts[i], strlen(texts[i]), "f.toml", 8, &t, &e), 0);
        CU_ASSERT_STRING_EQUAL(t.model_name, "deepseek-v2-lite");
        torchtitan_free(&t);
    }
}

/* compile.components without "model" (torchtitan's DeepSeek-V3 configs
 * compile only the loss) leaves the model's elementwise kernels eager;
 * without "loss" the loss runs eager; without the list both compile. */
static void test_compile_components(void)
{
    static const char *const texts[4] = {
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[compile]\nenable = true\n"
        "components = [\"loss\"]\n",
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[compile]\nenable = true\n"
        "components = [\"model\", \"loss\"]\n",
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[compile]\nenable = true\n"
        "components = [\"model\"]\n",
        "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\ncompile = true\n"};
    static const bool model[4] = {false, true, true, true}, loss[4] = {true, true, false, true};
    for (int i = 0; i < 4; i++) {
        torchtitan_t t;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(torchtitan_read(texts[i], strlen(texts[i]), "c.toml", 8, &t, &e), 0);
        CU_ASSERT_EQUAL(t.compiled, model[i]);
        CU_ASSERT_EQUAL(t.compiled_loss, loss[i]);
        CU_ASSERT_EQUAL(has_note(&t, "compile.components"), i == 0);
        /* under the June 2025 preset, whose compile covers the loss */
        sim_options_t o;
        sim_options_default(&o);
        o.ce_fwd_bytes = 22;
        o.ce_compiled_fwd_bytes = o.ce_compiled_bwd_bytes = o.ce_compiled_peak_bytes = 4;
        torchtitan_options(&t, &o);
        CU_ASSERT_DOUBLE_EQUAL(o.ce_fwd_bytes, loss[i] ? 4 : 22, 0);
        torchtitan_free(&t);
    }
}

/* The 2024 generation split the local batch into one pipeline micro-batch
 * per stage unless experimental.pipeline_parallel_microbatches said how
 * many (torchtitan's December 2024 405B runs: local batch 32 on 8 stages
 * is 8 micro-batches of 4); the 2025 key sets the micro-batch size. */
static void test_old_pipeline_microbatches(void)
{
    static const struct {
        const char *extra;
        int micro_batch;
    } cases[] = {
        {"", 4},                                                  /* 32 / PP 8 */
        {"pipeline_parallel_microbatches = 16\n", 2},             /* 32 / 16 */
        {"[parallelism]\npipeline_parallel_microbatch_size = 1\n", 1}, /* the 2025 key */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "[model]\nname = \"llama3\"\nflavor = \"405B\"\n"
                 "[training]\nbatch_size = 32\ndata_parallel_degree = 8\n"
                 "tensor_parallel_degree = 8\n"
                 "[experimental]\npipeline_parallel_degree = 8\n%s",
                 cases[i].extra);
        torchtitan_t t;
        err_t e;
        CU_ASSERT_EQUAL_FATAL(torchtitan_read(text, strlen(text), "old.toml", 512, &t, &e), 0);
        CU_ASSERT_EQUAL(t.layout.micro_batch, cases[i].micro_batch);
        CU_ASSERT_EQUAL(t.layout.global_batch, 256);
        CU_ASSERT_STRING_EQUAL(t.framework, "torchtitan-2024-12");
        torchtitan_free(&t);
    }
    const char *bad = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                      "[training]\nbatch_size = 6\n"
                      "[experimental]\npipeline_parallel_degree = 4\n";
    torchtitan_t t;
    err_t e;
    CHECK_ERR(torchtitan_read(bad, strlen(bad), "old.toml", 8, &t, &e), &e, ERR_INPUT,
              "training.batch_size", "4 pipeline micro-batches");
    torchtitan_free(&t);
}

/* Pipeline stages as torchtitan splits the layers. December 2024
 * (9dec370 generate_split_points): Llama 3.1 405B's 126 layers on PP 8 are
 * 15/16 x 6/15, the split its benchmark ran; split points given say the
 * stages. From 2025 the embedding and output count as layers and the
 * remainder goes to the first stages: Llama 3 8B on PP 4 is 8/9/8/7,
 * simulated with equal middle stages as 8/9/9/6 (the largest stage and
 * the total kept), with a note; pipeline_parallel_layers_per_stage must fit
 * exactly in mid 2025, and late 2025 reads the first/last-stage
 * shortfalls. */
static void test_pipeline_split(void)
{
    static const struct {
        const char *text;
        int gpus, vpp, first, last;
        const char *note; /* a note naming this field must be there */
    } cases[] = {
        {"[model]\nname = \"llama3\"\nflavor = \"405B\"\n[training]\nbatch_size = 32\n"
         "tensor_parallel_degree = 8\n[experimental]\npipeline_parallel_degree = 8\n",
         512, 1, 15, 15, "parallelism.pipeline_parallel_degree"},
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nbatch_size = 4\n"
         "[experimental]\npipeline_parallel_degree = 2\n"
         "pipeline_parallel_split_points = [\"layers.14\"]\n",
         8, 1, 14, 0, "experimental.pipeline_parallel_split_points"},
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
         "pipeline_parallel_degree = 4\n",
         8, 1, 8, 6, "parallelism.pipeline_parallel_degree"},
        /* (32 + 2) / (PP 2 x 17-layer stages): 16/16, even */
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
         "pipeline_parallel_degree = 2\npipeline_parallel_layers_per_stage = 17\n",
         8, 1, 0, 0, NULL},
        /* Interleaved: 3 split points on PP 2 are 2 stages per rank,
         * 7/8/8/9 */
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
         "pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"Interleaved1F1B\"\n"
         "pipeline_parallel_split_points = [\"layers.7\", \"layers.15\", \"layers.23\"]\n",
         8, 2, 7, 9, "parallelism.pipeline_parallel_split_points"},
        /* late 2025: no shortfall on either end, 8 layers a stage: even */
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
         "pipeline_parallel_degree = 4\npipeline_parallel_layers_per_stage = 8\n"
         "pipeline_parallel_first_stage_less_layers = 0\n"
         "pipeline_parallel_last_stage_less_layers = 0\n",
         8, 1, 0, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        torchtitan_t t;
        err_t e;
        int rc = torchtitan_read(cases[i].text, strlen(cases[i].text), "pp.toml", cases[i].gpus,
                                 &t, &e);
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        if (rc)
            fprintf(stderr, "case %zu: %s\n", i, e.msg);
        CU_ASSERT_EQUAL(t.layout.vpp, cases[i].vpp);
        CU_ASSERT_EQUAL(t.layout.first_stage_layers, cases[i].first);
        CU_ASSERT_EQUAL(t.layout.last_stage_layers, cases[i].last);
        if (cases[i].note)
            CU_ASSERT_TRUE(has_note(&t, cases[i].note));
        torchtitan_free(&t);
    }
    /* the 8/9/8/7 note says what torchtitan does and what is simulated */
    const char *pp4 = cases[2].text;
    torchtitan_t t;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(torchtitan_read(pp4, strlen(pp4), "pp.toml", 8, &t, &e), 0);
    bool said = false;
    for (size_t i = 0; i < t.notes.n; i++)
        said = said || (strstr(t.notes.items[i].text, "8/9/8/7") &&
                        strstr(t.notes.items[i].text, "8, 2 x 9, 6"));
    CU_ASSERT_TRUE(said);
    torchtitan_free(&t);
    static const struct {
        const char *text;
        const char *needles[2];
    } bad[] = {
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_degree = 2\n"
         "pipeline_parallel_split_points = [\"layers.10\", \"layers.20\"]\n",
         {"pipeline_parallel_split_points", "2 split points for 2"}},
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_degree = 2\n"
         "pipeline_parallel_split_points = [\"layer.10\"]\n",
         {"pipeline_parallel_split_points", "layers.N"}},
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_degree = 2\n"
         "pipeline_parallel_split_points = [\"layers.40\"]\n",
         {"pipeline_parallel_split_points", "to 31"}},
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_degree = 4\n"
         "pipeline_parallel_layers_per_stage = 8\n",
         {"pipeline_parallel_layers_per_stage", "exactly"}},
        {"[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_degree = 2\n"
         "pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 17\n",
         {"pipeline_parallel_layers_per_stage", "at least 2"}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = torchtitan_read(bad[i].text, strlen(bad[i].text), "pp.toml", 8, &t, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, bad[i].needles[0], bad[i].needles[1]);
        torchtitan_free(&t);
    }
}

static void test_bad_configs(void)
{
    static const struct {
        const char *text;
        int gpus;
        const char *needles[2];
    } cases[] = {
        {"[model]\nname = \"llama3\"\nflavor = \"3B\"\n", 8, {"model.flavor", "8B, 70B, 405B"}},
        {"[model]\nname = \"flux\"\nflavor = \"x\"\n", 8, {"model.flavor", "catalog"}},
        {"[parallelism]\ntensor_parallel_degree = 3\n", 8, {"parallelism", "multiple"}},
        {"[parallelism]\ndata_parallel_shard_degree = 4\n", 8, {"parallelism", "--gpus is 8"}},
        {"[parallelism]\ntensor_parallel_degree = \"8\"\n", 8, {"tensor_parallel_degree",
                                                              "whole number"}},
        {"[parallelism]\npipeline_parallel_degree = 2\npipeline_parallel_schedule = \"Fast\"\n",
         8,
         {"pipeline_parallel_schedule", "'Fast'"}},
        {"[activation_checkpoint]\nmode = \"some\"\n", 8, {"activation_checkpoint.mode", "some"}},
        {"[training]\nlocal_batch_size = 3\nglobal_batch_size = 10\n", 8,
         {"global_batch_size", "multiple"}},
        /* torchtitan refuses async TP on an eager model (2024: "Async TP
         * requires --training.compile"; late 2025: 'model' in
         * compile.components) */
        {"[parallelism]\ntensor_parallel_degree = 8\nenable_async_tensor_parallel = true\n"
         "[compile]\nenable = true\ncomponents = [\"loss\"]\n",
         8,
         {"enable_async_tensor_parallel", "compiled"}},
        {"[training]\nbatch_size = 1\ncompile = false\ntensor_parallel_degree = 8\n"
         "[experimental]\nenable_async_tensor_parallel = true\n",
         8,
         {"enable_async_tensor_parallel", "compiled"}},
        {"[training\n", 8, {"t.toml", "line 1"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        torchtitan_t t;
        err_t e;
        int rc = torchtitan_read(cases[i].text, strlen(cases[i].text), "t.toml", cases[i].gpus,
                                 &t, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, cases[i].needles[0], cases[i].needles[1]);
        torchtitan_free(&t);
    }
}

TEST_SUITE(suite_torchtitan, "torchtitan", TEST(test_toml_values), TEST(test_toml_errors),
           TEST(test_llama3_8b), TEST(test_llama3_70b), TEST(test_llama3_405b),
           TEST(test_old_keys_and_options), TEST(test_flavor_names), TEST(test_compile_components),
           TEST(test_old_pipeline_microbatches),
           TEST(test_pipeline_split), TEST(test_bad_configs));
