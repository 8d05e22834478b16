/* power: phase power, run energy, caps and Perseus's bloat (see the
 * header). */
#include "run/power.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"
#include "common/json.h"

#define POWER_FILE "sim/catalog/power.json"

static int read_activity(const cJSON *root, const json_ctx_t *ctx, power_model_t *m, err_t *err)
{
    const cJSON *act, *clk, *def;
    json_ctx_t ca = json_ctx_member(ctx, "activity"), cc = json_ctx_member(ctx, "clock"),
               cd = json_ctx_member(ctx, "defaults");
    int rc;
    if ((rc = json_get_object(root, "activity", ctx, JSON_REQUIRED, &act, err)) ||
        (rc = json_get_double(act, "compute", &ca, JSON_REQUIRED, 0, 1, &m->act_compute, err)) ||
        (rc = json_get_double(act, "comm_wait", &ca, JSON_REQUIRED, 0, 1, &m->act_comm, err)) ||
        (rc = json_get_double(act, "idle_wait", &ca, JSON_REQUIRED, 0, 1, &m->act_idle, err)) ||
        (rc = json_get_string(act, "source", &ca, JSON_REQUIRED, m->activity_source,
                              sizeof m->activity_source, err)) ||
        (rc = json_get_object(root, "clock", ctx, JSON_REQUIRED, &clk, err)) ||
        (rc = json_get_double(clk, "power_exponent", &cc, JSON_REQUIRED, 1, 5, &m->clock_exponent,
                              err)) ||
        (rc = json_get_string(clk, "source", &cc, JSON_REQUIRED, m->clock_source,
                              sizeof m->clock_source, err)) ||
        (rc = json_get_object(root, "defaults", ctx, JSON_REQUIRED, &def, err)) ||
        (rc = json_get_double(def, "pue", &cd, JSON_REQUIRED, 1, 5, &m->pue, err)) ||
        (rc = json_get_double(def, "usd_per_kwh", &cd, JSON_REQUIRED, 0, 10, &m->usd_per_kwh,
                              err)) ||
        (rc = json_get_string(def, "source", &cd, JSON_REQUIRED, m->defaults_source,
                              sizeof m->defaults_source, err)))
        return rc;
    return ERR_OK;
}

/* The GPU's own entry, or the fallback's fractions of its TDP. */
static int read_gpu(const cJSON *root, const json_ctx_t *ctx, power_model_t *m, err_t *err)
{
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(root, "gpus"), *g;
    json_ctx_t cg = json_ctx_member(ctx, "gpus");
    int i = 0, rc;
    cJSON_ArrayForEach(g, gpus)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(g, "name");
        if (cJSON_IsString(name) && strcmp(name->valuestring, m->gpu) == 0) {
            json_ctx_t c = json_ctx_index(&cg, i);
            double gpn = 8;
            if ((rc = json_get_double(g, "idle_w", &c, JSON_REQUIRED, 0, 1e4, &m->idle_w, err)) ||
                (rc = json_get_double(g, "min_limit_w", &c, JSON_REQUIRED, 0, 1e4,
                                      &m->min_limit_w, err)) ||
                (rc = json_get_double(g, "node_overhead_w", &c, JSON_REQUIRED, 0, 1e6,
                                      &m->node_overhead_w, err)) ||
                (rc = json_get_double(g, "gpus_per_node", &c, JSON_REQUIRED, 1, 1024, &gpn, err)) ||
                (rc = json_get_string(g, "source", &c, JSON_REQUIRED, m->gpu_source,
                                      sizeof m->gpu_source, err)))
                return rc;
            m->gpus_per_node = (int)gpn;
            return ERR_OK;
        }
        i++;
    }
    const cJSON *fb;
    json_ctx_t cf = json_ctx_member(ctx, "fallback");
    double idle_f, min_f, per_gpu;
    if ((rc = json_get_object(root, "fallback", ctx, JSON_REQUIRED, &fb, err)) ||
        (rc = json_get_double(fb, "idle_fraction", &cf, JSON_REQUIRED, 0, 1, &idle_f, err)) ||
        (rc = json_get_double(fb, "min_limit_fraction", &cf, JSON_REQUIRED, 0, 1, &min_f, err)) ||
        (rc = json_get_double(fb, "node_overhead_w_per_gpu", &cf, JSON_REQUIRED, 0, 1e4, &per_gpu,
                              err)) ||
        (rc = json_get_string(fb, "source", &cf, JSON_REQUIRED, m->gpu_source,
                              sizeof m->gpu_source, err)))
        return rc;
    m->gpu_assumed = true;
    m->idle_w = idle_f * m->tdp_w;
    m->min_limit_w = min_f * m->tdp_w;
    m->gpus_per_node = 8;
    m->node_overhead_w = per_gpu * m->gpus_per_node;
    return ERR_OK;
}

int power_model_load(const char *gpu, double tdp_w, power_model_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->gpu, sizeof out->gpu, "%s", gpu);
    out->tdp_w = tdp_w;
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(POWER_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    rc = read_activity(root, &ctx, out, err);
    if (!rc)
        rc = read_gpu(root, &ctx, out, err);
    cJSON_Delete(root);
    if (!rc && !(out->idle_w < out->tdp_w))
        rc = err_setf(err, ERR_RUNTIME, NULL, POWER_FILE, "%s: idle_w %.0f W is not below its TDP",
                      gpu, out->idle_w);
    return rc;
}

double power_draw_w(const power_model_t *m, double activity)
{
    return m->idle_w + activity * (m->tdp_w - m->idle_w);
}

int power_cap_check(const power_model_t *m, double cap_w, err_t *err)
{
    if (cap_w > m->tdp_w)
        return err_setf(err, ERR_INPUT, NULL, "--power-cap",
                        "%.0f W is above the %s's TDP, its highest power limit (%.0f W)", cap_w,
                        m->gpu, m->tdp_w);
    if (cap_w < m->min_limit_w)
        return err_setf(err, ERR_INPUT, NULL, "--power-cap",
                        "%.0f W is below the %s's lowest power limit (%.0f W%s)", cap_w, m->gpu,
                        m->min_limit_w, m->gpu_assumed ? ", ASSUMED" : "");
    return ERR_OK;
}

double power_clock_ratio(const power_model_t *m, double cap_w)
{
    double compute = power_draw_w(m, m->act_compute);
    if (!(cap_w > 0) || cap_w >= compute)
        return 1;
    return pow((cap_w - m->idle_w) / (compute - m->idle_w), 1 / m->clock_exponent);
}

void power_step(const power_model_t *m, const sim_result_t *r, double cap_w, power_step_t *out)
{
    memset(out, 0, sizeof *out);
    const double *b = r->breakdown_s;
    double compute = b[BD_COMPUTE] + b[BD_RECOMPUTE] + b[BD_OPTIMIZER];
    double comm = b[BD_TP_COMM] + b[BD_CP_COMM] + b[BD_EP_COMM] + b[BD_PP_COMM] + b[BD_DP_COMM] +
                  b[BD_OFFLOAD] + b[BD_MOE_IMBALANCE] + b[BD_STRAGGLER];
    double idle = b[BD_PP_BUBBLE] + b[BD_HOST] + b[BD_OTHER];
    out->clock_ratio = power_clock_ratio(m, cap_w);
    /* compute and the bubbles (other stages' compute) stretch with the
     * clock; exposed communication does not */
    out->compute_s = compute / out->clock_ratio;
    out->idle_s = b[BD_PP_BUBBLE] / out->clock_ratio + (idle - b[BD_PP_BUBBLE]);
    out->comm_s = comm;
    out->step_s = out->compute_s + out->comm_s + out->idle_s;
    out->compute_w = power_draw_w(m, m->act_compute);
    if (cap_w > 0 && cap_w < out->compute_w)
        out->compute_w = cap_w;
    out->comm_w = fmin(power_draw_w(m, m->act_comm), out->compute_w);
    out->idle_w = fmin(power_draw_w(m, m->act_idle), out->compute_w);
    out->energy_j = out->compute_s * out->compute_w + out->comm_s * out->comm_w +
                    out->idle_s * out->idle_w;
    out->avg_w = out->step_s > 0 ? out->energy_j / out->step_s : 0;
}

void power_run(const power_model_t *m, const power_step_t *s, int n_gpus,
               const power_run_in_t *in, double pue, double usd_per_kwh, double g_co2_per_kwh,
               power_run_t *out)
{
    memset(out, 0, sizeof *out);
    out->nodes = (n_gpus + m->gpus_per_node - 1) / m->gpus_per_node;
    double node_w = out->nodes * m->node_overhead_w;
    double gpu_j = n_gpus * (in->compute_s * s->avg_w +
                             (in->checkpoint_s + in->restart_s) * m->idle_w);
    double node_j = node_w * in->wall_s;
    out->gpu_mwh = gpu_j / 3.6e9;
    out->node_mwh = node_j / 3.6e9;
    out->it_mwh = out->gpu_mwh + out->node_mwh;
    out->facility_mwh = out->it_mwh * pue;
    out->usd = out->facility_mwh * 1000 * usd_per_kwh;
    out->tco2 = out->facility_mwh * 1000 * g_co2_per_kwh / 1e6;
    out->peak_mw = (n_gpus * s->compute_w + node_w) * pue / 1e6;
    out->avg_mw = in->wall_s > 0 ? out->facility_mwh * 3600 / in->wall_s : 0;
    out->comm_pause_mw = (n_gpus * s->comm_w + node_w) * pue / 1e6;
    out->ckpt_pause_mw = (n_gpus * m->idle_w + node_w) * pue / 1e6;
    out->swing_comm_mw = out->peak_mw - out->comm_pause_mw;
    out->swing_ckpt_mw = out->peak_mw - out->ckpt_pause_mw;
}

static bool is_compute_task(sim_task_kind_t k)
{
    return k == TASK_FWD || k == TASK_BWD || k == TASK_WGRAD || k == TASK_FWD_BWD ||
           k == TASK_OPTIMIZER;
}

/* Energy one lighter stage saves by running its work c_s at the clock
 * that finishes it in c_max_s instead of racing and idling. */
static double stage_saving_j(const power_model_t *m, const power_step_t *s, double c_s,
                             double c_max_s)
{
    double dyn = s->compute_w - m->idle_w; /* above idle at today's clock */
    if (!(dyn > 0) || !(c_s > 0) || c_s >= c_max_s)
        return 0;
    double f_min = m->min_limit_w > m->idle_w && m->min_limit_w < s->compute_w
                       ? pow((m->min_limit_w - m->idle_w) / dyn, 1 / m->clock_exponent)
                       : 0;
    double f = fmax(c_s / c_max_s, f_min);
    double race = c_s * s->compute_w + (c_max_s - c_s) * s->idle_w;
    double slow_s = c_s / f;
    double slow = slow_s * (m->idle_w + dyn * pow(f, m->clock_exponent)) +
                  (c_max_s - slow_s) * s->idle_w;
    return fmax(0, race - slow);
}

double power_bloat(const power_model_t *m, const sim_event_t *ev, int n, int stages,
                   const power_step_t *s)
{
    if (stages < 2 || n <= 0 || !(s->energy_j > 0))
        return 0;
    double *c = calloc((size_t)stages, sizeof *c);
    if (!c)
        return 0; /* the caller prints no bloat rather than a wrong one */
    for (int i = 0; i < n; i++)
        if (ev[i].stage >= 0 && ev[i].stage < stages && ev[i].stream == 0 &&
            is_compute_task(ev[i].kind))
            c[ev[i].stage] += (ev[i].end_s - ev[i].start_s) / s->clock_ratio;
    double c_max = 0;
    for (int i = 0; i < stages; i++)
        c_max = fmax(c_max, c[i]);
    double saved = 0, total = 0;
    for (int i = 0; i < stages; i++) {
        saved += stage_saving_j(m, s, c[i], c_max);
        /* this stage's GPU: the critical one's step less the compute it
         * does not do (idling instead) */
        total += s->energy_j - (c_max - c[i]) * (s->compute_w - s->idle_w);
    }
    free(c);
    return total > 0 ? saved / total : 0;
}
