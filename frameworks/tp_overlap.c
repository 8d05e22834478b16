#include "frameworks/tp_overlap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ROLE_NAMES[TPO_COUNT] = {
    "qkv_fprop", "qkv_dgrad", "qkv_wgrad", "proj_fprop", "proj_dgrad",
    "fc1_fprop", "fc1_dgrad", "fc1_wgrad", "fc2_fprop",  "fc2_dgrad",
};

const char *tpo_name(tpo_gemm_t g)
{
    return g >= 0 && g < TPO_COUNT ? ROLE_NAMES[g] : "?";
}

void tpo_default(tp_overlap_t *t)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < TPO_COUNT; i++)
        t->def[i] = (tpo_role_t){TPO_BULK, 16, false, false, 4};
    const tpo_gemm_t ring[] = {TPO_QKV_FPROP, TPO_FC1_FPROP, TPO_PROJ_DGRAD, TPO_FC2_DGRAD};
    for (size_t i = 0; i < sizeof ring / sizeof *ring; i++)
        t->def[ring[i]] = (tpo_role_t){TPO_RING, 1, false, false, 4};
    t->def[TPO_PROJ_FPROP] = (tpo_role_t){TPO_PIPELINE, 16, false, false, 4};
    t->def[TPO_FC2_FPROP] = (tpo_role_t){TPO_PIPELINE, 16, false, false, 4};
}

/* "ring 1", "pipeline 24 margin", "bulk 4", "ring 1 aggregate". */
static int parse_role(const char *text, const json_ctx_t *ctx, tpo_role_t *r, err_t *err)
{
    char method[16] = "", extra[2][16] = {"", ""}, rest[2] = "";
    int sms = 0, n = sscanf(text, "%15s %d %15s %15s %1s", method, &sms, extra[0], extra[1], rest);
    bool margin = false, aggregate = false, ok = n >= 2 && n <= 4 && sms >= 1 && sms <= 1024;
    for (int i = 0; ok && i < n - 2; i++) {
        if (strcmp(extra[i], "margin") == 0 && !margin)
            margin = true;
        else if (strcmp(extra[i], "aggregate") == 0 && !aggregate)
            aggregate = true;
        else
            ok = false;
    }
    if (!ok)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "expected \"ring|pipeline|bulk SMS [margin] [aggregate]\" (got '%s')",
                        text);
    if (strcmp(method, "ring") == 0)
        r->method = TPO_RING;
    else if (strcmp(method, "pipeline") == 0)
        r->method = TPO_PIPELINE;
    else if (strcmp(method, "bulk") == 0)
        r->method = TPO_BULK;
    else
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "method: use ring, pipeline or bulk (got '%s')", method);
    if (aggregate && r->method != TPO_RING)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "aggregate applies to ring only (got '%s')", text);
    r->sms = sms;
    r->sm_margin = margin;
    r->aggregate = aggregate;
    r->splits = 4; /* TE's pipeline default; every shipped config keeps it */
    return ERR_OK;
}

/* Fill roles from an object of role name -> text; unknown keys are errors
 * (a misspelt role would otherwise be silently the default). */
static int read_roles(const cJSON *o, const json_ctx_t *ctx, tpo_role_t *roles, err_t *err)
{
    int rc = json_expect_object(o, ctx, err);
    if (rc)
        return rc;
    for (const cJSON *e = o->child; e; e = e->next) {
        json_ctx_t ectx = json_ctx_member(ctx, e->string);
        if (strcmp(e->string, "source") == 0)
            continue;
        int k = -1;
        for (int i = 0; i < TPO_COUNT; i++)
            if (strcmp(e->string, ROLE_NAMES[i]) == 0)
                k = i;
        if (k < 0)
            return err_setf(err, ERR_INPUT, ectx.file, ectx.path,
                            "unknown GEMM (Transformer Engine names: qkv_fprop, qkv_dgrad, "
                            "qkv_wgrad, proj_fprop, proj_dgrad, fc1_fprop, fc1_dgrad, "
                            "fc1_wgrad, fc2_fprop, fc2_dgrad)");
        if (!cJSON_IsString(e))
            return err_setf(err, ERR_INPUT, ectx.file, ectx.path, "expected a string");
        if ((rc = parse_role(e->valuestring, &ectx, &roles[k], err)))
            return rc;
    }
    return ERR_OK;
}

int tpo_from_json(const cJSON *o, const json_ctx_t *ctx, tp_overlap_t *t, err_t *err)
{
    const cJSON *def = NULL, *cfgs = NULL;
    char unmatched[16] = "default";
    int rc;
    tpo_default(t);
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_string(o, "unmatched", ctx, JSON_OPTIONAL, unmatched, sizeof unmatched,
                              err)) ||
        (rc = json_get_bool(o, "reduce_pass", ctx, JSON_OPTIONAL, &t->reduce_pass, err)) ||
        (rc = json_get_bool(o, "rowwise_gather_unfused", ctx, JSON_OPTIONAL,
                            &t->rowwise_gather_unfused, err)) ||
        (rc = json_get_object(o, "default", ctx, JSON_OPTIONAL, &def, err)) ||
        (rc = json_get_array(o, "configs", ctx, JSON_OPTIONAL, &cfgs, err)))
        return rc;
    if (strcmp(unmatched, "off") != 0 && strcmp(unmatched, "default") != 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "unmatched: use \"default\" or \"off\" (got '%s')", unmatched);
    t->off_unmatched = strcmp(unmatched, "off") == 0;
    json_ctx_t dctx = json_ctx_member(ctx, "default");
    if (def && (rc = read_roles(def, &dctx, t->def, err)))
        return rc;
    json_ctx_t actx = json_ctx_member(ctx, "configs");
    int i = 0;
    for (const cJSON *c = cfgs ? cfgs->child : NULL; c; c = c->next, i++) {
        json_ctx_t cctx = json_ctx_index(&actx, i);
        if (t->n_configs >= TPO_MAX_CONFIGS)
            return err_setf(err, ERR_INPUT, cctx.file, cctx.path, "at most %d configs",
                            TPO_MAX_CONFIGS);
        tpo_config_t *k = &t->configs[t->n_configs];
        const cJSON *roles = NULL;
        memcpy(k->role, t->def, sizeof k->role);
        if ((rc = json_expect_object(c, &cctx, err)) ||
            (rc = json_get_string(c, "architecture", &cctx, JSON_REQUIRED, k->architecture,
                                  sizeof k->architecture, err)) ||
            (rc = json_get_int(c, "hidden", &cctx, JSON_REQUIRED, 1, 1 << 20, &k->hidden, err)) ||
            (rc = json_get_int(c, "tp", &cctx, JSON_REQUIRED, 2, 1024, &k->tp, err)) ||
            (rc = json_get_object(c, "roles", &cctx, JSON_REQUIRED, &roles, err)))
            return rc;
        json_ctx_t rctx = json_ctx_member(&cctx, "roles");
        if ((rc = read_roles(roles, &rctx, k->role, err)))
            return rc;
        t->n_configs++;
    }
    return ERR_OK;
}

const tpo_role_t *tpo_select(const tp_overlap_t *t, const char *architecture, int hidden, int tp)
{
    for (int i = 0; i < t->n_configs; i++) {
        const tpo_config_t *c = &t->configs[i];
        if (c->hidden == hidden && c->tp == tp && architecture &&
            strcmp(c->architecture, architecture) == 0)
            return c->role;
    }
    return t->off_unmatched ? NULL : t->def;
}
