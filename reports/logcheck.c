#include "reports/logcheck.h"

#include "models/layout_text.h"
#include "reports/textwrap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/json.h"
#include "models/layout_json.h"
#include "reports/table.h"

const char *report_part_label(const char *key)
{
    static const char *const map[][2] = {
        {"compute", "compute"},           {"recompute", "recompute"},
        {"tp_comm", "TP communication"},  {"cp_comm", "CP communication"},
        {"pp_comm", "pipeline transfers"}, {"pp_bubble", "pipeline bubble"},
        {"dp_comm", "DP communication"},  {"optimizer", "optimizer step"},
        {"straggler", "stragglers"},      {"other", "other"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], key) == 0)
            return map[i][1];
    return key;
}

/* ------------------------------------------------------------ one run */

/* Add v under key, deleting it when that fails (or when v is NULL). */
static bool add_owned(cJSON *o, const char *key, cJSON *v)
{
    if (v && cJSON_AddItemToObject(o, key, v))
        return true;
    cJSON_Delete(v);
    return false;
}

static void verdict_text(const dbl_check_t *c, double tolerance, char *buf, size_t cap)
{
    if (c->within)
        snprintf(buf, cap, "within the %.0f%% tolerance (step time %+.1f%%)", 100 * tolerance,
                 100 * c->error);
    else
        snprintf(buf, cap, "outside the %.0f%% tolerance: the prediction is %.1f%% %s than measured",
                 100 * tolerance, 100 * fabs(c->error), c->error < 0 ? "faster" : "slower");
}

cJSON *report_check_json(const dbl_measured_t *m, const dbl_check_t *c, double tolerance)
{
    const sim_result_t *r = &c->predicted;
    char verdict[160];
    verdict_text(c, tolerance, verdict, sizeof verdict);
    cJSON *o = cJSON_CreateObject(), *arr = NULL, *bd = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "label", m->label) &&
              cJSON_AddStringToObject(o, "model", m->in.model->name) &&
              cJSON_AddStringToObject(o, "gpu", m->in.cluster->gpu.name) &&
              json_add_number(o, "gpus", m->in.layout->n_gpus) &&
              cJSON_AddStringToObject(o, "profile", m->in.profile->origin) &&
              add_owned(o, "layout", layout_to_json(m->in.layout)) &&
              json_add_number(o, "predicted_step_time_s", r->step_time_s) &&
              json_add_number(o, "measured_step_time_s", m->step_time_s) &&
              json_add_number(o, "measured_step_time_cv", m->step_cv) &&
              json_add_number(o, "step_time_error", c->error) &&
              json_add_number(o, "tolerance", tolerance) &&
              cJSON_AddBoolToObject(o, "within_tolerance", c->within) &&
              cJSON_AddStringToObject(o, "verdict", verdict) &&
              (arr = cJSON_AddArrayToObject(o, "quantities")) &&
              (bd = cJSON_AddObjectToObject(o, "breakdown_s"));
    for (int q = 0; ok && q < DBL_Q_COUNT; q++) {
        const dbl_quantity_t *x = &c->q[q];
        cJSON *e = cJSON_CreateObject();
        if (e && !cJSON_AddItemToArray(arr, e)) {
            cJSON_Delete(e);
            e = NULL;
        }
        ok = e && cJSON_AddStringToObject(e, "name", x->name) &&
             cJSON_AddStringToObject(e, "key", x->key) &&
             json_add_number(e, "predicted", x->predicted) &&
             json_add_number(e, "measured", x->measured) && json_add_number(e, "error", x->error) &&
             cJSON_AddBoolToObject(e, "flagged", x->flagged);
        if (ok && q == DBL_Q_MEMORY && isfinite(x->measured) && m->memory_kind)
            ok = cJSON_AddStringToObject(e, "measured_kind", m->memory_kind) != NULL;
    }
    for (int b = 0; ok && b < BD_COUNT; b++)
        ok = json_add_number(bd, sim_bd_name((sim_bd_t)b), r->breakdown_s[b]);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* A quantity's cell: MFU as a percentage, tokens/s without decimals. */
static void cell(char *buf, size_t cap, int q, double v)
{
    if (!isfinite(v))
        snprintf(buf, cap, "-");
    else if (q == DBL_Q_MFU)
        snprintf(buf, cap, "%.1f%%", 100 * v);
    else if (q == DBL_Q_TOKENS)
        snprintf(buf, cap, "%.0f", v);
    else if (q == DBL_Q_TFLOPS || q == DBL_Q_MEMORY)
        snprintf(buf, cap, "%.1f", v);
    else
        snprintf(buf, cap, "%.4f", v);
}

int report_check_text(FILE *out, const dbl_measured_t *m, const dbl_check_t *c, double tolerance)
{
    static const char *hdr[] = {"quantity", "predicted", "measured", "error", ""};
    table_t *t = table_create(5, hdr);
    if (!t)
        return ERR_RUNTIME;
    for (int k = 1; k < 4; k++)
        table_align_right(t, k);
    for (int q = 0; q < DBL_Q_COUNT; q++) {
        const dbl_quantity_t *x = &c->q[q];
        if (!isfinite(x->measured))
            continue;
        char p[32], me[48], e[16];
        cell(p, sizeof p, q, x->predicted);
        cell(me, sizeof me, q, x->measured);
        if (q == DBL_Q_STEP && m->step_cv > 0)
            snprintf(me + strlen(me), sizeof me - strlen(me), " +-%.1f%%", 100 * m->step_cv);
        snprintf(e, sizeof e, "%+.1f%%", 100 * x->error);
        const char *note = q == DBL_Q_MEMORY && m->memory_kind ? m->memory_kind
                           : x->flagged                        ? "! over tolerance"
                                                               : "";
        if (table_add_row(t, (const char *[]){x->name, p, me, e, note})) {
            table_destroy(t);
            return ERR_RUNTIME;
        }
    }
    int rc = table_print(t, out, 2, 0);
    table_destroy(t);
    char verdict[160];
    verdict_text(c, tolerance, verdict, sizeof verdict);
    if (fprintf(out, "  verdict: %s\n", verdict) < 0)
        rc = ERR_RUNTIME;
    return rc ? ERR_RUNTIME : ERR_OK;
}

/* ------------------------------------------------------------ the ladder */

static const dbl_cause_t *top_cause(const dbl_ladder_t *l)
{
    return l->n_causes > 0 && l->cause[0].explains ? &l->cause[0] : NULL;
}

static bool add_cause(cJSON *arr, const dbl_ladder_t *l, const dbl_cause_t *c)
{
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(arr, e)) {
        cJSON_Delete(e);
        return false;
    }
    return cJSON_AddStringToObject(e, "factor_name", c->name) &&
           cJSON_AddStringToObject(e, "profile_field", c->field) &&
           json_add_number(e, "profile_value", c->value) &&
           cJSON_AddStringToObject(e, "part", c->part ? c->part : "") &&
           json_add_number(e, "part_predicted_s", c->part_before_s) &&
           json_add_number(e, "part_needed_s", c->part_after_s) &&
           json_add_number(e, "slowdown", c->factor) &&
           cJSON_AddBoolToObject(e, "explains", c->explains) &&
           json_add_number(e, "worst_other_shortfall", c->worst_other) &&
           json_add_number(e, "worst_other_gpus",
                           c->worst_other_rung >= 0 ? l->rung[c->worst_other_rung].gpus : NAN);
}

static bool add_rung(cJSON *arr, const dbl_rung_t *g)
{
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(arr, e)) {
        cJSON_Delete(e);
        return false;
    }
    return json_add_number(e, "gpus", g->gpus) && cJSON_AddStringToObject(e, "label", g->m.label) &&
              add_owned(e, "layout", layout_to_json(g->m.in.layout)) &&
              json_add_number(e, "predicted_step_time_s", g->predicted.step_time_s) &&
              json_add_number(e, "measured_step_time_s", g->m.step_time_s) &&
              json_add_number(e, "step_time_error", g->error) &&
              json_add_number(e, "predicted_tokens_per_s", g->predicted_tokens_per_s) &&
              json_add_number(e, "measured_tokens_per_s", g->measured_tokens_per_s) &&
              json_add_number(e, "predicted_efficiency", g->predicted_efficiency) &&
              json_add_number(e, "measured_efficiency", g->measured_efficiency) &&
              json_add_number(e, "shortfall", g->shortfall) &&
              cJSON_AddBoolToObject(e, "flagged", g->flagged);
}

static bool add_next(cJSON *o, const dbl_ladder_t *l)
{
    if (!l->has_next)
        return cJSON_AddStringToObject(o, "next_why_not", l->next_why_not) != NULL;
    cJSON *n = cJSON_AddObjectToObject(o, "next");
    return n && add_owned(n, "layout", layout_to_json(&l->next_layout)) &&
              json_add_number(n, "gpus", l->next_gpus) &&
              json_add_number(n, "predicted_step_time_s", l->next_corrected.step_time_s) &&
              json_add_number(n, "step_time_low_s", l->next_low_s) &&
              json_add_number(n, "step_time_high_s", l->next_high_s) &&
              json_add_number(n, "uncorrected_step_time_s", l->next_uncorrected.step_time_s) &&
              json_add_number(n, "predicted_tokens_per_s", l->next_tokens_per_s) &&
              json_add_number(n, "tokens_per_s_low", l->next_tokens_low) &&
              json_add_number(n, "tokens_per_s_high", l->next_tokens_high) &&
              json_add_number(n, "uncorrected_tokens_per_s", l->next_uncorrected.tokens_per_s) &&
              json_add_number(n, "predicted_efficiency", l->next_efficiency);
}

cJSON *report_ladder_json(const dbl_ladder_t *l, double tolerance)
{
    cJSON *o = cJSON_CreateObject(), *rungs = NULL, *causes = NULL, *fit = NULL;
    bool ok = o && json_add_number(o, "tolerance", tolerance) &&
              json_add_number(o, "baseline_offset", l->offset) &&
              (rungs = cJSON_AddArrayToObject(o, "rungs")) &&
              json_add_number(o, "flagged_gpus", l->worst >= 0 ? l->rung[l->worst].gpus : NAN) &&
              (causes = cJSON_AddArrayToObject(o, "causes")) &&
              (fit = cJSON_AddArrayToObject(o, "refit")) &&
              json_add_number(o, "fit_rms", l->fit_rms);
    for (int i = 0; ok && i < l->n; i++)
        ok = add_rung(rungs, &l->rung[i]);
    for (int i = 0; ok && i < l->n_causes; i++)
        ok = add_cause(causes, l, &l->cause[i]);
    const dbl_cause_t *top = top_cause(l);
    ok = ok && (top ? cJSON_AddStringToObject(o, "cause", top->part ? top->part : top->field)
                    : cJSON_AddNullToObject(o, "cause"));
    for (int i = 0; ok && i < l->n_fit; i++) {
        cJSON *e = cJSON_CreateObject();
        if (e && !cJSON_AddItemToArray(fit, e)) {
            cJSON_Delete(e);
            e = NULL;
        }
        ok = e &&
             cJSON_AddStringToObject(e, "factor_name", l->fit[i].name) &&
             cJSON_AddStringToObject(e, "profile_field", l->fit[i].field) &&
             json_add_number(e, "before", l->fit[i].before) &&
             json_add_number(e, "after", l->fit[i].after) &&
             json_add_number(e, "slowdown", l->fit[i].slowdown);
    }
    ok = ok && add_next(o, l);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Append a layout's words to the text a legend explains. */
static void legend_add(char *legend, size_t cap, const char *text)
{
    size_t n = strlen(legend);
    if (n < cap)
        snprintf(legend + n, cap - n, " %s", text);
}

static int rung_table(FILE *out, const dbl_ladder_t *l)
{
    static const char *hdr[] = {"GPUs", "layout", "step predicted (s)", "measured (s)", "error",
                                "scaling predicted", "measured", ""};
    table_t *t = table_create(8, hdr);
    if (!t)
        return ERR_RUNTIME;
    for (int k = 2; k < 7; k++)
        table_align_right(t, k);
    table_align_right(t, 0);
    int rc = ERR_OK;
    char legend[2048] = "MFU";
    for (int i = 0; i < l->n && !rc; i++) {
        const dbl_rung_t *g = &l->rung[i];
        char lay[256], note[64] = "";
        layout_text_format(g->m.in.layout, lay, sizeof lay);
        legend_add(legend, sizeof legend, lay);
        if (i == 0)
            snprintf(note, sizeof note, "baseline");
        else if (g->flagged)
            snprintf(note, sizeof note, "! %.1f%% %s than the baseline says", 100 * fabs(g->shortfall),
                     g->shortfall > 0 ? "slower" : "faster");
        rc = table_add_rowf(t, "%d\t%s\t%.4f\t%.4f\t%+.1f%%\t%.1f%%\t%.1f%%\t%s", g->gpus, lay,
                            g->predicted.step_time_s, g->m.step_time_s, 100 * g->error,
                            100 * g->predicted_efficiency, 100 * g->measured_efficiency, note);
    }
    if (!rc && l->has_next) {
        char lay[256], pred[64];
        layout_text_format(&l->next_layout, lay, sizeof lay);
        legend_add(legend, sizeof legend, lay);
        snprintf(pred, sizeof pred, "%.4f [%.4f-%.4f]", l->next_corrected.step_time_s, l->next_low_s,
                 l->next_high_s);
        rc = table_add_rowf(t, "%d\t%s\t%s\t\t\t%.1f%%\t\tnext rung (corrected)", l->next_gpus, lay,
                            pred, 100 * l->next_efficiency);
    }
    if (!rc)
        rc = table_print(t, out, 2, 0);
    table_destroy(t);
    if (!rc)
        textwrap_legend(out, legend, 2, 100);
    return rc;
}

static int cause_text(FILE *out, const dbl_ladder_t *l, double tolerance)
{
    const dbl_rung_t *f = &l->rung[l->worst], *first = &l->rung[0];
    if (fprintf(out, "\n  The %d-GPU rung falls %.1f%% short: its step is that much slower than the "
                     "%d-GPU baseline's match with the simulator says it should be.\n",
                f->gpus, 100 * f->shortfall, first->gpus) < 0)
        return ERR_RUNTIME;
    const dbl_cause_t *top = top_cause(l);
    int w = 0;
    if (top) {
        w = fprintf(out,
                    "  Most likely cause: %s. It would have to take %.3f s instead of the simulated "
                    "%.3f s per step (%s %.2fx slower: profile %s %.3g -> %.3g)",
                    report_part_label(top->part), top->part_after_s, top->part_before_s, top->name,
                    top->factor, top->field, top->value, top->value / top->factor);
        if (w >= 0 && top->worst_other_rung >= 0)
            w = fprintf(out, ", while the %d-GPU rung would still match within %.0f%% (%+.1f%%)",
                        l->rung[top->worst_other_rung].gpus, 100 * tolerance,
                        100 * top->worst_other);
        if (w >= 0)
            w = fprintf(out, ".\n");
    } else {
        w = fprintf(out, "  No single profile factor explains it without also slowing the rungs "
                         "that matched: something specific to this run (a slow node, a congested "
                         "link, another job) fits best.\n");
    }
    for (int i = 0; i < l->n_causes && w >= 0; i++) {
        const dbl_cause_t *c = &l->cause[i];
        if (c == top)
            continue;
        if (!isfinite(c->factor))
            w = fprintf(out, "    not %s: even %s 100x slower does not close the gap\n",
                        report_part_label(c->part), c->name);
        else if (!c->explains && c->worst_other_rung >= 0)
            w = fprintf(out, "    not %s (%s %.2fx slower): the %d-GPU rung would then be "
                             "predicted %.1f%% slower than it ran\n",
                        report_part_label(c->part), c->name, c->factor,
                        l->rung[c->worst_other_rung].gpus, 100 * c->worst_other);
        else
            w = fprintf(out, "    also possible: %s (%s %.2fx slower)\n", report_part_label(c->part),
                        c->name, c->factor);
    }
    return w < 0 ? ERR_RUNTIME : ERR_OK;
}

int report_ladder_text(FILE *out, const dbl_ladder_t *l, double tolerance)
{
    const dbl_rung_t *first = &l->rung[0];
    if (fprintf(out, "Doubling check: %d rungs of %s on %s (baseline: the %d-GPU rung, measured "
                     "%.3fx its prediction)\n",
                l->n, first->m.in.model->display, first->m.in.cluster->gpu.name, first->gpus,
                l->offset) < 0 ||
        rung_table(out, l))
        return ERR_RUNTIME;
    if (l->worst >= 0 && cause_text(out, l, tolerance))
        return ERR_RUNTIME;
    if (l->worst < 0 && fprintf(out, "\n  Every rung scales within %.0f%% of the prediction.\n",
                                100 * tolerance) < 0)
        return ERR_RUNTIME;
    int w = fprintf(out, "  Re-fitted to the measured rungs:");
    for (int i = 0; i < l->n_fit && w >= 0; i++)
        w = fprintf(out, "%s %s %.3fx (profile %s %.3g -> %.3g)", i ? ";" : "", l->fit[i].name,
                    l->fit[i].slowdown, l->fit[i].field, l->fit[i].before, l->fit[i].after);
    if (w >= 0)
        w = fprintf(out, "; residual %.1f%%.\n", 100 * l->fit_rms);
    if (w >= 0 && l->has_next) {
        char lay[256];
        layout_text_format(&l->next_layout, lay, sizeof lay);
        w = fprintf(out,
                    "  Next doubling, %d GPUs (%s): %.3f s per step [%.3f, %.3f], %.0f tokens/s "
                    "[%.0f, %.0f], scaling efficiency %.0f%%; the profile as it was says %.3f s.\n"
                    "  (The interval spans the re-fit with each rung left out, widened by the fit's "
                    "residual and the runs' step-time spread.)\n",
                    l->next_gpus, lay, l->next_corrected.step_time_s, l->next_low_s, l->next_high_s,
                    l->next_tokens_per_s, l->next_tokens_low, l->next_tokens_high,
                    100 * l->next_efficiency, l->next_uncorrected.step_time_s);
    } else if (w >= 0) {
        w = fprintf(out, "  No prediction for the next doubling: %s.\n", l->next_why_not);
    }
    return w < 0 ? ERR_RUNTIME : ERR_OK;
}
