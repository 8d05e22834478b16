/* scaleplan validate: simulate the configuration of a measured run and
 * compare, component by component. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/json.h"
#include "reports/table.h"
#include "sim/published.h"
#include "sim/validation.h"

static const cli_opt_t own_opts[] = {
    {"--measured", NULL, "FILE", "the run: scaleplan train --json output (or the same keys)"},
    {"--published", NULL, "FILE", "replay published runs (a CSV in the schema of shared/validation/throughput.csv)"},
    {"--by-group", NULL, NULL, "with --published: the error per framework and version"},
    {"--profile", NULL, "FILE", "cost profile (default: the run's GPU's)"},
    {"--flag-over", NULL, "PCT", "flag components whose error exceeds this (default 10)"},
    {"--fail-over", NULL, "PCT", "exit 1 when the step time's error exceeds this"},
    CLI_REPORT_OPT,
    CLI_CSV_OPT,
};
static const cli_group_t own_group = {"Validate", own_opts, sizeof own_opts / sizeof own_opts[0]};

static cJSON *validate_json(const val_measured_t *m, const sim_result_t *r, const val_component_t *c,
                            int n, double flag_over)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    double pred_gib = r->memory.total_bytes / (1024.0 * 1024 * 1024);
    bool ok = o && cJSON_AddStringToObject(o, "model", m->s.model.name) &&
              cJSON_AddStringToObject(o, "gpu", m->s.cluster.gpu.name) &&
              json_add_number(o, "gpus", m->s.layout.n_gpus) &&
              cJSON_AddStringToObject(o, "framework", m->framework) &&
              cJSON_AddStringToObject(o, "profile", m->s.profile.origin) &&
              json_add_number(o, "predicted_step_time_s", c[0].predicted_s) &&
              json_add_number(o, "measured_step_time_s", c[0].measured_s) &&
              json_add_number(o, "step_time_error", c[0].error) &&
              json_add_number(o, "predicted_tokens_per_s", r->tokens_per_s) &&
              json_add_number(o, "measured_tokens_per_s", m->tokens_per_s) &&
              json_add_number(o, "predicted_memory_gib", pred_gib) &&
              json_add_number(o, "measured_memory_gib", m->memory_gib) &&
              json_add_number(o, "flag_over", flag_over) &&
              (arr = cJSON_AddArrayToObject(o, "components"));
    int flagged = 0;
    for (int i = 0; ok && i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        flagged += c[i].flagged;
        ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "name", c[i].name) &&
             json_add_number(e, "predicted_s", c[i].predicted_s) &&
             json_add_number(e, "measured_s", c[i].measured_s) &&
             json_add_number(e, "error", c[i].error) &&
             cJSON_AddBoolToObject(e, "flagged", c[i].flagged);
    }
    ok = ok && json_add_number(o, "flagged", flagged);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int print_text(const val_measured_t *m, const val_component_t *c, int n, double flag_over)
{
    char desc[200];
    layout_describe(&m->s.layout, desc, sizeof desc);
    printf("%s on %d x %s, %s (%s profile, %s options)\n", m->s.model.display,
           m->s.layout.n_gpus, m->s.cluster.gpu.name, desc, m->s.profile.origin, m->framework);
    static const char *hdr[] = {"component", "predicted (s)", "measured (s)", "error", ""};
    table_t *t = table_create(5, hdr);
    if (!t)
        return ERR_RUNTIME;
    for (int k = 1; k < 4; k++)
        table_align_right(t, k);
    int flagged = 0;
    for (int i = 0; i < n; i++) {
        table_add_rowf(t, "%s\t%.4f\t%.4f\t%+.1f%%\t%s", c[i].name, c[i].predicted_s,
                       c[i].measured_s, 100 * c[i].error,
                       c[i].flagged ? "! over tolerance" : "");
        flagged += c[i].flagged;
    }
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    printf("\n  %d of %d components off by more than %.0f%%\n", flagged, n, 100 * flag_over);
    return rc;
}

/* ------------------------------------------------------------ --published */

static bool not_moe(const pub_row_t *r)
{
    return !strstr(r->reason, "mixture-of-experts");
}

static cJSON *published_json(const pub_row_t *rows, int n, const pub_group_t *g, int ng,
                             int pairs, int misordered)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    bool ok = o && (arr = cJSON_AddArrayToObject(o, "rows"));
    for (int i = 0; ok && i < n; i++) {
        const pub_row_t *r = &rows[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "row_id", r->row_id) &&
             cJSON_AddStringToObject(e, "group", r->group) &&
             cJSON_AddStringToObject(e, "model", r->model) &&
             cJSON_AddStringToObject(e, "gpu", r->gpu) && json_add_number(e, "gpus", r->gpus) &&
             cJSON_AddBoolToObject(e, "skipped", r->skipped) &&
             cJSON_AddStringToObject(e, "reason", r->reason) &&
             cJSON_AddStringToObject(e, "metric", pub_metric_name(r->metric)) &&
             json_add_number(e, "published", r->skipped ? NAN : r->published) &&
             json_add_number(e, "predicted", r->skipped ? NAN : r->predicted) &&
             json_add_number(e, "error", r->skipped ? NAN : r->error) &&
             cJSON_AddStringToObject(e, "layout", r->layout) &&
             cJSON_AddStringToObject(e, "assumed", r->assumed);
    }
    double med, p90, nm_med, nm_p90;
    int k, nm_k;
    pub_summary(rows, n, NULL, &med, &p90, &k);
    pub_summary(rows, n, not_moe, &nm_med, &nm_p90, &nm_k);
    ok = ok && json_add_number(o, "median_abs_error", med) &&
         json_add_number(o, "p90_abs_error", p90) && json_add_number(o, "rows_counted", k) &&
         json_add_number(o, "median_abs_error_non_moe", nm_med) &&
         json_add_number(o, "p90_abs_error_non_moe", nm_p90) &&
         json_add_number(o, "ordered_pairs", pairs) && json_add_number(o, "misordered_pairs", misordered);
    cJSON *ga = ok ? cJSON_AddArrayToObject(o, "groups") : NULL;
    ok = ok && ga;
    for (int i = 0; ok && i < ng; i++) {
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(ga, e) && cJSON_AddStringToObject(e, "group", g[i].group) &&
             json_add_number(e, "rows", g[i].rows) && json_add_number(e, "skipped", g[i].skipped) &&
             json_add_number(e, "median_abs_error", g[i].median) &&
             json_add_number(e, "p90_abs_error", g[i].p90) &&
             json_add_number(e, "worst_abs_error", g[i].worst);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int published_text(const pub_row_t *rows, int n, const pub_group_t *g, int ng, bool by_group,
                          int pairs, int misordered, const int *wrong)
{
    static const char *hdr[] = {"row", "group", "model", "gpu", "GPUs", "metric", "published",
                                "predicted", "error", "layout simulated"};
    table_t *t = table_create(10, hdr);
    if (!t)
        return ERR_RUNTIME;
    for (int k = 4; k < 9; k++)
        if (k != 5)
            table_align_right(t, k);
    for (int i = 0; i < n; i++) {
        const pub_row_t *r = &rows[i];
        if (r->skipped)
            table_add_rowf(t, "%s\t%s\t%.24s\t%s\t%d\t\t\t\t\tskipped: %s", r->row_id, r->group,
                           r->model, r->gpu, r->gpus, r->reason);
        else
            table_add_rowf(t, "%s\t%s\t%.24s\t%s\t%d\t%s\t%.4g\t%.4g\t%+.1f%%\t%s%s", r->row_id,
                           r->group, r->model, r->gpu, r->gpus, pub_metric_name(r->metric),
                           r->published, r->predicted, 100 * r->error, r->layout,
                           r->assumed[0] ? " (open choices: fastest that fits)" : "");
    }
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    if (rc)
        return rc;
    double med, p90, nm_med, nm_p90;
    int k, nm_k;
    pub_summary(rows, n, NULL, &med, &p90, &k);
    pub_summary(rows, n, not_moe, &nm_med, &nm_p90, &nm_k);
    printf("\n  all rows: %d, median |error| %.1f%%, 90th percentile %.1f%% (skipped rows count as "
           "100%%)\n",
           k, 100 * med, 100 * p90);
    printf("  rows without mixture-of-experts models: %d, median %.1f%%, 90th percentile %.1f%%\n",
           nm_k, 100 * nm_med, 100 * nm_p90);
    printf("  pairs of one model on one GPU count differing by more than 3%%: %d, ordered the "
           "other way round: %d\n",
           pairs, misordered);
    for (int i = 0; wrong && i < misordered; i++)
        printf("    %s vs %s\n", rows[wrong[2 * i]].row_id, rows[wrong[2 * i + 1]].row_id);
    if (!by_group)
        return ERR_OK;
    static const char *gh[] = {"group", "rows", "skipped", "median |error|", "90th pct", "worst"};
    table_t *x = table_create(6, gh);
    if (!x)
        return ERR_RUNTIME;
    for (int c = 1; c < 6; c++)
        table_align_right(x, c);
    for (int i = 0; i < ng; i++)
        table_add_rowf(x, "%s\t%d\t%d\t%.1f%%\t%.1f%%\t%.1f%%", g[i].group, g[i].rows, g[i].skipped,
                       100 * g[i].median, 100 * g[i].p90, 100 * g[i].worst);
    printf("\n");
    rc = table_print(x, stdout, 2, 0);
    table_destroy(x);
    return rc;
}

static int run_published(const cli_args_t *a, const char *csv, err_t *err)
{
    profile_t prof;
    const char *pp = cli_get(a, "--profile");
    int rc;
    if (pp && (rc = prof_load(pp, &prof, err)))
        return rc;
    pub_options_t o = {pp ? &prof : NULL, !cli_machine_output(a)};
    pub_row_t *rows = NULL;
    pub_group_t *g = NULL;
    int n = 0, ng = 0, pairs = 0, mis = 0, *wrong = NULL;
    cJSON *j = NULL;
    if ((rc = pub_replay(csv, &o, &rows, &n, err)) || (rc = pub_groups(rows, n, &g, &ng, err)) ||
        (rc = pub_ordering(rows, n, 0.03, &pairs, &mis, &wrong, err)))
        goto out;
    if (cli_has(a, "--json")) {
        if (!(j = published_json(rows, n, g, ng, pairs, mis)))
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        else
            rc = json_print_stdout(j, err);
    } else if (published_text(rows, n, g, ng, cli_has(a, "--by-group"), pairs, mis, wrong)) {
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    }
out:
    cJSON_Delete(j);
    free(wrong);
    free(g);
    free(rows);
    if (pp)
        prof_free(&prof);
    return rc;
}

static int run(const cli_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    if (cli_get(a, "--published"))
        return run_published(a, cli_get(a, "--published"), err);
    const char *file = cli_get(a, "--measured");
    if (!file && a->n_positional > 0)
        file = a->positional[0];
    if (!file)
        return err_setf(err, ERR_INPUT, NULL, "--measured",
                        "say which run to check: --measured run.json (scaleplan train --json)");
    double flag_pct = 10, fail_pct = -1;
    if ((rc = cli_get_double(a, "--flag-over", 0, 1e6, &flag_pct, err)) ||
        (rc = cli_get_double(a, "--fail-over", 0, 1e6, &fail_pct, err)))
        return rc;
    val_measured_t m;
    sim_ctx_t *ctx = NULL;
    cJSON *j = NULL;
    if ((rc = val_measured_load(file, cli_get(a, "--profile"), &m, err)))
        goto out;
    if (!(ctx = sim_ctx_create())) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out;
    }
    sim_result_t r;
    if ((rc = sim_run_step(ctx, &m.s.input, &r, err)))
        goto out;
    val_component_t comp[VAL_MAX_COMPONENTS];
    int n = 0;
    val_measured_compare(&m, &r, flag_pct / 100, comp, &n);
    if (!cli_machine_output(a) && print_text(&m, comp, n, flag_pct / 100)) {
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
        goto out;
    }
    if (cli_wants_result(a)) {
        if (!(j = validate_json(&m, &r, comp, n, flag_pct / 100))) {
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
            goto out;
        }
        if (!cli_machine_output(a))
            putchar('\n');
        if ((rc = cli_output_result(a, "scaleplan validate", j, "components", err)))
            goto out;
    }
    if (fail_pct >= 0 && !(fabs(comp[0].error) <= fail_pct / 100))
        rc = err_setf(err, ERR_RUNTIME, file, "step_time_s",
                      "predicted %.4f s against measured %.4f s: %+.1f%%, over --fail-over %g%%",
                      comp[0].predicted_s, comp[0].measured_s, 100 * comp[0].error, fail_pct);
out:
    cJSON_Delete(j);
    sim_ctx_destroy(ctx);
    val_measured_free(&m);
    return rc;
}

static const cli_group_t *const groups[] = {&own_group,
                                         &CLI_OUTPUT_OPTS};

const cli_command_t CLI_CMD_VALIDATE = {
    "validate",
    "simulate a measured run and compare, component by component",
    "scaleplan validate --measured run.json [--profile p.json] [--json]",
    "Simulate the model, GPU, GPU count and layout of a measured run and print\n"
                       "predicted against measured, in total and per breakdown component, with the\n"
                       "error; errors over the tolerance are flagged. The run is what scaleplan\n"
                       "train --json prints (on a GPU), or any file with its keys: model (or\n"
                       "model_config), gpu, gpus, layout, step_time_s, breakdown_s, optionally\n"
                       "framework (a sim --framework preset) and memory_gib.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
};
