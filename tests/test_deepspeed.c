/* Tests of inputs/deepspeed: DeepSpeed configs as users have them
 * (tests/fixtures/deepspeed, sources in its README: the Transformers
 * DeepSpeed guide's ZeRO-2 offload, ZeRO-3 "auto" and NVMe examples, and the
 * config behind the T011 log), with "auto" resolved from the command line
 * or the model and said, offload and overlap honoured, and bad input
 * refused in one line. */
#include <stdio.h>
#include <string.h>

#include "common/units.h"
#include "inputs/deepspeed.h"
#include "models/model.h"
#include "tests/testing.h"

static bool has_note(const notes_t *n, const char *field, note_kind_t kind)
{
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->items[i].field, field) == 0 && n->items[i].kind == kind)
            return true;
    return false;
}

static int apply(const char *fixture_name, const deepspeed_given_t *g, layout_t *l,
                 sim_options_t *o, notes_t *n, err_t *e)
{
    layout_defaults(l);
    sim_options_default(o);
    notes_init(n);
    int rc = deepspeed_apply_file(fixture(fixture_name), g, l, o, n, e);
    if (rc)
        fprintf(stderr, "%s: %s\n", fixture_name, e->msg);
    return rc;
}

/* The plain config scaleplan always read: batch sizes, ZeRO-2, bf16. */
static void test_plain_config(void)
{
    layout_t l;
    sim_options_t o;
    notes_t n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(apply("configs/ds_config.json", NULL, &l, &o, &n, &e), 0);
    CU_ASSERT_EQUAL(l.zero, 2);
    CU_ASSERT_EQUAL(l.micro_batch, 2);
    CU_ASSERT_EQUAL(l.global_batch, 512);
    CU_ASSERT_EQUAL(l.grad_accum, 4);
    CU_ASSERT_EQUAL(l.precision, PRECISION_BF16);
    CU_ASSERT_TRUE(o.overlap_grad_reduce);
    CHECK_REL(o.bucket_params, 5e8, 0); /* DeepSpeed's reduce_bucket_size default */
    /* 512 = 2 x 4 x DP holds on 64 GPUs and not on 32 */
    model_t m;
    CU_ASSERT_EQUAL_FATAL(model_load("llama3-8b", &m, &e), 0);
    layout_t ok = l, bad = l;
    CU_ASSERT_EQUAL(layout_finalize(&ok, &m, 64, &e), 0);
    CHECK_ERR(layout_finalize(&bad, &m, 32, &e), &e, ERR_INPUT, "--grad-accum", "4 micro-batches");
    notes_free(&n);
}

/* transformers tests/deepspeed/ds_config_zero2.json: every Trainer-shared
 * value "auto", CPU optimizer offload. "auto" batch sizes come from the
 * flags given (--micro-batch 4) or defaults, and are said. */
static void test_zero2_offload_auto(void)
{
    layout_t l;
    sim_options_t o;
    notes_t n;
    err_t e;
    deepspeed_given_t g = {.micro_batch = 4};
    CU_ASSERT_EQUAL_FATAL(apply("deepspeed/zero2_offload.json", &g, &l, &o, &n, &e), 0);
    CU_ASSERT_EQUAL(l.zero, 2);
    CU_ASSERT_EQUAL(l.offload, LAYOUT_OFFLOAD_OPTIMIZER);
    CU_ASSERT_FALSE(l.offload_nvme);
    CU_ASSERT_EQUAL(l.precision, PRECISION_BF16); /* both "auto": bf16 assumed, said */
    CU_ASSERT_TRUE(has_note(&n, "bf16.enabled", NOTE_ASSUMED));
    CU_ASSERT_TRUE(has_note(&n, "train_micro_batch_size_per_gpu", NOTE_ASSUMED));
    CU_ASSERT_TRUE(has_note(&n, "train_batch_size", NOTE_ASSUMED));
    CU_ASSERT_TRUE(has_note(&n, "optimizer", NOTE_IGNORED));
    CU_ASSERT_TRUE(has_note(&n, "zero_optimization.allgather_bucket_size", NOTE_IGNORED));
    CU_ASSERT_TRUE(o.overlap_grad_reduce);
    CHECK_REL(o.bucket_params, 2e8, 0); /* written as 2e8 */
    CU_ASSERT_EQUAL(l.global_batch, 0);  /* derived: micro x DP x accumulation */
    notes_free(&n);
    /* An explicit precision resolves "auto". */
    deepspeed_given_t fp16 = {.have_precision = true, .precision = PRECISION_FP16};
    CU_ASSERT_EQUAL_FATAL(apply("deepspeed/zero2_offload.json", &fp16, &l, &o, &n, &e), 0);
    CU_ASSERT_EQUAL(l.precision, PRECISION_FP16);
    notes_free(&n);
}

/* The guide's ZeRO-3 config: optimizer and parameters offloaded to CPU,
 * the hidden-size buckets "auto": reduce_bucket_size = hidden^2 (the
 * Trainer's rule), 8192^2 = 67,108,864 for Llama 3 70B. */
static void test_zero3_auto(void)
{
    layout_t l;
    sim_options_t o;
    notes_t n;
    err_t e;
    deepspeed_given_t g = {.hidden = 8192, .have_precision = true, .precision = PRECISION_BF16};
    CU_ASSERT_EQUAL_FATAL(apply("deepspeed/zero3_auto.json", &g, &l, &o, &n, &e), 0);
    CU_ASSERT_EQUAL(l.zero, 3);
    CU_ASSERT_EQUAL(l.offload, LAYOUT_OFFLOAD_OPTIMIZER | LAYOUT_OFFLOAD_PARAMS);
    CHECK_REL(o.bucket_params, 67108864.0, 0);
    CU_ASSERT_TRUE(has_note(&n, "zero_optimization.reduce_bucket_size", NOTE_ASSUMED));
    CU_ASSERT_TRUE(has_note(&n, "zero_optimization.stage3_prefetch_bucket_size", NOTE_IGNORED));
    CU_ASSERT_TRUE(o.overlap_grad_reduce);
    notes_free(&n);
}

/* ZeRO-Infinity: both offloads to NVMe; the example's aio block nested in
 * zero_optimization (where DeepSpeed does not read it) is said to be
 * ignored. */
static void test_zero3_nvme(void)
{
    layout_t l;
    sim_options_t o;
    notes_t n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(apply("deepspeed/zero3_offload_nvme.json", NULL, &l, &o, &n, &e), 0);
    CU_ASSERT_TRUE(l.offload_nvme);
    CU_ASSERT_EQUAL(l.offload, LAYOUT_OFFLOAD_OPTIMIZER | LAYOUT_OFFLOAD_PARAMS);
    CU_ASSERT_TRUE(has_note(&n, "zero_optimization.aio", NOTE_IGNORED));
    CU_ASSERT_EQUAL(l.precision, PRECISION_FP16); /* only fp16 "auto" */
    notes_free(&n);
}

/* The T011 config (GPT 174.6B ZeRO-3 fp16): batch 1536 of micro-batches of
 * 4, activation_checkpointing that takes effect only with recompute. */
static void test_t011(void)
{
    layout_t l;
    sim_options_t o;
    notes_t n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(apply("deepspeed/t011_zero3_fp16.json", NULL, &l, &o, &n, &e), 0);
    CU_ASSERT_EQUAL(l.zero, 3);
    CU_ASSERT_EQUAL(l.precision, PRECISION_FP16);
    CU_ASSERT_EQUAL(l.global_batch, 1536);
    CU_ASSERT_EQUAL(l.micro_batch, 4);
    CU_ASSERT_TRUE(has_note(&n, "activation_checkpointing", NOTE_ASSUMED));
    CU_ASSERT_TRUE(has_note(&n, "flops_profiler", NOTE_IGNORED));
    CU_ASSERT_TRUE(has_note(&n, "fp16", NOTE_IGNORED)); /* loss scaling */
    notes_free(&n);
}

static void test_bad_configs(void)
{
    static const struct {
        const char *text;
        const char *needles[2];
    } cases[] = {
        {"{\"train_micro_batch_size_per_gpu\": 0}", {"train_micro_batch_size_per_gpu", "t.json"}},
        {"{\"fp16\": {\"enabled\": true}, \"bf16\": {\"enabled\": true}}", {"bf16", "both"}},
        {"{\"amp\": {\"enabled\": true}}", {"amp.enabled", "ZeRO"}},
        {"{\"zero_optimization\": {\"stage\": 2, \"offload_param\": {\"device\": \"cpu\"}}}",
         {"offload_param", "stage 3"}},
        {"{\"zero_optimization\": {\"stage\": 2, \"reduce_buckets\": 5}}",
         {"zero_optimization.reduce_buckets", "not a DeepSpeed"}},
        {"{\"zero_optimization\": {\"offload_optimizer\": {\"device\": \"gpu\"}}}",
         {"device", "'gpu'"}},
        {"{\"zero_optimization\": {\"stage\": \"auto\"}}", {"stage", "auto"}},
        {"{\"zero_optimization\": {\"stage\": 4}}", {"stage", "between 0 and 3"}},
        {"{\"train_batch_size\": \"many\"}", {"train_batch_size", "whole number"}},
        {"{\"zero_optimization\": {\"stage\": 3,", {"t.json", "JSON"}},
        {"[1, 2]", {"t.json", "object"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        layout_t l;
        layout_defaults(&l);
        sim_options_t o;
        sim_options_default(&o);
        notes_t n;
        notes_init(&n);
        err_t e;
        int rc = deepspeed_apply(cases[i].text, strlen(cases[i].text), "t.json", NULL, &l, &o,
                                 &n, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, cases[i].needles[0], cases[i].needles[1]);
        notes_free(&n);
    }
}

/* Issue 35 item 8e: a DeepSpeed config that gives a key twice is refused
 * with the file and the key, at the top level and inside a block. */
static void test_duplicate_keys(void)
{
    static const struct {
        const char *text, *key;
    } cases[] = {
        {"{\"train_batch_size\": 512, \"train_batch_size\": 256}", "t.json: train_batch_size"},
        {"{\"zero_optimization\": {\"stage\": 1, \"overlap_comm\": true, \"stage\": 3}}",
         "t.json: zero_optimization.stage"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        layout_t l;
        layout_defaults(&l);
        sim_options_t o;
        sim_options_default(&o);
        notes_t n;
        notes_init(&n);
        err_t e;
        int rc = deepspeed_apply(cases[i].text, strlen(cases[i].text), "t.json", NULL, &l, &o,
                                 &n, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, cases[i].key, "given twice");
        notes_free(&n);
    }
}

/* The fields of the notes that say an absent key's default, in order. */
static void absent_fields(const notes_t *n, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t i = 0; i < n->n; i++)
        if (strncmp(n->items[i].text, "absent: ", 8) == 0) {
            size_t used = strlen(out);
            snprintf(out + used, cap - used, "%s%s", used ? "," : "", n->items[i].field);
        }
}

/* Issue 35 item 8f: every value the reader fills in for a key the config
 * leaves out is said ("absent: ..."): the batch sizes and ZeRO of an empty
 * config; the stage, offload device and ratio, overlap_comm, bucket size
 * and cpu_checkpointing of blocks that are there but bare; the flags that
 * stand in when given (--micro-batch, --zero). A config that gives them
 * (configs/ds_config.json has the batch, stage and overlap keys) says only
 * what it leaves out (the bucket size). */
static void test_defaults_said(void)
{
    deepspeed_given_t flags = {.micro_batch = 4, .have_zero = true, .zero = 2};
    static const char *bare = "{\"zero_optimization\": {\"offload_optimizer\": {\"device\": "
                              "\"cpu\"}}, \"activation_checkpointing\": {}}";
    const struct {
        const char *text;
        const deepspeed_given_t *g;
        const char *fields, *needle;
    } cases[] = {
        {"{}", NULL,
         "train_micro_batch_size_per_gpu,gradient_accumulation_steps,train_batch_size,"
         "zero_optimization",
         "ZeRO stage 0"},
        {"{}", &flags,
         "train_micro_batch_size_per_gpu,gradient_accumulation_steps,train_batch_size,"
         "zero_optimization",
         "--zero 2"},
        {bare, NULL,
         "train_micro_batch_size_per_gpu,gradient_accumulation_steps,train_batch_size,"
         "zero_optimization.stage,zero_optimization.offload_optimizer.ratio,"
         "zero_optimization.overlap_comm,zero_optimization.reduce_bucket_size,"
         "activation_checkpointing.cpu_checkpointing",
         "5e8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        layout_t l;
        layout_defaults(&l);
        sim_options_t o;
        sim_options_default(&o);
        notes_t n;
        notes_init(&n);
        err_t e;
        CU_ASSERT_EQUAL_FATAL(deepspeed_apply(cases[i].text, strlen(cases[i].text), "t.json",
                                              cases[i].g, &l, &o, &n, &e),
                              0);
        char got[1024];
        absent_fields(&n, got, sizeof got);
        if (strcmp(got, cases[i].fields) != 0)
            fprintf(stderr, "\n  said: %s\n  want: %s\n", got, cases[i].fields);
        CU_ASSERT_STRING_EQUAL(got, cases[i].fields);
        bool found = false;
        for (size_t k = 0; k < n.n; k++)
            found = found || strstr(n.items[k].text, cases[i].needle);
        CU_ASSERT_TRUE(found);
        notes_free(&n);
    }
    layout_t l;
    sim_options_t o;
    notes_t n;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(apply("configs/ds_config.json", NULL, &l, &o, &n, &e), 0);
    char got[1024];
    absent_fields(&n, got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, "zero_optimization.reduce_bucket_size");
    notes_free(&n);
}

TEST_SUITE(suite_deepspeed, "deepspeed", TEST(test_plain_config), TEST(test_zero2_offload_auto),
           TEST(test_zero3_auto), TEST(test_zero3_nvme), TEST(test_t011), TEST(test_bad_configs),
           TEST(test_duplicate_keys), TEST(test_defaults_said));
