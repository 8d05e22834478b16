#include "run/restart.h"

#include <stdio.h>
#include <string.h>

#include "common/catalog.h"

#define RESTART_FILE "sim/catalog/restart.json"

static int profile_from_json(const cJSON *obj, const json_ctx_t *ctx, void *out, err_t *err)
{
    restart_profile_t *p = out;
    memset(p, 0, sizeof *p);
    int rc;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, p->name, sizeof p->name, err)) ||
        (rc = json_get_string(obj, "description", ctx, JSON_OPTIONAL, p->description,
                              sizeof p->description, err)) ||
        (rc = json_get_double(obj, "replace_s", ctx, JSON_REQUIRED, 0, 1e6, &p->replace_s, err)) ||
        (rc = json_get_double(obj, "reschedule_s", ctx, JSON_REQUIRED, 0, 1e6, &p->reschedule_s,
                              err)) ||
        (rc = json_get_double(obj, "init_fixed_s", ctx, JSON_REQUIRED, 0, 1e5, &p->init_fixed_s,
                              err)) ||
        (rc = json_get_double(obj, "init_per_gpu_s", ctx, JSON_REQUIRED, 0, 1,
                              &p->init_per_gpu_s, err)) ||
        (rc = json_get_double(obj, "warmup_steps", ctx, JSON_REQUIRED, 0, 1e4, &p->warmup_steps,
                              err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, p->source, sizeof p->source,
                              err)))
        return rc;
    return ERR_OK;
}

int restart_load(const char *name, const char *environment, restart_profile_t *out, err_t *err)
{
    char def[32] = "";
    if (!name || !*name) {
        cJSON *root = NULL;
        char origin[CATALOG_ORIGIN_MAX];
        int rc = catalog_parse(RESTART_FILE, &root, origin, sizeof origin, err);
        if (rc)
            return rc;
        json_ctx_t ctx = json_ctx_root(origin);
        const cJSON *defs;
        if (!(rc = json_get_object(root, "defaults", &ctx, JSON_REQUIRED, &defs, err))) {
            json_ctx_t dctx = json_ctx_member(&ctx, "defaults");
            const char *env = environment && *environment ? environment : "dedicated";
            rc = json_get_string(defs, env, &dctx, JSON_REQUIRED, def, sizeof def, err);
        }
        cJSON_Delete(root);
        if (rc)
            return rc;
        name = def;
    }
    return catalog_load_named(RESTART_FILE, "profiles", name, "--restart",
                              "sim/catalog/restart.json", profile_from_json, out, err);
}

int restart_async_load(restart_async_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(RESTART_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t top = json_ctx_root(origin);
    json_ctx_t ctx = json_ctx_member(&top, "async_checkpoint");
    const cJSON *a;
    if (!(rc = json_get_object(root, "async_checkpoint", &top, JSON_REQUIRED, &a, err)) &&
        !(rc = json_get_double(a, "snapshot_fixed_s", &ctx, JSON_REQUIRED, 0, 1e4,
                               &out->snapshot_fixed_s, err)) &&
        !(rc = json_get_double(a, "drain_slowdown", &ctx, JSON_REQUIRED, 0, 0.99,
                               &out->drain_slowdown, err)) &&
        !(rc = json_get_double(a, "loader_bytes_per_token", &ctx, JSON_REQUIRED, 0, 1e6,
                               &out->loader_bytes_per_token, err)))
        rc = json_get_string(a, "source", &ctx, JSON_REQUIRED, out->source, sizeof out->source,
                             err);
    cJSON_Delete(root);
    return rc;
}

double restart_init_s(const restart_profile_t *p, int gpus)
{
    return p->init_fixed_s + p->init_per_gpu_s * (gpus > 0 ? gpus : 1);
}

double restart_overhead_s(const restart_profile_t *p, int gpus, double step_s, bool replace)
{
    return (replace ? p->replace_s : p->reschedule_s) + restart_init_s(p, gpus) +
           p->warmup_steps * step_s;
}
