#include "topologies/price.h"

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
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, p->source,
                              sizeof p->source, err)))
        return rc;
    if (p->usd_per_gpu_hour_high && p->usd_per_gpu_hour_high < p->usd_per_gpu_hour)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "usd_per_gpu_hour_high %g is below usd_per_gpu_hour %g",
                        p->usd_per_gpu_hour_high, p->usd_per_gpu_hour);
    return ERR_OK;
}

int price_load_all(price_t **prices, size_t *count, err_t *err)
{
    return catalog_load_table(PRICE_FILE, "prices", sizeof(**prices),
                              price_from_json, (void **)prices, count, err);
}

int price_default_for_gpu(const char *gpu_name, price_t *out, err_t *err)
{
    price_t *all = NULL;
    size_t n = 0;
    int rc = price_load_all(&all, &n, err);
    if (rc)
        return rc;
    rc = err_setf(err, ERR_INPUT, NULL, "--price",
                  "the price catalog quotes no default price for %s; give "
                  "--price (USD per GPU-hour)",
                  gpu_name);
    for (size_t i = 0; i < n; i++)
        if (all[i].is_default && strcmp(all[i].gpu, gpu_name) == 0) {
            *out = all[i];
            err_clear(err);
            rc = ERR_OK;
            break;
        }
    free(all);
    return rc;
}

int price_find(const char *gpu_name, const char *provider, const char *kind,
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
        if (strcasecmp(all[i].provider, provider) != 0)
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
                      "no price from '%s' for %s (the catalog quotes: %s)",
                      provider, gpu_name, providers);
    } else {
        rc = err_setf(err, ERR_INPUT, NULL, "--provider",
                      "the price catalog quotes no price for %s; give --price",
                      gpu_name);
    }
    free(all);
    return rc;
}

int price_spot_defaults(double *preempt_per_node_hour, double *wait_s, err_t *err)
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
                               preempt_per_node_hour, err)))
        rc = json_get_double(spot, "wait_s", &ctx, JSON_REQUIRED, 0, 1e7, wait_s, err);
    cJSON_Delete(root);
    return rc;
}
