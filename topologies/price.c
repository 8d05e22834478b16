#include "topologies/price.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/catalog.h"

#define PRICE_FILE "topologies/catalog/prices.json"

static int price_from_json(const cJSON *obj, const json_ctx_t *ctx, void *out,
                           err_t *err)
{
    price_t *p = out;
    memset(p, 0, sizeof *p);
    int rc;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "provider", ctx, JSON_REQUIRED, p->provider,
                              sizeof p->provider, err)) ||
        (rc = json_get_string(obj, "offering", ctx, JSON_REQUIRED, p->offering,
                              sizeof p->offering, err)) ||
        (rc = json_get_string(obj, "gpu", ctx, JSON_REQUIRED, p->gpu,
                              sizeof p->gpu, err)) ||
        (rc = json_get_string(obj, "kind", ctx, JSON_REQUIRED, p->kind,
                              sizeof p->kind, err)) ||
        (rc = json_get_string(obj, "date", ctx, JSON_REQUIRED, p->date,
                              sizeof p->date, err)) ||
        (rc = json_get_double(obj, "usd_per_gpu_hour", ctx, JSON_REQUIRED, 0,
                              1e4, &p->usd_per_gpu_hour, err)) ||
        (rc = json_get_double(obj, "usd_per_gpu_hour_high", ctx, JSON_OPTIONAL,
                              0, 1e4, &p->usd_per_gpu_hour_high, err)) ||
        (rc = json_get_bool(obj, "default", ctx, JSON_OPTIONAL, &p->is_default,
                            err)) ||
        (rc = json_get_int(obj, "gpus_min", ctx, JSON_OPTIONAL, 0, 1 << 24, &p->gpus_min, err)) ||
        (rc = json_get_int(obj, "gpus_max", ctx, JSON_OPTIONAL, 0, 1 << 24, &p->gpus_max, err)) ||
        (rc = json_get_string(obj, "size_source", ctx, JSON_OPTIONAL, p->size_source,
                              sizeof p->size_source, err)) ||
        (rc = json_get_string(obj, "environment", ctx, JSON_REQUIRED, p->environment,
                              sizeof p->environment, err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, p->source,
                              sizeof p->source, err)))
        return rc;
    if (p->usd_per_gpu_hour_high && p->usd_per_gpu_hour_high < p->usd_per_gpu_hour)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "usd_per_gpu_hour_high %g is below usd_per_gpu_hour %g",
                        p->usd_per_gpu_hour_high, p->usd_per_gpu_hour);
    return ERR_OK;
}

static const char *end_names[] = {"low", "mid", "high"};

int price_end_parse(const char *text, price_end_t *out, err_t *err)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(text, end_names[i]) == 0) {
            *out = (price_end_t)i;
            return ERR_OK;
        }
    return err_setf(err, ERR_INPUT, NULL, "--price-end", "use low, mid or high (got '%s')", text);
}

const char *price_end_name(price_end_t e)
{
    return e <= PRICE_HIGH ? end_names[e] : "?";
}

double price_usd(const price_t *p, price_end_t end)
{
    double lo = p->usd_per_gpu_hour;
    double hi = p->usd_per_gpu_hour_high > 0 ? p->usd_per_gpu_hour_high : lo;
    return end == PRICE_LOW ? lo : end == PRICE_HIGH ? hi : 0.5 * (lo + hi);
}

bool price_fits(const price_t *p, int n)
{
    return n <= 0 || ((p->gpus_min <= 0 || n >= p->gpus_min) &&
                      (p->gpus_max <= 0 || n <= p->gpus_max));
}

int price_load_all(price_t **prices, size_t *count, err_t *err)
{
    return catalog_load_table(PRICE_FILE, "prices", sizeof(**prices),
                              price_from_json, (void **)prices, count, err);
}

int price_default_for_gpu(const char *gpu_name, int gpus, price_t *out, err_t *err)
{
    price_t *all = NULL;
    size_t n = 0;
    int rc = price_load_all(&all, &n, err);
    if (rc)
        return rc;
    rc = err_setf(err, ERR_INPUT, NULL, "--price",
                  "the price catalog quotes no default price for %s%s; give "
                  "--price (USD per GPU-hour)",
                  gpu_name, gpus > 0 ? " at this size" : "");
    for (size_t i = 0; i < n; i++)
        if (all[i].is_default && strcmp(all[i].gpu, gpu_name) == 0 && price_fits(&all[i], gpus)) {
            *out = all[i];
            err_clear(err);
            rc = ERR_OK;
            break;
        }
    free(all);
    return rc;
}

int price_find(const char *gpu_name, const char *provider, const char *kind, int gpus,
               price_t *out, err_t *err)
{
    price_t *all = NULL;
    size_t n = 0;
    int rc = price_load_all(&all, &n, err);
    if (rc)
        return rc;
    const price_t *any = NULL, *exact = NULL;
    char providers[256] = "";
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i].gpu, gpu_name) != 0)
            continue;
        if (!strstr(providers, all[i].provider)) {
            if (providers[0])
                strncat(providers, ", ", sizeof providers - strlen(providers) - 1);
            strncat(providers, all[i].provider, sizeof providers - strlen(providers) - 1);
        }
        if (strcasecmp(all[i].provider, provider) != 0 || !price_fits(&all[i], gpus))
            continue;
        if (!any)
            any = &all[i];
        if (!exact && strcasecmp(all[i].kind, kind ? kind : "on-demand") == 0)
            exact = &all[i];
    }
    const price_t *hit = exact ? exact : any;
    if (hit) {
        *out = *hit;
        rc = ERR_OK;
    } else if (providers[0]) {
        rc = err_setf(err, ERR_INPUT, NULL, "--provider",
                      "no price from '%s' for %s%s (the catalog quotes: %s)", provider,
                      gpu_name, gpus > 0 ? " at this job size" : "", providers);
    } else {
        rc = err_setf(err, ERR_INPUT, NULL, "--provider",
                      "the price catalog quotes no price for %s; give --price",
                      gpu_name);
    }
    free(all);
    return rc;
}

int price_spot_defaults(double *preempt_per_node_hour, double *node_exponent, double *wait_s,
                        err_t *err)
{
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(PRICE_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t top = json_ctx_root(origin);
    json_ctx_t ctx = json_ctx_member(&top, "spot");
    const cJSON *spot;
    if (!(rc = json_get_object(root, "spot", &top, JSON_REQUIRED, &spot, err)) &&
        !(rc = json_get_double(spot, "preemptions_per_node_hour", &ctx, JSON_REQUIRED, 0, 1000,
                               preempt_per_node_hour, err)) &&
        !(rc = json_get_double(spot, "node_exponent", &ctx, JSON_REQUIRED, 0, 1, node_exponent,
                               err)))
        rc = json_get_double(spot, "wait_s", &ctx, JSON_REQUIRED, 0, 1e7, wait_s, err);
    cJSON_Delete(root);
    return rc;
}

int price_spot_basis(char *basis, size_t cap, err_t *err)
{
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(PRICE_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t top = json_ctx_root(origin);
    json_ctx_t ctx = json_ctx_member(&top, "spot");
    const cJSON *spot, *b = NULL;
    if (!(rc = json_get_object(root, "spot", &top, JSON_REQUIRED, &spot, err))) {
        b = cJSON_GetObjectItemCaseSensitive(spot, "basis");
        if (!cJSON_IsString(b))
            rc = err_setf(err, ERR_INPUT, ctx.file, "spot.basis", "must be a string");
        else
            snprintf(basis, cap, "%s", b->valuestring);
    }
    cJSON_Delete(root);
    return rc;
}

static int tiers_from_json(const cJSON *obj, const char *key, const char *price_key,
                           const json_ctx_t *ctx, double *up_to, double *usd, int *n, err_t *err)
{
    const cJSON *arr;
    int rc = json_get_array(obj, key, ctx, JSON_REQUIRED, &arr, err);
    if (rc)
        return rc;
    json_ctx_t actx = json_ctx_member(ctx, key);
    *n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        json_ctx_t ectx = json_ctx_index(&actx, *n);
        if (*n == PRICE_MAX_TIERS)
            return err_setf(err, ERR_INPUT, ectx.file, actx.path, "at most %d tiers",
                            PRICE_MAX_TIERS);
        if ((rc = json_expect_object(e, &ectx, err)) ||
            (rc = json_get_double(e, "up_to_tb", &ectx, JSON_REQUIRED, 0, 1e9, &up_to[*n], err)) ||
            (rc = json_get_double(e, price_key, &ectx, JSON_REQUIRED, 0, 1e6, &usd[*n], err)))
            return rc;
        (*n)++;
    }
    if (*n == 0 || up_to[*n - 1] != 0)
        return err_setf(err, ERR_INPUT, ctx->file, actx.path,
                        "the last tier must be open-ended (up_to_tb 0)");
    return ERR_OK;
}

static int storage_price_from_json(const cJSON *obj, const json_ctx_t *ctx, void *out, err_t *err)
{
    price_storage_t *s = out;
    memset(s, 0, sizeof *s);
    int rc;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, s->name, sizeof s->name, err)) ||
        (rc = json_get_string(obj, "provider", ctx, JSON_REQUIRED, s->provider, sizeof s->provider,
                              err)) ||
        (rc = tiers_from_json(obj, "tiers", "usd_per_gb_month", ctx, s->tier_up_to_tb,
                              s->tier_usd_per_gb_month, &s->n_tiers, err)) ||
        (rc = json_get_double(obj, "ingress_usd_per_tb", ctx, JSON_REQUIRED, 0, 1e6,
                              &s->ingress_usd_per_tb, err)) ||
        (rc = tiers_from_json(obj, "egress", "usd_per_tb", ctx, s->egress_up_to_tb,
                              s->egress_usd_per_tb, &s->n_egress, err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, s->source, sizeof s->source,
                              err)))
        return rc;
    return ERR_OK;
}

int price_storage_load(const char *name_or_provider, price_storage_t *out, err_t *err)
{
    price_storage_t *all = NULL;
    size_t n = 0;
    int rc = catalog_load_table(PRICE_FILE, "storage", sizeof *all, storage_price_from_json,
                                (void **)&all, &n, err);
    if (rc)
        return rc;
    char def[32] = "";
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    if (!(rc = catalog_parse(PRICE_FILE, &root, origin, sizeof origin, err))) {
        json_ctx_t ctx = json_ctx_root(origin);
        rc = json_get_string(root, "default_storage_price", &ctx, JSON_REQUIRED, def, sizeof def,
                             err);
        cJSON_Delete(root);
    }
    const price_storage_t *hit = NULL, *fallback = NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        if (strcmp(all[i].name, def) == 0)
            fallback = &all[i];
        if (name_or_provider && *name_or_provider &&
            (strcasecmp(all[i].name, name_or_provider) == 0 ||
             strcasecmp(all[i].provider, name_or_provider) == 0) && !hit)
            hit = &all[i];
    }
    if (!rc && !hit)
        hit = fallback;
    if (!rc && !hit)
        rc = err_setf(err, ERR_INPUT, PRICE_FILE, "default_storage_price",
                      "names no storage entry ('%s')", def);
    if (!rc)
        *out = *hit;
    free(all);
    return rc;
}

/* Cost of tb through tiers of price per TB (or per GB-month x 1000). */
static double tiered(const double *up_to, const double *usd, int n, double tb)
{
    double cost = 0, from = 0;
    for (int i = 0; i < n && tb > from; i++) {
        double to = up_to[i] > 0 ? fmin(up_to[i], tb) : tb;
        cost += (to - from) * usd[i];
        from = to;
    }
    return cost;
}

double price_storage_usd_per_gb_month(const price_storage_t *s, double tb)
{
    if (!(tb > 0))
        return s->tier_usd_per_gb_month[0];
    return tiered(s->tier_up_to_tb, s->tier_usd_per_gb_month, s->n_tiers, tb) / tb;
}

double price_egress_usd(const price_storage_t *s, double tb)
{
    return tiered(s->egress_up_to_tb, s->egress_usd_per_tb, s->n_egress, tb);
}

double price_ingress_usd(const price_storage_t *s, double tb)
{
    return tb * s->ingress_usd_per_tb;
}
