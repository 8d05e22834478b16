/* The reference trainer end to end, through the real binary: the loss
 * falls; data- and tensor-parallel runs (mpirun -np 2) equal the single
 * process; a killed job resumes bit-exact; a damaged checkpoint is
 * skipped; validate compares a measured run with the simulator; preflight
 * passes on the CPU; bad input fails in one line. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/fileio.h"
#include "common/strfmt.h"

#include "tests/testing.h"

#define TINY_GPT "tests/fixtures/configs/tiny-gpt.json"
#define TINY_LLAMA "tests/fixtures/configs/tiny-llama.json"

static cJSON *run_json(const char *args, int expect_rc)
{
    char *out = NULL, *err = NULL;
    int rc = run_cli(args, &out, &err);
    if (rc != expect_rc)
        fprintf(stderr, "\n$ scaleplan %s -> %d (expected %d)\nstderr: %s\n", args, rc, expect_rc,
                err ? err : "");
    CU_ASSERT_EQUAL(rc, expect_rc);
    cJSON *j = cJSON_Parse(out ? out : "");
    free(out);
    free(err);
    return j;
}

static cJSON *mpi_json(int ranks, const char *args)
{
    char *out = NULL, *err = NULL;
    int rc = run_mpi(ranks, args, &out, &err);
    if (rc != 0)
        fprintf(stderr, "\n$ mpirun -np %d scaleplan %s -> %d\nstderr: %s\n", ranks, args, rc,
                err ? err : "");
    CU_ASSERT_EQUAL(rc, 0);
    cJSON *j = cJSON_Parse(out ? out : "");
    free(out);
    free(err);
    return j;
}

static double loss_at(const cJSON *j, int i)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "losses"), i);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int n_losses(const cJSON *j) { return cJSON_GetArraySize(cJSON_GetObjectItem(j, "losses")); }

/* Largest relative difference between the loss curves (b from offset of a). */
static double curve_diff(const cJSON *a, int offset, const cJSON *b)
{
    int n = n_losses(b);
    if (n == 0 || offset + n != n_losses(a))
        return INFINITY;
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double x = loss_at(a, offset + i), y = loss_at(b, i);
        double d = fabs(x - y) / fabs(x);
        if (!(d <= worst))
            worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

static void test_loss_falls_and_json(void)
{
    /* 40 steps of the built-in corpus: from ln(300) = 5.70 to well below */
    cJSON *j = run_json("train --model " TINY_GPT " --steps 40 --micro-batch 4 --seq-len 32 "
                        "--lr 3e-3 --json --quiet",
                        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(n_losses(j), 40);
    CHECK_REL(loss_at(j, 0), log(300.0), 0.03);
    double last = cJSON_GetObjectItem(j, "final_loss")->valuedouble;
    CU_ASSERT(last < loss_at(j, 0) - 1.5);
    /* the sim schema: breakdown parts add up to the step */
    const char *keys[] = {"step_time_s", "tokens_per_s", "breakdown_s", "memory_gib", "layout",
                          "grad_norms", "alerts", "model", "gpu", "software"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(j, keys[i]));
    const cJSON *bd = cJSON_GetObjectItem(j, "breakdown_s"), *e;
    double sum = 0;
    cJSON_ArrayForEach(e, bd) sum += e->valuedouble;
    CHECK_REL(sum, cJSON_GetObjectItem(j, "step_time_s")->valuedouble, 1e-6);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "gpu")->valuestring, "cpu");
    /* measured memory: the parameters of tiny-gpt are 37,120 floats */
    double params_gib = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "memory_gib"), "params")->valuedouble;
    CHECK_REL(params_gib * 1024 * 1024 * 1024, 37120 * 4.0, 1e-6);
    /* tokens per second is tokens per step over the step time */
    CHECK_REL(cJSON_GetObjectItem(j, "tokens_per_s")->valuedouble,
              128 / cJSON_GetObjectItem(j, "step_time_s")->valuedouble, 1e-6);
    cJSON_Delete(j);
}

/* DP = 2, TP = 2 and ZeRO-1 over 2 ranks against one process, same global
 * batch (the single process accumulates 2 micro-batches). */
static void test_parallel_runs_equal_single(void)
{
    if (!mpi_available()) {
        fprintf(stderr, "\n  SKIPPED: mpirun not found (make deps installs openmpi-bin)\n");
        return;
    }
    const char *models[] = {TINY_LLAMA, TINY_GPT};
    for (int k = 0; k < 2; k++) {
        char base[400], args[480];
        snprintf(base, sizeof base,
                 "train --model %s --steps 5 --micro-batch 2 --global-batch 4 --seq-len 16 "
                 "--lr 2e-3 --json --quiet",
                 models[k]);
        cJSON *one = run_json(base, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(one);
        const char *variants[] = {"", "--tp 2", "--zero1", "--no-overlap"};
        for (int v = 0; v < 4; v++) {
            snprintf(args, sizeof args, "%s %s", base, variants[v]);
            cJSON *two = mpi_json(2, args);
            CU_ASSERT_PTR_NOT_NULL_FATAL(two);
            double d = curve_diff(one, 0, two);
            if (!(d < 1e-5))
                fprintf(stderr, "\n  %s 2 ranks %s: relative loss difference %.3g\n", models[k],
                        variants[v], d);
            CU_ASSERT(d < 1e-5);
            const cJSON *l = cJSON_GetObjectItem(two, "layout");
            CU_ASSERT_EQUAL(cJSON_GetObjectItem(l, "dp")->valueint, v == 1 ? 1 : 2);
            cJSON_Delete(two);
        }
        cJSON_Delete(one);
    }
}

static void test_kill_and_resume_bit_exact(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    for (int ranks = 1; ranks <= 2; ranks++) {
        if (ranks == 2 && !mpi_available()) {
            fprintf(stderr, "\n  SKIPPED: 2-rank kill test (mpirun not found)\n");
            break;
        }
        char a[600], b[600], c[600];
        const char *common = "train --model " TINY_GPT
                             " --steps 8 --micro-batch 2 --global-batch 4 --seq-len 16 "
                             "--json --quiet --checkpoint-every 2";
        snprintf(a, sizeof a, "%s --checkpoint-dir %s/a%d", common, dir, ranks);
        snprintf(b, sizeof b, "%s --checkpoint-dir %s/b%d --fail-at-step 6 --fail-rank %d", common,
                 dir, ranks, ranks - 1);
        snprintf(c, sizeof c, "%s --checkpoint-dir %s/b%d --resume --async-checkpoint",
                 common, dir, ranks);
        cJSON *whole = ranks == 1 ? run_json(a, 0) : mpi_json(2, a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
        char *err = NULL;
        int rc = ranks == 1 ? run_cli(b, NULL, &err) : run_mpi(2, b, NULL, &err);
        /* killed: not a success, and the log says which rank */
        CU_ASSERT_NOT_EQUAL(rc, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "killed on purpose at step 6"));
        free(err);
        cJSON *resumed = ranks == 1 ? run_json(c, 0) : mpi_json(2, c);
        CU_ASSERT_PTR_NOT_NULL_FATAL(resumed);
        int first = cJSON_GetObjectItem(resumed, "first_step")->valueint;
        CU_ASSERT_EQUAL(first, 4); /* the last save before the kill */
        CU_ASSERT_EQUAL(n_losses(resumed), 4);
        for (int i = 0; i < n_losses(resumed); i++)
            CU_ASSERT_EQUAL(loss_at(resumed, i), loss_at(whole, first + i)); /* bit for bit */
        cJSON_Delete(whole);
        cJSON_Delete(resumed);
    }
    remove_tree(dir);
}

static void test_damaged_checkpoint_skipped(void)
{
    char dir[256], path[400], args[600];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(args, sizeof args,
             "train --model " TINY_LLAMA " --steps 6 --stop-after 4 --micro-batch 2 --seq-len 16 "
             "--quiet --checkpoint-every 2 --checkpoint-dir %s",
             dir);
    CU_ASSERT_EQUAL_FATAL(run_cli(args, NULL, NULL), 0);
    /* corrupt the newest */
    snprintf(path, sizeof path, "%s/step-00000004/rank-00000.bin", dir);
    char *data = NULL;
    size_t len = 0;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(fileio_read_all(path, &data, &len, &e), 0);
    data[len - 10] ^= 1;
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, data, len, &e), 0);
    free(data);
    snprintf(args, sizeof args,
             "train --model " TINY_LLAMA " --steps 6 --micro-batch 2 --seq-len 16 --quiet --json "
             "--checkpoint-every 2 --checkpoint-dir %s --resume",
             dir);
    cJSON *j = run_json(args, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "resumed_from_step")->valueint, 2);
    const cJSON *skipped = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "checkpoints_skipped"), 0);
    CU_ASSERT_TRUE(cJSON_IsString(skipped) && strstr(skipped->valuestring, "checksum"));
    cJSON_Delete(j);
    remove_tree(dir);
}

static void test_validate(void)
{
    /* a published run (SC21 Table 1, GPT 1.7B on 32 A100s), as a measured file */
    cJSON *v = run_json("validate --measured tests/fixtures/validate/sc21-gpt-1.7b-32xa100.json "
                        "--json",
                        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    double err = cJSON_GetObjectItem(v, "step_time_error")->valuedouble;
    CU_ASSERT(fabs(err) < 0.10);
    /* the prediction is the simulator's for that configuration */
    cJSON *s = run_json("sim --model sc21-gpt-1.7b --gpu a100-80g --gpus 32 --micro-batch 16 "
                        "--global-batch 512 --seq-len 2048 --recompute full --precision fp16 "
                        "--framework megatron-2021 --json",
                        0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CHECK_REL(cJSON_GetObjectItem(v, "predicted_step_time_s")->valuedouble,
              cJSON_GetObjectItem(s, "step_time_s")->valuedouble, 1e-9);
    CHECK_REL(cJSON_GetObjectItem(v, "measured_step_time_s")->valuedouble, 3.528, 1e-12);
    cJSON_Delete(v);
    cJSON_Delete(s);
    /* its report: predicted against measured per component */
    char dir[256], args[400];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(args, sizeof args,
             "validate --measured tests/fixtures/validate/sc21-gpt-1.7b-32xa100.json --report "
             "%s/r",
             dir);
    CU_ASSERT_EQUAL(run_cli(args, NULL, NULL), 0);
    char path[300];
    snprintf(path, sizeof path, "%s/r/components.csv", dir);
    char *csv = slurp(path);
    CU_ASSERT_TRUE(csv && strstr(csv, "step,"));
    free(csv);
    remove_tree(dir);
}

static void test_bad_input(void)
{
    char dir[256], path[400];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    /* a CPU run cannot be validated against a GPU model */
    snprintf(path, sizeof path, "%s/cpu.json", dir);
    char *run = NULL;
    err_t e;
    CU_ASSERT_EQUAL(run_cli("train --model " TINY_GPT " --steps 1 --seq-len 8 --micro-batch 1 "
                            "--json --quiet",
                            &run, NULL),
                    0);
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, run ? run : "", run ? strlen(run) : 0, &e), 0);
    free(run);
    const struct {
        const char *args, *needle;
        int rc;
    } cases[] = {
        {"train --model " TINY_GPT " --device tpu", "cpu or cuda", 2},
        {"train --model " TINY_GPT " --device cuda --steps 1", "--device cuda", 1},
        {"train --model " TINY_GPT " --seq-len 65", "longer than the model", 2},
        {"train --model " TINY_GPT " --tp 3", "--tp", 2},
        {"train --model " TINY_GPT " --micro-batch 3 --global-batch 4", "--global-batch", 2},
        {"train --model " TINY_GPT " --steps 0", "--steps", 2},
        {"train --model " TINY_GPT " --data /no/such/corpus.txt", "/no/such/corpus.txt", 2},
        {"train --model " TINY_GPT " --resume", "--checkpoint-dir", 2},
        {"train --model " TINY_GPT " --resume-from /no/such/ckpt", "--resume-from", 2},
        {"validate --measured /no/such/run.json", "/no/such/run.json", 2},
        {"validate --measured tests/fixtures/configs/malformed.json", "malformed JSON", 2},
        {"validate", "--measured", 2},
        {NULL, "measured on the CPU", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char a[600], *err = NULL;
        if (cases[i].args)
            snprintf(a, sizeof a, "%s", cases[i].args);
        else
            snprintf(a, sizeof a, "validate --measured %s", path);
        int rc = run_cli(a, NULL, &err);
        if (rc != cases[i].rc || !err || !strstr(err, cases[i].needle) || count_lines(err) != 1) {
            fprintf(stderr, "\n$ scaleplan %s -> %d\nstderr: %s(expected %d and '%s')\n", a, rc,
                    err ? err : "", cases[i].rc, cases[i].needle);
            CU_FAIL("bad input not reported as one line with the right exit code");
        }
        free(err);
    }
    remove_tree(dir);
}

static void test_preflight_cpu(void)
{
    /* preflight starts mpirun itself: no leak checking in there (see
     * run_mpi in testing.c) */
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    cJSON *j = run_json("preflight --json", 0);
    unsetenv("ASAN_OPTIONS");
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    int pass = 0, skip = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "checks"))
    {
        const char *r = cJSON_GetObjectItem(c, "result")->valuestring;
        pass += strcmp(r, "pass") == 0;
        skip += strcmp(r, "skip") == 0;
        if (strcmp(r, "fail") == 0)
            fprintf(stderr, "\n  preflight: %s: %s\n", cJSON_GetObjectItem(c, "check")->valuestring,
                    cJSON_GetObjectItem(c, "figure")->valuestring);
    }
    /* on a CPU: bf16 and the throughput check need a GPU */
    CU_ASSERT_EQUAL(skip, mpi_available() ? 2 : 3);
    CU_ASSERT_EQUAL(pass, 6 - skip);
    cJSON_Delete(j);
}

/* stderr of a run, and its exit status */
static int run_err(const char *args, char **err)
{
    char *out = NULL;
    int rc = run_cli(args, &out, err);
    free(out);
    return rc;
}

/* Issue 17 row 4: a checkpoint records the run's settings; a resume with
 * another seed (or data, batch, steps, LR schedule) is refused naming the
 * field, unless --allow-changes; a fresh run into a folder holding another
 * run's checkpoints is refused unless --overwrite. */
static void test_checkpoint_of_another_run(void)
{
    char dir[256], a[700], *err = NULL;
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    const char *common = "train --model " TINY_GPT " --steps 6 --micro-batch 2 --seq-len 16 "
                         "--quiet --checkpoint-every 2";
    snprintf(a, sizeof a, "%s --seed 1 --stop-after 4 --checkpoint-dir %s/c", common, dir);
    CU_ASSERT_EQUAL_FATAL(run_cli(a, NULL, NULL), 0);
    /* the manifest carries the settings */
    char man[400];
    snprintf(man, sizeof man, "%s/c/step-00000004/manifest.json", dir);
    char *text = slurp(man);
    cJSON *m = cJSON_Parse(text ? text : "");
    free(text);
    const cJSON *run = cJSON_GetObjectItem(m, "run");
    static const char *keys[] = {"seed", "data", "data_crc32", "micro_batch", "global_batch",
                                 "seq_len", "steps", "lr", "min_lr", "warmup_steps"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_TRUE(cJSON_IsString(cJSON_GetObjectItem(run, keys[i])));
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(run, "seed")->valuestring, "1");
    cJSON_Delete(m);
    /* another seed into the same folder: a fresh run is refused ... */
    snprintf(a, sizeof a, "%s --seed 2 --checkpoint-dir %s/c", common, dir);
    CU_ASSERT_EQUAL(run_err(a, &err), 2);
    CU_ASSERT_TRUE(err && strstr(err, "already holds checkpoints") && count_lines(err) == 1);
    free(err);
    /* ... and so is its resume, naming the seed */
    snprintf(a, sizeof a, "%s --seed 2 --checkpoint-dir %s/c --resume", common, dir);
    CU_ASSERT_EQUAL(run_err(a, &err), 2);
    CU_ASSERT_TRUE(err && strstr(err, "seed 1 in the checkpoint, 2 in this run") &&
                   count_lines(err) == 1);
    free(err);
    snprintf(a, sizeof a,
             "train --model " TINY_GPT " --steps 6 --micro-batch 2 --seq-len 8 --quiet "
             "--checkpoint-every 2 --seed 1 --checkpoint-dir %s/c --resume",
             dir);
    CU_ASSERT_EQUAL(run_err(a, &err), 2);
    CU_ASSERT_TRUE(err && strstr(err, "seq_len 16 in the checkpoint, 8 in this run"));
    free(err);
    snprintf(a, sizeof a, "%s --seed 1 --lr 1e-3 --checkpoint-dir %s/c --resume", common, dir);
    CU_ASSERT_EQUAL(run_err(a, &err), 2);
    CU_ASSERT_TRUE(err && strstr(err, "lr ") && strstr(err, "--allow-changes"));
    free(err);
    /* accepted with --allow-changes, and said so whatever --quiet says */
    snprintf(a, sizeof a, "%s --seed 1 --lr 1e-3 --checkpoint-dir %s/c --resume --allow-changes",
             common, dir);
    CU_ASSERT_EQUAL(run_err(a, &err), 0);
    CU_ASSERT_TRUE(err && strstr(err, "changed settings") && strstr(err, "lr "));
    free(err);
    /* the same settings resume; --overwrite starts over */
    snprintf(a, sizeof a, "%s --seed 2 --checkpoint-dir %s/c --overwrite --json", common, dir);
    cJSON *j = run_json(a, 0);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "first_step")->valueint, 0);
    cJSON_Delete(j);
    remove_tree(dir);
}

/* Issue 17 rows 8, 10 and 15: --stop-after without a folder is refused; a
 * write past the file size limit fails on one line and leaves no
 * temporary file; --resume with nothing usable says so on stderr even with
 * --quiet, and the JSON lists what was skipped. */
static void test_checkpoint_edges(void)
{
    char dir[256], a[700], *err = NULL;
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    const char *common = "train --model " TINY_GPT " --steps 2 --micro-batch 2 --seq-len 16 "
                         "--quiet";
    snprintf(a, sizeof a, "%s --stop-after 1", common);
    CU_ASSERT_EQUAL(run_err(a, &err), 2);
    CU_ASSERT_TRUE(err && strstr(err, "--stop-after: needs --checkpoint-dir") &&
                   count_lines(err) == 1);
    free(err);
    /* ulimit -f counts 512-byte blocks in dash, 1 KiB in bash: 100 is far
     * below a shard of tiny-gpt (1.6 MB) either way */
    snprintf(a, sizeof a, "%s --checkpoint-dir %s/f", common, dir);
    CU_ASSERT_EQUAL(run_cli_env("ulimit -f 100; ", a, NULL, &err), 1);
    CU_ASSERT_TRUE(err && strstr(err, "File too large") && count_lines(err) == 1);
    free(err);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "find %s/f -name '*.tmp*' | grep -q .", dir);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0);
    /* missing, then empty folder */
    for (int k = 0; k < 2; k++) {
        if (k == 1) {
            snprintf(cmd, sizeof cmd, "mkdir -p %s/empty", dir);
            CU_ASSERT_EQUAL(system(cmd), 0);
        }
        snprintf(a, sizeof a, "%s --checkpoint-dir %s/%s --resume", common, dir,
                 k ? "empty" : "missing");
        CU_ASSERT_EQUAL(run_err(a, &err), 0);
        CU_ASSERT_TRUE(err && strstr(err, "no usable checkpoint in ") &&
                       strstr(err, ": starting at step 0") && count_lines(err) == 1);
        free(err);
    }
    /* every checkpoint damaged: one line, and the JSON names them */
    snprintf(a, sizeof a, "%s --checkpoint-every 1 --checkpoint-dir %s/d", common, dir);
    CU_ASSERT_EQUAL_FATAL(run_cli(a, NULL, NULL), 0);
    for (int step = 1; step <= 2; step++) {
        char path[400];
        snprintf(path, sizeof path, "%s/d/step-%08d/rank-00000.bin", dir, step);
        FILE *f = fopen(path, "r+b");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fseek(f, 100, SEEK_SET);
        fputc(0x5a, f);
        fclose(f);
    }
    snprintf(a, sizeof a, "%s --checkpoint-every 1 --checkpoint-dir %s/d --resume --json", common,
             dir);
    char *out = NULL;
    CU_ASSERT_EQUAL(run_cli(a, &out, &err), 0);
    CU_ASSERT_TRUE(err && strstr(err, "no usable checkpoint") && count_lines(err) == 1);
    cJSON *j = cJSON_Parse(out ? out : "");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(j, "checkpoints_skipped")), 2);
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "first_step")->valueint, 0);
    cJSON_Delete(j);
    free(out);
    free(err);
    remove_tree(dir);
}

/* Issue 17 row 6: a rank that stops (SIGSTOP, as a hang) is named by the
 * watchdog of the others, and the job ends non-zero within seconds. */
static void test_watchdog_names_stopped_rank(void)
{
    if (!mpi_available()) {
        fprintf(stderr, "\n  SKIPPED: watchdog test (mpirun not found)\n");
        return;
    }
    char *err = NULL;
    int rc = run_mpi_limited(120, 2,
                             "train --model " TINY_GPT " --steps 8 --micro-batch 2 --seq-len 16 "
                             "--quiet --fail-at-step 3 --fail-rank 1 --fail-how stop "
                             "--collective-timeout 3",
                             NULL, &err);
    CU_ASSERT_TRUE(rc != 0 && rc != 137);
    CU_ASSERT_TRUE(err && strstr(err, "for rank 1, which did not reach it"));
    if (!err || !strstr(err, "for rank 1"))
        fprintf(stderr, "\nwatchdog: exit %d, stderr: %s\n", rc, err ? err : "");
    free(err);
}


/* Issue 35 row 4: the manifest records the architecture, and a resume into
 * another one is refused naming each field and both values - here a model
 * of the same file name and parameter count with 8 heads of 4 instead of 4
 * of 8 (tiny-gpt: hidden 32), whose weights would load without complaint.
 * --allow-changes does not accept it. */
static void test_checkpoint_of_another_architecture(void)
{
    char dir[256], a[900], *err = NULL;
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char *text = slurp(TINY_GPT);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    char *at = strstr(text, "\"n_head\": 4");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    err_t e;
    char path[400];
    snprintf(path, sizeof path, "%s/four", dir);
    CU_ASSERT_EQUAL_FATAL(fileio_mkdirs(path, &e), 0);
    snprintf(path, sizeof path, "%s/four/tiny.json", dir);
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, strlen(text), &e), 0);
    at[strlen("\"n_head\": ")] = '8';
    snprintf(path, sizeof path, "%s/eight", dir);
    CU_ASSERT_EQUAL_FATAL(fileio_mkdirs(path, &e), 0);
    snprintf(path, sizeof path, "%s/eight/tiny.json", dir);
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, strlen(text), &e), 0);
    free(text);
    const char *common = "--steps 4 --micro-batch 2 --seq-len 16 --quiet --checkpoint-every 2";
    snprintf(a, sizeof a, "train --model %s/four/tiny.json %s --stop-after 2 --checkpoint-dir %s/c",
             dir, common, dir);
    CU_ASSERT_EQUAL_FATAL(run_cli(a, NULL, NULL), 0);
    /* the manifest carries the architecture */
    snprintf(path, sizeof path, "%s/c/step-00000002/manifest.json", dir);
    char *man = slurp(path);
    cJSON *m = cJSON_Parse(man ? man : "");
    free(man);
    const cJSON *arch = cJSON_GetObjectItem(m, "architecture");
    static const char *const keys[] = {"n_layers", "hidden", "n_heads", "n_kv_heads", "head_dim",
                                       "ffn", "vocab", "max_seq", "norm", "activation", "position",
                                       "tied_embeddings", "norm_eps"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CU_ASSERT_TRUE(cJSON_IsString(cJSON_GetObjectItem(arch, keys[i])));
    const cJSON *heads = cJSON_GetObjectItem(arch, "n_heads");
    CU_ASSERT_TRUE(cJSON_IsString(heads) && strcmp(heads->valuestring, "4") == 0);
    cJSON_Delete(m);
    for (int allow = 0; allow <= 1; allow++) {
        snprintf(a, sizeof a, "train --model %s/eight/tiny.json %s --checkpoint-dir %s/c --resume%s",
                 dir, common, dir, allow ? " --allow-changes" : "");
        CU_ASSERT_EQUAL(run_err(a, &err), 2);
        CU_ASSERT_TRUE(err && strstr(err, "another model architecture") &&
                       strstr(err, "n_heads 4 in the checkpoint, 8 in this run") &&
                       count_lines(err) == 1);
        if (!err || !strstr(err, "n_heads 4 in the checkpoint, 8 in this run"))
            fprintf(stderr, "\n  architecture: stderr %s\n", err ? err : "(none)");
        free(err);
    }
    /* the same architecture resumes */
    snprintf(a, sizeof a, "train --model %s/four/tiny.json %s --checkpoint-dir %s/c --resume --json",
             dir, common, dir);
    cJSON *j = run_json(a, 0);
    const cJSON *first = cJSON_GetObjectItem(j, "first_step");
    CU_ASSERT_TRUE(cJSON_IsNumber(first) && first->valueint == 2);
    cJSON_Delete(j);
    remove_tree(dir);
}

/* Issue 35 row 5: a rollback with --resume-from an older step starts a new
 * timeline; the newer step folders of the abandoned one are moved into a
 * retired-* folder (said in one line, nothing deleted), so that a later
 * plain --resume continues the new timeline: from its step 6, not the old
 * run's step 8. */
static void test_rollback_fences_abandoned_timeline(void)
{
    char dir[256], a[900], *err = NULL;
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    const char *common = "train --model " TINY_GPT " --steps 8 --micro-batch 2 --seq-len 16 "
                         "--quiet --checkpoint-every 2";
    snprintf(a, sizeof a, "%s --checkpoint-dir %s/c", common, dir);
    CU_ASSERT_EQUAL_FATAL(run_cli(a, NULL, NULL), 0); /* keeps steps 4, 6, 8 */
    /* roll back to step 4 and train to 6 */
    snprintf(a, sizeof a, "%s --checkpoint-dir %s/c --resume-from %s/c/step-00000004 --stop-after 6",
             common, dir, dir);
    CU_ASSERT_EQUAL(run_err(a, &err), 0);
    CU_ASSERT_TRUE(err && strstr(err, "resumed from step 4: moved 2 newer checkpoint folders") &&
                   strstr(err, "retired-after-step-00000004-") &&
                   strstr(err, "nothing was deleted") && count_lines(err) == 1);
    if (!err || count_lines(err) != 1)
        fprintf(stderr, "\n  rollback: stderr %s\n", err ? err : "(none)");
    free(err);
    /* the abandoned checkpoints are kept, aside */
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "test -f %s/c/retired-after-step-00000004-*/step-00000008/manifest.json && "
             "test -f %s/c/retired-after-step-00000004-*/step-00000006/rank-00000.bin && "
             "test ! -e %s/c/step-00000008",
             dir, dir, dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    /* a plain --resume continues the new timeline */
    snprintf(a, sizeof a, "%s --checkpoint-dir %s/c --resume --json", common, dir);
    cJSON *j = run_json(a, 0);
    const cJSON *first = cJSON_GetObjectItem(j, "first_step");
    CU_ASSERT_TRUE(cJSON_IsNumber(first) && first->valueint == 6);
    CU_ASSERT_EQUAL(n_losses(j), 2);
    cJSON_Delete(j);
    remove_tree(dir);
}

/* "scaleplan ARGS" started in the background, stderr into errfile: its
 * pid, or -1. */
static pid_t start_cli(const char *args, const char *errfile)
{
    const char *bin = getenv("SCALEPLAN_BIN");
    char *cmd = str_printf("exec %s %s >/dev/null 2>%s", bin ? bin : "bin/scaleplan", args, errfile);
    if (!cmd)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    free(cmd);
    return pid;
}

/* Wait up to limit_s for file path to contain needle. */
static bool wait_for_text(const char *path, const char *needle, int limit_s)
{
    for (int i = 0; i < limit_s * 20; i++) {
        char *text = slurp(path);
        bool found = text && strstr(text, needle);
        free(text);
        if (found)
            return true;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* Issue 35 row 6: two trainings into one --checkpoint-dir. The first holds
 * the folder's lock while it runs (here: stopped with SIGSTOP at step 3,
 * as a hung job); a second is refused with exit 2 naming the holder's
 * pid, host and start time. Once the first is killed, the kernel has
 * released its lock: the lock file it left (still naming it) blocks
 * nothing, and a resume continues from its checkpoint. */
static void test_checkpoint_dir_locked(void)
{
    char dir[256], a[900], errfile[300], lock[300], needle[64], *err = NULL;
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    const char *common = "train --model " TINY_GPT " --steps 6 --micro-batch 2 --seq-len 16 "
                         "--quiet --checkpoint-every 2";
    snprintf(a, sizeof a, "%s --checkpoint-dir %s/c --fail-at-step 4 --fail-how stop", common, dir);
    snprintf(errfile, sizeof errfile, "%s/first.err", dir);
    snprintf(lock, sizeof lock, "%s/c/train.lock", dir);
    pid_t pid = start_cli(a, errfile);
    CU_ASSERT_FATAL(pid > 0);
    snprintf(needle, sizeof needle, "pid %ld\n", (long)pid);
    bool stopped = wait_for_text(errfile, "stopped on purpose at step 4", 120);
    CU_ASSERT_TRUE(stopped);
    if (stopped) {
        snprintf(a, sizeof a, "%s --checkpoint-dir %s/c --resume", common, dir);
        int rc = run_err(a, &err);
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        char who[80];
        snprintf(who, sizeof who, "pid %ld on host ", (long)pid);
        CU_ASSERT_EQUAL(rc, 2);
        CU_ASSERT_TRUE(err && strstr(err, "--checkpoint-dir: in use by another training") &&
                       strstr(err, who) && strstr(err, host) && strstr(err, "started 2") &&
                       count_lines(err) == 1);
        if (rc != 2 || !err || !strstr(err, who))
            fprintf(stderr, "\n  second run: exit %d, stderr %s\n", rc, err ? err : "(none)");
        free(err);
    }
    kill(pid, SIGKILL);
    int status;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    /* a stale lock file: it still names the dead run, and blocks nothing */
    char *text = slurp(lock);
    CU_ASSERT_TRUE(text && strstr(text, needle));
    free(text);
    snprintf(a, sizeof a, "%s --checkpoint-dir %s/c --resume --json", common, dir);
    cJSON *j = run_json(a, 0);
    const cJSON *first = cJSON_GetObjectItem(j, "first_step");
    CU_ASSERT_TRUE(cJSON_IsNumber(first) && first->valueint == 2);
    cJSON_Delete(j);
    remove_tree(dir);
}

/* dir + "/" + as many 99-byte folder names as make it at least len bytes
 * (heap). */
static char *long_path(const char *dir, size_t len)
{
    char name[100];
    memset(name, 'd', 99);
    name[99] = '\0';
    char *p = str_printf("%s", dir);
    while (p && strlen(p) < len)
        if (str_appendf(&p, "/%s", name) != 0) {
            free(p);
            p = NULL;
        }
    return p;
}

/* Issue 35 row 7: a --checkpoint-dir of 600 bytes (past the old 512-byte
 * buffers, which cut it: the save went to another folder and --resume
 * started over) saves and resumes at the right step; one of 5000 bytes
 * (past PATH_MAX) is refused on one line naming --checkpoint-dir, exit 2,
 * creating nothing. Neither starts over silently. */
static void test_long_checkpoint_dir(void)
{
    char dir[256], *err = NULL;
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    const char *common = "train --model " TINY_GPT " --steps 4 --micro-batch 2 --seq-len 16 "
                         "--quiet --checkpoint-every 2";
    char *mid = long_path(dir, 600), *huge = long_path(dir, 5000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mid);
    CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
    char *a = str_printf("%s --stop-after 2 --checkpoint-dir %s", common, mid);
    CU_ASSERT_EQUAL(run_cli(a, NULL, NULL), 0);
    free(a);
    a = str_printf("%s --checkpoint-dir %s --resume --json", common, mid);
    cJSON *j = run_json(a, 0);
    free(a);
    const cJSON *first = cJSON_GetObjectItem(j, "first_step");
    const cJSON *from = cJSON_GetObjectItem(j, "resumed_from");
    char *want = str_printf("%s/step-00000002", mid);
    CU_ASSERT_TRUE(cJSON_IsNumber(first) && first->valueint == 2);
    CU_ASSERT_TRUE(cJSON_IsString(from) && want && strcmp(from->valuestring, want) == 0);
    CU_ASSERT_EQUAL(n_losses(j), 2);
    cJSON_Delete(j);
    free(want);
    for (int resume = 0; resume <= 1; resume++) {
        a = str_printf("%s --checkpoint-dir %s%s", common, huge, resume ? " --resume" : "");
        CU_ASSERT_EQUAL(run_err(a, &err), 2);
        CU_ASSERT_TRUE(err && strstr(err, "--checkpoint-dir: a path of ") &&
                       strstr(err, "too long") && count_lines(err) == 1);
        free(err);
        free(a);
    }
    /* nothing of it was created: mid is its beginning, the next folder is
     * not there */
    char *next = str_printf("%.*s", (int)strlen(mid) + 100, huge);
    CU_ASSERT_TRUE(next && strncmp(next, mid, strlen(mid)) == 0 && access(next, F_OK) != 0);
    free(next);
    free(mid);
    free(huge);
    remove_tree(dir);
}

TEST_SUITE(suite_train, "train", TEST(test_loss_falls_and_json),
           TEST(test_parallel_runs_equal_single), TEST(test_kill_and_resume_bit_exact),
           TEST(test_damaged_checkpoint_skipped), TEST(test_validate), TEST(test_bad_input),
           TEST(test_preflight_cpu),
           TEST(test_checkpoint_of_another_run), TEST(test_checkpoint_edges),
           TEST(test_watchdog_names_stopped_rank), TEST(test_checkpoint_of_another_architecture),
           TEST(test_rollback_fences_abandoned_timeline), TEST(test_checkpoint_dir_locked),
           TEST(test_long_checkpoint_dir));
