/* The corpus report (issue 37): every file under tests/fixtures/real
 * counted by kind, how many read right and how many were refused as their
 * table says, one line a kind and a total "real files: N read right of M
 * (P%)"; the test fails below 95% overall.
 *
 * Kinds with their own checks (configs, logs, nccltests) report through
 * their suites' tally functions (tests/real_corpus.h). Any other folder is
 * read through its expected.tsv in the generic format of
 * tests/fixtures/real/README.md, which runs the scaleplan binary on each
 * file; a folder without that table is counted and named, and left out of
 * the percentage (its own suite checks it). A folder that does not exist
 * yet is reported as absent, so the report stands while others add kinds.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/real_corpus.h"
#include "tests/testing.h"

/* Names that describe a folder rather than being one of its entries. */
static bool is_meta(const char *name)
{
    return name[0] == '.' || strcmp(name, "SOURCES.md") == 0 || strcmp(name, "README.md") == 0 ||
           strncmp(name, "expected.", 9) == 0;
}

/* Entries of the folder at root (see real_count_entries). */
static int count_in(const char *root, int dirs)
{
    DIR *d = opendir(root);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *ent; (ent = readdir(d));) {
        if (is_meta(ent->d_name))
            continue;
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, dirs ? "%s/%s/config.json" : "%s/%s", root, ent->d_name);
        n += stat(path, &st) == 0 && (dirs || S_ISREG(st.st_mode));
    }
    closedir(d);
    return n;
}

int real_count_entries(const char *dir, int dirs)
{
    return count_in(fixture(dir), dirs);
}

enum { GEN_FIELDS = 5 };

/* Split a tab-separated line in place into at most GEN_FIELDS fields. */
static int split_fields(char *line, char **f)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < GEN_FIELDS; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

/* args with every "{}" replaced by path, into out (cap bytes). */
static void expand_args(const char *args, const char *path, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *a = args; *a && o + 1 < cap; a++) {
        if (a[0] == '{' && a[1] == '}') {
            o += (size_t)snprintf(out + o, cap - o, "%s", path);
            o = o < cap ? o : cap - 1;
            a++;
        } else {
            out[o++] = *a;
        }
    }
    out[o] = '\0';
}

/* One generic row: file, status (ok|refused), args, expect[, fix]. */
static bool generic_row_right(const char *folder, char **f, int n, real_tally_t *t)
{
    char path[1024], args[4096];
    snprintf(path, sizeof path, "%s/%s", folder, f[0]);
    expand_args(f[2], path, args, sizeof args);
    char *out = NULL, *err = NULL;
    int rc = run_cli(args, &out, &err);
    bool ok;
    if (strcmp(f[1], "ok") == 0) {
        ok = rc == 0 && out && strstr(out, f[3]);
    } else {
        ok = rc == 2 && err && count_lines(err) == 1 && strstr(err, f[3]);
        if (ok && n == GEN_FIELDS && f[4][0]) {
            /* the fix the refusal suggests, added to the command, runs */
            size_t len = strlen(args);
            snprintf(args + len, sizeof args - len, " %s", f[4]);
            t->fixes_tried++;
            bool fixed = run_cli(args, NULL, NULL) == 0;
            t->fixes_worked += fixed;
            ok = fixed;
        }
        t->refused += ok;
    }
    if (!ok)
        fprintf(stderr, "\n  %s/%s: want %s with '%s', got exit %d: %s", folder, f[0], f[1],
                f[3], rc, err ? err : "");
    free(out);
    free(err);
    return ok;
}

/* Whether table (TSV or CSV) has a row for file: a line starting with
 * file and a tab or comma. */
static bool names_file(const char *table, const char *file)
{
    size_t n = strlen(file);
    for (const char *line = table; line && *line;) {
        if (strncmp(line, file, n) == 0 && (line[n] == '\t' || line[n] == ','))
            return true;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return false;
}

int real_count_unlisted(const char *folder, const char *table_path)
{
    char *table = slurp(table_path);
    DIR *d = opendir(folder);
    int n = 0;
    for (struct dirent *ent; table && d && (ent = readdir(d));) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", folder, ent->d_name);
        if (!is_meta(ent->d_name) && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            !names_file(table, ent->d_name)) {
            fprintf(stderr, "\n  %s: no row in expected.tsv", path);
            n++;
        }
    }
    if (d)
        closedir(d);
    free(table);
    return n;
}

/* The generic expected.tsv of the folder at path folder (as the CLI is
 * given it); false when it has none in that format (its first line must
 * be the header the README gives). */
static bool generic_tally(const char *folder, real_tally_t *t)
{
    memset(t, 0, sizeof *t);
    char name[1024];
    snprintf(name, sizeof name, "%s/expected.tsv", folder);
    char *table = slurp(name);
    if (!table)
        return false;
    static const char header[] = "# file\tstatus\targs\texpect";
    if (strncmp(table, header, sizeof header - 1) != 0) {
        free(table);
        return false;
    }
    for (char *line = table, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *f[GEN_FIELDS];
        int n = split_fields(line, f);
        t->files++;
        if (n < 4) {
            fprintf(stderr, "\n  %s/expected.tsv: a row without file, status, args, expect",
                    folder);
            continue;
        }
        t->right += generic_row_right(folder, f, n, t);
    }
    free(table);
    t->unlisted = real_count_unlisted(folder, name);
    t->files += t->unlisted;
    return true;
}

typedef struct {
    const char *kind, *dir;
    void (*tally)(real_tally_t *t); /* NULL: the generic table */
    int dirs;                       /* entries are directories holding config.json */
} kind_t;

/* The kinds issue 37 names, in its order. */
static const kind_t KINDS[] = {
    {"configs", "real/configs", real_configs_tally, 1},
    {"launch", "real/launch", NULL, 0},
    {"torchtitan", "real/torchtitan", NULL, 0},
    {"deepspeed", "real/deepspeed", NULL, 0},
    {"accelerate", "real/accelerate", NULL, 0},
    {"logs", "real/logs", real_logs_tally, 0},
    {"nccltests", "real/nccltests", real_nccltests_tally, 0},
};

static void test_corpus_report(void)
{
    int files = 0, right = 0, refused = 0, outside = 0;
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++) {
        const kind_t *k = &KINDS[i];
        int on_disk = real_count_entries(k->dir, k->dirs);
        if (on_disk < 0) {
            fprintf(stderr, "\n  %-10s: absent (no tests/fixtures/%s yet)", k->kind, k->dir);
            continue;
        }
        real_tally_t t;
        if (k->tally) {
            k->tally(&t);
        } else if (!generic_tally(fixture(k->dir), &t)) {
            fprintf(stderr, "\n  %-10s: %d files, no expected.tsv in the corpus format: checked "
                            "by their own suite, not in the total",
                    k->kind, on_disk);
            outside += on_disk;
            continue;
        }
        fprintf(stderr, "\n  %-10s: %d read right of %d (%d refused as expected; %d of %d "
                        "suggested fixes ran; %d without a row)",
                k->kind, t.right, t.files, t.refused, t.fixes_worked, t.fixes_tried, t.unlisted);
        CU_ASSERT_EQUAL(t.fixes_worked, t.fixes_tried);
        files += t.files;
        right += t.right;
        refused += t.refused;
    }
    fprintf(stderr, "\n  real files: %d read right of %d (%.1f%%), %d of them refusals; %d more "
                    "checked only by their own suites\n",
            right, files, files ? 100.0 * right / files : 0.0, refused, outside);
    CU_ASSERT_TRUE(files > 0);
    CU_ASSERT_TRUE(right * 100 >= 95 * files);
}

/* name into dir with text as its content; false on failure. */
static bool write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* The generic table on a folder of its own: a reading, a refusal naming
 * the key, a refusal whose fix runs, a row whose expected text is not
 * printed (not right) and a file without a row (not right). */
static void test_generic_table(void)
{
    char dir[512];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char *cfg = slurp(fixture("real/configs/Llama-2-7b/config.json"));
    char *gptj = slurp(fixture("real/configs/gpt-j-6b/config.json"));
    char *log = slurp(fixture("real/logs/megatron_llm_epfl_22.log"));
    CU_ASSERT_FATAL(cfg && gptj && log);
    CU_ASSERT_TRUE(write_file(dir, "llama.json", cfg) && write_file(dir, "gptj.json", gptj) &&
                   write_file(dir, "run.log", log) && write_file(dir, "stray.json", cfg));
    CU_ASSERT_TRUE(write_file(
        dir, "expected.tsv",
        "# file\tstatus\targs\texpect\tfix\n"
        "llama.json\tok\tmodel --model {}\t6.74B\n"
        "gptj.json\trefused\tmodel --model {}\tnum_hidden_layers\t\n"
        "run.log\trefused\tvalidate --log {} --model llama2-7b --gpu a100-80g\tgive "
        "--seq-len\t--seq-len 4096 --gpus 8\n"
        "llama.json\tok\tmodel --model {}\t70.6B\n"));
    real_tally_t t;
    CU_ASSERT_TRUE(generic_tally(dir, &t));
    CU_ASSERT_EQUAL(t.files, 5);
    CU_ASSERT_EQUAL(t.right, 3);
    CU_ASSERT_EQUAL(t.refused, 2);
    CU_ASSERT_EQUAL(t.fixes_tried, 1);
    CU_ASSERT_EQUAL(t.fixes_worked, 1);
    CU_ASSERT_EQUAL(t.unlisted, 1);
    /* a table in another format is not read as this one */
    CU_ASSERT_TRUE(write_file(dir, "expected.tsv", "# file\tframework\n"));
    CU_ASSERT_FALSE(generic_tally(dir, &t));
    free(cfg);
    free(gptj);
    free(log);
    remove_tree(dir);
}

TEST_SUITE(suite_real_corpus, "real_corpus", TEST(test_generic_table), TEST(test_corpus_report));
