/* End-to-end tests: the real scaleplan binary, its exit codes, its one-line
 * errors on stderr, and the --json contract. */
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/json.h"
#include "common/strfmt.h"

#include "profile/profile.h"
#include "tests/testing.h"

static void test_help_and_version(void)
{
    char *out = NULL;
    cmd_expect("--help", 0, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "catalog"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "model"));
    free(out);
    cmd_expect("--version", 0, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "scaleplan "));
    free(out);
    cmd_expect("model --help", 0, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--tensor-model-parallel-size"));
    free(out);
    char *err = NULL;
    cmd_expect("", 2, NULL, NULL);
    cmd_expect("modle", 2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "did you mean 'model'"));
    CU_ASSERT_EQUAL(count_lines(err), 1);
    free(err);
}

static void test_model_json_contract(void)
{
    cJSON *j = cmd_expect_json("model --model llama3-70b --tp 8 --pp 4 --gpus 256 --global-batch 512 "
                               "--gpu h100-sxm --json",
                               0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    const char *keys[] = {"params", "params_non_embedding", "flops_per_token", "memory_gib",
                          "layout", "fits"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(j, keys[i]));
    CHECK_REL(cJSON_GetObjectItem(j, "params")->valuedouble, 70.55e9, 0.005);
    cJSON *mem = cJSON_GetObjectItem(j, "memory_gib");
    const char *mkeys[] = {"params", "grads", "optimizer", "activations", "buffers", "total",
                           "capacity"};
    double sum = 0;
    for (size_t i = 0; i < sizeof mkeys / sizeof mkeys[0]; i++) {
        cJSON *v = cJSON_GetObjectItem(mem, mkeys[i]);
        CU_ASSERT_TRUE_FATAL(cJSON_IsNumber(v));
        if (i < 5)
            sum += v->valuedouble;
    }
    CHECK_REL(cJSON_GetObjectItem(mem, "total")->valuedouble, sum, 1e-9);
    cJSON *layout = cJSON_GetObjectItem(j, "layout");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(layout, "dp")->valueint, 8);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(layout, "grad_accum")->valueint, 64);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(layout, "schedule")->valuestring, "1f1b");
    cJSON_Delete(j);
}

/* Megatron flag names are aliases; the result is the same JSON. */
static void test_megatron_aliases(void)
{
    char *a = NULL, *b = NULL;
    cmd_expect("model --model gpt3-175b --tp 8 --pp 8 --gpus 64 --micro-batch 1 --global-batch 64 "
               "--sequence-parallel --recompute selective --json",
               0, &a, NULL);
    cmd_expect("model --model gpt3-175b --tensor-model-parallel-size 8 "
               "--pipeline-model-parallel-size 8 --gpus 64 --micro-batch-size 1 "
               "--global-batch-size 64 --sequence-parallel --recompute-granularity selective --json",
               0, &b, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(a, b);
    free(a);
    free(b);
    /* layers per virtual stage -> vpp: 96 layers / (PP 8 x 4) = 3 chunks */
    cJSON *j = cmd_expect_json("model --model gpt3-175b --tp 8 --pp 8 --gpus 64 --global-batch 64 "
                               "--num-layers-per-virtual-pipeline-stage 4 --json",
                               0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *layout = cJSON_GetObjectItem(j, "layout");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(layout, "vpp")->valueint, 3);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(layout, "schedule")->valuestring, "interleaved");
    cJSON_Delete(j);
    /* a DeepSpeed config gives ZeRO stage and batch sizes */
    char args[512];
    snprintf(args, sizeof args, "model --model llama3-8b --gpus 64 --seq-len 4096 --deepspeed %s --json",
             fixture("configs/ds_config.json"));
    j = cmd_expect_json(args, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    layout = cJSON_GetObjectItem(j, "layout");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(layout, "zero")->valueint, 2);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(layout, "global_batch")->valueint, 512);
    cJSON_Delete(j);
}

static void test_model_text(void)
{
    char *out = NULL;
    cmd_expect("model llama3-8b --gpu H100", 0, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "Llama 3 8B"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "8.03B"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "activations"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "h100-sxm"));
    free(out);
}

/* Every bad input: exit 2, exactly one line on stderr naming the problem. */
static void test_bad_inputs_exit_2(void)
{
    static const struct {
        const char *args;
        const char *needle;
    } cases[] = {
        {"model --model llama3-70x", "did you mean 'llama3-70b'"},
        {"model --model llama3-70b --tp 3", "num_attention_heads 64 must divide by TP"},
        {"model --model llama3-70b --tp 8 --pp 3 --gpus 24", "num_layers 80 must divide by PP 3"},
        {"model --model llama3-70b --tp 8 --gpus 12", "12 GPUs cannot be split"},
        {"model --model llama3-70b --tp 8 --gpus 64 --micro-batch 2 --global-batch 100",
         "100 sequences must divide"},
        {"model --model llama3-70b --tp -8", "--tp"},
        {"model --model llama3-70b --tp 8x", "whole number"},
        {"model --model llama3-70b --tpp 8", "did you mean --tp"},
        {"model --model llama3-70b --tp", "needs a value"},
        {"model --model llama3-70b --gpu h10", "did you mean"},
        {"model --model llama3-70b --gpus 99999999999", "--gpus"},
        {"model --model llama3-70b --recompute most", "none, selective, full"},
        /* the network changes nothing model reports: not its option */
        {"model --model llama3-70b --fabric roce-400", "--fabric: unknown option"},
        {"model", "--model"},
        {"catalog gpuz", "did you mean 'gpus'"},
        {"model --model tests/fixtures/configs/malformed.json", "malformed JSON at line 6"},
        {"model --model tests/fixtures/configs/truncated.json", "truncated"},
        {"model --model tests/fixtures/configs/negative.json", "num_hidden_layers"},
        {"model --model tests/fixtures/configs/huge.json", "num_hidden_layers"},
        {"model --model tests/fixtures/configs/nan.json", "hidden_size: must be a whole number (got NaN)"},
        {"model --model tests/fixtures/hf/bert-base-uncased/config.json", "encoder-only"},
        {"sim --model mixtral-8x7b --gpu h100-sxm --gpus 8 --ep 3", "8 routed experts"},
        {"sim --model llama3-8b --gpu h100-sxm --gpus 8 --ep 2", "dense"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --ep 2", "dense"},
        {"model --model mixtral-8x7b --ep 3 --gpus 6", "--ep"},
        {"model --model llama3-8b --ep 2 --gpus 2", "dense"},
        {"model --model /no/such/config.json", "no such file"},
        {"model --model llama3-8b --deepspeed tests/fixtures/configs/ds_bad.json",
         "train_micro_batch_size_per_gpu"},
        {"model --model llama3-8b --deepspeed tests/fixtures/configs/missing.json", "cannot open"},
        /* a ds_config holds no sequence length: asked for, in every command reading one */
        {"sim --model llama3-8b --gpu h100-sxm --gpus 8 "
         "--deepspeed tests/fixtures/deepspeed/zero2_offload.json",
         "zero2_offload.json: --seq-len: a DeepSpeed config does not give the sequence length"},
        {"model --model llama3-8b --gpus 8 --deepspeed tests/fixtures/deepspeed/zero2_offload.json",
         "add --seq-len N"},
        {"budget --model llama3-8b --gpu h100-sxm --gpus 8 --tokens 1T "
         "--deepspeed tests/fixtures/deepspeed/zero2_offload.json",
         "add --seq-len N"},
        /* tokens given where sequences are asked */
        {"sim --model llama3-8b --gpu h100-sxm --gpus 8 --global-batch 4M",
         "would be --global-batch 512"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --global-batch 4M",
         "--global-batch counts sequences"},
        /* more GPUs do not help a framework that shards nothing */
        {"budget --model llama3-70b --gpu h100-sxm --gpus 64 --tokens 1T --framework pytorch-ddp",
         "keeps the whole model on every GPU"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *err = NULL;
        cmd_expect(cases[i].args, 2, NULL, &err);
        int ok = err && strstr(err, cases[i].needle) && count_lines(err) == 1;
        if (!ok)
            fprintf(stderr, "\n$ scaleplan %s\nstderr: %s(wanted one line with '%s')\n",
                    cases[i].args, err ? err : "", cases[i].needle);
        CU_ASSERT_TRUE(ok);
        free(err);
    }
}

static void test_catalog_lists(void)
{
    char *out = NULL;
    cmd_expect("catalog", 0, &out, NULL);
    const char *must[] = {"llama3-405b", "gpt3-175b", "h100-sxm", "mi300x", "ib-ndr",
                          "dgx-h100", "io.net", "llama3-405b", "nccl_hang", "Default"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(out, must[i]));
    free(out);
    cJSON *j = cmd_expect_json("catalog gpus --json", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    /* every GPU a team plans on (issue 13), each with its source */
    const cJSON *gpus = cJSON_GetObjectItem(j, "gpus");
    CU_ASSERT_TRUE(cJSON_GetArraySize(gpus) >= 20);
    static const char *const want[] = {"v100",  "a100-80g", "h100-sxm", "h100-pcie", "h100-nvl",
                                       "h100-96g", "gh200-96g", "h200", "h20", "b200",
                                       "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x"};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        bool found = false;
        const cJSON *g;
        cJSON_ArrayForEach(g, gpus)
        {
            const cJSON *name = cJSON_GetObjectItem(g, "name");
            if (cJSON_IsString(name) && strcmp(name->valuestring, want[w]) == 0)
                found = true;
        }
        if (!found)
            fprintf(stderr, "\ncatalog gpus: %s missing\n", want[w]);
        CU_ASSERT_TRUE(found);
    }
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(j, "models")); /* only the section asked for */
    cJSON_Delete(j);
}

/* scaleplan sim --json: the contract keys, a breakdown that sums to the
 * step, and a Chrome trace with one process per pipeline stage. */
static void test_sim_json_and_trace(void)
{
    char dir[256], args[1024];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(args, sizeof args,
             "sim --model llama3-70b --gpu h100-sxm --gpus 128 --tp 8 --pp 4 --vpp 2 "
             "--global-batch 64 --sequence-parallel --recompute selective --json "
             "--trace %s/trace.json",
             dir);
    cJSON *j = cmd_expect_json(args, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    const char *keys[] = {"step_time_s", "tokens_per_s", "model_tflops_per_gpu",
                          "hardware_tflops_per_gpu", "mfu", "hfu", "breakdown_s",
                          "memory_gib", "fits", "layout"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(j, keys[i]));
    const char *bd[] = {"compute", "recompute", "tp_comm", "cp_comm", "pp_comm",
                        "pp_bubble", "dp_comm", "optimizer", "other", "straggler"};
    cJSON *b = cJSON_GetObjectItem(j, "breakdown_s");
    double sum = 0;
    for (size_t i = 0; i < sizeof bd / sizeof bd[0]; i++) {
        cJSON *v = cJSON_GetObjectItem(b, bd[i]);
        CU_ASSERT_TRUE_FATAL(cJSON_IsNumber(v));
        sum += v->valuedouble;
    }
    CHECK_REL(sum, cJSON_GetObjectItem(j, "step_time_s")->valuedouble, 1e-6);
    const char *lk[] = {"tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "global_batch",
                        "grad_accum", "zero", "recompute", "schedule"};
    cJSON *l = cJSON_GetObjectItem(j, "layout");
    for (size_t i = 0; i < sizeof lk / sizeof lk[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(l, lk[i]));
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(l, "dp")->valueint, 4);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(l, "schedule")->valuestring, "interleaved");
    cJSON_Delete(j);
    /* the trace */
    char path[300];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    cJSON *t = NULL;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(json_parse_file(path, &t, &e), 0);
    cJSON *ev = cJSON_GetObjectItem(t, "traceEvents");
    CU_ASSERT_TRUE(cJSON_GetArraySize(ev) > 100);
    int stages_seen[4] = {0}, complete = 0;
    cJSON *x;
    cJSON_ArrayForEach(x, ev)
    {
        cJSON *ph = cJSON_GetObjectItem(x, "ph");
        if (cJSON_IsString(ph) && ph->valuestring[0] == 'X') {
            int pid = cJSON_GetObjectItem(x, "pid")->valueint;
            if (pid >= 0 && pid < 4)
                stages_seen[pid] = 1;
            complete += cJSON_IsNumber(cJSON_GetObjectItem(x, "ts")) &&
                        cJSON_IsNumber(cJSON_GetObjectItem(x, "dur"));
        }
    }
    CU_ASSERT_TRUE(stages_seen[0] && stages_seen[1] && stages_seen[2] && stages_seen[3]);
    CU_ASSERT_TRUE(complete > 100);
    cJSON_Delete(t);
    remove_tree(dir);
}

/* sim --rank: the layout among every layout its framework runs on the same
 * GPUs, batch and sequence. TP 8 for an 8B model on 64 GPUs is not the
 * best (every layer's activations cross NVLink twice for little memory
 * saved); the best layout found is faster, and ranking the best layout
 * again puts it first. */
static void test_sim_rank(void)
{
    const char *common = "sim --model llama3-8b --gpu h100-sxm --gpus 64 --global-batch 256 "
                         "--seq-len 8192 --framework megatron-core --rank --json";
    char args[1024];
    snprintf(args, sizeof args, "%s --tp 8 --sequence-parallel --micro-batch 1", common);
    cJSON *j = cmd_expect_json(args, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *rk = cJSON_GetObjectItem(j, "rank");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
    int rank = cJSON_GetObjectItem(rk, "rank")->valueint;
    double fit = cJSON_GetObjectItem(rk, "fit")->valuedouble;
    double step = cJSON_GetObjectItem(rk, "step_time_s")->valuedouble;
    double best = cJSON_GetObjectItem(rk, "best_step_time_s")->valuedouble;
    CU_ASSERT_TRUE(rank >= 2 && rank <= fit);
    CU_ASSERT_TRUE(best < step);
    CU_ASSERT_TRUE(fit <= cJSON_GetObjectItem(rk, "candidates")->valuedouble);
    /* the search prices the layout as sim does (the same preset's options) */
    CHECK_REL(step, cJSON_GetObjectItem(j, "step_time_s")->valuedouble, 1e-9);
    cJSON *bl = cJSON_GetObjectItem(rk, "best_layout");
    CU_ASSERT_PTR_NOT_NULL_FATAL(bl);
    int tp = cJSON_GetObjectItem(bl, "tp")->valueint, pp = cJSON_GetObjectItem(bl, "pp")->valueint,
        cp = cJSON_GetObjectItem(bl, "cp")->valueint,
        vpp = cJSON_GetObjectItem(bl, "vpp")->valueint,
        mb = cJSON_GetObjectItem(bl, "micro_batch")->valueint,
        zero = cJSON_GetObjectItem(bl, "zero")->valueint;
    const char *rec = cJSON_GetObjectItem(bl, "recompute")->valuestring;
    bool sp = cJSON_IsTrue(cJSON_GetObjectItem(bl, "sequence_parallel"));
    bool dopt = cJSON_IsTrue(cJSON_GetObjectItem(bl, "distributed_optimizer"));
    char best_args[1024];
    snprintf(best_args, sizeof best_args,
             "%s --tp %d --pp %d --cp %d --micro-batch %d --recompute %s%s%s --zero %d%s", common,
             tp, pp, cp, mb, rec, sp ? " --sequence-parallel" : "",
             dopt ? " --distributed-optimizer" : "", zero,
             vpp > 1 ? " --schedule interleaved" : "");
    if (vpp > 1)
        snprintf(best_args + strlen(best_args), sizeof best_args - strlen(best_args), " --vpp %d",
                 vpp);
    cJSON_Delete(j);
    j = cmd_expect_json(best_args, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    rk = cJSON_GetObjectItem(j, "rank");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(rk, "rank")->valueint, 1);
    CHECK_REL(cJSON_GetObjectItem(rk, "step_time_s")->valuedouble, best, 1e-9);
    cJSON_Delete(j);
    /* a layout that does not fit has no rank; the best that fits is said */
    j = cmd_expect_json("sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --global-batch 64 "
                        "--framework megatron-core --rank --json --allow-oom",
                        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    rk = cJSON_GetObjectItem(j, "rank");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rk);
    CU_ASSERT_FALSE(cJSON_IsTrue(cJSON_GetObjectItem(j, "fits")));
    CU_ASSERT_FALSE(cJSON_IsTrue(cJSON_GetObjectItem(rk, "layout_fits")));
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(rk, "rank")->valueint, 0);
    CU_ASSERT_TRUE(cJSON_GetObjectItem(rk, "fit")->valuedouble > 0);
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(rk, "best_layout"));
    cJSON_Delete(j);
}

/* A folder under dir of exactly len bytes (heap, not created). */
static char *folder_of_length(const char *dir, size_t len)
{
    char *s = str_printf("%s/fit", dir);
    while (s && strlen(s) + 100 < len)
        if (str_appendf(&s, "/%099d", 0) != 0)
            s = NULL;
    if (s && strlen(s) + 1 < len && str_appendf(&s, "/%0*d", (int)(len - strlen(s) - 1), 0) != 0)
        s = NULL;
    return s;
}

/* validate --fit-sustained on three H100 rows of the published table: one
 * fit, for h100-sxm, over those three rows, its median signed error zero;
 * --write-profiles writes that GPU's profile with the fitted factor, which
 * sim reads back. The folder is 1,015 bytes long (issue 35 row 7: the old
 * 1,024-byte path buffer cut the file name, writing "h100-sx"). */
static void test_fit_sustained_cli(void)
{
    char dir[256], csv[320];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(csv, sizeof csv, "%s/runs.csv", dir);
    FILE *in = fopen(fixture("validation/throughput.csv"), "r"), *out = fopen(csv, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    char line[8192];
    int kept = 0;
    for (int i = 0; fgets(line, sizeof line, in); i++)
        if (i == 0 || strncmp(line, "T045,", 5) == 0 || strncmp(line, "T046,", 5) == 0 ||
            strncmp(line, "T047,", 5) == 0) {
            fputs(line, out);
            kept++;
        }
    fclose(in);
    fclose(out);
    CU_ASSERT_EQUAL_FATAL(kept, 4);
    char *fit = folder_of_length(dir, 1015);
    CU_ASSERT_TRUE_FATAL(fit && strlen(fit) == 1015);
    char *args = str_printf("validate --published %s --fit-sustained --write-profiles %s --json",
                            csv, fit);
    char *o = NULL;
    cmd_expect(args, 0, &o, NULL);
    free(args);
    cJSON *j = cJSON_Parse(o ? o : "");
    free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *fits = cJSON_GetObjectItem(j, "fits");
    CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(fits), 1);
    cJSON *f = cJSON_GetArrayItem(fits, 0);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(f, "gpu")->valuestring, "h100-sxm");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(f, "rows")->valueint, 3);
    CU_ASSERT_TRUE(fabs(cJSON_GetObjectItem(f, "median_signed_error_fitted")->valuedouble) < 1e-3);
    double fitted = cJSON_GetObjectItem(f, "fitted")->valuedouble;
    cJSON_Delete(j);
    char *path = str_printf("%s/h100-sxm.json", fit);
    profile_t p;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(prof_load(path, &p, &e), 0);
    CU_ASSERT_DOUBLE_EQUAL(p.sustained_factor, fitted, 1e-6);
    prof_free(&p);
    args = str_printf("sim --model llama3-8b --gpu h100-sxm --gpus 8 --tp 2 --distributed-optimizer "
                      "--profile %s --json",
                      path);
    cmd_expect(args, 0, NULL, NULL);
    free(args);
    free(path);
    free(fit);
    /* the flag needs the fit */
    cmd_expect("validate --write-profiles /tmp", 2, NULL, NULL);
    remove_tree(dir);
}

/* Layouts that cannot run: one line, exit 2. A layout that does not fit in
 * memory still simulates, with fits false and what to change. */
static void test_sim_errors_and_fit(void)
{
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 3", "must divide by TP"},
        {"sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 3", "must divide by PP 3"},
        {"sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --global-batch 12",
         "must divide by micro-batch x DP"},
        {"sim --model llama3-70b --gpu h100-sxm --gpus 100 --tp 8", "100 GPUs cannot be split"},
        {"sim --model llama3-70b --gpu h100-sxm --tp 8", "--gpus"},
        {"sim --model llama3-70b --gpus 64 --tp 8", "--gpu"},
        {"sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --tp-comm-overlap",
         "needs --sequence-parallel"},
        {"sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --framework nemesis",
         "unknown name 'nemesis'"},
        {"sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --profile /nope.json",
         "cannot open"},
        {"sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --recompute-num-layers 2",
         "needs --recompute full"},
        {"sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 --recompute full "
         "--recompute-method sideways",
         "use block or uniform"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *err = NULL;
        cmd_expect(cases[i].args, 2, NULL, &err);
        int ok = err && strstr(err, cases[i].needle) && count_lines(err) == 1;
        if (!ok)
            fprintf(stderr, "\n$ scaleplan %s\nstderr: %s\n", cases[i].args, err ? err : "");
        CU_ASSERT_TRUE(ok);
        free(err);
    }
    /* an empty last stage (only the loss and the MTP module), Megatron-Bridge's
     * DeepSeek-V3 split "Et|(tt|)*30mL", is a layout sim accepts */
    cmd_expect("sim --model deepseek-v3 --gpu h100-sxm --gpus 1024 --tp 2 --pp 8 --vpp 4 --ep 64 "
               "--first-stage-layers 1 --last-stage-layers 0 --global-batch 8192 --seq-len 4096 "
               "--sequence-parallel --distributed-optimizer --allow-oom",
               0, NULL, NULL);
    cJSON *j = cmd_expect_json(
        "sim --model llama3-70b --gpu h100-sxm --gpus 8 --tp 8 --global-batch 8 --json", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(j, "fits")));
    cJSON *reason = cJSON_GetObjectItem(j, "fit_reason");
    CU_ASSERT_TRUE(cJSON_IsString(reason) && strstr(reason->valuestring, "GiB"));
    cJSON_Delete(j);
}

/* reliability and budget end to end */
static void test_reliability_and_budget(void)
{
    char *out = NULL, *err = NULL;
    cJSON *j = cmd_expect_json("reliability --ladder --json", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *ladder = cJSON_GetObjectItem(j, "ladder");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(ladder), 4);
    double prev = 0;
    cJSON *rung;
    cJSON_ArrayForEach(rung, ladder)
    {
        double w = cJSON_GetObjectItem(rung, "interruptions_per_week")->valuedouble;
        CU_ASSERT_TRUE(w > prev);
        prev = w;
    }
    cJSON_Delete(j);
    j = cmd_expect_json("reliability --gpu h100-sxm --gpus 1024 --days 30 --checkpoint-size 840GB "
                        "--trials 200 --json",
                        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    const char *keys[] = {"wall_days_p10", "wall_days_p50", "wall_days_p90", "goodput",
                          "interruptions_mean", "interruptions_by_cause", "checkpoint_interval_s",
                          "young_daly_interval_s", "lost_gpu_hours"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(j, keys[i]));
    double g = cJSON_GetObjectItem(j, "goodput")->valuedouble;
    CU_ASSERT_TRUE(g > 0.5 && g < 1);
    cJSON_Delete(j);
    /* the planning guide's claim: 70B on 2T tokens on 256 H100s in 14 days */
    cmd_expect("budget --model llama3-70b --tokens 2T --gpus 256 --gpu h100-sxm --days 14 --trials 100",
               0, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "not possible"));
    free(out);
    j = cmd_expect_json(
        "budget --model llama3-70b --tokens 2T --gpus 256 --gpu h100-sxm --days 14 --trials 100 "
        "--json --compare",
        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_TRUE(cJSON_GetObjectItem(j, "required_mfu")->valuedouble > 1);
    CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(j, "feasible")));
    CU_ASSERT_TRUE(cJSON_GetObjectItem(j, "days_p50")->valuedouble > 14);
    double cost = cJSON_GetObjectItem(j, "cost_usd")->valuedouble;
    double gpuh = cJSON_GetObjectItem(j, "gpu_hours")->valuedouble;
    CU_ASSERT_TRUE(cost >= gpuh * 2.49);
    CU_ASSERT_TRUE(cJSON_GetArraySize(cJSON_GetObjectItem(j, "providers")) >= 5);
    cJSON_Delete(j);
    static const struct {
        const char *args, *needle;
    } bad[] = {
        {"budget --model llama3-70b --tokens 2T --gpus 256 --gpu h100-sxm --provider nobody",
         "no price from 'nobody'"},
        {"budget --model llama3-70b --tokens 2T --gpus 256 --gpu l40s", "--price"},
        {"budget --model llama3-70b --gpus 256 --gpu h100-sxm", "--tokens"},
        {"reliability --gpu h100-sxm --gpus 64 --days 5 --checkpoint-size 100GB --storage-bw 0GB/s",
         "--storage-bw: must be from"},
        {"reliability --gpu h100-sxm --gpus 64 --days 5 --checkpoint-size 100GB --failure-rates llama4",
         "unknown name 'llama4'"},
        {"reliability --gpu h100-sxm --gpus 64 --days -5 --checkpoint-size 100GB", "--days"},
        {"reliability --gpu h100-sxm --gpus 64 --tokens 2T --checkpoint-size 100GB", "--step-time"},
        {"reliability --gpu h100-sxm --gpus 64 --days 5 --checkpoint-size 100GB --policy pray",
         "spares, elastic or wait"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cmd_expect(bad[i].args, 2, NULL, &err);
        int ok = err && strstr(err, bad[i].needle) && count_lines(err) == 1;
        if (!ok)
            fprintf(stderr, "\n$ scaleplan %s\nstderr: %s\n", bad[i].args, err ? err : "");
        CU_ASSERT_TRUE(ok);
        free(err);
    }
}

/* plan end to end: the --json contract, what-if, the report file, and
 * errors */
/* plan's simulation switches reach every candidate it simulates (they
 * were listed and silently left out): TP comm overlap makes the 70B plan
 * faster, compile the torchtitan plan, a larger straggler jitter slower;
 * budget's search for a layout takes them alike. */
static double plan_best_step(const char *extra, const char *fw)
{
    char args[512];
    snprintf(args, sizeof args,
             "plan --model llama3-70b --gpu h100-sxm --min-gpus 256 --max-gpus 256 --trials 30 "
             "--framework %s --json %s",
             fw, extra);
    cJSON *j = cmd_expect_json(args, 0);
    cJSON *st = j ? cJSON_GetObjectItem(cJSON_GetObjectItem(j, "best"), "step_time_s") : NULL;
    double v = st ? st->valuedouble : 0;
    cJSON_Delete(j);
    return v;
}

static void test_plan_switches(void)
{
    double base = plan_best_step("", "megatron-core");
    CU_ASSERT_TRUE(base > 0);
    CU_ASSERT_TRUE(plan_best_step("--tp-comm-overlap", "megatron-core") < base);
    CU_ASSERT_TRUE(plan_best_step("--straggler-cv 0.2", "megatron-core") > base);
    double eager = plan_best_step("", "torchtitan-2025-06");
    CU_ASSERT_TRUE(plan_best_step("--compile", "torchtitan-2025-06") < eager);
    /* budget (and reliability) search the fastest layout when none is given:
     * with the same switches, the same step as plan */
    const char *budget = "budget --model llama3-70b --gpu h100-sxm --gpus 256 --tokens 100B "
                         "--framework megatron-core --json --tp-comm-overlap";
    cJSON *j = cmd_expect_json(budget, 0);
    cJSON *st = j ? cJSON_GetObjectItem(j, "step_time_s") : NULL;
    CU_ASSERT_PTR_NOT_NULL(st);
    if (st)
        CHECK_REL(st->valuedouble, plan_best_step("--tp-comm-overlap", "megatron-core"), 1e-9);
    cJSON_Delete(j);
}

/* Line breaks and runs of spaces as one space, in place (wrapped text
 * read as one line); NULL is left alone. */
static void squash(char *s)
{
    if (!s)
        return;
    size_t k = 0;
    for (size_t i = 0; s[i]; i++)
        if (!isspace((unsigned char)s[i]) || (k > 0 && s[k - 1] != ' '))
            s[k++] = isspace((unsigned char)s[i]) ? ' ' : s[i];
    s[k] = '\0';
}

static void test_plan_cli(void)
{
    char dir[256], args[1024];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(args, sizeof args,
             "plan --model llama3-8b --tokens 1T --gpu h100-sxm --min-gpus 8 --max-gpus 64 "
             "--trials 100 --what-if fabric=ib-hdr,price=4.10,gpu=h200 --report %s/r --json",
             dir);
    char *out = NULL;
    cJSON *j = cmd_expect_json(args, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *ladder = cJSON_GetObjectItem(j, "ladder");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(ladder), 4);
    const char *keys[] = {"gpus", "layout", "step_time_s", "tokens_per_s", "mfu",
                          "scaling_efficiency", "main_loss", "days_p50", "days_p90",
                          "interruptions_mean", "gpu_hours", "cost_usd", "cost_per_day_usd"};
    cJSON *rung = cJSON_GetArrayItem(ladder, 0);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(rung, keys[i]));
    CHECK_REL(cJSON_GetObjectItem(rung, "scaling_efficiency")->valuedouble, 1.0, 1e-9);
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(j, "best"));
    CU_ASSERT_TRUE(cJSON_IsString(cJSON_GetObjectItem(j, "recommendation")));
    cJSON *w = cJSON_GetObjectItem(j, "what_if");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(w), 3);
    /* a higher price costs more, same days */
    cJSON *best = cJSON_GetObjectItem(j, "best");
    cJSON *pw = cJSON_GetArrayItem(w, 1);
    CU_ASSERT_TRUE(cJSON_GetObjectItem(pw, "cost_usd")->valuedouble >
                   cJSON_GetObjectItem(best, "cost_usd")->valuedouble);
    cJSON_Delete(j);
    char path[400];
    snprintf(path, sizeof path, "%s/r/result.json", dir);
    cJSON *f = NULL;
    err_t e;
    CU_ASSERT_EQUAL(json_parse_file(path, &f, &e), 0);
    cJSON_Delete(f);
    remove_tree(dir);
    static const struct {
        const char *args, *needle;
    } bad[] = {
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --objective fast", "time, cost"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --min-gpus 64 --max-gpus 8",
         "--min-gpus"},
        {"plan --model llama3-8b --gpu h100-sxm --tokens 0", "--tokens"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --global-batch 0", "--global-batch"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --what-if color=red", "unknown change"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --deadline soon", "--deadline"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err = NULL;
        cmd_expect(bad[i].args, 2, NULL, &err);
        int ok = err && strstr(err, bad[i].needle) && count_lines(err) == 1;
        if (!ok)
            fprintf(stderr, "\n$ scaleplan %s\nstderr: %s\n", bad[i].args, err ? err : "");
        CU_ASSERT_TRUE(ok);
        free(err);
    }
    /* no --tokens: 20 per parameter, said */
    cmd_expect("plan --model llama3-8b --gpu h100-sxm --min-gpus 8 --max-gpus 8 --framework "
               "megatron-core",
               0, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "20 per parameter assumed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "on 161B tokens"));
    free(out);
    out = NULL;
    /* impossible, but well-formed: the nearest plan printed, exit 1 */
    cmd_expect("plan --model llama3-405b --tokens 15T --gpu h100-sxm --max-gpus 16", 1, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "No GPU count"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "raise --max-gpus"));
    free(out);
    out = NULL;
    /* a framework that keeps the whole model on every GPU: more GPUs do
     * not help, and the recommendation does not say they would */
    cmd_expect("plan --model llama3-70b --tokens 1T --gpu h100-sxm --min-gpus 64 --max-gpus 64 "
               "--framework pytorch-ddp",
               1, &out, NULL);
    squash(out); /* the recommendation is wrapped for a terminal */
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "more GPUs do not help"));
    CU_ASSERT_PTR_NULL(strstr(out ? out : "", "raise --max-gpus"));
    free(out);
}

/* Issue 17 rows 5 and 11: a bare word no option takes, a flag given twice
 * and every out-of-range or non-numeric value are refused on one line with
 * exit 2, whichever command and whether or not the command reads it. */
static void test_flags_checked(void)
{
    static const struct {
        const char *args, *needle;
    } bad[] = {
        /* row 5: the folder after the switch --resume is a stray word */
        {"train --model tests/fixtures/configs/tiny-gpt.json --checkpoint-dir /tmp/x --resume "
         "/tmp/x/step-00000004",
         "--resume takes no value"},
        {"sim llama3-8b --model llama3-8b --gpu h100-sxm --gpus 8", "unexpected argument"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm extra", "unexpected argument"},
        /* (validate's second bare word is a --model, which --measured does not take) */
        {"validate --measured tests/fixtures/validate/sc21-gpt-1.7b-32xa100.json extra.json",
         "--model"},
        {"budget --model llama3-8b --tokens 1T --gpus 8 --gpu h100-sxm --tp 1 --tp 2",
         "--tp: given more than once"},
        {"sim --model llama3-8b --gpu h100-sxm --gpus 8 --tp 1 --tensor-model-parallel-size 2",
         "given more than once"},
        {"report a.json b.json", "at most 1"},
        /* row 11 */
        {"budget --model llama3-8b --tokens 1e-320 --gpus 8 --gpu h100-sxm", "--tokens"},
        {"budget --model llama3-8b --tokens 1T --gpus 8 --gpu h100-sxm --price 1e308", "--price"},
        {"budget --model llama3-8b --tokens 1T --gpus 8 --gpu h100-sxm --price -0",
         "--price: must not be negative"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --global-batch 1.5",
         "--global-batch: must be a whole number"},
        {"train --model tests/fixtures/configs/tiny-gpt.json --lr 1e-3 --min-lr 2e-3", "--min-lr"},
        /* --utilization is read only with --compare: checked all the same */
        {"budget --model llama3-8b --tokens 1T --gpus 8 --gpu h100-sxm --utilization nan",
         "--utilization"},
        {"sim --model llama3-8b --gpu h100-sxm --gpus 2147483648", "--gpus"},
        {"reliability --gpu h100-sxm --gpus 64 --days 5 --checkpoint-size 1TB --trials inf",
         "--trials"},
        {"reliability --gpu h100-sxm --gpus 64 --days nan --checkpoint-size 1TB", "--days"},
        {"plan --model llama3-8b --tokens 1T --gpu h100-sxm --budget ''", "--budget"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err = NULL;
        cmd_expect(bad[i].args, 2, NULL, &err);
        int ok = err && strstr(err, bad[i].needle) && count_lines(err) == 1;
        if (!ok)
            fprintf(stderr, "\n$ scaleplan %s\nstderr: %s\n", bad[i].args, err ? err : "");
        CU_ASSERT_TRUE(ok);
        free(err);
    }
    /* what stays accepted: one bare model name, k suffixes, catalog sections */
    char *out = NULL;
    cmd_expect("model llama3-8b --json", 0, &out, NULL);
    CU_ASSERT_TRUE(out && strstr(out, "\"params\""));
    free(out);
    cJSON *j = cmd_expect_json(
        "sim --model llama3-8b --gpu h100-sxm --gpus 1k --tp 8 --global-batch 1k --json", 0);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "layout"), "dp")->valueint, 128);
    cJSON_Delete(j);
    cmd_expect("catalog gpus fabrics", 0, NULL, NULL);
}

/* Issue 17 rows 2 and 3 end to end: a run that cannot progress is refused
 * with one line (no loop guard printed as a result); an interval longer
 * than the run is no periodic checkpoint, with goodput at most 100%. */
static void test_reliability_limits(void)
{
    char *out = NULL, *err = NULL;
    cmd_expect("reliability --gpu h100-sxm --gpus 1024 --tokens 1T --step-time 5 "
               "--checkpoint-every 1e-12 --checkpoint-size 1TB --trials 1 --json",
               2, &out, &err);
    CU_ASSERT_TRUE(out && out[0] == '\0');
    CU_ASSERT_TRUE(err && strstr(err, "--checkpoint-every") && count_lines(err) == 1);
    free(out);
    free(err);
    /* RSC-1's rates: no planned maintenance, whose announced saves would
     * let even a run without periodic checkpoints creep forward */
    cmd_expect("reliability --gpu h100-sxm --gpus 1024 --tokens 100T --step-time 5 "
               "--checkpoint-every 1e308 --checkpoint-size 1TB --trials 100 --failure-rates meta-rsc1 "
               "--json",
               2, &out, &err);
    CU_ASSERT_TRUE(err && strstr(err, "never finishes") && count_lines(err) == 1);
    free(out);
    free(err);
    cJSON *j = cmd_expect_json("reliability --gpu h100-sxm --gpus 1024 --tokens 1T --step-time 5 "
                               "--checkpoint-every 1e308 --checkpoint-size 1TB --trials 100 --json",
                               0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    double goodput = cJSON_GetObjectItem(j, "goodput")->valuedouble;
    CU_ASSERT_TRUE(goodput > 0 && goodput <= 1);
    CU_ASSERT_TRUE(cJSON_GetObjectItem(j, "lost_gpu_hours")->valuedouble >= 0);
    CU_ASSERT_TRUE(cJSON_GetObjectItem(j, "checkpoint_hours")->valuedouble < 0.01);
    cJSON_Delete(j);
}

/* Issue 17 row 7: a huge global batch is bounded: the planner skips the
 * layouts whose step would need more than the simulator's limit, in
 * bounded memory and time, and the flag has a ceiling (131,072 sequences
 * of 8,192 tokens is CMD_MAX_BATCH_TOKENS itself). */
static void test_huge_global_batch(void)
{
    char *out = NULL, *err = NULL;
    int rc = run_cli_limited(120,
                             "plan --model llama3-8b --tokens 1T --gpu h100-sxm --min-gpus 8 "
                             "--max-gpus 8 --global-batch 131072 --trials 20 --json",
                             &out, &err);
    CU_ASSERT_EQUAL(rc, 0);
    struct rusage ru;
    CU_ASSERT_EQUAL(getrusage(RUSAGE_CHILDREN, &ru), 0);
    /* peak of any child so far: the bound keeps it under 2 GB (it was
     * over 10 GB) */
    CU_ASSERT(ru.ru_maxrss < 2L * 1024 * 1024);
    cJSON *j = cJSON_Parse(out ? out : "");
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(j, "ladder"));
    cJSON_Delete(j);
    free(out);
    free(err);
    cmd_expect("plan --model llama3-8b --tokens 1T --gpu h100-sxm --global-batch 1e9", 2, NULL, &err);
    CU_ASSERT_TRUE(err && strstr(err, "--global-batch") && count_lines(err) == 1);
    free(err);
    /* (100,000 sequences: under the batch's token ceiling, over the
     * simulator's micro-batch limit) */
    cmd_expect("sim --model llama3-8b --gpu h100-sxm --gpus 8 --pp 8 --global-batch 100000", 2, NULL,
               &err);
    CU_ASSERT_TRUE(err && strstr(err, "simulator's limit") && count_lines(err) == 1);
    free(err);
}

/* Issue 17 rows 12 and 13: a plan that meets nothing asked leads with
 * every broken constraint and exits 1; sim of a layout that does not fit
 * exits 1 (its JSON still printed, fits false) unless --allow-oom. */
static void test_unmet_requests_exit_1(void)
{
    char *out = NULL, *err = NULL;
    cmd_expect("plan --model llama3-8b --tokens 1T --gpu h100-sxm --min-gpus 8 --max-gpus 16 "
               "--deadline 1d --budget 1000 --trials 20",
               1, &out, &err);
    const char *lead = out ? strstr(out, "No plan meets the 1.0-day deadline") : NULL;
    CU_ASSERT_PTR_NOT_NULL(lead);
    CU_ASSERT_TRUE(lead && strstr(lead, "$1,000 budget") &&
                   strstr(lead, "$1,000 budget") < strstr(lead, "reserve "));
    CU_ASSERT_TRUE(err && strstr(err, "--deadline and --budget") && count_lines(err) == 1);
    free(out);
    free(err);
    cmd_expect("sim --model llama3-405b --gpu h100-sxm --gpus 8 --tp 8 --global-batch 8 --json", 1,
               &out, &err);
    cJSON *j = cJSON_Parse(out ? out : "");
    CU_ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(j, "fits")));
    cJSON_Delete(j);
    CU_ASSERT_TRUE(err && strstr(err, "does not fit") && count_lines(err) == 1);
    free(out);
    free(err);
    cmd_expect("sim --model llama3-405b --gpu h100-sxm --gpus 8 --tp 8 --global-batch 8 --allow-oom",
               0, NULL, NULL);
}

TEST_SUITE(suite_cli, "cli", TEST(test_help_and_version), TEST(test_model_json_contract),
           TEST(test_megatron_aliases), TEST(test_model_text), TEST(test_bad_inputs_exit_2),
           TEST(test_catalog_lists), TEST(test_sim_json_and_trace), TEST(test_sim_rank), TEST(test_fit_sustained_cli), TEST(test_sim_errors_and_fit),
           TEST(test_reliability_and_budget), TEST(test_plan_cli), TEST(test_plan_switches),
           TEST(test_flags_checked), TEST(test_reliability_limits),
           TEST(test_huge_global_batch), TEST(test_unmet_requests_exit_1));
