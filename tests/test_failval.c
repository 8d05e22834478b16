/* Tests of sim/failval (scaleplan validate --failures): the published
 * failure records against scaleplan's defaults, with the current medians
 * pinned so that a regression shows; ranges, lower bounds, a record
 * without a GPU type, and bad tables. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/failval.h"
#include "tests/testing.h"

static const fv_row_t *row(const fv_row_t *rows, int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].row_id, id) == 0)
            return &rows[i];
    return NULL;
}

/* The shared failure table (tests/fixtures/validation/failures.csv, a copy
 * of shared/validation/failures.csv) and the project's further records
 * (failures_more.csv). Every rate set is derived from published records,
 * so most records are in their own set's fit: the medians over all records
 * and over those from other sources than Llama 3 are 0.0% today (pinned
 * below 1%), the Llama 3 hardware share (F089) is -1.8%, RSC's 8-GPU MTTF
 * (F027) +13% and its ~10 h at 4K GPUs (F029) +406%, far off (RSC's 8- and
 * 1,024-GPU jobs fail about four times as often per GPU-hour as its 4K
 * jobs). The held-out view, each aggregate record predicted by the next
 * default set from another source, has a median of 80% (pinned at most
 * 82%): rates differ by 2-5x between environments. */
static void test_published_records(void)
{
    const char *paths[2] = {fixture("validation/failures.csv"),
                            fixture("validation/failures_more.csv")};
    char p0[512], p1[512];
    snprintf(p0, sizeof p0, "%s", paths[0]);
    snprintf(p1, sizeof p1, "%s", paths[1]);
    const char *both[2] = {p0, p1};
    fv_row_t *rows = NULL;
    int n = 0;
    err_t e;
    CU_ASSERT_EQUAL_FATAL(fv_replay(both, 2, &rows, &n, &e), 0);
    double med, p90, med_beyond, med_held;
    int k, k_beyond, k_held;
    fv_summary(rows, n, FV_ALL, &med, &p90, &k);
    fv_summary(rows, n, FV_BEYOND_DEFAULT, &med_beyond, &p90, &k_beyond);
    fv_summary(rows, n, FV_HELD_OUT, &med_held, &p90, &k_held);
    fprintf(stderr, "\n  failures: median %.1f%% over %d records, %.1f%% over %d beyond Llama 3, "
                    "held out %.1f%% over %d\n",
            100 * med, k, 100 * med_beyond, k_beyond, 100 * med_held, k_held);
    CU_ASSERT_TRUE(k >= 34);
    CU_ASSERT_TRUE(med <= 0.01);
    CU_ASSERT_TRUE(k_beyond >= 11);
    CU_ASSERT_TRUE(med_beyond <= 0.01);
    CU_ASSERT_TRUE(k_held >= 14);
    CU_ASSERT_TRUE(med_held <= 0.82);
    /* rows by hand: 419 unexpected of the Llama 3 table (F021) */
    const fv_row_t *r = row(rows, n, "F021");
    CU_ASSERT_FATAL(r != NULL);
    CHECK_REL(r->predicted, 419, 1e-9);
    CU_ASSERT_TRUE(r->in_fit);
    /* RSC: 8-GPU jobs every 47.7 days = 1.092e-4 per GPU-hour; the set's
     * node failures (F032) and other infrastructure (from F028) give
     * 1/(1024 x 7.9 h) = 1.236e-4 per GPU-hour at any size */
    r = row(rows, n, "F027");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_STRING_EQUAL(r->environment, "research");
    CU_ASSERT_STRING_EQUAL(r->set, "meta-rsc1");
    CHECK_REL(r->published, 1 / (8 * 47.7 * 24), 1e-9);
    CHECK_REL(r->predicted, 1 / (1024 * 7.9), 1e-6);
    r = row(rows, n, "F029");
    CU_ASSERT_FATAL(r != NULL);
    CHECK_REL(r->error, 4.06, 0.01);
    /* the record without a GPU type takes its source's (F022: H100) */
    r = row(rows, n, "F022");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_STRING_EQUAL(r->gpu, "h100-sxm");
    CHECK_REL(r->predicted, 268, 1e-9);
    /* a lower bound met is no error; a range holds */
    r = row(rows, n, "F080");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_TRUE(r->lower_bound && r->predicted >= 100 && r->error == 0);
    r = row(rows, n, "F081");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_TRUE(r->published == 1 && r->published_high == 2 && r->error == 0);
    /* goodput: more than 90% effective training time (F024) */
    r = row(rows, n, "F024");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_EQUAL(r->measure, FV_GOODPUT);
    CU_ASSERT_TRUE(r->predicted >= 0.90);
    /* what is left out says why */
    r = row(rows, n, "F085");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_TRUE(r->skipped && strstr(r->reason, "GPU type"));
    free(rows);
}

static void test_bad_tables(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char path[300];
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs("row_id,num_gpus\nX1,8\n", f);
    fclose(f);
    const char *paths[1] = {path};
    fv_row_t *rows = NULL;
    int n = 0;
    err_t e;
    int rc = fv_replay(paths, 1, &rows, &n, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "bad.csv", "source_title");
    const char *missing[1] = {"no/such/failures.csv"};
    rc = fv_replay(missing, 1, &rows, &n, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "no/such/failures.csv");
    remove_tree(dir);
}

/* Issue 35 item 8d: validate --failures refuses a table with no records
 * (an empty file, a header alone, a header and blank lines) with exit 2
 * and one line naming that file, also when it follows a good table. */
static void test_tables_without_records(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    static const struct {
        const char *name, *text;
    } cases[] = {
        {"empty.csv", ""},
        {"header.csv", "row_id,source_title,system_or_run,gpu_type,num_gpus,observation_window,"
                       "category,item,count_or_value,unit\n"},
        {"blank.csv", "row_id,source_title,system_or_run,gpu_type,num_gpus,observation_window,"
                      "category,item,count_or_value,unit\n\n\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[400], args[1200];
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].name);
        FILE *f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(cases[i].text, f);
        fclose(f);
        for (int after_good = 0; after_good < 2; after_good++) {
            snprintf(args, sizeof args, "validate --failures %s%s",
                     after_good ? "tests/fixtures/validation/failures.csv," : "", path);
            char *err = NULL;
            int rc = run_cli(args, NULL, &err);
            bool ok = rc == 2 && err && strstr(err, path) && strstr(err, "no records") &&
                      count_lines(err) == 1;
            if (!ok)
                fprintf(stderr, "\n$ scaleplan %s: exit %d, stderr: %s\n", args, rc,
                        err ? err : "");
            CU_ASSERT_TRUE(ok);
            free(err);
        }
    }
    remove_tree(dir);
}

TEST_SUITE(suite_failval, "failval", TEST(test_published_records), TEST(test_bad_tables),
           TEST(test_tables_without_records));
