#include "commands/validate_failures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/output.h"
#include "common/numfmt.h"
#include "common/json.h"
#include "reports/table.h"
#include "validate/failval.h"

#define MAX_TABLES 8

static const char *measure_name(fv_measure_t m)
{
    return m == FV_RATE ? "rate per GPU-hour" : m == FV_GOODPUT ? "goodput" : "count";
}

/* A measure as the table shows it: goodput in percent, rates per million
 * GPU-hours (109, not 1.09e-04), counts as they are; no exponents
 * (common/numfmt.h). */
static void fmt_measure(const fv_row_t *r, double v, char *buf, size_t cap)
{
    if (r->measure == FV_GOODPUT)
        v *= 100;
    else if (r->measure == FV_RATE)
        v *= 1e6;
    numfmt_real(v, buf, cap);
}

/* "148", "1-2", ">= 35", "109" (a rate per million GPU-hours) */
static void fmt_published(const fv_row_t *r, char *buf, size_t cap)
{
    char lo[32], hi[32];
    fmt_measure(r, r->published, lo, sizeof lo);
    fmt_measure(r, r->published_high, hi, sizeof hi);
    if (r->lower_bound)
        snprintf(buf, cap, ">= %s%s", lo, r->measure == FV_GOODPUT ? "%" : "");
    else if (r->published_high > r->published)
        snprintf(buf, cap, "%s-%s", lo, hi);
    else
        snprintf(buf, cap, "%s%s", lo, r->measure == FV_GOODPUT ? "%" : "");
}

static void fmt_value(const fv_row_t *r, double v, char *buf, size_t cap)
{
    if (r->measure == FV_GOODPUT)
        snprintf(buf, cap, "%.1f%%", 100 * v);
    else if (r->measure == FV_RATE)
        fmt_measure(r, v, buf, cap);
    else
        snprintf(buf, cap, "%.1f", v);
}

static int print_text(const fv_row_t *rows, int n)
{
    static const char *hdr[] = {"row",      "GPUs",   "days", "GPU",  "environment", "rate set",
                                "compares", "published", "predicted", "error", "held out"};
    table_t *t = table_create(11, hdr);
    if (!t)
        return ERR_RUNTIME;
    for (int k = 7; k < 10; k++)
        table_align_right(t, k);
    table_align_right(t, 1);
    table_align_right(t, 2);
    char skipped[2000] = "";
    for (int i = 0; i < n; i++) {
        const fv_row_t *r = &rows[i];
        if (r->skipped) {
            size_t used = strlen(skipped);
            snprintf(skipped + used, sizeof skipped - used, "%s%s (%s)", used ? "; " : "",
                     r->row_id, r->reason);
            continue;
        }
        char pub[48], pred[32], held[120] = "";
        fmt_published(r, pub, sizeof pub);
        fmt_value(r, r->predicted, pred, sizeof pred);
        if (r->heldout) {
            char hv[32];
            fmt_value(r, r->heldout_predicted, hv, sizeof hv);
            char factor[32];
            snprintf(held, sizeof held, "%s %+.0f%% x%s (%s)", hv, 100 * r->heldout_error,
                     numfmt_real(exp2(r->heldout_log2), factor, sizeof factor), r->heldout_set);
        }
        table_add_rowf(t, "%s\t%d\t%.0f\t%s\t%s\t%s%s%s\t%s\t%s\t%s\t%+.1f%%\t%s", r->row_id,
                       r->gpus, r->window_days, r->gpu, r->environment, r->set,
                       r->in_fit ? "*" : "", r->set_assumed ? "?" : "", r->counts, pub, pred,
                       100 * r->error, held);
    }
    printf("Published failure records replayed with scaleplan's defaults for each record's "
           "environment and GPU (nothing fitted per record)\n\n");
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    printf("  rates (rows that compare per GPU-hour) are shown per million GPU-hours\n");
    printf("  * in fit: the rate set was derived from this record's source   ? the set's "
           "evidence is from another GPU generation or setting (ASSUMED)\n");
    printf("  held out: leave-one-source-out, what the evidence sets of the record's environment "
           "(every environment when none) predict without the record's source, brought to what "
           "the record counts\n    (GPU, hardware, unexpected or all) through the other sources' "
           "shares, pooled by the geometric mean, one vote per source; x = the factor off "
           "(1 inside a range or above a bound met)\n"
           "  ASSUMED: a cluster's fault tickets and a job's interruptions compare per GPU-hour "
           "(a ticket interrupts the job on its GPUs)\n");
    if (skipped[0])
        printf("  not compared: %s\n", skipped);
    double med, p90;
    int k;
    fv_summary(rows, n, FV_ALL, &med, &p90, &k);
    printf("\n  counts and rates: median |error| %.1f%% over %d records (90th percentile %.1f%%)\n",
           100 * med, k, 100 * p90);
    fv_summary(rows, n, FV_BEYOND_DEFAULT, &med, &p90, &k);
    if (k > 0)
        printf("  records from other sources than the default set's: median %.1f%% over %d "
               "(90th percentile %.1f%%)\n",
               100 * med, k, 100 * p90);
    fv_summary(rows, n, FV_OUT_OF_FIT, &med, &p90, &k);
    if (k > 0)
        printf("  records whose rate set came from another source: median %.1f%% over %d\n",
               100 * med, k);
    fv_summary(rows, n, FV_HELD_OUT, &med, &p90, &k);
    if (k > 0)
        printf("  held out (each record predicted without its own source's rates): median "
               "%.1f%% over %d (90th percentile %.1f%%)\n",
               100 * med, k, 100 * p90);
    double worst;
    const fv_row_t *wr;
    fv_heldout_log2(rows, n, &med, &worst, &wr, &k);
    if (k > 0)
        printf("  held out |log2(predicted/recorded)|: median %.2f (a factor %.2f) over %d, worst "
               "%.2f (a factor %.2f, %s)\n",
               med, exp2(med), k, worst, exp2(worst), wr->row_id);
    for (int i = 0; i < n; i++)
        if (!rows[i].skipped && rows[i].measure == FV_GOODPUT)
            printf("  goodput %s: predicted %.1f%% against %s%.0f%% published (%s)\n",
                   rows[i].row_id, 100 * rows[i].predicted, rows[i].lower_bound ? "at least " : "",
                   100 * rows[i].published, rows[i].assumed);
    return rc;
}

static bool add_summary(cJSON *o, const char *key, const fv_row_t *rows, int n, fv_subset_t s)
{
    double med, p90;
    int k;
    fv_summary(rows, n, s, &med, &p90, &k);
    cJSON *e = cJSON_AddObjectToObject(o, key);
    return e && json_add_number(e, "records", k) &&
           json_add_number(e, "median_abs_error", k ? med : NAN) &&
           json_add_number(e, "p90_abs_error", k ? p90 : NAN);
}

static bool add_log2(cJSON *o, const fv_row_t *rows, int n)
{
    double med, worst;
    const fv_row_t *wr;
    int k;
    fv_heldout_log2(rows, n, &med, &worst, &wr, &k);
    cJSON *e = cJSON_AddObjectToObject(o, "held_out_log2");
    return e && json_add_number(e, "records", k) && json_add_number(e, "median", k ? med : NAN) &&
           json_add_number(e, "worst", k ? worst : NAN) &&
           cJSON_AddStringToObject(e, "worst_row", wr ? wr->row_id : "");
}

static cJSON *failures_json(const fv_row_t *rows, int n)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    bool ok = o && (arr = cJSON_AddArrayToObject(o, "rows"));
    for (int i = 0; ok && i < n; i++) {
        const fv_row_t *r = &rows[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "row_id", r->row_id) &&
             cJSON_AddStringToObject(e, "file", r->file) &&
             cJSON_AddStringToObject(e, "system", r->system) &&
             cJSON_AddStringToObject(e, "item", r->item) &&
             cJSON_AddBoolToObject(e, "skipped", r->skipped) &&
             cJSON_AddStringToObject(e, "reason", r->reason) && json_add_number(e, "gpus", r->gpus) &&
             json_add_number(e, "window_days", r->window_days) &&
             cJSON_AddStringToObject(e, "gpu", r->gpu) &&
             cJSON_AddStringToObject(e, "environment", r->environment) &&
             cJSON_AddStringToObject(e, "rate_set", r->set) &&
             cJSON_AddBoolToObject(e, "rate_set_assumed", r->set_assumed) &&
             cJSON_AddBoolToObject(e, "in_fit", r->in_fit) &&
             cJSON_AddStringToObject(e, "compares", r->counts) &&
             cJSON_AddStringToObject(e, "measure", measure_name(r->measure)) &&
             json_add_number(e, "published", r->skipped ? NAN : r->published) &&
             json_add_number(e, "published_high", r->skipped ? NAN : r->published_high) &&
             cJSON_AddBoolToObject(e, "lower_bound", r->lower_bound) &&
             json_add_number(e, "predicted", r->skipped ? NAN : r->predicted) &&
             json_add_number(e, "error", r->skipped ? NAN : r->error) &&
             cJSON_AddStringToObject(e, "heldout_set", r->heldout ? r->heldout_set : "") &&
             json_add_number(e, "heldout_predicted", r->heldout ? r->heldout_predicted : NAN) &&
             json_add_number(e, "heldout_error", r->heldout ? r->heldout_error : NAN) &&
             json_add_number(e, "heldout_log2", r->heldout ? r->heldout_log2 : NAN) &&
             json_add_number(e, "heldout_sources", r->heldout ? r->heldout_sources : 0) &&
             cJSON_AddStringToObject(e, "assumed", r->assumed);
    }
    cJSON *s = ok ? cJSON_AddObjectToObject(o, "summary") : NULL;
    ok = ok && s && add_summary(s, "all", rows, n, FV_ALL) &&
         add_summary(s, "beyond_default_source", rows, n, FV_BEYOND_DEFAULT) &&
         add_summary(s, "out_of_fit", rows, n, FV_OUT_OF_FIT) &&
         add_summary(s, "held_out", rows, n, FV_HELD_OUT) && add_log2(s, rows, n) &&
         add_summary(s, "goodput", rows, n, FV_GOODPUTS);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int cmd_validate_failures(const cmd_args_t *a, const char *files, err_t *err)
{
    /* a copy to cut at the commas (a fixed buffer would cut a long list) */
    char *buf = strdup(files);
    if (!buf)
        return err_set(err, ERR_RUNTIME, "out of memory");
    const char *paths[MAX_TABLES];
    int np = 0, rc = ERR_OK;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p && !rc;
         p = strtok_r(NULL, ",", &save)) {
        if (np == MAX_TABLES)
            rc = err_setf(err, ERR_INPUT, NULL, "--failures", "at most %d tables", MAX_TABLES);
        else
            paths[np++] = p;
    }
    if (!rc && np == 0)
        rc = err_setf(err, ERR_INPUT, NULL, "--failures", "name a table (failures.csv)");
    fv_row_t *rows = NULL;
    int n = 0;
    if (!rc)
        rc = fv_replay(paths, np, &rows, &n, err);
    free(buf);
    if (rc)
        return rc;
    if (!cmd_machine_output(a) && print_text(rows, n))
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    if (!rc && cmd_wants_result(a)) {
        cJSON *j = failures_json(rows, n);
        if (!j)
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        else {
            if (!cmd_machine_output(a))
                putchar('\n');
            rc = cmd_output_result(a, "scaleplan validate", j, "rows", err);
        }
        cJSON_Delete(j);
    }
    free(rows);
    return rc;
}
