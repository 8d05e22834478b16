#include "reports/cluster_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/docread.h"

#define W_PX 960.0      /* chart width */
#define LEFT_PX 150.0   /* job names */
#define ROW_PX 14.0
#define UTIL_H_PX 180.0

static const char *const how_color[] = {"#4a7ebb", "#e0a030", "#c0392b", "#8e44ad"};
static const char *const how_names[] = {"finished", "preempted", "failed", "reclaimed"};

int cluster_report_check(const cJSON *r, const char *src, err_t *err)
{
    static const char *const nums[] = {"makespan_s", "utilization", "gpus"};
    static const char *const arrs[] = {"jobs", "segments", "in_use"};
    for (int i = 0; i < 3; i++)
        if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, nums[i])))
            return err_setf(err, ERR_INPUT, src, nums[i], "missing or not a number");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "timeline");
    for (int i = 0; i < 3; i++)
        if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(t, arrs[i]))) {
            char key[40];
            snprintf(key, sizeof key, "timeline.%s", arrs[i]);
            return err_setf(err, ERR_INPUT, src, key, "missing or not an array");
        }
    return ERR_OK;
}

static void summary(const cJSON *r, html_t *h)
{
    static const struct {
        const char *key, *label, *fmt;
        double scale;
    } rows[] = {
        {"makespan_s", "makespan (days)", "%.2f", 1 / 86400.0},
        {"utilization", "utilization (%)", "%.1f", 100},
        {"queue_delay_mean_s", "queue delay, mean (h)", "%.2f", 1 / 3600.0},
        {"queue_delay_p99_s", "queue delay, p99 (h)", "%.2f", 1 / 3600.0},
        {"jct_mean_s", "completion time, mean (h)", "%.2f", 1 / 3600.0},
        {"jct_p50_s", "completion time, p50 (h)", "%.2f", 1 / 3600.0},
        {"jain_fairness", "Jain's fairness index", "%.3f", 1},
        {"finish_time_fairness_max", "max finish-time fairness", "%.2f", 1},
        {"cost_usd", "cost (USD)", "%.0f", 1},
    };
    static const char *hdr[] = {"measure", "value"};
    html_table_begin(h, hdr, 2);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, rows[i].key)))
            continue;
        html_row_begin(h);
        html_cell_text(h, rows[i].label);
        html_cell_num(h, rows[i].key, doc_num(r, rows[i].key), rows[i].fmt, rows[i].scale);
        html_row_end(h);
    }
    html_table_end(h);
}

/* Time axis ticks every step days (or hours) along the chart's width. */
static void axis(html_t *h, double span_s, double y)
{
    double unit = span_s > 4 * 86400 ? 86400 : 3600, step = unit;
    while (span_s / step > 12)
        step *= 2;
    for (double t = 0; t <= span_s; t += step) {
        double x = LEFT_PX + t / span_s * (W_PX - LEFT_PX);
        html_raw(h, "<line x1='%.1f' y1='0' x2='%.1f' y2='%.1f' stroke='#ddd'/>"
                 "<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>%.0f %s</text>\n",
                 x, x, y, x, y + 12, t / unit, unit == 86400 ? "d" : "h");
    }
}

static void gantt(const cJSON *r, html_t *h)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "timeline");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(t, "jobs");
    const cJSON *segs = cJSON_GetObjectItemCaseSensitive(t, "segments");
    int n = cJSON_GetArraySize(jobs), rows = n < CLUSTER_REPORT_MAX_ROWS ? n : CLUSTER_REPORT_MAX_ROWS;
    double span = fmax(doc_num(t, "end_s"), 1), y_axis = rows * ROW_PX + 4;
    html_raw(h, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
             "font-family='sans-serif'>\n", W_PX, y_axis + 20);
    axis(h, span, y_axis);
    int k = 0;
    for (const cJSON *j = jobs ? jobs->child : NULL; j && k < rows; j = j->next, k++) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "name"));
        double sub = doc_num(j, "submit_s"), st = doc_num(j, "start_s");
        html_raw(h, "<text x='2' y='%.1f' font-size='10'>", k * ROW_PX + 10);
        html_text(h, name ? name : "");
        html_raw(h, "</text>");
        if (st > sub)
            html_raw(h, "<rect x='%.1f' y='%.1f' width='%.2f' height='%.1f' fill='#eee'/>\n",
                     LEFT_PX + sub / span * (W_PX - LEFT_PX), k * ROW_PX + 2,
                     (st - sub) / span * (W_PX - LEFT_PX), ROW_PX - 4);
    }
    for (const cJSON *s = segs ? segs->child : NULL; s; s = s->next) {
        int job = (int)doc_num(s, "job"), how = (int)doc_num(s, "how");
        if (job < 0 || job >= rows || how < 0 || how > 3)
            continue;
        double a = doc_num(s, "start_s"), b = doc_num(s, "end_s");
        html_raw(h, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='%s'>"
                 "<title>%.0f GPUs, %.0f-%.0f s, %s</title></rect>\n",
                 LEFT_PX + a / span * (W_PX - LEFT_PX), job * ROW_PX + 1,
                 fmax((b - a) / span * (W_PX - LEFT_PX), 0.5), ROW_PX - 2, how_color[how],
                 doc_num(s, "gpus"), a, b, how_names[how]);
    }
    html_raw(h, "</svg>\n");
    if (n > rows)
        html_raw(h, "<p class='note'>The first %d of %d jobs are drawn.</p>\n", rows, n);
    html_raw(h, "<p class='note'>Grey: waiting; blue: a run that finished; amber: preempted; "
             "red: failed; purple: reclaimed (spot).</p>\n");
}

static void in_use(const cJSON *r, html_t *h)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "timeline");
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(t, "in_use");
    double span = fmax(doc_num(t, "end_s"), 1), pool = fmax(doc_num(r, "gpus"), 1);
    html_raw(h, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
             "font-family='sans-serif'>\n", W_PX, UTIL_H_PX + 20);
    axis(h, span, UTIL_H_PX);
    html_raw(h, "<text x='2' y='12' font-size='10'>%.0f GPUs</text>"
             "<text x='2' y='%.0f' font-size='10'>0</text>\n<polyline fill='none' "
             "stroke='#4a7ebb' stroke-width='1.5' points='", pool, UTIL_H_PX);
    double prev_y = UTIL_H_PX;
    for (const cJSON *p = pts ? pts->child : NULL; p; p = p->next) {
        double x = LEFT_PX + doc_num(p, "t_s") / span * (W_PX - LEFT_PX);
        double y = UTIL_H_PX - doc_num(p, "gpus") / pool * (UTIL_H_PX - 4);
        html_raw(h, "%.1f,%.1f %.1f,%.1f ", x, prev_y, x, y); /* a step */
        prev_y = y;
    }
    html_raw(h, "'/></svg>\n");
}

/* --policy planner: each job's asked and chosen size and layout. */
static void plan_table(const cJSON *r, html_t *h)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(r, "planner");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(p, "jobs");
    if (!cJSON_IsArray(jobs))
        return;
    static const char *hdr[] = {"job", "GPUs asked", "GPUs planned", "run time (h)", "layout"};
    char line[200];
    snprintf(line, sizeof line, "Sizes from each job's simulated scaling curve (objective %s); "
             "the sizes asked gave a makespan of %.2f days.",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "objective"))
                 ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "objective"))
                 : "?",
             doc_num(p, "fixed_makespan_s") / 86400);
    html_heading(h, "Planned sizes");
    html_paragraph(h, "note", line);
    html_table_begin(h, hdr, 5);
    for (const cJSON *j = jobs->child; j; j = j->next) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "name"));
        const char *lay = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "layout"));
        html_row_begin(h);
        html_cell_text(h, name ? name : "");
        html_cell_num(h, "planner.jobs.gpus_asked", doc_num(j, "gpus_asked"), "%.0f", 1);
        html_cell_num(h, "planner.jobs.gpus", doc_num(j, "gpus"), "%.0f", 1);
        html_cell_num(h, "planner.jobs.duration_s", doc_num(j, "duration_s"), "%.1f", 1 / 3600.0);
        html_cell_text(h, lay ? lay : "");
        html_row_end(h);
    }
    html_table_end(h);
}

/* --what-if: one row per change. */
static void whatif_table(const cJSON *r, html_t *h)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "what_if");
    if (!cJSON_IsArray(w))
        return;
    static const char *hdr[] = {"change", "GPUs", "makespan (days)", "utilization (%)",
                                "mean completion (h)", "cost (USD)"};
    html_heading(h, "What if");
    html_table_begin(h, hdr, 6);
    for (const cJSON *e = w->child; e; e = e->next) {
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "change"));
        html_row_begin(h);
        html_cell_text(h, c ? c : "");
        html_cell_num(h, "what_if.gpus", doc_num(e, "gpus"), "%.0f", 1);
        html_cell_num(h, "what_if.makespan_s", doc_num(e, "makespan_s"), "%.2f", 1 / 86400.0);
        html_cell_num(h, "what_if.utilization", doc_num(e, "utilization"), "%.1f", 100);
        html_cell_num(h, "what_if.jct_mean_s", doc_num(e, "jct_mean_s"), "%.1f", 1 / 3600.0);
        html_cell_num(h, "what_if.cost_usd", doc_num(e, "cost_usd"), "%.0f", 1);
        html_row_end(h);
    }
    html_table_end(h);
}

int cluster_report_render(const cJSON *r, html_t *h, err_t *err)
{
    char line[200];
    snprintf(line, sizeof line, "%.0f jobs on %.0f GPUs under %s.", doc_num(r, "jobs"),
             doc_num(r, "gpus"), cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "policy"))
                                 ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "policy"))
                                 : "?");
    html_paragraph(h, "rec", line);
    summary(r, h);
    html_heading(h, "Which job runs when");
    gantt(r, h);
    html_heading(h, "GPUs in use");
    in_use(r, h);
    plan_table(r, h);
    whatif_table(r, h);
    return h->failed ? err_set(err, ERR_RUNTIME, "out of memory writing the page") : ERR_OK;
}
