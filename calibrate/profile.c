#include "calibrate/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/catalog.h"
#include "common/json.h"

#define PROFILE_DIR "calibrate/profiles"

static const char *coll_names[COLL_OP_COUNT] = {
    "all_reduce", "all_gather", "reduce_scatter",
    "broadcast",  "send_recv",  "all_to_all"};

const char *prof_coll_name(coll_op_t op)
{
    return op < COLL_OP_COUNT ? coll_names[op] : "?";
}

int prof_coll_parse(const char *text, coll_op_t *op, err_t *err)
{
    for (int i = 0; i < COLL_OP_COUNT; i++)
        if (text && strcasecmp(text, coll_names[i]) == 0) {
            *op = (coll_op_t)i;
            return ERR_OK;
        }
    /* nccl-tests binary names */
    static const struct {
        const char *alias;
        coll_op_t op;
    } aliases[] = {{"allreduce", COLL_ALL_REDUCE},   {"allgather", COLL_ALL_GATHER},
                   {"reducescatter", COLL_REDUCE_SCATTER}, {"sendrecv", COLL_SEND_RECV},
                   {"alltoall", COLL_ALL_TO_ALL},   {"bcast", COLL_BROADCAST}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (text && strcasecmp(text, aliases[i].alias) == 0) {
            *op = aliases[i].op;
            return ERR_OK;
        }
    return err_setf(err, ERR_INPUT, NULL, "op",
                    "unknown collective '%s' (all_reduce, all_gather, "
                    "reduce_scatter, broadcast, send_recv, all_to_all)",
                    text ? text : "");
}

double prof_bus_factor(coll_op_t op, int n)
{
    if (n <= 1)
        return 0;
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

/* Ring steps a collective takes: the latency term of a ring. */
static double ring_steps(coll_op_t op, int n)
{
    switch (op) {
    case COLL_ALL_REDUCE:
        return 2.0 * (n - 1);
    case COLL_SEND_RECV:
        return 1;
    default:
        return n - 1;
    }
}

void prof_free(profile_t *p)
{
    if (!p)
        return;
    free(p->gemm_points);
    p->gemm_points = NULL;
    p->n_gemm_points = 0;
    free(p->fits);
    p->fits = NULL;
    p->n_fits = 0;
}

int prof_copy(profile_t *dst, const profile_t *src, err_t *err)
{
    *dst = *src;
    dst->gemm_points = NULL;
    dst->fits = NULL;
    if (src->n_gemm_points) {
        dst->gemm_points = malloc(src->n_gemm_points * sizeof *dst->gemm_points);
        if (!dst->gemm_points) {
            dst->n_gemm_points = 0;
            dst->n_fits = 0;
            return err_set(err, ERR_RUNTIME, "out of memory copying a profile");
        }
        memcpy(dst->gemm_points, src->gemm_points,
               src->n_gemm_points * sizeof *dst->gemm_points);
    }
    if (src->n_fits > 0) {
        dst->fits = malloc((size_t)src->n_fits * sizeof *dst->fits);
        if (!dst->fits) {
            dst->n_fits = 0;
            prof_free(dst);
            return err_set(err, ERR_RUNTIME, "out of memory copying a profile");
        }
        memcpy(dst->fits, src->fits, (size_t)src->n_fits * sizeof *dst->fits);
    }
    return ERR_OK;
}

const prof_fit_t *prof_find_fit(const profile_t *p, const char *name)
{
    for (int i = 0; i < p->n_fits; i++)
        if (strcmp(p->fits[i].name, name) == 0)
            return &p->fits[i];
    return NULL;
}

int prof_add_fit(profile_t *p, const prof_fit_t *fit, err_t *err)
{
    for (int i = 0; i < p->n_fits; i++)
        if (strcmp(p->fits[i].name, fit->name) == 0) {
            p->fits[i] = *fit;
            return ERR_OK;
        }
    prof_fit_t *grown = realloc(p->fits, ((size_t)p->n_fits + 1) * sizeof *grown);
    if (!grown)
        return err_set(err, ERR_RUNTIME, "out of memory adding fit '%s'", fit->name);
    p->fits = grown;
    p->fits[p->n_fits++] = *fit;
    return ERR_OK;
}

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
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "source");
        if (!cJSON_IsString(s) || !s->valuestring[0])
            return err_setf(err, ERR_INPUT, ctx.file, ectx.path,
                            "source: missing (every constant needs one)");
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
        (rc = read_source(m, &mctx, p->mem_source, err)))
        return rc;
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

int prof_from_json(const cJSON *root, const char *file, profile_t *p, err_t *err)
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
    if ((rc = gpu_load(p->gpu, &gpu, err))) {
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
    cJSON *root = NULL;
    memset(p, 0, sizeof *p);
    int rc = json_parse_file(path, &root, err);
    if (rc)
        return rc;
    rc = prof_from_json(root, path, p, err);
    cJSON_Delete(root);
    return rc;
}

int prof_load_default(const char *gpu_name, profile_t *p, err_t *err)
{
    gpu_t gpu;
    memset(p, 0, sizeof *p);
    int rc = gpu_load(gpu_name, &gpu, err);
    if (rc)
        return rc;
    char rel[128], origin[CATALOG_ORIGIN_MAX];
    snprintf(rel, sizeof rel, PROFILE_DIR "/%s.json", gpu.name);
    cJSON *root = NULL;
    if ((rc = catalog_parse(rel, &root, origin, sizeof origin, err)))
        return rc;
    rc = prof_from_json(root, origin, p, err);
    cJSON_Delete(root);
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
             add_source(e, p->gemm_source);
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
    cJSON *m = ok ? cJSON_AddObjectToObject(root, "memory") : NULL;
    ok = ok && m && json_add_number(m, "bw_gbs", p->mem_bw_peak_gbs) &&
         json_add_number(m, "bw_efficiency", p->mem_bw_eff) &&
         json_add_number(m, "kernel_launch_us", p->kernel_launch_us) &&
         json_add_number(m, "reserved_gib", p->reserved_gib) &&
         json_add_number(m, "fragmentation", p->fragmentation) &&
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

/* ------------------------------------------------------------ GEMMs */

static dtype_t effective_dtype(const profile_t *p, dtype_t d)
{
    if (d < DTYPE_COUNT && p->peak_tflops[d] > 0 && p->gemm_max_eff[d] > 0)
        return d;
    return p->gemm_max_eff[DTYPE_BF16] > 0 ? DTYPE_BF16 : DTYPE_FP16;
}

double prof_gemm_model_eff(const profile_t *p, dtype_t dtype, double m,
                           double n, double k, double batch)
{
    dtype_t d = effective_dtype(p, dtype);
    double tm = p->tile_m, tn = p->tile_n, sms = p->sm_count > 0 ? p->sm_count : 1;
    /* Wave quantization: output tiles are spread over the SMs in waves; a
     * partly filled last wave (and partly filled edge tiles) leave SMs idle.
     * Stream-K style schedules recover part of it (wave_penalty < 1). */
    double tiles = ceil(m / tm) * ceil(n / tn) * batch;
    double waves = ceil(tiles / sms);
    double util = (m * n * batch) / (waves * sms * tm * tn);
    if (util > 1)
        util = 1;
    double util_soft = 1 - p->wave_penalty * (1 - util);
    /* Each tile's main loop over K amortises a fixed prologue/epilogue. */
    double k_eff = k / (k + p->k_half);
    return p->gemm_max_eff[d] * util_soft * k_eff;
}

/* Correction from measured points near (m, n, k): the geometric mean of
 * measured/model over neighbours within a factor 4 in every dimension,
 * weighted by closeness in log space. 1 when none is near. */
static double table_correction(const profile_t *p, dtype_t d, double m,
                               double n, double k)
{
    double wsum = 0, lsum = 0;
    const double near = log(4.0);
    for (size_t i = 0; i < p->n_gemm_points; i++) {
        const prof_gemm_point_t *pt = &p->gemm_points[i];
        if (pt->dtype != d)
            continue;
        double dm = fabs(log(m / pt->m)), dn = fabs(log(n / pt->n)),
               dk = fabs(log(k / pt->k));
        if (dm > near || dn > near || dk > near)
            continue;
        double model = p->peak_tflops[d] * p->sustained_factor *
                       prof_gemm_model_eff(p, d, pt->m, pt->n, pt->k, 1);
        if (!(model > 0))
            continue;
        double w = 1.0 / (dm + dn + dk + 0.02);
        wsum += w;
        lsum += w * log(pt->tflops / model);
    }
    return wsum > 0 ? exp(lsum / wsum) : 1.0;
}

double prof_gemm_time(const profile_t *p, dtype_t dtype, double m, double n,
                      double k, double batch)
{
    if (!(m > 0 && n > 0 && k > 0 && batch > 0))
        return 0;
    dtype_t d = effective_dtype(p, dtype);
    /* The achieved share of peak: model efficiency, sustained factor and
     * the correction from measurements nearby; never above the peak. */
    double achieved = prof_gemm_model_eff(p, d, m, n, k, batch) * p->sustained_factor;
    if (p->n_gemm_points)
        achieved *= table_correction(p, d, m, n, k);
    if (achieved > 1)
        achieved = 1;
    double flops = 2 * m * n * k * batch;
    double t_compute = flops / (p->peak_tflops[d] * 1e12 * achieved);
    /* Operands in the GEMM dtype, output in 16 bits. */
    double bytes = ((m * k + k * n) * dtype_bytes(d) + m * n * 2) * batch;
    double t_memory = bytes / (p->mem_bw_peak_gbs * 1e9 * p->mem_bw_eff);
    return p->gemm_launch_us * 1e-6 + (t_compute > t_memory ? t_compute : t_memory);
}

double prof_attn_time(const profile_t *p, dtype_t dtype, double flops,
                      bool backward)
{
    if (!(flops > 0))
        return 0;
    dtype_t d = effective_dtype(p, dtype);
    double eff = backward ? p->attn_bwd_eff : p->attn_fwd_eff;
    return p->kernel_launch_us * 1e-6 +
           flops / (p->peak_tflops[d] * 1e12 * eff * p->sustained_factor);
}

double prof_mem_time(const profile_t *p, double bytes)
{
    if (!(bytes > 0))
        return 0;
    return p->kernel_launch_us * 1e-6 + bytes / (p->mem_bw_peak_gbs * 1e9 * p->mem_bw_eff);
}

/* ------------------------------------------------------------ collectives */

/* The table for op measured at the largest group size not above n (or one
 * for any size). NULL when the profile has none. */
static const prof_coll_table_t *find_table(const profile_t *p, coll_op_t op, int n)
{
    const prof_coll_table_t *best = NULL;
    for (int i = 0; i < p->n_tables; i++) {
        const prof_coll_table_t *t = &p->tables[i];
        if (t->op != op || t->n_ranks > n)
            continue;
        if (!best || t->n_ranks > best->n_ranks)
            best = t;
    }
    return best;
}

static double lines_time(const prof_coll_table_t *t, double bus_bytes)
{
    double best = INFINITY;
    for (int i = 0; i < t->n_lines; i++) {
        double v = t->lines[i].alpha_us * 1e-6 + bus_bytes / (t->lines[i].busbw_gbs * 1e9);
        if (v < best)
            best = v;
    }
    return best;
}

/* Bus bandwidth inside a node at large messages, GB/s. */
static double intra_large_busbw(const profile_t *p, coll_op_t op, int n,
                                const fabric_t *intra, bool measured)
{
    if (measured) {
        const prof_coll_table_t *t = find_table(p, op, n);
        if (!t)
            t = find_table(p, COLL_ALL_REDUCE, n);
        if (t) {
            double best = 0;
            for (int i = 0; i < t->n_lines; i++)
                if (t->lines[i].busbw_gbs > best)
                    best = t->lines[i].busbw_gbs;
            return best;
        }
    }
    return intra->bw_gbs * intra->efficiency;
}

static double intra_time(const profile_t *p, coll_op_t op, const coll_span_t *s,
                         double bytes, bool measured)
{
    double bus = prof_bus_factor(op, s->n_ranks) * bytes;
    const prof_coll_table_t *t = measured ? find_table(p, op, s->n_ranks) : NULL;
    if (t)
        return lines_time(t, bus);
    double alpha = p->coll_base_us + ring_steps(op, s->n_ranks) * p->intra_hop_us;
    double bw = intra_large_busbw(p, op, s->n_ranks, s->intra, measured);
    return alpha * 1e-6 + bus / (bw * 1e9);
}

static double inter_time(const profile_t *p, coll_op_t op, const coll_span_t *s,
                         double bytes, bool intra_measured)
{
    int n = s->n_ranks, r = s->ranks_per_node > 0 ? s->ranks_per_node : 1;
    int N = s->nodes;
    bool net_measured = s->inter && strcmp(p->net_fabric, s->inter->name) == 0 &&
                        p->net_efficiency > 0;
    double eff = net_measured ? p->net_efficiency : (s->inter ? s->inter->efficiency : 0.9);
    double taper = s->taper >= 1 ? s->taper : 1;
    double per_gpu = s->nic_gbs_per_gpu * eff / taper; /* GB/s each rank can push out */
    double bus = prof_bus_factor(op, n) * bytes;
    double base = p->coll_base_us * 1e-6, hop = p->net_hop_us * 1e-6;
    double ihop = p->intra_hop_us * 1e-6;
    if (op == COLL_SEND_RECV)
        return base + hop + bytes / (per_gpu * 1e9);
    if (op == COLL_ALL_TO_ALL) {
        /* Of each rank's buffer, the share bound for other nodes crosses
         * its NIC; the rest moves over the node's fabric meanwhile. */
        double off_node = bytes * (double)(n - r) / n;
        return base + (N - 1) * hop + off_node / (per_gpu * 1e9);
    }
    /* Ring over the nodes: one ring per rail, r rails used per node; the
     * slowest link is either the NICs or the node's own fabric. */
    double bw_ring = r * per_gpu;
    double bw_node = intra_large_busbw(p, op, r > 1 ? r : 2, s->intra, intra_measured);
    if (r > 1 && bw_node < bw_ring)
        bw_ring = bw_node;
    double t_ring = base + ring_steps(op, n) * hop + bus / (bw_ring * 1e9);
    double best = t_ring;
    double depth = ceil(log2((double)N));
    if (op == COLL_ALL_REDUCE) {
        /* NCCL's double binary tree across nodes, chains inside them. */
        double t_tree = base + 2 * (depth * hop + (r - 1) * ihop) +
                        bus / (bw_ring * p->tree_bw_factor * 1e9);
        if (t_tree < best)
            best = t_tree;
    } else if ((op == COLL_ALL_GATHER || op == COLL_REDUCE_SCATTER) && r == 1) {
        /* NCCL's PAT algorithm (one rank per node): logarithmic latency. */
        double t_pat = base + depth * hop + bus / (bw_ring * p->tree_bw_factor * 1e9);
        if (t_pat < best)
            best = t_pat;
    }
    return best;
}

double prof_coll_time(const profile_t *p, coll_op_t op, const coll_span_t *s,
                      double bytes)
{
    if (!(bytes > 0) || s->n_ranks <= 1)
        return 0;
    bool measured = s->intra && strcmp(p->intra_fabric, s->intra->name) == 0;
    if (s->nodes <= 1)
        return intra_time(p, op, s, bytes, measured);
    return inter_time(p, op, s, bytes, measured);
}
