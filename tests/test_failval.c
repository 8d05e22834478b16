/* Tests of sim/failval (scaleplan validate --failures): the published
 * failure records against scaleplan's defaults, with the current medians
 * pinned so that a regression shows; ranges, lower bounds, a record
 * without a GPU type, and bad tables. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "validate/failval.h"
#include "tests/testing.h"
#include "topologies/failure.h"

static const fv_row_t *row(const fv_row_t *rows, int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].row_id, id) == 0)
            return &rows[i];
    return NULL;
}

/* The shared failure table (tests/fixtures/validation/failures.csv, a copy
 * of shared/validation/failures.csv), the project's further records
 * (failures_more.csv) and the records by environment (failures_env.csv:
 * OPT-175B's logbook, StepFun's fault trace, RSC's node failure rates,
 * NCSA Delta's memory errors, and three counts that cannot be compared). */
static int replay_all(fv_row_t **rows, int *n)
{
    static char p[3][512];
    snprintf(p[0], sizeof p[0], "%s", fixture("validation/failures.csv"));
    snprintf(p[1], sizeof p[1], "%s", fixture("validation/failures_more.csv"));
    snprintf(p[2], sizeof p[2], "%s", fixture("validation/failures_env.csv"));
    const char *paths[3] = {p[0], p[1], p[2]};
    err_t e;
    return fv_replay(paths, 3, rows, n, &e);
}

/* Every rate set is derived from published records, so most records are
 * in their own set's fit: the median over all records is 0.0% (pinned
 * below 1%), the Llama 3 hardware share (F089) -1.8%, RSC's 8-GPU MTTF
 * (F027) +13% and its ~10 h at 4K GPUs (F029) +406% (RSC's 8- and
 * 1,024-GPU jobs fail about four times as often per GPU-hour as its 4K
 * jobs). StepFun's records (F091-F093) take the dedicated default
 * (Llama 3's set): +0.4%, +36%, +113%. */
static void test_published_records(void)
{
    fv_row_t *rows = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(replay_all(&rows, &n), 0);
    double med, p90, med_beyond;
    int k, k_beyond;
    fv_summary(rows, n, FV_ALL, &med, &p90, &k);
    fv_summary(rows, n, FV_BEYOND_DEFAULT, &med_beyond, &p90, &k_beyond);
    fprintf(stderr, "\n  failures: median %.1f%% over %d records, %.1f%% over %d beyond Llama 3\n",
            100 * med, k, 100 * med_beyond, k_beyond);
    CU_ASSERT_TRUE(k >= 38);
    CU_ASSERT_TRUE(med <= 0.01);
    CU_ASSERT_TRUE(k_beyond >= 15);
    CU_ASSERT_TRUE(med_beyond <= 0.01);
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
    /* a source that states none: H100 nodes of 8 ASSUMED, and said */
    r = row(rows, n, "F091");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_TRUE(r->set_assumed && strstr(r->assumed, "ASSUMED"));
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
    CU_ASSERT_TRUE(r->skipped && strstr(r->reason, "model size"));
    r = row(rows, n, "F100");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_TRUE(r->skipped && strstr(r->reason, "window"));
    free(rows);
}

/* Node failure rates (Kokolis et al.'s r_f, failures per 1,000 node-days)
 * are rates per server of the record's GPU: RSC-1's 6.50 on 8-GPU DGX
 * A100s is 6.50e-3 / (8 x 24 h) = 3.385e-5 per GPU-hour (F096), RSC-2's
 * 2.34 is 1.219e-5 (F097), both compared at the hardware level (node
 * failures). Read as counts over the window instead (the unit names
 * failures), F096 would be "6.5 failures in 11 months on 16,000 GPUs",
 * four orders of magnitude off, and this test fails. RSC-1's set
 * predicts RSC-2 2.8x high in fit (the environment's default is RSC-1's);
 * held out, the other environments' hardware rate lies between the two. */
static void test_node_failure_rates(void)
{
    fv_row_t *rows = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(replay_all(&rows, &n), 0);
    const fv_row_t *r1 = row(rows, n, "F096"), *r2 = row(rows, n, "F097");
    CU_ASSERT_FATAL(r1 != NULL && r2 != NULL && !r1->skipped && !r2->skipped);
    CU_ASSERT_EQUAL(r1->measure, FV_RATE);
    CHECK_REL(r1->published, 6.50e-3 / (8 * 24), 1e-9);
    CHECK_REL(r2->published, 2.34e-3 / (8 * 24), 1e-9);
    CU_ASSERT_STRING_EQUAL(r1->counts, "hardware failures");
    CU_ASSERT_TRUE(r1->in_fit && fabs(r1->error) < 0.01);
    CHECK_REL(r2->predicted / r2->published, 6.50 / 2.34, 0.01);
    CU_ASSERT_TRUE(r1->heldout && r2->heldout);
    CU_ASSERT_TRUE(r1->heldout_predicted < r1->published);
    CU_ASSERT_TRUE(r2->heldout_predicted > r2->published);
    CU_ASSERT_TRUE(r1->heldout_log2 <= 1.0 && r2->heldout_log2 <= 1.5);
    /* NCSA Delta's uncorrectable memory errors bound GPU failures from
     * below (F098: 608 H100s x 146 days / MTBE 88,768 h = 24.0) */
    const fv_row_t *r = row(rows, n, "F098");
    CU_ASSERT_FATAL(r != NULL && !r->skipped);
    CU_ASSERT_STRING_EQUAL(r->environment, "hpc");
    CU_ASSERT_TRUE(r->lower_bound && r->published == 24);
    CU_ASSERT_STRING_EQUAL(r->counts, "GPU failures");
    free(rows);
    /* the unit's spellings: the denominator is read, not assumed; an MTTF
     * range's longer end is the lower rate */
    char dir[256], path[300];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/units.csv", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs("row_id,source_title,source_locator,system_or_run,gpu_type,num_gpus,"
          "observation_window,category,item,count_or_value,unit\n"
          "U1,t,l,s,A100 80GB,16000,11 months,node failure rate,x,6.50,failures/1000 node-days\n"
          "U2,t,l,s,A100 80GB,16000,11 months,node failure rate,x,6.50,\"per 1,000 node days\"\n"
          "U3,t,l,s,A100 80GB,16000,11 months,node failure rate,x,0.0065,failures per node-day\n"
          "U4,t,l,s,A100 80GB,1024,11 months,MTTF by job size,x,7-9,hours MTTF\n"
          "U5,t,l,s,A100 80GB,1024,11 months,job MTBF,x,8,hours MTBF\n"
          "U6,t,l,s,A100 80GB,\"1,024\",about two months,total,x,more than 100,restarts\n"
          "U7,t,l,s,H100,2048,30 days,GPU,GPU failures,20,failures\n"
          "U8,t,l,s,H100,2048,30 days,GPU,GPU HBM3 memory,5,failures\n"
          "U9,t,l,s,H100,2048,30 days,infrastructure,x,60,job crashes\n",
          f);
    fclose(f);
    const char *paths[1] = {path};
    err_t e;
    CU_ASSERT_EQUAL_FATAL(fv_replay(paths, 1, &rows, &n, &e), 0);
    for (int i = 0; i < 3; i++)
        CHECK_REL(rows[i].published, 6.50e-3 / (8 * 24), 1e-9);
    CHECK_REL(rows[3].published, 1 / (1024 * 9.0), 1e-9);
    CHECK_REL(rows[3].published_high, 1 / (1024 * 7.0), 1e-9);
    CU_ASSERT_TRUE(!rows[4].skipped && rows[4].measure == FV_RATE);
    CHECK_REL(rows[4].published, 1 / (1024 * 8.0), 1e-9);
    CU_ASSERT_STRING_EQUAL(rows[4].counts, "unexpected interruptions");
    /* how sources write figures: "1,024" GPUs, "about two months", "more
     * than 100" (a lower bound) */
    CU_ASSERT_TRUE(!rows[5].skipped && rows[5].gpus == 1024);
    CHECK_REL(rows[5].window_days, 2 * 365.25 / 12, 1e-9);
    CU_ASSERT_TRUE(rows[5].lower_bound && rows[5].published == 100);
    /* a GPU category naming every GPU failure compares at that level
     * (Llama 3's 268 GPU interruptions per 21,233,664 GPU-hours x 2,048 x
     * 720 h = 18.6); one part of the GPU, with no class of its own, does not */
    CU_ASSERT_STRING_EQUAL(rows[6].counts, "GPU failures");
    CHECK_REL(rows[6].predicted, 268.0 / 21233664 * 2048 * 720, 1e-6);
    CU_ASSERT_TRUE(rows[7].skipped);
    CU_ASSERT_TRUE(!rows[8].skipped);
    CU_ASSERT_STRING_EQUAL(rows[8].counts, "unexpected interruptions");
    free(rows);
}

/* Leave-one-source-out: each aggregate record is predicted by the evidence
 * sets of its environment from OTHER sources, brought to the level it
 * counts. Before (the next default set from another source, no levels):
 * median |log2| 1.07 over 14, worst infinite (F020, planned, predicted 0)
 * or 2.4 (F028, 5.3x). Then: median 0.67 (1.6x) over 19, worst 1.67
 * (F028, 3.2x). With RSC's node failure rates and Delta's memory errors
 * (F096-F099): median 0.47 (1.4x) over 23, worst still F028; without
 * Delta's two lower bounds (met, so 0) 0.67 over 21, and 0.46 over the 18
 * records that are not lower bounds. The acceptance is median <= 1
 * and none past 4x.
 * By hand: StepFun's 584 faults (F091) from Llama 3's 466 interruptions
 * per 21,233,664 GPU-hours x 26,726,400 = 586.6; its 158 GPU faults (F093)
 * from Llama 3's 268 GPU interruptions = 337.3. Llama 3's own records are
 * predicted by StepFun alone (F019: 584 / 26,726,400 x 21,233,664 =
 * 464.0), never by Llama 3's set: switching the exclusion off makes F019
 * exact and this test fail. Planned maintenance (F020) has no held-out
 * prediction: no other source counts it. */
static void test_leave_one_source_out(void)
{
    fv_row_t *rows = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(replay_all(&rows, &n), 0);
    double med, worst;
    const fv_row_t *wr;
    int k;
    fv_heldout_log2(rows, n, &med, &worst, &wr, &k);
    fprintf(stderr, "\n  held out: median |log2| %.2f over %d, worst %.2f (%s)\n", med, k, worst,
            wr ? wr->row_id : "-");
    CU_ASSERT_TRUE(k >= 23);
    CU_ASSERT_TRUE(med <= 1.0);
    CU_ASSERT_TRUE(worst <= 2.0);
    const fv_row_t *r = row(rows, n, "F019");
    CU_ASSERT_FATAL(r != NULL && r->heldout);
    CU_ASSERT_STRING_EQUAL(r->heldout_set, "stepfun-llm");
    CHECK_REL(r->heldout_predicted, 584.0 / 26726400 * 21233664, 1e-9);
    r = row(rows, n, "F091");
    CU_ASSERT_FATAL(r != NULL && r->heldout);
    CU_ASSERT_STRING_EQUAL(r->heldout_set, "llama3-405b");
    CHECK_REL(r->heldout_predicted, 466.0 / 21233664 * 26726400, 1e-9);
    r = row(rows, n, "F093");
    CU_ASSERT_FATAL(r != NULL && r->heldout);
    CHECK_REL(r->heldout_predicted, 268.0 / 21233664 * 26726400, 1e-9);
    /* no research source besides RSC: every environment, without RSC */
    r = row(rows, n, "F028");
    CU_ASSERT_FATAL(r != NULL && r->heldout);
    CU_ASSERT_TRUE(strstr(r->heldout_set, "every environment") != NULL);
    r = row(rows, n, "F020");
    CU_ASSERT_FATAL(r != NULL);
    CU_ASSERT_FALSE(r->heldout);
    /* a GPU-only source (BLOOM) predicted at its level from sets that count
     * more: inside its published 1-2 a week */
    r = row(rows, n, "F081");
    CU_ASSERT_FATAL(r != NULL && r->heldout);
    CU_ASSERT_TRUE(r->heldout_log2 < 0.5);
    free(rows);
}

/* A record's environment is read from its words (failures.json
 * environment_keywords, first match wins); a record naming none ran on a
 * dedicated cluster. The existing records keep theirs (the goldens). */
static void test_environment_words(void)
{
    static const struct {
        const char *text, *env;
    } cases[] = {
        {"RSC-1 research cluster (16K A100)", "research"},
        {"Philly, a multi-tenant GPU cluster", "research"},
        {"a job on the Frontier supercomputer", "hpc"},
        {"A100 80GB on Azure", "cloud"},
        {"8x H100 instances on AWS", "cloud"},
        {"a cluster in its first months", "new"},
        {"Llama 3 405B pre-training", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char env[24];
        err_t e;
        CU_ASSERT_EQUAL_FATAL(failure_environment_of(cases[i].text, env, sizeof env, &e), 0);
        if (strcmp(env, cases[i].env) != 0)
            fprintf(stderr, "\n  '%s': %s, expected %s\n", cases[i].text, env, cases[i].env);
        CU_ASSERT_STRING_EQUAL(env, cases[i].env);
    }
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
    /* a negative count, a NaN window, a negative GPU count: one line each */
    static const char *bad_rows[] = {"X2,Src,,Run,H100,8,54 days,total,All,-3,interruptions\n",
                                     "X3,Src,,Run,H100,8,nan days,total,All,3,interruptions\n",
                                     "X4,Src,,Run,H100,-8,54 days,total,All,3,interruptions\n"};
    static const char *bad_cols[] = {"count_or_value", "observation_window", "num_gpus"};
    for (int i = 0; i < 3; i++) {
        f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        fputs("row_id,source_title,source_locator,system_or_run,gpu_type,num_gpus,"
              "observation_window,category,item,count_or_value,unit\n",
              f);
        fputs(bad_rows[i], f);
        fclose(f);
        rc = fv_replay(paths, 1, &rows, &n, &e);
        CHECK_ERR(rc, &e, ERR_INPUT, "bad.csv", bad_cols[i]);
        CU_ASSERT_TRUE(strchr(e.msg, '\n') == NULL);
    }
    const char *missing[1] = {"no/such/failures.csv"};
    rc = fv_replay(missing, 1, &rows, &n, &e);
    CHECK_ERR(rc, &e, ERR_INPUT, "no/such/failures.csv");
    remove_tree(dir);
}

/* Issue 35 row 7: a table's name is kept whole in its rows (the old
 * 64-byte field cut a longer one). */
static void test_long_table_name(void)
{
    char dir[256], path[512];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char base[120];
    memset(base, 'f', 110);
    snprintf(base + 110, sizeof base - 110, ".csv");
    snprintf(path, sizeof path, "%s/%s", dir, base);
    char *text = slurp(fixture("validation/failures.csv"));
    err_t e;
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, text, strlen(text), &e), 0);
    free(text);
    const char *paths[1] = {path};
    fv_row_t *rows = NULL;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(fv_replay(paths, 1, &rows, &n, &e), 0);
    CU_ASSERT_TRUE(n > 0 && strcmp(rows[0].file, base) == 0);
    free(rows);
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

TEST_SUITE(suite_failval, "failval", TEST(test_published_records),
           TEST(test_leave_one_source_out), TEST(test_node_failure_rates),
           TEST(test_environment_words), TEST(test_bad_tables), TEST(test_long_table_name),
           TEST(test_tables_without_records));
