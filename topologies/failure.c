#include "topologies/failure.h"

#include <stdio.h>
#include <string.h>

#include "common/catalog.h"

#define FAILURE_FILE "topologies/catalog/failures.json"

static const char *component_names[FAIL_COMPONENT_COUNT] = {"gpu", "node",
                                                            "nic", "job"};

const char *failure_component_name(failure_component_t c)
{
    return c < FAIL_COMPONENT_COUNT ? component_names[c] : "?";
}

static int class_from_json(const cJSON *obj, const json_ctx_t *ctx,
                           failure_class_t *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    char comp[16] = "", dist[16] = "exponential", repair[24] = "replace_node";
    int rc;
    f->weibull_shape = 1.0;
    f->unexpected = true;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, f->name,
                              sizeof f->name, err)) ||
        (rc = json_get_string(obj, "description", ctx, JSON_OPTIONAL,
                              f->description, sizeof f->description, err)) ||
        (rc = json_get_string(obj, "component", ctx, JSON_REQUIRED, comp,
                              sizeof comp, err)) ||
        (rc = json_get_double(obj, "rate_per_component_hour", ctx,
                              JSON_REQUIRED, 0, 1.0,
                              &f->rate_per_component_hour, err)) ||
        (rc = json_get_string(obj, "distribution", ctx, JSON_OPTIONAL, dist,
                              sizeof dist, err)) ||
        (rc = json_get_double(obj, "weibull_shape", ctx, JSON_OPTIONAL, 0.05,
                              20, &f->weibull_shape, err)) ||
        (rc = json_get_bool(obj, "unexpected", ctx, JSON_OPTIONAL,
                            &f->unexpected, err)) ||
        (rc = json_get_double(obj, "detect_s", ctx, JSON_OPTIONAL, 0, 1e6,
                              &f->detect_s, err)) ||
        (rc = json_get_string(obj, "repair", ctx, JSON_OPTIONAL, repair,
                              sizeof repair, err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, f->source,
                              sizeof f->source, err)))
        return rc;
    int k = -1;
    for (int i = 0; i < FAIL_COMPONENT_COUNT; i++)
        if (strcmp(comp, component_names[i]) == 0)
            k = i;
    if (k < 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "component: unknown '%s' (gpu, node, nic or job)", comp);
    f->component = (failure_component_t)k;
    if (strcmp(dist, "weibull") == 0)
        f->weibull = true;
    else if (strcmp(dist, "exponential") != 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "distribution: unknown '%s' (exponential or weibull)", dist);
    if (strcmp(repair, "reschedule") == 0)
        f->repair = REPAIR_RESCHEDULE;
    else if (strcmp(repair, "replace_node") == 0)
        f->repair = REPAIR_REPLACE_NODE;
    else
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "repair: unknown '%s' (replace_node or reschedule)", repair);
    return ERR_OK;
}

static int set_from_json(const cJSON *obj, const json_ctx_t *ctx, void *out,
                         err_t *err)
{
    failure_set_t *s = out;
    memset(s, 0, sizeof *s);
    int rc;
    const cJSON *classes;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, s->name,
                              sizeof s->name, err)) ||
        (rc = json_get_string(obj, "description", ctx, JSON_OPTIONAL,
                              s->description, sizeof s->description, err)) ||
        (rc = json_get_array(obj, "classes", ctx, JSON_REQUIRED, &classes, err)))
        return rc;
    json_ctx_t arr = json_ctx_member(ctx, "classes");
    int n = cJSON_GetArraySize(classes);
    if (n < 1 || n > FAILURE_MAX_CLASSES)
        return err_setf(err, ERR_INPUT, ctx->file, arr.path,
                        "must hold 1 to %d classes (got %d)",
                        FAILURE_MAX_CLASSES, n);
    for (int i = 0; i < n; i++) {
        json_ctx_t c = json_ctx_index(&arr, i);
        if ((rc = class_from_json(cJSON_GetArrayItem(classes, i), &c,
                                  &s->classes[i], err)))
            return rc;
    }
    s->n_classes = n;
    return ERR_OK;
}

int failure_load_set(const char *name, failure_set_t *out, err_t *err)
{
    catalog_t *cat = catalog_create(); /* one parse for the default's name and the set */
    if (!cat)
        return err_set(err, ERR_RUNTIME, "out of memory");
    char def[32] = "";
    int rc = ERR_OK;
    if (!name || !*name) {
        const cJSON *root;
        const char *origin;
        if (!(rc = catalog_get(cat, FAILURE_FILE, &root, &origin, err))) {
            json_ctx_t ctx = json_ctx_root(origin);
            rc = json_get_string(root, "default_set", &ctx, JSON_REQUIRED, def, sizeof def, err);
        }
        name = def;
    }
    if (!rc)
        rc = catalog_lookup_named(cat, FAILURE_FILE, "rate_sets", name, "--failure-rates",
                                  "scaleplan catalog failures", set_from_json, out, err);
    catalog_destroy(cat);
    return rc;
}

double failure_components(const cluster_t *c, failure_component_t comp)
{
    switch (comp) {
    case FAIL_PER_GPU:
        return c->n_gpus;
    case FAIL_PER_NODE:
        return cluster_hosts(c); /* physical servers, not NVLink domains */
    case FAIL_PER_NIC:
        /* A partly used node still brings all its rails into the job only
         * in proportion to the GPUs that use them. */
        return (double)c->n_gpus * c->nics_per_node / c->gpus_per_node;
    default:
        return 1;
    }
}

double failure_job_rate_per_hour(const failure_class_t *f, const cluster_t *c)
{
    return f->rate_per_component_hour * failure_components(c, f->component);
}

int failure_load_guides(failure_guides_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    char origin[CATALOG_ORIGIN_MAX];
    int rc = catalog_parse(FAILURE_FILE, &root, origin, sizeof origin, err);
    if (rc)
        return rc;
    json_ctx_t ctx = json_ctx_root(origin);
    const cJSON *g = NULL, *rows = NULL;
    if ((rc = json_get_object(root, "planning_guides", &ctx, JSON_REQUIRED, &g, err)))
        goto out;
    json_ctx_t gctx = json_ctx_member(&ctx, "planning_guides");
    if ((rc = json_get_string(g, "source", &gctx, JSON_REQUIRED, out->source, sizeof out->source,
                              err)) ||
        (rc = json_get_array(g, "per_week", &gctx, JSON_REQUIRED, &rows, err)))
        goto out;
    json_ctx_t actx = json_ctx_member(&gctx, "per_week");
    int n = cJSON_GetArraySize(rows);
    if (n < 1 || n > FAILURE_MAX_GUIDES) {
        rc = err_setf(err, ERR_INPUT, origin, actx.path, "must hold 1 to %d rows (got %d)",
                      FAILURE_MAX_GUIDES, n);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        json_ctx_t e = json_ctx_index(&actx, i);
        const cJSON *o = cJSON_GetArrayItem(rows, i);
        failure_guide_t *r = &out->rows[i];
        if ((rc = json_expect_object(o, &e, err)) ||
            (rc = json_get_int(o, "gpus", &e, JSON_REQUIRED, 1, 1 << 24, &r->gpus, err)) ||
            (rc = json_get_string(o, "interruptions", &e, JSON_REQUIRED, r->per_week,
                                  sizeof r->per_week, err)))
            goto out;
    }
    out->n = n;
out:
    cJSON_Delete(root);
    return rc;
}
