/* The pages of the other kinds of result (split off from report.c,
 * issue 34): sim, reliability, validate --measured and validate --log. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numfmt.h"
#include "models/layout_text.h"
#include "reports/docread.h"
#include "reports/html.h"
#include "reports/logcheck.h"
#include "reports/reportInt.h"
#include "reports/summary.h"

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
    report_tprintf(&csv, "part,seconds,share\n");
    for (int k = 0; k < N_PARTS; k++) {
        char key[64];
        html_row_begin(h);
        html_cell_text(h, report_parts[k].label);
        snprintf(key, sizeof key, "%sbreakdown_s.%s", prefix, report_parts[k].key);
        html_cell_num(h, key, doc_num(bd, report_parts[k].key), "%.4f", 1);
        html_raw(h, "<td>%.1f</td>", 100 * doc_num(bd, report_parts[k].key) / step);
        html_row_end(h);
        report_tlabel(&csv, report_parts[k].label);
        report_tprintf(&csv, ",%.9g,%.9g\n", doc_num(bd, report_parts[k].key), doc_num(bd, report_parts[k].key) / step);
    }
    html_table_end(h);
    int rc = report_tsave(&csv, c->dir, "breakdown.csv", err);
    if (rc)
        return rc;
    text_t m = {0};
    report_tprintf(&m, "kind,gib\n");
    for (int k = 0; k < N_MEM; k++)
    {
        report_tlabel(&m, report_mem_parts[k].label);
        report_tprintf(&m, ",%.9g\n", doc_num(mem, report_mem_parts[k].key));
    }
    report_tprintf(&m, "total,%.9g\n", doc_num(mem, "total"));
    if ((rc = report_tsave(&m, c->dir, "memory.csv", err)))
        return rc;
    char body[2048];
    snprintf(body, sizeof body,
             "set title 'Step time by part (exposed seconds; they add up to the step)'\n"
             "set style fill solid 0.9\nset boxwidth 0.7\nset xlabel 'part of the step'\n"
             "set ylabel 'seconds per step'\nset yrange [0:*]\nset xtics rotate by -30\nunset key\n"
             "plot 'breakdown.csv' skip 1 using 0:2:xtic(1) with boxes lt 1");
    if ((rc = report_figure(c, "breakdown", "Where one step's time goes", body, err)))
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
    return report_figure(c, "memory", "Per-GPU memory by kind", body, err);
}

int report_render_sim(const cJSON *r, ctx_t *c, err_t *err)
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
    report_measures_table(h, r, NULL, NULL, rows, sizeof rows / sizeof rows[0]);
    int rc = render_breakdown_and_memory(r, c, "", err);
    if (!rc)
        rc = report_render_timeline(doc_obj(r, "timeline"), doc_num(doc_obj(r, "layout"), "pp"), c, err);
    if (!rc)
        summary_glossary(h);
    return rc;
}

/* ------------------------------------------------------------ reliability */

int report_render_reliability(const cJSON *r, ctx_t *c, err_t *err)
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
    report_measures_table(h, r, NULL, NULL, rows, sizeof rows / sizeof rows[0]);
    html_heading(h, "Interruptions by cause");
    static const char *ch[] = {"cause", "expected interruptions"};
    html_table_begin(h, ch, 2);
    text_t csv = {0};
    report_tprintf(&csv, "cause,interruptions\n");
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
        report_tlabel(&csv, e->string);
        report_tprintf(&csv, ",%.9g\n", e->valuedouble);
    }
    html_table_end(h);
    int rc = report_tsave(&csv, c->dir, "causes.csv", err);
    if (rc)
        return rc;
    char body[2048];
    snprintf(body, sizeof body,
             "set title 'Expected interruptions by cause'\nset style fill solid 0.9\nset boxwidth 0.7\n"
             "set xlabel 'cause'\nset ylabel 'interruptions over the run'\nset yrange [0:*]\n"
             "set xtics rotate by -30\nunset key\n"
             "plot 'causes.csv' skip 1 using 0:2:xtic(1) with boxes lt 4");
    if ((rc = report_figure(c, "causes", "What interrupts the run", body, err)))
        return rc;
    return report_render_sweep(doc_obj(r, "interval_sweep"), doc_num(r, "optimal_interval_s"),
                               doc_num(r, "young_daly_interval_s"), c, err);
}

/* ------------------------------------------------------------ validate */

int report_render_validate(const cJSON *r, ctx_t *c, err_t *err)
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
    report_tprintf(&csv, "component,predicted_s,measured_s,error\n");
    static const report_col_t cols[] = {{"predicted_s", "%.4f", 1}, {"measured_s", "%.4f", 1},
                                         {"error", "%+.1f", 100}};
    const cJSON *comp = doc_obj(r, "components"), *e;
    int i = 0;
    cJSON_ArrayForEach(e, comp)
    {
        html_row_begin(h);
        html_cell_text(h, doc_str(e, "name"));
        report_num_cells(h, "components", i, e, cols, sizeof cols / sizeof cols[0]);
        html_row_end(h);
        report_tlabel(&csv, doc_str(e, "name"));
        report_tprintf(&csv, ",%.9g,%.9g,%.9g\n", doc_num(e, "predicted_s"), doc_num(e, "measured_s"),
                       doc_num(e, "error"));
        i++;
    }
    html_table_end(h);
    int rc = report_tsave(&csv, c->dir, "components.csv", err);
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
    return report_figure(c, "validate", "Each component of the step, simulated against measured", body, err);
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
    static const report_col_t gpus[] = {{"gpus", "%.0f", 1}};
    static const report_col_t cols[] = {
        {"predicted_step_time_s", "%.4f", 1}, {"measured_step_time_s", "%.4f", 1},
        {"step_time_error", "%+.1f", 100},   {"predicted_tokens_per_s", "%.0f", 1},
        {"measured_tokens_per_s", "%.0f", 1}, {"predicted_efficiency", "%.1f", 100},
        {"measured_efficiency", "%.1f", 100}, {"shortfall", "%+.1f", 100}};
    int i = 0;
    const cJSON *g;
    cJSON_ArrayForEach(g, doc_obj(d, "rungs"))
    {
        char lay[200];
        html_raw(h, cJSON_IsTrue(doc_obj(g, "flagged")) ? "<tr class=\"flag\">" : "<tr>");
        report_num_cells(h, "doubling.rungs", i, g, gpus, 1);
        layout_text_from_json(doc_obj(g, "layout"), lay, sizeof lay);
        html_cell_text(h, lay);
        report_num_cells(h, "doubling.rungs", i, g, cols, sizeof cols / sizeof cols[0]);
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
    report_ladder_plot_header(&plot);
    double first = NAN;
    const cJSON *g;
    cJSON_ArrayForEach(g, doc_obj(d, "rungs"))
    {
        double gpus = doc_num(g, "gpus"), tps = doc_num(g, "predicted_tokens_per_s");
        if (!isfinite(first))
            first = tps / gpus;
        report_tprintf(&plot, "%.0f,%.9g,%.9g,", gpus, tps, 100 * doc_num(g, "predicted_efficiency"));
        /* days, cost, the breakdown, memory and capacity stay empty */
        for (int k = 0; k < 4 + N_PARTS + N_MEM + 1; k++)
            report_tprintf(&plot, ",");
        report_tprintf(&plot, ",%.9g\n", first * gpus);
    }
    return report_tsave(&plot, c->dir, "ladder_plot.csv", err);
}

/* measured.csv and next.csv for the ladder plot. */
static int measured_csvs(const cJSON *d, ctx_t *c, ladder_extra_t *extra, err_t *err)
{
    text_t m = {0}, n = {0};
    report_tprintf(&m, "gpus,measured_tokens_per_s,measured_scaling_pct,predicted_tokens_per_s\n");
    const cJSON *g;
    cJSON_ArrayForEach(g, doc_obj(d, "rungs"))
    report_tprintf(&m, "%.0f,%.9g,%.9g,%.9g\n", doc_num(g, "gpus"), doc_num(g, "measured_tokens_per_s"),
                   100 * doc_num(g, "measured_efficiency"), doc_num(g, "predicted_tokens_per_s"));
    const cJSON *nx = doc_obj(d, "next");
    extra->measured = true;
    extra->next = cJSON_IsObject(nx);
    report_tprintf(&n, "gpus,tokens_per_s,tokens_per_s_low,tokens_per_s_high\n");
    if (extra->next)
        report_tprintf(&n, "%.0f,%.9g,%.9g,%.9g\n", doc_num(nx, "gpus"), doc_num(nx, "predicted_tokens_per_s"),
                       doc_num(nx, "tokens_per_s_low"), doc_num(nx, "tokens_per_s_high"));
    int rc = report_tsave(&m, c->dir, "measured.csv", err);
    if (!rc)
        rc = report_tsave(&n, c->dir, "next.csv", err);
    else
        free(n.s);
    return rc;
}

int report_render_validate_logs(const cJSON *r, ctx_t *c, err_t *err)
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
        rc = report_ladder_csvs(pl, c, &feasible, err);
    else
        rc = predicted_ladder_csv(d, c, err);
    if (rc || (rc = measured_csvs(d, c, &extra, err)))
        return rc;
    html_heading(c->h, "Plots");
    return report_ladder_plot(c, &extra, err);
}
