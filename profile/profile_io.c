/* profile_io: profiles to and from JSON ("scaleplan-profile/1"), and the
 * built-in default profiles of profile/catalog/. */
#include "profile/profile_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/catalog.h"
#include "common/json.h"

#define PROFILE_DIR "profile/catalog"

/* ------------------------------------------------------------ reading */

static int read_source(const cJSON *obj, const json_ctx_t *ctx, char *out,
                       err_t *err)
{
    return json_get_string(obj, "source", ctx, JSON_REQUIRED, out,
                           PROF_SOURCE_MAX, err);
}

static int read_gemm(const cJSON *root, const json_ctx_t *top, profile_t *p,
                     err_t *err)
{
    const cJSON *g, *dtypes, *meas;
    json_ctx_t ctx = json_ctx_member(top, "gemm");
    int rc;
    if ((rc = json_get_object(root, "gemm", top, JSON_REQUIRED, &g, err)) ||
        (rc = json_get_int(g, "tile_m", &ctx, JSON_REQUIRED, 8, 1024, &p->tile_m, err)) ||
        (rc = json_get_int(g, "tile_n", &ctx, JSON_REQUIRED, 8, 1024, &p->tile_n, err)) ||
        (rc = json_get_double(g, "wave_penalty", &ctx, JSON_REQUIRED, 0, 1,
                              &p->wave_penalty, err)) ||
        (rc = json_get_double(g, "k_half", &ctx, JSON_REQUIRED, 0, 1e5, &p->k_half, err)) ||
        (rc = json_get_double(g, "launch_us", &ctx, JSON_REQUIRED, 0, 1e4,
                              &p->gemm_launch_us, err)) ||
        (rc = json_get_double(g, "sustained_factor", &ctx, JSON_REQUIRED, 0.1, 1.2,
                              &p->sustained_factor, err)) ||
        (rc = read_source(g, &ctx, p->gemm_source, err)) ||
        (rc = json_get_object(g, "dtypes", &ctx, JSON_REQUIRED, &dtypes, err)) ||
        (rc = json_get_array(g, "measurements", &ctx, JSON_OPTIONAL, &meas, err)))
        return rc;
    json_ctx_t dctx = json_ctx_member(&ctx, "dtypes");
    for (int d = 0; d < DTYPE_COUNT; d++) {
        const cJSON *e;
        json_ctx_t ectx = json_ctx_member(&dctx, dtype_name((dtype_t)d));
        if ((rc = json_get_object(dtypes, dtype_name((dtype_t)d), &dctx,
                                  JSON_OPTIONAL, &e, err)))
            return rc;
        if (!e)
            continue;
        if ((rc = json_get_double(e, "max_efficiency", &ectx, JSON_REQUIRED,
                                  0.01, 1.0, &p->gemm_max_eff[d], err)) ||
            (rc = json_get_double(e, "peak_tflops", &ectx, JSON_OPTIONAL, 0,
                                  1e6, &p->peak_tflops[d], err)))
            return rc;
        if ((rc = read_source(e, &ectx, p->gemm_dtype_source[d], err)))
            return rc;
    }
    if (!(p->gemm_max_eff[DTYPE_BF16] > 0) && !(p->gemm_max_eff[DTYPE_FP16] > 0))
        return err_setf(err, ERR_INPUT, ctx.file, dctx.path,
                        "needs a bf16 or fp16 entry");
    int n = meas ? cJSON_GetArraySize(meas) : 0;
    if (n > 0) {
        p->gemm_points = calloc((size_t)n, sizeof *p->gemm_points);
        if (!p->gemm_points)
            return err_set(err, ERR_RUNTIME, "out of memory reading %s", ctx.file);
        json_ctx_t mctx = json_ctx_member(&ctx, "measurements");
        for (int i = 0; i < n; i++) {
            const cJSON *e = cJSON_GetArrayItem(meas, i);
            json_ctx_t ectx = json_ctx_index(&mctx, i);
            prof_gemm_point_t *pt = &p->gemm_points[i];
            char dt[8];
            if ((rc = json_get_string(e, "dtype", &ectx, JSON_REQUIRED, dt, sizeof dt, err)) ||
                (rc = json_get_double(e, "m", &ectx, JSON_REQUIRED, 1, 1e9, &pt->m, err)) ||
                (rc = json_get_double(e, "n", &ectx, JSON_REQUIRED, 1, 1e9, &pt->n, err)) ||
                (rc = json_get_double(e, "k", &ectx, JSON_REQUIRED, 1, 1e9, &pt->k, err)) ||
                (rc = json_get_double(e, "tflops", &ectx, JSON_REQUIRED, 1e-6, 1e6,
                                      &pt->tflops, err)))
                return rc;
            if ((rc = dtype_parse(dt, &pt->dtype, err)))
                return err_prefix(err, ectx.path), err_prefix(err, ctx.file);
            p->n_gemm_points++;
        }
    }
    return ERR_OK;
}

static int read_attn_kernels(const cJSON *a, const json_ctx_t *actx, profile_t *p, err_t *err)
{
    const cJSON *arr = NULL;
    int rc = json_get_array(a, "kernels", actx, JSON_OPTIONAL, &arr, err);
    if (rc || !arr)
        return rc;
    json_ctx_t kctx = json_ctx_member(actx, "kernels");
    int n = cJSON_GetArraySize(arr);
    if (n > PROF_MAX_ATTN_KERNELS)
        return err_setf(err, ERR_INPUT, kctx.file, kctx.path, "at most %d kernels (got %d)",
                        PROF_MAX_ATTN_KERNELS, n);
    for (int i = 0; i < n; i++) {
        json_ctx_t e = json_ctx_index(&kctx, i);
        const cJSON *o = cJSON_GetArrayItem(arr, i);
        prof_attn_kernel_t *k = &p->attn_kernels[i];
        if ((rc = json_expect_object(o, &e, err)) ||
            (rc = json_get_string(o, "name", &e, JSON_REQUIRED, k->name, sizeof k->name, err)) ||
            (rc = json_get_double(o, "fwd_full", &e, JSON_REQUIRED, 0.01, 1, &k->fwd_full, err)) ||
            (rc = json_get_double(o, "fwd_causal", &e, JSON_REQUIRED, 0.01, 1, &k->fwd_causal, err)) ||
            (rc = json_get_double(o, "bwd", &e, JSON_REQUIRED, 0.01, 1, &k->bwd, err)) ||
            (rc = json_get_double(o, "s_half_full", &e, JSON_REQUIRED, 0, 1e7, &k->s_half_full,
                                  err)) ||
            (rc = json_get_double(o, "s_half_causal", &e, JSON_REQUIRED, 0, 1e7, &k->s_half_causal,
                                  err)) ||
            (rc = json_get_double(o, "s_half_bwd", &e, JSON_REQUIRED, 0, 1e7, &k->s_half_bwd, err)) ||
            (rc = json_get_double(o, "d_half", &e, JSON_REQUIRED, 0, 1e4, &k->d_half, err)) ||
            (rc = json_get_double(o, "max_keys", &e, JSON_OPTIONAL, 0, 1e9, &k->max_keys, err)) ||
            (rc = read_source(o, &e, k->source, err)))
            return rc;
    }
    p->n_attn_kernels = n;
    return ERR_OK;
}

static int read_attention_memory(const cJSON *root, const json_ctx_t *top,
                                 profile_t *p, err_t *err)
{
    const cJSON *a, *m;
    json_ctx_t actx = json_ctx_member(top, "attention");
    json_ctx_t mctx = json_ctx_member(top, "memory");
    int rc;
    if ((rc = json_get_object(root, "attention", top, JSON_REQUIRED, &a, err)) ||
        (rc = json_get_double(a, "fwd_efficiency", &actx, JSON_REQUIRED, 0.01, 1,
                              &p->attn_fwd_eff, err)) ||
        (rc = json_get_double(a, "bwd_efficiency", &actx, JSON_REQUIRED, 0.01, 1,
                              &p->attn_bwd_eff, err)) ||
        (rc = read_source(a, &actx, p->attn_source, err)) ||
        (rc = read_attn_kernels(a, &actx, p, err)) ||
        (rc = json_get_object(root, "memory", top, JSON_REQUIRED, &m, err)) ||
        (rc = json_get_double(m, "bw_efficiency", &mctx, JSON_REQUIRED, 0.01, 1.2,
                              &p->mem_bw_eff, err)) ||
        (rc = json_get_double(m, "kernel_launch_us", &mctx, JSON_REQUIRED, 0, 1e4,
                              &p->kernel_launch_us, err)) ||
        (rc = json_get_double(m, "reserved_gib", &mctx, JSON_REQUIRED, 0, 1e4,
                              &p->reserved_gib, err)) ||
        (rc = json_get_double(m, "fragmentation", &mctx, JSON_REQUIRED, 0, 1,
                              &p->fragmentation, err)) ||
        (rc = json_get_double(m, "bw_gbs", &mctx, JSON_OPTIONAL, 1, 1e7,
                              &p->mem_bw_peak_gbs, err)) ||
        (rc = json_get_double(m, "atomic_add_gops", &mctx, JSON_OPTIONAL, 0.001, 1e6,
                              &p->atomic_add_gops, err)) ||
        (rc = json_get_string(m, "atomic_add_source", &mctx, JSON_OPTIONAL, p->atomic_source,
                              sizeof p->atomic_source, err)) ||
        (rc = read_source(m, &mctx, p->mem_source, err)))
        return rc;
    if (p->atomic_add_gops > 0 && !p->atomic_source[0])
        return err_setf(err, ERR_INPUT, mctx.file, mctx.path,
                        "atomic_add_source: missing (atomic_add_gops needs its source)");
    return ERR_OK;
}

static int read_table(const cJSON *e, const json_ctx_t *ctx,
                      prof_coll_table_t *t, err_t *err)
{
    char op[24];
    const cJSON *lines;
    int rc;
    memset(t, 0, sizeof *t);
    if ((rc = json_get_string(e, "op", ctx, JSON_REQUIRED, op, sizeof op, err)) ||
        (rc = json_get_int(e, "n_ranks", ctx, JSON_REQUIRED, 0, 1 << 24,
                           &t->n_ranks, err)) ||
        (rc = json_get_array(e, "lines", ctx, JSON_REQUIRED, &lines, err)) ||
        (rc = json_get_string(e, "source", ctx, JSON_REQUIRED, t->source,
                              sizeof t->source, err)))
        return rc;
    if ((rc = prof_coll_parse(op, &t->op, err)))
        return err_prefix(err, ctx->path), err_prefix(err, ctx->file);
    int n = cJSON_GetArraySize(lines);
    json_ctx_t lctx = json_ctx_member(ctx, "lines");
    if (n < 1 || n > PROF_MAX_LINES)
        return err_setf(err, ERR_INPUT, ctx->file, lctx.path,
                        "must hold 1 to %d lines (got %d)", PROF_MAX_LINES, n);
    for (int i = 0; i < n; i++) {
        json_ctx_t ic = json_ctx_index(&lctx, i);
        const cJSON *l = cJSON_GetArrayItem(lines, i);
        if ((rc = json_get_double(l, "alpha_us", &ic, JSON_REQUIRED, 0, 1e7,
                                  &t->lines[i].alpha_us, err)) ||
            (rc = json_get_double(l, "busbw_gbs", &ic, JSON_REQUIRED, 1e-6, 1e7,
                                  &t->lines[i].busbw_gbs, err)))
            return rc;
    }
    t->n_lines = n;
    return ERR_OK;
}

static int read_collectives(const cJSON *root, const json_ctx_t *top,
                            profile_t *p, err_t *err)
{
    const cJSON *c, *tables, *net;
    json_ctx_t ctx = json_ctx_member(top, "collectives");
    json_ctx_t nctx = json_ctx_member(&ctx, "network");
    int rc;
    if ((rc = json_get_object(root, "collectives", top, JSON_REQUIRED, &c, err)) ||
        (rc = json_get_string(c, "intra_fabric", &ctx, JSON_REQUIRED,
                              p->intra_fabric, sizeof p->intra_fabric, err)) ||
        (rc = json_get_double(c, "base_us", &ctx, JSON_REQUIRED, 0, 1e6,
                              &p->coll_base_us, err)) ||
        (rc = json_get_double(c, "intra_hop_us", &ctx, JSON_REQUIRED, 0, 1e6,
                              &p->intra_hop_us, err)) ||
        (rc = json_get_array(c, "tables", &ctx, JSON_REQUIRED, &tables, err)) ||
        (rc = json_get_object(c, "network", &ctx, JSON_REQUIRED, &net, err)) ||
        (rc = json_get_string(net, "fabric", &nctx, JSON_REQUIRED, p->net_fabric,
                              sizeof p->net_fabric, err)) ||
        (rc = json_get_double(net, "efficiency", &nctx, JSON_REQUIRED, 0, 1.2,
                              &p->net_efficiency, err)) ||
        (rc = json_get_double(net, "hop_us", &nctx, JSON_REQUIRED, 0, 1e6,
                              &p->net_hop_us, err)) ||
        (rc = json_get_double(net, "tree_bw_factor", &nctx, JSON_REQUIRED, 0.01,
                              2, &p->tree_bw_factor, err)) ||
        (rc = json_get_double(net, "measured_gbs_per_gpu", &nctx, JSON_OPTIONAL, 0, 1e5,
                              &p->net_gpu_gbs, err)) ||
        (rc = read_source(net, &nctx, p->net_source, err)))
        return rc;
    int n = cJSON_GetArraySize(tables);
    json_ctx_t tctx = json_ctx_member(&ctx, "tables");
    if (n > PROF_MAX_TABLES)
        return err_setf(err, ERR_INPUT, ctx.file, tctx.path,
                        "at most %d tables (got %d)", PROF_MAX_TABLES, n);
    for (int i = 0; i < n; i++) {
        json_ctx_t ic = json_ctx_index(&tctx, i);
        if ((rc = read_table(cJSON_GetArrayItem(tables, i), &ic, &p->tables[i], err)))
            return rc;
    }
    p->n_tables = n;
    return ERR_OK;
}

static int read_regime(const cJSON *e, const json_ctx_t *ctx, prof_regime_t *r, err_t *err)
{
    int rc;
    if ((rc = json_get_double(e, "min_bytes", ctx, JSON_REQUIRED, 0, 1e18, &r->min_bytes, err)) ||
        (rc = json_get_double(e, "max_bytes", ctx, JSON_REQUIRED, 0, 1e18, &r->max_bytes, err)) ||
        (rc = json_get_int(e, "n_points", ctx, JSON_REQUIRED, 1, 1 << 24, &r->n_points, err)) ||
        (rc = json_get_double(e, "alpha_us", ctx, JSON_REQUIRED, 0, 1e7, &r->alpha_us, err)) ||
        (rc = json_get_double(e, "busbw_gbs", ctx, JSON_REQUIRED, 1e-6, 1e7, &r->busbw_gbs, err)) ||
        (rc = json_get_double(e, "worst_rel_err", ctx, JSON_REQUIRED, 0, 1e6,
                              &r->worst_rel_err, err)) ||
        (rc = json_get_double(e, "pi95_rel", ctx, JSON_REQUIRED, 0, 1e6, &r->pi95_rel, err)))
        return rc;
    if (r->max_bytes < r->min_bytes)
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path,
                        "max_bytes is below min_bytes");
    return ERR_OK;
}

static int read_fit(const cJSON *e, const json_ctx_t *ctx, prof_fit_t *f, err_t *err)
{
    const cJSON *params, *regimes;
    int rc;
    memset(f, 0, sizeof *f);
    if ((rc = json_expect_object(e, ctx, err)) ||
        (rc = json_get_string(e, "name", ctx, JSON_REQUIRED, f->name, sizeof f->name, err)) ||
        (rc = json_get_string(e, "model", ctx, JSON_REQUIRED, f->model, sizeof f->model, err)) ||
        (rc = json_get_int(e, "n_points", ctx, JSON_REQUIRED, 1, 1 << 24, &f->n_points, err)) ||
        (rc = json_get_double(e, "r2", ctx, JSON_REQUIRED, -1e9, 1, &f->r2, err)) ||
        (rc = json_get_double(e, "worst_rel_err", ctx, JSON_REQUIRED, 0, 1e6,
                              &f->worst_rel_err, err)) ||
        (rc = json_get_double(e, "pi95_rel", ctx, JSON_REQUIRED, 0, 1e6, &f->pi95_rel, err)) ||
        (rc = json_get_array(e, "params", ctx, JSON_OPTIONAL, &params, err)) ||
        (rc = json_get_array(e, "regimes", ctx, JSON_OPTIONAL, &regimes, err)))
        return rc;
    int np = params ? cJSON_GetArraySize(params) : 0;
    json_ctx_t pctx = json_ctx_member(ctx, "params");
    if (np > PROF_MAX_PARAMS)
        return err_setf(err, ERR_INPUT, ctx->file, pctx.path, "at most %d parameters (got %d)",
                        PROF_MAX_PARAMS, np);
    for (int i = 0; i < np; i++) {
        json_ctx_t ic = json_ctx_index(&pctx, i);
        const cJSON *pe = cJSON_GetArrayItem(params, i);
        if ((rc = json_expect_object(pe, &ic, err)) ||
            (rc = json_get_string(pe, "name", &ic, JSON_REQUIRED, f->param_names[i],
                                  sizeof f->param_names[i], err)) ||
            (rc = json_get_double(pe, "value", &ic, JSON_REQUIRED, -1e18, 1e18, &f->params[i],
                                  err)) ||
            (rc = json_get_double(pe, "se", &ic, JSON_REQUIRED, 0, 1e18, &f->param_se[i], err)))
            return rc;
    }
    f->n_params = np;
    int nr = regimes ? cJSON_GetArraySize(regimes) : 0;
    json_ctx_t rctx = json_ctx_member(ctx, "regimes");
    if (nr > PROF_MAX_LINES)
        return err_setf(err, ERR_INPUT, ctx->file, rctx.path, "at most %d regimes (got %d)",
                        PROF_MAX_LINES, nr);
    for (int i = 0; i < nr; i++) {
        json_ctx_t ic = json_ctx_index(&rctx, i);
        const cJSON *re = cJSON_GetArrayItem(regimes, i);
        if ((rc = json_expect_object(re, &ic, err)) ||
            (rc = read_regime(re, &ic, &f->regimes[i], err)))
            return rc;
    }
    f->n_regimes = nr;
    return ERR_OK;
}

/* The optional "calibration" block of a measured profile. */
static int read_calibration(const cJSON *root, const json_ctx_t *top, profile_t *p, err_t *err)
{
    const cJSON *c, *fits;
    json_ctx_t ctx = json_ctx_member(top, "calibration");
    prof_env_t *e = &p->env;
    int rc;
    if ((rc = json_get_object(root, "calibration", top, JSON_OPTIONAL, &c, err)) || !c)
        return rc;
    p->has_env = true;
    if ((rc = json_get_string(c, "device", &ctx, JSON_REQUIRED, e->device, sizeof e->device,
                              err)) ||
        (rc = json_get_string(c, "driver", &ctx, JSON_OPTIONAL, e->driver, sizeof e->driver,
                              err)) ||
        (rc = json_get_string(c, "cuda_runtime", &ctx, JSON_OPTIONAL, e->cuda_runtime,
                              sizeof e->cuda_runtime, err)) ||
        (rc = json_get_string(c, "cublas", &ctx, JSON_OPTIONAL, e->cublas, sizeof e->cublas,
                              err)) ||
        (rc = json_get_string(c, "nccl", &ctx, JSON_OPTIONAL, e->nccl, sizeof e->nccl, err)) ||
        (rc = json_get_int(c, "nodes", &ctx, JSON_REQUIRED, 1, 1 << 24, &e->nodes, err)) ||
        (rc = json_get_int(c, "gpus_per_node", &ctx, JSON_REQUIRED, 1, 1 << 16,
                           &e->gpus_per_node, err)) ||
        (rc = json_get_int(c, "ranks", &ctx, JSON_REQUIRED, 1, 1 << 24, &e->ranks, err)) ||
        (rc = json_get_string(c, "date", &ctx, JSON_OPTIONAL, e->date, sizeof e->date, err)) ||
        (rc = json_get_string(c, "command", &ctx, JSON_OPTIONAL, e->command, sizeof e->command,
                              err)) ||
        (rc = json_get_array(c, "fits", &ctx, JSON_REQUIRED, &fits, err)))
        return rc;
    int n = cJSON_GetArraySize(fits);
    if (n == 0)
        return ERR_OK;
    p->fits = calloc((size_t)n, sizeof *p->fits);
    if (!p->fits)
        return err_set(err, ERR_RUNTIME, "out of memory reading %s", ctx.file);
    json_ctx_t fctx = json_ctx_member(&ctx, "fits");
    for (int i = 0; i < n; i++) {
        json_ctx_t ic = json_ctx_index(&fctx, i);
        if ((rc = read_fit(cJSON_GetArrayItem(fits, i), &ic, &p->fits[i], err)))
            return rc;
        p->n_fits++;
    }
    return ERR_OK;
}

static int from_json(catalog_t *cat, const cJSON *root, const char *file, profile_t *p,
                     err_t *err);

int prof_from_json(const cJSON *root, const char *file, profile_t *p, err_t *err)
{
    return from_json(NULL, root, file, p, err);
}

static int from_json(catalog_t *cat, const cJSON *root, const char *file, profile_t *p,
                     err_t *err)
{
    memset(p, 0, sizeof *p);
    json_ctx_t top = json_ctx_root(file);
    char format[40] = "";
    int rc;
    if ((rc = json_expect_object(root, &top, err)) ||
        (rc = json_get_string(root, "format", &top, JSON_REQUIRED, format,
                              sizeof format, err)))
        return rc;
    if (strcmp(format, PROF_FORMAT) != 0)
        return err_setf(err, ERR_INPUT, file, "format",
                        "expected \"%s\" (got \"%s\")", PROF_FORMAT, format);
    if ((rc = json_get_string(root, "gpu", &top, JSON_REQUIRED, p->gpu,
                              sizeof p->gpu, err)) ||
        (rc = json_get_string(root, "origin", &top, JSON_REQUIRED, p->origin,
                              sizeof p->origin, err)) ||
        (rc = json_get_string(root, "description", &top, JSON_OPTIONAL,
                              p->description, sizeof p->description, err)) ||
        (rc = json_get_int(root, "sm_count", &top, JSON_OPTIONAL, 1, 100000,
                           &p->sm_count, err)))
        goto fail;
    if ((rc = read_gemm(root, &top, p, err)) ||
        (rc = read_attention_memory(root, &top, p, err)) ||
        (rc = read_collectives(root, &top, p, err)))
        goto fail;
    const cJSON *st;
    json_ctx_t sctx = json_ctx_member(&top, "straggler");
    if ((rc = json_get_object(root, "straggler", &top, JSON_REQUIRED, &st, err)) ||
        (rc = json_get_double(st, "cv", &sctx, JSON_REQUIRED, 0, 1,
                              &p->straggler_cv, err)) ||
        (rc = read_source(st, &sctx, p->straggler_source, err)))
        goto fail;
    if ((rc = read_calibration(root, &top, p, err)))
        goto fail;
    /* Figures the profile leaves out come from the GPU catalog. */
    gpu_t gpu;
    if ((rc = gpu_load_in(cat, p->gpu, &gpu, err))) {
        err_prefix(err, file);
        goto fail;
    }
    snprintf(p->gpu, sizeof p->gpu, "%s", gpu.name); /* canonical name */
    for (int d = 0; d < DTYPE_COUNT; d++)
        if (p->peak_tflops[d] == 0)
            p->peak_tflops[d] = gpu.peak_tflops[d];
    if (p->sm_count == 0)
        p->sm_count = gpu.sm_count;
    if (p->mem_bw_peak_gbs == 0)
        p->mem_bw_peak_gbs = gpu.mem_bw_gbs;
    return ERR_OK;
fail:
    prof_free(p);
    return rc;
}

int prof_load(const char *path, profile_t *p, err_t *err)
{
    return prof_load_in(NULL, path, p, err);
}

int prof_load_in(catalog_t *cat, const char *path, profile_t *p, err_t *err)
{
    cJSON *root = NULL;
    memset(p, 0, sizeof *p);
    json_ctx_t top = json_ctx_root(path);
    int rc = json_parse_file(path, &root, err);
    if (rc)
        return rc;
    if (!(rc = json_check_unique_keys(root, &top, err)))
        rc = from_json(cat, root, path, p, err);
    cJSON_Delete(root);
    return rc;
}

int prof_load_default(const char *gpu_name, profile_t *p, err_t *err)
{
    catalog_t *cat = catalog_create(); /* one parse of the GPUs for both look-ups */
    if (!cat)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = prof_load_default_in(cat, gpu_name, p, err);
    catalog_destroy(cat);
    return rc;
}

int prof_load_default_in(catalog_t *cat, const char *gpu_name, profile_t *p, err_t *err)
{
    if (!cat)
        return prof_load_default(gpu_name, p, err);
    gpu_t gpu;
    memset(p, 0, sizeof *p);
    int rc = gpu_load_in(cat, gpu_name, &gpu, err);
    if (rc)
        return rc;
    char rel[128], origin[CATALOG_ORIGIN_MAX];
    snprintf(rel, sizeof rel, PROFILE_DIR "/%s.json", gpu.name);
    cJSON *owned;
    const cJSON *root;
    if ((rc = catalog_doc(cat, rel, &root, &owned, origin, sizeof origin, err)))
        return rc;
    rc = from_json(cat, root, origin, p, err);
    cJSON_Delete(owned);
    return rc;
}

/* ------------------------------------------------------------ writing */

static bool add_source(cJSON *o, const char *s)
{
    return cJSON_AddStringToObject(o, "source", s) != NULL;
}

static bool add_fit(cJSON *arr, const prof_fit_t *f)
{
    cJSON *e = cJSON_CreateObject();
    bool ok = e && cJSON_AddItemToArray(arr, e) &&
              cJSON_AddStringToObject(e, "name", f->name) &&
              cJSON_AddStringToObject(e, "model", f->model) &&
              json_add_number(e, "n_points", f->n_points) && json_add_number(e, "r2", f->r2) &&
              json_add_number(e, "worst_rel_err", f->worst_rel_err) &&
              json_add_number(e, "pi95_rel", f->pi95_rel);
    if (ok && f->n_params > 0) {
        cJSON *ps = cJSON_AddArrayToObject(e, "params");
        ok = ps != NULL;
        for (int i = 0; ok && i < f->n_params; i++) {
            cJSON *pe = cJSON_CreateObject();
            ok = pe && cJSON_AddItemToArray(ps, pe) &&
                 cJSON_AddStringToObject(pe, "name", f->param_names[i]) &&
                 json_add_number(pe, "value", f->params[i]) &&
                 json_add_number(pe, "se", f->param_se[i]);
        }
    }
    if (ok && f->n_regimes > 0) {
        cJSON *rs = cJSON_AddArrayToObject(e, "regimes");
        ok = rs != NULL;
        for (int i = 0; ok && i < f->n_regimes; i++) {
            const prof_regime_t *r = &f->regimes[i];
            cJSON *re = cJSON_CreateObject();
            ok = re && cJSON_AddItemToArray(rs, re) &&
                 json_add_number(re, "min_bytes", r->min_bytes) &&
                 json_add_number(re, "max_bytes", r->max_bytes) &&
                 json_add_number(re, "n_points", r->n_points) &&
                 json_add_number(re, "alpha_us", r->alpha_us) &&
                 json_add_number(re, "busbw_gbs", r->busbw_gbs) &&
                 json_add_number(re, "worst_rel_err", r->worst_rel_err) &&
                 json_add_number(re, "pi95_rel", r->pi95_rel);
        }
    }
    return ok;
}

static bool add_calibration(cJSON *root, const profile_t *p)
{
    const prof_env_t *e = &p->env;
    cJSON *c = cJSON_AddObjectToObject(root, "calibration");
    bool ok = c && cJSON_AddStringToObject(c, "device", e->device) &&
              cJSON_AddStringToObject(c, "driver", e->driver) &&
              cJSON_AddStringToObject(c, "cuda_runtime", e->cuda_runtime) &&
              cJSON_AddStringToObject(c, "cublas", e->cublas) &&
              cJSON_AddStringToObject(c, "nccl", e->nccl) &&
              json_add_number(c, "nodes", e->nodes > 0 ? e->nodes : 1) &&
              json_add_number(c, "gpus_per_node", e->gpus_per_node > 0 ? e->gpus_per_node : 1) &&
              json_add_number(c, "ranks", e->ranks > 0 ? e->ranks : 1) &&
              cJSON_AddStringToObject(c, "date", e->date) &&
              cJSON_AddStringToObject(c, "command", e->command);
    cJSON *fits = ok ? cJSON_AddArrayToObject(c, "fits") : NULL;
    ok = ok && fits;
    for (int i = 0; ok && i < p->n_fits; i++)
        ok = add_fit(fits, &p->fits[i]);
    return ok;
}

cJSON *prof_to_json(const profile_t *p)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    bool ok = cJSON_AddStringToObject(root, "format", PROF_FORMAT) &&
              cJSON_AddStringToObject(root, "gpu", p->gpu) &&
              cJSON_AddStringToObject(root, "origin", p->origin) &&
              cJSON_AddStringToObject(root, "description", p->description) &&
              json_add_number(root, "sm_count", p->sm_count);
    cJSON *g = cJSON_AddObjectToObject(root, "gemm");
    ok = ok && g && json_add_number(g, "tile_m", p->tile_m) &&
         json_add_number(g, "tile_n", p->tile_n) &&
         json_add_number(g, "wave_penalty", p->wave_penalty) &&
         json_add_number(g, "k_half", p->k_half) &&
         json_add_number(g, "launch_us", p->gemm_launch_us) &&
         json_add_number(g, "sustained_factor", p->sustained_factor) &&
         add_source(g, p->gemm_source);
    cJSON *dt = ok ? cJSON_AddObjectToObject(g, "dtypes") : NULL;
    ok = ok && dt;
    for (int d = 0; ok && d < DTYPE_COUNT; d++) {
        if (!(p->gemm_max_eff[d] > 0))
            continue;
        cJSON *e = cJSON_AddObjectToObject(dt, dtype_name((dtype_t)d));
        ok = e && json_add_number(e, "max_efficiency", p->gemm_max_eff[d]) &&
             json_add_number(e, "peak_tflops", p->peak_tflops[d]) &&
             add_source(e, p->gemm_dtype_source[d][0] ? p->gemm_dtype_source[d] : p->gemm_source);
    }
    cJSON *meas = ok ? cJSON_AddArrayToObject(g, "measurements") : NULL;
    ok = ok && meas;
    for (size_t i = 0; ok && i < p->n_gemm_points; i++) {
        const prof_gemm_point_t *pt = &p->gemm_points[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(meas, e) &&
             cJSON_AddStringToObject(e, "dtype", dtype_name(pt->dtype)) &&
             json_add_number(e, "m", pt->m) && json_add_number(e, "n", pt->n) &&
             json_add_number(e, "k", pt->k) && json_add_number(e, "tflops", pt->tflops);
    }
    cJSON *a = ok ? cJSON_AddObjectToObject(root, "attention") : NULL;
    ok = ok && a && json_add_number(a, "fwd_efficiency", p->attn_fwd_eff) &&
         json_add_number(a, "bwd_efficiency", p->attn_bwd_eff) &&
         add_source(a, p->attn_source);
    cJSON *ks = ok && p->n_attn_kernels > 0 ? cJSON_AddArrayToObject(a, "kernels") : NULL;
    for (int i = 0; ok && ks && i < p->n_attn_kernels; i++) {
        const prof_attn_kernel_t *k = &p->attn_kernels[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(ks, e) && cJSON_AddStringToObject(e, "name", k->name) &&
             json_add_number(e, "fwd_full", k->fwd_full) &&
             json_add_number(e, "fwd_causal", k->fwd_causal) && json_add_number(e, "bwd", k->bwd) &&
             json_add_number(e, "s_half_full", k->s_half_full) &&
             json_add_number(e, "s_half_causal", k->s_half_causal) &&
             json_add_number(e, "s_half_bwd", k->s_half_bwd) &&
             json_add_number(e, "d_half", k->d_half) &&
             (!(k->max_keys > 0) || json_add_number(e, "max_keys", k->max_keys)) &&
             add_source(e, k->source);
    }
    cJSON *m = ok ? cJSON_AddObjectToObject(root, "memory") : NULL;
    ok = ok && m && json_add_number(m, "bw_gbs", p->mem_bw_peak_gbs) &&
         json_add_number(m, "bw_efficiency", p->mem_bw_eff) &&
         json_add_number(m, "kernel_launch_us", p->kernel_launch_us) &&
         json_add_number(m, "reserved_gib", p->reserved_gib) &&
         json_add_number(m, "fragmentation", p->fragmentation) &&
         (!(p->atomic_add_gops > 0) ||
          (json_add_number(m, "atomic_add_gops", p->atomic_add_gops) &&
           cJSON_AddStringToObject(m, "atomic_add_source", p->atomic_source))) &&
         add_source(m, p->mem_source);
    cJSON *c = ok ? cJSON_AddObjectToObject(root, "collectives") : NULL;
    ok = ok && c && cJSON_AddStringToObject(c, "intra_fabric", p->intra_fabric) &&
         json_add_number(c, "base_us", p->coll_base_us) &&
         json_add_number(c, "intra_hop_us", p->intra_hop_us);
    cJSON *tables = ok ? cJSON_AddArrayToObject(c, "tables") : NULL;
    ok = ok && tables;
    for (int i = 0; ok && i < p->n_tables; i++) {
        const prof_coll_table_t *t = &p->tables[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(tables, e) &&
             cJSON_AddStringToObject(e, "op", prof_coll_name(t->op)) &&
             json_add_number(e, "n_ranks", t->n_ranks);
        cJSON *lines = ok ? cJSON_AddArrayToObject(e, "lines") : NULL;
        ok = ok && lines;
        for (int j = 0; ok && j < t->n_lines; j++) {
            cJSON *l = cJSON_CreateObject();
            ok = l && cJSON_AddItemToArray(lines, l) &&
                 json_add_number(l, "alpha_us", t->lines[j].alpha_us) &&
                 json_add_number(l, "busbw_gbs", t->lines[j].busbw_gbs);
        }
        ok = ok && add_source(e, t->source);
    }
    cJSON *net = ok ? cJSON_AddObjectToObject(c, "network") : NULL;
    ok = ok && net && cJSON_AddStringToObject(net, "fabric", p->net_fabric) &&
         json_add_number(net, "efficiency", p->net_efficiency) &&
         json_add_number(net, "hop_us", p->net_hop_us) &&
         json_add_number(net, "tree_bw_factor", p->tree_bw_factor) &&
         (!(p->net_gpu_gbs > 0) || json_add_number(net, "measured_gbs_per_gpu", p->net_gpu_gbs)) &&
         add_source(net, p->net_source);
    cJSON *st = ok ? cJSON_AddObjectToObject(root, "straggler") : NULL;
    ok = ok && st && json_add_number(st, "cv", p->straggler_cv) &&
         add_source(st, p->straggler_source);
    if (ok && (p->has_env || p->n_fits > 0))
        ok = add_calibration(root, p);
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int prof_save(const profile_t *p, const char *path, err_t *err)
{
    cJSON *root = prof_to_json(p);
    if (!root)
        return err_setf(err, ERR_RUNTIME, path, NULL,
                        "out of memory while formatting the profile");
    int rc = json_write_file(path, root, err);
    cJSON_Delete(root);
    return rc;
}
