#include "sim/budget.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/catalog.h"
#include "common/json.h"

static int finite_nonneg(double v, const char *flag, err_t *err)
{
    if (!isfinite(v) || v < 0)
        return err_setf(err, ERR_INPUT, NULL, flag, "must be a finite number >= 0 (got %g)", v);
    return ERR_OK;
}

int budget_compute(const budget_input_t *in, budget_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    int rc;
    if (in->gpus < 1)
        return err_setf(err, ERR_INPUT, NULL, "--gpus", "must be at least 1 (got %d)", in->gpus);
    if ((rc = finite_nonneg(in->wall_s, "wall time", err)) ||
        (rc = finite_nonneg(in->ideal_s, "compute time", err)) ||
        (rc = finite_nonneg(in->usd_per_gpu_hour, "--price", err)) ||
        (rc = finite_nonneg(in->ckpt_bytes, "--checkpoint-size", err)) ||
        (rc = finite_nonneg(in->storage_usd_per_gb_month, "--storage-price", err)) ||
        (rc = finite_nonneg(in->egress_bytes, "--egress", err)) ||
        (rc = finite_nonneg(in->egress_usd_per_tb, "--egress-price", err)))
        return rc;
    if (in->ckpt_keep < 0)
        return err_setf(err, ERR_INPUT, NULL, "--keep-checkpoints", "must not be negative");
    double hours = in->wall_s / 3600;
    out->gpu_hours = in->gpus * hours;
    out->ideal_gpu_hours = in->gpus * in->ideal_s / 3600;
    out->overhead_fraction = in->ideal_s > 0 ? in->wall_s / in->ideal_s - 1 : 0;
    out->compute_usd = out->gpu_hours * in->usd_per_gpu_hour;
    /* The last K checkpoints stay in storage for the length of the run. */
    out->storage_usd = in->ckpt_keep * in->ckpt_bytes / 1e9 * in->storage_usd_per_gb_month *
                       (hours / HOURS_PER_MONTH);
    out->egress_usd = in->egress_bytes / 1e12 * in->egress_usd_per_tb;
    out->cost_usd = out->compute_usd + out->storage_usd + out->egress_usd;
    out->cost_per_day_usd = in->gpus * 24.0 * in->usd_per_gpu_hour;
    return ERR_OK;
}

int own_cluster_load(const char *gpu, own_cluster_t *o, err_t *err)
{
    memset(o, 0, sizeof *o);
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse("topologies/catalog/prices.json", &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t top = json_ctx_root(origin);
    json_ctx_t arr_ctx = json_ctx_member(&top, "own_cluster");
    const cJSON *arr;
    rc = json_get_array(root, "own_cluster", &top, JSON_REQUIRED, &arr, err);
    int i = 0, found = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (rc || found)
            break;
        json_ctx_t ctx = json_ctx_index(&arr_ctx, i++);
        char name[32] = "";
        if ((rc = json_get_string(e, "gpu", &ctx, JSON_REQUIRED, name, sizeof name, err)))
            break;
        if (strcmp(name, gpu) != 0)
            continue;
        int gpus = 0;
        double capex = 0;
        if ((rc = json_get_int(e, "gpus", &ctx, JSON_REQUIRED, 1, 1 << 24, &gpus, err)) ||
            (rc = json_get_double(e, "capex_usd", &ctx, JSON_REQUIRED, 0, 1e13, &capex, err)) ||
            (rc = json_get_double(e, "kw_per_gpu", &ctx, JSON_REQUIRED, 0, 100, &o->kw_per_gpu,
                                  err)) ||
            (rc = json_get_double(e, "pue", &ctx, JSON_REQUIRED, 1, 5, &o->pue, err)) ||
            (rc = json_get_double(e, "usd_per_kwh", &ctx, JSON_REQUIRED, 0, 10, &o->usd_per_kwh,
                                  err)) ||
            (rc = json_get_double(e, "staff_usd_per_gpu_month", &ctx, JSON_REQUIRED, 0, 1e6,
                                  &o->staff_usd_per_gpu_month, err)) ||
            (rc = json_get_double(e, "amortization_months", &ctx, JSON_REQUIRED, 1, 600,
                                  &o->amortization_months, err)))
            break;
        snprintf(o->gpu, sizeof o->gpu, "%s", name);
        o->capex_usd_per_gpu = capex / gpus;
        found = 1;
    }
    cJSON_Delete(root);
    if (!rc && !found)
        rc = err_setf(err, ERR_INPUT, NULL, "--capex",
                      "the price catalog has no own-cluster figures for %s; give --capex "
                      "(USD per GPU)",
                      gpu);
    return rc;
}

double own_opex_per_gpu_hour(const own_cluster_t *o)
{
    return o->kw_per_gpu * o->pue * o->usd_per_kwh + o->staff_usd_per_gpu_month / HOURS_PER_MONTH;
}

double own_usd_per_gpu_hour(const own_cluster_t *o, double utilization)
{
    if (!(utilization > 0))
        return INFINITY;
    /* capital spread over the hours the cluster is actually used */
    double capex_hour = o->capex_usd_per_gpu / (o->amortization_months * HOURS_PER_MONTH * utilization);
    return capex_hour + own_opex_per_gpu_hour(o);
}

double own_breakeven_months(const own_cluster_t *o, double cloud_usd_per_gpu_hour,
                            double utilization)
{
    /* each used GPU-hour saves (cloud - opex); the capital is paid back
     * after capex / (730 x utilization x saving) months */
    double saving = cloud_usd_per_gpu_hour - own_opex_per_gpu_hour(o);
    if (!(saving > 0) || !(utilization > 0))
        return INFINITY;
    return o->capex_usd_per_gpu / (HOURS_PER_MONTH * utilization * saving);
}

double budget_required_mfu(double flops, int gpus, double seconds, double peak_tflops)
{
    if (!(seconds > 0) || gpus < 1 || !(peak_tflops > 0))
        return INFINITY;
    return flops / (gpus * seconds * peak_tflops * 1e12);
}
