/* scaleplan validate: simulate the configuration of a measured run and
 * compare, component by component. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/args.h"
#include "commands/commands.h"
#include "commands/logrun.h"
#include "commands/output.h"
#include "commands/validate_failures.h"
#include "common/units.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/strfmt.h"
#include "models/layout_json.h"
#include "reports/logcheck.h"
#include "models/layout_text.h"
#include "reports/table.h"
#include "reports/textwrap.h"
#include "validate/dpladder.h"
#include "plan/ladder.h"
#include "validate/published.h"
#include "validate/pubfit.h"
#include "validate/validation.h"

static const cmd_opt_t own_opts[] = {
    {"--measured", NULL, "FILE", "the run: scaleplan train --json output (or the same keys)",
     CMD_WORD, .positional = CMD_POS_ONE},
    {"--log", NULL, "FILE",
     "a training log (Megatron-LM/Bridge, NeMo, torchtitan, DeepSpeed, GPT-NeoX, Composer, HF "
     "Trainer, nanotron, MaxText, nanoGPT, LitGPT, step,seconds CSV/JSON); repeat for each rung "
     "of a ladder",
     CMD_WORD, .repeat = true},
    {"--log-format", NULL, "NAME",
     "read the logs as megatron, nemo, torchtitan, deepspeed, hf, composer, nanotron, maxtext, "
     "nanogpt, litgpt, csv or json (default: detect)",
     CMD_WORD},
    {"--tokens-per-step", NULL, "N",
     "with --log: the global batch in tokens, for a log that prints neither it nor the batch in "
     "sequences",
     CMD_N(1, 1e12)},
    {"--plan", NULL, "FILE", "with --log: the ladder scaleplan plan --json planned (next rung, plot)",
     CMD_WORD},
    {"--published", NULL, "FILE",
     "replay published runs (a CSV in the schema of shared/validation/throughput.csv; row_id, "
     "model, gpu_type, framework and a result column are required, the others may be left out)",
     CMD_WORD},
    {"--by-group", NULL, NULL, "with --published: the error per framework and version", CMD_WORD},
    {"--max-median", NULL, "PCT",
     "with --published: exit 1 when the median |error| is over PCT (make validate's bars)",
     CMD_X(0, 1e6)},
    {"--max-p90", NULL, "PCT", "with --published: exit 1 when the 90th percentile is over PCT",
     CMD_X(0, 1e6)},
    {"--max-group-median", NULL, "PCT",
     "with --published: exit 1 when a group of 3 or more rows has a median |error| over PCT",
     CMD_X(0, 1e6)},
    {"--dense", NULL, NULL,
     "with --max-median/--max-p90: the bars over the rows without mixture-of-experts models",
     CMD_WORD},
    {"--fit-sustained", NULL, NULL,
     "with --published: per GPU, the profile's sustained factor that makes the median signed "
     "error of its dense runs zero (the rule the default profiles are fitted by)",
     CMD_WORD},
    {"--write-profiles", NULL, "DIR",
     "with --fit-sustained: write each GPU's profile with its fitted factor to DIR/GPU.json "
     "(for sim --profile)",
     CMD_WORD},
    {"--flag-over", NULL, "PCT", "the tolerance: flag errors over this (default 10, the plan's)",
     CMD_X(0, 1e6)},
    CMD_FAILURES_OPT,
    {"--fail-over", NULL, "PCT", "exit 1 when the step time's error exceeds this", CMD_X(0, 1e6)},
    CMD_REPORT_OPT,
};
static const cmd_group_t own_group = {"Validate", own_opts, sizeof own_opts / sizeof own_opts[0]};

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
              json_add_number(o, "measured_peak_memory_gib", m->memory_peak_gib) &&
              json_add_number(o, "memory_error", pred_gib / val_measured_memory_gib(m) - 1) &&
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

static int print_text(const val_measured_t *m, const sim_result_t *r, const val_component_t *c,
                      int n, double flag_over)
{
    char desc[320];
    layout_text_long(&m->s.layout, desc, sizeof desc);
    printf("%s on %d x %s, %s (%s profile, %s options)\n", m->s.model.display,
           m->s.layout.n_gpus, m->s.cluster.gpu.name, desc, m->s.profile.origin, m->framework);
    textwrap_legend(stdout, desc, 2, 100);
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
    double pred = r->memory.total_bytes / GIB, meas = val_measured_memory_gib(m);
    if (!isnan(meas) && meas > 0)
        printf("  memory: predicted %.2f GiB against %.2f GiB %s (%+.1f%%)\n", pred, meas,
               isnan(m->memory_peak_gib) ? "counted by the run" : "measured at the device's peak",
               100 * (pred / meas - 1));
    return rc;
}

/* ------------------------------------------------------------ --published */

/* Dense rows: replayed without expert parallelism (MoE rows carry an EP
 * degree, or a refusal that names mixture-of-experts). */
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
             cJSON_AddStringToObject(e, "assumed", r->assumed) &&
             (r->skipped ? cJSON_AddNullToObject(e, "fits") != NULL
                         : cJSON_AddBoolToObject(e, "fits", r->fits) != NULL) &&
             json_add_number(e, "memory_gib", r->memory_gib) &&
             json_add_number(e, "capacity_gib", r->capacity_gib);
    }
    double med, p90, nm_med, nm_p90;
    int k, nm_k;
    pub_summary(rows, n, NULL, &med, &p90, &k);
    pub_summary(rows, n, pub_row_dense, &nm_med, &nm_p90, &nm_k);
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
    int marked = 0, oom = 0;
    for (int i = 0; i < n; i++) {
        const pub_row_t *r = &rows[i];
        /* other assumptions than the open choices are listed below */
        bool more = r->assumed[0] && !(r->open_choices && !strchr(r->assumed, ';'));
        marked += more && !r->skipped;
        oom += !r->skipped && !r->fits;
        if (r->skipped)
            table_add_rowf(t, "%s\t%s\t%.24s\t%s\t%d\t\t\t\t\tskipped: %s", r->row_id, r->group,
                           r->model, r->gpu, r->gpus, r->reason);
        else
            table_add_rowf(t, "%s\t%s\t%.24s\t%s\t%d\t%s\t%.4g\t%.4g\t%+.1f%%\t%s%s%s%s", r->row_id,
                           r->group, r->model, r->gpu, r->gpus, pub_metric_name(r->metric),
                           r->published, r->predicted, 100 * r->error, r->layout,
                           r->open_choices ? " (open choices: fastest that fits)" : "",
                           r->fits ? "" : " [m]", more ? " [a]" : "");
    }
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    if (rc)
        return rc;
    if (oom)
        printf("\n  [m] does not fit in memory as simulated (timed all the same):\n");
    for (int i = 0; oom && i < n; i++)
        if (!rows[i].skipped && !rows[i].fits)
            printf("    %s: %.1f GiB a GPU of %.1f\n", rows[i].row_id, rows[i].memory_gib,
                   rows[i].capacity_gib);
    if (marked)
        printf("\n  [a] assumed in replaying the row:\n");
    for (int i = 0; marked && i < n; i++)
        if (!rows[i].skipped && rows[i].assumed[0] &&
            !(rows[i].open_choices && !strchr(rows[i].assumed, ';')))
            printf("    %s: %s\n", rows[i].row_id, rows[i].assumed);
    double med, p90, nm_med, nm_p90;
    int k, nm_k;
    pub_summary(rows, n, NULL, &med, &p90, &k);
    pub_summary(rows, n, pub_row_dense, &nm_med, &nm_p90, &nm_k);
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

static cJSON *fits_json(const pub_fit_t *f, int n)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    bool ok = o && (arr = cJSON_AddArrayToObject(o, "fits"));
    for (int i = 0; ok && i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "gpu", f[i].gpu) &&
             json_add_number(e, "rows", f[i].rows) &&
             cJSON_AddStringToObject(e, "row_ids", f[i].row_ids) &&
             json_add_number(e, "sustained_factor", f[i].current) &&
             json_add_number(e, "fitted", f[i].fitted) &&
             json_add_number(e, "median_signed_error", f[i].median_current) &&
             json_add_number(e, "median_signed_error_fitted", f[i].median_fitted) &&
             cJSON_AddBoolToObject(e, "bracketed", f[i].bracketed);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int fits_text(const char *csv, const pub_fit_t *f, int n)
{
    printf("Sustained factor per GPU that makes the median signed error of its dense runs in %s "
           "zero\n(the rule the default profiles' FITTED factors follow; scaleplan catalog "
           "profiles --figures lists them)\n\n",
           csv);
    static const char *hdr[] = {"gpu",    "rows", "profile", "fitted", "median error",
                                "at fitted", "runs"};
    table_t *t = table_create(7, hdr);
    if (!t)
        return ERR_RUNTIME;
    for (int c = 1; c < 6; c++)
        table_align_right(t, c);
    for (int i = 0; i < n; i++)
        table_add_rowf(t, "%s\t%d\t%.3f\t%.3f%s\t%+.1f%%\t%+.1f%%\t%s", f[i].gpu, f[i].rows,
                       f[i].current, f[i].fitted, f[i].bracketed ? "" : " (bound)",
                       100 * f[i].median_current, 100 * f[i].median_fitted, f[i].row_ids);
    int rc = table_print(t, stdout, 2, 0);
    table_destroy(t);
    if (!rc)
        printf("\n  A fitted factor stands for what the model does not list (the clock under the "
               "power limit, library\n  versions, kernels it does not price); scaleplan "
               "calibrate measures the first on your GPUs.\n");
    return rc;
}

/* Each fitted GPU's profile (--profile's for its GPU, else the default)
 * with the fitted factor, to dir/GPU.json; the paths are printed. */
static int write_profiles(const cmd_args_t *a, const char *dir, const char *csv,
                          const pub_options_t *o, const pub_fit_t *f, int n, err_t *err)
{
    int rc = ERR_OK;
    for (int i = 0; i < n && !rc; i++) {
        profile_t p;
        if ((rc = pub_fit_profile(o, f[i].gpu, &p, err)))
            break;
        p.sustained_factor = f[i].fitted;
        snprintf(p.origin, sizeof p.origin, "measured");
        snprintf(p.description, sizeof p.description,
                 "%s with sustained_factor %.3f fitted to %d published runs (%.100s)", f[i].gpu,
                 f[i].fitted, f[i].rows, csv);
        char *path = str_printf("%s/%s.json", dir, f[i].gpu);
        rc = path ? prof_save(&p, path, err) : err_set(err, ERR_RUNTIME, "out of memory");
        if (!rc && !cmd_machine_output(a))
            printf("  wrote %s\n", path);
        free(path);
        prof_free(&p);
    }
    return rc;
}

/* validate --published F --fit-sustained [--write-profiles DIR] */
static int run_fit(const cmd_args_t *a, const char *csv, const pub_options_t *o, err_t *err)
{
    const char *dir = cmd_get(a, "--write-profiles");
    int rc;
    if (dir && (rc = fileio_mkdirs(dir, err)))
        return err_setf(err, ERR_INPUT, dir, "--write-profiles", "%s", err->msg);
    pub_fit_t *f = NULL;
    int n = 0;
    if ((rc = pub_fit_sustained(csv, o, &f, &n, err)))
        return rc;
    if (cmd_machine_output(a)) {
        cJSON *j = fits_json(f, n);
        rc = j ? cmd_emit(a, j, "fits", err) : err_set(err, ERR_RUNTIME, "out of memory");
        cJSON_Delete(j);
    } else if (fits_text(csv, f, n)) {
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    }
    if (!rc && dir)
        rc = write_profiles(a, dir, csv, o, f, n, err);
    free(f);
    return rc;
}

/* The same-layout DP ladders (validate/dpladder.h): per-GPU throughput from the
 * smallest rung to the largest, published against predicted. */
static int ladders_text(const pub_row_t *rows, int n, err_t *err)
{
    dpl_ladder_t *d = NULL;
    int nd = 0, rc = dpl_find(rows, n, &d, &nd, err);
    if (rc || nd == 0)
        return rc;
    printf("\n  same-layout DP ladders: %d (per-GPU tokens/s, smallest to largest rung)\n", nd);
    int within = 0;
    for (int i = 0; i < nd; i++) {
        const pub_row_t *lo = &rows[d[i].first], *hi = &rows[d[i].last];
        double gap = dpl_gap_points(&d[i]);
        within += gap <= 2;
        printf("    %s..%s %-20.20s %5d->%-5d GPUs (%d rungs): published %+5.1f%%, predicted "
               "%+5.1f%% (%.1f points)\n",
               lo->row_id, hi->row_id, lo->model, d[i].gpus_lo, d[i].gpus_hi, d[i].rungs,
               100 * d[i].published_change, 100 * d[i].predicted_change, gap);
    }
    printf("    within 2 points of the published change: %d of %d\n", within, nd);
    free(d);
    return ERR_OK;
}

/* --max-median, --max-p90, --max-group-median: the accuracy bars make
 * validate holds each published set to (kept out of make check's unit
 * tests). ERR_RUNTIME naming the first bar crossed. */
static int check_bars(const cmd_args_t *a, const char *csv, const pub_row_t *rows, int n,
                      const pub_group_t *g, int ng, err_t *err)
{
    double max_med = -1, max_p90 = -1, max_group = -1, med, p90;
    int k, rc;
    if ((rc = cmd_get_double(a, "--max-median", &max_med, err)) ||
        (rc = cmd_get_double(a, "--max-p90", &max_p90, err)) ||
        (rc = cmd_get_double(a, "--max-group-median", &max_group, err)))
        return rc;
    bool dense = cmd_has(a, "--dense");
    pub_summary(rows, n, dense ? pub_row_dense : NULL, &med, &p90, &k);
    const char *which = dense ? "rows without mixture-of-experts models" : "all rows";
    if (max_med >= 0 && !(100 * med <= max_med))
        return err_setf(err, ERR_RUNTIME, csv, "--max-median",
                        "%s: median |error| %.1f%% over the bar of %g%%", which, 100 * med,
                        max_med);
    if (max_p90 >= 0 && !(100 * p90 <= max_p90))
        return err_setf(err, ERR_RUNTIME, csv, "--max-p90",
                        "%s: 90th percentile %.1f%% over the bar of %g%%", which, 100 * p90,
                        max_p90);
    for (int i = 0; max_group >= 0 && i < ng; i++)
        if (g[i].rows >= 3 && !(100 * g[i].median <= max_group))
            return err_setf(err, ERR_RUNTIME, csv, "--max-group-median",
                            "group %s: median |error| %.1f%% over the bar of %g%%", g[i].group,
                            100 * g[i].median, max_group);
    return ERR_OK;
}

static int run_published(const cmd_args_t *a, const char *csv, err_t *err)
{
    profile_t prof;
    const char *pp = cmd_get(a, "--profile");
    int rc;
    if (pp && (rc = prof_load_in(a->catalog, pp, &prof, err)))
        return rc;
    pub_options_t o = {pp ? &prof : NULL, !cmd_machine_output(a), a->catalog, NULL};
    if (cmd_has(a, "--fit-sustained")) {
        rc = run_fit(a, csv, &o, err);
        if (pp)
            prof_free(&prof);
        return rc;
    }
    pub_row_t *rows = NULL;
    pub_group_t *g = NULL;
    int n = 0, ng = 0, pairs = 0, mis = 0, *wrong = NULL;
    cJSON *j = NULL;
    if ((rc = pub_replay(csv, &o, &rows, &n, err)) || (rc = pub_groups(rows, n, &g, &ng, err)) ||
        (rc = pub_ordering(rows, n, 0.03, &pairs, &mis, &wrong, err)))
        goto out;
    if (cmd_machine_output(a)) {
        if (!(j = published_json(rows, n, g, ng, pairs, mis)))
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
        else
            rc = cmd_emit(a, j, "rows", err);
    } else if (published_text(rows, n, g, ng, cmd_has(a, "--by-group"), pairs, mis, wrong)) {
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
    } else {
        rc = ladders_text(rows, n, err);
    }
    if (!rc)
        rc = check_bars(a, csv, rows, n, g, ng, err);
out:
    cJSON_Delete(j);
    free(wrong);
    free(g);
    free(rows);
    if (pp)
        prof_free(&prof);
    return rc;
}

/* ------------------------------------------------------------ --log */

#define MAX_LOGS DBL_MAX_RUNGS

/* Options that describe a run to simulate: only --log reads them (the
 * other modes take the run from their file); --profile serves all. */
static int refuse_run_options(const cmd_args_t *a, const char *mode, err_t *err)
{
    static const cmd_group_t *const run_groups[] = {&CMD_MODEL_OPTS, &CMD_CLUSTER_OPTS,
                                                    &CMD_LAYOUT_OPTS, &CMD_SIM_OPTS};
    static const char *const log_only[] = {"--log-format", "--plan", "--tokens-per-step"};
    for (size_t g = 0; g < sizeof run_groups / sizeof run_groups[0]; g++)
        for (int i = 0; i < run_groups[g]->n; i++) {
            const char *name = run_groups[g]->opts[i].name;
            if (strcmp(name, "--profile") != 0 && cmd_has(a, name))
                return err_setf(err, ERR_INPUT, NULL, name,
                                "describes a run for --log; %s takes the run from its file", mode);
        }
    for (size_t i = 0; i < sizeof log_only / sizeof log_only[0]; i++)
        if (cmd_has(a, log_only[i]))
            return err_setf(err, ERR_INPUT, NULL, log_only[i], "only with --log");
    return ERR_OK;
}

/* The first feasible rung of the plan's ladder above max_gpus, its layout
 * finalized for m; *gpus = 0 when the plan has none. */
static int plan_next(const cJSON *ladder, const char *file, const model_t *m, int max_gpus,
                     layout_t *l, int *gpus, err_t *err)
{
    *gpus = 0;
    json_ctx_t root = json_ctx_root(file), lad = json_ctx_member(&root, "ladder");
    int i = 0;
    const cJSON *rung;
    cJSON_ArrayForEach(rung, ladder)
    {
        json_ctx_t ctx = json_ctx_index(&lad, i++);
        int g = 0;
        const cJSON *lay = NULL;
        int rc;
        if ((rc = json_get_int(rung, "gpus", &ctx, JSON_REQUIRED, 1, 1 << 24, &g, err)))
            return rc;
        if (g <= max_gpus || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rung, "feasible")))
            continue;
        json_ctx_t lctx = json_ctx_member(&ctx, "layout");
        layout_defaults(l);
        if ((rc = json_get_object(rung, "layout", &ctx, JSON_REQUIRED, &lay, err)) ||
            (rc = layout_from_json(lay, &lctx, l, err)))
            return rc;
        if ((rc = layout_finalize(l, m, g, err)))
            return err_prefix(err, file);
        *gpus = g;
        return ERR_OK;
    }
    return ERR_OK;
}

/* The plan's prediction at the measured rungs, next to the ladder's rungs. */
static bool add_planned(cJSON *dbl, const cJSON *ladder)
{
    cJSON *rungs = cJSON_GetObjectItemCaseSensitive(dbl, "rungs"), *r;
    const cJSON *p;
    bool ok = true;
    cJSON_ArrayForEach(r, rungs)
    {
        double g = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "gpus"));
        cJSON_ArrayForEach(p, ladder)
        {
            if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(p, "gpus")) != g ||
                !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "feasible")))
                continue;
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "step_time_s");
            const cJSON *tk = cJSON_GetObjectItemCaseSensitive(p, "tokens_per_s");
            const cJSON *lay = cJSON_GetObjectItemCaseSensitive(p, "layout");
            cJSON *copy = lay ? cJSON_Duplicate(lay, 1) : NULL;
            ok = ok && json_add_number(r, "planned_step_time_s", cJSON_GetNumberValue(st)) &&
                 json_add_number(r, "planned_tokens_per_s", cJSON_GetNumberValue(tk));
            if (ok && copy && !cJSON_AddItemToObject(r, "planned_layout", copy)) {
                cJSON_Delete(copy);
                ok = false;
            } else if (!ok) {
                cJSON_Delete(copy);
            }
        }
    }
    return ok;
}

static cJSON *stat_json(const tlog_stat_t *st)
{
    cJSON *o = cJSON_CreateObject();
    if (o && json_add_number(o, "records", st->n) && json_add_number(o, "mean", st->mean) &&
        json_add_number(o, "sd", st->sd) && json_add_number(o, "cv", st->cv) &&
        json_add_number(o, "min", st->min) && json_add_number(o, "max", st->max))
        return o;
    cJSON_Delete(o);
    return NULL;
}

/* Where the run's batch, sequence length, GPU count and step time came
 * from, with the values the run used. */
static bool add_sources(cJSON *o, const logrun_t *r)
{
    const layout_t *l = &r->s.layout;
    cJSON *src = cJSON_CreateObject();
    if (!src || !cJSON_AddItemToObject(o, "sources", src)) {
        cJSON_Delete(src);
        return false;
    }
    const struct {
        const char *key;
        double value;
        const char *from;
    } rows[] = {{"global_batch", l->global_batch, r->from_batch},
                {"seq_len", l->seq_len, r->from_seq},
                {"gpus", l->n_gpus, r->from_gpus},
                {"step_time_s", r->log.step_time_s.mean, r->from_step}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToObject(src, rows[i].key, e) ||
            !json_add_number(e, "value", rows[i].value) ||
            !cJSON_AddStringToObject(e, "from", rows[i].from))
            return false;
    }
    return json_add_number(o, "logged_params", r->log.params > 0 ? r->log.params : NAN) &&
           json_add_number(o, "logged_params_line",
                           r->log.params_line > 0 ? r->log.params_line : NAN) &&
           cJSON_AddStringToObject(o, "logged_params_how", r->log.params_how) &&
           json_add_number(o, "runs", r->log.runs) && json_add_number(o, "folded_records", r->log.folded);
}

/* What the log gave: its format, records, warm-up, steady state and the
 * configuration it printed. */
static bool add_log(cJSON *run, const logrun_t *r)
{
    const trainlog_t *t = &r->log;
    cJSON *o = cJSON_CreateObject(), *st;
    if (!o || !cJSON_AddItemToObject(run, "log", o)) {
        cJSON_Delete(o);
        return false;
    }
    const tlog_record_t *first = t->first_steady >= 0 ? &t->records[t->first_steady] : NULL;
    if (!((st = stat_json(&t->step_time_s)) && cJSON_AddItemToObject(o, "steady_step_time_s", st))) {
        cJSON_Delete(st);
        return false;
    }
    return add_sources(o, r) && cJSON_AddStringToObject(o, "file", t->file) &&
           cJSON_AddStringToObject(o, "format", t->format) &&
           cJSON_AddStringToObject(o, "framework", t->framework) &&
           json_add_number(o, "records", t->n_records) &&
           json_add_number(o, "warmup_records", t->warmup) &&
           json_add_number(o, "first_steady_step", first ? (double)first->step : NAN) &&
           json_add_number(o, "logged_tflops_per_gpu", t->tflops_per_gpu.mean) &&
           json_add_number(o, "logged_mfu", t->mfu.mean) &&
           json_add_number(o, "memory_gib", t->memory_gib > 0 ? t->memory_gib : NAN) &&
           cJSON_AddStringToObject(o, "memory_kind", t->memory_kind) &&
           json_add_number(o, "memory_line", t->memory_line > 0 ? t->memory_line : NAN) &&
           cJSON_AddStringToObject(o, "steady_state", t->note) &&
           cJSON_AddStringToObject(o, "caveat", t->caveat) &&
           cJSON_AddStringToObject(o, "from_log", r->from_log) &&
           json_add_number(o, "argument_block_entries", t->n_args) &&
           json_add_number(o, "argument_block_skipped", r->margs_skipped);
}

static int print_run(const logrun_t *r, const dbl_check_t *c, double tolerance)
{
    const trainlog_t *t = &r->log;
    const scenario_t *s = &r->s;
    char desc[320];
    layout_text_long(&s->layout, desc, sizeof desc);
    printf("%s: %s log, %d records; %s\n", t->file, t->framework, t->n_records, t->note);
    printf("  %s on %d x %s, %s (%s preset, %s profile)\n", s->model.display, s->layout.n_gpus,
           s->cluster.gpu.name, desc, s->fw.name, s->profile.origin);
    textwrap_legend(stdout, desc, 2, 100);
    if (r->from_log[0])
        printf("  from the log: %s\n", r->from_log);
    printf("  batch %d sequences (%s), %d tokens each (%s), %d GPUs (%s)\n", s->layout.global_batch,
           r->from_batch, s->layout.seq_len, r->from_seq, s->layout.n_gpus, r->from_gpus);
    printf("  step time: %s\n", r->from_step);
    if (t->params > 0)
        printf("  the log counts %.4g parameters (line %d%s%s), within 10%% of the model's\n",
               t->params, t->params_line, t->params_how[0] ? ", " : "", t->params_how);
    if (t->n_args > 0)
        printf("  model and layout from the log's argument block (%d entries, %d not read: derived "
               "values and flags scaleplan does not model)\n",
               t->n_args, r->margs_skipped);
    if (t->caveat[0])
        printf("  note: %s\n", t->caveat);
    double cap = s->cluster.gpu.memory_gib;
    if (t->gpu_memory_gib > 0 && fabs(t->gpu_memory_gib / cap - 1) > 0.05)
        printf("  note: the log's GPU has %.2f GiB, %s %.1f GiB: name the variant with --gpu\n",
               t->gpu_memory_gib, s->cluster.gpu.name, cap);
    if (isfinite(t->tflops_per_gpu.mean) || isfinite(t->mfu.mean)) {
        printf("  the log's own FLOP count:");
        if (isfinite(t->tflops_per_gpu.mean))
            printf(" %.1f TFLOP/s per GPU", t->tflops_per_gpu.mean);
        if (isfinite(t->mfu.mean))
            printf("%s MFU %.1f%%", isfinite(t->tflops_per_gpu.mean) ? "," : "", 100 * t->mfu.mean);
        printf(" (not compared: frameworks count FLOPs differently)\n");
    }
    return report_check_text(stdout, &r->m, c, tolerance);
}

/* The doubling check over the runs, when they form a ladder; *why says
 * why not otherwise. */
static int ladder_of(const logrun_t *runs, int n, const cJSON *plan_ladder, const char *plan_file,
                     double tolerance, dbl_ladder_t *l, bool *have, char *why, size_t cap,
                     err_t *err)
{
    *have = false;
    if (n < 2) {
        snprintf(why, cap, "one log; give a log per rung for the doubling check");
        return ERR_OK;
    }
    dbl_measured_t m[MAX_LOGS];
    int max_gpus = 0, last = 0;
    for (int i = 0; i < n; i++) {
        m[i] = runs[i].m;
        if (runs[i].s.layout.n_gpus > max_gpus) {
            max_gpus = runs[i].s.layout.n_gpus;
            last = i;
        }
    }
    layout_t next;
    int next_gpus = 0, rc;
    if (plan_ladder &&
        (rc = plan_next(plan_ladder, plan_file, &runs[last].s.model, max_gpus, &next, &next_gpus, err)))
        return rc;
    err_t e;
    rc = dbl_ladder(m, n, next_gpus ? &next : NULL, next_gpus, tolerance, l, &e);
    if (rc == ERR_INPUT) {
        snprintf(why, cap, "%s", e.msg);
        return ERR_OK;
    }
    if (rc) {
        *err = e;
        return rc;
    }
    *have = true;
    return ERR_OK;
}

static cJSON *logs_json(const logrun_t *runs, const dbl_check_t *checks, int n,
                        const dbl_ladder_t *l, bool have, const char *why, const cJSON *plan_ladder,
                        double tolerance)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    bool ok = o && json_add_number(o, "tolerance", tolerance) &&
              (arr = cJSON_AddArrayToObject(o, "runs"));
    for (int i = 0; ok && i < n; i++) {
        cJSON *e = report_check_json(&runs[i].m, &checks[i], tolerance);
        ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "framework", runs[i].s.fw.name) &&
             add_log(e, &runs[i]);
        if (!ok && e && !cJSON_GetArrayItem(arr, i))
            cJSON_Delete(e);
    }
    if (ok && have) {
        cJSON *d = report_ladder_json(l, tolerance);
        ok = d && cJSON_AddItemToObject(o, "doubling", d) && (!plan_ladder || add_planned(d, plan_ladder));
        if (!ok && d && !cJSON_GetObjectItem(o, "doubling"))
            cJSON_Delete(d);
    } else if (ok) {
        ok = cJSON_AddNullToObject(o, "doubling") && cJSON_AddStringToObject(o, "doubling_why_not", why);
    }
    if (ok && plan_ladder) {
        cJSON *copy = cJSON_Duplicate(plan_ladder, 1);
        ok = copy && cJSON_AddItemToObject(o, "plan_ladder", copy);
        if (!ok)
            cJSON_Delete(copy);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int run_logs(const cmd_args_t *a, err_t *err)
{
    const char *paths[MAX_LOGS];
    int n = cmd_get_all(a, "--log", paths, MAX_LOGS);
    if (n > MAX_LOGS)
        return err_setf(err, ERR_INPUT, NULL, "--log", "at most %d logs (got %d)", MAX_LOGS, n);
    double flag_pct = 100 * LADDER_TOLERANCE, fail_pct = -1;
    int rc;
    if ((rc = cmd_get_double(a, "--flag-over", &flag_pct, err)) ||
        (rc = cmd_get_double(a, "--fail-over", &fail_pct, err)))
        return rc;
    double tol = flag_pct / 100;
    const char *plan_file = cmd_get(a, "--plan");
    cJSON *plan = NULL, *j = NULL;
    const cJSON *plan_ladder = NULL;
    logrun_t *runs = calloc((size_t)n, sizeof *runs);
    dbl_check_t *checks = calloc((size_t)n, sizeof *checks);
    dbl_ladder_t *ladder = malloc(sizeof *ladder);
    sim_ctx_t *ctx = sim_ctx_create();
    if (!runs || !checks || !ladder || !ctx) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out;
    }
    if (plan_file) {
        json_ctx_t pc = json_ctx_root(plan_file);
        if ((rc = json_parse_file(plan_file, &plan, err)) ||
            (rc = json_check_unique_keys(plan, &pc, err)) ||
            (rc = json_get_array(plan, "ladder", &pc, JSON_REQUIRED, &plan_ladder, err)))
            goto out;
    }
    for (int i = 0; i < n; i++)
        if ((rc = logrun_load(a, paths[i], &runs[i], err)) ||
            (rc = dbl_check_run(ctx, &runs[i].m, tol, &checks[i], err)))
            goto out;
    if (plan) {
        const char *pm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(plan, "model"));
        for (int i = 0; i < n; i++)
            if (pm && strcmp(pm, runs[i].s.model.name) != 0) {
                rc = err_setf(err, ERR_INPUT, plan_file, "model",
                              "the plan is for %s, but %s trains %s", pm, paths[i],
                              runs[i].s.model.name);
                goto out;
            }
    }
    bool have = false;
    char why[ERR_MSG_MAX];
    if ((rc = ladder_of(runs, n, plan_ladder, plan_file, tol, ladder, &have, why, sizeof why, err)))
        goto out;
    if (!cmd_machine_output(a)) {
        for (int i = 0; i < n && !rc; i++) {
            if (i)
                putchar('\n');
            rc = print_run(&runs[i], &checks[i], tol);
        }
        if (!rc && have) {
            putchar('\n');
            rc = report_ladder_text(stdout, ladder, tol);
        } else if (!rc && n > 1) {
            printf("\nNo doubling check: %s\n", why);
        }
        if (rc) {
            rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
            goto out;
        }
    }
    if (cmd_wants_result(a)) {
        if (!(j = logs_json(runs, checks, n, ladder, have, why, plan_ladder, tol))) {
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
            goto out;
        }
        if (!cmd_machine_output(a))
            putchar('\n');
        if ((rc = cmd_output_result(a, "scaleplan validate", j, "runs", err)))
            goto out;
    }
    for (int i = 0; i < n && fail_pct >= 0; i++)
        if (!(fabs(checks[i].error) <= fail_pct / 100)) {
            rc = err_setf(err, ERR_RUNTIME, paths[i], NULL,
                          "predicted %.4f s against measured %.4f s: %+.1f%%, over --fail-over %g%%",
                          checks[i].predicted.step_time_s, runs[i].m.step_time_s,
                          100 * checks[i].error, fail_pct);
            break;
        }
out:
    for (int i = 0; runs && i < n; i++)
        logrun_free(&runs[i]);
    free(runs);
    free(checks);
    free(ladder);
    sim_ctx_destroy(ctx);
    cJSON_Delete(j);
    cJSON_Delete(plan);
    return rc;
}

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    if (cmd_has(a, "--log"))
        return run_logs(a, err);
    if ((rc = refuse_run_options(a, cmd_get(a, "--published") ? "--published" : "--measured", err)))
        return rc;
    static const char *const published_only[] = {"--by-group",   "--fit-sustained",
                                                  "--max-median", "--max-p90",
                                                  "--max-group-median", "--dense"};
    for (size_t i = 0; !cmd_get(a, "--published") && i < 6; i++)
        if (cmd_has(a, published_only[i]))
            return err_setf(err, ERR_INPUT, NULL, published_only[i],
                            "goes with --published runs.csv");
    if (cmd_get(a, "--write-profiles") && !cmd_has(a, "--fit-sustained"))
        return err_setf(err, ERR_INPUT, NULL, "--write-profiles",
                        "goes with --published runs.csv --fit-sustained");
    if (cmd_get(a, "--published"))
        return run_published(a, cmd_get(a, "--published"), err);
    if (cmd_get(a, "--failures"))
        return cmd_validate_failures(a, cmd_get(a, "--failures"), err);
    const char *file = cmd_get(a, "--measured");
    if (!file && a->n_positional > 0)
        file = a->positional[0];
    if (!file)
        return err_setf(err, ERR_INPUT, NULL, "--measured",
                        "say which run to check: --measured run.json (scaleplan train --json)");
    double flag_pct = 10, fail_pct = -1;
    if ((rc = cmd_get_double(a, "--flag-over", &flag_pct, err)) ||
        (rc = cmd_get_double(a, "--fail-over", &fail_pct, err)))
        return rc;
    val_measured_t m;
    sim_ctx_t *ctx = NULL;
    cJSON *j = NULL;
    if ((rc = val_measured_load_in(a->catalog, file, cmd_get(a, "--profile"), &m, err)))
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
    if (!cmd_machine_output(a) && print_text(&m, &r, comp, n, flag_pct / 100)) {
        rc = err_set(err, ERR_RUNTIME, "cannot write to standard output");
        goto out;
    }
    if (cmd_wants_result(a)) {
        if (!(j = validate_json(&m, &r, comp, n, flag_pct / 100))) {
            rc = err_set(err, ERR_RUNTIME, "out of memory building JSON");
            goto out;
        }
        if (!cmd_machine_output(a))
            putchar('\n');
        if ((rc = cmd_output_result(a, "scaleplan validate", j, "components", err)))
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

static const cmd_group_t *const groups[] = {&own_group,        &CMD_MODEL_OPTS, &CMD_CLUSTER_OPTS,
                                            &CMD_LAYOUT_OPTS,  &CMD_SIM_OPTS,   &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_VALIDATE = {
    "validate",
    "simulate a measured run and compare, component by component",
    "scaleplan validate --measured run.json [--profile p.json] [--json]\n"
    "       scaleplan validate --log run.log [--log run2.log ...] [--plan plan.json]\n"
    "                          [--model M --gpu G ...]\n"
    "       scaleplan validate --published runs.csv [--by-group | --fit-sustained [--write-profiles DIR]]\n"
    "       scaleplan validate --failures failures.csv[,more.csv]",
    "Simulate the model, GPU, GPU count and layout of a measured run and print\n"
    "predicted against measured, in total and per breakdown component, with the\n"
    "error; errors over the tolerance are flagged. The run is what scaleplan\n"
    "train --json prints (on a GPU), or any file with its keys: model (or\n"
    "model_config), gpu, gpus, layout, step_time_s, breakdown_s, optionally\n"
    "framework (a sim --framework preset; a scaleplan train run replays with its\n"
    "own, scaleplan-train, otherwise megatron-core) and memory_gib. Predicted memory is\n"
    "judged against memory_gib.peak_measured (the device's peak, which the CUDA\n"
    "trainer reads from the driver) where given, else memory_gib.total.\n"
    "\n"
    "With --log, the run is a training log: Megatron-LM or Megatron-Bridge, NeMo 2,\n"
    "torchtitan, DeepSpeed, GPT-NeoX, Composer/llm-foundry, the Hugging Face\n"
    "Trainer, or a step,seconds[,tokens] CSV or JSON. Launcher rank prefixes are\n"
    "folded to one rank; warm-up steps (per run) are dropped and the steady state\n"
    "is compared with the simulator's prediction for the configuration the log\n"
    "prints (model, GPUs, parallel sizes, batch); what it does not print comes from\n"
    "the flags (--model, --gpu, --gpus, layout flags), and a flag that contradicts\n"
    "the log is an error. The global batch, sequence length and GPU count are never\n"
    "assumed: one that neither the log nor a flag gives is asked for by name\n"
    "(--global-batch or --tokens-per-step, --seq-len, --gpus), and the output says\n"
    "where each came from. Tokens a step the log records are the batch (a log that\n"
    "does not split them into sequences asks for --seq-len); a parameter count the\n"
    "log prints more than 10% from --model's, or a step faster than the GPU's dense\n"
    "peak allows, is refused naming its line. The verdict uses the plan's\n"
    "tolerance (10%, --flag-over).\n"
    "With logs at several GPU counts (or --plan and the logs so far), the\n"
    "doubling check tabulates predicted against measured scaling efficiency per\n"
    "rung, names the most likely cause of a rung that falls short, re-fits the\n"
    "profile's factors to the measured rungs and predicts the next doubling with\n"
    "an interval.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    0,
};
