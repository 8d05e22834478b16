/* Real nccl-tests outputs as people paste them (tests/fixtures/real/nccltests,
 * sources in SOURCES.md there): every file is read and checked against
 * expected.csv (collective, ranks, the largest size and its printed busbw,
 * or a refusal naming what the paste does not say); at least 95% must
 * come out right. Then each paste mechanism on its own, switched on by an
 * edit of a real file: launcher labels with a second rank's copy of the
 * table, carriage returns, no header and no footer, --collective against
 * the log, and the command line end to end (a GPU outside the catalog,
 * --gpu mapping it, a collective the profile does not model).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/nccltests.h"
#include "common/error.h"
#include "tests/real_corpus.h"
#include "tests/testing.h"

#define REAL_DIR "real/nccltests/"
#define MAX_FIELDS 9

/* One row of expected.csv. */
typedef struct {
    char f[MAX_FIELDS][64];
} expect_row_t;

static bool split_row(char *line, expect_row_t *r)
{
    int n = 0;
    for (char *tok = strtok(line, ",\n"); tok && n < MAX_FIELDS; tok = strtok(NULL, ",\n"))
        snprintf(r->f[n++], sizeof r->f[0], "%s", tok);
    return n == MAX_FIELDS;
}

/* Read one file as expected.csv's row says; true when it comes out right.
 * Prints what differs. */
static bool check_file(const expect_row_t *x)
{
    char path[512];
    snprintf(path, sizeof path, "%s", fixture(REAL_DIR));
    snprintf(path + strlen(path), sizeof path - strlen(path), "%s", x->f[0]);
    nccltests_hint_t hint = {0, 0, NULL};
    if (strcmp(x->f[1], "-") != 0)
        hint.collective = x->f[1];
    if (strcmp(x->f[2], "-") != 0)
        hint.n_ranks = atoi(x->f[2]);
    nccltests_reading_t *r = malloc(sizeof *r);
    if (!r)
        return false;
    err_t e;
    err_clear(&e);
    int rc = nccltests_read_file(path, &hint, r, &e);
    bool ok;
    if (strcmp(x->f[3], "refuse") == 0) {
        ok = rc == ERR_INPUT && strstr(e.msg, x->f[8]) && strstr(e.msg, x->f[0]) &&
             !strchr(e.msg, '\n');
        if (!ok)
            printf("\n  %s: expected a refusal naming %s, got rc %d: %s", x->f[0], x->f[8], rc,
                   rc ? e.msg : "(read)");
    } else {
        const meas_coll_t *s = &r->series;
        double size = atof(x->f[6]), busbw = atof(x->f[7]);
        ok = rc == ERR_OK && strcmp(r->collective, x->f[4]) == 0 &&
             s->n_ranks == atoi(x->f[5]) && s->n > 0 && s->bytes[s->n - 1] == size &&
             fabs(s->busbw_gbs[s->n - 1] - busbw) < 0.005;
        if (!ok)
            printf("\n  %s: expected %s %s ranks %s B %s GB/s, got rc %d: %s %d ranks %.0f B "
                   "%.2f GB/s",
                   x->f[0], x->f[4], x->f[5], x->f[6], x->f[7], rc, rc ? e.msg : r->collective,
                   s->n_ranks, s->n ? s->bytes[s->n - 1] : 0, s->n ? s->busbw_gbs[s->n - 1] : 0);
    }
    free(r);
    return ok;
}

/* Every paste of the folder against expected.csv (each miss printed). */
void real_nccltests_tally(real_tally_t *t)
{
    memset(t, 0, sizeof *t);
    char *csv = slurp(fixture(REAL_DIR "expected.csv"));
    if (!csv)
        return;
    char *save = NULL;
    for (char *line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || line[0] == '\0')
            continue;
        expect_row_t x;
        char copy[512];
        snprintf(copy, sizeof copy, "%s", line);
        t->files++;
        if (!split_row(copy, &x)) {
            printf("\n  expected.csv: a row without %d fields: %s", MAX_FIELDS, line);
            continue;
        }
        bool ok = check_file(&x);
        t->right += ok;
        t->refused += ok && strcmp(x.f[3], "refuse") == 0;
    }
    free(csv);
    t->unlisted =
        real_count_unlisted(fixture("real/nccltests"), fixture(REAL_DIR "expected.csv"));
    t->files += t->unlisted;
}

/* Every gathered paste against expected.csv: at least 95% right, at least
 * 20 files, and none on disk without a row. */
static void test_real_pastes_read_right(void)
{
    real_tally_t t;
    real_nccltests_tally(&t);
    printf("\n  real nccl-tests pastes: %d of %d read right (%d refusals right) ", t.right, t.files,
           t.refused);
    CU_ASSERT_TRUE(t.files >= 20);
    CU_ASSERT_EQUAL(t.unlisted, 0);
    CU_ASSERT_TRUE(t.right >= 0.95 * t.files);
}

/* Read text (a real log edited in memory) with a hint; the reading or
 * NULL (err filled). Caller frees. */
static nccltests_reading_t *read_text(const char *text, const char *name,
                                      const nccltests_hint_t *h, err_t *e)
{
    nccltests_reading_t *r = malloc(sizeof *r);
    if (r && nccltests_read(text, strlen(text), name, h, r, e) != ERR_OK) {
        free(r);
        r = NULL;
    }
    return r;
}

static bool has_note(const nccltests_reading_t *r, const char *needle)
{
    for (int i = 0; i < r->n_notes; i++)
        if (strstr(r->notes[i], needle))
            return true;
    return false;
}

/* Every line of text prefixed by prefix (a launcher's label). */
static char *label_lines(const char *text, const char *prefix)
{
    size_t n = strlen(text), lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += text[i] == '\n';
    char *out = malloc(n + lines * strlen(prefix) + 1), *o = out;
    if (!out)
        return NULL;
    const char *s = text;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t l = nl ? (size_t)(nl - s + 1) : strlen(s);
        o += sprintf(o, "%s%.*s", prefix, (int)l, s);
        s += l;
    }
    *o = '\0';
    return out;
}

/* mpirun --tag-output labels, and a second rank printing its own copy of
 * the table (a job built without MPI): one table is kept, the copy is
 * skipped and said; the reading equals the unlabelled log's. srun's "0: "
 * and "[rank0]:" labels read the same. */
static void test_labels_fold_copies(void)
{
    char *log = slurp(fixture(REAL_DIR "superbench_nccl_allreduce.log"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    char *a = label_lines(log, "[1,0]<stdout>:"), *b = label_lines(log, "[1,1]<stdout>:");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    char *both = malloc(strlen(a) + strlen(b) + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(both);
    strcpy(both, a);
    strcat(both, b);
    err_t e;
    nccltests_reading_t *plain = read_text(log, "nccl_allreduce.log", NULL, &e);
    nccltests_reading_t *tagged = read_text(both, "nccl_allreduce.log", NULL, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tagged);
    CU_ASSERT_EQUAL(tagged->series.n, plain->series.n);
    CU_ASSERT_EQUAL(tagged->series.n_ranks, 8);
    CU_ASSERT_EQUAL(memcmp(tagged->series.busbw_gbs, plain->series.busbw_gbs,
                           sizeof plain->series.busbw_gbs),
                    0);
    CU_ASSERT_TRUE(has_note(tagged, "label [1,0]"));
    free(tagged);
    static const char *const labels[] = {"0: ", "[rank0]:", "[0] ", "   12: "};
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
        char *l = label_lines(log, labels[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(l);
        nccltests_reading_t *r = read_text(l, "nccl_allreduce.log", NULL, &e);
        CU_ASSERT_PTR_NOT_NULL(r);
        if (r)
            CU_ASSERT_EQUAL(r->series.n, plain->series.n);
        free(r);
        free(l);
    }
    free(plain);
    free(both);
    free(a);
    free(b);
    free(log);
}

/* CRLF line ends (a log saved on Windows) read as the log does. */
static void test_carriage_returns(void)
{
    char *log = slurp(fixture(REAL_DIR "autodl_2080ti_run6.log"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    char *crlf = malloc(2 * strlen(log) + 1), *o = crlf;
    CU_ASSERT_PTR_NOT_NULL_FATAL(crlf);
    for (const char *s = log; *s; s++) {
        if (*s == '\n')
            *o++ = '\r';
        *o++ = *s;
    }
    *o = '\0';
    err_t e;
    nccltests_reading_t *r = read_text(crlf, "paste.txt", NULL, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(r->collective, "alltoall");
    CU_ASSERT_EQUAL(r->series.n_ranks, 2);
    CU_ASSERT_STRING_EQUAL(r->device, "NVIDIA GeForce RTX 2080 Ti");
    free(r);
    free(crlf);
    free(log);
}

/* Only the rows: no '#' line at all (header, rank lines, column header,
 * footer gone). Read with --collective and the ratio's ranks, and every
 * missing piece is said in a note; without --collective it is refused
 * naming the flag; a --collective that contradicts the log is refused. */
static void test_rows_only(void)
{
    char *log = slurp(fixture(REAL_DIR "a3mega_ztan_16xh100.log"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    char *rows = malloc(strlen(log) + 1), *o = rows;
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    for (const char *s = log; *s;) {
        const char *nl = strchr(s, '\n');
        size_t l = nl ? (size_t)(nl - s + 1) : strlen(s);
        const char *t = s + strspn(s, " ");
        if (*t >= '0' && *t <= '9') {
            memcpy(o, s, l);
            o += l;
        }
        s += l;
    }
    *o = '\0';
    err_t e;
    nccltests_hint_t given = {0, 0, "all_reduce"};
    nccltests_reading_t *r = read_text(rows, "rows.txt", &given, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->series.n, 31);
    CU_ASSERT_EQUAL(r->series.n_ranks, 16);
    CHECK_REL(r->series.busbw_gbs[r->series.n - 1], 338.82, 1e-9);
    CU_ASSERT_TRUE(has_note(r, "no column header"));
    CU_ASSERT_TRUE(has_note(r, "Avg bus bandwidth"));
    CU_ASSERT_TRUE(has_note(r, "inferred from busbw/algbw"));
    CU_ASSERT_TRUE(has_note(r, "1 node assumed"));
    free(r);
    CU_ASSERT_PTR_NULL(read_text(rows, "rows.txt", NULL, &e));
    CHECK_ERR(ERR_INPUT, &e, ERR_INPUT, "rows.txt", "--collective");
    nccltests_hint_t wrong = {0, 0, "all_gather"};
    CU_ASSERT_PTR_NULL(read_text(log, "ztan.md", &wrong, &e));
    CHECK_ERR(ERR_INPUT, &e, ERR_INPUT, "all_reduce", "--collective says all_gather");
    nccltests_hint_t unknown = {0, 0, "allmerge"};
    CU_ASSERT_PTR_NULL(read_text(rows, "rows.txt", &unknown, &e));
    CHECK_ERR(ERR_INPUT, &e, ERR_INPUT, "--collective", "allmerge");
    free(rows);
    free(log);
}

/* The text without the lines that contain needle. */
static char *drop_lines(const char *text, const char *needle)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t l = nl ? (size_t)(nl - s + 1) : strlen(s);
        char *line = strndup(s, l);
        if (line && !strstr(line, needle)) {
            memcpy(o, s, l);
            o += l;
        }
        free(line);
        s += l;
    }
    *o = '\0';
    return out;
}

/* The group size without rank lines: NCCL's "nranks 16" lines of a
 * 2 x 8 A100 EFA log (every rank's INFO lines tagged), and without those
 * too the busbw/algbw ratio of its widest row (43.81 / 23.36 = 1.875 =
 * 2 x 15/16); each said in a note. */
static void test_ranks_without_rank_lines(void)
{
    char *log = slurp(fixture(REAL_DIR "aws_efa_eks_p4d_readme.log"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    char *no_rank = drop_lines(log, "#   Rank");
    CU_ASSERT_PTR_NOT_NULL_FATAL(no_rank);
    char *no_info = drop_lines(no_rank, "nranks");
    CU_ASSERT_PTR_NOT_NULL_FATAL(no_info);
    err_t e;
    nccltests_hint_t given = {0, 0, "all_reduce"};
    nccltests_reading_t *r = read_text(log, "efa.log", &given, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->series.n_ranks, 16);
    CU_ASSERT_EQUAL(r->series.nodes, 2); /* two worker host names */
    CU_ASSERT_STRING_EQUAL(r->device, "A100-SXM4-40GB");
    free(r);
    r = read_text(no_rank, "efa.log", &given, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->series.n_ranks, 16);
    CU_ASSERT_TRUE(has_note(r, "16 ranks taken from NCCL's 'nranks' lines"));
    free(r);
    r = read_text(no_info, "efa.log", &given, &e);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->series.n_ranks, 16);
    CU_ASSERT_TRUE(has_note(r, "16 ranks inferred from busbw/algbw 1.875"));
    free(r);
    free(no_info);
    free(no_rank);
    free(log);
}

/* End to end: a log from a GPU outside the catalog is refused naming the
 * device and --gpu; --gpu maps it and says so; a reduce table is read and
 * left out with a note, and alone it is refused (exit 2). */
static void test_cli_pasted_logs(void)
{
    char args[1024], dir[256], *out = NULL, *err = NULL;
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char run1[512];
    snprintf(run1, sizeof run1, "%s", fixture(REAL_DIR "autodl_2080ti_run1.log"));
    snprintf(args, sizeof args, "calibrate --from-nccl-tests %s --out %s/p.json", run1, dir);
    CU_ASSERT_EQUAL(run_cli(args, &out, &err), 2);
    CU_ASSERT_TRUE(err && strstr(err, "NVIDIA GeForce RTX 2080 Ti") && strstr(err, "--gpu"));
    free(out);
    free(err);
    snprintf(args, sizeof args, "calibrate --from-nccl-tests %s %s --gpu v100 --out %s/p.json",
             run1, fixture(REAL_DIR "autodl_2080ti_run4.log"), dir);
    CU_ASSERT_EQUAL(run_cli(args, &out, &err), 0);
    CU_ASSERT_TRUE(out && strstr(out, "'NVIDIA GeForce RTX 2080 Ti' taken as catalog GPU v100"));
    CU_ASSERT_TRUE(out && strstr(out, "a reduce table (28 sizes, 2 ranks) read but not imported"));
    CU_ASSERT_TRUE(out && strstr(out, "collective all_reduce taken from the command line"));
    free(out);
    free(err);
    snprintf(args, sizeof args, "calibrate --from-nccl-tests %s --gpu v100 --out %s/p.json",
             fixture(REAL_DIR "autodl_2080ti_run4.log"), dir);
    CU_ASSERT_EQUAL(run_cli(args, &out, &err), 2);
    CU_ASSERT_TRUE(err && strstr(err, "no log of a collective the profile models"));
    free(out);
    free(err);
    snprintf(args, sizeof args,
             "calibrate --from-nccl-tests %s --collective all_reduce --gpu h100-sxm --out %s/p.json",
             fixture(REAL_DIR "awsome_nccl_readme_2.log"), dir);
    CU_ASSERT_EQUAL(run_cli(args, &out, &err), 0);
    CU_ASSERT_TRUE(out && strstr(out, "16 ranks inferred"));
    free(out);
    free(err);
    remove_tree(dir);
}

TEST_SUITE(suite_real_nccltests, "real_nccltests", TEST(test_real_pastes_read_right),
           TEST(test_labels_fold_copies), TEST(test_carriage_returns), TEST(test_rows_only),
           TEST(test_ranks_without_rank_lines),
           TEST(test_cli_pasted_logs));
