/* Tests of common/plugin and of what each command loads: the planning
 * commands and --help never load CUDA, cuBLASLt, NCCL or MPI, and the
 * commands that need them do (the loader's own trace, LD_DEBUG=libs,
 * names every library a process opens, dlopen included). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/plugin.h"
#include "testing.h"

static char tmpdir[256];

/* Libraries that must stay out of the planning commands. */
static const char *const HEAVY[] = {"libcublasLt", "libcublas.", "libnccl", "libcudart",
                                    "libcuda.",    "libmpi",     "scaleplan-cuda.so",
                                    "scaleplan-mpi.so"};

/* The first heavy library LD_DEBUG=libs reports in trace, or NULL. */
static const char *heavy_in(const char *trace)
{
    for (size_t i = 0; i < sizeof HEAVY / sizeof HEAVY[0]; i++)
        if (trace && strstr(trace, HEAVY[i]))
            return HEAVY[i];
    return NULL;
}

/* What the binary was built with (scaleplan --version). */
static bool built_with(const char *feature)
{
    char *out = NULL;
    int rc = run_cli("--version", &out, NULL);
    bool yes = rc == 0 && out && strstr(out, feature);
    free(out);
    return yes;
}

static void test_planning_commands_load_no_gpu_or_mpi(void)
{
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmpdir, sizeof tmpdir), 0);
    char plan_json[300], report_args[700];
    snprintf(plan_json, sizeof plan_json, "%s/plan.json", tmpdir);
    const char *cases[] = {
        "--help",
        "sim --help",
        "sim --model llama3-70b --gpu h100-sxm --gpus 256 --tp 8 --pp 4 --global-batch 512 "
        "--allow-oom",
        "model --model llama3-70b --tp 8 --pp 4 --gpus 256 --gpu h100-sxm",
        "plan --model llama3-8b --tokens 1T --gpu h100-sxm --min-gpus 8 --max-gpus 16 --seed 7 "
        "--trials 20",
        "budget --model llama3-8b --tokens 1T --gpus 64 --gpu h100-sxm --tp 2 --seed 1 --trials 20",
        "reliability --gpu h100-sxm --gpus 1024 --days 30 --checkpoint-size 1.7TB --seed 1 "
        "--trials 50",
        "calibrate --help",
        "train --help",
        NULL, /* report, on the plan's JSON */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args = cases[i];
        char *out = NULL, *err = NULL;
        if (!args) {
            /* the plan's --json for the report */
            char *plan = NULL;
            CU_ASSERT_EQUAL(run_cli("plan --model llama3-8b --tokens 1T --gpu h100-sxm --min-gpus 8 "
                                    "--max-gpus 16 --seed 7 --trials 20 --json",
                                    &plan, NULL),
                            0);
            FILE *f = fopen(plan_json, "w");
            CU_ASSERT_PTR_NOT_NULL_FATAL(f);
            fputs(plan ? plan : "", f);
            fclose(f);
            free(plan);
            snprintf(report_args, sizeof report_args, "report %s --out %s/r", plan_json, tmpdir);
            args = report_args;
        }
        int rc = run_cli_env("LD_DEBUG=libs ", args, &out, &err);
        if (rc != 0)
            fprintf(stderr, "\n  scaleplan %s: exit %d\n", args, rc);
        CU_ASSERT_EQUAL(rc, 0);
        const char *heavy = heavy_in(err);
        if (heavy)
            fprintf(stderr, "\n  scaleplan %s loaded %s\n", args, heavy);
        CU_ASSERT_PTR_NULL(heavy);
        /* the trace is there: the check can see a library load */
        CU_ASSERT_TRUE(err && strstr(err, "libc.so") != NULL);
        free(out);
        free(err);
    }
    remove_tree(tmpdir);
}

/* The control: train --device cuda does load the CUDA plug-in and
 * cuBLASLt (and, with no GPU here, stops with one line). */
static void test_cuda_train_loads_the_cuda_plugin(void)
{
    if (!built_with("CUDA plug-in")) {
        fprintf(stderr, "\n  skipped: built without CUDA\n");
        return;
    }
    char *err = NULL;
    int rc = run_cli_env("LD_DEBUG=libs ",
                         "train --model tests/fixtures/configs/tiny-gpt.json --device cuda "
                         "--steps 1 --quiet",
                         NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "scaleplan-cuda.so"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "libcublasLt"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "libnccl"));
    CU_ASSERT_PTR_NULL(strstr(err, "libmpi")); /* no launcher: no MPI */
    if (rc != 0) /* no GPU here: the CUDA runtime says so, in one line */
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "scaleplan train: --device cuda: "));
    free(err);
}

/* The control for MPI: under mpirun, train loads the MPI plug-in and
 * libmpi, and no CUDA library for --device cpu. */
static void test_mpirun_train_loads_the_mpi_plugin(void)
{
    if (!built_with("MPI plug-in") || !mpi_available()) {
        fprintf(stderr, "\n  skipped: %s\n", mpi_available() ? "built without MPI" : "no mpirun");
        return;
    }
    char *out = NULL, *err = NULL;
    int rc = run_cli_env("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                         "ASAN_OPTIONS=detect_leaks=0 mpirun -np 1 env LD_DEBUG=libs ",
                         "train --model tests/fixtures/configs/tiny-gpt.json --device cpu "
                         "--steps 1 --micro-batch 1 --global-batch 1 --seq-len 16 --quiet",
                         &out, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "scaleplan-mpi.so"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "libmpi"));
    CU_ASSERT_PTR_NULL(strstr(err, "libcublasLt"));
    free(out);
    free(err);
}

/* plugin_symbol's errors: not found (naming where it looked), not
 * loadable (the loader's reason and the hint). */
static void test_plugin_errors(void)
{
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmpdir, sizeof tmpdir), 0);
    const char *old = getenv("SCALEPLAN_PLUGIN_DIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("SCALEPLAN_PLUGIN_DIR", tmpdir, 1);
    err_t e;
    err_clear(&e);
    const void *sym = (const void *)&e;
    int rc = plugin_symbol("scaleplan-test.so", "anything", PLUGIN_LOCAL, NULL, &sym, &e);
    CHECK_ERR(rc, &e, ERR_RUNTIME, "scaleplan-test.so not found", tmpdir,
              "SCALEPLAN_PLUGIN_DIR");
    CU_ASSERT_PTR_NULL(sym);
    char path[400], *found = NULL;
    CU_ASSERT_FALSE(plugin_find("scaleplan-test.so", &found));
    CU_ASSERT_TRUE(found && strstr(found, tmpdir)); /* the folders searched */
    free(found);
    /* a file that is no shared object */
    snprintf(path, sizeof path, "%s/scaleplan-test.so", tmpdir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("not an ELF file\n", f);
    fclose(f);
    CU_ASSERT_TRUE(plugin_find("scaleplan-test.so", &found));
    CU_ASSERT_TRUE(found && strcmp(found, path) == 0);
    free(found);
    /* Issue 35 row 7: a folder past PATH_MAX is listed whole, not cut */
    char *deep = malloc(5001);
    CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
    memset(deep, 'd', 5000);
    deep[0] = '/';
    deep[5000] = '\0';
    setenv("SCALEPLAN_PLUGIN_DIR", deep, 1);
    CU_ASSERT_FALSE(plugin_find("scaleplan-test.so", &found));
    CU_ASSERT_TRUE(found && strncmp(found, deep, 5000) == 0 && found[5000] == ',');
    free(found);
    free(deep);
    setenv("SCALEPLAN_PLUGIN_DIR", tmpdir, 1);
    err_clear(&e);
    rc = plugin_symbol("scaleplan-test.so", "anything", PLUGIN_LOCAL, "the hint", &sym, &e);
    CHECK_ERR(rc, &e, ERR_RUNTIME, "cannot load", path, "; the hint");
    if (saved) {
        setenv("SCALEPLAN_PLUGIN_DIR", saved, 1);
        free(saved);
    } else {
        unsetenv("SCALEPLAN_PLUGIN_DIR");
    }
    remove_tree(tmpdir);
}

/* A plug-in that cannot be found makes the command fail with one line,
 * exit 1 (here: an empty plug-in folder and no plug-in next to a copy of
 * the binary). */
static void test_missing_cuda_plugin_one_line(void)
{
    if (!built_with("CUDA plug-in")) {
        fprintf(stderr, "\n  skipped: built without CUDA\n");
        return;
    }
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmpdir, sizeof tmpdir), 0);
    const char *bin = getenv("SCALEPLAN_BIN");
    char cmd[900], *err = NULL;
    snprintf(cmd, sizeof cmd, "cp %s %s/scaleplan", bin ? bin : "bin/scaleplan", tmpdir);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "%s/scaleplan train --model tests/fixtures/configs/tiny-gpt.json --device cuda "
             "--steps 1 2>%s/err",
             tmpdir, tmpdir);
    int status = system(cmd);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    snprintf(cmd, sizeof cmd, "%s/err", tmpdir);
    err = slurp(cmd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(count_lines(err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--device cuda: scaleplan-cuda.so not found"));
    free(err);
    remove_tree(tmpdir);
}

TEST_SUITE(suite_plugin, "plugin", TEST(test_planning_commands_load_no_gpu_or_mpi),
           TEST(test_cuda_train_loads_the_cuda_plugin),
           TEST(test_mpirun_train_loads_the_mpi_plugin), TEST(test_plugin_errors),
           TEST(test_missing_cuda_plugin_one_line));
