/* End-to-end tests of the ways a configuration comes in (split off from
 * test_cli.c, issue 34): a framework's own files (NeMo Bridge overrides,
 * torchtitan TOML, Megatron arguments), --config files, the offload flags,
 * and outputs written atomically. */
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
#include "tests/testing.h"

/* Framework inputs on the sim command line: a NeMo Bridge overrides file
 * defines the layout under the preset it names; its notes are printed;
 * two frameworks' inputs at once are refused. */
static void test_framework_inputs(void)
{
    char *out = NULL;
    /* plan --emit nemo's overrides read back as the same layout, under the
     * Bridge preset (said) */
    cmd_expect("sim --model llama3-70b --gpu h100-sxm --gpus 256 --bridge-overrides "
               "tests/fixtures/launch/llama3_70b_256.bridge.txt",
               0, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "TP4 PP1 DP64 mb1 gb512 SP FSDP (bf16, 1F1B schedule, 8 micro-batches"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "assumed --framework: megatron-bridge-26.04"));
    free(out);
    out = NULL;
    /* an export names the preset it was planned for ("# planned for
     * nemo-25.04;"): read back under it, at the plan's step time; a name
     * that is no preset leaves the Bridge default */
    {
        char dir[512], path[600], cmd[900];
        CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
        static const char *const names[] = {"nemo-25.04", "no-such-framework"};
        static const char *const want[] = {"assumed --framework: nemo-25.04",
                                           "assumed --framework: megatron-bridge-26.04"};
        char *body = slurp(fixture("launch/llama3_70b_256.bridge.txt"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(body);
        char *pinned = NULL;
        cmd_expect("sim --model llama3-70b --gpu h100-sxm --gpus 256 --framework nemo-25.04 "
                   "--bridge-overrides tests/fixtures/launch/llama3_70b_256.bridge.txt",
                   0, &pinned, NULL);
        const char *st = pinned ? strstr(pinned, "step time ") : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(st);
        char pinned_step[32] = "";
        sscanf(st, "step time %31s", pinned_step);
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "%s/planned.txt", dir);
            FILE *f = fopen(path, "w");
            CU_ASSERT_PTR_NOT_NULL_FATAL(f);
            fprintf(f, "# planned for %s; these are Megatron-Bridge's key names\n%s", names[k],
                    body);
            fclose(f);
            snprintf(cmd, sizeof cmd,
                     "sim --model llama3-70b --gpu h100-sxm --gpus 256 --bridge-overrides %s",
                     path);
            cmd_expect(cmd, 0, &out, NULL);
            CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", want[k]));
            if (k == 0) {
                char mine[32] = "";
                const char *t = out ? strstr(out, "step time ") : NULL;
                if (t)
                    sscanf(t, "step time %31s", mine);
                CU_ASSERT_STRING_EQUAL(mine, pinned_step);
            }
            free(out);
            out = NULL;
        }
        free(pinned);
        free(body);
        remove_tree(dir);
    }
    char *err = NULL;
    cmd_expect("sim --model llama3-70b --gpu h100-sxm --gpus 256 --bridge-overrides "
               "tests/fixtures/launch/bad.bridge.txt",
               2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "model.tensor_model_parallel_size"));
    CU_ASSERT_EQUAL(count_lines(err ? err : ""), 1);
    free(err);
    err = NULL;
    cmd_expect("sim --model llama3-70b --gpu h100-sxm --gpus 256 --bridge-overrides "
               "tests/fixtures/launch/llama3_70b_256.bridge.txt --torchtitan "
               "tests/fixtures/torchtitan/llama3_70b.toml",
               2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "one framework's inputs"));
    free(err);
}

/* Whole launch commands on the sim command line (a Bridge recipe or
 * performance launcher, Megatron-LM arguments) and what a framework
 * refuses. */
static void test_launch_command_inputs(void)
{
    char *out = NULL, *err = NULL;
    /* a whole Bridge launch command: the recipe's name gives the model, the
     * GPUs and the precision (said), the overrides the layout, the rest of
     * the command is left out with notes */
    cmd_expect("sim --bridge-overrides tests/fixtures/launch/llama31_405b_command.bridge.txt", 0, &out,
               NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "Llama 3.1 405B on 1024 x h100-sxm"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "TP8 CP2 PP8 VPP8 DP8 mb1 gb512"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "fp8-cs, from the launch command"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "ignored --mode"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "account_for_embedding_in_pipeline_split"));
    free(out);
    out = NULL;
    /* Bridge's performance launcher (setup_experiment.py -mr ... -ng ... -tp ...)
     * reads the same: 26.04's 405B H100 run */
    cmd_expect("sim --bridge-overrides tests/fixtures/launch/llama31_405b_perf.bridge.txt", 0, &out,
               NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "Llama 3.1 405B on 1024 x h100-sxm"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "TP8 CP2 PP8 VPP8 DP8 mb1 gb1536"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "fp8-cs"));
    free(out);
    out = NULL;
    /* torchtitan of December 2024 had no gradient accumulation */
    cmd_expect("sim --model llama3-8b --gpu h100-sxm --gpus 8 --framework torchtitan-2024-12 "
               "--global-batch 64 --micro-batch 1",
               2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "no gradient accumulation"));
    CU_ASSERT_EQUAL(count_lines(err ? err : ""), 1);
    free(err);
    err = NULL;
    /* its architecture overrides must be the model's */
    cmd_expect("sim --model llama3-8b --bridge-overrides tests/fixtures/launch/bad_arch.bridge.txt "
               "--gpu h100-sxm --gpus 8",
               2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "model.num_layers=40"));
    CU_ASSERT_EQUAL(count_lines(err ? err : ""), 1);
    free(err);
    err = NULL;
    cmd_expect("sim --megatron-args-file tests/fixtures/megatron/llama3_70b_args.txt --gpu h100-sxm",
               0, &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "TP4 PP8 VPP5 DP2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "read from the inputs"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "ignored --lr: no effect on speed or memory"));
    free(out);
    out = NULL;
    cJSON *j = cmd_expect_json(
        "sim --megatron-args-file tests/fixtures/megatron/llama3_70b_args.txt --gpu h100-sxm "
        "--gpus 128 --json",
        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "layout"), "dp")->valueint, 4);
    cJSON *notes = cJSON_GetObjectItem(j, "notes");
    CU_ASSERT_TRUE(cJSON_GetArraySize(notes) > 20);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(notes, 0), "kind")->valuestring,
                           "ignored");
    cJSON_Delete(j);
    out = NULL;
    j = cmd_expect_json(
        "sim --megatron-args \"--num-layers 4 --hidden-size 256 --num-attention-heads 4 "
        "--max-position-embeddings 1024 --seq-length 1024 --vocab-size 5000 "
        "--tokenizer-type NullTokenizer --bf16 --tensor-model-parallel-size 2\" "
        "--gpu h100-sxm --gpus 8 --json",
        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "layout"), "tp")->valueint, 2);
    cJSON_Delete(j);
    free(out);
}

/* Framework inputs on the sim command line: a torchtitan job config (its
 * flavor the model, its generation the framework) and DeepSpeed configs
 * (ZeRO stage, "auto" values resolved from the flags). */
static void test_config_file_inputs(void)
{
    char *out = NULL, *err = NULL;
    cJSON *j;
    /* A torchtitan job config: the model from its flavor, FSDP over --gpus. */
    cmd_expect("sim --torchtitan tests/fixtures/torchtitan/llama3_70b.toml --gpu h100-sxm --gpus 64 "
               "--json",
               0, &out, NULL);
    j = cJSON_Parse(out ? out : "");
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "model")->valuestring, "llama3-70b");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "layout"), "tp")->valueint, 8);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "layout"), "zero")->valueint, 3);
    /* without --framework, the config's torchtitan generation runs it (its
     * [compile] section dates it after August 2025) */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "torchtitan-2025-12 (the framework of the torchtitan"));
    cJSON_Delete(j);
    free(out);
    out = NULL;
    /* A ZeRO-2 DeepSpeed config runs as DeepSpeed (the default Megatron-Core
     * preset has no ZeRO-2), its optimizer offload honoured. */
    cmd_expect("sim --model llama3-8b --gpu h100-sxm --gpus 8 --seq-len 4096 "
               "--deepspeed tests/fixtures/deepspeed/zero2_offload.json --json",
               0, &out, NULL);
    j = cJSON_Parse(out ? out : "");
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "layout"), "zero")->valueint, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "deepspeed (the framework of the DeepSpeed config"));
    CU_ASSERT_TRUE(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "breakdown_s"), "offload")->valuedouble > 0);
    cJSON_Delete(j);
    free(out);
    out = NULL;
    /* A Trainer-style DeepSpeed config with "auto": resolved, offload honoured,
     * said in the notes. */
    cmd_expect("sim --model llama3-8b --gpu h100-sxm --gpus 8 --micro-batch 2 --recompute full "
               "--seq-len 4096 --deepspeed tests/fixtures/deepspeed/zero3_auto.json --json",
               0, &out, NULL);
    j = cJSON_Parse(out ? out : "");
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    cJSON *lay = cJSON_GetObjectItem(j, "layout");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(lay, "zero")->valueint, 3);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(lay, "micro_batch")->valueint, 2);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(lay, "offload")->valuestring, "optimizer,params");
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "zero_optimization.reduce_bucket_size"));
    cJSON_Delete(j);
    free(out);
    out = NULL;
    err = NULL;
    cmd_expect("sim --model llama3-8b --megatron-args-file tests/fixtures/megatron/llama3_70b_args.txt "
               "--gpu h100-sxm",
               2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "give one or the other"));
    free(err);
    err = NULL;
    cmd_expect("sim --torchtitan tests/fixtures/torchtitan/llama3_70b.toml --gpu h100-sxm", 2, NULL,
               &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "give --gpus"));
    free(err);
    err = NULL;
    cmd_expect("sim --megatron-args \"--num-layer 4\" --model llama3-8b --gpu h100-sxm --gpus 8", 2,
               NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "did you mean --num-layers"));
    free(err);
}

/* Offload on the command line: the acceptance case (with full recompute:
 * at 8192 tokens the activations alone exceed the GPU otherwise), its
 * breakdown key and JSON, and the host memory in the model command. */
static void test_offload_cli(void)
{
    char *out = NULL;
    cJSON *j = cmd_expect_json(
        "sim --model llama3-70b --gpus 8 --gpu h100-sxm --zero 3 --offload optimizer,params "
        "--recompute full --json",
        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(j, "fits")));
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "breakdown_s"), "offload"));
    cJSON *off = cJSON_GetObjectItem(j, "offload");
    CU_ASSERT_TRUE(cJSON_GetObjectItem(off, "transfer_gb")->valuedouble > 0);
    CU_ASSERT_TRUE(cJSON_GetObjectItem(off, "cpu_step_s")->valuedouble > 1);
    CU_ASSERT_STRING_EQUAL(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "layout"), "offload")->valuestring,
        "optimizer,params");
    CU_ASSERT_TRUE(cJSON_GetArraySize(cJSON_GetObjectItem(j, "notes")) >= 2);
    cJSON_Delete(j);
    out = NULL;
    /* The command as given: offload runs checkpoint activations
     * unless a recompute mode is named (said as an assumption); it fits */
    cmd_expect("sim --model llama3-70b --gpus 8 --gpu h100-sxm --zero 3 --offload optimizer,params", 0,
               &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "rc=full"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "assumed --recompute: full with --offload"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "offload: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", ": fits"));
    free(out);
    out = NULL;
    /* At seq 8192 with every activation kept (about 174 GiB) it does not
     * fit: exit 1, the advice names full recompute first. */
    char *err = NULL;
    cmd_expect("sim --model llama3-70b --gpus 8 --gpu h100-sxm --zero 3 --offload optimizer,params "
               "--recompute none",
               1, &out, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "offload: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "try --recompute full, --offload ...,activations"));
    free(out);
    free(err);
    out = NULL;
    cmd_expect("model --model llama3-70b --gpus 8 --gpu h100-sxm --zero 3 --offload optimizer", 0,
               &out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "host (offload)"));
    free(out);
    err = NULL;
    cmd_expect("sim --model llama3-8b --gpus 8 --gpu h100-sxm --offload params", 2, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "--zero 3"));
    free(err);
}

/* Whether path is a regular file (not a link) holding exactly want. */
static bool regular_with(const char *path, const char *want)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    char *got = slurp(path);
    bool same = got && (!want || strcmp(got, want) == 0);
    free(got);
    return same;
}

/* Whether dir holds an entry whose name contains part. */
static bool dir_has(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    bool found = false;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        found = found || strstr(e->d_name, part) != NULL;
    if (d)
        closedir(d);
    return found;
}

/* Issue 35 item 8c: sim --trace FILE and plan --emit ... --out FILE are
 * written beside FILE and renamed over it. A symbolic link planted at FILE
 * is replaced, not written through (the victim keeps its text); a run
 * whose write fails (a file-size limit of 512 bytes, below a trace or a
 * launch script, with SIGXFSZ ignored so the write returns EFBIG) exits 1
 * and leaves the old FILE whole and no temporary file beside it. */
static void test_outputs_written_atomically(void)
{
    static const struct {
        const char *args; /* %s: the output file */
    } cmds[] = {
        {"sim --model llama3-8b --gpu h100-sxm --gpus 16 --tp 2 --global-batch 32 --allow-oom "
         "--trace %s"},
        {"plan --model llama3-8b --gpu h100-sxm --min-gpus 8 --max-gpus 8 --trials 20 --emit "
         "megatron --out %s"},
    };
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char victim[400], out[400], args[1200];
        snprintf(victim, sizeof victim, "%s/victim%zu", dir, i);
        snprintf(out, sizeof out, "%s/out%zu", dir, i);
        FILE *f = fopen(victim, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs("VICTIM\n", f);
        fclose(f);
        CU_ASSERT_EQUAL_FATAL(symlink(victim, out), 0);
        snprintf(args, sizeof args, cmds[i].args, out);
        CU_ASSERT_EQUAL(run_cli(args, NULL, NULL), 0);
        CU_ASSERT_TRUE(regular_with(victim, "VICTIM\n"));
        CU_ASSERT_TRUE(regular_with(out, NULL));
        /* the old file survives a failed write */
        f = fopen(out, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs("OLD\n", f);
        fclose(f);
        char cmd[2000], errpath[400];
        snprintf(errpath, sizeof errpath, "%s/stderr", dir);
        snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 1; '%s' %s >/dev/null 2>'%s'",
                 getenv("SCALEPLAN_BIN") ? getenv("SCALEPLAN_BIN") : "bin/scaleplan", args,
                 errpath);
        int status = system(cmd);
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        char *err = slurp(errpath);
        if (rc != 1 || !regular_with(out, "OLD\n"))
            fprintf(stderr, "\n$ scaleplan %s (512-byte limit): exit %d, %s\n", args, rc,
                    err ? err : "");
        CU_ASSERT_EQUAL(rc, 1);
        CU_ASSERT_TRUE(regular_with(out, "OLD\n"));
        CU_ASSERT_FALSE(dir_has(dir, ".tmp"));
        free(err);
    }
    remove_tree(dir);
}

TEST_SUITE(suite_cli_inputs, "cmd_inputs", TEST(test_framework_inputs), TEST(test_launch_command_inputs),
           TEST(test_config_file_inputs),
           TEST(test_offload_cli), TEST(test_outputs_written_atomically));
