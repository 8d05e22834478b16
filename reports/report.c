#include "reports/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/numfmt.h"
#include "models/layout_text.h"
#include "reports/cluster_report.h"
#include "reports/csvout.h"
#include "reports/docread.h"
#include "reports/gnuplot.h"
#include "reports/html.h"
#include "reports/logcheck.h"
#include "reports/outdir.h"
#include "reports/summary.h"

/* ------------------------------------------------------------ helpers */

/* A growable text buffer for CSV files and plot scripts. */
typedef struct {
    char *s;
    size_t n, cap;
    bool failed;
} text_t;

static void tprintf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tprintf(text_t *t, const char *fmt, ...)
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
static void tcell(text_t *t, const char *s)
{
    char *q = malloc(2 * strlen(s) + 3);
    if (!q) {
        t->failed = true;
        return;
    }
    tprintf(t, "%s", csv_quote(s, q));
    free(q);
}

/* The same for the CSV files gnuplot reads. Its data reader takes a
 * quoted cell with commas but has no escape for a quote inside one (a
 * doubled "" ends the cell and the row is dropped, or the whole plot when
 * every row has one: a result whose strings hold quotes made report fail)
 * nor a line break: quotes become apostrophes and line breaks spaces. */
static void tlabel(text_t *t, const char *s)
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
    tcell(t, flat);
    free(flat);
}

static int tsave(text_t *t, const char *dir, const char *name, err_t *err)
{
    char *path = fileio_join(dir, name);
    int rc = t->failed || !path ? err_set(err, ERR_RUNTIME, "out of memory writing %s", name)
                                : fileio_write_atomic(path, t->s ? t->s : "", t->n, err);
    free(path);
    free(t->s);
    memset(t, 0, sizeof *t);
    return rc;
}

typedef struct {
    const char *dir; /* the report's private folder: every file is written here */
    html_t *h;
    report_info_t *info;
    bool gnuplot;
} ctx_t;

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
static int figure(ctx_t *c, const char *name, const char *caption, const char *body, err_t *err)
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

/* One number of the result shown in a two-column table. */
typedef struct {
    const char *key, *label, *fmt;
    double scale; /* 100 for a fraction shown as a percentage */
} measure_t;

/* A table of the result's numbers, one row each; numbers the result does
 * not have are left out. */
static void measures_table(html_t *h, const cJSON *r, const char *first, const char *first_text,
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

/* Breakdown parts in a fixed order, with the names people read. */
static const struct {
    const char *key, *label;
} parts[] = {{"compute", "compute"},         {"recompute", "recompute"},
             {"tp_comm", "TP comm"},         {"cp_comm", "CP comm"},
             {"pp_comm", "PP comm"},         {"pp_bubble", "pipeline bubble"},
             {"dp_comm", "DP comm"},         {"optimizer", "optimizer"},
             {"offload", "host offload"},    {"straggler", "stragglers"},
             {"other", "other"}};
enum { N_PARTS = sizeof parts / sizeof parts[0] };

static const struct {
    const char *key, *label;
} mem_parts[] = {{"params", "weights"},         {"grads", "gradients"},
                 {"optimizer", "optimizer"},    {"activations", "activations"},
                 {"buffers", "buffers"}};
enum { N_MEM = sizeof mem_parts / sizeof mem_parts[0] };

/* The simulated timeline of one step: pipeline stages against time, each
 * task a box colored by its kind (nothing when the result has none). */
static int render_timeline(const cJSON *tl, double pp, ctx_t *c, err_t *err)
{
    if (!cJSON_IsArray(tl) || cJSON_GetArraySize(tl) == 0)
        return ERR_OK;
    static const char *kinds[] = {"fwd", "bwd", "send", "dp reduce", "embedding grad sync",
                                  "step sync", "optimizer", "param all-gather"};
    enum { N_KINDS = sizeof kinds / sizeof kinds[0] };
    text_t csv = {0};
    tprintf(&csv, "stage,stream,kind,start_s,end_s,color,y\n");
    const cJSON *e;
    double stages = 0, end = 0;
    cJSON_ArrayForEach(e, tl)
    {
        const char *k = doc_str(e, "kind");
        int color = N_KINDS + 1;
        for (int q = 0; q < N_KINDS; q++)
            if (strcmp(k, kinds[q]) == 0)
                color = q + 1;
        double stage = doc_num(e, "stage"), stream = doc_num(e, "stream");
        /* compute on the stage's line, sends just above, DP traffic below */
        double y = stage + (stream == 1 ? -0.3 : stream == 2 ? 0.3 : 0);
        if (!isfinite(stage) || !isfinite(doc_num(e, "start_s")) || !isfinite(doc_num(e, "end_s")))
            continue;
        stages = fmax(stages, stage);
        end = fmax(end, doc_num(e, "end_s"));
        tprintf(&csv, "%.0f,%.0f,", stage, stream);
        tlabel(&csv, k);
        tprintf(&csv, ",%.9g,%.9g,%d,%.2f\n", doc_num(e, "start_s"), doc_num(e, "end_s"), color, y);
    }
    int rc = tsave(&csv, c->dir, "timeline.csv", err);
    if (rc)
        return rc;
    /* name the rows: stages, then the global end-of-step stream */
    char tics[1024] = "set ytics 1\n";
    if (isfinite(pp) && pp >= 1 && pp <= 16) {
        int k = snprintf(tics, sizeof tics, "set ytics (");
        for (int q = 0; q <= (int)pp && k > 0 && (size_t)k < sizeof tics; q++)
            k += q < (int)pp ? snprintf(tics + k, sizeof tics - (size_t)k, "'stage %d' %d, ", q, q)
                             : snprintf(tics + k, sizeof tics - (size_t)k, "'end of step' %d)\n", q);
    }
    char body[3072];
    int n = snprintf(body, sizeof body,
                     "set title 'Simulated timeline of one step'\n"
                     "set xlabel 'time since the step began (s)'\n"
                     "set ylabel 'pipeline stage (sends above, DP communication below)'\n"
                     "set yrange [%.1f:-0.7]\nset xrange [0:%.9g]\n%s"
                     "set style fill solid 0.85 noborder\nset key outside right top\n"
                     "plot 'timeline.csv' skip 1 using (($4+$5)/2):7:(($5-$4)/2):($2==0?0.25:0.1):6 "
                     "with boxxyerror lc variable notitle",
                     stages + 0.7, end * 1.01, tics);
    for (int q = 0; q < N_KINDS && n > 0 && (size_t)n < sizeof body; q++)
        n += snprintf(body + n, sizeof body - (size_t)n,
                      ", keyentry with boxes lc %d title '%s'", q + 1, kinds[q]);
    return figure(c, "timeline",
                  "One step, simulated: each pipeline stage's tasks over time, colored by kind",
                  body, err);
}

/* Goodput against the checkpoint interval, with the simulated optimum and
 * Young/Daly marked (nothing when the result has no sweep). */
static int render_sweep(const cJSON *sw, double best_s, double young_daly_s, ctx_t *c, err_t *err)
{
    if (!cJSON_IsArray(sw) || cJSON_GetArraySize(sw) == 0)
        return ERR_OK;
    text_t s = {0};
    tprintf(&s, "interval_min,goodput_pct\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, sw)
    tprintf(&s, "%.9g,%.9g\n", doc_num(e, "interval_s") / 60, 100 * doc_num(e, "goodput"));
    int rc = tsave(&s, c->dir, "interval_sweep.csv", err);
    if (rc)
        return rc;
    double best = best_s / 60, yd = young_daly_s / 60;
    char body[2048];
    snprintf(body, sizeof body,
             "set title 'Goodput against the checkpoint interval'\nset logscale x\n"
             "set xlabel 'checkpoint interval (minutes of compute)'\nset ylabel 'goodput (%%)'\n"
             "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead lt 2 dt 2 lw 2\n"
             "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead lt 3 dt 3 lw 2\n"
             "set label 'simulated optimum %.1f min' at %.9g, graph 0.12 offset 0.5,0 tc lt 2\n"
             "set label 'Young/Daly %.1f min' at %.9g, graph 0.05 offset 0.5,0 tc lt 3\n"
             "plot 'interval_sweep.csv' skip 1 using 1:2 with linespoints lt 1 pt 7 title 'goodput'",
             best, best, yd, yd, best, best, yd, yd);
    return figure(c, "goodput",
                  "Goodput against the checkpoint interval, with the simulated optimum and "
                  "Young/Daly",
                  body, err);
}

/* One point of the cost/time view. */
typedef struct {
    double gpus, p10, p50, p90, cost;
    bool best;  /* the rung's best layout (else a runner-up) */
    bool front; /* on the Pareto front */
} point_t;

static int cmp_point_days(const void *a, const void *b)
{
    const point_t *x = a, *y = b;
    if (x->p50 != y->p50)
        return x->p50 < y->p50 ? -1 : 1;
    return (x->cost > y->cost) - (x->cost < y->cost);
}

static void add_point(point_t *v, int *n, int cap, double gpus, const cJSON *o, bool best)
{
    if (*n >= cap)
        return;
    point_t p = {gpus, doc_num(o, "days_p10"), doc_num(o, "days_p50"), doc_num(o, "days_p90"),
                 doc_num(o, "cost_usd"), best, false};
    if (isfinite(p.p50) && isfinite(p.cost) && isfinite(p.p10) && isfinite(p.p90))
        v[(*n)++] = p;
}

/* Cost against time to train for every rung's best layout and its
 * runners-up, with P10-P90 whiskers and the Pareto front (no other point
 * both faster and cheaper) drawn through them. */
static int render_pareto(const cJSON *ladder, ctx_t *c, err_t *err)
{
    enum { CAP = 512 };
    point_t *v = malloc(CAP * sizeof *v);
    if (!v)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int n = 0;
    const cJSON *rung, *alt;
    cJSON_ArrayForEach(rung, ladder)
    {
        if (!cJSON_IsTrue(doc_obj(rung, "feasible")))
            continue;
        add_point(v, &n, CAP, doc_num(rung, "gpus"), rung, true);
        cJSON_ArrayForEach(alt, doc_obj(rung, "alternatives"))
        add_point(v, &n, CAP, doc_num(rung, "gpus"), alt, false);
    }
    qsort(v, (size_t)n, sizeof *v, cmp_point_days);
    double cheapest = INFINITY;
    for (int i = 0; i < n; i++)
        if (v[i].cost < cheapest) {
            v[i].front = true;
            cheapest = v[i].cost;
        }
    text_t csv = {0};
    tprintf(&csv, "gpus,rung_best,pareto_front,days_p10,days_p50,days_p90,cost_usd\n");
    for (int i = 0; i < n; i++)
        tprintf(&csv, "%.0f,%d,%d,%.9g,%.9g,%.9g,%.9g\n", v[i].gpus, v[i].best, v[i].front,
                v[i].p10, v[i].p50, v[i].p90, v[i].cost);
    text_t front = {0};
    tprintf(&front, "days_p50,cost_usd\n");
    for (int i = 0; i < n; i++)
        if (v[i].front)
            tprintf(&front, "%.9g,%.9g\n", v[i].p50, v[i].cost);
    free(v);
    int rc = tsave(&csv, c->dir, "pareto.csv", err);
    if (rc || (rc = tsave(&front, c->dir, "pareto_front.csv", err)) || n == 0)
        return rc;
    char body[2048];
    snprintf(body, sizeof body,
             "set title 'Cost against time to train (whiskers: P10 to P90)'\n"
             "set xlabel 'days to train (P50, log scale)'\nset ylabel 'cost (USD)'\n"
             "set format y '$%%.1s%%c'\nset logscale x\nset key below\n"
             "set offsets graph 0.05, graph 0.05, graph 0.1, graph 0.1\n"
             "plot 'pareto.csv' skip 1 using ($2==0?$5:NaN):7:4:6 with xerrorbars lc rgb '#9aa3b5' pt 6 "
             "ps 0.8 title 'other layouts', "
             "'pareto_front.csv' skip 1 using 1:2 with lines lt 2 dt 2 title 'Pareto front', "
             "'pareto.csv' skip 1 using ($2==1?$5:NaN):7:4:6 with xerrorbars lt 1 pt 7 ps 1.2 title 'best "
             "layout per GPU count (labelled with its GPUs)', "
             /* neighbours' labels alternate above and below: never on top of each other */
             "'' skip 1 using ($2==1&&int(log($1)/log(2)+0.5)%%2==0?$5:NaN):7:(sprintf('%%d', $1)) "
             "with labels offset 0,1 font ',9' notitle, "
             "'' skip 1 using ($2==1&&int(log($1)/log(2)+0.5)%%2==1?$5:NaN):7:(sprintf('%%d', $1)) "
             "with labels offset 0,-1.2 font ',9' notitle");
    return figure(c, "pareto",
                  "Cost against time to train for each GPU count's best layout and its runners-up",
                  body, err);
}

/* ------------------------------------------------------------ plan */

/* The recommendation and the plan's facts. */
static void plan_summary(const cJSON *r, html_t *h)
{
    summary_plan(r, h);
    html_heading(h, "Plan inputs");
    static const measure_t facts[] = {
        {"tokens", "tokens to train", "%.0f", 1},
        {"price_usd_per_gpu_hour", "price (USD per GPU-hour)", "%.2f", 1},
        {"global_batch_min", "global batch, smallest allowed (sequences)", "%.0f", 1},
        {"global_batch_max", "global batch, largest allowed (sequences)", "%.0f", 1},
        {"seq_len", "sequence length (tokens)", "%.0f", 1},
        {"layouts_evaluated", "layouts searched, all rungs", "%.0f", 1},
        {"elapsed_s", "search time (s)", "%.2f", 1}};
    measures_table(h, r, "GPU", doc_str(r, "gpu"), facts, sizeof facts / sizeof facts[0]);
}

/* The scale ladder as a table, one row per rung (the best rung marked);
 * the numbers are read from the result at path (prefix "ladder"). */
static void ladder_table(const cJSON *ladder, const cJSON *best, const char *path, html_t *h)
{
    html_heading(h, "Scale ladder");
    static const char *hdr[] = {"GPUs", "layout", "framework", "precision", "step (s)",
                                "tokens/s", "MFU (% of bf16 dense peak)", "scaling (%)",
                                "main loss", "days P50", "days P90", "interruptions",
                                "GPU-hours", "cost (USD)", "cost/day (USD)"};
    html_table_begin(h, hdr, 15);
    static const struct {
        const char *k, *fmt;
        double scale;
    } cols[] = {{"step_time_s", "%.3f", 1},    {"tokens_per_s", "%.0f", 1},
                {"mfu", "%.1f", 100},          {"scaling_efficiency", "%.0f", 100},
                {NULL, NULL, 0},               {"days_p50", "%.2f", 1},
                {"days_p90", "%.2f", 1},       {"interruptions_mean", "%.1f", 1},
                {"gpu_hours", "%.0f", 1},      {"cost_usd", "%.0f", 1},
                {"cost_per_day_usd", "%.0f", 1}};
    int i = 0;
    const cJSON *rung;
    cJSON_ArrayForEach(rung, ladder)
    {
        char key[96], lay[200];
        bool is_best = best && cJSON_IsObject(best) && doc_num(best, "gpus") == doc_num(rung, "gpus");
        html_raw(h, is_best ? "<tr class=\"best\">" : "<tr>");
        snprintf(key, sizeof key, "%s[%d].gpus", path, i);
        html_cell_num(h, key, doc_num(rung, "gpus"), "%.0f", 1);
        if (!cJSON_IsTrue(doc_obj(rung, "feasible"))) {
            html_raw(h, "<td class=\"t\" colspan=\"14\">");
            html_text(h, doc_str(rung, "why_not"));
            html_raw(h, "</td></tr>\n");
            i++;
            continue;
        }
        layout_text_from_json(doc_obj(rung, "layout"), lay, sizeof lay);
        html_cell_text(h, lay);
        html_cell_text(h, doc_str(rung, "framework"));
        html_cell_text(h, doc_str(doc_obj(rung, "layout"), "precision"));
        for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
            if (!cols[k].k) {
                html_cell_text(h, doc_str(rung, "main_loss"));
                continue;
            }
            snprintf(key, sizeof key, "%s[%d].%s", path, i, cols[k].k);
            html_cell_num(h, key, doc_num(rung, cols[k].k), cols[k].fmt, cols[k].scale);
        }
        html_row_end(h);
        i++;
    }
    html_table_end(h);
}

/* The columns of ladder_plot.csv, what the ladder's plots read. */
static void ladder_plot_header(text_t *plot)
{
    tprintf(plot, "gpus,tokens_per_s,scaling_pct,main_loss,days_p10,days_p50,days_p90,cost_usd");
    for (int k = 0; k < N_PARTS; k++)
        tprintf(plot, ",%s", parts[k].key);
    for (int k = 0; k < N_MEM; k++)
        tprintf(plot, ",%s", mem_parts[k].key);
    tprintf(plot, ",capacity,linear_tokens_per_s\n");
}

/* The data behind the ladder's table and plots: ladder.csv (every figure
 * of every rung) and ladder_plot.csv (what the plots read). Sets *feasible
 * to the number of rungs that fit. */
static int ladder_csvs(const cJSON *ladder, ctx_t *c, int *feasible, err_t *err)
{
    text_t csv = {0}, plot = {0};
    tprintf(&csv, "gpus,feasible,layout,step_time_s,tokens_per_s,mfu,scaling_efficiency,main_loss,"
                  "days_p10,days_p50,days_p90,interruptions_mean,gpu_hours,cost_usd,cost_per_day_usd");
    for (int k = 0; k < N_PARTS; k++)
        tprintf(&csv, ",bd_%s_s", parts[k].key);
    for (int k = 0; k < N_MEM; k++)
        tprintf(&csv, ",mem_%s_gib", mem_parts[k].key);
    tprintf(&csv, ",capacity_gib\n");
    ladder_plot_header(&plot);
    double per_gpu_first = NAN; /* tokens/s per GPU at the first rung that fits */
    *feasible = 0;
    const cJSON *rung;
    cJSON_ArrayForEach(rung, ladder)
    {
        if (!cJSON_IsTrue(doc_obj(rung, "feasible"))) {
            tprintf(&csv, "%.0f,false,", doc_num(rung, "gpus"));
            tcell(&csv, doc_str(rung, "why_not"));
            tprintf(&csv, "\n");
            continue;
        }
        (*feasible)++;
        char lay[200];
        layout_text_from_json(doc_obj(rung, "layout"), lay, sizeof lay);
        const cJSON *bd = doc_obj(rung, "breakdown_s"), *mem = doc_obj(rung, "memory_gib");
        tprintf(&csv, "%.0f,true,", doc_num(rung, "gpus"));
        tcell(&csv, lay);
        tprintf(&csv, ",%.9g,%.9g,%.9g,%.9g,", doc_num(rung, "step_time_s"),
                doc_num(rung, "tokens_per_s"), doc_num(rung, "mfu"), doc_num(rung, "scaling_efficiency"));
        tcell(&csv, doc_str(rung, "main_loss"));
        tprintf(&csv, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", doc_num(rung, "days_p10"),
                doc_num(rung, "days_p50"), doc_num(rung, "days_p90"), doc_num(rung, "interruptions_mean"),
                doc_num(rung, "gpu_hours"), doc_num(rung, "cost_usd"), doc_num(rung, "cost_per_day_usd"));
        tprintf(&plot, "%.0f,%.9g,%.9g,", doc_num(rung, "gpus"), doc_num(rung, "tokens_per_s"),
                100 * doc_num(rung, "scaling_efficiency"));
        tlabel(&plot, doc_str(rung, "main_loss"));
        tprintf(&plot, ",%.9g,%.9g,%.9g,%.9g", doc_num(rung, "days_p10"), doc_num(rung, "days_p50"),
                doc_num(rung, "days_p90"), doc_num(rung, "cost_usd"));
        for (int k = 0; k < N_PARTS; k++) {
            tprintf(&csv, ",%.9g", doc_num(bd, parts[k].key));
            tprintf(&plot, ",%.9g", doc_num(bd, parts[k].key));
        }
        for (int k = 0; k < N_MEM; k++) {
            tprintf(&csv, ",%.9g", doc_num(mem, mem_parts[k].key));
            tprintf(&plot, ",%.9g", doc_num(mem, mem_parts[k].key));
        }
        tprintf(&csv, ",%.9g\n", doc_num(mem, "capacity"));
        if (!isfinite(per_gpu_first))
            per_gpu_first = doc_num(rung, "tokens_per_s") / doc_num(rung, "gpus");
        tprintf(&plot, ",%.9g,%.9g\n", doc_num(mem, "capacity"), per_gpu_first * doc_num(rung, "gpus"));
    }
    int rc = tsave(&csv, c->dir, "ladder.csv", err);
    if (!rc)
        rc = tsave(&plot, c->dir, "ladder_plot.csv", err);
    else
        free(plot.s);
    return rc;
}

/* Columns of ladder_plot.csv the ladder plot reads (gnuplot counts from 1). */
#define LADDER_COL_LINEAR (10 + N_PARTS + N_MEM)

/* What a validate --log result adds to the ladder plot: measured.csv
 * (gpus, measured tokens/s, measured scaling %) and, when the doubling
 * check predicted one, next.csv (gpus, corrected tokens/s, low, high). */
typedef struct {
    bool measured;
    bool next;
    bool planned;  /* ladder_plot.csv is a plan's ladder (else the runs' predictions) */
} ladder_extra_t;

/* Throughput and scaling efficiency at each rung, with the linear line
 * from the first rung and each rung's main loss; with extra, the measured
 * rungs and the next rung's corrected prediction with its interval. */
static int ladder_plot(ctx_t *c, const ladder_extra_t *extra, err_t *err)
{
    char body[4096];
    int n = snprintf(body, sizeof body,
                     "set title 'Scale ladder: throughput and scaling efficiency'\n"
                     "set logscale x 2\nset logscale y 2\nset xlabel 'GPUs'\n"
                     "set ylabel 'throughput (tokens/s, all GPUs; log scale)'\n"
                     "set y2label 'scaling efficiency vs the first rung (%%)'\nset y2tics\nset ytics nomirror\n"
                     "set y2range [0:*]\nset format y '%%.1s%%c'\nset key below\n"
                     "set offsets graph 0.05, graph 0.12, graph 0.1, graph 0.05\n"
                     "plot 'ladder_plot.csv' skip 1 using 1:2 with linespoints lt 1 title '%stokens/s' axes x1y1, "
                     "'' skip 1 using 1:%d with lines lt 8 dt 2 title 'linear from the first rung' axes x1y1, "
                     "'' skip 1 using 1:3 with linespoints lt 2 title '%sscaling efficiency (right axis)' axes x1y2, "
                     "'' skip 1 using 1:2:4 with labels rotate by -35 left offset 0.6,-0.6 font ',8' "
                     "tc rgb '#5b6475' notitle",
                     !extra ? "" : extra->planned ? "planned " : "predicted ", LADDER_COL_LINEAR,
                     !extra ? "" : extra->planned ? "planned " : "predicted ");
    if (extra && extra->measured && n > 0 && (size_t)n < sizeof body)
        n += snprintf(body + n, sizeof body - (size_t)n,
                      ", 'measured.csv' skip 1 using 1:2 with points pt 7 ps 1.6 lc rgb '#c23b4e' "
                      "title 'measured tokens/s' axes x1y1, "
                      "'' skip 1 using 1:3 with points pt 5 ps 1.3 lc rgb '#c23b4e' "
                      "title 'measured scaling efficiency (right axis)' axes x1y2%s",
                      extra->planned ? ", '' skip 1 using 1:4 with points pt 6 ps 1.2 lt 1 "
                                       "title 'predicted for the layouts run' axes x1y1"
                                     : "");
    if (extra && extra->next && n > 0 && (size_t)n < sizeof body)
        snprintf(body + n, sizeof body - (size_t)n,
                 ", 'next.csv' skip 1 using 1:2:3:4 with yerrorbars pt 6 ps 1.6 lc rgb '#c23b4e' "
                 "title 'next rung, corrected by the measured rungs (interval)' axes x1y1");
    return figure(c, "ladder",
                  extra ? "Throughput and scaling efficiency at each doubling: predicted, measured, "
                          "and the next rung corrected by what was measured"
                        : "Throughput and scaling efficiency at each doubling, with the main loss "
                          "at each rung",
                  body, err);
}

/* GPU-seconds per step by part at each rung: equal bars would be linear
 * scaling, so a part that grows is what scaling loses to. */
static int ladder_breakdown_plot(ctx_t *c, err_t *err)
{
    char body[4096];
    int n = snprintf(body, sizeof body,
                     "set title 'Step time by part x GPUs (equal bars would be linear scaling)'\n"
                     "set style data histograms\nset style histogram rowstacked\nset boxwidth 0.7\n"
                     "set xlabel 'GPUs'\nset ylabel 'GPU-seconds per step (exposed time x GPUs)'\n"
                     "set yrange [0:*]\nset format y '%%.1s%%c'\nplot ");
    for (int k = 0; k < N_PARTS && n > 0 && (size_t)n < sizeof body; k++)
        n += snprintf(body + n, sizeof body - (size_t)n,
                      "%s'ladder_plot.csv' skip 1 using ($%d*$1)%s title '%s' lt %d",
                      k ? ", " : "", 9 + k, k == 0 ? ":xtic(1)" : "", parts[k].label, k + 1);
    return figure(c, "breakdown",
                  "Where each step's time goes at each rung, in GPU-seconds: a part that grows "
                  "from rung to rung is what scaling loses to",
                  body, err);
}

/* Memory per GPU by kind at each rung against the GPU's capacity. */
static int ladder_memory_plot(ctx_t *c, err_t *err)
{
    char body[4096];
    int n = snprintf(body, sizeof body,
                     "set title 'Memory per GPU at each rung (peak pipeline stage)'\n"
                     "set style data histograms\nset style histogram rowstacked\nset boxwidth 0.7\n"
                     "set xlabel 'GPUs'\nset ylabel 'GiB per GPU'\nset yrange [0:*]\nplot ");
    for (int k = 0; k < N_MEM && n > 0 && (size_t)n < sizeof body; k++)
        n += snprintf(body + n, sizeof body - (size_t)n, "%s'ladder_plot.csv' skip 1 using %d%s title '%s' lt %d",
                      k ? ", " : "", 9 + N_PARTS + k, k == 0 ? ":xtic(1)" : "", mem_parts[k].label, k + 1);
    if (n > 0 && (size_t)n < sizeof body)
        snprintf(body + n, sizeof body - (size_t)n,
                 ", 'ladder_plot.csv' skip 1 using 0:%d with linespoints lt 4 dt 2 title 'GPU capacity'",
                 9 + N_PARTS + N_MEM);
    return figure(c, "memory", "Per-GPU memory by kind against the GPU's capacity", body, err);
}

/* The recommended rung's detail: goodput against the checkpoint interval
 * and the simulated timeline of one step. */
static int best_rung_plots(const cJSON *best, ctx_t *c, err_t *err)
{
    if (!cJSON_IsObject(best))
        return ERR_OK;
    int rc = render_sweep(doc_obj(best, "interval_sweep"), doc_num(best, "optimal_interval_s"),
                          doc_num(best, "young_daly_interval_s"), c, err);
    return rc ? rc : render_timeline(doc_obj(best, "timeline"), doc_num(doc_obj(best, "layout"), "pp"), c, err);
}

/* The best rung rerun with one change each. */
static void what_if_table(const cJSON *w, html_t *h)
{
    if (!cJSON_IsArray(w) || cJSON_GetArraySize(w) == 0)
        return;
    html_heading(h, "What if");
    static const char *wh[] = {"change", "GPUs", "days P50", "cost (USD)", "MFU (%)"};
    html_table_begin(h, wh, 5);
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, w)
    {
        char key[64];
        html_row_begin(h);
        html_cell_text(h, doc_str(e, "change"));
        snprintf(key, sizeof key, "what_if[%d].gpus", k);
        html_cell_num(h, key, doc_num(e, "gpus"), "%.0f", 1);
        snprintf(key, sizeof key, "what_if[%d].days_p50", k);
        html_cell_num(h, key, doc_num(e, "days_p50"), "%.2f", 1);
        snprintf(key, sizeof key, "what_if[%d].cost_usd", k);
        html_cell_num(h, key, doc_num(e, "cost_usd"), "%.0f", 1);
        snprintf(key, sizeof key, "what_if[%d].mfu", k);
        html_cell_num(h, key, doc_num(e, "mfu"), "%.1f", 100);
        html_row_end(h);
        k++;
    }
    html_table_end(h);
}

static int render_plan(const cJSON *r, ctx_t *c, err_t *err)
{
    const cJSON *ladder = doc_obj(r, "ladder");
    int feasible, rc;
    plan_summary(r, c->h);
    ladder_table(ladder, doc_obj(r, "best"), "ladder", c->h);
    if ((rc = ladder_csvs(ladder, c, &feasible, err)))
        return rc;
    if (feasible > 0) {
        html_heading(c->h, "Plots");
        if ((rc = ladder_plot(c, NULL, err)) || (rc = ladder_breakdown_plot(c, err)) ||
            (rc = ladder_memory_plot(c, err)) || (rc = render_pareto(ladder, c, err)) ||
            (rc = best_rung_plots(doc_obj(r, "best"), c, err)))
            return rc;
        what_if_table(doc_obj(r, "what_if"), c->h);
    }
    summary_glossary(c->h);
    return ERR_OK;
}

/* ------------------------------------------------------------ sim */

static int render_breakdown_and_memory(const cJSON *r, ctx_t *c, const char *prefix, err_t *err)
{
    html_t *h = c->h;
    const cJSON *bd = doc_obj(r, "breakdown_s"), *mem = doc_obj(r, "memory_gib");
    double step = doc_num(r, "step_time_s");
    html_heading(h, "Step time");
    static const char *hdr[] = {"part", "seconds", "share (%)"};
    html_table_begin(h, hdr, 3);
    text_t csv = {0};
    tprintf(&csv, "part,seconds,share\n");
    for (int k = 0; k < N_PARTS; k++) {
        char key[64];
        html_row_begin(h);
        html_cell_text(h, parts[k].label);
        snprintf(key, sizeof key, "%sbreakdown_s.%s", prefix, parts[k].key);
        html_cell_num(h, key, doc_num(bd, parts[k].key), "%.4f", 1);
        html_raw(h, "<td>%.1f</td>", 100 * doc_num(bd, parts[k].key) / step);
        html_row_end(h);
        tlabel(&csv, parts[k].label);
        tprintf(&csv, ",%.9g,%.9g\n", doc_num(bd, parts[k].key), doc_num(bd, parts[k].key) / step);
    }
    html_table_end(h);
    int rc = tsave(&csv, c->dir, "breakdown.csv", err);
    if (rc)
        return rc;
    text_t m = {0};
    tprintf(&m, "kind,gib\n");
    for (int k = 0; k < N_MEM; k++)
    {
        tlabel(&m, mem_parts[k].label);
        tprintf(&m, ",%.9g\n", doc_num(mem, mem_parts[k].key));
    }
    tprintf(&m, "total,%.9g\n", doc_num(mem, "total"));
    if ((rc = tsave(&m, c->dir, "memory.csv", err)))
        return rc;
    char body[2048];
    snprintf(body, sizeof body,
             "set title 'Step time by part (exposed seconds; they add up to the step)'\n"
             "set style fill solid 0.9\nset boxwidth 0.7\nset xlabel 'part of the step'\n"
             "set ylabel 'seconds per step'\nset yrange [0:*]\nset xtics rotate by -30\nunset key\n"
             "plot 'breakdown.csv' skip 1 using 0:2:xtic(1) with boxes lt 1");
    if ((rc = figure(c, "breakdown", "Where one step's time goes", body, err)))
        return rc;
    snprintf(body, sizeof body,
             "set title 'Memory per GPU (peak pipeline stage) against capacity'\n"
             "set style fill solid 0.9\nset boxwidth 0.7\nset xlabel 'kind of memory'\n"
             "set ylabel 'GiB per GPU'\nset yrange [0:%.9g]\n"
             "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead lt 4 dt 2 lw 2\n"
             "set label 'capacity %.1f GiB (total %.1f GiB)' at graph 0.02, first %.9g offset 0,0.8 tc rgb '#c23b4e'\n"
             "unset key\nplot 'memory.csv' skip 1 using 0:2:($0==5?1:3):xtic(1) with boxes lc variable",
             1.15 * fmax(doc_num(mem, "capacity"), doc_num(mem, "total")), doc_num(mem, "capacity"),
             doc_num(mem, "capacity"), doc_num(mem, "capacity"), doc_num(mem, "total"), doc_num(mem, "capacity"));
    return figure(c, "memory", "Per-GPU memory by kind", body, err);
}

static int render_sim(const cJSON *r, ctx_t *c, err_t *err)
{
    html_t *h = c->h;
    char lay[200], line[512], tps[32];
    layout_text_from_json(doc_obj(r, "layout"), lay, sizeof lay);
    snprintf(line, sizeof line, "%s on %.0f x %s, layout %s: one step takes %.3f s, %s tokens/s, "
                                "MFU %.1f%% of bf16 dense peak%s.",
             doc_str(r, "model"), doc_num(r, "gpus"), doc_str(r, "gpu"), lay, doc_num(r, "step_time_s"),
             numfmt_count(doc_num(r, "tokens_per_s"), tps, sizeof tps), 100 * doc_num(r, "mfu"),
             cJSON_IsFalse(doc_obj(r, "fits")) ? "; it does NOT fit in GPU memory" : "");
    html_paragraph(h, "rec", line);
    static const measure_t rows[] = {{"step_time_s", "step time (s)", "%.4f", 1},
                                     {"tokens_per_s", "tokens/s", "%.0f", 1},
                                     {"model_tflops_per_gpu", "model TFLOP/s per GPU", "%.1f", 1},
                                     {"hardware_tflops_per_gpu", "hardware TFLOP/s per GPU", "%.1f", 1},
                                     {"mfu", "MFU (%)", "%.2f", 100},
                                     {"hfu", "HFU (%)", "%.2f", 100}};
    measures_table(h, r, NULL, NULL, rows, sizeof rows / sizeof rows[0]);
    int rc = render_breakdown_and_memory(r, c, "", err);
    if (!rc)
        rc = render_timeline(doc_obj(r, "timeline"), doc_num(doc_obj(r, "layout"), "pp"), c, err);
    if (!rc)
        summary_glossary(h);
    return rc;
}

/* ------------------------------------------------------------ reliability */

static int render_reliability(const cJSON *r, ctx_t *c, err_t *err)
{
    html_t *h = c->h;
    char line[512];
    snprintf(line, sizeof line,
             "%.0f x %s with failure rates '%s': the run takes %.2f days (P50; P10 %.2f, P90 "
             "%.2f) at %.1f%% goodput, with %.1f interruptions expected.",
             doc_num(r, "gpus"), doc_str(r, "gpu"), doc_str(r, "failure_rates"), doc_num(r, "wall_days_p50"),
             doc_num(r, "wall_days_p10"), doc_num(r, "wall_days_p90"), 100 * doc_num(r, "goodput"),
             doc_num(r, "interruptions_mean"));
    html_paragraph(h, "rec", line);
    static const measure_t rows[] = {{"wall_days_p10", "days P10", "%.2f", 1},
                                     {"wall_days_p50", "days P50", "%.2f", 1},
                                     {"wall_days_p90", "days P90", "%.2f", 1},
                                     {"goodput", "goodput (%)", "%.2f", 100},
                                     {"interruptions_mean", "interruptions", "%.1f", 1},
                                     {"mtbf_hours", "job MTBF (h)", "%.2f", 1},
                                     {"checkpoint_interval_s", "checkpoint interval (s)", "%.0f", 1},
                                     {"young_daly_interval_s", "Young/Daly interval (s)", "%.0f", 1},
                                     {"lost_gpu_hours", "lost GPU-hours", "%.0f", 1}};
    measures_table(h, r, NULL, NULL, rows, sizeof rows / sizeof rows[0]);
    html_heading(h, "Interruptions by cause");
    static const char *ch[] = {"cause", "expected interruptions"};
    html_table_begin(h, ch, 2);
    text_t csv = {0};
    tprintf(&csv, "cause,interruptions\n");
    const cJSON *by = doc_obj(r, "interruptions_by_cause"), *e;
    cJSON_ArrayForEach(e, by)
    {
        /* the cause's name comes from the result: its path is as long as it is */
        static const char prefix[] = "interruptions_by_cause.";
        size_t n = sizeof prefix + strlen(e->string);
        char *key = malloc(n);
        if (!key) {
            free(csv.s);
            return err_set(err, ERR_RUNTIME, "out of memory");
        }
        snprintf(key, n, "%s%s", prefix, e->string);
        html_row_begin(h);
        html_cell_text(h, e->string);
        html_cell_num(h, key, e->valuedouble, "%.2f", 1);
        free(key);
        html_row_end(h);
        tlabel(&csv, e->string);
        tprintf(&csv, ",%.9g\n", e->valuedouble);
    }
    html_table_end(h);
    int rc = tsave(&csv, c->dir, "causes.csv", err);
    if (rc)
        return rc;
    char body[2048];
    snprintf(body, sizeof body,
             "set title 'Expected interruptions by cause'\nset style fill solid 0.9\nset boxwidth 0.7\n"
             "set xlabel 'cause'\nset ylabel 'interruptions over the run'\nset yrange [0:*]\n"
             "set xtics rotate by -30\nunset key\n"
             "plot 'causes.csv' skip 1 using 0:2:xtic(1) with boxes lt 4");
    if ((rc = figure(c, "causes", "What interrupts the run", body, err)))
        return rc;
    return render_sweep(doc_obj(r, "interval_sweep"), doc_num(r, "optimal_interval_s"),
                        doc_num(r, "young_daly_interval_s"), c, err);
}

/* ------------------------------------------------------------ validate */

static int render_validate(const cJSON *r, ctx_t *c, err_t *err)
{
    html_t *h = c->h;
    char line[512];
    snprintf(line, sizeof line,
             "Predicted against measured for %s on %s: step time predicted %.4f s, measured %.4f s "
             "(%+.1f%%).",
             doc_str(r, "model"), doc_str(r, "gpu"), doc_num(r, "predicted_step_time_s"),
             doc_num(r, "measured_step_time_s"), 100 * doc_num(r, "step_time_error"));
    html_paragraph(h, "rec", line);
    static const char *hdr[] = {"component", "predicted (s)", "measured (s)", "error (%)"};
    html_table_begin(h, hdr, 4);
    text_t csv = {0};
    tprintf(&csv, "component,predicted_s,measured_s,error\n");
    const cJSON *comp = doc_obj(r, "components"), *e;
    int i = 0;
    cJSON_ArrayForEach(e, comp)
    {
        char key[64];
        html_row_begin(h);
        html_cell_text(h, doc_str(e, "name"));
        snprintf(key, sizeof key, "components[%d].predicted_s", i);
        html_cell_num(h, key, doc_num(e, "predicted_s"), "%.4f", 1);
        snprintf(key, sizeof key, "components[%d].measured_s", i);
        html_cell_num(h, key, doc_num(e, "measured_s"), "%.4f", 1);
        snprintf(key, sizeof key, "components[%d].error", i);
        html_cell_num(h, key, doc_num(e, "error"), "%+.1f", 100);
        html_row_end(h);
        tlabel(&csv, doc_str(e, "name"));
        tprintf(&csv, ",%.9g,%.9g,%.9g\n", doc_num(e, "predicted_s"), doc_num(e, "measured_s"),
                doc_num(e, "error"));
        i++;
    }
    html_table_end(h);
    int rc = tsave(&csv, c->dir, "components.csv", err);
    if (rc)
        return rc;
    char body[2048];
    snprintf(body, sizeof body,
             "set title 'Predicted against measured, per component'\n"
             "set xlabel 'measured (s per step)'\nset ylabel 'predicted (s per step)'\n"
             "set logscale xy\nset size square\n"
             "plot 'components.csv' skip 1 using 3:2 with points lt 1 pt 7 ps 1.5 title 'component', "
             "'' skip 1 using 3:2:1 with labels offset 1,0.5 left font ',9' notitle, "
             "x with lines lt 8 dt 2 title 'predicted = measured'");
    return figure(c, "validate", "Each component of the step, simulated against measured", body, err);
}

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

/* Every run's measured quantities, predicted against measured. */
static void runs_table(const cJSON *runs, html_t *h)
{
    html_heading(h, "Each run against its prediction");
    static const char *hdr[] = {"run", "GPUs", "quantity", "predicted", "measured", "error (%)",
                                "verdict"};
    html_table_begin(h, hdr, 7);
    int i = 0;
    const cJSON *run, *q;
    cJSON_ArrayForEach(run, runs)
    {
        int k = 0;
        cJSON_ArrayForEach(q, doc_obj(run, "quantities"))
        {
            char key[96];
            if (!isfinite(doc_num(q, "measured"))) {
                k++;
                continue;
            }
            bool mfu = strcmp(doc_str(q, "key"), "mfu") == 0;
            const char *fmt = mfu ? "%.3f" : doc_num(q, "predicted") >= 1000 ? "%.0f" : "%.4g";
            html_row_begin(h);
            html_cell_text(h, doc_str(run, "label"));
            snprintf(key, sizeof key, "runs[%d].gpus", i);
            html_cell_num(h, key, doc_num(run, "gpus"), "%.0f", 1);
            html_cell_text(h, doc_str(q, "name"));
            snprintf(key, sizeof key, "runs[%d].quantities[%d].predicted", i, k);
            html_cell_num(h, key, doc_num(q, "predicted"), fmt, 1);
            snprintf(key, sizeof key, "runs[%d].quantities[%d].measured", i, k);
            html_cell_num(h, key, doc_num(q, "measured"), fmt, 1);
            snprintf(key, sizeof key, "runs[%d].quantities[%d].error", i, k);
            html_cell_num(h, key, doc_num(q, "error"), "%+.1f", 100);
            html_cell_text(h, k == 0 ? doc_str(run, "verdict") : "");
            html_row_end(h);
            k++;
        }
        i++;
    }
    html_table_end(h);
}

/* The doubling check: one row per measured rung, then the next rung. */
static void rungs_table(const cJSON *d, html_t *h)
{
    static const char *hdr[] = {"GPUs",          "layout",           "step predicted (s)",
                                "step measured (s)", "error (%)",       "tokens/s predicted",
                                "tokens/s measured", "scaling predicted (%)", "scaling measured (%)",
                                "falls short by (%)"};
    html_table_begin(h, hdr, 10);
    static const struct {
        const char *k, *fmt;
        double scale;
    } cols[] = {{"predicted_step_time_s", "%.4f", 1}, {"measured_step_time_s", "%.4f", 1},
                {"step_time_error", "%+.1f", 100},   {"predicted_tokens_per_s", "%.0f", 1},
                {"measured_tokens_per_s", "%.0f", 1}, {"predicted_efficiency", "%.1f", 100},
                {"measured_efficiency", "%.1f", 100}, {"shortfall", "%+.1f", 100}};
    int i = 0;
    const cJSON *g;
    cJSON_ArrayForEach(g, doc_obj(d, "rungs"))
    {
        char key[96], lay[200];
        html_raw(h, cJSON_IsTrue(doc_obj(g, "flagged")) ? "<tr class=\"flag\">" : "<tr>");
        snprintf(key, sizeof key, "doubling.rungs[%d].gpus", i);
        html_cell_num(h, key, doc_num(g, "gpus"), "%.0f", 1);
        layout_text_from_json(doc_obj(g, "layout"), lay, sizeof lay);
        html_cell_text(h, lay);
        for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
            snprintf(key, sizeof key, "doubling.rungs[%d].%s", i, cols[k].k);
            html_cell_num(h, key, doc_num(g, cols[k].k), cols[k].fmt, cols[k].scale);
        }
        html_row_end(h);
        i++;
    }
    const cJSON *n = doc_obj(d, "next");
    if (cJSON_IsObject(n)) {
        char lay[200];
        html_raw(h, "<tr class=\"best\">");
        html_cell_num(h, "doubling.next.gpus", doc_num(n, "gpus"), "%.0f", 1);
        layout_text_from_json(doc_obj(n, "layout"), lay, sizeof lay);
        html_cell_text(h, lay);
        html_cell_num(h, "doubling.next.predicted_step_time_s", doc_num(n, "predicted_step_time_s"),
                      "%.4f", 1);
        html_cell_text(h, "next rung");
        html_cell_text(h, "");
        html_cell_num(h, "doubling.next.predicted_tokens_per_s", doc_num(n, "predicted_tokens_per_s"),
                      "%.0f", 1);
        html_cell_text(h, "");
        html_cell_num(h, "doubling.next.predicted_efficiency", doc_num(n, "predicted_efficiency"),
                      "%.1f", 100);
        html_cell_text(h, "");
        html_cell_text(h, "");
        html_row_end(h);
    }
    html_table_end(h);
}

/* The cause, the re-fit and the next rung in words. */
static void doubling_text(const cJSON *d, html_t *h)
{
    char line[1024];
    const cJSON *causes = doc_obj(d, "causes"), *top = cJSON_GetArrayItem(causes, 0);
    if (isfinite(doc_num(d, "flagged_gpus"))) {
        if (top && cJSON_IsTrue(doc_obj(top, "explains")))
            snprintf(line, sizeof line,
                     "The %.0f-GPU rung falls short. Most likely cause: %s, which would have to "
                     "take %.3f s instead of the simulated %.3f s per step: %s %.2fx slower "
                     "than the profile's %s %.3g says.",
                     doc_num(d, "flagged_gpus"), report_part_label(doc_str(top, "part")),
                     doc_num(top, "part_needed_s"), doc_num(top, "part_predicted_s"),
                     doc_str(top, "factor_name"), doc_num(top, "slowdown"), doc_str(top, "profile_field"),
                     doc_num(top, "profile_value"));
        else
            snprintf(line, sizeof line,
                     "The %.0f-GPU rung falls short, and no single profile factor explains it "
                     "without also slowing the rungs that matched: something specific to that run "
                     "fits best.",
                     doc_num(d, "flagged_gpus"));
    } else {
        snprintf(line, sizeof line, "Every rung scales within the tolerance of the prediction.");
    }
    html_paragraph(h, "rec", line);
    const cJSON *n = doc_obj(d, "next");
    if (cJSON_IsObject(n)) {
        snprintf(line, sizeof line,
                 "Next doubling, %.0f GPUs: %.3f s per step (interval %.3f to %.3f s), %.0f "
                 "tokens/s, with the profile re-fitted to the measured rungs; the profile as it "
                 "was says %.3f s.",
                 doc_num(n, "gpus"), doc_num(n, "predicted_step_time_s"), doc_num(n, "step_time_low_s"),
                 doc_num(n, "step_time_high_s"), doc_num(n, "predicted_tokens_per_s"),
                 doc_num(n, "uncorrected_step_time_s"));
        html_paragraph(h, NULL, line);
    }
}

/* ladder_plot.csv from the doubling check's predictions, for a result
 * without a plan: the columns the plan's file has, the unused ones empty. */
static int predicted_ladder_csv(const cJSON *d, ctx_t *c, err_t *err)
{
    text_t plot = {0};
    ladder_plot_header(&plot);
    double first = NAN;
    const cJSON *g;
    cJSON_ArrayForEach(g, doc_obj(d, "rungs"))
    {
        double gpus = doc_num(g, "gpus"), tps = doc_num(g, "predicted_tokens_per_s");
        if (!isfinite(first))
            first = tps / gpus;
        tprintf(&plot, "%.0f,%.9g,%.9g,", gpus, tps, 100 * doc_num(g, "predicted_efficiency"));
        /* days, cost, the breakdown, memory and capacity stay empty */
        for (int k = 0; k < 4 + N_PARTS + N_MEM + 1; k++)
            tprintf(&plot, ",");
        tprintf(&plot, ",%.9g\n", first * gpus);
    }
    return tsave(&plot, c->dir, "ladder_plot.csv", err);
}

/* measured.csv and next.csv for the ladder plot. */
static int measured_csvs(const cJSON *d, ctx_t *c, ladder_extra_t *extra, err_t *err)
{
    text_t m = {0}, n = {0};
    tprintf(&m, "gpus,measured_tokens_per_s,measured_scaling_pct,predicted_tokens_per_s\n");
    const cJSON *g;
    cJSON_ArrayForEach(g, doc_obj(d, "rungs"))
    tprintf(&m, "%.0f,%.9g,%.9g,%.9g\n", doc_num(g, "gpus"), doc_num(g, "measured_tokens_per_s"),
            100 * doc_num(g, "measured_efficiency"), doc_num(g, "predicted_tokens_per_s"));
    const cJSON *nx = doc_obj(d, "next");
    extra->measured = true;
    extra->next = cJSON_IsObject(nx);
    tprintf(&n, "gpus,tokens_per_s,tokens_per_s_low,tokens_per_s_high\n");
    if (extra->next)
        tprintf(&n, "%.0f,%.9g,%.9g,%.9g\n", doc_num(nx, "gpus"), doc_num(nx, "predicted_tokens_per_s"),
                doc_num(nx, "tokens_per_s_low"), doc_num(nx, "tokens_per_s_high"));
    int rc = tsave(&m, c->dir, "measured.csv", err);
    if (!rc)
        rc = tsave(&n, c->dir, "next.csv", err);
    else
        free(n.s);
    return rc;
}

static int render_validate_logs(const cJSON *r, ctx_t *c, err_t *err)
{
    const cJSON *runs = doc_obj(r, "runs"), *d = doc_obj(r, "doubling"), *pl = doc_obj(r, "plan_ladder");
    char line[512];
    snprintf(line, sizeof line,
             "%d training log%s against the simulator's prediction for the configuration each "
             "prints, at a tolerance of %.0f%%.",
             cJSON_GetArraySize(runs), cJSON_GetArraySize(runs) == 1 ? "" : "s",
             100 * doc_num(r, "tolerance"));
    html_paragraph(c->h, "rec", line);
    runs_table(runs, c->h);
    if (!cJSON_IsObject(d)) {
        if (cJSON_IsString(doc_obj(r, "doubling_why_not")))
            html_paragraph(c->h, "note", doc_str(r, "doubling_why_not"));
        return ERR_OK;
    }
    html_heading(c->h, "Doubling check");
    doubling_text(d, c->h);
    rungs_table(d, c->h);
    int rc, feasible = 0;
    ladder_extra_t extra = {false, false, cJSON_IsArray(pl)};
    if (cJSON_IsArray(pl))
        rc = ladder_csvs(pl, c, &feasible, err);
    else
        rc = predicted_ladder_csv(d, c, err);
    if (rc || (rc = measured_csvs(d, c, &extra, err)))
        return rc;
    html_heading(c->h, "Plots");
    return ladder_plot(c, &extra, err);
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
    {"plan", "Training plan", "ladder", check_plan, render_plan},
    {"validate", "Predicted against measured", "components", check_validate, render_validate},
    {"validate-log", "Training logs against the simulator", "runs", check_validate_logs,
     render_validate_logs},
    {"reliability", "Failures, checkpoints and restarts", "wall_days_p50", check_reliability,
     render_reliability},
    {"sim", "One training step", "breakdown_s", check_sim, render_sim},
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
