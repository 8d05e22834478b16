/* glossary and layout_text: one layout notation, every abbreviation of it
 * explained, and the golden commands' human-readable outputs free of
 * exponents and of undefined abbreviations (issue 42).
 *
 * The golden scan reads tests/golden/out (recorded by tests/golden/run.sh
 * from the real binary; the golden check proves they are current) and
 * tests/golden/cases.txt to tell --json and --csv outputs, which keep full
 * precision, from the ones people read. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/layout.h"
#include "reports/glossary.h"
#include "models/layout_text.h"
#include "tests/testing.h"

static layout_t base_layout(void)
{
    layout_t l;
    layout_defaults(&l);
    l.tp = 4;
    l.cp = 2;
    l.pp = 2;
    l.vpp = 41;
    l.dp = 256;
    l.micro_batch = 1;
    l.global_batch = 512;
    l.grad_accum = 2;
    l.schedule = SCHEDULE_INTERLEAVED;
    l.sequence_parallel = true;
    l.distributed_optimizer = true;
    l.zero = 1;
    return l;
}

/* The issue's own example, written the one way. */
static void test_notation(void)
{
    char b[256];
    layout_t l = base_layout();
    CU_ASSERT_STRING_EQUAL(layout_text_format(&l, b, sizeof b),
                           "TP4 CP2 PP2 VPP41 DP256 mb1 gb512 SP dist-opt");
    l.recompute = RECOMPUTE_FULL;
    l.recompute_layers = 54;
    l.precision = PRECISION_FP8;
    CU_ASSERT_STRING_EQUAL(layout_text_format(&l, b, sizeof b),
                           "TP4 CP2 PP2 VPP41 DP256 mb1 gb512 SP dist-opt rc=full:54 fp8");
    layout_t f;
    layout_defaults(&f);
    f.dp = 64;
    f.global_batch = 512;
    f.zero = 3;
    f.recompute = RECOMPUTE_SELECTIVE;
    CU_ASSERT_STRING_EQUAL(layout_text_format(&f, b, sizeof b), "TP1 PP1 DP64 mb1 gb512 FSDP rc=sel");
    f.pp = 4;
    f.schedule = SCHEDULE_GPIPE;
    f.ep = 8;
    f.zero = 0;
    f.recompute = RECOMPUTE_NONE;
    CU_ASSERT_STRING_EQUAL(layout_text_format(&f, b, sizeof b), "TP1 PP4 GPipe EP8 DP64 mb1 gb512");
}

/* The JSON record reads back to the same text, with and without the
 * layout_text field the commands write. */
static void test_json_round_trip(void)
{
    char a[256], b[256];
    layout_t l = base_layout();
    l.recompute = RECOMPUTE_FULL;
    l.recompute_layers = 3;
    cJSON *o = layout_text_json(&l);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    layout_text_format(&l, a, sizeof a);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "layout_text")->valuestring, a);
    cJSON_DeleteItemFromObject(o, "layout_text");
    CU_ASSERT_STRING_EQUAL(layout_text_from_json(o, b, sizeof b), a);
    cJSON_Delete(o);
}

static void test_flags(void)
{
    char b[1024];
    layout_t l = base_layout();
    layout_text_flags(&l, "megatron-core", b, sizeof b);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "--tensor-model-parallel-size 4"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "--num-virtual-stages-per-pipeline-rank 41"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "--use-distributed-optimizer"));
    layout_text_flags(&l, "nemo-25.04", b, sizeof b);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "virtual_pipeline_model_parallel_size=41"));
    layout_text_flags(&l, "megatron-bridge-26.04", b, sizeof b);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "context_parallel_size=2"));
    layout_text_flags(&l, "torchtitan-2025-12", b, sizeof b);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "parallelism.pipeline_parallel_degree=2"));
    CU_ASSERT_STRING_EQUAL(layout_text_flags(&l, "pytorch-ddp", b, sizeof b), "");
}

/* Every term has a gloss, a sentence and each framework's name (or "-"),
 * and every token the notation writes names a term. */
static void test_glossary_complete(void)
{
    int n;
    const glossary_entry_t *e = glossary_entries(&n);
    CU_ASSERT(n >= 20);
    for (int i = 0; i < n; i++) {
        CU_ASSERT_PTR_NOT_NULL(e[i].gloss);
        if (strcmp(e[i].term, "P90") == 0 || strcmp(e[i].term, "P10") == 0)
            continue; /* explained in P50's sentence */
        CU_ASSERT(e[i].sentence && e[i].megatron && e[i].nemo && e[i].deepspeed && e[i].torchtitan);
    }
    char b[256];
    layout_t l = base_layout();
    l.ep = 8;
    l.etp = 1;
    l.recompute = RECOMPUTE_SELECTIVE;
    l.recompute_modules = LAYOUT_RC_CORE_ATTN | (LAYOUT_RC_CORE_ATTN << 1);
    layout_text_format(&l, b, sizeof b);
    for (char *w = strtok(b, " "); w; w = strtok(NULL, " "))
        if (!glossary_find(w, strlen(w))) {
            fprintf(stderr, "\n  '%s' names no glossary term\n", w);
            CU_FAIL("a token of the notation is not in the glossary");
        }
    char legend[1024];
    glossary_legend("TP4 PP2 VPP41 DP8 mb1 gb64 rc=full:3", legend, sizeof legend);
    CU_ASSERT_PTR_NOT_NULL(strstr(legend, "VPP: virtual stages"));
    CU_ASSERT_PTR_NOT_NULL(strstr(legend, "rc=full: full activation recompute"));
    CU_ASSERT_PTR_NULL(strstr(legend, "CP:"));
    CU_ASSERT_EQUAL(glossary_legend("nothing here", legend, sizeof legend), 0);
}

/* ------------------------------------------------------------ goldens */

/* Whether the word at p (len bytes) is written in an old notation: "(x8)",
 * "recompute=none", "rc54/chunk", "sel-rc", "full-rc", "ZeRO-0", "PP2v41". */
static bool legacy_word(const char *p, size_t len)
{
    char w[128];
    snprintf(w, sizeof w, "%.*s", (int)(len < 127 ? len : 127), p);
    if (strncmp(w, "recompute=", 10) == 0 || strstr(w, "/chunk") || strstr(w, "sel-rc") ||
        strcmp(w, "full-rc") == 0 || strcmp(w, "ZeRO-0") == 0)
        return true;
    if (w[0] == '(' && w[1] == 'x' && isdigit((unsigned char)w[2]) && w[strlen(w) - 1] == ')')
        return true;
    if (strncmp(w, "PP", 2) == 0 && isdigit((unsigned char)w[2])) {
        const char *q = w + 2;
        while (isdigit((unsigned char)*q))
            q++;
        if (*q == 'v')
            return true;
    }
    return false;
}

/* An exponent: a digit, 'e', an optional sign, a digit ("2e+12", "6.97e-06"). */
static bool has_exponent(const char *text, char *where, size_t cap)
{
    for (const char *p = text; *p; p++)
        if (isdigit((unsigned char)p[0]) && (p[1] == 'e' || p[1] == 'E')) {
            const char *q = p + 2;
            if (*q == '+' || *q == '-')
                q++;
            if (isdigit((unsigned char)*q)) {
                const char *s = p;
                while (s > text && s[-1] != '\n')
                    s--;
                snprintf(where, cap, "%.*s", (int)strcspn(s, "\n"), s);
                return true;
            }
        }
    return false;
}

/* Whether e is a statistic, a term that needs its legend on any line. */
static bool statistic(const glossary_entry_t *e)
{
    static const char *const stats[] = {"P10", "P50", "P90", "MFU", "HFU", "MTBF"};
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++)
        if (strcmp(e->term, stats[i]) == 0)
            return true;
    return false;
}

/* Check one human-readable output: no exponent, no old notation, every
 * term on a line that writes a layout (one with a word TP<n>), and every
 * statistic (P10, P50, P90, MFU, HFU, MTBF) on any line, explained by a legend in the same
 * output, and MFU said against its basis. flat is
 * text with its whitespace runs as one space. Returns the problems found. */
static int check_output(const char *name, const char *text, const char *flat)
{
    int bad = 0;
    char where[512];
    if (has_exponent(text, where, sizeof where)) {
        fprintf(stderr, "\n  %s: an exponent: %s", name, where);
        bad++;
    }
    bool layout_line = false; /* the current line writes a layout (a word TP<n>) */
    for (const char *p = text; *p;) {
        if (p == text || p[-1] == '\n') {
            size_t len = strcspn(p, "\n");
            layout_line = false;
            for (const char *q = p; q < p + len; q++)
                if ((q == p || q[-1] == ' ') && q[0] == 'T' && q[1] == 'P' &&
                    isdigit((unsigned char)q[2]))
                    layout_line = true;
        }
        size_t n = strcspn(p, " \n\t,;");
        if (n && legacy_word(p, n)) {
            fprintf(stderr, "\n  %s: old notation '%.*s'", name, (int)n, p);
            bad++;
        }
        /* a layout's terms on a line that writes one; the statistics
         * (P50, P90, MFU) wherever they stand */
        const glossary_entry_t *e = n ? glossary_find(p, n) : NULL;
        if (e && !layout_line && !statistic(e))
            e = NULL;
        if (e) {
            char def[64];
            snprintf(def, sizeof def, "%s: ", e->term);
            if (!strstr(flat, def)) {
                fprintf(stderr, "\n  %s: '%.*s' without a legend entry '%s'", name, (int)n, p, def);
                bad++;
            }
        }
        p += n;
        p += strspn(p, " \n\t,;");
    }
    if (strstr(text, "MFU") && !strstr(text, "bf16 dense peak")) {
        fprintf(stderr, "\n  %s: MFU without its basis (bf16 dense peak)", name);
        bad++;
    }
    return bad;
}

static void test_golden_outputs_read_at_a_glance(void)
{
    FILE *f = fopen("tests/golden/cases.txt", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[2048];
    int checked = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strchr(line, '|'))
            continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(line, " |"), line);
        const char *args = strchr(line, '|') + 1;
        if (strstr(args, "--json") || strstr(args, "--csv"))
            continue; /* machine-readable: full precision */
        char path[300];
        snprintf(path, sizeof path, "tests/golden/out/%s.out", name);
        char *text = slurp(path);
        CU_ASSERT_PTR_NOT_NULL(text);
        if (!text)
            continue;
        /* the text with line breaks and runs of spaces as one space: a
         * legend wrapped over lines reads as one */
        char *flat = strdup(text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(flat);
        size_t k = 0;
        for (const char *p = text; *p; p++)
            if (!isspace((unsigned char)*p) || (k > 0 && flat[k - 1] != ' '))
                flat[k++] = isspace((unsigned char)*p) ? ' ' : *p;
        flat[k] = '\0';
        bad += check_output(name, text, flat);
        free(flat);
        checked++;
        free(text);
    }
    fclose(f);
    CU_ASSERT(checked >= 15);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The plan's recommendation is a short block, not one long line: every
 * line of it in the plan goldens fits a terminal (120 columns), and it says
 * what to reserve, the layout, what to measure and what to check first. */
static void test_recommendation_is_a_block(void)
{
    const char *names[] = {"plan-8b", "plan-405b-131k", "plan-deepseek-v3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "tests/golden/out/%s.out", names[i]);
        char *text = slurp(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(text);
        const char *rec = strstr(text, "\nRecommendation\n");
        CU_ASSERT_PTR_NOT_NULL_FATAL(rec);
        const char *end = strstr(rec + 1, "\n\n");
        CU_ASSERT_PTR_NOT_NULL_FATAL(end);
        for (const char *p = rec + 1; p < end;) {
            size_t n = strcspn(p, "\n");
            if (n > 120)
                fprintf(stderr, "\n  %s: a recommendation line of %zu characters\n", names[i], n);
            CU_ASSERT(n <= 120);
            p += n + 1;
        }
        const char *parts[] = {"  reserve ", "  layout ", "  flags ", "measure before each doubling",
                               "  check first "};
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
            if (!strstr(rec, parts[k]) || strstr(rec, parts[k]) > end) {
                fprintf(stderr, "\n  %s: no '%s' in the recommendation\n", names[i], parts[k]);
                CU_FAIL("a part of the recommendation is missing");
            }
        free(text);
    }
}

/* The JSON documents keep full precision, but the sentences they carry for
 * people (plan's "recommendation") write layouts in the same notation as
 * the tables: no word of an old one in any golden --json document. */
static void test_json_sentences_one_notation(void)
{
    FILE *f = fopen("tests/golden/cases.txt", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char line[2048];
    int checked = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strchr(line, '|') || !strstr(line, "--json"))
            continue;
        char name[128], path[300];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(line, " |"), line);
        snprintf(path, sizeof path, "tests/golden/out/%s.out", name);
        char *text = slurp(path);
        CU_ASSERT_PTR_NOT_NULL(text);
        for (const char *r = text ? strstr(text, "\"recommendation\":") : NULL; r;
             r = strstr(r + 1, "\"recommendation\":")) {
            const char *p = r + strlen("\"recommendation\":");
            const char *end = strchr(p, '\n') ? strchr(p, '\n') : p + strlen(p);
            while (p < end) {
                size_t n = strcspn(p, " \n\t,;");
                if (n && p + n <= end && legacy_word(p, n)) {
                    fprintf(stderr, "\n  %s: old notation '%.*s' in the recommendation", name,
                            (int)n, p);
                    bad++;
                }
                p += n;
                p += strspn(p, " \t,;");
            }
            checked++;
        }
        free(text);
    }
    fclose(f);
    CU_ASSERT(checked >= 3);
    CU_ASSERT_EQUAL(bad, 0);
}

TEST_SUITE(suite_glossary, "glossary", TEST(test_notation), TEST(test_json_round_trip),
           TEST(test_flags), TEST(test_glossary_complete),
           TEST(test_golden_outputs_read_at_a_glance), TEST(test_recommendation_is_a_block),
           TEST(test_json_sentences_one_notation));
