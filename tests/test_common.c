/* Tests of common/: error records, names, RNG streams, atomic files, the
 * embedded catalog and its override directory, the progress bar. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/catalog.h"
#include "common/dist.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/names.h"
#include "common/progress.h"
#include "common/rng.h"
#include "common/strfmt.h"
#include "tests/testing.h"

static void test_error_format(void)
{
    err_t e;
    err_clear(&e);
    CU_ASSERT_EQUAL(e.code, ERR_OK);
    int rc = err_setf(&e, ERR_INPUT, "llama.json", "num_attention_heads",
                      "must divide by --tp 6 (got %d)", 64);
    CU_ASSERT_EQUAL(rc, ERR_INPUT);
    CU_ASSERT_STRING_EQUAL(e.msg, "llama.json: num_attention_heads: must divide by --tp 6 (got 64)");
    err_setf(&e, ERR_RUNTIME, NULL, "--gpus", "bad\nvalue");
    CU_ASSERT_STRING_EQUAL(e.msg, "--gpus: bad value"); /* stays one line */
    err_setf(&e, ERR_INPUT, "f.json", NULL, "x");
    err_prefix(&e, "cluster");
    CU_ASSERT_STRING_EQUAL(e.msg, "cluster: f.json: x");
    /* NULL records are allowed and only return the code */
    CU_ASSERT_EQUAL(err_set(NULL, ERR_INPUT, "ignored"), ERR_INPUT);
}

static void test_names(void)
{
    char out[64];
    names_normalize("NVIDIA H100_SXM", out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "h100-sxm");
    names_normalize("AMD Instinct MI300X", out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "mi300x");
    CU_ASSERT_EQUAL(names_distance("kitten", "sitting"), 3);
    CU_ASSERT_EQUAL(names_distance("H100", "h100"), 0);
    const char *cands[] = {"h100-sxm", "h200", "a100-80g"};
    CU_ASSERT_EQUAL(names_closest("h10", cands, 3), 0);
    CU_ASSERT_EQUAL(names_closest("a100-80", cands, 3), 2);
    CU_ASSERT_EQUAL(names_closest("completely-different-name", cands, 3), -1);
}

static void test_rng_streams(void)
{
    err_t e;
    gsl_rng *a = rng_create(42, 0, &e), *b = rng_create(42, 0, &e),
            *c = rng_create(42, 1, &e), *d = rng_create(43, 0, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    int same_ab = 1, same_ac = 1, same_ad = 1;
    for (int i = 0; i < 100; i++) {
        unsigned long x = gsl_rng_get(a), y = gsl_rng_get(b), z = gsl_rng_get(c),
                      w = gsl_rng_get(d);
        same_ab &= x == y;
        same_ac &= x == z;
        same_ad &= x == w;
    }
    CU_ASSERT_TRUE(same_ab);  /* same seed and stream: same numbers */
    CU_ASSERT_FALSE(same_ac); /* another stream differs */
    CU_ASSERT_FALSE(same_ad); /* another seed differs */
    CU_ASSERT_NOT_EQUAL(rng_mix(1, 0), rng_mix(1, 1));
    rng_destroy(a);
    rng_destroy(b);
    rng_destroy(c);
    rng_destroy(d);
}

static void test_fileio_atomic(void)
{
    char dir[256], path[300];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/sub/out.txt", dir);
    err_t e;
    char sub[280];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CU_ASSERT_EQUAL(fileio_mkdirs(sub, &e), 0);
    CU_ASSERT_EQUAL(fileio_write_atomic(path, "hello", 5, &e), 0);
    CU_ASSERT_EQUAL(fileio_write_atomic(path, "second", 6, &e), 0);
    char *data = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL(fileio_read_all(path, &data, &len, &e), 0);
    CU_ASSERT_EQUAL(len, 6);
    CU_ASSERT_STRING_EQUAL(data, "second");
    free(data);
    /* no temporary file is left behind */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls %s/sub | grep -c tmp >/dev/null", dir);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0);
    int rc = fileio_read_all("/nonexistent/x.json", &data, NULL, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "/nonexistent/x.json", "cannot open");
    CU_ASSERT_PTR_NULL(data);
    snprintf(path, sizeof path, "%s/missing-dir/out.txt", dir);
    rc = fileio_write_atomic(path, "x", 1, &e);
    CHECK_ERR(rc, &e, ERR_RUNTIME, "missing-dir");
    /* piece by piece: nothing at the target until commit, abort keeps the
     * old file, and a link at the target is replaced, not followed */
    char victim[300];
    snprintf(path, sizeof path, "%s/sub/out.txt", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    fileio_out_t o;
    CU_ASSERT_EQUAL_FATAL(fileio_out_open(&o, path, &e), 0);
    fputs("third", o.f);
    fileio_out_abort(&o);
    CU_ASSERT_EQUAL(fileio_read_all(path, &data, NULL, &e), 0);
    CU_ASSERT_STRING_EQUAL(data ? data : "", "second");
    free(data);
    CU_ASSERT_EQUAL(fileio_write_atomic(victim, "victim", 6, &e), 0);
    CU_ASSERT_EQUAL(unlink(path), 0);
    CU_ASSERT_EQUAL_FATAL(symlink(victim, path), 0);
    CU_ASSERT_EQUAL_FATAL(fileio_out_open(&o, path, &e), 0);
    fputs("fourth", o.f);
    CU_ASSERT_EQUAL(fileio_out_commit(&o, &e), 0);
    CU_ASSERT_EQUAL(fileio_read_all(path, &data, NULL, &e), 0);
    CU_ASSERT_STRING_EQUAL(data ? data : "", "fourth");
    free(data);
    CU_ASSERT_EQUAL(fileio_read_all(victim, &data, NULL, &e), 0);
    CU_ASSERT_STRING_EQUAL(data ? data : "", "victim");
    free(data);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0);
    remove_tree(dir);
}

static void test_catalog_embedded(void)
{
    CU_ASSERT_TRUE(catalog_embedded_count >= 40);
    CU_ASSERT_TRUE(catalog_exists("models/catalog/llama3-70b.json"));
    CU_ASSERT_TRUE(catalog_exists("topologies/catalog/gpus.json"));
    CU_ASSERT_FALSE(catalog_exists("models/catalog/nope.json"));
    char **names = NULL;
    size_t n = 0;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(catalog_list("models/catalog", &names, &n, &e), 0);
    CU_ASSERT_TRUE(n >= 25);
    int sorted = 1;
    for (size_t i = 1; i < n; i++)
        sorted &= strcmp(names[i - 1], names[i]) < 0;
    CU_ASSERT_TRUE(sorted);
    catalog_free_names(names, n);
}

static void test_catalog_override_dir(void)
{
    /* A file in $SCALEPLAN_CATALOG takes precedence and adds names. */
    char dir[256], path[400];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/models/catalog", dir);
    err_t e;
    CU_ASSERT_EQUAL_FATAL(fileio_mkdirs(path, &e), 0);
    snprintf(path, sizeof path, "%s/models/catalog/my-model.json", dir);
    const char *text = "{\"n_layer\": 2, \"n_embd\": 64, \"n_head\": 4, "
                       "\"n_positions\": 128, \"vocab_size\": 1000}";
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, strlen(text), &e), 0);
    setenv("SCALEPLAN_CATALOG", dir, 1);
    CU_ASSERT_TRUE(catalog_exists("models/catalog/my-model.json"));
    char *got = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    CU_ASSERT_EQUAL(catalog_read("models/catalog/my-model.json", &got, NULL, origin,
                                 sizeof origin, &e), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(origin, dir));
    free(got);
    char **names = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(catalog_list("models/catalog", &names, &n, &e), 0);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        found |= strcmp(names[i], "my-model") == 0;
    CU_ASSERT_TRUE(found);
    catalog_free_names(names, n);
    unsetenv("SCALEPLAN_CATALOG");
    CU_ASSERT_FALSE(catalog_exists("models/catalog/my-model.json"));
    remove_tree(dir);
}

/* Issue 35 row 7: an override folder past the old 512-byte buffers (which
 * cut the path, found no file and fell back to the built-in catalog
 * silently) is used, and named whole in messages. */
static void test_catalog_override_long_dir(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char *deep = deep_path(dir, 600);
    CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
    char *folder = str_printf("%s/models/catalog", deep);
    char *path = str_printf("%s/models/catalog/my-model.json", deep);
    err_t e;
    CU_ASSERT_EQUAL_FATAL(fileio_mkdirs(folder, &e), 0);
    const char *text = "{\"n_layer\": 2}";
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, strlen(text), &e), 0);
    setenv("SCALEPLAN_CATALOG", deep, 1);
    CU_ASSERT_TRUE(catalog_exists("models/catalog/my-model.json"));
    char *got = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    CU_ASSERT_EQUAL(catalog_read("models/catalog/my-model.json", &got, NULL, origin,
                                 sizeof origin, &e), 0);
    CU_ASSERT_STRING_EQUAL(origin, path);
    CU_ASSERT_TRUE(got && strcmp(got, text) == 0);
    free(got);
    /* a buffer too small for the name is refused, not cut */
    char small[64];
    CHECK_ERR(catalog_read("models/catalog/my-model.json", &got, NULL, small, sizeof small, &e),
              &e, ERR_INPUT, "SCALEPLAN_CATALOG", "use a shorter folder");
    CU_ASSERT_PTR_NULL(got);
    unsetenv("SCALEPLAN_CATALOG");
    free(folder);
    free(path);
    free(deep);
    remove_tree(dir);
}

static void test_progress_quiet_off_tty(void)
{
    /* Tests run with stderr redirected or SCALEPLAN_PROGRESS=0: no bar, and
     * every call is safe on the NULL handle. */
    setenv("SCALEPLAN_PROGRESS", "0", 1);
    CU_ASSERT_EQUAL(progress_enabled(), 0);
    progress_t *p = progress_create("work", 10);
    CU_ASSERT_PTR_NULL(p);
    progress_update(p, 5);
    progress_destroy(p);
}

/* Off a terminal the report is log lines: none for work shorter than the
 * interval, then one per interval with the share done, and a closing line
 * only when a line was written. */
static void test_progress_log_lines(void)
{
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    progress_t *p = progress_create_on(f, "quick", 10, 0, 60);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    progress_update(p, 5);
    progress_destroy(p);
    CU_ASSERT_EQUAL(ftell(f), 0); /* shorter than the interval: silent */
    p = progress_create_on(f, "long", 4, 0, 0.02);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    struct timespec pause = {0, 30 * 1000 * 1000};
    nanosleep(&pause, NULL);
    progress_update(p, 1);
    nanosleep(&pause, NULL);
    progress_update(p, 3);
    progress_destroy(p);
    rewind(f);
    char text[512] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "long: 25.0% after 0 s"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "long: 75.0% after 0 s"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "long: 75.0% done in 0 s\n"));
    CU_ASSERT_PTR_NULL(strchr(text, '\r')); /* no bar redraws in a log */
    CU_ASSERT_PTR_NULL(progress_create_on(NULL, "x", 1, 0, 1));
    CU_ASSERT_PTR_NULL(progress_create_on(stderr, "x", 0, 0, 1));
}

/* Every launcher's variable gives the local rank; the first set wins. */
static void test_local_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                       "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                                       "LOCAL_RANK"};
    char *saved[5];
    for (int i = 0; i < 5; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(vars[i]);
    }
    CU_ASSERT_EQUAL(dist_local_rank(), -1);
    for (int i = 4; i >= 0; i--) {
        char v[8];
        snprintf(v, sizeof v, "%d", i + 3);
        setenv(vars[i], v, 1);
        CU_ASSERT_EQUAL(dist_local_rank(), i + 3);
    }
    setenv(vars[0], "x1", 1); /* not a number: the next launcher's */
    CU_ASSERT_EQUAL(dist_local_rank(), 4);
    for (int i = 0; i < 5; i++) {
        if (saved[i])
            setenv(vars[i], saved[i], 1);
        else
            unsetenv(vars[i]);
        free(saved[i]);
    }
}

/* strfmt: a heap string exactly as long as the text, however long. */
/* A label that does not fit keeps its end (the file's name) after "...";
 * one that fits is whole. */
static void test_str_label(void)
{
    char out[16];
    str_label(out, sizeof out, "short.sh");
    CU_ASSERT_STRING_EQUAL(out, "short.sh");
    str_label(out, sizeof out, "/a/very/long/folder/train.sh");
    CU_ASSERT_STRING_EQUAL(out, "...der/train.sh");
    CU_ASSERT_EQUAL(strlen(out), sizeof out - 1);
}

static void test_strfmt(void)
{
    char *big = malloc(10001);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    memset(big, 'x', 10000);
    big[10000] = '\0';
    char *s = str_printf("%s/%s-%05d", big, "step", 42);
    CU_ASSERT_TRUE(s && strlen(s) == 10000 + 11 && strcmp(s + 10000, "/step-00042") == 0);
    free(s);
    s = NULL;
    CU_ASSERT_EQUAL(str_appendf(&s, "%s", "a"), 0);
    CU_ASSERT_EQUAL(str_appendf(&s, "; %s", big), 0);
    CU_ASSERT_TRUE(s && strlen(s) == 10003 && strncmp(s, "a; x", 4) == 0);
    free(s);
    free(big);
}

TEST_SUITE(suite_common, "common", TEST(test_error_format), TEST(test_names),
           TEST(test_rng_streams), TEST(test_fileio_atomic), TEST(test_catalog_embedded),
           TEST(test_catalog_override_dir),
           TEST(test_catalog_override_long_dir), TEST(test_progress_quiet_off_tty), TEST(test_progress_log_lines),
           TEST(test_local_rank), TEST(test_strfmt), TEST(test_str_label));
