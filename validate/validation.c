#include "validate/validation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "models/hfconfig.h"
#include "models/layout_json.h"
#include "sim/step.h"

/* ------------------------------------------------------------ measured runs */

/* Model, cluster, framework and layout of the run in root. */
static int measured_scenario(catalog_t *cat, const cJSON *root, const char *file,
                             const char *profile, val_measured_t *m, err_t *err)
{
    json_ctx_t ctx = json_ctx_root(file);
    int rc = json_expect_object(root, &ctx, err);
    if (rc)
        return rc;
    char model[128] = "", gpu[64] = "";
    int gpus = 0, per_node = 0;
    const cJSON *cfg = NULL, *lay = NULL;
    /* scaleplan train's own runs (they name their backend) replay with the
     * trainer's preset; other runs default to Megatron-Core */
    snprintf(m->framework, sizeof m->framework, "%s",
             cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "backend")) ? "scaleplan-train"
                                                                              : "megatron-core");
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
    model_t given;
    scenario_spec_t spec = {0};
    spec.model = model;
    if (cfg) {
        if ((rc = model_from_config(cfg, file, model, &given, err)))
            return rc;
        spec.model_given = &given;
    }
    spec.cluster.catalog = cat;
    spec.cluster.gpu = gpu;
    spec.cluster.n_gpus = gpus;
    spec.cluster.gpus_per_node = per_node;
    spec.framework = m->framework;
    scenario_t *s = &m->s;
    if ((rc = scenario_begin(&spec, s, err)))
        return rc;
    /* a trainer run that did not apply the config's dropout keeps no masks */
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "dropout_disabled")))
        s->model.dropout = 0;
    json_ctx_t lctx = json_ctx_member(&ctx, "layout");
    if ((rc = layout_from_json(lay, &lctx, &s->layout, err)))
        return rc;
    /* the run says whether its gradient reduction overlapped the backward */
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(root, "overlap_grad_reduce");
    if (cJSON_IsBool(ov))
        s->opt.overlap_grad_reduce = cJSON_IsTrue(ov);
    return scenario_finish(s, profile, err);
}

/* What was measured: the step, its parts, tokens/s and memory. */
static int measured_figures(const cJSON *root, const char *file, val_measured_t *m, err_t *err)
{
    json_ctx_t ctx = json_ctx_root(file);
    int rc = json_get_double(root, "step_time_s", &ctx, JSON_REQUIRED, 1e-12, 1e9,
                             &m->step_time_s, err);
    if (rc)
        return rc;
    const cJSON *bd = NULL;
    if ((rc = json_get_object(root, "breakdown_s", &ctx, JSON_OPTIONAL, &bd, err)))
        return rc;
    json_ctx_t bctx = json_ctx_member(&ctx, "breakdown_s");
    for (int i = 0; bd && i < BD_COUNT; i++) {
        const char *key = sim_bd_name((sim_bd_t)i);
        if ((rc = json_get_double(bd, key, &bctx, JSON_OPTIONAL, 0, 1e9, &m->part_s[i], err)))
            return rc;
        m->has_part[i] = true;
    }
    const cJSON *tps = cJSON_GetObjectItemCaseSensitive(root, "tokens_per_s");
    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(root, "memory_gib");
    json_ctx_t mctx = json_ctx_member(&ctx, "memory_gib");
    /* absent figures are NaN below: a NaN or Infinity in the file is refused */
    if ((rc = json_check_finite(root, "tokens_per_s", &ctx, err)) ||
        (rc = json_check_finite(mem, "total", &mctx, err)) ||
        (rc = json_check_finite(mem, "peak_measured", &mctx, err)))
        return rc;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(mem, "total");
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(mem, "peak_measured");
    m->tokens_per_s = cJSON_IsNumber(tps) ? tps->valuedouble : NAN;
    m->memory_gib = cJSON_IsNumber(mt) ? mt->valuedouble : NAN;
    /* a zero or negative peak means the run could not read one */
    m->memory_peak_gib = cJSON_IsNumber(mp) && mp->valuedouble > 0 ? mp->valuedouble : NAN;
    return ERR_OK;
}

double val_measured_memory_gib(const val_measured_t *m)
{
    return isnan(m->memory_peak_gib) ? m->memory_gib : m->memory_peak_gib;
}

int val_measured_load(const char *path, const char *profile, val_measured_t *m, err_t *err)
{
    return val_measured_load_in(NULL, path, profile, m, err);
}

/* A measured step no GPU could take: the model FLOPs per GPU it implies
 * above the ceiling of the run's precision (sim_ceiling_tflops). */
static int measured_physical(const val_measured_t *m, const char *file, err_t *err)
{
    const sim_input_t *in = &m->s.input;
    double ceiling = sim_ceiling_tflops(in);
    double implied = sim_implied_tflops(in, m->step_time_s);
    if (!(ceiling > 0) || !(implied > ceiling))
        return ERR_OK;
    return err_setf(err, ERR_INPUT, file, "step_time_s",
                    "%.4g s implies %.0f model TFLOP/s per GPU (%.0f%% of the %s's %.0f "
                    "TFLOP/s dense peak): no GPU runs that fast, so the model, the layout's "
                    "batch or the GPU count is not the run's",
                    m->step_time_s, implied, 100 * implied / ceiling, in->cluster->gpu.name,
                    ceiling);
}

int val_measured_load_in(catalog_t *cat, const char *path, const char *profile,
                         val_measured_t *m, err_t *err)
{
    memset(m, 0, sizeof *m);
    cJSON *root = NULL;
    json_ctx_t top = json_ctx_root(path);
    int rc = json_parse_file(path, &root, err);
    if (rc)
        return rc;
    if (!(rc = json_check_unique_keys(root, &top, err)) &&
        !(rc = measured_scenario(cat, root, path, profile, m, err)) &&
        !(rc = measured_figures(root, path, m, err)))
        rc = measured_physical(m, path, err);
    cJSON_Delete(root);
    return rc;
}

void val_measured_free(val_measured_t *m)
{
    scenario_free(&m->s);
}

static double rel_error(double predicted, double measured)
{
    return measured > 0 ? (predicted - measured) / measured : NAN;
}

void val_measured_compare(const val_measured_t *m, const sim_result_t *r, double flag_over,
                          val_component_t *c, int *n)
{
    *n = 0;
    val_component_t *step = &c[(*n)++];
    snprintf(step->name, sizeof step->name, "step");
    step->predicted_s = r->step_time_s;
    step->measured_s = m->step_time_s;
    for (int i = 0; i < BD_COUNT; i++) {
        if (!m->has_part[i])
            continue;
        double meas = m->part_s[i], pred = r->breakdown_s[i];
        if (meas < 0.005 * m->step_time_s && pred < 0.005 * r->step_time_s)
            continue;
        val_component_t *k = &c[(*n)++];
        snprintf(k->name, sizeof k->name, "%s", sim_bd_name((sim_bd_t)i));
        k->predicted_s = pred;
        k->measured_s = meas;
    }
    for (int i = 0; i < *n; i++) {
        c[i].error = rel_error(c[i].predicted_s, c[i].measured_s);
        c[i].flagged = !(fabs(c[i].error) <= flag_over);
    }
}
