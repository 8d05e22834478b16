/* Every command's --csv carries the same figures as its --json: the real
 * binary run twice per case, the JSON flattened to dotted paths (array
 * elements by index) and each leaf looked up in the CSV, which is either
 * key,value rows or a table whose rows are the elements of one member and
 * whose other columns are the document's other leaves. Every JSON document
 * carries schema_version. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/json.h"
#include "reports/jsonout.h"
#include "tests/testing.h"

/* ------------------------------------------------------------ CSV */

typedef struct {
    int n_cols, n_rows;
    char **cell; /* (n_rows + 1) x n_cols, the header first */
} table_csv_t;

static void csv_free_t(table_csv_t *t)
{
    for (int i = 0; i < (t->n_rows + 1) * t->n_cols; i++)
        free(t->cell[i]);
    free(t->cell);
}

/* Parse RFC 4180 text into rows of cells; false if ragged. */
static bool parse_csv(const char *s, table_csv_t *t)
{
    memset(t, 0, sizeof *t);
    size_t cap = 1024, n = 0;
    char **cells = malloc(cap * sizeof *cells);
    int cols = -1, in_row = 0, rows = 0;
    while (*s) {
        char *buf = malloc(strlen(s) + 1), *o = buf;
        if (*s == '"') {
            for (s++; *s; s++) {
                if (*s == '"' && s[1] == '"') {
                    *o++ = '"';
                    s++;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    *o++ = *s;
                }
            }
        } else {
            while (*s && *s != ',' && *s != '\n')
                *o++ = *s++;
        }
        *o = '\0';
        if (n == cap)
            cells = realloc(cells, (cap *= 2) * sizeof *cells);
        cells[n++] = buf;
        in_row++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\n')
            s++;
        if (cols < 0)
            cols = in_row;
        else if (in_row != cols) {
            t->cell = cells;
            t->n_cols = 1;
            t->n_rows = (int)n - 1;
            return false;
        }
        rows++;
        in_row = 0;
    }
    t->cell = cells;
    t->n_cols = cols;
    t->n_rows = rows - 1;
    return cols > 0;
}

static int column(const table_csv_t *t, const char *name)
{
    for (int c = 0; c < t->n_cols; c++)
        if (strcmp(t->cell[c], name) == 0)
            return c;
    return -1;
}

static const char *at(const table_csv_t *t, int row, int col)
{
    return t->cell[(row + 1) * t->n_cols + col];
}

/* ------------------------------------------------------------ JSON */

typedef struct {
    char path[512];
    const cJSON *v;
} leaf_t;

static void flatten(const cJSON *node, const char *prefix, leaf_t *out, int *n, int cap)
{
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, node)
    {
        char name[512];
        if (cJSON_IsArray(node))
            snprintf(name, sizeof name, "%s%s%d", prefix, prefix[0] ? "." : "", i);
        else
            snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", e->string);
        i++;
        if (cJSON_IsObject(e) || cJSON_IsArray(e))
            flatten(e, name, out, n, cap);
        else if (*n < cap) {
            snprintf(out[*n].path, sizeof out[*n].path, "%s", name);
            out[(*n)++].v = e;
        }
    }
}

/* The JSON leaf and the CSV cell hold the same figure. */
static bool same(const cJSON *v, const char *cell)
{
    if (cJSON_IsNumber(v)) {
        if (!isfinite(v->valuedouble))
            return cell[0] == '\0';
        char *end;
        double x = strtod(cell, &end);
        return end != cell && fabs(x - v->valuedouble) <= 1e-12 * fmax(1, fabs(x));
    }
    if (cJSON_IsString(v))
        return strcmp(v->valuestring, cell) == 0;
    if (cJSON_IsBool(v))
        return strcmp(cell, cJSON_IsTrue(v) ? "true" : "false") == 0;
    return cell[0] == '\0'; /* null */
}

#define MAX_LEAVES 20000

/* No object of a command's JSON gives a key twice (its readers, report
 * among them, refuse that). */
static void check_unique(const cJSON *doc, const char *args)
{
    json_ctx_t top = json_ctx_root(args);
    err_t e;
    if (json_check_unique_keys(doc, &top, &e) != 0) {
        fprintf(stderr, "\n  %s\n", e.msg);
        CU_FAIL("a key given twice in a command's JSON");
    }
}

/* Run args with --json and --csv and compare; table names the CSV's table
 * member (NULL: key,value); values false compares keys only (measured
 * figures that differ run to run); skip_key is a key left out of the
 * value comparison (timings). */
static void check_same(const char *args, const char *table, bool values, const char *skip_key)
{
    char cmd[1200], *json = NULL, *csv = NULL;
    snprintf(cmd, sizeof cmd, "%s --json", args);
    int rc = run_cli(cmd, &json, NULL);
    snprintf(cmd, sizeof cmd, "%s --csv", args);
    int rc2 = run_cli(cmd, &csv, NULL);
    if (rc != 0 || rc2 != 0 || !json || !csv) {
        fprintf(stderr, "\n  outputs: '%s' exited %d / %d\n", args, rc, rc2);
        CU_FAIL("command failed");
        free(json);
        free(csv);
        return;
    }
    cJSON *doc = cJSON_Parse(json);
    CU_ASSERT_FATAL(doc != NULL);
    check_unique(doc, args);
    const cJSON *sv = cJSON_GetObjectItem(doc, "schema_version");
    CU_ASSERT(cJSON_IsNumber(sv) && sv->valuedouble == REPORT_SCHEMA_VERSION);
    leaf_t *leaves = malloc(MAX_LEAVES * sizeof *leaves);
    int n = 0;
    flatten(doc, "", leaves, &n, MAX_LEAVES);
    CU_ASSERT(n > 0 && n < MAX_LEAVES);
    table_csv_t t;
    CU_ASSERT_FATAL(parse_csv(csv, &t));
    int missing = 0, differ = 0;
    char first[600] = "";
    if (!table) {
        CU_ASSERT(t.n_cols == 2 && strcmp(t.cell[0], "key") == 0);
        CU_ASSERT_EQUAL(t.n_rows, n);
        for (int i = 0; i < n; i++) {
            int row = -1;
            for (int r = 0; r < t.n_rows && row < 0; r++)
                if (strcmp(at(&t, r, 0), leaves[i].path) == 0)
                    row = r;
            if (row < 0) {
                missing++;
                if (!first[0])
                    snprintf(first, sizeof first, "missing %s", leaves[i].path);
            } else if (values && !(skip_key && strstr(leaves[i].path, skip_key)) &&
                       !same(leaves[i].v, at(&t, row, 1))) {
                differ++;
                if (!first[0])
                    snprintf(first, sizeof first, "%s: %s", leaves[i].path, at(&t, row, 1));
            }
        }
    } else {
        size_t tl = strlen(table);
        for (int i = 0; i < n; i++) {
            const char *p = leaves[i].path;
            int row = -1, col;
            if (strncmp(p, table, tl) == 0 && p[tl] == '.') {
                /* the element's leaf: its path without the index */
                char *rest, name[600];
                row = (int)strtol(p + tl + 1, &rest, 10);
                snprintf(name, sizeof name, "%s%s", table, rest);
                col = column(&t, name);
            } else {
                col = column(&t, p);
            }
            if (col < 0 || row >= t.n_rows) {
                missing++;
                if (!first[0])
                    snprintf(first, sizeof first, "missing %s", p);
                continue;
            }
            if (!values || (skip_key && strstr(p, skip_key)))
                continue;
            for (int r = row < 0 ? 0 : row; r < (row < 0 ? t.n_rows : row + 1); r++)
                if (!same(leaves[i].v, at(&t, r, col))) {
                    differ++;
                    if (!first[0])
                        snprintf(first, sizeof first, "%s (row %d): %s", p, r, at(&t, r, col));
                    break;
                }
        }
    }
    if (missing || differ)
        fprintf(stderr, "\n  outputs: '%s': %d of %d JSON figures missing from the CSV, %d "
                        "differ (first: %s)\n",
                args, missing, n, differ, first);
    CU_ASSERT_EQUAL(missing, 0);
    CU_ASSERT_EQUAL(differ, 0);
    csv_free_t(&t);
    free(leaves);
    cJSON_Delete(doc);
    free(json);
    free(csv);
}

static void test_planning_commands(void)
{
    check_same("sim --model llama3-70b --gpu h100-sxm --gpus 256 --tp 8 --pp 4 --sequence-parallel "
               "--recompute selective --global-batch 512",
               NULL, true, NULL);
    check_same("model --model llama3-70b --tp 8 --pp 4 --gpus 256 --gpu h100-sxm", NULL, true,
               NULL);
    check_same("plan --model llama3-8b --tokens 1T --gpu h100-sxm --min-gpus 8 --max-gpus 16 "
               "--seed 7",
               "ladder", true, "elapsed_s");
    check_same("catalog gpus", NULL, true, NULL);
    check_same("catalog failures", NULL, true, NULL);
    /* plan --details (JSON only): the best rung's detail once gave
     * best.checkpoint_interval_s a second time */
    char *json = NULL;
    CU_ASSERT_EQUAL_FATAL(run_cli("plan --model llama3-8b --tokens 1T --gpu h100-sxm --min-gpus 8 "
                                  "--max-gpus 16 --trials 20 --details --json",
                                  &json, NULL),
                          0);
    cJSON *doc = cJSON_Parse(json ? json : "");
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    check_unique(doc, "plan --details --json");
    cJSON_Delete(doc);
    free(json);
}

static void test_run_level_commands(void)
{
    check_same("reliability --gpu h100-sxm --gpus 1024 --days 30 --checkpoint-size 1.7TB --seed 1",
               NULL, true, NULL);
    check_same("reliability --gpu h100-sxm --gpus 4096 --days 20 --checkpoint-size 840GB --seed 1 "
               "--trials 50 --sweep",
               NULL, true, NULL);
    check_same("reliability --ladder", "ladder", true, NULL);
    check_same("budget --model llama3-8b --tokens 1T --gpus 64 --gpu h100-sxm --tp 2 --seed 1 "
               "--compare",
               NULL, true, NULL);
    check_same("budget --model llama3-70b --gpus 256 --gpu h100-sxm --tp 8 --pp 2 --days 14 "
               "--checkpoint-every 1h --keep-checkpoints all",
               NULL, true, NULL);
}

static void test_validate_and_tools(void)
{
    check_same("validate --measured tests/fixtures/validate/sc21-gpt-1.7b-32xa100.json",
               "components", true, NULL);
    check_same("validate --failures tests/fixtures/validation/failures.csv,"
               "tests/fixtures/validation/failures_more.csv",
               "rows", true, NULL);
    check_same("validate --log tests/fixtures/logs/ladder/llama3-8b-64.log --log "
               "tests/fixtures/logs/ladder/llama3-8b-128.log --model llama3-8b --gpu h100-sxm "
               "--seq-len 8192 --distributed-optimizer",
               "runs", true, NULL);
    check_same("calibrate --show profile/catalog/h100-sxm.json", NULL, true, NULL);
    /* a measured run: its timings differ run to run, its keys do not */
    check_same("train --model tests/fixtures/configs/tiny-gpt.json --steps 1 --seq-len 8 "
               "--micro-batch 1 --quiet",
               NULL, false, NULL);
    char dir[256], args[800];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char *res = NULL;
    CU_ASSERT_EQUAL_FATAL(run_cli("reliability --gpu h100-sxm --gpus 512 --days 10 "
                                  "--checkpoint-size 1TB --seed 3 --json",
                                  &res, NULL),
                          0);
    char path[400];
    snprintf(path, sizeof path, "%s/result.json", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fputs(res, f);
    fclose(f);
    free(res);
    snprintf(args, sizeof args, "report %s --out %s/report", path, dir);
    check_same(args, NULL, true, NULL);
    remove_tree(dir);
}

TEST_SUITE(suite_outputs, "outputs", TEST(test_planning_commands),
           TEST(test_run_level_commands), TEST(test_validate_and_tools));
