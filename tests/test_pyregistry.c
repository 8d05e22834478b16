/* Tests of inputs/pyregistry: torchtitan's Python config registries read by
 * structure (a job's function, the functions it calls, field assignments),
 * mapped to the TOML-era keys, and everything outside the subset refused in
 * one line naming file and line; then inputs/torchtitan on top. */
#include <stdio.h>
#include <string.h>

#include "inputs/pyregistry.h"
#include "inputs/torchtitan.h"
#include "tests/testing.h"

static const char *REGISTRY =
    "from torchtitan.config import ParallelismConfig, TrainingConfig\n"
    "from . import model_registry\n"
    "\n"
    "\n"
    "def llama3_base() -> Trainer.Config:\n"
    "    \"\"\"A base job.\n"
    "    Two lines of docstring.\"\"\"\n"
    "    model_spec = model_registry(\"70B\", attn_backend=\"flex\")  # comment\n"
    "    return Trainer.Config(\n"
    "        model_spec=model_spec,\n"
    "        optimizer=default_adamw(lr=3e-4),\n"
    "        training=TrainingConfig(\n"
    "            num_tokens_per_microbatch_per_dp_rank=4 * 8_192,\n"
    "            max_context_length=8192,\n"
    "            steps=1000,\n"
    "        ),\n"
    "        parallelism=ParallelismConfig(tensor_parallel_degree=8, "
    "data_parallel_shard_degree=4),\n"
    "        activation_checkpoint=FullAC.Config(),\n"
    "        dataloader=Loader.Config(dataset=DATASETS[\"c4\"]),\n"
    "    )\n"
    "\n"
    "\n"
    "def llama3_derived() -> Trainer.Config:\n"
    "    config = llama3_base()\n"
    "    config.parallelism.pipeline_parallel_degree = 2\n"
    "    config.compile = CompileConfig(enable=True, components=[\"model\"])\n"
    "    config.model_spec = model_registry(\"70B\", "
    "converters=[Float8LinearConverter.Config()])\n"
    "    assert config.model_spec is not None\n"
    "    return config\n"
    "\n"
    "\n"
    "def llama3_loop() -> Trainer.Config:\n"
    "    config = llama3_base()\n"
    "    for x in range(3):\n"
    "        pass\n"
    "    return config\n"
    "\n"
    "\n"
    "def llama3_computed() -> Trainer.Config:\n"
    "    config = llama3_base()\n"
    "    config.parallelism.tensor_parallel_degree = len(devices) // 2\n"
    "    return config\n"
    "\n"
    "\n"
    "def llama3_args() -> Trainer.Config:\n"
    "    return llama3_base(8)\n"
    "\n"
    "\n"
    "def llama3_self() -> Trainer.Config:\n"
    "    return llama3_self()\n";

static const toml_entry_t *entry(const toml_doc_t *d, const char *key)
{
    const toml_entry_t *e = toml_find(d, key);
    if (!e)
        fprintf(stderr, "\nno %s\n", key);
    return e;
}

/* A base job and one derived from it, read into the TOML-era keys. */
static void test_registry_subset(void)
{
    toml_doc_t d;
    notes_t n;
    err_t e;
    notes_init(&n);
    int rc = pyregistry_read(REGISTRY, strlen(REGISTRY), "reg.py", "llama3_derived", &d, &n, &e);
    if (rc)
        fprintf(stderr, "\n%s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    const toml_entry_t *x;
    CU_ASSERT_TRUE((x = entry(&d, "model.name")) && !strcmp(x->v.str, "llama3"));
    CU_ASSERT_TRUE((x = entry(&d, "model.flavor")) && !strcmp(x->v.str, "70B"));
    CU_ASSERT_TRUE((x = entry(&d, "model.converters")) && x->v.n_items == 1 &&
                   !strcmp(x->v.items[0].str, "float8"));
    CU_ASSERT_TRUE((x = entry(&d, "training.seq_len")) && x->v.i == 8192);
    CU_ASSERT_TRUE((x = entry(&d, "training.local_batch_size")) && x->v.i == 4); /* 4 x 8192 tokens */
    CU_ASSERT_TRUE((x = entry(&d, "parallelism.tensor_parallel_degree")) && x->v.i == 8);
    CU_ASSERT_TRUE((x = entry(&d, "parallelism.pipeline_parallel_degree")) && x->v.i == 2);
    CU_ASSERT_TRUE((x = entry(&d, "compile.enable")) && x->v.b);
    CU_ASSERT_TRUE((x = entry(&d, "activation_checkpoint.mode")) && !strcmp(x->v.str, "full"));
    CU_ASSERT_TRUE(notes_has(&n, "optimizer") && notes_has(&n, "dataloader"));
    CU_ASSERT_TRUE(notes_has(&n, "model.name"));
    toml_free(&d);
    notes_free(&n);
    /* through inputs/torchtitan: the layout the TOML form would give */
    torchtitan_t t;
    CU_ASSERT_EQUAL_FATAL(torchtitan_read_registry(REGISTRY, strlen(REGISTRY), "reg.py",
                                                   "llama3_derived", 0, false, &t, &e),
                          0);
    CU_ASSERT_STRING_EQUAL(t.model_name, "llama3-70b");
    CU_ASSERT_EQUAL(t.layout.tp, 8);
    CU_ASSERT_EQUAL(t.layout.pp, 2);
    /* local batch 4 on each of 4 shards; with PP its micro-batches are 1 sequence
     * (pipeline_parallel_microbatch_size's default) */
    CU_ASSERT_EQUAL(t.layout.global_batch, 16);
    CU_ASSERT_EQUAL(t.layout.seq_len, 8192);
    CU_ASSERT_EQUAL(t.world_size, 64);
    CU_ASSERT_STRING_EQUAL(t.framework, "torchtitan-2025-12");
    torchtitan_free(&t);
}

/* What is outside the subset is refused naming file and line. */
static void test_registry_refusals(void)
{
    static const struct {
        const char *function, *needle;
    } cases[] = {
        {"llama3_loop", "line 34: 'for ...' is outside what this reader takes"},
        {"llama3_computed", "line 41: parallelism.tensor_parallel_degree is computed"},
        {"llama3_args", "line 46: calls llama3_base with arguments"},
        {"llama3_self", "deeper than 8"},
        {"nosuch", "add --torchtitan-config NAME, the function of the job, e.g. "
                   "--torchtitan-config llama3_base"},
        {NULL, "a registry holds many jobs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        toml_doc_t d;
        notes_t n;
        err_t e;
        notes_init(&n);
        int rc = pyregistry_read(REGISTRY, strlen(REGISTRY), "reg.py", cases[i].function, &d, &n,
                                 &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "reg.py", cases[i].needle);
        CU_ASSERT_PTR_NULL(strchr(e.msg, '\n'));
        CU_ASSERT_EQUAL(d.n, 0);
        toml_free(&d);
        notes_free(&n);
    }
    static const struct {
        const char *text, *needle;
    } texts[] = {
        {"def f():\n    return Trainer.Config(x='open\n", "line 2: a string not closed"},
        {"def f():\n    return Trainer.Config(\n", "a bracket never closed"},
        {"def f():\n    return 3\n", "does not return a Trainer.Config"},
        {"def f():\n    return Trainer.Config(model_spec=spec())\n", "model_spec"},
        {"def f():\n    return Trainer.Config(model_spec=model_registry(\"8B\"), "
         "training=TrainingConfig(num_tokens_per_microbatch_per_dp_rank=1000, "
         "max_context_length=300))\n",
         "not a whole number"},
        {"x = 1\n", "no function definitions"},
        /* a list with a computed item: refused, the items read before it
         * released (fuzz_pyregistry found them leaked; make asan and make
         * valgrind check it here) */
        {"def f():\n    return Trainer.Config(model_spec=model_registry(\"8B\"), "
         "training=TrainingConfig(steps=[1, 'a', g()]))\n",
         "is computed"},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        toml_doc_t d;
        notes_t n;
        err_t e;
        notes_init(&n);
        int rc = pyregistry_read(texts[i].text, strlen(texts[i].text), "t.py", "f", &d, &n, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "t.py", texts[i].needle);
        toml_free(&d);
        notes_free(&n);
    }
}

TEST_SUITE(suite_pyregistry, "pyregistry", TEST(test_registry_subset),
           TEST(test_registry_refusals));
