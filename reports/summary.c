#include "reports/summary.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/numfmt.h"
#include "models/layout_text.h"
#include "reports/docread.h"
#include "reports/glossary.h"

/* One fact of the summary: a label and its value (escaped text). */
static void fact(html_t *h, const char *label, const char *value, const char *detail)
{
    html_raw(h, "<div class=\"fact\"><div class=\"label\">");
    html_text(h, label);
    html_raw(h, "</div><div class=\"value\">");
    html_text(h, value);
    html_raw(h, "</div><div class=\"detail\">");
    html_text(h, detail);
    html_raw(h, "</div></div>\n");
}

/* The facts of the recommended rung as cards. */
static void best_facts(const cJSON *r, const cJSON *b, html_t *h)
{
    char v[256], d[320], x[32], y[32], z[32], w[64];
    snprintf(v, sizeof v, "%.0f x %s", doc_num(b, "gpus"), doc_str(r, "gpu"));
    snprintf(d, sizeof d, "at %s per GPU-hour (%s)",
             numfmt_usd(doc_num(b, "usd_per_gpu_hour"), x, sizeof x), doc_str(b, "price_provider"));
    fact(h, "Reserve", v, d);
    snprintf(v, sizeof v, "%.1f days", doc_num(b, "days_p50"));
    snprintf(d, sizeof d, "median of the simulated runs with failures and restarts; 9 in 10 "
                          "finish within %.1f days", doc_num(b, "days_p90"));
    fact(h, "Time to train", v, d);
    numfmt_usd(doc_num(b, "cost_usd"), v, sizeof v);
    snprintf(d, sizeof d, "%s per day; %s GPU-hours",
             numfmt_usd(doc_num(b, "cost_per_day_usd"), x, sizeof x),
             numfmt_count(doc_num(b, "gpu_hours"), y, sizeof y));
    fact(h, "Cost", v, d);
    snprintf(v, sizeof v, "%s tokens/s", numfmt_count(doc_num(b, "tokens_per_s"), x, sizeof x));
    snprintf(d, sizeof d, "%s tokens in all; a step every %s; MFU %s",
             numfmt_count(doc_num(r, "tokens"), y, sizeof y),
             numfmt_duration(doc_num(b, "step_time_s"), z, sizeof z),
             numfmt_pct(doc_num(b, "mfu"), "of bf16 dense peak", w, sizeof w));
    fact(h, "Throughput", v, d);
    const cJSON *lay = doc_obj(b, "layout");
    layout_text_from_json(lay, v, sizeof v);
    snprintf(d, sizeof d, "under %s in %s (the glossary at the end explains each part)",
             doc_str(b, "framework"), doc_str(lay, "precision"));
    fact(h, "Layout", v, d);
}

/* Before each doubling: what each rung up to the recommended one should
 * measure, readable numbers (the exact ones are in the ladder table). */
static void measure_table(const cJSON *r, double best_gpus, html_t *h)
{
    static const char *hdr[] = {"GPUs", "layout", "framework", "step", "tokens/s", "days (P50)",
                                "cost"};
    html_raw(h, "<h3>Measure before each doubling</h3>\n<p class=\"note\">A rung more than 10%% "
                "slower than this means something is wrong: stop and look before reserving "
                "more.</p>\n");
    html_table_begin(h, hdr, 7);
    const cJSON *rung;
    cJSON_ArrayForEach(rung, doc_obj(r, "ladder"))
    {
        if (!cJSON_IsTrue(doc_obj(rung, "feasible")) || doc_num(rung, "gpus") > best_gpus)
            continue;
        char g[32], lay[256], a[32], b[32], c[32];
        html_raw(h, doc_num(rung, "gpus") == best_gpus ? "<tr class=\"best\">" : "<tr>");
        snprintf(g, sizeof g, "%.0f", doc_num(rung, "gpus"));
        html_cell_text(h, g);
        html_cell_text(h, layout_text_from_json(doc_obj(rung, "layout"), lay, sizeof lay));
        html_cell_text(h, doc_str(rung, "framework"));
        html_raw(h, "<td>%s</td><td>%s</td><td>%.1f</td><td>%s</td></tr>\n",
                 numfmt_duration(doc_num(rung, "step_time_s"), a, sizeof a),
                 numfmt_count(doc_num(rung, "tokens_per_s"), b, sizeof b), doc_num(rung, "days_p50"),
                 numfmt_usd(doc_num(rung, "cost_usd"), c, sizeof c));
    }
    html_table_end(h);
}

/* A framework's place in the table: its tokens/s, -1 when nothing fits. */
static double fw_rank(const cJSON *f)
{
    return cJSON_IsTrue(doc_obj(f, "fits")) ? doc_num(f, "tokens_per_s") : -1;
}

/* Each framework's best layout at the recommended rung, against it. */
static void framework_table(const cJSON *b, html_t *h)
{
    const cJSON *fws = doc_obj(b, "frameworks");
    if (!cJSON_IsArray(fws) || cJSON_GetArraySize(fws) < 2)
        return;
    static const char *hdr[] = {"framework", "precision", "its best layout", "tokens/s",
                                "vs recommended"};
    html_raw(h, "<h3>Each framework's best at %.0f GPUs</h3>\n", doc_num(b, "gpus"));
    html_table_begin(h, hdr, 5);
    double best_tps = doc_num(b, "tokens_per_s");
    enum { MAX_FW = 32 };
    const cJSON *order[MAX_FW];
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, fws)
    if (n < MAX_FW)
        order[n++] = f;
    /* fastest first (the recommended is the fastest), those that fit nothing last */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && fw_rank(order[j]) > fw_rank(order[j - 1]); j--) {
            const cJSON *t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        f = order[i];
        char lay[256], t[32], gap[48];
        html_row_begin(h);
        html_cell_text(h, doc_str(f, "name"));
        html_cell_text(h, doc_str(f, "precision"));
        if (!cJSON_IsTrue(doc_obj(f, "fits"))) {
            html_raw(h, "<td class=\"t\" colspan=\"3\">nothing fits</td></tr>\n");
            continue;
        }
        html_cell_text(h, layout_text_from_json(doc_obj(f, "layout"), lay, sizeof lay));
        double tps = doc_num(f, "tokens_per_s");
        if (fabs(tps - best_tps) <= 1e-9 * best_tps)
            snprintf(gap, sizeof gap, "same");
        else
            snprintf(gap, sizeof gap, "%.1f%% %s", 100 * fabs(1 - tps / best_tps),
                     tps < best_tps ? "slower" : "faster");
        html_raw(h, "<td>%s</td><td>%s</td></tr>\n", numfmt_count(tps, t, sizeof t), gap);
    }
    html_table_end(h);
}

void summary_plan(const cJSON *r, html_t *h)
{
    const cJSON *b = doc_obj(r, "best");
    const char *rec = doc_str(r, "recommendation");
    html_raw(h, "<section id=\"summary\"><h2>Summary</h2>\n");
    if (!cJSON_IsObject(b) || !cJSON_IsTrue(doc_obj(b, "feasible"))) {
        html_paragraph(h, "rec", rec);
        html_raw(h, "</section>\n");
        return;
    }
    char t[32];
    html_raw(h, "<p class=\"lead\">");
    html_text(h, doc_str(r, "model"));
    html_raw(h, " on %s tokens: what to reserve, how long it takes, what it costs.</p>\n"
                "<div class=\"facts\">\n",
             numfmt_count(doc_num(r, "tokens"), t, sizeof t));
    best_facts(r, b, h);
    html_raw(h, "</div>\n");
    const char *first = strstr(rec, "first look at ");
    if (first) {
        html_raw(h, "<p class=\"check\"><strong>If a rung falls short, check first:</strong> ");
        html_text(h, first + strlen("first look at "));
        html_raw(h, "</p>\n");
    }
    measure_table(r, doc_num(b, "gpus"), h);
    framework_table(b, h);
    html_raw(h, "</section>\n");
}

void summary_glossary(html_t *h)
{
    static const char *hdr[] = {"term", "meaning", "Megatron-LM", "NeMo / Megatron Bridge",
                                "DeepSpeed", "torchtitan"};
    int n;
    const glossary_entry_t *e = glossary_entries(&n);
    html_raw(h, "<section id=\"glossary\"><h2>Glossary</h2>\n<p class=\"note\">Each term of the "
                "layouts and tables, and the flag or config key each framework sets it with "
                "(\"-\": the framework has no such setting).</p>\n");
    html_table_begin(h, hdr, 6);
    for (int i = 0; i < n; i++) {
        if (!e[i].sentence)
            continue;
        html_row_begin(h);
        html_raw(h, "<td class=\"t\"><code>");
        html_text(h, e[i].term);
        html_raw(h, "</code></td>");
        html_cell_text(h, e[i].sentence);
        const char *names[] = {e[i].megatron, e[i].nemo, e[i].deepspeed, e[i].torchtitan};
        for (int k = 0; k < 4; k++) {
            html_raw(h, "<td class=\"t\"><code>");
            html_text(h, names[k]);
            html_raw(h, "</code></td>");
        }
        html_row_end(h);
    }
    html_table_end(h);
    html_raw(h, "</section>\n");
}
