/* The plan's page (split off from report.c, issue 34): the ladder's table,
 * CSV files and plots, the Pareto front, and the best rung's checkpoint
 * sweep and step timeline, which the sim and reliability pages draw too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/layout_text.h"
#include "reports/docread.h"
#include "reports/html.h"
#include "reports/reportInt.h"
#include "reports/summary.h"

/* The simulated timeline of one step: pipeline stages against time, each
 * task a box colored by its kind (nothing when the result has none). */
int report_render_timeline(const cJSON *tl, double pp, ctx_t *c, err_t *err)
{
    if (!cJSON_IsArray(tl) || cJSON_GetArraySize(tl) == 0)
        return ERR_OK;
    static const char *kinds[] = {"fwd", "bwd", "send", "dp reduce", "embedding grad sync",
                                  "step sync", "optimizer", "param all-gather"};
    enum { N_KINDS = sizeof kinds / sizeof kinds[0] };
    text_t csv = {0};
    report_tprintf(&csv, "stage,stream,kind,start_s,end_s,color,y\n");
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
        report_tprintf(&csv, "%.0f,%.0f,", stage, stream);
        report_tlabel(&csv, k);
        report_tprintf(&csv, ",%.9g,%.9g,%d,%.2f\n", doc_num(e, "start_s"), doc_num(e, "end_s"), color, y);
    }
    int rc = report_tsave(&csv, c->dir, "timeline.csv", err);
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
    return report_figure(c, "timeline",
                         "One step, simulated: each pipeline stage's tasks over time, colored by kind",
                         body, err);
}

/* Goodput against the checkpoint interval, with the simulated optimum and
 * Young/Daly marked (nothing when the result has no sweep). */
int report_render_sweep(const cJSON *sw, double best_s, double young_daly_s, ctx_t *c, err_t *err)
{
    if (!cJSON_IsArray(sw) || cJSON_GetArraySize(sw) == 0)
        return ERR_OK;
    text_t s = {0};
    report_tprintf(&s, "interval_min,goodput_pct\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, sw)
    report_tprintf(&s, "%.9g,%.9g\n", doc_num(e, "interval_s") / 60, 100 * doc_num(e, "goodput"));
    int rc = report_tsave(&s, c->dir, "interval_sweep.csv", err);
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
    return report_figure(c, "goodput",
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
    report_tprintf(&csv, "gpus,rung_best,pareto_front,days_p10,days_p50,days_p90,cost_usd\n");
    for (int i = 0; i < n; i++)
        report_tprintf(&csv, "%.0f,%d,%d,%.9g,%.9g,%.9g,%.9g\n", v[i].gpus, v[i].best, v[i].front,
                       v[i].p10, v[i].p50, v[i].p90, v[i].cost);
    text_t front = {0};
    report_tprintf(&front, "days_p50,cost_usd\n");
    for (int i = 0; i < n; i++)
        if (v[i].front)
            report_tprintf(&front, "%.9g,%.9g\n", v[i].p50, v[i].cost);
    free(v);
    int rc = report_tsave(&csv, c->dir, "pareto.csv", err);
    if (rc || (rc = report_tsave(&front, c->dir, "pareto_front.csv", err)) || n == 0)
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
    return report_figure(c, "pareto",
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
    report_measures_table(h, r, "GPU", doc_str(r, "gpu"), facts, sizeof facts / sizeof facts[0]);
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
void report_ladder_plot_header(text_t *plot)
{
    report_tprintf(plot, "gpus,tokens_per_s,scaling_pct,main_loss,days_p10,days_p50,days_p90,cost_usd");
    for (int k = 0; k < N_PARTS; k++)
        report_tprintf(plot, ",%s", report_parts[k].key);
    for (int k = 0; k < N_MEM; k++)
        report_tprintf(plot, ",%s", report_mem_parts[k].key);
    report_tprintf(plot, ",capacity,linear_tokens_per_s\n");
}

/* The data behind the ladder's table and plots: ladder.csv (every figure
 * of every rung) and ladder_plot.csv (what the plots read). Sets *feasible
 * to the number of rungs that fit. */
int report_ladder_csvs(const cJSON *ladder, ctx_t *c, int *feasible, err_t *err)
{
    text_t csv = {0}, plot = {0};
    report_tprintf(&csv, "gpus,feasible,layout,step_time_s,tokens_per_s,mfu,scaling_efficiency,main_loss,"
                         "days_p10,days_p50,days_p90,interruptions_mean,gpu_hours,cost_usd,cost_per_day_usd");
    for (int k = 0; k < N_PARTS; k++)
        report_tprintf(&csv, ",bd_%s_s", report_parts[k].key);
    for (int k = 0; k < N_MEM; k++)
        report_tprintf(&csv, ",mem_%s_gib", report_mem_parts[k].key);
    report_tprintf(&csv, ",capacity_gib\n");
    report_ladder_plot_header(&plot);
    double per_gpu_first = NAN; /* tokens/s per GPU at the first rung that fits */
    *feasible = 0;
    const cJSON *rung;
    cJSON_ArrayForEach(rung, ladder)
    {
        if (!cJSON_IsTrue(doc_obj(rung, "feasible"))) {
            report_tprintf(&csv, "%.0f,false,", doc_num(rung, "gpus"));
            report_tcell(&csv, doc_str(rung, "why_not"));
            report_tprintf(&csv, "\n");
            continue;
        }
        (*feasible)++;
        char lay[200];
        layout_text_from_json(doc_obj(rung, "layout"), lay, sizeof lay);
        const cJSON *bd = doc_obj(rung, "breakdown_s"), *mem = doc_obj(rung, "memory_gib");
        report_tprintf(&csv, "%.0f,true,", doc_num(rung, "gpus"));
        report_tcell(&csv, lay);
        report_tprintf(&csv, ",%.9g,%.9g,%.9g,%.9g,", doc_num(rung, "step_time_s"),
                       doc_num(rung, "tokens_per_s"), doc_num(rung, "mfu"), doc_num(rung, "scaling_efficiency"));
        report_tcell(&csv, doc_str(rung, "main_loss"));
        report_tprintf(&csv, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", doc_num(rung, "days_p10"),
                       doc_num(rung, "days_p50"), doc_num(rung, "days_p90"), doc_num(rung, "interruptions_mean"),
                       doc_num(rung, "gpu_hours"), doc_num(rung, "cost_usd"), doc_num(rung, "cost_per_day_usd"));
        report_tprintf(&plot, "%.0f,%.9g,%.9g,", doc_num(rung, "gpus"), doc_num(rung, "tokens_per_s"),
                       100 * doc_num(rung, "scaling_efficiency"));
        report_tlabel(&plot, doc_str(rung, "main_loss"));
        report_tprintf(&plot, ",%.9g,%.9g,%.9g,%.9g", doc_num(rung, "days_p10"), doc_num(rung, "days_p50"),
                       doc_num(rung, "days_p90"), doc_num(rung, "cost_usd"));
        for (int k = 0; k < N_PARTS; k++) {
            report_tprintf(&csv, ",%.9g", doc_num(bd, report_parts[k].key));
            report_tprintf(&plot, ",%.9g", doc_num(bd, report_parts[k].key));
        }
        for (int k = 0; k < N_MEM; k++) {
            report_tprintf(&csv, ",%.9g", doc_num(mem, report_mem_parts[k].key));
            report_tprintf(&plot, ",%.9g", doc_num(mem, report_mem_parts[k].key));
        }
        report_tprintf(&csv, ",%.9g\n", doc_num(mem, "capacity"));
        if (!isfinite(per_gpu_first))
            per_gpu_first = doc_num(rung, "tokens_per_s") / doc_num(rung, "gpus");
        report_tprintf(&plot, ",%.9g,%.9g\n", doc_num(mem, "capacity"), per_gpu_first * doc_num(rung, "gpus"));
    }
    int rc = report_tsave(&csv, c->dir, "ladder.csv", err);
    if (!rc)
        rc = report_tsave(&plot, c->dir, "ladder_plot.csv", err);
    else
        free(plot.s);
    return rc;
}

/* Columns of ladder_plot.csv the ladder plot reads (gnuplot counts from 1). */
#define LADDER_COL_LINEAR (10 + N_PARTS + N_MEM)

/* Throughput and scaling efficiency at each rung, with the linear line
 * from the first rung and each rung's main loss; with extra, the measured
 * rungs and the next rung's corrected prediction with its interval. */
int report_ladder_plot(ctx_t *c, const ladder_extra_t *extra, err_t *err)
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
    return report_figure(c, "ladder",
                         extra ? "Throughput and scaling efficiency at each doubling: predicted, measured, "
                                 "and the next rung corrected by what was measured"
                               : "Throughput and scaling efficiency at each doubling, with the main loss "
                                 "at each rung",
                         body, err);
}

/* Append to body (n of its cap bytes used) one rowstacked series per part
 * of parts[count], from ladder_plot.csv's columns first_col on, each times
 * the rung's GPUs when times_gpus. Returns the new length (n as
 * snprintf's: at or past cap when the script did not fit). */
static int stacked_series(char *body, size_t cap, int n, const report_part_t *parts, int count,
                          int first_col, bool times_gpus)
{
    for (int k = 0; k < count && n > 0 && (size_t)n < cap; k++) {
        char col[32];
        if (times_gpus)
            snprintf(col, sizeof col, "($%d*$1)", first_col + k);
        else
            snprintf(col, sizeof col, "%d", first_col + k);
        n += snprintf(body + n, cap - (size_t)n, "%s'ladder_plot.csv' skip 1 using %s%s title '%s' lt %d",
                      k ? ", " : "", col, k == 0 ? ":xtic(1)" : "", parts[k].label, k + 1);
    }
    return n;
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
    stacked_series(body, sizeof body, n, report_parts, N_PARTS, 9, true);
    return report_figure(c, "breakdown",
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
    n = stacked_series(body, sizeof body, n, report_mem_parts, N_MEM, 9 + N_PARTS, false);
    if (n > 0 && (size_t)n < sizeof body)
        snprintf(body + n, sizeof body - (size_t)n,
                 ", 'ladder_plot.csv' skip 1 using 0:%d with linespoints lt 4 dt 2 title 'GPU capacity'",
                 9 + N_PARTS + N_MEM);
    return report_figure(c, "memory", "Per-GPU memory by kind against the GPU's capacity", body, err);
}

/* The recommended rung's detail: goodput against the checkpoint interval
 * and the simulated timeline of one step. */
static int best_rung_plots(const cJSON *best, ctx_t *c, err_t *err)
{
    if (!cJSON_IsObject(best))
        return ERR_OK;
    int rc = report_render_sweep(doc_obj(best, "interval_sweep"), doc_num(best, "optimal_interval_s"),
                                 doc_num(best, "young_daly_interval_s"), c, err);
    return rc ? rc : report_render_timeline(doc_obj(best, "timeline"), doc_num(doc_obj(best, "layout"), "pp"), c, err);
}

/* The best rung rerun with one change each. */
static void what_if_table(const cJSON *w, html_t *h)
{
    if (!cJSON_IsArray(w) || cJSON_GetArraySize(w) == 0)
        return;
    html_heading(h, "What if");
    static const char *wh[] = {"change", "GPUs", "days P50", "cost (USD)", "MFU (%)"};
    html_table_begin(h, wh, 5);
    static const report_col_t cols[] = {{"gpus", "%.0f", 1}, {"days_p50", "%.2f", 1},
                                         {"cost_usd", "%.0f", 1}, {"mfu", "%.1f", 100}};
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, w)
    {
        html_row_begin(h);
        html_cell_text(h, doc_str(e, "change"));
        report_num_cells(h, "what_if", k, e, cols, sizeof cols / sizeof cols[0]);
        html_row_end(h);
        k++;
    }
    html_table_end(h);
}

int report_render_plan(const cJSON *r, ctx_t *c, err_t *err)
{
    const cJSON *ladder = doc_obj(r, "ladder");
    int feasible, rc;
    plan_summary(r, c->h);
    ladder_table(ladder, doc_obj(r, "best"), "ladder", c->h);
    if ((rc = report_ladder_csvs(ladder, c, &feasible, err)))
        return rc;
    if (feasible > 0) {
        html_heading(c->h, "Plots");
        if ((rc = report_ladder_plot(c, NULL, err)) || (rc = ladder_breakdown_plot(c, err)) ||
            (rc = ladder_memory_plot(c, err)) || (rc = render_pareto(ladder, c, err)) ||
            (rc = best_rung_plots(doc_obj(r, "best"), c, err)))
            return rc;
        what_if_table(doc_obj(r, "what_if"), c->h);
    }
    summary_glossary(c->h);
    return ERR_OK;
}
