/* Real training logs written by others (tests/fixtures/real/logs, each with
 * its source in SOURCES.md), read against the expectations in expected.tsv,
 * which were taken from the logs' own lines by hand:
 *
 *   - the reader names the framework, drops the warm-up records the table
 *     names, and the median of the steady records, in the unit the log
 *     prints (ms per iteration, s, torchtitan tps, DeepSpeed samples/s),
 *     is the table's within 1e-6, and for Megatron-style logs (one
 *     interval a line) the steady mean is the plain mean of those lines;
 *   - batch, sequence length and GPU count are the log's where it gives
 *     them and absent (0) where it does not: nothing is invented;
 *   - through the CLI, every refusal is one line, and a refusal asking for
 *     a flag ("give --seq-len") names one of the row's fix flags; adding
 *     the asked-for flags one at a time ends in a run (exit 0), or, for a
 *     log that cannot be measured, in the table's refusal.
 *
 * At least 95% of the rows must pass every check; all rows must keep the
 * one-line and "names what is missing" rules. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs/trainlog.h"
#include "tests/real_corpus.h"
#include "tests/testing.h"

enum { MAX_FIELDS = 10 };

/* Split line at tabs into f (in place); the field count. */
static int split_tabs(char *line, char **f)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < MAX_FIELDS; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The figure the log printed for record r, in quantity's unit. */
static double printed(const tlog_record_t *r, const char *quantity)
{
    if (strcmp(quantity, "ms") == 0)
        return 1000 * r->step_time_s;
    if (strcmp(quantity, "tps") == 0)
        return r->tokens_per_s_per_gpu;
    if (strcmp(quantity, "samples/s") == 0)
        return r->samples_per_s;
    return r->step_time_s;
}

/* Median of the printed figure over the steady records. */
static double steady_median(const trainlog_t *t, const char *quantity)
{
    double *v = malloc((size_t)(t->n_records + 1) * sizeof *v);
    int n = 0;
    if (!v)
        return NAN;
    for (int i = t->first_steady; i >= 0 && i < t->n_records; i++) {
        const tlog_record_t *r = &t->records[i];
        double x = printed(r, quantity);
        if (!r->skipped && r->step_time_s > 0 && isfinite(x))
            v[n++] = x;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double m = n == 0 ? NAN : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    free(v);
    return m;
}

/* Plain mean of the steady records' step times: Megatron's iteration
 * lines each average their logging interval, and a part of a log pasted
 * from iteration 122 on is no average over 122 iterations. */
static double steady_mean(const trainlog_t *t)
{
    double sum = 0;
    int n = 0;
    for (int i = t->first_steady; i >= 0 && i < t->n_records; i++)
        if (!t->records[i].skipped && t->records[i].step_time_s > 0) {
            sum += t->records[i].step_time_s;
            n++;
        }
    return n ? sum / n : NAN;
}

/* "-" is 0 (the log does not give it). */
static double given(const char *s)
{
    return strcmp(s, "-") == 0 ? 0 : strtod(s, NULL);
}

/* The reader's view of one row; true when every check holds. */
static bool read_right(char **f)
{
    char path[512];
    snprintf(path, sizeof path, "real/logs/%s", f[0]);
    trainlog_t t;
    err_t e;
    bool refused_row = strcmp(f[2], "-") == 0;
    int rc = trainlog_read(fixture(path), NULL, &t, &e);
    bool read = rc == ERR_OK; /* t holds memory even when settling refuses */
    if (rc == ERR_OK) {
        /* a batch and GPU count only to turn throughput into step times
         * for the warm-up search; the compared figures are the log's */
        tlog_known_t k = {8, 64, 64 * 1024};
        rc = trainlog_settle(&t, &k, &e);
    }
    bool ok;
    if (refused_row) {
        ok = rc == ERR_INPUT && strstr(e.msg, f[3]) && count_lines(e.msg) == 1;
    } else {
        double m = steady_median(&t, f[2]), want = strtod(f[3], NULL);
        double seq = t.samples_per_step > 0 && t.tokens_per_step > 0
                         ? t.tokens_per_step / t.samples_per_step
                         : 0;
        ok = rc == ERR_OK && strcmp(t.framework, f[1]) == 0 && fabs(m - want) <= 1e-6 * want &&
             t.warmup == atoi(f[4]) && (t.warmup == 0 || strstr(t.note, "warm-up dropped")) &&
             t.samples_per_step == given(f[5]) && seq == given(f[6]) && t.n_gpus == given(f[7]) &&
             (strcmp(f[2], "ms") != 0 ||
              fabs(t.step_time_s.mean - steady_mean(&t)) <= 1e-9 * t.step_time_s.mean);
        if (!ok)
            fprintf(stderr, "\n  %s: rc %d %s, %s median %.10g (want %s), warm-up %d, batch %g "
                            "seq %g gpus %d\n",
                    f[0], rc, rc ? e.msg : t.framework, f[2], m, f[3], t.warmup,
                    t.samples_per_step, seq, t.n_gpus);
    }
    if (read)
        trainlog_free(&t);
    if (!ok && refused_row)
        fprintf(stderr, "\n  %s: %s (want a refusal with '%s')\n", f[0], rc ? e.msg : "read",
                f[3]);
    return ok;
}

/* The flag in fix ("--seq-len 4096 --gpus 64") that the refusal asks for
 * ("give --seq-len"), appended with its value to args; false when the
 * refusal asks for none of them. */
static bool add_asked_flag(const char *err, const char *fix, char *args, size_t cap)
{
    const char *give = strstr(err, "give --");
    if (!give)
        return false;
    const char *p = fix;
    while (*p) {
        char flag[64], value[64];
        int used = 0;
        if (sscanf(p, "%63s %63s%n", flag, value, &used) != 2)
            return false;
        p += used;
        while (*p == ' ')
            p++;
        char word[80];
        snprintf(word, sizeof word, " %s ", flag);
        if (strstr(give, flag) && !strstr(args, word)) {
            size_t n = strlen(args);
            snprintf(args + n, cap - n, " %s %s", flag, value);
            return true;
        }
    }
    return false;
}

/* The CLI's view: refusals are one line naming what is missing, and
 * giving what they ask for ends in a run or in the row's refusal.
 * Counts the refusals seen and those that named what was missing; *fixed
 * is 1 when the row needed asked-for flags and adding them ended right,
 * 0 when it needed some and did not, -1 when it needed none. */
static bool cmd_right(char **f, int *refusals, int *named, int *fixed)
{
    char args[1024];
    snprintf(args, sizeof args, "validate --log tests/fixtures/real/logs/%s %s", f[0], f[8]);
    bool refused_row = strcmp(f[2], "-") == 0;
    *fixed = -1;
    for (int round = 0; round < 6; round++) {
        char *err = NULL;
        int rc = run_cli(args, NULL, &err);
        bool asked = round > 0;
        if (rc == 0) {
            free(err);
            if (asked)
                *fixed = !refused_row;
            return !refused_row;
        }
        (*refusals)++;
        bool one_line = rc == 2 && err && count_lines(err) == 1;
        bool final = err && refused_row && strstr(err, f[3]);
        bool asks = err && !final && add_asked_flag(err, f[9], args, sizeof args);
        *named += one_line && (asks || final);
        if (!one_line || !asks) {
            if (!final)
                fprintf(stderr, "\n  scaleplan %s\n  said: %s", args, err ? err : "(nothing)\n");
            free(err);
            if (asked)
                *fixed = one_line && final;
            return one_line && final;
        }
        free(err);
    }
    *fixed = 0;
    return false;
}

/* Every row of expected.tsv through the reader and the CLI (see the top
 * of this file); *named counts the refusals that named what was missing
 * out of *refusals. */
static void tally_rows(real_tally_t *t, int *refusals, int *named)
{
    memset(t, 0, sizeof *t);
    *refusals = *named = 0;
    char *table = slurp(fixture("real/logs/expected.tsv"));
    if (!table)
        return;
    for (char *line = table, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *f[MAX_FIELDS];
        t->files++;
        if (split_tabs(line, f) != MAX_FIELDS) {
            fprintf(stderr, "\n  expected.tsv: a row without 10 tab-separated fields");
            continue;
        }
        int fixed;
        bool reader = read_right(f), cli = cmd_right(f, refusals, named, &fixed);
        t->right += reader && cli;
        t->refused += reader && cli && strcmp(f[2], "-") == 0;
        t->fixes_tried += fixed >= 0;
        t->fixes_worked += fixed == 1;
    }
    free(table);
    t->unlisted = real_count_unlisted(fixture("real/logs"), fixture("real/logs/expected.tsv"));
    t->files += t->unlisted;
}

void real_logs_tally(real_tally_t *t)
{
    int refusals, named;
    tally_rows(t, &refusals, &named);
}

static void test_real_logs(void)
{
    real_tally_t t;
    int refusals, named;
    tally_rows(&t, &refusals, &named);
    fprintf(stderr, "\n  real logs: %d of %d read right; %d of %d refusals named what was "
                    "missing; %d of %d asked-for fixes ran\n",
            t.right, t.files, named, refusals, t.fixes_worked, t.fixes_tried);
    CU_ASSERT_TRUE(t.files >= 40);
    CU_ASSERT_EQUAL(t.unlisted, 0);
    CU_ASSERT_TRUE(t.right * 100 >= 95 * t.files);
    CU_ASSERT_EQUAL(named, refusals);
    CU_ASSERT_EQUAL(t.fixes_worked, t.fixes_tried);
}

TEST_SUITE(suite_real_logs, "real_logs", TEST(test_real_logs));
