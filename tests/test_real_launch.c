/* Real launch files written by others (tests/fixtures/real/launch, each
 * with its source in SOURCES.md), read through the path sim uses
 * (--megatron-args-file, or --bridge-overrides for Megatron-Bridge
 * commands), against expected.tsv, whose values were taken from the files'
 * own flags:
 *
 *   - a file that runs: the simulated layout has every item the row names
 *     (TP, PP, CP, EP, VPP, DP, micro and global batch, sharding,
 *     recompute, precision, as the sim's layout line writes them) on the
 *     row's GPU count;
 *   - every refusal is one line; a refusal that names one of the row's fix
 *     flags (--vocab-size, --gpus, --pp) is answered by adding that flag,
 *     and the run is tried again: the fix the refusal names must work; a
 *     refusal no fix answers must be the row's own (a hybrid Mamba model, a
 *     file bash itself would split wrongly).
 *
 * At least 95% of the rows must read right, and every refusal must name
 * what is missing or be the row's final one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testing.h"

enum { FIELDS = 7 };

static int split_tabs(char *line, char **f)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < FIELDS; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

/* Whether every blank-separated item of want is a word of the layout line
 * in out, and the run is on gpus GPUs. */
static bool layout_right(const char *out, const char *want, const char *gpus)
{
    const char *line = strstr(out, "  layout: ");
    if (!line)
        return false;
    char layout[512];
    snprintf(layout, sizeof layout, " %.*s ", (int)strcspn(line + 10, "\n"), line + 10);
    for (char *c = layout; *c; c++) /* "(bf16, 1F1B schedule, ...)": words too */
        if (*c == '(' || *c == ')' || *c == ',')
            *c = ' ';
    char buf[256];
    snprintf(buf, sizeof buf, "%s", want);
    for (char *w = strtok(buf, " "); w; w = strtok(NULL, " ")) {
        char word[80];
        snprintf(word, sizeof word, " %s ", w);
        if (!strstr(layout, word))
            return false;
    }
    char on[48];
    snprintf(on, sizeof on, " on %s x ", gpus);
    return strstr(out, on) != NULL;
}

/* The fix flag (with its value) that the refusal names and args lacks,
 * appended to args; false when it names none. */
static bool add_named_flag(const char *err, const char *fix, char *args, size_t cap)
{
    const char *p = fix;
    while (*p && strcmp(fix, "-") != 0) {
        char flag[64], value[64];
        int used = 0;
        if (sscanf(p, "%63s %63s%n", flag, value, &used) != 2)
            return false;
        p += used;
        while (*p == ' ')
            p++;
        char word[80];
        snprintf(word, sizeof word, " %s ", flag);
        if (strstr(err, flag) && !strstr(args, word)) {
            size_t n = strlen(args);
            snprintf(args + n, cap - n, " %s %s ", flag, value);
            return true;
        }
    }
    return false;
}

static bool row_right(char **f, int *refusals, int *named)
{
    char args[1024];
    snprintf(args, sizeof args, "sim %s tests/fixtures/real/launch/%s %s ",
             strcmp(f[1], "bridge") == 0 ? "--bridge-overrides" : "--megatron-args-file", f[0],
             f[2]);
    bool refused_row = strcmp(f[4], "-") == 0;
    for (int round = 0; round < 5; round++) {
        char *out = NULL, *err = NULL;
        int rc = run_cli(args, &out, &err);
        if (rc == 0) {
            bool ok = !refused_row && layout_right(out, f[4], f[3]);
            if (!ok)
                fprintf(stderr, "\n  scaleplan %s\n  read: %.300s\n  want: %s on %s GPUs\n", args,
                        out && strstr(out, "layout:") ? strstr(out, "layout:") : "(no layout)",
                        f[4], f[3]);
            free(out);
            free(err);
            return ok;
        }
        (*refusals)++;
        bool one_line = rc == 2 && err && count_lines(err) == 1;
        bool final = err && refused_row && strstr(err, f[5]);
        bool asks = err && !final && add_named_flag(err, f[6], args, sizeof args);
        *named += one_line && (asks || final);
        if (!one_line || !asks) {
            if (!final)
                fprintf(stderr, "\n  scaleplan %s\n  said: %s", args, err ? err : "(nothing)\n");
            free(out);
            free(err);
            return one_line && final;
        }
        free(out);
        free(err);
    }
    return false;
}

static void test_real_launch(void)
{
    char *table = slurp(fixture("real/launch/expected.tsv"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(table);
    int rows = 0, right = 0, refusals = 0, named = 0;
    for (char *line = table, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *f[FIELDS];
        if (split_tabs(line, f) != FIELDS) {
            CU_FAIL("expected.tsv: a row without 7 tab-separated fields");
            continue;
        }
        rows++;
        right += row_right(f, &refusals, &named);
    }
    free(table);
    fprintf(stderr, "\n  real launch files: %d of %d read right; %d of %d refusals named what "
                    "was missing\n",
            right, rows, named, refusals);
    CU_ASSERT_TRUE(rows >= 30);
    CU_ASSERT_TRUE(right * 100 >= 95 * rows);
    CU_ASSERT_EQUAL(named, refusals);
}

TEST_SUITE(suite_real_launch, "real_launch", TEST(test_real_launch));
