#include "run/budget.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
        (rc = finite_nonneg(in->checkpoints, "checkpoints written", err)) ||
        (rc = finite_nonneg(in->storage_usd_per_gb_month, "--storage-price", err)) ||
        (rc = finite_nonneg(in->retain_months, "--retain-months", err)) ||
        (rc = finite_nonneg(in->dataset_bytes, "--dataset-size", err)) ||
        (rc = finite_nonneg(in->egress_bytes, "--egress", err)))
        return rc;
    if (!isfinite(in->egress_usd_per_tb))
        return err_setf(err, ERR_INPUT, NULL, "--egress-price", "must be a finite number");
    if (in->ckpt_keep < 0 || in->export_checkpoints < 0)
        return err_setf(err, ERR_INPUT, NULL, "--keep-checkpoints", "must not be negative");
    double hours = in->wall_s / 3600;
    out->gpu_hours = in->gpus * hours;
    out->ideal_gpu_hours = in->gpus * in->ideal_s / 3600;
    out->overhead_fraction = in->ideal_s > 0 ? in->wall_s / in->ideal_s - 1 : 0;
    out->compute_usd = out->gpu_hours * in->usd_per_gpu_hour;
    /* Checkpoints are written steadily over the run; the volume grows
     * until K are kept, then stays: integrate min(K, n t / T) over [0, T]. */
    double n = in->checkpoints, K = in->ckpt_keep > 0 ? in->ckpt_keep : n;
    double T_months = hours / HOURS_PER_MONTH, gb = in->ckpt_bytes / 1e9;
    double kept = fmin(K, n);
    double area = n > 0 ? (K >= n ? n * T_months / 2 : K * K * T_months / (2 * n) +
                                                        K * (T_months - K * T_months / n))
                        : 0;
    out->checkpoints_kept = kept;
    out->storage_tb = kept * in->ckpt_bytes / 1e12;
    out->storage_gb_months = area * gb;
    out->storage_usd_per_gb_month = in->storage_usd_per_gb_month > 0
                                        ? in->storage_usd_per_gb_month
                                        : price_storage_usd_per_gb_month(&in->storage,
                                                                         out->storage_tb);
    out->storage_usd_per_month_after = out->storage_tb * 1000 * out->storage_usd_per_gb_month;
    out->storage_usd = out->storage_gb_months * out->storage_usd_per_gb_month +
                       in->retain_months * out->storage_usd_per_month_after;
    /* data transfer: the dataset in, the export and the rest out */
    out->ingress_tb = in->dataset_bytes / 1e12;
    out->egress_tb = (in->egress_bytes + in->export_checkpoints * in->ckpt_bytes) / 1e12;
    out->ingress_usd = price_ingress_usd(&in->storage, out->ingress_tb);
    out->egress_usd = in->egress_usd_per_tb >= 0 ? out->egress_tb * in->egress_usd_per_tb
                                                 : price_egress_usd(&in->storage, out->egress_tb);
    out->cost_usd = out->compute_usd + out->storage_usd + out->ingress_usd + out->egress_usd;
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
        static const char *src[] = {"source", "kw_source", "pue_source", "energy_source",
                                    "staff_source", "amortization_source"};
        for (size_t k = 0; k < sizeof src / sizeof src[0] && !rc; k++) {
            char line[400];
            if ((rc = json_get_string(e, src[k], &ctx, JSON_REQUIRED, line, sizeof line, err)))
                break;
            size_t used = strlen(o->source);
            snprintf(o->source + used, sizeof o->source - used, "%s%s", used ? "; " : "", line);
        }
        if (rc)
            break;
        snprintf(o->gpu, sizeof o->gpu, "%s", name);
        o->capex_usd_per_gpu = capex / gpus;
        found = 1;
    }
    cJSON_Delete(root);
    if (!rc && !found)
        rc = err_setf(err, ERR_INPUT, NULL, "--capex",
                      "the price catalog has no own-cluster figures for %s; give --capex "
                      "(USD per GPU) and --kw-per-gpu",
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

int budget_offers(const char *gpu, const rel_config_t *rel, const rel_result_t *r,
                  const budget_input_t *in, const budget_t *b, bool reservation, price_end_t end,
                  const own_cluster_t *own, double utilization, budget_offer_t **rows, int *n,
                  int *skipped, double *breakeven, err_t *err)
{
    *rows = NULL;
    *n = *skipped = 0;
    *breakeven = NAN;
    price_t *all = NULL;
    size_t np = 0;
    int rc = price_load_all(&all, &np, err);
    if (rc)
        return rc;
    budget_offer_t *out = calloc(np + 1, sizeof *out);
    if (!out) {
        free(all);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    double extras = b->storage_usd + b->ingress_usd + b->egress_usd;
    rel_result_t spot_r;
    bool have_spot = false;
    for (size_t i = 0; i < np && !rc; i++) {
        if (strcmp(all[i].gpu, gpu) != 0)
            continue;
        if (!price_fits(&all[i], in->gpus)) {
            (*skipped)++;
            continue;
        }
        budget_offer_t *row = &out[(*n)++];
        snprintf(row->provider, sizeof row->provider, "%s", all[i].provider);
        snprintf(row->kind, sizeof row->kind, "%s", all[i].kind);
        snprintf(row->offering, sizeof row->offering, "%s", all[i].offering);
        row->usd_per_gpu_hour = price_usd(&all[i], end);
        row->usd_low = price_usd(&all[i], PRICE_LOW);
        row->usd_high = price_usd(&all[i], PRICE_HIGH);
        double wall = in->wall_s;
        if (strcmp(all[i].kind, "spot") == 0 && !reservation) {
            /* spot: the same run with preemptions */
            if (!have_spot) {
                rel_config_t c = *rel;
                double wait;
                if ((rc = price_spot_defaults(&c.preempt_per_node_hour,
                                              &c.preempt_node_exponent, &wait, err)))
                    break;
                c.preempt_wait_s = wait;
                c.progress = false;
                if ((rc = rel_simulate(&c, &spot_r, err)))
                    break;
                have_spot = true;
            }
            wall = spot_r.wall_s_p50;
        }
        row->wall_days = wall / 86400;
        row->cost_usd = in->gpus * wall / 3600 * row->usd_per_gpu_hour + extras;
    }
    (void)r;
    if (!rc && own) {
        budget_offer_t *row = &out[(*n)++];
        row->own = true;
        snprintf(row->provider, sizeof row->provider, "own cluster");
        snprintf(row->kind, sizeof row->kind, "capex+opex");
        snprintf(row->offering, sizeof row->offering,
                 "$%.0f per GPU over %.0f months at %.0f%% use, power and staff",
                 own->capex_usd_per_gpu, own->amortization_months, 100 * utilization);
        row->usd_per_gpu_hour = row->usd_low = row->usd_high =
            own_usd_per_gpu_hour(own, utilization);
        row->wall_days = in->wall_s / 86400;
        row->cost_usd = b->gpu_hours * row->usd_per_gpu_hour + extras;
        *breakeven = own_breakeven_months(own, in->usd_per_gpu_hour, utilization);
    }
    free(all);
    if (rc) {
        free(out);
        *n = 0;
        return rc;
    }
    *rows = out;
    return ERR_OK;
}
