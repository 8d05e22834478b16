/* Tests of inputs/yaml and inputs/accelerate: the YAML subset accelerate's
 * configs use, typed as PyYAML types it, refused line by line beyond it; an
 * accelerate config read into a preset, a layout and notes, with bad values
 * refused naming the key; and the command line's --accelerate-config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/accelerate.h"
#include "inputs/yaml.h"
#include "tests/testing.h"

static bool has_note(const notes_t *n, const char *field, note_kind_t kind)
{
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->items[i].field, field) == 0 && n->items[i].kind == kind)
            return true;
    return false;
}

/* Block mappings, comments, quotes, flow and block lists, YAML 1.1 types. */
static void test_yaml_subset(void)
{
    const char *text = "# accelerate config\n"
                       "---\n"
                       "distributed_type: DEEPSPEED   # the backend\n"
                       "deepspeed_config:\n"
                       "  zero_stage: 3\n"
                       "  gradient_clipping: 1.0\n"
                       "  offload_param_device: 'no''ne'\n"
                       "  nested:\n"
                       "    deeper: \"a \\\"b\\\" #c\"\n"
                       "  lr: 1e-5\n"
                       "downcast_bf16: 'no'\n"
                       "mixed_precision: no\n"
                       "use_cpu: Off\n"
                       "main_process_ip: null\n"
                       "empty_key:\n"
                       "tpu_env: []\n"
                       "gpu_ids: [0, 1, '2']\n"
                       "commands:\n"
                       "- echo a\n"
                       "- 'echo: b'\n"
                       "num_processes: -8\n";
    toml_doc_t d;
    err_t e;
    int rc = yaml_parse(text, strlen(text), "t.yaml", &d, &e);
    if (rc)
        fprintf(stderr, "\n%s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    toml_entry_t *z = toml_find(&d, "deepspeed_config.zero_stage");
    CU_ASSERT_TRUE(z && z->v.type == TOML_INT && z->v.i == 3 && z->v.line == 5);
    toml_entry_t *f = toml_find(&d, "deepspeed_config.gradient_clipping");
    CU_ASSERT_TRUE(f && f->v.type == TOML_FLOAT && f->v.f == 1.0);
    toml_entry_t *q = toml_find(&d, "deepspeed_config.offload_param_device");
    CU_ASSERT_TRUE(q && q->v.type == TOML_STRING && strcmp(q->v.str, "no'ne") == 0);
    toml_entry_t *n = toml_find(&d, "deepspeed_config.nested.deeper");
    CU_ASSERT_TRUE(n && strcmp(n->v.str, "a \"b\" #c") == 0);
    /* PyYAML reads 1e-5 (no decimal point) as a string */
    toml_entry_t *lr = toml_find(&d, "deepspeed_config.lr");
    CU_ASSERT_TRUE(lr && lr->v.type == TOML_STRING);
    toml_entry_t *dc = toml_find(&d, "downcast_bf16"), *mp = toml_find(&d, "mixed_precision");
    CU_ASSERT_TRUE(dc && dc->v.type == TOML_STRING && strcmp(dc->v.str, "no") == 0);
    CU_ASSERT_TRUE(mp && mp->v.type == TOML_BOOL && !mp->v.b); /* unquoted no is false */
    toml_entry_t *cpu = toml_find(&d, "use_cpu");
    CU_ASSERT_TRUE(cpu && cpu->v.type == TOML_BOOL && !cpu->v.b);
    CU_ASSERT_PTR_NULL(toml_find(&d, "main_process_ip")); /* null: as if absent */
    CU_ASSERT_PTR_NULL(toml_find(&d, "empty_key"));
    toml_entry_t *env = toml_find(&d, "tpu_env"), *ids = toml_find(&d, "gpu_ids");
    CU_ASSERT_TRUE(env && env->v.type == TOML_ARRAY && env->v.n_items == 0);
    CU_ASSERT_TRUE(ids && ids->v.n_items == 3 && ids->v.items[1].i == 1 &&
                   ids->v.items[2].type == TOML_STRING);
    toml_entry_t *cmds = toml_find(&d, "commands");
    CU_ASSERT_TRUE(cmds && cmds->v.n_items == 2 && strcmp(cmds->v.items[1].str, "echo: b") == 0);
    toml_entry_t *np = toml_find(&d, "num_processes");
    CU_ASSERT_TRUE(np && np->v.i == -8);
    toml_free(&d);
}

/* What the reader does not take is one line naming file and line. */
static void test_yaml_refusals(void)
{
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"a: &x 1\n", "line 1: '&'"},
        {"a: *x\n", "'*'"},
        {"a: !!python/tuple [1]\n", "'!'"},
        {"a: |\n  text\n", "'|'"},
        {"a:\n\tb: 1\n", "line 2: a tab"},
        {"a: 1\na: 2\n", "line 2: 'a' is given twice"},
        {"a:\n  b: 1\n c: 2\n", "line 3: the indentation matches no enclosing key"},
        {"a: 1\n  b: 2\n", "line 2: indented where no mapping opens"},
        {"a:\n- b: 1\n", "lists of mappings"},
        {"a: 1\n---\nb: 2\n", "line 2: a second document"},
        {"a: 'open\n", "end with its quote"},
        {"a: 010\n", "octal"},
        {"a: {b: 1}\n", "'{'"},
        {"a: [1, [2]]\n", "nested lists"},
        {"a: [1, 2\n", "close with ]"},
        {"- 1\n", "must follow a key"},
        {"a.b: 1\n", "a key with '.'"},
        {"just text\n", "expected 'key: value'"},
        {"a: 99999999999999999999\n", "out of range"},
        {"a: \"\\q\"\n", "escape"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        toml_doc_t d;
        err_t e;
        int rc = yaml_parse(cases[i].text, strlen(cases[i].text), "bad.yaml", &d, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "bad.yaml: ", cases[i].needle);
        CU_ASSERT_PTR_NULL(strchr(e.msg, '\n'));
        CU_ASSERT_EQUAL(d.n, 0);
        toml_free(&d);
    }
    /* deeper than 16 levels */
    char deep[2048] = "";
    size_t o = 0;
    for (int i = 0; i < 20; i++)
        o += (size_t)snprintf(deep + o, sizeof deep - o, "%*sk%d:\n", 2 * i, "", i);
    snprintf(deep + o, sizeof deep - o, "%*sv: 1\n", 40, "");
    toml_doc_t d;
    err_t e;
    CHECK_ERR(yaml_parse(deep, strlen(deep), "deep.yaml", &d, &e), &e, ERR_INPUT, "nested deeper");
    toml_free(&d);
}

static int read_text(const char *text, accelerate_t *t, err_t *e)
{
    int rc = accelerate_read(text, strlen(text), "acc.yaml", t, e);
    if (rc)
        accelerate_free(t);
    return rc;
}

/* Each backend's block read into its preset and layout, defaults said. */
static void test_accelerate_reading(void)
{
    accelerate_t t;
    err_t e;
    layout_t l;
    notes_t n;
    CU_ASSERT_EQUAL_FATAL(read_text("distributed_type: DEEPSPEED\nnum_processes: 16\n"
                                    "mixed_precision: fp16\ndeepspeed_config:\n"
                                    "  zero_stage: 3\n  offload_optimizer_device: nvme\n"
                                    "  offload_param_device: cpu\n"
                                    "  gradient_accumulation_steps: 4\n"
                                    "  zero3_init_flag: true\n",
                                    &t, &e),
                          0);
    CU_ASSERT_STRING_EQUAL(t.framework, "deepspeed");
    CU_ASSERT_EQUAL(t.n_processes, 16);
    layout_defaults(&l);
    notes_init(&n);
    CU_ASSERT_EQUAL(accelerate_apply(&t, NULL, &l, NULL, &n, &e), 0);
    CU_ASSERT_EQUAL(l.zero, 3);
    CU_ASSERT_EQUAL(l.offload, LAYOUT_OFFLOAD_OPTIMIZER | LAYOUT_OFFLOAD_PARAMS);
    CU_ASSERT_TRUE(l.offload_nvme);
    CU_ASSERT_EQUAL(l.grad_accum, 4);
    CU_ASSERT_EQUAL(l.precision, PRECISION_FP16);
    CU_ASSERT_TRUE(has_note(&n, "deepspeed_config.zero3_init_flag", NOTE_IGNORED));
    notes_free(&n);
    accelerate_free(&t);
    /* accelerate's defaults, each said: ZeRO 2, fp32 */
    CU_ASSERT_EQUAL_FATAL(read_text("distributed_type: DEEPSPEED\ndeepspeed_config: {}\n", &t, &e),
                          0);
    CU_ASSERT_EQUAL(t.zero, 2);
    CU_ASSERT_EQUAL(t.precision, PRECISION_FP32);
    CU_ASSERT_TRUE(has_note(&t.notes, "deepspeed_config.zero_stage", NOTE_ASSUMED));
    CU_ASSERT_TRUE(has_note(&t.notes, "mixed_precision", NOTE_ASSUMED));
    accelerate_free(&t);
    /* FSDP by enum number, hybrid sharding said, CPU offload, checkpointing */
    CU_ASSERT_EQUAL_FATAL(read_text("distributed_type: FSDP\nmixed_precision: bf16\n"
                                    "fsdp_config:\n  fsdp_sharding_strategy: 2\n"
                                    "  fsdp_offload_params: true\n"
                                    "  fsdp_activation_checkpointing: 'true'\n"
                                    "deepspeed_config:\n  zero_stage: 3\n",
                                    &t, &e),
                          0);
    CU_ASSERT_STRING_EQUAL(t.framework, "fsdp");
    CU_ASSERT_EQUAL(t.zero, 2);
    CU_ASSERT_EQUAL(t.offload, LAYOUT_OFFLOAD_OPTIMIZER); /* parameters stay: SHARD_GRAD_OP */
    CU_ASSERT_TRUE(t.full_recompute);
    CU_ASSERT_TRUE(has_note(&t.notes, "deepspeed_config.zero_stage", NOTE_IGNORED));
    accelerate_free(&t);
    CU_ASSERT_EQUAL_FATAL(read_text("distributed_type: FSDP\nmixed_precision: bf16\n"
                                    "fsdp_config:\n  fsdp_sharding_strategy: HYBRID_SHARD\n",
                                    &t, &e),
                          0);
    CU_ASSERT_EQUAL(t.zero, 3);
    CU_ASSERT_TRUE(has_note(&t.notes, "fsdp_config.fsdp_sharding_strategy", NOTE_ASSUMED));
    accelerate_free(&t);
    /* FSDP2's boolean: no resharding after the forward is ZeRO-2 */
    CU_ASSERT_EQUAL_FATAL(read_text("distributed_type: FSDP\nmixed_precision: bf16\n"
                                    "fsdp_config:\n  fsdp_reshard_after_forward: false\n"
                                    "  fsdp_version: 2\n",
                                    &t, &e),
                          0);
    CU_ASSERT_EQUAL(t.zero, 2);
    accelerate_free(&t);
    /* FSDP2 with CP: torchtitan's stack, said; its fsdp_config block still read */
    CU_ASSERT_EQUAL_FATAL(read_text("distributed_type: FSDP\nmixed_precision: bf16\n"
                                    "num_processes: 8\nfsdp_config:\n  fsdp_version: 2\n"
                                    "  fsdp_state_dict_type: SHARDED_STATE_DICT\n"
                                    "parallelism_config:\n  parallelism_config_cp_size: 8\n",
                                    &t, &e),
                          0);
    CU_ASSERT_STRING_EQUAL(t.framework, "torchtitan-2025-06");
    CU_ASSERT_EQUAL(t.cp, 8);
    CU_ASSERT_TRUE(has_note(&t.notes, "distributed_type", NOTE_ASSUMED));
    CU_ASSERT_FALSE(has_note(&t.notes, "fsdp_config.fsdp_version", NOTE_ASSUMED));
    for (size_t i = 0; i < t.notes.n; i++)
        CU_ASSERT_PTR_NULL(strstr(t.notes.items[i].text, "does not use"));
    accelerate_free(&t);
    /* FSDP2 under the fsdp preset: said */
    CU_ASSERT_EQUAL_FATAL(read_text("distributed_type: FSDP\nmixed_precision: bf16\n"
                                    "fsdp_config:\n  fsdp_version: 2\n",
                                    &t, &e),
                          0);
    CU_ASSERT_TRUE(has_note(&t.notes, "fsdp_config.fsdp_version", NOTE_ASSUMED));
    accelerate_free(&t);
    /* a single process without num_processes; the parallelism degrees */
    CU_ASSERT_EQUAL_FATAL(read_text("distributed_type: 'NO'\nmixed_precision: bf16\n", &t, &e), 0);
    CU_ASSERT_EQUAL(t.n_processes, 1);
    CU_ASSERT_STRING_EQUAL(t.framework, "pytorch-ddp");
    accelerate_free(&t);
}

/* Bad values name the file and the key; no partial success. */
static void test_accelerate_refusals(void)
{
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"num_processes: 8\n", "distributed_type: missing"},
        {"distributed_type: XLA\n", "XLA is not read here"},
        {"distributed_type: MULTI_GPU\nuse_cpu: true\n", "use_cpu"},
        {"distributed_type: MULTI_GPU\nmixed_precision: int4\n", "mixed_precision"},
        {"distributed_type: MULTI_GPU\nnum_processes: 0\n", "num_processes: line 2: must be 1"},
        {"distributed_type: MULTI_GPU\nnum_processes: eight\n", "expected an integer"},
        {"distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 4\n", "zero_stage"},
        {"distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n"
         "  offload_param_device: cpu\n",
         "parameter offload needs zero_stage 3"},
        {"distributed_type: DEEPSPEED\ndeepspeed_config:\n  offload_optimizer_device: gpu\n",
         "'gpu' is not an offload device"},
        {"distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: /no/such.json\n",
         "deepspeed_config_file: line 3: '/no/such.json' is found neither"},
        {"distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: HALF\n",
         "'HALF' is not a sharding strategy"},
        {"distributed_type: FSDP\nfsdp_config:\n  fsdp_offload_params: maybe\n",
         "expected true or false"},
        {"distributed_type: FSDP\nnum_processes: 8\nparallelism_config:\n"
         "  parallelism_config_tp_size: 2\n  parallelism_config_dp_shard_size: 2\n",
         "multiply to 4, not num_processes 8"},
        {"distributed_type: FSDP\n  x: 1\n", "acc.yaml: line 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        accelerate_t t;
        err_t e;
        int rc = read_text(cases[i].text, &t, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "acc.yaml", cases[i].needle);
        CU_ASSERT_PTR_NULL(strchr(e.msg, '\n'));
    }
}

/* --accelerate-config on the command line: flags fill and override, the
 * GPU count comes from num_processes, one framework input at a time. */
static void test_accelerate_cli(void)
{
    char *out = NULL, *err = NULL;
    const char *yaml = "tests/fixtures/real/accelerate/trl_deepspeed_zero3.yaml";
    char args[512];
    snprintf(args, sizeof args,
             "sim --accelerate-config %s --model llama3-8b --gpu h100-sxm --seq-len 4096 "
             "--micro-batch 2 --zero 2 --json",
             yaml);
    CU_ASSERT_EQUAL(run_cli(args, &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "\"zero\":\t2") : NULL);
    CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, "8, the config's num_processes") : NULL);
    free(out);
    out = NULL;
    snprintf(args, sizeof args,
             "sim --accelerate-config %s --deepspeed tests/fixtures/deepspeed/zero3_auto.json "
             "--model llama3-8b --gpu h100-sxm --seq-len 4096 --micro-batch 2",
             yaml);
    CU_ASSERT_EQUAL(run_cli(args, NULL, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(err ? strstr(err, "--accelerate-config: give one framework's") : NULL);
    free(err);
    err = NULL;
    CU_ASSERT_EQUAL(run_cli("sim --accelerate-config tests/fixtures/configs/malformed.json "
                            "--model llama3-8b --gpu h100-sxm --seq-len 4096 --micro-batch 2",
                            NULL, &err),
                    2);
    CU_ASSERT_TRUE(err && count_lines(err) == 1 && strstr(err, "malformed.json"));
    free(err);
}

TEST_SUITE(suite_accelerate, "accelerate", TEST(test_yaml_subset), TEST(test_yaml_refusals),
           TEST(test_accelerate_reading), TEST(test_accelerate_refusals),
           TEST(test_accelerate_cli));
