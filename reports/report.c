#include "reports/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"
#include "reports/cluster_report.h"
#include "reports/csvout.h"
#include "reports/docread.h"
#include "reports/gnuplot.h"
#include "reports/html.h"
#include "reports/outdir.h"
#include "reports/reportInt.h"

/* ------------------------------------------------------------ helpers */

void report_tprintf(text_t *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    va_list ap;
    for (;;) {
        size_t room = t->cap - t->n;
        va_start(ap, fmt);
        int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = true;
            return;
        }
        if (t->s && (size_t)k < room) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 4096;
        while (cap < t->n + (size_t)k + 1)
            cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

/* s as one CSV cell (RFC 4180): strings from a result may hold commas,
 * quotes or newlines, which must not split or add rows. */
void report_tcell(text_t *t, const char *s)
{
    char *q = malloc(2 * strlen(s) + 3);
    if (!q) {
        t->failed = true;
        return;
    }
    report_tprintf(t, "%s", csv_quote(s, q));
    free(q);
}

/* The same for the CSV files gnuplot reads. Its data reader takes a
 * quoted cell with commas but has no escape for a quote inside one (a
 * doubled "" ends the cell and the row is dropped, or the whole plot when
 * every row has one: a result whose strings hold quotes made report fail)
 * nor a line break: quotes become apostrophes and line breaks spaces. */
void report_tlabel(text_t *t, const char *s)
{
    char *flat = strdup(s);
    if (!flat) {
        t->failed = true;
        return;
    }
    for (char *p = flat; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
        else if (*p == '"')
            *p = '\'';
    report_tcell(t, flat);
    free(flat);
}

int report_tsave(text_t *t, const char *dir, const char *name, err_t *err)
{
    char *path = fileio_join(dir, name);
    int rc = t->failed || !path ? err_set(err, ERR_RUNTIME, "out of memory writing %s", name)
                                : fileio_write_atomic(path, t->s ? t->s : "", t->n, err);
    free(path);
    free(t->s);
    memset(t, 0, sizeof *t);
    return rc;
}

/* Check that o has each key in keys with the type its prefix says
 * ("n:" number, "o:" object, "a:" array, "s:" string), so a damaged result
 * fails with the path of what is missing instead of drawing NaN. */
static int need(const cJSON *o, const char *where, const char *const *keys, int n, const char *src,
                err_t *err)
{
    for (int i = 0; i < n; i++) {
        const char *key = keys[i] + 2;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        bool ok;
        const char *what;
        switch (keys[i][0]) {
        case 'n': ok = cJSON_IsNumber(v) && isfinite(v->valuedouble); what = "a finite number"; break;
        case 'o': ok = cJSON_IsObject(v); what = "an object"; break;
        case 'a': ok = cJSON_IsArray(v); what = "an array"; break;
        default: ok = cJSON_IsString(v); what = "a string"; break;
        }
        if (!ok)
            return err_setf(err, ERR_INPUT, src, NULL, "%s%s%s: missing or not %s", where,
                            where[0] ? "." : "", key, what);
    }
    return ERR_OK;
}
#define NEED(o, where, src, err, ...)                                                          \
    need(o, where, (const char *const[]){__VA_ARGS__},                                        \
         sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *), src, err)

static const char *const STEP_KEYS[] = {"n:step_time_s", "n:tokens_per_s", "n:mfu",
                                        "o:breakdown_s", "o:memory_gib",   "o:layout"};

static int check_step(const cJSON *o, const char *where, const char *src, err_t *err)
{
    int rc = need(o, where, STEP_KEYS, sizeof STEP_KEYS / sizeof *STEP_KEYS, src, err);
    if (rc)
        return rc;
    char sub[160];
    snprintf(sub, sizeof sub, "%s%sbreakdown_s", where, where[0] ? "." : "");
    if ((rc = NEED(doc_obj(o, "breakdown_s"), sub, src, err, "n:compute", "n:recompute", "n:tp_comm",
                   "n:cp_comm", "n:pp_comm", "n:pp_bubble", "n:dp_comm", "n:optimizer",
                   "n:straggler", "n:other")))
        return rc;
    snprintf(sub, sizeof sub, "%s%smemory_gib", where, where[0] ? "." : "");
    return NEED(doc_obj(o, "memory_gib"), sub, src, err, "n:params", "n:grads", "n:optimizer",
                "n:activations", "n:buffers", "n:total", "n:capacity");
}

static int check_plan(const cJSON *r, const char *src, err_t *err)
{
    int rc = NEED(r, "", src, err, "a:ladder", "s:recommendation");
    const cJSON *rung;
    int i = 0;
    cJSON_ArrayForEach(rung, doc_obj(r, "ladder"))
    {
        char where[64];
        snprintf(where, sizeof where, "ladder[%d]", i++);
        if (rc || (rc = NEED(rung, where, src, err, "n:gpus")))
            return rc;
        if (!cJSON_IsTrue(doc_obj(rung, "feasible")))
            continue;
        if ((rc = check_step(rung, where, src, err)) ||
            (rc = NEED(rung, where, src, err, "n:scaling_efficiency", "s:main_loss", "n:days_p10",
                       "n:days_p50", "n:days_p90", "n:interruptions_mean", "n:gpu_hours",
                       "n:cost_usd", "n:cost_per_day_usd")))
            return rc;
    }
    return rc;
}

static int check_sim(const cJSON *r, const char *src, err_t *err)
{
    return check_step(r, "", src, err);
}

static int check_reliability(const cJSON *r, const char *src, err_t *err)
{
    return NEED(r, "", src, err, "n:wall_days_p10", "n:wall_days_p50", "n:wall_days_p90",
                "n:goodput", "n:interruptions_mean", "o:interruptions_by_cause",
                "n:checkpoint_interval_s", "n:young_daly_interval_s", "n:lost_gpu_hours");
}

static int check_validate(const cJSON *r, const char *src, err_t *err)
{
    int rc = NEED(r, "", src, err, "a:components", "n:predicted_step_time_s",
                  "n:measured_step_time_s", "n:step_time_error");
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, doc_obj(r, "components"))
    {
        char where[64];
        snprintf(where, sizeof where, "components[%d]", i++);
        if (rc || (rc = NEED(e, where, src, err, "s:name", "n:predicted_s", "n:measured_s")))
            return rc;
    }
    return rc;
}

/* Draw a plot and put it on the page; without gnuplot, only a note. */
int report_figure(ctx_t *c, const char *name, const char *caption, const char *body, err_t *err)
{
    if (!c->gnuplot)
        return ERR_OK;
    int rc = gp_render(c->dir, name, body, err);
    if (rc)
        return rc;
    html_figure_svg(c->h, c->dir, name, caption);
    c->info->plots++;
    return ERR_OK;
}

/* A table of the result's numbers, one row each; numbers the result does
 * not have are left out. */
void report_measures_table(html_t *h, const cJSON *r, const char *first, const char *first_text,
                                  const measure_t *rows, size_t n)
{
    static const char *hdr[] = {"measure", "value"};
    html_table_begin(h, hdr, 2);
    if (first) {
        html_row_begin(h);
        html_cell_text(h, first);
        html_cell_text(h, first_text);
        html_row_end(h);
    }
    for (size_t k = 0; k < n; k++) {
        if (!cJSON_IsNumber(doc_obj(r, rows[k].key)) && !cJSON_IsNull(doc_obj(r, rows[k].key)))
            continue;
        html_row_begin(h);
        html_cell_text(h, rows[k].label);
        html_cell_num(h, rows[k].key, doc_num(r, rows[k].key), rows[k].fmt, rows[k].scale);
        html_row_end(h);
    }
    html_table_end(h);
}

void report_num_cells(html_t *h, const char *array, int i, const cJSON *e,
                      const report_col_t *cols, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        char key[160];
        snprintf(key, sizeof key, "%s[%d].%s", array, i, cols[k].key);
        html_cell_num(h, key, doc_num(e, cols[k].key), cols[k].fmt, cols[k].scale);
    }
}
/* Breakdown parts in a fixed order, with the names people read. */
const report_part_t report_parts[] = {{"compute", "compute"},         {"recompute", "recompute"},
                                      {"tp_comm", "TP comm"},         {"cp_comm", "CP comm"},
                                      {"pp_comm", "PP comm"},         {"pp_bubble", "pipeline bubble"},
                                      {"dp_comm", "DP comm"},         {"optimizer", "optimizer"},
                                      {"offload", "host offload"},    {"straggler", "stragglers"},
                                      {"other", "other"}};

const report_part_t report_mem_parts[] = {{"params", "weights"},         {"grads", "gradients"},
                                          {"optimizer", "optimizer"},    {"activations", "activations"},
                                          {"buffers", "buffers"}};

/* ------------------------------------------------------------ validate --log */

static int check_validate_logs(const cJSON *r, const char *src, err_t *err)
{
    int rc = NEED(r, "", src, err, "a:runs");
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, doc_obj(r, "runs"))
    {
        char where[64];
        snprintf(where, sizeof where, "runs[%d]", i++);
        if (rc || (rc = NEED(e, where, src, err, "s:label", "s:model", "n:gpus",
                             "n:predicted_step_time_s", "n:measured_step_time_s",
                             "n:step_time_error", "s:verdict", "a:quantities")))
            return rc;
    }
    const cJSON *d = doc_obj(r, "doubling");
    if (rc || !cJSON_IsObject(d))
        return rc;
    if ((rc = NEED(d, "doubling", src, err, "a:rungs")))
        return rc;
    i = 0;
    cJSON_ArrayForEach(e, doc_obj(d, "rungs"))
    {
        char where[64];
        snprintf(where, sizeof where, "doubling.rungs[%d]", i++);
        if ((rc = NEED(e, where, src, err, "n:gpus", "n:predicted_step_time_s",
                       "n:measured_step_time_s", "n:step_time_error", "n:predicted_tokens_per_s",
                       "n:measured_tokens_per_s", "n:predicted_efficiency",
                       "n:measured_efficiency", "o:layout")))
            return rc;
    }
    const cJSON *next = doc_obj(d, "next");
    if (cJSON_IsObject(next) &&
        (rc = NEED(next, "doubling.next", src, err, "n:gpus", "n:predicted_step_time_s",
                   "n:step_time_low_s", "n:step_time_high_s", "n:predicted_tokens_per_s",
                   "n:tokens_per_s_low", "n:tokens_per_s_high", "o:layout")))
        return rc;
    const cJSON *pl = doc_obj(r, "plan_ladder");
    if (!pl)
        return ERR_OK;
    if (!cJSON_IsArray(pl))
        return err_setf(err, ERR_INPUT, src, "plan_ladder", "missing or not an array");
    i = 0;
    cJSON_ArrayForEach(e, pl)
    {
        char where[64];
        snprintf(where, sizeof where, "plan_ladder[%d]", i++);
        if ((rc = NEED(e, where, src, err, "n:gpus")))
            return rc;
        if (cJSON_IsTrue(doc_obj(e, "feasible")) &&
            ((rc = check_step(e, where, src, err)) ||
             (rc = NEED(e, where, src, err, "n:scaling_efficiency", "s:main_loss"))))
            return rc;
    }
    return ERR_OK;
}

/* ------------------------------------------------------------ dispatch */

/* `scaleplan cluster` (reports/cluster_report.h): SVG drawn in the page. */
static int render_cluster(const cJSON *r, ctx_t *c, err_t *err)
{
    return cluster_report_render(r, c->h, err);
}

typedef struct {
    const char *kind;
    const char *title;
    const char *key; /* a key only this kind of result has */
    int (*check)(const cJSON *r, const char *src, err_t *err);
    int (*render)(const cJSON *r, ctx_t *c, err_t *err);
} renderer_t;

static const renderer_t renderers[] = {
    {"plan", "Training plan", "ladder", check_plan, report_render_plan},
    {"validate", "Predicted against measured", "components", check_validate, report_render_validate},
    {"validate-log", "Training logs against the simulator", "runs", check_validate_logs,
     report_render_validate_logs},
    {"reliability", "Failures, checkpoints and restarts", "wall_days_p50", check_reliability,
     report_render_reliability},
    {"sim", "One training step", "breakdown_s", check_sim, report_render_sim},
    {"cluster", "GPU pool replay", "timeline", cluster_report_check, render_cluster},
};

/* Write the page, result.json and every plot and CSV into the private
 * folder stage. */
static int write_all(const renderer_t *rd, const cJSON *result, const char *stage,
                     report_info_t *info, err_t *err)
{
    char *path = fileio_join(stage, "result.json");
    int rc = path ? json_write_file(path, result, err) : err_set(err, ERR_RUNTIME, "out of memory");
    free(path);
    if (rc)
        return rc;
    html_t h;
    const char *model = doc_str(result, "model");
    size_t n = strlen(rd->title) + strlen(model) + 3;
    char *title = malloc(n);
    if (!title)
        return err_set(err, ERR_RUNTIME, "out of memory");
    snprintf(title, n, "%s%s%s", rd->title, model[0] ? ": " : "", model);
    html_begin(&h, title);
    free(title);
    ctx_t c = {stage, &h, info, gp_available()};
    info->no_gnuplot = !c.gnuplot && strcmp(rd->kind, "cluster") != 0; /* it draws SVG itself */
    if (info->no_gnuplot)
        html_paragraph(&h, "note", "gnuplot was not found, so this report has tables only: "
                                   GP_INSTALL_HINT ".");
    rc = rd->render(result, &c, err);
    if (!rc) {
        path = fileio_join(stage, "index.html");
        rc = path ? html_save(&h, path, err) : err_set(err, ERR_RUNTIME, "out of memory");
        free(path);
    }
    html_free(&h);
    return rc;
}

int report_write(const cJSON *result, const char *source, const char *dir, report_info_t *info,
                 err_t *err)
{
    memset(info, 0, sizeof *info);
    const renderer_t *rd = NULL;
    for (size_t i = 0; i < sizeof renderers / sizeof renderers[0] && !rd; i++)
        if (cJSON_IsObject(result) && doc_obj(result, renderers[i].key))
            rd = &renderers[i];
    if (!rd)
        return err_setf(err, ERR_INPUT, source, NULL,
                        "not a scaleplan result: expected the --json output of plan, sim, "
                        "reliability, validate (--measured or --log) or cluster");
    int rc = rd->check(result, source, err);
    if (rc)
        return rc;
    info->kind = rd->kind;
    info->index = fileio_join(dir, "index.html");
    if (!info->index)
        return err_set(err, ERR_RUNTIME, "out of memory");
    /* written in private, then swapped in whole (reports/outdir.h) */
    outdir_t od;
    if ((rc = outdir_begin(&od, dir, err)))
        goto out_free_index;
    if ((rc = write_all(rd, result, od.stage, info, err))) {
        outdir_abort(&od);
        goto out_free_index;
    }
    if ((rc = outdir_commit(&od, err)))
        goto out_free_index;
    return ERR_OK;
out_free_index:
    report_info_free(info);
    return rc;
}

void report_info_free(report_info_t *info)
{
    if (!info)
        return;
    free(info->index);
    info->index = NULL;
}
