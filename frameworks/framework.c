#include "frameworks/framework.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "common/catalog.h"
#include "common/json.h"
#include "frameworks/host.h"
#include "frameworks/tp_overlap.h"
#include "models/hybrid.h"

#define FW_FILE "sim/catalog/frameworks.json"

/* options.moe: how the framework runs mixture-of-experts blocks. */
static int read_moe(const cJSON *o, const json_ctx_t *ctx, moe_opts_t *m, err_t *err)
{
    char disp[16] = "alltoall";
    int rc;
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_string(o, "dispatcher", ctx, JSON_REQUIRED, disp, sizeof disp, err)) ||
        (rc = json_get_bool(o, "grouped_gemm", ctx, JSON_REQUIRED, &m->grouped_gemm, err)) ||
        (rc = json_get_bool(o, "permute_fusion", ctx, JSON_REQUIRED, &m->permute_fusion, err)) ||
        (rc = json_get_bool(o, "shared_overlap", ctx, JSON_REQUIRED, &m->shared_overlap, err)) ||
        (rc = json_get_bool(o, "a2a_overlap", ctx, JSON_REQUIRED, &m->a2a_overlap, err)) ||
        (rc = json_get_double(o, "scatter_adds_fwd", ctx, JSON_OPTIONAL, 0, 8,
                              &m->scatter_adds_fwd, err)) ||
        (rc = json_get_double(o, "scatter_adds_bwd", ctx, JSON_OPTIONAL, 0, 8,
                              &m->scatter_adds_bwd, err)) ||
        (rc = json_get_bool(o, "pair_overlap_no_recompute", ctx, JSON_OPTIONAL,
                            &m->pair_overlap_no_recompute, err)) ||
        (rc = json_get_bool(o, "probs_in_activation", ctx, JSON_OPTIONAL, &m->probs_in_act,
                            err)) ||
        (rc = json_get_bool(o, "fp8_dispatch", ctx, JSON_OPTIONAL, &m->fp8_dispatch, err)))
        return rc;
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "source")))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "source: missing (every framework default needs one)");
    if (moe_dispatch_parse(disp, "dispatcher", &m->dispatcher, err))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "%s", err->msg);
    return ERR_OK;
}

/* A list of Megatron-Core --cuda-graph-scope names (NULL: none). */
static int read_scopes(const cJSON *arr, const json_ctx_t *ctx, unsigned *bits, err_t *err)
{
    *bits = 0;
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next) {
        if (!cJSON_IsString(e))
            return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                            "cuda_graph_scope: a list of scope names");
        if (host_graph_scopes_add(e->valuestring, NULL, bits, err))
            return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "cuda_graph_scope: %s",
                            err->msg);
    }
    if (host_graph_scopes_check(*bits, NULL, err))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "cuda_graph_scope: %s", err->msg);
    return ERR_OK;
}

/* options.host: how the framework's host thread issues kernels (frameworks/host.h);
 * absent: not modelled. */
static int read_host(const cJSON *o, const json_ctx_t *ctx, host_opts_t *h, err_t *err)
{
    const cJSON *scopes = NULL;
    int rc;
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_double(o, "op_us", ctx, JSON_REQUIRED, 0.01, 1000, &h->op_us, err)) ||
        (rc = json_get_double(o, "launch_us", ctx, JSON_REQUIRED, 0, 1000, &h->launch_us, err)) ||
        (rc = json_get_double(o, "graph_us", ctx, JSON_REQUIRED, 0, 10000, &h->graph_us, err)) ||
        (rc = json_get_bool(o, "router_fusion", ctx, JSON_OPTIONAL, &h->router_fusion, err)) ||
        (rc = json_get_array(o, "cuda_graph_scope", ctx, JSON_OPTIONAL, &scopes, err)))
        return rc;
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "source")))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "source: missing (every framework default needs one)");
    return read_scopes(scopes, ctx, &h->graph_scopes, err);
}

/* A list of names into buf, comma separated (key names it in errors). */
static int join_names(const cJSON *arr, const char *key, const json_ctx_t *ctx, char *buf,
                      size_t size, err_t *err)
{
    buf[0] = '\0';
    if (!cJSON_IsArray(arr) || !arr->child)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "%s: a list of names", key);
    for (const cJSON *n = arr->child; n; n = n->next) {
        size_t len = strlen(buf);
        if (!cJSON_IsString(n) || len + strlen(n->valuestring) + 2 >= size)
            return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                            "%s: names as strings, %zu characters in all at most", key, size - 2);
        snprintf(buf + len, size - len, "%s%s", len ? "," : "", n->valuestring);
    }
    return ERR_OK;
}

/* A by_gpu entry's token drop (Megatron-Bridge's apply_moe_token_drop:
 * moe_expert_capacity_factor and moe_pad_expert_input_to_capacity). */
static int read_drop(const cJSON *e, const json_ctx_t *ctx, fw_moe_gpu_t *g, err_t *err)
{
    int rc;
    if ((rc = json_get_double(e, "capacity_factor", ctx, JSON_OPTIONAL, 0.01, 64,
                              &g->capacity_factor, err)) ||
        (rc = json_get_bool(e, "pad_to_capacity", ctx, JSON_OPTIONAL, &g->pad_to_capacity,
                            err)))
        return rc;
    if (g->pad_to_capacity && !(g->capacity_factor > 0))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "pad_to_capacity: needs a capacity_factor (padding is to a capacity)");
    return ERR_OK;
}

/* options.moe.by_gpu: [{"gpus": [...], "dispatcher", "a2a_overlap",
 * "shared_overlap", "source"}], optionally "models", "cuda_graph_scope" and
 * the recipe's token drop ("capacity_factor", "pad_to_capacity"). */
static int read_moe_by_gpu(const cJSON *moe, const json_ctx_t *mctx, fw_preset_t *p, err_t *err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(moe, "by_gpu");
    if (!arr)
        return ERR_OK;
    json_ctx_t actx = json_ctx_member(mctx, "by_gpu");
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > FW_MOE_BY_GPU_MAX)
        return err_setf(err, ERR_INPUT, actx.file, actx.path,
                        "must be an array of at most %d entries", FW_MOE_BY_GPU_MAX);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        json_ctx_t ectx = json_ctx_index(&actx, i);
        fw_moe_gpu_t *g = &p->moe_by_gpu[i];
        char disp[16] = "";
        int rc;
        if ((rc = json_expect_object(e, &ectx, err)) ||
            (rc = json_get_string(e, "dispatcher", &ectx, JSON_REQUIRED, disp, sizeof disp, err)) ||
            (rc = json_get_bool(e, "a2a_overlap", &ectx, JSON_REQUIRED, &g->a2a_overlap, err)) ||
            (rc = json_get_bool(e, "shared_overlap", &ectx, JSON_REQUIRED, &g->shared_overlap,
                                err)))
            return rc;
        if (moe_dispatch_parse(disp, "dispatcher", &g->dispatcher, err))
            return err_setf(err, ERR_INPUT, ectx.file, ectx.path, "%s", err->msg);
        const cJSON *scopes = NULL;
        if ((rc = json_get_array(e, "cuda_graph_scope", &ectx, JSON_OPTIONAL, &scopes, err)) ||
            (rc = read_scopes(scopes, &ectx, &g->graph_scopes, err)))
            return rc;
        g->graph_scopes_set = scopes != NULL;
        if ((rc = read_drop(e, &ectx, g, err)))
            return rc;
        const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(e, "gpus");
        const cJSON *models = cJSON_GetObjectItemCaseSensitive(e, "models");
        if (!cJSON_IsArray(gpus) || !gpus->child ||
            !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "source")))
            return err_setf(err, ERR_INPUT, ectx.file, ectx.path,
                            "needs \"gpus\" (a list of GPU names) and a \"source\"");
        if ((rc = join_names(gpus, "gpus", &ectx, g->gpus, sizeof g->gpus, err)) ||
            (models && (rc = join_names(models, "models", &ectx, g->models, sizeof g->models,
                                        err))))
            return rc;
    }
    p->n_moe_by_gpu = i;
    return ERR_OK;
}

/* An option given in o needs its KEY_source string beside it. */
static int sourced(const cJSON *o, const char *key, const json_ctx_t *ctx, err_t *err)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, key))
        return ERR_OK;
    char name[64];
    snprintf(name, sizeof name, "%s_source", key);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, name);
    if (cJSON_IsString(s) && s->valuestring[0])
        return ERR_OK;
    return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "%s: missing (every framework default needs one)",
                    name);
}

/* The "options" object: its scalar rows from frameworks/options.def, then
 * the nested objects the table does not cover. */
static int read_options(const cJSON *o, const json_ctx_t *ctx, sim_options_t *opt, err_t *err)
{
    int rc;
    if ((rc = json_expect_object(o, ctx, err)) || (rc = fw_options_read(o, ctx, opt, err)) ||
        (rc = sourced(o, "fp8_saves_quantized", ctx, err)))
        return rc;
    const cJSON *copies = NULL;
    if ((rc = json_get_object(o, "attn_copies", ctx, JSON_OPTIONAL, &copies, err)))
        return rc;
    json_ctx_t cctx = json_ctx_member(ctx, "attn_copies");
    if (copies &&
        ((rc = json_get_double(copies, "fwd_qkv", &cctx, JSON_REQUIRED, 0, 100,
                               &opt->attn_copy_fwd_qkv, err)) ||
         (rc = json_get_double(copies, "fwd_out", &cctx, JSON_REQUIRED, 0, 100,
                               &opt->attn_copy_fwd_out, err)) ||
         (rc = json_get_double(copies, "bwd_qkv", &cctx, JSON_REQUIRED, 0, 100,
                               &opt->attn_copy_bwd_qkv, err)) ||
         (rc = json_get_double(copies, "bwd_out", &cctx, JSON_REQUIRED, 0, 100,
                               &opt->attn_copy_bwd_out, err))))
        return rc;
    const cJSON *tpo = NULL, *off = NULL, *moe = NULL;
    if ((rc = json_get_object(o, "moe", ctx, JSON_OPTIONAL, &moe, err)))
        return rc;
    json_ctx_t mctx = json_ctx_member(ctx, "moe");
    if (moe && (rc = read_moe(moe, &mctx, &opt->moe, err)))
        return rc;
    const cJSON *host = NULL;
    if ((rc = json_get_object(o, "host", ctx, JSON_OPTIONAL, &host, err)))
        return rc;
    json_ctx_t hctx = json_ctx_member(ctx, "host");
    if (host && (rc = read_host(host, &hctx, &opt->host, err)))
        return rc;
    if ((rc = json_get_object(o, "tp_overlap", ctx, JSON_OPTIONAL, &tpo, err)) ||
        (rc = json_get_array(o, "tp_overlap_off_with", ctx, JSON_OPTIONAL, &off, err)))
        return rc;
    json_ctx_t offctx = json_ctx_member(ctx, "tp_overlap_off_with");
    for (const cJSON *e = off ? off->child : NULL; e; e = e->next) {
        precision_t pr;
        if (!cJSON_IsString(e) || layout_parse_precision(e->valuestring, &pr, err))
            return err_setf(err, ERR_INPUT, offctx.file, offctx.path,
                            "expected precision names (bf16, fp8, nvfp4, ...)");
        opt->tp_overlap_off |= 1u << pr;
    }
    json_ctx_t tctx = json_ctx_member(ctx, "tp_overlap");
    if (tpo && (rc = tpo_from_json(tpo, &tctx, &opt->tp_overlap, err)))
        return rc;
    return ERR_OK;
}

static int read_zero3(const cJSON *o, const json_ctx_t *ctx, zero3_opts_t *z, err_t *err)
{
    int rc;
    z->prefetch_backward = true;
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_bool(o, "gather_blocks_compute", ctx, JSON_REQUIRED,
                            &z->gather_blocks_compute, err)) ||
        (rc = json_get_bool(o, "regather_backward", ctx, JSON_REQUIRED, &z->regather_backward,
                            err)) ||
        (rc = json_get_bool(o, "grad_all_reduce", ctx, JSON_REQUIRED, &z->grad_all_reduce, err)) ||
        (rc = json_get_bool(o, "reshard_with_pp", ctx, JSON_REQUIRED, &z->reshard_with_pp, err)) ||
        (rc = json_get_bool(o, "prefetch_backward", ctx, JSON_OPTIONAL, &z->prefetch_backward,
                            err)) ||
        (rc = json_get_double(o, "path_gbs", ctx, JSON_REQUIRED, 0, 1e6, &z->path_gbs, err)) ||
        (rc = json_get_double(o, "max_live_params", ctx, JSON_OPTIONAL, 0, 1e15,
                              &z->max_live_params, err)))
        return rc;
    return ERR_OK;
}

static int read_layout(const cJSON *o, const json_ctx_t *ctx, fw_preset_t *p, err_t *err)
{
    char rc_name[16] = "none", batch[24] = "micro_batch", fp8[16] = "fp8", split[24] = "megatron";
    int rc;
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_bool(o, "flash_attention", ctx, JSON_REQUIRED, &p->flash_attention, err)) ||
        (rc = json_get_int(o, "grad_bytes", ctx, JSON_REQUIRED, 2, 4, &p->grad_bytes, err)) ||
        (rc = json_get_int(o, "fp16_grad_bytes", ctx, JSON_OPTIONAL, 2, 4, &p->fp16_grad_bytes,
                           err)) ||
        (rc = json_get_bool(o, "distributed_optimizer", ctx, JSON_REQUIRED,
                            &p->distributed_optimizer, err)) ||
        (rc = json_get_bool(o, "sequence_parallel_with_tp", ctx, JSON_REQUIRED, &p->sp_with_tp,
                            err)) ||
        (rc = json_get_bool(o, "sp_saves_gathered", ctx, JSON_OPTIONAL, &p->sp_saves_gathered,
                            err)) ||
        (rc = json_get_int(o, "zero_min", ctx, JSON_REQUIRED, 0, 3, &p->zero_min, err)) ||
        (rc = json_get_string(o, "recompute", ctx, JSON_REQUIRED, rc_name, sizeof rc_name, err)) ||
        (rc = json_get_string(o, "batch", ctx, JSON_OPTIONAL, batch, sizeof batch, err)) ||
        (rc = json_get_double(o, "gpt_dropout", ctx, JSON_OPTIONAL, 0, 1, &p->gpt_dropout, err)) ||
        (rc = json_get_string(o, "fp8_recipe", ctx, JSON_OPTIONAL, fp8, sizeof fp8, err)) ||
        (rc = json_get_string(o, "pp_split", ctx, JSON_OPTIONAL, split, sizeof split, err)))
        return rc;
    static const char *const splits[] = {"megatron", "torchtitan-2024", "torchtitan-2025",
                                         "balanced"};
    int sp = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(split, splits[i]) == 0)
            sp = i;
    if (sp < 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "pp_split: use megatron, torchtitan-2024, torchtitan-2025 or balanced "
                        "(got '%s')",
                        split);
    p->pp_split = (layout_split_rule_t)sp;
    static const char *const rules[] = {"micro_batch", "whole_share", "local_split_pp",
                                        "local_size1"};
    int k = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(batch, rules[i]) == 0)
            k = i;
    if (k < 0)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "batch: use micro_batch, whole_share, local_split_pp or local_size1 "
                        "(got '%s')",
                        batch);
    p->batch = (fw_batch_rule_t)k;
    if (layout_parse_precision(fp8, &p->fp8_recipe, err) || !layout_precision_quantized(p->fp8_recipe))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "fp8_recipe: not an fp8 recipe ('%s')",
                        fp8);
    if (p->grad_bytes != 2 && p->grad_bytes != 4)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "grad_bytes: 2 or 4 (got %d)",
                        p->grad_bytes);
    if (p->fp16_grad_bytes == 0)
        p->fp16_grad_bytes = p->grad_bytes; /* not given: as any other run */
    else if (p->fp16_grad_bytes != 2 && p->fp16_grad_bytes != 4)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "fp16_grad_bytes: 2 or 4 (got %d)",
                        p->fp16_grad_bytes);
    if (layout_parse_recompute(rc_name, &p->recompute, err))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "recompute: unknown '%s'", rc_name);
    return ERR_OK;
}

/* A list of names into flags: each must be one of names[0..n). */
static int read_name_set(const cJSON *o, const char *key, const json_ctx_t *ctx,
                         const char *const *names, int n, bool *out, err_t *err)
{
    const cJSON *arr = NULL;
    int rc = json_get_array(o, key, ctx, JSON_REQUIRED, &arr, err);
    if (rc)
        return rc;
    json_ctx_t actx = json_ctx_member(ctx, key);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        json_ctx_t ectx = json_ctx_index(&actx, i);
        int k = -1;
        for (int j = 0; cJSON_IsString(e) && j < n; j++)
            if (strcmp(e->valuestring, names[j]) == 0)
                k = j;
        if (k < 0)
            return err_setf(err, ERR_INPUT, ectx.file, ectx.path, "unknown %s entry", key);
        out[k] = true;
    }
    return ERR_OK;
}

static int read_supports(const cJSON *o, const json_ctx_t *ctx, fw_caps_t *c, err_t *err)
{
    static const char *const cp[] = {"ring", "allgather", "a2a"};
    const char *sched[SCHEDULE_COUNT], *rec[RECOMPUTE_COUNT], *prec[PRECISION_COUNT];
    for (int i = 0; i < SCHEDULE_COUNT; i++)
        sched[i] = layout_schedule_name((schedule_t)i);
    for (int i = 0; i < RECOMPUTE_COUNT; i++)
        rec[i] = layout_recompute_name((recompute_t)i);
    for (int i = 0; i < PRECISION_COUNT; i++)
        prec[i] = layout_precision_name((precision_t)i);
    const cJSON *zero = NULL, *src = NULL;
    bool precs[PRECISION_COUNT] = {false};
    int rc;
    memset(c, 0, sizeof *c);
    c->accumulation = true;
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_array(o, "zero", ctx, JSON_REQUIRED, &zero, err)) ||
        (rc = json_get_bool(o, "tp", ctx, JSON_REQUIRED, &c->tp, err)) ||
        (rc = json_get_bool(o, "sequence_parallel", ctx, JSON_REQUIRED, &c->sp, err)) ||
        (rc = json_get_bool(o, "pp", ctx, JSON_REQUIRED, &c->pp, err)) ||
        (rc = json_get_bool(o, "zero3_with_pp", ctx, JSON_REQUIRED, &c->zero3_with_pp, err)) ||
        (rc = json_get_bool(o, "uneven_split", ctx, JSON_REQUIRED, &c->uneven_split, err)) ||
        (rc = json_get_bool(o, "grad_accumulation", ctx, JSON_OPTIONAL, &c->accumulation, err)) ||
        (rc = json_get_bool(o, "ep", ctx, JSON_OPTIONAL, &c->ep, err)) ||
        (rc = json_get_bool(o, "hybrid", ctx, JSON_OPTIONAL, &c->hybrid, err)) ||
        (rc = json_get_bool(o, "sp_with_moe_tp", ctx, JSON_OPTIONAL, &c->sp_with_moe_tp,
                            err)) ||
        (rc = json_get_bool(o, "recompute_block", ctx, JSON_OPTIONAL, &c->recompute_block, err)) ||
        (rc = json_get_bool(o, "recompute_modules", ctx, JSON_OPTIONAL, &c->recompute_modules,
                            err)) ||
        (rc = read_name_set(o, "cp", ctx, cp, 3, c->cp, err)) ||
        (rc = read_name_set(o, "schedules", ctx, sched, SCHEDULE_COUNT, c->schedule, err)) ||
        (rc = read_name_set(o, "recompute", ctx, rec, RECOMPUTE_COUNT, c->recompute, err)) ||
        (rc = read_name_set(o, "precisions", ctx, prec, PRECISION_COUNT, precs, err)))
        return rc;
    /* moe_dispatch_t order: alltoall, allgather, deepep */
    static const char *const disp[] = {"alltoall", "allgather", "deepep"};
    if (c->ep && (rc = read_name_set(o, "moe_dispatchers", ctx, disp, 3, c->dispatchers, err)))
        return rc;
    src = cJSON_GetObjectItemCaseSensitive(o, "source");
    if (!cJSON_IsString(src) || !src->valuestring[0])
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "source: missing");
    json_ctx_t zctx = json_ctx_member(ctx, "zero");
    for (const cJSON *e = zero->child; e; e = e->next) {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble <= 3) ||
            e->valuedouble != (int)e->valuedouble)
            return err_setf(err, ERR_INPUT, zctx.file, zctx.path, "ZeRO stages are 0..3");
        c->zero[(int)e->valuedouble] = true;
    }
    for (int i = 0; i < PRECISION_COUNT; i++)
        if (precs[i])
            c->precisions |= 1u << i;
    return ERR_OK;
}

/* Append label to list when o's "source" declares an assumption. */
static void note_assumed(const cJSON *o, const char *label, char *list, size_t cap)
{
    const cJSON *s = o ? cJSON_GetObjectItemCaseSensitive(o, "source") : NULL;
    if (!cJSON_IsString(s) || !strstr(s->valuestring, "ASSUMED"))
        return;
    size_t n = strlen(list);
    snprintf(list + n, cap - n, "%s%s", n ? ", " : "", label);
}

/* "YYYY-MM" as year x 12 + month - 1; 0 when text is not such a month. */
static int month_of(const char *text)
{
    int y = 0, m = 0;
    char tail;
    if (!text || sscanf(text, "%4d-%2d%c", &y, &m, &tail) != 2 || y < 1990 || y > 2200 || m < 1 ||
        m > 12)
        return 0;
    return y * 12 + m - 1;
}

/* "YYYY-MM" at the start of text, whatever follows; 0 when not there. */
static int month_of_prefix(const char *text)
{
    int y = 0, m = 0, n = 0;
    if (sscanf(text, "%4d-%2d%n", &y, &m, &n) != 2 || n != 7 || y < 1990 || y > 2200 || m < 1 ||
        m > 12)
        return 0;
    return y * 12 + m - 1;
}

/* Calls each(name, arg) for the release family names of a preset's JSON
 * ("family": a name, or a list of names); stops at and returns the first
 * nonzero. */
static int each_family(const cJSON *preset, int (*each)(const char *name, void *arg), void *arg)
{
    const cJSON *rel = cJSON_GetObjectItemCaseSensitive(preset, "release");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(rel, "family");
    if (cJSON_IsString(f))
        return each(f->valuestring, arg);
    for (const cJSON *e = cJSON_IsArray(f) ? f->child : NULL; e; e = e->next) {
        int rc = cJSON_IsString(e) ? each(e->valuestring, arg) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* The optional "release": {"family": name or [names], "date": "YYYY-MM"}. */
static int read_release(const cJSON *obj, const json_ctx_t *ctx, fw_preset_t *p, err_t *err)
{
    const cJSON *rel = NULL;
    int rc;
    if ((rc = json_get_object(obj, "release", ctx, JSON_OPTIONAL, &rel, err)) || !rel)
        return rc;
    json_ctx_t rctx = json_ctx_member(ctx, "release");
    char date[16];
    const cJSON *fam = cJSON_GetObjectItemCaseSensitive(rel, "family");
    const cJSON *first = cJSON_IsArray(fam) ? fam->child : fam;
    if (!first)
        return err_setf(err, ERR_INPUT, rctx.file, rctx.path,
                        "family: expected a name or a list of names");
    for (const cJSON *e = first; e; e = cJSON_IsArray(fam) ? e->next : NULL)
        if (!cJSON_IsString(e) || !e->valuestring[0])
            return err_setf(err, ERR_INPUT, rctx.file, rctx.path,
                            "family: expected a name or a list of names");
    snprintf(p->family, sizeof p->family, "%s", first->valuestring);
    if ((rc = json_get_string(rel, "date", &rctx, JSON_REQUIRED, date, sizeof date, err)))
        return rc;
    p->released_month = month_of(date);
    if (!p->released_month || !p->family[0])
        return err_setf(err, ERR_INPUT, rctx.file, rctx.path,
                        "needs a family name and a date as YYYY-MM (got '%s', '%s')", p->family,
                        date);
    return ERR_OK;
}

/* A preset without options.moe runs MoE blocks the one way it offers: the
 * options' default dispatcher (Megatron-LM's allgather) is not one DeepSpeed
 * or torchtitan offers, and sim refused their MoE runs for a dispatcher
 * nobody asked for. */
static void default_dispatcher(fw_preset_t *p)
{
    if (!p->caps.ep || p->caps.dispatchers[p->opt.moe.dispatcher])
        return;
    for (int d = 0; d < 3; d++)
        if (p->caps.dispatchers[d]) {
            p->opt.moe.dispatcher = (moe_dispatch_t)d;
            return;
        }
}

static int preset_from_json(const cJSON *obj, const json_ctx_t *ctx, void *out, err_t *err)
{
    fw_preset_t *p = out;
    memset(p, 0, sizeof *p);
    sim_options_default(&p->opt);
    const cJSON *opt = NULL, *lay = NULL, *z3 = NULL, *sup = NULL;
    int rc;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, p->name, sizeof p->name, err)) ||
        (rc = json_get_string(obj, "display_name", ctx, JSON_REQUIRED, p->display,
                              sizeof p->display, err)) ||
        (rc = json_get_string(obj, "source", ctx, JSON_REQUIRED, p->source, sizeof p->source,
                              err)) ||
        (rc = json_get_object(obj, "options", ctx, JSON_REQUIRED, &opt, err)) ||
        (rc = json_get_object(obj, "layout", ctx, JSON_REQUIRED, &lay, err)) ||
        (rc = json_get_object(obj, "zero3", ctx, JSON_OPTIONAL, &z3, err)) ||
        (rc = json_get_object(obj, "supports", ctx, JSON_REQUIRED, &sup, err)))
        return rc;
    if ((rc = json_get_bool(obj, "plannable", ctx, JSON_OPTIONAL, &p->plannable, err)) ||
        (rc = read_release(obj, ctx, p, err)))
        return rc;
    json_ctx_t sctx = json_ctx_member(ctx, "supports");
    if ((rc = read_supports(sup, &sctx, &p->caps, err)))
        return rc;
    json_ctx_t octx = json_ctx_member(ctx, "options"), lctx = json_ctx_member(ctx, "layout");
    json_ctx_t zctx = json_ctx_member(ctx, "zero3");
    json_ctx_t mctx = json_ctx_member(&octx, "moe");
    if ((rc = read_options(opt, &octx, &p->opt, err)) ||
        (rc = read_moe_by_gpu(cJSON_GetObjectItemCaseSensitive(opt, "moe"), &mctx, p, err)) ||
        (rc = read_layout(lay, &lctx, p, err)) ||
        (z3 && (rc = read_zero3(z3, &zctx, &p->opt.zero3, err))))
        return rc;
    default_dispatcher(p);
    note_assumed(obj, "preset", p->assumed, sizeof p->assumed);
    note_assumed(opt, "options", p->assumed, sizeof p->assumed);
    note_assumed(cJSON_GetObjectItemCaseSensitive(opt, "tp_overlap"), "tp_overlap", p->assumed,
                 sizeof p->assumed);
    note_assumed(lay, "layout", p->assumed, sizeof p->assumed);
    note_assumed(z3, "zero3", p->assumed, sizeof p->assumed);
    return ERR_OK;
}

int fw_load(const char *name, fw_preset_t *out, err_t *err)
{
    catalog_t *cat = catalog_create(); /* one parse for the default's name and its preset */
    if (!cat)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = fw_load_in(cat, name, out, err);
    catalog_destroy(cat);
    return rc;
}

int fw_load_in(catalog_t *cat, const char *name, fw_preset_t *out, err_t *err)
{
    if (!cat)
        return fw_load(name, out, err);
    char def[FW_NAME_MAX] = "";
    if (!name || !*name) {
        const cJSON *root;
        const char *origin;
        int rc = catalog_get(cat, FW_FILE, &root, &origin, err);
        if (rc)
            return rc;
        json_ctx_t ctx = json_ctx_root(origin);
        if ((rc = json_get_string(root, "default", &ctx, JSON_REQUIRED, def, sizeof def, err)))
            return rc;
        name = def;
    }
    /* a preset is a flat struct read from the catalog and the options
     * switched off: kept in cat under both, read again as a copy */
    const char *off = getenv("SCALEPLAN_OPTION_OFF");
    char key[FW_NAME_MAX + 320];
    int n = snprintf(key, sizeof key, "%s\n%s\n%s", FW_FILE, name, off ? off : "");
    bool memo = n > 0 && (size_t)n < sizeof key;
    if (memo && catalog_memo_get(cat, key, out, sizeof *out))
        return ERR_OK;
    int rc = catalog_lookup_named(cat, FW_FILE, "frameworks", name, "--framework",
                                  "scaleplan catalog frameworks", preset_from_json, out, err);
    if (rc == ERR_OK && memo)
        (void)catalog_memo_put(cat, key, out, sizeof *out); /* failure: parse next time */
    return rc;
}

/* Case-insensitive substring. */
static bool contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return true;
    return n == 0;
}

/* A release named in text: "YY.MM" after the family word ("NeMo 25.07",
 * "26.04.01"), else a month and year ("Dec 2024", "June 2025") or
 * "YYYY-MM"; year x 12 + month - 1, or 0 when text names none. */
static int release_in(const char *text, const char *family)
{
    static const char *const months[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                         "jul", "aug", "sep", "oct", "nov", "dec"};
    if (!text)
        return 0;
    const char *from = text;
    size_t fl = family ? strlen(family) : 0;
    for (const char *p = text; fl && *p; p++)
        if (strncasecmp(p, family, fl) == 0) {
            from = p + fl;
            break;
        }
    for (const char *p = from; *p; p++) {
        int yy, mm, n = 0;
        if (isdigit((unsigned char)*p) && (p == from || !isdigit((unsigned char)p[-1])) &&
            sscanf(p, "%2d.%2d%n", &yy, &mm, &n) == 2 && n == 5 && !isdigit((unsigned char)p[5]) &&
            yy >= 19 && yy <= 60 && mm >= 1 && mm <= 12)
            return (2000 + yy) * 12 + mm - 1;
    }
    /* an arXiv identifier dates its paper ("arXiv:2402.15627": February
     * 2024, the first version's month) */
    for (const char *p = text; *p; p++) {
        int yy, mm, n = 0;
        if (strncasecmp(p, "arXiv:", 6) == 0 && sscanf(p + 6, "%2d%2d.%*5d%n", &yy, &mm, &n) == 2 &&
            n >= 9 && yy >= 7 && yy <= 60 && mm >= 1 && mm <= 12)
            return (2000 + yy) * 12 + mm - 1;
    }
    for (const char *p = text; *p; p++) {
        if (p != text && isalpha((unsigned char)p[-1]))
            continue;
        for (int m = 0; m < 12; m++) {
            if (strncasecmp(p, months[m], 3) != 0)
                continue;
            const char *q = p + 3;
            while (isalpha((unsigned char)*q) || *q == '.')
                q++;
            int y = 0, n = 0;
            if (sscanf(q, " %4d%n", &y, &n) == 1 && n >= 5 && y >= 2019 && y <= 2100)
                return y * 12 + m;
        }
        int mo = isdigit((unsigned char)*p) && (p == text || !isdigit((unsigned char)p[-1]))
                     ? month_of_prefix(p)
                     : 0;
        if (mo)
            return mo;
    }
    return 0;
}

typedef struct {
    const char *text; /* the framework column */
    size_t len;       /* how much of it to search */
    char family[32];  /* the longest family name it contains so far */
} family_search_t;

/* Case-insensitive substring within the first len characters of hay. */
static bool contains_n(const char *hay, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len && hay[i]; i++)
        if (strncasecmp(hay + i, needle, n) == 0)
            return true;
    return n == 0;
}

static int longest_family_in(const char *name, void *arg)
{
    family_search_t *fs = arg;
    if (contains_n(fs->text, fs->len, name) && strlen(name) > strlen(fs->family))
        snprintf(fs->family, sizeof fs->family, "%s", name);
    return 0;
}

/* The family a framework column names: the longest family word before a
 * parenthesis when a release number follows it there ("NeMo 24.03
 * (Megatron-Core)" is NeMo 24.03, run on the engine in brackets), else the
 * longest family word anywhere in it. */
static void column_family(const cJSON *arr, const char *framework_text, family_search_t *fs)
{
    const char *paren = strchr(framework_text, '(');
    fs->text = framework_text;
    fs->len = paren ? (size_t)(paren - framework_text) : strlen(framework_text);
    fs->family[0] = '\0';
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next)
        each_family(e, longest_family_in, fs);
    if (!paren)
        return;
    if (fs->family[0]) {
        char *lead = strndup(framework_text, fs->len);
        bool versioned = lead && release_in(lead, fs->family) != 0;
        free(lead);
        if (versioned)
            return;
        fs->family[0] = '\0';
    }
    fs->len = strlen(framework_text);
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next)
        each_family(e, longest_family_in, fs);
}

static int is_family(const char *name, void *family)
{
    return strcasecmp(name, family) == 0;
}

/* A preset that matched but cannot be read is not "no preset": the
 * catalog is broken, and a caller that falls back to another preset on
 * ERR_INPUT must not (ERR_RUNTIME). */
static int preset_unreadable(int rc, err_t *err)
{
    if (rc == ERR_INPUT)
        err->code = ERR_RUNTIME;
    return rc ? ERR_RUNTIME : ERR_OK;
}

/* The family fallback of fw_match_in: the longest family word the column
 * carries, then the family's preset by release. */
static int match_release(const cJSON *arr, const json_ctx_t *actx, const char *framework_text,
                         const char *source_text, fw_preset_t *out, err_t *err)
{
    family_search_t fs;
    column_family(arr, framework_text, &fs);
    const char *family = fs.family;
    if (!family[0])
        return err_setf(err, ERR_INPUT, NULL, "framework",
                        "no framework preset matches '%s' (scaleplan catalog frameworks)",
                        framework_text);
    int want = release_in(framework_text, family);
    if (!want)
        want = release_in(source_text, NULL);
    int pick = -1, pick_month = 0, oldest = -1, oldest_month = 0, latest = -1, latest_month = 0;
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        const cJSON *rel = cJSON_GetObjectItemCaseSensitive(e, "release");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(rel, "date");
        if (!each_family(e, is_family, (void *)family) || !cJSON_IsString(d))
            continue;
        int mo = month_of(d->valuestring);
        if (!mo)
            continue;
        if (oldest < 0 || mo < oldest_month)
            oldest = i, oldest_month = mo;
        if (latest < 0 || mo > latest_month)
            latest = i, latest_month = mo;
        if (want && mo <= want && (pick < 0 || mo > pick_month))
            pick = i, pick_month = mo;
    }
    const char *how = "the latest %s preset released no later";
    if (!want)
        pick = latest, how = "no release date in its name, the latest %s preset";
    else if (pick < 0)
        pick = oldest, how = "older than every %s preset, the oldest";
    if (pick < 0)
        return err_setf(err, ERR_INPUT, NULL, "framework",
                        "no framework preset matches '%s' (scaleplan catalog frameworks)",
                        framework_text);
    json_ctx_t ectx = json_ctx_index(actx, pick);
    int rc = preset_unreadable(preset_from_json(cJSON_GetArrayItem(arr, pick), &ectx, out, err),
                               err);
    if (rc)
        return rc;
    char why[80];
    snprintf(why, sizeof why, how, family);
    snprintf(out->matched_by, sizeof out->matched_by,
             "framework '%.80s' has no preset of its own: replayed with %s (%s)", framework_text,
             out->name, why);
    return ERR_OK;
}

int fw_match(const char *framework_text, const char *source_text, fw_preset_t *out, err_t *err)
{
    catalog_t *cat = catalog_create();
    if (!cat)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = fw_match_in(cat, framework_text, source_text, out, err);
    catalog_destroy(cat);
    return rc;
}

int fw_match_in(catalog_t *cat, const char *framework_text, const char *source_text,
                fw_preset_t *out, err_t *err)
{
    if (!cat)
        return fw_match(framework_text, source_text, out, err);
    const cJSON *root;
    const char *origin;
    int rc = catalog_get(cat, FW_FILE, &root, &origin, err);
    if (rc)
        return rc;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "frameworks");
    json_ctx_t rctx = json_ctx_root(origin);
    json_ctx_t actx = json_ctx_member(&rctx, "frameworks");
    /* The longest matching pattern wins ("Megatron-LM PTD-P" over
     * "Megatron-LM"; a pattern with a source condition over one without). */
    int best = -1;
    size_t best_len = 0;
    int i = 0;
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next, i++) {
        const cJSON *match = cJSON_GetObjectItemCaseSensitive(e, "match");
        for (const cJSON *m = match ? match->child : NULL; m; m = m->next) {
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(m, "framework");
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(m, "source");
            if (!cJSON_IsString(f) || !contains(framework_text, f->valuestring))
                continue;
            if (cJSON_IsString(s) && !contains(source_text, s->valuestring))
                continue;
            size_t len = strlen(f->valuestring) + (cJSON_IsString(s) ? 1000 : 0);
            if (len > best_len) {
                best_len = len;
                best = i;
            }
        }
    }
    if (best >= 0) {
        json_ctx_t ectx = json_ctx_index(&actx, best);
        return preset_unreadable(preset_from_json(cJSON_GetArrayItem(arr, best), &ectx, out, err),
                                 err);
    }
    return match_release(arr, &actx, framework_text, source_text, out, err);
}

void fw_apply(const fw_preset_t *p, sim_options_t *o, layout_t *l)
{
    *o = p->opt;
    l->flash_attention = p->flash_attention;
    l->sp_saves_gathered = p->sp_saves_gathered;
    l->grad_bytes = fw_grad_bytes(p, l->precision);
    l->distributed_optimizer = p->distributed_optimizer;
    if (l->zero < p->zero_min)
        l->zero = p->zero_min;
    l->recompute = p->recompute;
}

int fw_grad_bytes(const fw_preset_t *p, precision_t precision)
{
    if (precision == PRECISION_FP32)
        return 4;
    return precision == PRECISION_FP16 ? p->fp16_grad_bytes : p->grad_bytes;
}

/* Whether list (comma separated) holds name, case-insensitively. */
static bool list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *q = list; n && *q;) {
        size_t len = strcspn(q, ",");
        if (len == n && strncasecmp(q, name, n) == 0)
            return true;
        q += len + (q[len] == ',');
    }
    return false;
}

void fw_apply_gpu(const fw_preset_t *p, const char *gpu, const char *model, sim_options_t *o)
{
    if (!gpu || !*gpu)
        return;
    /* the model's own recipe first, then the GPU's */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < p->n_moe_by_gpu; i++) {
            const fw_moe_gpu_t *g = &p->moe_by_gpu[i];
            bool recipe = g->models[0] != '\0';
            if (recipe != (pass == 0) || !list_has(g->gpus, gpu) ||
                (recipe && !(model && list_has(g->models, model))))
                continue;
            o->moe.dispatcher = g->dispatcher;
            o->moe.a2a_overlap = g->a2a_overlap;
            o->moe.shared_overlap = g->shared_overlap;
            if (g->graph_scopes_set)
                o->host.graph_scopes = g->graph_scopes;
            if (g->capacity_factor > 0) {
                o->moe.capacity_factor = g->capacity_factor;
                o->moe.pad_to_capacity = g->pad_to_capacity;
                o->moe.drop_from_recipe = true;
            }
            return;
        }
}

/* The names of the set members, comma separated. */
static void name_list(const bool *set, int n, const char *(*name)(int), char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        if (set[i]) {
            size_t l = strlen(buf);
            snprintf(buf + l, cap - l, "%s%s", l ? ", " : "", name(i));
        }
}

static const char *sched_name(int i) { return layout_schedule_name((schedule_t)i); }
static const char *rec_name(int i) { return layout_recompute_name((recompute_t)i); }
static const char *prec_name(int i) { return layout_precision_name((precision_t)i); }
static const char *cp_name(int i)
{
    static const char *const n[] = {"ring", "allgather", "a2a"};
    return n[i];
}
static const char *zero_name(int i)
{
    static const char *const n[] = {"0", "1 (distributed optimizer)", "2", "3 (FSDP)"};
    return n[i];
}

/* Megatron-Core's MoE layer refuses to train with TP and without SP
 * (transformer/moe/moe_layer.py forward: "During training, performance may
 * degrade if MoE and tensor parallelism are enabled without also enabling
 * sequence parallelism"; model_parallel_config.py refuses EP with TP
 * without it too), so a layout that does not say runs with it. */
int fw_require_sp(const fw_preset_t *p, const model_t *m, layout_t *l, bool *implied,
                  err_t *err)
{
    *implied = false;
    if (!p->caps.sp_with_moe_tp || !model_is_moe(m) || l->tp <= 1 || l->sequence_parallel)
        return ERR_OK;
    if (l->sp_off)
        return err_setf(err, ERR_INPUT, NULL, "--sequence-parallel",
                        "%s trains mixture-of-experts blocks with TP only with sequence "
                        "parallelism (Megatron-Core's MoE layer refuses TP %d without it), "
                        "which is turned off here",
                        p->name, l->tp);
    l->sequence_parallel = true;
    *implied = true;
    return ERR_OK;
}

int fw_check_model(const fw_preset_t *p, const model_t *m, err_t *err)
{
    if (!model_is_hybrid(m) || p->caps.hybrid)
        return ERR_OK;
    int scans = 0;
    for (int k = MODEL_MIXER_MAMBA2; k <= MODEL_MIXER_LAST_SCAN; k++)
        scans += model_hybrid_count(m, (model_mixer_t)k);
    if (scans == 0) /* attention-only and MLP-only blocks (Nemotron-NAS) */
        return err_setf(err, ERR_INPUT, NULL, "--framework",
                        "%s is not marked to run per-layer heterogeneous blocks (%s has "
                        "attention-only and MLP-only blocks; supports.hybrid in "
                        "sim/catalog/frameworks.json; Megatron-Bridge runs them through "
                        "Megatron-Core's heterogeneous layer specs, "
                        "src/megatron/bridge/models/llama_nemotron/model_config.py)",
                        p->name, m->name);
    return err_setf(err, ERR_INPUT, NULL, "--framework",
                    "%s does not run hybrid models (%s has Mamba / linear-attention blocks; "
                    "Megatron-Core from 0.8, NeMo and Megatron-Bridge run them: "
                    "megatron/core/ssm)",
                    p->name, m->name);
}

int fw_plannable_without_hybrid(char *buf, size_t cap, err_t *err)
{
    char **names = NULL;
    size_t count = 0;
    int rc = fw_names(&names, &count, err);
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; !rc && i < count; i++) {
        fw_preset_t fw;
        if ((rc = fw_load(names[i], &fw, err)) || !fw.plannable || fw.caps.hybrid)
            continue;
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%s%s", l ? ", " : "", fw.name);
    }
    catalog_free_names(names, count);
    return rc;
}

int fw_check_layout(const fw_preset_t *p, const layout_t *l, const sim_options_t *o, err_t *err)
{
    const fw_caps_t *c = &p->caps;
    char list[256];
    int zero = l->zero > 0 ? l->zero : l->distributed_optimizer ? 1 : 0;
    if (!c->zero[zero]) {
        bool z[4];
        memcpy(z, c->zero, sizeof z);
        name_list(z, 4, zero_name, list, sizeof list);
        return err_setf(err, ERR_INPUT, NULL, zero == 1 ? "--distributed-optimizer" : "--zero",
                        "%s does not run ZeRO-%d; it runs ZeRO %s", p->name, zero, list);
    }
    if (l->tp > 1 && !c->tp)
        return err_setf(err, ERR_INPUT, NULL, "--tp", "%s has no tensor parallelism", p->name);
    if (l->sequence_parallel && l->tp > 1 && !c->sp)
        return err_setf(err, ERR_INPUT, NULL, "--sequence-parallel",
                        "%s has no sequence parallelism", p->name);
    if (l->pp > 1 && !c->pp)
        return err_setf(err, ERR_INPUT, NULL, "--pp", "%s has no pipeline parallelism", p->name);
    if (l->pp > 1 && l->zero >= 2 && !c->zero3_with_pp)
        return err_setf(err, ERR_INPUT, NULL, "--zero",
                        "%s does not run ZeRO-%d with pipeline stages (use --pp 1, or ZeRO-1 "
                        "/ the distributed optimizer)",
                        p->name, l->zero);
    if ((l->first_stage_layers || l->last_stage_layers) && !c->uneven_split)
        return err_setf(err, ERR_INPUT, NULL, "--first-stage-layers",
                        "%s splits layers evenly over pipeline stages", p->name);
    /* torchtitan of 2024 splits at layer boundaries ("layers.N" split
     * points, N from 1): every stage holds a layer */
    if (p->pp_split == LAYOUT_SPLIT_EXTRA_MIDDLE &&
        (l->first_stage_layers == LAYOUT_STAGE_EMPTY || l->last_stage_layers == LAYOUT_STAGE_EMPTY))
        return err_setf(err, ERR_INPUT, NULL, "--first-stage-layers",
                        "%s splits at layer boundaries: every pipeline stage holds at least "
                        "one layer, none the embedding or the loss alone",
                        p->name);
    if (l->ep > 1 && !c->ep)
        return err_setf(err, ERR_INPUT, NULL, "--ep", "%s has no expert parallelism", p->name);
    if (!c->accumulation && l->pp <= 1 && l->grad_accum > 1)
        return err_setf(err, ERR_INPUT, NULL, "--global-batch",
                        "%s has no gradient accumulation: without pipeline stages a step is "
                        "one micro-batch per data-parallel rank (global batch %d = micro-batch "
                        "%d x %d ranks, not %d)",
                        p->name, l->micro_batch * l->dp, l->micro_batch, l->dp,
                        l->global_batch);
    if (l->cp > 1 && !c->cp[0] && !c->cp[1] && !c->cp[2])
        return err_setf(err, ERR_INPUT, NULL, "--cp", "%s has no context parallelism", p->name);
    if (l->cp > 1 && !c->cp[o->cp_comm]) {
        name_list(c->cp, 3, cp_name, list, sizeof list);
        return err_setf(err, ERR_INPUT, NULL, "--cp", "%s has no %s context parallelism%s%s",
                        p->name, cp_name(o->cp_comm), list[0] ? "; it runs " : "", list);
    }
    if (!c->schedule[l->schedule] && l->pp > 1) {
        name_list(c->schedule, SCHEDULE_COUNT, sched_name, list, sizeof list);
        return err_setf(err, ERR_INPUT, NULL, "--schedule", "%s does not run %s; it runs %s",
                        p->name, layout_schedule_name(l->schedule), list);
    }
    if (!c->recompute[l->recompute]) {
        name_list(c->recompute, RECOMPUTE_COUNT, rec_name, list, sizeof list);
        return err_setf(err, ERR_INPUT, NULL, "--recompute", "%s has no %s recompute; it runs %s",
                        p->name, layout_recompute_name(l->recompute), list);
    }
    if (l->recompute_layers > 0 && !c->recompute_block)
        return err_setf(err, ERR_INPUT, NULL, "--recompute-num-layers",
                        "%s recomputes every layer or none (no Megatron block recompute of the "
                        "first %d layers of each stage)",
                        p->name, l->recompute_layers);
    if ((l->recompute_modules & ~(unsigned)LAYOUT_RC_CORE_ATTN) && !c->recompute_modules)
        return err_setf(err, ERR_INPUT, NULL, "--recompute-modules",
                        "%s's selective recompute rebuilds the attention core only (recompute "
                        "modules came with Megatron-Core 0.12: megatron-core, Megatron-Bridge)",
                        p->name);
    if (!(c->precisions & (1u << l->precision))) {
        bool set[PRECISION_COUNT];
        for (int i = 0; i < PRECISION_COUNT; i++)
            set[i] = c->precisions & (1u << i);
        name_list(set, PRECISION_COUNT, prec_name, list, sizeof list);
        return err_setf(err, ERR_INPUT, NULL, "--precision", "%s does not train in %s; it runs %s",
                        p->name, layout_precision_name(l->precision), list);
    }
    return ERR_OK;
}

static void join(char *buf, size_t cap, const char *sep, const bool *set, int n,
                 const char *(*name)(int))
{
    bool first = true;
    for (int i = 0; i < n; i++)
        if (set[i]) {
            size_t l = strlen(buf);
            snprintf(buf + l, cap - l, "%s%s", first ? "" : sep, name(i));
            first = false;
        }
}

static const char *digit(int i)
{
    static const char *const d[] = {"0", "1", "2", "3"};
    return d[i];
}

bool fw_caps_cp(const fw_caps_t *c)
{
    for (size_t k = 0; k < sizeof c->cp / sizeof c->cp[0]; k++)
        if (c->cp[k])
            return true;
    return false;
}

bool fw_caps_shards(const fw_caps_t *c)
{
    return c->tp || c->pp || c->zero[1] || c->zero[2] || c->zero[3];
}

void fw_describe_caps(const fw_caps_t *c, char *buf, size_t cap)
{
    snprintf(buf, cap, "ZeRO ");
    join(buf, cap, "/", c->zero, 4, digit);
    size_t l = strlen(buf);
    snprintf(buf + l, cap - l, "%s%s%s%s%s%s", c->tp ? ", TP" : "", c->tp && c->sp ? "+SP" : "",
             c->pp ? ", PP" : "", c->pp && c->uneven_split ? " (uneven)" : "",
             c->pp && c->zero3_with_pp ? " with FSDP" : "",
             c->accumulation ? "" : ", no gradient accumulation");
    bool any_cp = c->cp[0] || c->cp[1] || c->cp[2];
    if (any_cp) {
        l = strlen(buf);
        snprintf(buf + l, cap - l, ", CP ");
        join(buf, cap, "/", c->cp, 3, cp_name);
    }
    if (c->ep) {
        l = strlen(buf);
        snprintf(buf + l, cap - l, ", EP");
    }
    if (c->pp) {
        l = strlen(buf);
        snprintf(buf + l, cap - l, "; ");
        join(buf, cap, "/", c->schedule, SCHEDULE_COUNT, sched_name);
    }
    l = strlen(buf);
    snprintf(buf + l, cap - l, "; recompute ");
    join(buf, cap, "/", c->recompute, RECOMPUTE_COUNT, rec_name);
    if (c->recompute_block) {
        l = strlen(buf);
        snprintf(buf + l, cap - l, " (block)");
    }
    if (c->recompute_modules) {
        l = strlen(buf);
        snprintf(buf + l, cap - l, " (modules)");
    }
}

int fw_names(char ***names, size_t *count, err_t *err)
{
    return fw_names_in(NULL, names, count, err);
}

int fw_names_in(catalog_t *cat, char ***names, size_t *count, err_t *err)
{
    cJSON *owned = NULL;
    const cJSON *root;
    char origin[CATALOG_ORIGIN_MAX];
    *names = NULL;
    *count = 0;
    int rc = catalog_doc(cat, FW_FILE, &root, &owned, origin, sizeof origin, err);
    if (rc)
        return rc;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "frameworks");
    size_t n = (size_t)cJSON_GetArraySize(arr);
    char **v = calloc(n ? n : 1, sizeof *v);
    if (!v) {
        cJSON_Delete(owned);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    size_t k = 0;
    for (const cJSON *e = arr ? arr->child : NULL; e; e = e->next) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(nm) && !(v[k] = strdup(nm->valuestring)))
            break;
        if (cJSON_IsString(nm))
            k++;
    }
    cJSON_Delete(owned);
    if (k < n && cJSON_GetArraySize(arr) != (int)k) {
        catalog_free_names(v, k);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    *names = v;
    *count = k;
    return ERR_OK;
}
