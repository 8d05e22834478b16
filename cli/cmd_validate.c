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
#include "sim/step.h"

static const cli_opt_t own_opts[] = {
    {"--measured", NULL, "FILE", "the run: scaleplan train --json output (or the same keys)"},
    {"--profile", NULL, "FILE", "cost profile (default: the run's GPU's)"},
    {"--flag-over", NULL, "PCT", "flag components whose error exceeds this (default 10)"},
    {"--fail-over", NULL, "PCT", "exit 1 when the step time's error exceeds this"},
    CLI_REPORT_OPT,
    CLI_CSV_OPT,
};
static const cli_group_t own_group = {"Validate", own_opts, sizeof own_opts / sizeof own_opts[0]};

/* The configuration of a measured run, ready to simulate. */
typedef struct {
    cli_sim_setup_t s;
    const cJSON *root;
    const char *file;
    char framework[32];
} measured_t;

static int load_measured(const cJSON *root, const char *file, const char *profile,
                         measured_t *m, err_t *err)
{
    memset(m, 0, sizeof *m);
    m->root = root;
    m->file = file;
    json_ctx_t ctx = json_ctx_root(file);
    int rc = json_expect_object(root, &ctx, err);
    if (rc)
        return rc;
    char model[128] = "", gpu[64] = "";
    int gpus = 0, per_node = 0;
    const cJSON *cfg = NULL, *lay = NULL;
    snprintf(m->framework, sizeof m->framework, "megatron-core");
    if ((rc = json_get_string(root, "model", &ctx, JSON_REQUIRED, model, sizeof model, err)) ||
        (rc = json_get_string(root, "gpu", &ctx, JSON_REQUIRED, gpu, sizeof gpu, err)) ||
        (rc = json_get_int(root, "gpus", &ctx, JSON_REQUIRED, 1, 1 << 24, &gpus, err)) ||
        (rc = json_get_int(root, "gpus_per_node", &ctx, JSON_OPTIONAL, 1, 4096, &per_node, err)) ||
        (rc = json_get_object(root, "model_config", &ctx, JSON_OPTIONAL, &cfg, err)) ||
        (rc = json_get_object(root, "layout", &ctx, JSON_REQUIRED, &lay, err)) ||
        (rc = json_get_string(root, "framework", &ctx, JSON_OPTIONAL, m->framework,
                              sizeof m->framework, err)))
        return rc;
    if (strcmp(gpu, "cpu") == 0)
        return err_setf(err, ERR_INPUT, file, "gpu",
                        "this run was measured on the CPU; the simulator models GPUs, so validate "
                        "a run made with --device cuda on a catalog GPU");
    cli_sim_setup_t *s = &m->s;
    rc = cfg ? model_from_config(cfg, file, model, &s->model, err)
             : model_load(model, &s->model, err);
    if (rc)
        return rc;
    /* a trainer run that did not apply the config's dropout keeps no masks */
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "dropout_disabled")))
        s->model.dropout = 0;
    cluster_spec_t spec;
    memset(&spec, 0, sizeof spec);
    spec.gpu = gpu;
    spec.n_gpus = gpus;
    spec.gpus_per_node = per_node;
    if ((rc = cluster_resolve(&spec, &s->cluster, err)))
        return rc;
    layout_defaults(&s->layout);
    json_ctx_t lctx = json_ctx_member(&ctx, "layout");
    if ((rc = sim_options_framework(m->framework, &s->opt, &s->layout, err)) ||
        (rc = layout_from_json(lay, &lctx, &s->layout, err)) ||
        (rc = layout_finalize(&s->layout, &s->model, gpus, err)))
        return rc;
    /* the run says whether its gradient reduction overlapped the backward */
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(root, "overlap_grad_reduce");
    if (cJSON_IsBool(ov))
        s->opt.overlap_grad_reduce = cJSON_IsTrue(ov);
    return cli_sim_finish(s, profile, err);
}

typedef struct {
    char name[24];
    double predicted_s, measured_s, error;
    bool flagged;
} component_t;

#define MAX_COMPONENTS (BD_COUNT + 1)

static double rel_error(double predicted, double measured)
{
    return measured > 0 ? (predicted - measured) / measured : NAN;
}

/* The step, then every breakdown part that either side gives more than
 * 0.5% of the step. */
static int compare(const measured_t *m, const sim_result_t *r, double flag_over,
                   component_t *c, int *n, err_t *err)
{
    json_ctx_t ctx = json_ctx_root(m->file);
    double measured_step = 0;
    int rc = json_get_double(m->root, "step_time_s", &ctx, JSON_REQUIRED, 1e-12, 1e9,
                             &measured_step, err);
    if (rc)
        return rc;
    *n = 0;
    component_t *step = &c[(*n)++];
    snprintf(step->name, sizeof step->name, "step");
    step->predicted_s = r->step_time_s;
    step->measured_s = measured_step;
    const cJSON *bd = NULL;
    if ((rc = json_get_object(m->root, "breakdown_s", &ctx, JSON_OPTIONAL, &bd, err)))
        return rc;
    json_ctx_t bctx = json_ctx_member(&ctx, "breakdown_s");
    for (int i = 0; bd && i < BD_COUNT; i++) {
        double meas = 0;
        if ((rc = json_get_double(bd, sim_bd_name((sim_bd_t)i), &bctx, JSON_OPTIONAL, 0, 1e9,
                                  &meas, err)))
            return rc;
        double pred = r->breakdown_s[i];
        if (meas < 0.005 * measured_step && pred < 0.005 * r->step_time_s)
            continue;
        component_t *k = &c[(*n)++];
        snprintf(k->name, sizeof k->name, "%s", sim_bd_name((sim_bd_t)i));
        k->predicted_s = pred;
        k->measured_s = meas;
    }
    for (int i = 0; i < *n; i++) {
        c[i].error = rel_error(c[i].predicted_s, c[i].measured_s);
        c[i].flagged = !(fabs(c[i].error) <= flag_over);
    }
    return ERR_OK;
}

static cJSON *validate_json(const measured_t *m, const sim_result_t *r, const component_t *c,
                            int n, double flag_over)
{
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(m->root, "memory_gib");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(mem, "total");
    const cJSON *tps = cJSON_GetObjectItemCaseSensitive(m->root, "tokens_per_s");
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
              json_add_number(o, "measured_tokens_per_s",
                              cJSON_IsNumber(tps) ? tps->valuedouble : NAN) &&
              json_add_number(o, "predicted_memory_gib", pred_gib) &&
              json_add_number(o, "measured_memory_gib",
                              cJSON_IsNumber(mt) ? mt->valuedouble : NAN) &&
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

static int print_text(const measured_t *m, const component_t *c, int n, double flag_over)
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

static int run(const cli_args_t *a, err_t *err)
{
    int rc = ERR_OK;
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
    cJSON *root = NULL;
    if ((rc = json_parse_file(file, &root, err)))
        return rc;
    measured_t m;
    sim_ctx_t *ctx = NULL;
    cJSON *j = NULL;
    if ((rc = load_measured(root, file, cli_get(a, "--profile"), &m, err)))
        goto out;
    if (!(ctx = sim_ctx_create())) {
        rc = err_set(err, ERR_RUNTIME, "out of memory");
        goto out;
    }
    sim_result_t r;
    if ((rc = sim_run_step(ctx, &m.s.input, &r, err)))
        goto out;
    component_t comp[MAX_COMPONENTS];
    int n = 0;
    if ((rc = compare(&m, &r, flag_pct / 100, comp, &n, err)))
        goto out;
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
    cli_sim_setup_free(&m.s);
    cJSON_Delete(root);
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
