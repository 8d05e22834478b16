/* Reports: the HTML page, its plots and its numbers, end to end through
 * the real binary.
 *
 * - every number shown in a table equals the number in result.json at the
 *   JSON path the cell names (exactly, and as shown after rounding);
 * - every plot exists as PNG and SVG, is not empty, and has axis labels
 *   with units in its script and in the drawn SVG;
 * - the page renders in headless Chromium to a screenshot that is not
 *   blank; at 1400 and 800 px its own script (reports/html.c) finds every
 *   plot drawn, the summary and the glossary on screen, and no two plot
 *   labels overlapping; every file it links exists;
 * - a report rebuilt from the saved result.json is the same page;
 * - bad results fail with one line naming the file and the key.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/csv.h"
#include "reports/csvdoc.h"
#include "reports/csvout.h"
#include "tests/testing.h"

/* ------------------------------------------------------------ helpers */

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static char *path_in(const char *dir, const char *name)
{
    static char buf[4][1024];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", dir, name);
    return b;
}

/* Follow "ladder[3].breakdown_s.compute" from root; NULL if absent. */
static const cJSON *json_at(const cJSON *root, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *node = root;
    char *save = NULL;
    for (char *seg = strtok_r(buf, ".", &save); seg && node; seg = strtok_r(NULL, ".", &save)) {
        char *br = strchr(seg, '[');
        if (br)
            *br = '\0';
        if (*seg)
            node = cJSON_GetObjectItemCaseSensitive(node, seg);
        while (br && node) {
            int idx = atoi(br + 1);
            node = cJSON_GetArrayItem(node, idx);
            br = strchr(br + 1, '[');
        }
    }
    return node;
}

static char *attr(const char *tag, const char *name, char *out, size_t cap)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *p = strstr(tag, key);
    const char *end = strchr(tag, '>');
    if (!p || (end && p > end))
        return NULL;
    p += strlen(key);
    size_t n = strcspn(p, "\"");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

/* Check every data-key cell of the page against the result; returns how
 * many cells were checked. */
static int check_cells(const char *html, const cJSON *result)
{
    int cells = 0;
    for (const char *p = strstr(html, "<td data-key=\""); p; p = strstr(p + 1, "<td data-key=\"")) {
        char key[256], value[64], scale_s[64], shown[64];
        CU_ASSERT_PTR_NOT_NULL_FATAL(attr(p, "data-key", key, sizeof key));
        CU_ASSERT_PTR_NOT_NULL_FATAL(attr(p, "data-value", value, sizeof value));
        double scale = attr(p, "data-scale", scale_s, sizeof scale_s) ? strtod(scale_s, NULL) : 1;
        const char *text = strchr(p, '>') + 1;
        size_t n = strcspn(text, "<");
        CU_ASSERT_FATAL(n < sizeof shown);
        memcpy(shown, text, n);
        shown[n] = '\0';
        /* only fractions are shown scaled, as percentages */
        const char *leaf = strrchr(key, '.') ? strrchr(key, '.') + 1 : key;
        static const char *const fractions[] = {"mfu", "hfu", "scaling_efficiency", "goodput",
                                                "error", "step_time_error",
                                                "predicted_efficiency", "measured_efficiency",
                                                "shortfall"};
        double want_scale = 1;
        for (size_t f = 0; f < sizeof fractions / sizeof fractions[0]; f++)
            if (strcmp(leaf, fractions[f]) == 0)
                want_scale = 100;
        if (scale != want_scale) {
            fprintf(stderr, "\n  %s shown x %g, expected x %g\n", key, scale, want_scale);
            CU_FAIL("a number is shown at the wrong scale");
        }
        const cJSON *v = json_at(result, key);
        if (!v) {
            fprintf(stderr, "\n  cell %s is not in result.json\n", key);
            CU_FAIL("a cell names a key that is not in the result");
            continue;
        }
        cells++;
        if (strcmp(value, "null") == 0) {
            CU_ASSERT_TRUE(cJSON_IsNull(v));
            CU_ASSERT_STRING_EQUAL(shown, "-");
            continue;
        }
        CU_ASSERT_TRUE_FATAL(cJSON_IsNumber(v));
        /* the exact value */
        if (strtod(value, NULL) != v->valuedouble) {
            fprintf(stderr, "\n  %s: page %s, result %.17g\n", key, value, v->valuedouble);
            CU_FAIL("a number on the page differs from the result");
        }
        /* and the shown text is that value, rounded as printed */
        char digits[64];
        size_t k = 0;
        for (const char *c = shown; *c && k + 1 < sizeof digits; c++)
            if (*c != ',' && *c != '%' && *c != '+' && *c != '$')
                digits[k++] = *c;
        digits[k] = '\0';
        char *end;
        double s = strtod(digits, &end);
        CU_ASSERT_EQUAL(*end, '\0');
        double expect = v->valuedouble * scale, tol;
        const char *dot = strchr(digits, '.'), *e = strpbrk(digits, "eE");
        if (e)
            tol = 1e-3 * fabs(expect);
        else
            tol = 0.5 * pow(10, -(dot ? (double)strlen(dot + 1) : 0)) * (1 + 1e-9) + 1e-12;
        if (fabs(s - expect) > tol) {
            fprintf(stderr, "\n  %s shown as '%s', value x %g = %.17g\n", key, shown, scale, expect);
            CU_FAIL("a shown number is not the result's number");
        }
    }
    return cells;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Run a command that writes a report into a fresh directory dir. */
static int make_report(const char *args, char *dir, size_t cap, char **out)
{
    if (make_temp_dir(dir, cap) != 0)
        return -1;
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --report %s/r", args, dir);
    char *o = NULL, *e = NULL;
    int rc = run_cli(cmd, &o, &e);
    if (rc != 0)
        fprintf(stderr, "\n$ scaleplan %s -> %d\nstderr: %s\n", cmd, rc, e ? e : "");
    free(e);
    if (out)
        *out = o;
    else
        free(o);
    strncat(dir, "/r", cap - strlen(dir) - 1);
    return rc;
}

/* The page against its result.json; returns the number of cells. */
static int check_page(const char *dir)
{
    char *html = slurp(path_in(dir, "index.html"));
    char *json = slurp(path_in(dir, "result.json"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    cJSON *result = cJSON_Parse(json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(result);
    int cells = check_cells(html, result);
    /* self-contained: no scripts, styles or images from elsewhere */
    CU_ASSERT_PTR_NULL(strstr(html, "http://"));
    CU_ASSERT_PTR_NULL(strstr(html, "https://"));
    CU_ASSERT_PTR_NULL(strstr(html, "<link"));
    /* every referenced image and linked plot is beside the page */
    for (const char *p = strstr(html, "<img "); p; p = strstr(p + 1, "<img ")) {
        char src[256];
        attr(p, "src", src, sizeof src);
        CU_ASSERT(file_size(path_in(dir, src)) > 0);
    }
    for (const char *p = strstr(html, "<a href=\""); p; p = strstr(p + 1, "<a href=\"")) {
        char href[256];
        attr(p, "href", href, sizeof href);
        CU_ASSERT(file_size(path_in(dir, href)) > 0);
    }
    cJSON_Delete(result);
    free(html);
    free(json);
    return cells;
}

typedef struct {
    const char *name;
    const char *units[3]; /* each must appear in an axis label */
} plot_spec_t;

/* The label text of "set NAME 'text'" in a gnuplot script. */
static bool gp_label(const char *gp, const char *name, char *out, size_t cap)
{
    char key[32];
    snprintf(key, sizeof key, "set %s '", name);
    const char *p = strstr(gp, key);
    if (!p)
        return false;
    p += strlen(key);
    size_t n = strcspn(p, "'");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

static void check_plot(const char *dir, const plot_spec_t *spec)
{
    char name[128];
    snprintf(name, sizeof name, "%s.png", spec->name);
    long png = file_size(path_in(dir, name));
    snprintf(name, sizeof name, "%s.svg", spec->name);
    char *svg = slurp(path_in(dir, name));
    snprintf(name, sizeof name, "%s.gp", spec->name);
    char *gp = slurp(path_in(dir, name));
    if (png <= 1000 || !svg || !gp)
        fprintf(stderr, "\n  plot %s: png %ld bytes, svg %s, gp %s\n", spec->name, png,
                svg ? "yes" : "missing", gp ? "yes" : "missing");
    CU_ASSERT(png > 1000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(svg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gp);
    CU_ASSERT(strlen(svg) > 1000);
    CU_ASSERT_PTR_NOT_NULL(strstr(svg, "<svg"));
    /* a PNG, by its signature */
    FILE *f = fopen(path_in(dir, (snprintf(name, sizeof name, "%s.png", spec->name), name)), "rb");
    unsigned char sig[8] = {0};
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fread(sig, 1, 8, f), 8);
    fclose(f);
    CU_ASSERT_EQUAL(png_sig_cmp(sig, 0, 8), 0);
    /* axis labels in the script, drawn in the SVG, with their units */
    char labels[1024] = "";
    const char *axes[] = {"xlabel", "ylabel", "y2label"};
    int found = 0;
    for (int a = 0; a < 3; a++) {
        char text[256];
        if (!gp_label(gp, axes[a], text, sizeof text))
            continue;
        found++;
        CU_ASSERT(strlen(text) > 2);
        if (!strstr(svg, text)) {
            fprintf(stderr, "\n  plot %s: label '%s' is not drawn in the SVG\n", spec->name, text);
            CU_FAIL("axis label missing from the SVG");
        }
        strncat(labels, text, sizeof labels - strlen(labels) - 2);
        strcat(labels, "|");
    }
    CU_ASSERT(found >= 2);
    for (int u = 0; u < 3 && spec->units[u]; u++)
        if (!strstr(labels, spec->units[u])) {
            fprintf(stderr, "\n  plot %s: no '%s' in its axis labels (%s)\n", spec->name,
                    spec->units[u], labels);
            CU_FAIL("axis label without its unit");
        }
    free(svg);
    free(gp);
}

/* The first exponent ("2e+12") in the text a person reads on the page:
 * outside tags, and outside <style>, <script> and the plots' <svg> (drawn
 * coordinates, not text); NULL when there is none. */
static const char *visible_exponent(const char *html)
{
    static const char *const skip[][2] = {{"<style", "</style>"}, {"<script", "</script>"},
                                           {"<svg", "</svg>"}};
    for (const char *p = html; *p; p++) {
        bool skipped = false;
        for (size_t k = 0; k < 3 && !skipped; k++)
            if (strncmp(p, skip[k][0], strlen(skip[k][0])) == 0) {
                const char *end = strstr(p, skip[k][1]);
                if (!end)
                    return NULL;
                p = end + strlen(skip[k][1]) - 1;
                skipped = true;
            }
        if (skipped)
            continue;
        if (*p == '<') {
            const char *end = strchr(p, '>');
            if (!end)
                return NULL;
            p = end;
            continue;
        }
        if (p[0] >= '0' && p[0] <= '9' && (p[1] == 'e' || p[1] == 'E') &&
            (p[2] == '+' || p[2] == '-') && p[3] >= '0' && p[3] <= '9')
            return p;
    }
    return NULL;
}

static const char *PLAN_ARGS = "plan --model llama3-8b --tokens 300B --gpu h100-sxm --min-gpus 8 "
                               "--max-gpus 128 --trials 300 --what-if price=3.10";

/* ------------------------------------------------------------ tests */

static void test_plan_report_numbers_and_plots(void)
{
    char dir[512];
    char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(make_report(PLAN_ARGS, dir, sizeof dir, &out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "index.html (6 plots)"));
    free(out);
    int cells = check_page(dir);
    /* 5 rungs x 10 numbers, the facts, the what-if */
    CU_ASSERT(cells >= 50);
    char *html = slurp(path_in(dir, "index.html"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    /* the recommendation comes first, then the ladder, then the plots */
    /* the summary first (the recommendation as facts), then the ladder, the
     * plots (inline SVG), the glossary last */
    const char *sum = strstr(html, "<section id=\"summary\""), *rec = strstr(html, "check first:"),
               *lad = strstr(html, "Scale ladder</h2>"), *plots = strstr(html, "<figure"),
               *glo = strstr(html, "<section id=\"glossary\"");
    CU_ASSERT_TRUE(sum && rec && lad && plots && glo && sum < rec && rec < lad && lad < plots &&
                   plots < glo);
    CU_ASSERT_EQUAL(count_of(html, "<figure id=\"fig-"), 6);
    CU_ASSERT_EQUAL(count_of(html, "<svg"), 6);
    /* issue 42: framework and precision columns, MFU with its basis, the
     * one layout notation (as result.json's layout_text), no exponent */
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "<th>framework</th><th>precision</th>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "of bf16 dense peak"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "mb1 gb"));
    CU_ASSERT_PTR_NULL(strstr(html, "recompute="));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "--num-virtual-stages-per-pipeline-rank"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "@media print"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "prefers-color-scheme:dark"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "table class=\"sortable\""));
    const char *expo = visible_exponent(html);
    if (expo)
        fprintf(stderr, "\n  an exponent on the page: %.40s\n", expo);
    CU_ASSERT_PTR_NULL(expo);
    free(html);
    static const plot_spec_t plots_spec[] = {
        {"ladder", {"GPUs", "tokens/s", "(%)"}},
        {"breakdown", {"GPUs", "GPU-seconds", NULL}},
        {"memory", {"GPUs", "GiB", NULL}},
        {"pareto", {"days", "USD", NULL}},
        {"goodput", {"minutes", "(%)", NULL}},
        {"timeline", {"(s)", "stage", NULL}},
    };
    for (size_t i = 0; i < sizeof plots_spec / sizeof plots_spec[0]; i++)
        check_plot(dir, &plots_spec[i]);
    /* the data behind the plots */
    char *csv = slurp(path_in(dir, "ladder.csv"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(csv);
    CU_ASSERT_EQUAL(count_lines(csv), 1 + 5);
    free(csv);
    CU_ASSERT(file_size(path_in(dir, "pareto.csv")) > 0);
    CU_ASSERT(file_size(path_in(dir, "timeline.csv")) > 0);
    /* the same page again from the saved result */
    char cmd[1200], *again_out = NULL;
    snprintf(cmd, sizeof cmd, "report %s/result.json --out %s/again", dir, dir);
    CU_ASSERT_EQUAL(run_cli(cmd, &again_out, NULL), 0);
    free(again_out);
    char *a = slurp(path_in(dir, "index.html"));
    char again[1100];
    snprintf(again, sizeof again, "%s/again/index.html", dir);
    char *b = slurp(again);
    CU_ASSERT_TRUE(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    char root[512];
    snprintf(root, sizeof root, "%.*s", (int)(strlen(dir) - 2), dir);
    remove_tree(root);
}

static void test_sim_and_reliability_reports(void)
{
    char dir[512];
    CU_ASSERT_EQUAL_FATAL(make_report("sim --model llama3-70b --gpu h100-sxm --gpus 64 --tp 8 "
                                      "--pp 4 --vpp 5 --global-batch 64 --sequence-parallel "
                                      "--recompute selective --distributed-optimizer",
                                      dir, sizeof dir, NULL),
                          0);
    CU_ASSERT(check_page(dir) >= 10 + 6);
    static const plot_spec_t sim_plots[] = {
        {"breakdown", {"seconds", NULL, NULL}},
        {"memory", {"GiB", NULL, NULL}},
        {"timeline", {"(s)", "stage", NULL}},
    };
    for (size_t i = 0; i < sizeof sim_plots / sizeof sim_plots[0]; i++)
        check_plot(dir, &sim_plots[i]);
    char root[512];
    snprintf(root, sizeof root, "%.*s", (int)(strlen(dir) - 2), dir);
    remove_tree(root);

    CU_ASSERT_EQUAL_FATAL(make_report("reliability --model llama3-70b --gpu h100-sxm --gpus 1024 "
                                      "--tokens 1T --trials 300",
                                      dir, sizeof dir, NULL),
                          0);
    CU_ASSERT(check_page(dir) >= 9 + 5);
    static const plot_spec_t rel_plots[] = {
        {"causes", {"interruptions", NULL, NULL}},
        {"goodput", {"minutes", "(%)", NULL}},
    };
    for (size_t i = 0; i < sizeof rel_plots / sizeof rel_plots[0]; i++)
        check_plot(dir, &rel_plots[i]);
    snprintf(root, sizeof root, "%.*s", (int)(strlen(dir) - 2), dir);
    remove_tree(root);
}

/* The first browser found: $CHROMIUM, chromium, chromium-browser. */
static const char *find_browser(void)
{
    static char found[512];
    const char *env = getenv("CHROMIUM");
    if (env && access(env, X_OK) == 0)
        return env;
    const char *names[] = {"chromium", "chromium-browser", "google-chrome"};
    const char *path = getenv("PATH");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        for (const char *p = path; p && *p;) {
            size_t n = strcspn(p, ":");
            snprintf(found, sizeof found, "%.*s/%s", (int)n, p, names[i]);
            if (access(found, X_OK) == 0)
                return found;
            p += n;
            if (*p == ':')
                p++;
        }
    return NULL;
}

/* Share of pixels that are not near-white, and distinct colors (coarse). */
static int screenshot_stats(const char *path, double *ink, int *colors)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        return -1;
    img.format = PNG_FORMAT_RGB;
    size_t size = PNG_IMAGE_SIZE(img);
    unsigned char *px = malloc(size);
    if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
        free(px);
        png_image_free(&img);
        return -1;
    }
    static unsigned char seen[4096];
    memset(seen, 0, sizeof seen);
    long dark = 0, total = (long)img.width * img.height;
    *colors = 0;
    for (long i = 0; i < total; i++) {
        unsigned char *c = px + 3 * i;
        if (c[0] < 235 || c[1] < 235 || c[2] < 235)
            dark++;
        int q = (c[0] >> 4) << 8 | (c[1] >> 4) << 4 | (c[2] >> 4);
        if (!seen[q]) {
            seen[q] = 1;
            (*colors)++;
        }
    }
    *ink = (double)dark / (double)total;
    free(px);
    return 0;
}

static const char *BROWSER_FLAGS = "--headless --no-sandbox --disable-gpu --no-first-run "
                                    "--disable-background-networking --disable-component-update "
                                    "--disable-sync --virtual-time-budget=10000";

/* Load the page at a window width and check what its own script wrote into
 * the DOM (reports/html.c): every figure drawn with a size, the summary and
 * the glossary on screen, and no two plot labels overlapping (the pairs are
 * printed when some do). */
static void check_layout_at(const char *browser, const char *dir, int width)
{
    char profile[600], dom[600], cmd[4096];
    snprintf(profile, sizeof profile, "%s/../profile", dir);
    snprintf(dom, sizeof dom, "%s/../dom-%d.html", dir, width);
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' %s --user-data-dir='%s' --window-size=%d,3000 --dump-dom "
             "'file://%s/index.html' >'%s' 2>/dev/null",
             browser, BROWSER_FLAGS, profile, width, dir, dom);
    CU_ASSERT_EQUAL(system(cmd), 0);
    char *html = slurp(dom);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    const char *body = strstr(html, "<body");
    CU_ASSERT_PTR_NOT_NULL_FATAL(body);
    char figures[16] = "", visible[16] = "", labels[16] = "", overlaps[16] = "", secs[128] = "",
         shown_width[16] = "";
    attr(body, "data-figures", figures, sizeof figures);
    attr(body, "data-figures-visible", visible, sizeof visible);
    attr(body, "data-labels", labels, sizeof labels);
    attr(body, "data-label-overlaps", overlaps, sizeof overlaps);
    attr(body, "data-sections-visible", secs, sizeof secs);
    attr(body, "data-width", shown_width, sizeof shown_width);
    CU_ASSERT_EQUAL(atoi(shown_width), width);
    CU_ASSERT_STRING_EQUAL(figures, "6");
    CU_ASSERT_STRING_EQUAL(visible, "6");
    CU_ASSERT(atoi(labels) >= 60); /* titles, axes, ticks, keys: the labels were found */
    CU_ASSERT_PTR_NOT_NULL(strstr(secs, "summary"));
    CU_ASSERT_PTR_NOT_NULL(strstr(secs, "glossary"));
    if (strcmp(overlaps, "0") != 0) {
        const char *pre = strstr(body, "id=\"layout-check\"");
        fprintf(stderr, "\n  at %d px, %s overlapping plot labels:\n%.*s\n", width, overlaps,
                pre ? (int)strcspn(pre, "<") : 0, pre ? pre : "");
        CU_FAIL("plot labels overlap");
    }
    free(html);
}

static void test_report_renders_in_chromium(void)
{
    const char *browser = find_browser();
    if (!browser) {
        fprintf(stderr, "\n  SKIPPED: the headless-browser check needs chromium, which is not "
                        "installed and could not be (make deps-browser installs it)\n");
        return;
    }
    char dir[512];
    CU_ASSERT_EQUAL_FATAL(make_report(PLAN_ARGS, dir, sizeof dir, NULL), 0);
    char shot[600], profile[600], cmd[4096];
    snprintf(shot, sizeof shot, "%s/../shot.png", dir);
    snprintf(profile, sizeof profile, "%s/../profile", dir);
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' %s --user-data-dir='%s' --window-size=1280,3000 "
             "--screenshot='%s' 'file://%s/index.html' >/dev/null 2>&1",
             browser, BROWSER_FLAGS, profile, shot, dir);
    int rc = system(cmd);
    CU_ASSERT_EQUAL(rc, 0);
    double ink = 0;
    int colors = 0;
    CU_ASSERT_EQUAL_FATAL(screenshot_stats(shot, &ink, &colors), 0);
    /* a rendered page of tables and plots: plenty of ink, many colors */
    if (ink < 0.03 || colors < 32)
        fprintf(stderr, "\n  screenshot: %.1f%% ink, %d colors\n", 100 * ink, colors);
    CU_ASSERT(ink >= 0.03);
    CU_ASSERT(colors >= 32);
    /* the page's own check, on a wide screen and a narrow one */
    check_layout_at(browser, dir, 1400);
    check_layout_at(browser, dir, 800);
    char root[512];
    snprintf(root, sizeof root, "%.*s", (int)(strlen(dir) - 2), dir);
    remove_tree(root);
}

static void test_report_without_gnuplot(void)
{
    setenv("SCALEPLAN_GNUPLOT", "/nonexistent/gnuplot", 1);
    char dir[512];
    char *out = NULL;
    int rc = make_report("sim --model llama3-8b --gpu h100-sxm --gpus 8 --tp 1 --allow-oom", dir, sizeof dir, &out);
    unsetenv("SCALEPLAN_GNUPLOT");
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "apt-get install gnuplot-nox"));
    free(out);
    char *html = slurp(path_in(dir, "index.html"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "gnuplot was not found"));
    CU_ASSERT_PTR_NULL(strstr(html, "<img"));
    CU_ASSERT(count_of(html, "data-key=") >= 10);
    free(html);
    CU_ASSERT(file_size(path_in(dir, "breakdown.csv")) > 0);
    CU_ASSERT(file_size(path_in(dir, "breakdown.png")) < 0);
    char root[512];
    snprintf(root, sizeof root, "%.*s", (int)(strlen(dir) - 2), dir);
    remove_tree(root);
}

static void test_report_bad_results(void)
{
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char bad[512];
    snprintf(bad, sizeof bad, "%s/damaged.json", dir);
    FILE *f = fopen(bad, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"recommendation\": \"x\", \"ladder\": [{\"gpus\": 8, \"feasible\": true}]}\n", f);
    fclose(f);
    const struct {
        const char *args, *needle;
    } cases[] = {
        {"report", "exactly one result file"},
        {"report /no/such/result.json --out /tmp/x", "/no/such/result.json"},
        {"report tests/fixtures/configs/malformed.json --out /tmp/x", "malformed JSON"},
        {"report models/catalog/llama3-8b.json --out /tmp/x", "not a scaleplan result"},
        {NULL, "ladder[0].step_time_s"},
        {"reliability --gpu h100-sxm --gpus 64 --days 1 --ladder --report /tmp/x", "--ladder"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024], *err = NULL;
        if (cases[i].args)
            snprintf(args, sizeof args, "%s", cases[i].args);
        else
            snprintf(args, sizeof args, "report %s --out %s/out", bad, dir);
        CU_ASSERT_EQUAL(run_cli(args, NULL, &err), 2);
        if (!err || !strstr(err, cases[i].needle) || count_lines(err) != 1) {
            fprintf(stderr, "\n$ scaleplan %s\nstderr: %s(expected '%s')\n", args, err ? err : "",
                    cases[i].needle);
            CU_FAIL("bad result not reported in one line naming what is wrong");
        }
        free(err);
    }
    remove_tree(dir);
}

/* --csv prints the same numbers as --json (tests/test_outputs.c checks
 * every command): key,value rows of every leaf for sim. */
static void test_csv_output(void)
{
    const char *sim = "sim --model llama3-8b --gpu h100-sxm --gpus 16 --tp 2 --allow-oom";
    char args[256], *csv = NULL, *json = NULL;
    snprintf(args, sizeof args, "%s --csv", sim);
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &csv, NULL), 0);
    snprintf(args, sizeof args, "%s --json", sim);
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &json, NULL), 0);
    cJSON *j = cJSON_Parse(json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    const cJSON *bd = cJSON_GetObjectItem(j, "breakdown_s");
    CU_ASSERT_EQUAL(strncmp(csv, "key,value\n", 10), 0);
    int rows = 0;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char key[64];
        double v;
        if (strncmp(line + 1, "breakdown_s.", 12) != 0)
            continue;
        CU_ASSERT_EQUAL_FATAL(sscanf(line + 13, "%63[^,],%lf", key, &v), 2);
        const cJSON *want = cJSON_GetObjectItem(bd, key);
        CU_ASSERT_PTR_NOT_NULL_FATAL(want);
        CHECK_REL(v, want->valuedouble, 1e-14);
        rows++;
    }
    CU_ASSERT_EQUAL(rows, cJSON_GetArraySize(bd));
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "\nstep_time_s,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "\nmfu,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "\nmemory_gib.total,"));
    cJSON_Delete(j);
    free(csv);
    free(json);
    /* the plan's ladder: one row per rung, nested layout flattened */
    CU_ASSERT_EQUAL_FATAL(run_cli("plan --model llama3-8b --tokens 100B --gpu h100-sxm "
                                  "--min-gpus 8 --max-gpus 32 --trials 100 --csv",
                                  &csv, NULL),
                          0);
    CU_ASSERT_EQUAL(count_lines(csv), 1 + 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(csv, "ladder.gpus,ladder.feasible,ladder.layout.tp,ladder.layout.pp"));
    free(csv);
}

/* validate --log with a doubling check: the runs' and the rungs' numbers on
 * the page are the result's, and the ladder plot carries the measured
 * series and the next rung (the Megatron-format logs of three rungs are
 * fixture-like text with fixed step times; only the page is checked). */
static void test_validate_log_report(void)
{
    char tmp[512], paths[3][600];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmp, sizeof tmp), 0);
    static const int gpus[3] = {64, 128, 256};
    static const double step_s[3] = {7.72, 3.87, 2.6}; /* the last about 30% slow */
    for (int i = 0; i < 3; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/r%d.log", tmp, gpus[i]);
        FILE *f = fopen(paths[i], "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f, "using world size: %d, data-parallel size: %d, context-parallel size: 1 "
                   "tensor-model-parallel size: 1, pipeline-model-parallel size: 1 \n",
                gpus[i], gpus[i]);
        for (int it = 1; it <= 6; it++)
            fprintf(f, " iteration %8d/%8d | elapsed time per iteration (ms): %.1f | global batch "
                       "size: %5d | lm loss: 9.000000E+00 | number of skipped iterations:   0 |\n",
                    it, 6, 1000 * step_s[i] * (it == 1 ? 3 : 1), 512);
        fclose(f);
    }
    char args[2400], dir[600];
    snprintf(args, sizeof args,
             "validate --log %s --log %s --log %s --model llama3-8b --gpu h100-sxm --seq-len 8192 "
             "--distributed-optimizer",
             paths[0], paths[1], paths[2]);
    snprintf(dir, sizeof dir, "%s", tmp);
    char *out = NULL;
    char cmd[3200];
    snprintf(cmd, sizeof cmd, "%s --report %s/r", args, tmp);
    CU_ASSERT_EQUAL_FATAL(run_cli(cmd, &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out ? out : "", "index.html (1 plot)"));
    free(out);
    strncat(dir, "/r", sizeof dir - strlen(dir) - 1);
    int cells = check_page(dir);
    /* 3 runs x 4 quantities x 4 numbers, 3 rungs x 9, the next rung's 3 */
    CU_ASSERT(cells >= 48 + 27 + 3);
    char *html = slurp(path_in(dir, "index.html"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "Doubling check</h2>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "<tr class=\"flag\">"));
    free(html);
    static const plot_spec_t ladder = {"ladder", {"GPUs", "tokens/s", "(%)"}};
    check_plot(dir, &ladder);
    char *gp = slurp(path_in(dir, "ladder.gp"));
    CU_ASSERT_TRUE(gp && strstr(gp, "'measured.csv'"));
    CU_ASSERT_TRUE(gp && strstr(gp, "'next.csv'"));
    free(gp);
    char *m = slurp(path_in(dir, "measured.csv"));
    CU_ASSERT_EQUAL(m ? count_lines(m) : 0, 1 + 3);
    free(m);
    remove_tree(tmp);
}

/* Issue 17 row 1: with stdout in a file (fully buffered), the text before
 * the report comes out once, not once more per gnuplot child. */
static void test_report_text_printed_once(void)
{
    static const char *cmds[] = {
        "sim --model llama3-8b --gpu h100-sxm --gpus 8 --tp 1 --allow-oom",
        "reliability --gpu h100-sxm --gpus 64 --days 3 --checkpoint-size 100GB --trials 50",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char dir[512];
        char *out = NULL;
        CU_ASSERT_EQUAL_FATAL(make_report(cmds[i], dir, sizeof dir, &out), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        /* gnuplot ran (a plot exists), so children were forked */
        CU_ASSERT(file_size(path_in(dir, i == 0 ? "breakdown.png" : "goodput.png")) > 0);
        char first[256];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(out, "\n"), out);
        CU_ASSERT(strlen(first) > 10);
        if (count_of(out, first) != 1)
            fprintf(stderr, "\n$ scaleplan %s: '%s' printed %d times\n", cmds[i], first,
                    count_of(out, first));
        CU_ASSERT_EQUAL(count_of(out, first), 1);
        free(out);
        char root[512];
        snprintf(root, sizeof root, "%.*s", (int)(strlen(dir) - 2), dir);
        remove_tree(root);
    }
}

/* Issue 17 row 14: strings of a result that hold commas, quotes or
 * newlines stay one cell in every CSV the report writes (RFC 4180): the
 * files read back with as many rows as the result has entries and the
 * same text. */
static void test_csv_cells_quoted(void)
{
    char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(run_cli("plan --model llama3-8b --tokens 100B --gpu h100-sxm "
                                  "--min-gpus 8 --max-gpus 16 --trials 20 --json",
                                  &out, NULL),
                          0);
    cJSON *r = cJSON_Parse(out ? out : "");
    free(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    static const char *evil = "a,b \"c\"\nd,e\r\nf";
    cJSON *ladder = cJSON_GetObjectItem(r, "ladder"), *e;
    int rungs = cJSON_GetArraySize(ladder);
    cJSON_ArrayForEach(e, ladder)
        cJSON_ReplaceItemInObject(e, "main_loss", cJSON_CreateString(evil));
    char dir[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(dir, sizeof dir), 0);
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/evil.json", dir);
    char *text = cJSON_Print(r);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
    free(text);
    snprintf(args, sizeof args, "report %s --out %s/r", path, dir);
    CU_ASSERT_EQUAL(run_cli(args, NULL, NULL), 0);
    static const char *files[] = {"ladder.csv", "ladder_plot.csv"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char csv_path[600];
        snprintf(csv_path, sizeof csv_path, "%s/r/%s", dir, files[i]);
        csv_t *c = NULL;
        err_t err;
        CU_ASSERT_EQUAL_FATAL(csv_load(csv_path, &c, &err), 0);
        CU_ASSERT_EQUAL(csv_rows(c), rungs);
        /* the file gnuplot reads has the line breaks as spaces and the
         * quotes as apostrophes (gnuplot has no escape for a quote) */
        const char *want = i == 0 ? evil : "a,b 'c' d,e  f";
        for (int k = 0; k < csv_rows(c); k++) {
            const char *cell = csv_get(c, k, "main_loss");
            CU_ASSERT_TRUE(cell && strcmp(cell, want) == 0);
        }
        csv_free(c);
    }
    /* --csv of the same kind of string */
    csv_t *c = NULL;
    err_t err;
    snprintf(path, sizeof path, "%s/cell.csv", dir);
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    cJSON *rows = cJSON_CreateArray();
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "name", evil);
    cJSON_AddNumberToObject(row, "x", 1);
    cJSON_AddItemToArray(rows, row);
    CU_ASSERT_EQUAL(csv_from_json(f, rows, "rows", &err), 0);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(csv_load(path, &c, &err), 0);
    CU_ASSERT_EQUAL(csv_rows(c), 1);
    CU_ASSERT_STRING_EQUAL(csv_get(c, 0, "name"), evil);
    csv_free(c);
    cJSON_Delete(rows);
    cJSON_Delete(r);
    remove_tree(dir);
}

/* ------------------------------------------------------------ the folder (issue 35 item 8) */

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The entries of dir (hidden ones too), sorted and joined by ',' (heap). */
static char *listing(const char *dir)
{
    DIR *d = opendir(dir);
    char *names[256], *out = calloc(1, 8192);
    size_t n = 0;
    struct dirent *e;
    while (d && out && (e = readdir(d)) != NULL && n < 256)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (out && strlen(out) + strlen(names[i]) + 2 < 8192)
            strcat(strcat(out, i ? "," : ""), names[i]);
        free(names[i]);
    }
    return out;
}

/* Save what "scaleplan ARGS" prints as path. */
static void save_result(const char *args, const char *path)
{
    char *out = NULL;
    CU_ASSERT_EQUAL_FATAL(run_cli(args, &out, NULL), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    put(path, out);
    free(out);
}

/* "report FROM --out TO", its exit status (stdout in *out when not NULL). */
static int report_into(const char *from, const char *to, char **out, char **err)
{
    char args[1200];
    snprintf(args, sizeof args, "report %s --out %s", from, to);
    return run_cli(args, out, err);
}

static const char *SIM_RESULT = "sim --model llama3-8b --gpu h100-sxm --gpus 8 --tp 1 --allow-oom "
                                "--timeline --json";
static const char *REL_RESULT = "reliability --gpu h100-sxm --gpus 64 --days 3 "
                                "--checkpoint-size 100GB --trials 50 --sweep --json";

/* Issue 35 item 8a: a symbolic link planted in the report folder under
 * the name of a file the report writes (gnuplot's images included) is
 * replaced by the file, and what it pointed to keeps its text; a link
 * planted as the folder's manifest makes the report fail, leaving its
 * target alone. */
static void test_report_links_not_followed(void)
{
    static const char *names[] = {"index.html",    "result.json",   "breakdown.csv",
                                  "breakdown.gp",  "breakdown.png", "breakdown.svg",
                                  "memory.png",    "memory.svg",    "timeline.png",
                                  "timeline.svg"};
    enum { N = sizeof names / sizeof names[0] };
    char tmp[256], sim[300], dir[300], victim[N][320], link[N][400];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmp, sizeof tmp), 0);
    snprintf(sim, sizeof sim, "%s/sim.json", tmp);
    snprintf(dir, sizeof dir, "%s/r", tmp);
    save_result(SIM_RESULT, sim);
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
    for (int i = 0; i < N; i++) {
        snprintf(victim[i], sizeof victim[i], "%s/victim%d", tmp, i);
        snprintf(link[i], sizeof link[i], "%s/%s", dir, names[i]);
        put(victim[i], "VICTIM\n");
        CU_ASSERT_EQUAL_FATAL(symlink(victim[i], link[i]), 0);
    }
    CU_ASSERT_EQUAL(report_into(sim, dir, NULL, NULL), 0);
    for (int i = 0; i < N; i++) {
        struct stat st;
        char *v = slurp(victim[i]);
        if (!v || strcmp(v, "VICTIM\n") != 0)
            fprintf(stderr, "\n  %s was written through\n", names[i]);
        CU_ASSERT_TRUE(v && strcmp(v, "VICTIM\n") == 0);
        CU_ASSERT_TRUE(lstat(link[i], &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0);
        free(v);
    }
    char manifest[400], *err = NULL;
    snprintf(manifest, sizeof manifest, "%s/.scaleplan-report", dir);
    unlink(manifest);
    CU_ASSERT_EQUAL_FATAL(symlink(victim[0], manifest), 0);
    CU_ASSERT_EQUAL(report_into(sim, dir, NULL, &err), 1);
    CU_ASSERT_TRUE(err && strstr(err, ".scaleplan-report") && count_lines(err) == 1);
    char *v = slurp(victim[0]);
    CU_ASSERT_TRUE(v && strcmp(v, "VICTIM\n") == 0);
    free(v);
    free(err);
    remove_tree(tmp);
}

/* Issue 35 item 8b: a report of another command into a folder that holds
 * a report leaves the folder holding exactly what the new report alone
 * holds: the old report's files are gone (causes.csv, goodput.png, ...),
 * a file of the user's stays. */
static void test_report_replaces_previous(void)
{
    char tmp[256], sim[300], rel[300], alone[300], dir[300], mine[400];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmp, sizeof tmp), 0);
    snprintf(sim, sizeof sim, "%s/sim.json", tmp);
    snprintf(rel, sizeof rel, "%s/rel.json", tmp);
    snprintf(alone, sizeof alone, "%s/alone", tmp);
    snprintf(dir, sizeof dir, "%s/r", tmp);
    save_result(SIM_RESULT, sim);
    save_result(REL_RESULT, rel);
    CU_ASSERT_EQUAL_FATAL(report_into(sim, alone, NULL, NULL), 0);
    snprintf(mine, sizeof mine, "%s/notes.txt", alone);
    put(mine, "mine\n");
    CU_ASSERT_EQUAL_FATAL(report_into(rel, dir, NULL, NULL), 0);
    snprintf(mine, sizeof mine, "%s/notes.txt", dir);
    put(mine, "mine\n");
    CU_ASSERT_EQUAL_FATAL(report_into(sim, dir, NULL, NULL), 0);
    char *want = listing(alone), *got = listing(dir);
    if (!want || !got || strcmp(want, got) != 0)
        fprintf(stderr, "\n  after two reports: %s\n  one report:        %s\n", got, want);
    CU_ASSERT_TRUE(want && got && strcmp(want, got) == 0);
    free(want);
    free(got);
    remove_tree(tmp);
}

/* Start "scaleplan report FROM --out TO" in a child; its pid. */
static pid_t start_report(const char *from, const char *to)
{
    const char *bin = getenv("SCALEPLAN_BIN") ? getenv("SCALEPLAN_BIN") : "bin/scaleplan";
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0)
            _exit(126);
        execl(bin, bin, "report", from, "--out", to, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int wait_exit(pid_t pid)
{
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* Issue 35 item 8b: two reports of different commands started together
 * into one folder (three rounds, the order swapped) both succeed, and the
 * folder then holds one of them whole: exactly the files that report
 * alone has, its own result.json among them. */
static void test_concurrent_reports(void)
{
    char tmp[256], sim[300], rel[300], dir[300], ref[2][300];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmp, sizeof tmp), 0);
    snprintf(sim, sizeof sim, "%s/sim.json", tmp);
    snprintf(rel, sizeof rel, "%s/rel.json", tmp);
    snprintf(dir, sizeof dir, "%s/r", tmp);
    save_result(SIM_RESULT, sim);
    save_result(REL_RESULT, rel);
    const char *from[2] = {sim, rel};
    char *want[2];
    for (int k = 0; k < 2; k++) {
        snprintf(ref[k], sizeof ref[k], "%s/alone%d", tmp, k);
        CU_ASSERT_EQUAL_FATAL(report_into(from[k], ref[k], NULL, NULL), 0);
        want[k] = listing(ref[k]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(want[k]);
    }
    for (int round = 0; round < 3; round++) {
        pid_t a = start_report(from[round % 2], dir), b = start_report(from[1 - round % 2], dir);
        CU_ASSERT_EQUAL(wait_exit(a), 0);
        CU_ASSERT_EQUAL(wait_exit(b), 0);
        char *got = listing(dir), *result = slurp(path_in(dir, "result.json"));
        int which = got && strcmp(got, want[0]) == 0 ? 0 : got && strcmp(got, want[1]) == 0 ? 1 : -1;
        if (which < 0)
            fprintf(stderr, "\n  round %d, the folder holds: %s\n", round, got ? got : "");
        CU_ASSERT(which >= 0);
        /* the sim result has a breakdown, the reliability result none */
        if (which >= 0)
            CU_ASSERT_EQUAL(result && strstr(result, "\"breakdown_s\"") != NULL, which == 0);
        free(got);
        free(result);
    }
    free(want[0]);
    free(want[1]);
    remove_tree(tmp);
}

/* Append the text that breaks careless writers to every string of node,
 * and to the names of interruptions_by_cause (the causes' plot labels). */
static void spoil(cJSON *node, const char *evil)
{
    cJSON *e;
    cJSON_ArrayForEach(e, node)
    {
        if (cJSON_IsString(e)) {
            char *v = malloc(strlen(e->valuestring) + strlen(evil) + 1);
            CU_ASSERT_PTR_NOT_NULL_FATAL(v);
            strcat(strcpy(v, e->valuestring), evil);
            cJSON_SetValuestring(e, v);
            free(v);
        }
        if (node->string && strcmp(node->string, "interruptions_by_cause") == 0) {
            char *k = malloc(strlen(e->string) + strlen(evil) + 1);
            CU_ASSERT_PTR_NOT_NULL_FATAL(k);
            strcat(strcpy(k, e->string), evil);
            cJSON_free(e->string);
            e->string = k;
        }
        spoil(e, evil);
    }
}

/* Issue 35 item 8g: a result whose strings hold '"', ',', a line break, '<'
 * and '&' (model, GPU, layout words, timeline kinds, component names,
 * failure causes, the recommendation) makes the same report as the plain
 * one: the command succeeds with as many plots, the page has the text
 * escaped (no '<b>' of the string becomes markup) and every CSV file reads
 * back as RFC 4180 with the rows of the plain one. */
static void test_report_strings_escaped(void)
{
    static const char *evil = " \"q\", <b>x&y</b>\nz";
    const char *kinds[] = {SIM_RESULT, REL_RESULT,
                           "plan --model llama3-8b --tokens 100B --gpu h100-sxm --min-gpus 8 "
                           "--max-gpus 16 --trials 20 --details --json",
                           "validate --measured tests/fixtures/validate/sc21-gpt-1.7b-32xa100.json "
                           "--json"};
    char tmp[256];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmp, sizeof tmp), 0);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char plain[300], spoiled[300], pdir[300], sdir[300];
        snprintf(plain, sizeof plain, "%s/plain%zu.json", tmp, i);
        snprintf(spoiled, sizeof spoiled, "%s/spoiled%zu.json", tmp, i);
        snprintf(pdir, sizeof pdir, "%s/p%zu", tmp, i);
        snprintf(sdir, sizeof sdir, "%s/s%zu", tmp, i);
        save_result(kinds[i], plain);
        char *text = slurp(plain), *pout = NULL, *sout = NULL, *serr = NULL;
        cJSON *doc = cJSON_Parse(text ? text : "");
        free(text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
        spoil(doc, evil);
        text = cJSON_Print(doc);
        put(spoiled, text);
        free(text);
        cJSON_Delete(doc);
        CU_ASSERT_EQUAL_FATAL(report_into(plain, pdir, &pout, NULL), 0);
        int rc = report_into(spoiled, sdir, &sout, &serr);
        if (rc != 0)
            fprintf(stderr, "\n  report of %s: exit %d: %s\n", kinds[i], rc, serr ? serr : "");
        CU_ASSERT_EQUAL(rc, 0);
        /* "wrote DIR/index.html: KIND report, N plots" */
        const char *pn = pout ? strstr(pout, ": ") : NULL, *sn = sout ? strstr(sout, ": ") : NULL;
        CU_ASSERT_TRUE(pn && sn && strcmp(pn, sn) == 0);
        char *html = slurp(path_in(sdir, "index.html"));
        CU_ASSERT_TRUE(html && !strstr(html, "<b>") && strstr(html, "&lt;b&gt;x&amp;y"));
        free(html);
        char *names = listing(pdir);
        for (char *save = NULL, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
            if (!strstr(n, ".csv"))
                continue;
            csv_t *a = NULL, *b = NULL;
            err_t e;
            CU_ASSERT_EQUAL(csv_load(path_in(pdir, n), &a, &e), 0);
            int loaded = csv_load(path_in(sdir, n), &b, &e);
            if (loaded != 0 || (a && csv_rows(a) != csv_rows(b)))
                fprintf(stderr, "\n  %s of the spoiled result: %s\n", n, loaded ? e.msg : "rows");
            CU_ASSERT_TRUE(loaded == 0 && a && csv_rows(a) == csv_rows(b));
            csv_free(a);
            csv_free(b);
        }
        free(names);
        free(pout);
        free(sout);
        free(serr);
    }
    remove_tree(tmp);
}

/* Issue 35 item 8h: CSV column names are as long as the JSON's keys make
 * them, never cut to a buffer (a cut name found no cell: the column came
 * out empty): two levels of 300-character keys in --csv of a table and of
 * a whole document. */
static void test_csv_long_names(void)
{
    char big[301], dotted[700];
    memset(big, 'n', 300);
    big[300] = '\0';
    snprintf(dotted, sizeof dotted, "%s.%s", big, big);
    cJSON *rows = cJSON_CreateArray(), *row = cJSON_CreateObject(), *inner = cJSON_CreateObject();
    cJSON_AddNumberToObject(inner, big, 42);
    cJSON_AddItemToObject(row, big, inner);
    cJSON_AddItemToArray(rows, row);
    char tmp[256], path[300];
    CU_ASSERT_EQUAL_FATAL(make_temp_dir(tmp, sizeof tmp), 0);
    snprintf(path, sizeof path, "%s/t.csv", tmp);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    err_t e;
    CU_ASSERT_EQUAL(csv_from_json(f, rows, "rows", &e), 0);
    fclose(f);
    csv_t *c = NULL;
    CU_ASSERT_EQUAL_FATAL(csv_load(path, &c, &e), 0);
    const char *cell = csv_get(c, 0, dotted);
    CU_ASSERT_TRUE(cell && strcmp(cell, "42") == 0);
    csv_free(c);
    /* the whole document as key,value rows: the key whole */
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, big, cJSON_Duplicate(row, true));
    f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(csv_document(f, doc, NULL, &e), 0);
    fclose(f);
    char *text = slurp(path);
    char want[1200];
    snprintf(want, sizeof want, "%s.%s,42", big, dotted);
    CU_ASSERT_TRUE(text && strstr(text, want));
    free(text);
    cJSON_Delete(doc);
    cJSON_Delete(rows);
    remove_tree(tmp);
}

TEST_SUITE(suite_report, "report", TEST(test_plan_report_numbers_and_plots),
           TEST(test_sim_and_reliability_reports), TEST(test_report_renders_in_chromium),
           TEST(test_report_without_gnuplot), TEST(test_report_bad_results),
           TEST(test_csv_output), TEST(test_validate_log_report),
           TEST(test_report_text_printed_once), TEST(test_csv_cells_quoted),
           TEST(test_report_links_not_followed), TEST(test_report_replaces_previous),
           TEST(test_concurrent_reports), TEST(test_report_strings_escaped),
           TEST(test_csv_long_names));
