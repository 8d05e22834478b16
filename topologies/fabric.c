#include "topologies/fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"

#define FABRIC_FILE "topologies/catalog/fabrics.json"

static const char *kind_names[FABRIC_KIND_COUNT] = {
    "nvlink", "xgmi", "pcie", "infiniband", "roce", "efa", "ethernet", "omnipath"};

const char *fabric_kind_name(fabric_kind_t k)
{
    return k < FABRIC_KIND_COUNT ? kind_names[k] : "?";
}

int fabric_from_json(const cJSON *obj, const json_ctx_t *ctx, fabric_t *f,
                     err_t *err)
{
    memset(f, 0, sizeof *f);
    char kind[24] = "", scope[16] = "";
    int rc;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, f->name,
                              sizeof f->name, err)) ||
        (rc = json_get_string(obj, "description", ctx, JSON_OPTIONAL,
                              f->description, sizeof f->description, err)) ||
        (rc = json_get_string(obj, "kind", ctx, JSON_REQUIRED, kind,
                              sizeof kind, err)) ||
        (rc = json_get_string(obj, "scope", ctx, JSON_REQUIRED, scope,
                              sizeof scope, err)) ||
        (rc = json_get_double(obj, "latency_us", ctx, JSON_REQUIRED, 0, 1e6,
                              &f->latency_us, err)) ||
        (rc = json_get_double(obj, "efficiency", ctx, JSON_REQUIRED, 0.01, 1.2,
                              &f->efficiency, err)) ||
        (rc = json_get_bool(obj, "switched", ctx, JSON_OPTIONAL, &f->switched,
                            err)))
        return rc;
    /* The source is long; only its presence is checked here. */
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(obj, "source");
    if (!cJSON_IsString(src) || !src->valuestring[0])
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "source: missing (every catalog figure needs one)");
    int k = -1;
    for (int i = 0; i < FABRIC_KIND_COUNT; i++)
        if (strcmp(kind, kind_names[i]) == 0)
            k = i;
    if (k < 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "kind: unknown '%s' (nvlink, xgmi, pcie, infiniband, "
                        "roce, efa, ethernet or omnipath)",
                        kind);
    f->kind = (fabric_kind_t)k;
    if (strcmp(scope, "intra") == 0) {
        f->intra = true;
        rc = json_get_double(obj, "bw_gbs", ctx, JSON_REQUIRED, 0.001, 1e6,
                             &f->bw_gbs, err);
    } else if (strcmp(scope, "inter") == 0) {
        double gbps = 0;
        rc = json_get_double(obj, "link_gbps", ctx, JSON_REQUIRED, 0.001, 1e7,
                             &gbps, err);
        f->bw_gbs = gbps / 8;
    } else {
        rc = err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                      "scope: must be \"intra\" or \"inter\" (got \"%s\")", scope);
    }
    return rc;
}

/* Adapter with the catalog parser signature. */
static int parse_entry(const cJSON *obj, const json_ctx_t *ctx, void *out,
                       err_t *err)
{
    return fabric_from_json(obj, ctx, out, err);
}

int fabric_load(const char *name, fabric_t *out, err_t *err)
{
    return fabric_load_in(NULL, name, out, err);
}

int fabric_load_in(catalog_t *cat, const char *name, fabric_t *out, err_t *err)
{
    return catalog_lookup_named(cat, FABRIC_FILE, "fabrics", name, "--fabric",
                                "scaleplan catalog fabrics", parse_entry, out, err);
}

int fabric_load_all(fabric_t **list, size_t *count, err_t *err)
{
    return catalog_load_table(FABRIC_FILE, "fabrics", sizeof(**list),
                              parse_entry, (void **)list, count, err);
}
