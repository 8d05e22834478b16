#include "calibrate/measurements.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"

void meas_init(meas_set_t *s)
{
    memset(s, 0, sizeof *s);
    s->env.nodes = 1;
    s->env.gpus_per_node = 1;
    s->env.ranks = 1;
}

void meas_free(meas_set_t *s)
{
    if (!s)
        return;
    free(s->gemm);
    free(s->mem);
    free(s->coll);
    s->gemm = NULL;
    s->mem = NULL;
    s->coll = NULL;
    s->n_gemm = s->n_mem = 0;
    s->n_coll = 0;
}

/* Grow *arr (n elements of size) by one; NULL on OOM with *arr intact. */
static void *grow(void *arr, size_t n, size_t size)
{
    return realloc(arr, (n + 1) * size);
}

int meas_add_gemm(meas_set_t *s, const meas_gemm_t *g, err_t *err)
{
    meas_gemm_t *a = grow(s->gemm, s->n_gemm, sizeof *a);
    if (!a)
        return err_set(err, ERR_RUNTIME, "out of memory storing GEMM measurements");
    s->gemm = a;
    s->gemm[s->n_gemm++] = *g;
    return ERR_OK;
}

int meas_add_mem(meas_set_t *s, const meas_mem_t *m, err_t *err)
{
    meas_mem_t *a = grow(s->mem, s->n_mem, sizeof *a);
    if (!a)
        return err_set(err, ERR_RUNTIME, "out of memory storing memory measurements");
    s->mem = a;
    s->mem[s->n_mem++] = *m;
    return ERR_OK;
}

int meas_add_coll(meas_set_t *s, const meas_coll_t *c, err_t *err)
{
    meas_coll_t *a = grow(s->coll, (size_t)s->n_coll, sizeof *a);
    if (!a)
        return err_set(err, ERR_RUNTIME, "out of memory storing collective measurements");
    s->coll = a;
    s->coll[s->n_coll++] = *c;
    return ERR_OK;
}

void meas_now_utc(char *buf, size_t cap)
{
    time_t now = time(NULL);
    struct tm tm;
    if (cap == 0)
        return;
    buf[0] = '\0';
    if (gmtime_r(&now, &tm))
        strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ------------------------------------------------------------ writing */

static bool add_env(cJSON *root, const meas_env_t *e)
{
    cJSON *o = cJSON_AddObjectToObject(root, "env");
    return o && cJSON_AddStringToObject(o, "device", e->device) &&
           cJSON_AddStringToObject(o, "driver", e->driver) &&
           cJSON_AddStringToObject(o, "cuda_runtime", e->cuda_runtime) &&
           cJSON_AddStringToObject(o, "cublas", e->cublas) &&
           cJSON_AddStringToObject(o, "nccl", e->nccl) &&
           json_add_number(o, "sm_count", e->sm_count) &&
           json_add_number(o, "l2_bytes", e->l2_bytes) &&
           json_add_number(o, "memory_bytes", e->memory_bytes) &&
           json_add_number(o, "nodes", e->nodes) &&
           json_add_number(o, "gpus_per_node", e->gpus_per_node) &&
           json_add_number(o, "ranks", e->ranks) && cJSON_AddStringToObject(o, "date", e->date) &&
           cJSON_AddStringToObject(o, "command", e->command);
}

cJSON *meas_to_json(const meas_set_t *s)
{
    cJSON *root = cJSON_CreateObject();
    bool ok = root && cJSON_AddStringToObject(root, "format", MEAS_FORMAT) &&
              cJSON_AddStringToObject(root, "gpu", s->env.gpu) && add_env(root, &s->env);
    cJSON *l = ok ? cJSON_AddObjectToObject(root, "launch") : NULL;
    ok = ok && l && json_add_number(l, "back_to_back_us", s->launch_us) &&
         json_add_number(l, "synchronous_us", s->launch_sync_us);
    if (ok && s->sustained_s > 0) {
        cJSON *su = cJSON_AddObjectToObject(root, "gemm_sustained");
        ok = su && json_add_number(su, "seconds", s->sustained_s) &&
             json_add_number(su, "burst_tflops", s->burst_tflops) &&
             json_add_number(su, "sustained_tflops", s->sustained_tflops);
    }
    cJSON *g = ok ? cJSON_AddArrayToObject(root, "gemm") : NULL;
    ok = ok && g;
    for (size_t i = 0; ok && i < s->n_gemm; i++) {
        const meas_gemm_t *x = &s->gemm[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(g, e) &&
             cJSON_AddStringToObject(e, "dtype", dtype_name(x->dtype)) &&
             json_add_number(e, "m", x->m) && json_add_number(e, "n", x->n) &&
             json_add_number(e, "k", x->k) && json_add_number(e, "time_us", x->time_us) &&
             json_add_number(e, "tflops", x->tflops) && cJSON_AddBoolToObject(e, "table", x->table);
    }
    cJSON *m = ok ? cJSON_AddArrayToObject(root, "memory") : NULL;
    ok = ok && m;
    for (size_t i = 0; ok && i < s->n_mem; i++) {
        const meas_mem_t *x = &s->mem[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(m, e) && cJSON_AddStringToObject(e, "kernel", x->kernel) &&
             json_add_number(e, "bytes", x->bytes) && json_add_number(e, "time_us", x->time_us);
    }
    cJSON *c = ok ? cJSON_AddArrayToObject(root, "collectives") : NULL;
    ok = ok && c;
    for (int i = 0; ok && i < s->n_coll; i++) {
        const meas_coll_t *x = &s->coll[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(c, e) &&
             cJSON_AddStringToObject(e, "op", prof_coll_name(x->op)) &&
             cJSON_AddStringToObject(e, "algo", x->algo) &&
             json_add_number(e, "n_ranks", x->n_ranks) && json_add_number(e, "nodes", x->nodes) &&
             cJSON_AddStringToObject(e, "source", x->source);
        cJSON *pts = ok ? cJSON_AddArrayToObject(e, "points") : NULL;
        ok = ok && pts;
        for (int j = 0; ok && j < x->n; j++) {
            cJSON *p = cJSON_CreateObject();
            ok = p && cJSON_AddItemToArray(pts, p) && json_add_number(p, "bytes", x->bytes[j]) &&
                 json_add_number(p, "time_us", x->time_us[j]) &&
                 json_add_number(p, "busbw_gbs", x->busbw_gbs[j]);
        }
    }
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int meas_save(const meas_set_t *s, const char *path, err_t *err)
{
    cJSON *root = meas_to_json(s);
    if (!root)
        return err_setf(err, ERR_RUNTIME, path, NULL, "out of memory formatting measurements");
    int rc = json_write_file(path, root, err);
    cJSON_Delete(root);
    return rc;
}

/* ------------------------------------------------------------ reading */

static int read_env(const cJSON *root, const json_ctx_t *top, meas_env_t *e, err_t *err)
{
    const cJSON *o;
    json_ctx_t ctx = json_ctx_member(top, "env");
    int rc;
    if ((rc = json_get_object(root, "env", top, JSON_REQUIRED, &o, err)) ||
        (rc = json_get_string(o, "device", &ctx, JSON_REQUIRED, e->device, sizeof e->device,
                              err)) ||
        (rc = json_get_string(o, "driver", &ctx, JSON_OPTIONAL, e->driver, sizeof e->driver,
                              err)) ||
        (rc = json_get_string(o, "cuda_runtime", &ctx, JSON_OPTIONAL, e->cuda_runtime,
                              sizeof e->cuda_runtime, err)) ||
        (rc = json_get_string(o, "cublas", &ctx, JSON_OPTIONAL, e->cublas, sizeof e->cublas,
                              err)) ||
        (rc = json_get_string(o, "nccl", &ctx, JSON_OPTIONAL, e->nccl, sizeof e->nccl, err)) ||
        (rc = json_get_int(o, "sm_count", &ctx, JSON_OPTIONAL, 0, 100000, &e->sm_count, err)) ||
        (rc = json_get_double(o, "l2_bytes", &ctx, JSON_OPTIONAL, 0, 1e12, &e->l2_bytes, err)) ||
        (rc = json_get_double(o, "memory_bytes", &ctx, JSON_OPTIONAL, 0, 1e15, &e->memory_bytes,
                              err)) ||
        (rc = json_get_int(o, "nodes", &ctx, JSON_OPTIONAL, 1, 1 << 24, &e->nodes, err)) ||
        (rc = json_get_int(o, "gpus_per_node", &ctx, JSON_OPTIONAL, 1, 1 << 16,
                           &e->gpus_per_node, err)) ||
        (rc = json_get_int(o, "ranks", &ctx, JSON_OPTIONAL, 1, 1 << 24, &e->ranks, err)) ||
        (rc = json_get_string(o, "date", &ctx, JSON_OPTIONAL, e->date, sizeof e->date, err)) ||
        (rc = json_get_string(o, "command", &ctx, JSON_OPTIONAL, e->command, sizeof e->command,
                              err)))
        return rc;
    return ERR_OK;
}

static int read_gemm(const cJSON *root, const json_ctx_t *top, meas_set_t *s, err_t *err)
{
    const cJSON *arr;
    json_ctx_t ctx = json_ctx_member(top, "gemm");
    int rc = json_get_array(root, "gemm", top, JSON_OPTIONAL, &arr, err);
    if (rc || !arr)
        return rc;
    for (int i = 0; i < cJSON_GetArraySize(arr); i++) {
        const cJSON *e = cJSON_GetArrayItem(arr, i);
        json_ctx_t ic = json_ctx_index(&ctx, i);
        meas_gemm_t g;
        memset(&g, 0, sizeof g);
        char dt[8];
        if ((rc = json_expect_object(e, &ic, err)) ||
            (rc = json_get_string(e, "dtype", &ic, JSON_REQUIRED, dt, sizeof dt, err)) ||
            (rc = json_get_double(e, "m", &ic, JSON_REQUIRED, 1, 1e9, &g.m, err)) ||
            (rc = json_get_double(e, "n", &ic, JSON_REQUIRED, 1, 1e9, &g.n, err)) ||
            (rc = json_get_double(e, "k", &ic, JSON_REQUIRED, 1, 1e9, &g.k, err)) ||
            (rc = json_get_double(e, "time_us", &ic, JSON_REQUIRED, 1e-6, 1e12, &g.time_us,
                                  err)) ||
            (rc = json_get_bool(e, "table", &ic, JSON_OPTIONAL, &g.table, err)))
            return rc;
        if ((rc = dtype_parse(dt, &g.dtype, err))) {
            char where[JSON_PATH_MAX + 8];
            snprintf(where, sizeof where, "%s.dtype", ic.path);
            err_prefix(err, where);
            return err_prefix(err, ic.file);
        }
        g.tflops = 2 * g.m * g.n * g.k / (g.time_us * 1e-6) / 1e12;
        if ((rc = meas_add_gemm(s, &g, err)))
            return rc;
    }
    return ERR_OK;
}

static int read_mem(const cJSON *root, const json_ctx_t *top, meas_set_t *s, err_t *err)
{
    const cJSON *arr;
    json_ctx_t ctx = json_ctx_member(top, "memory");
    int rc = json_get_array(root, "memory", top, JSON_OPTIONAL, &arr, err);
    if (rc || !arr)
        return rc;
    for (int i = 0; i < cJSON_GetArraySize(arr); i++) {
        const cJSON *e = cJSON_GetArrayItem(arr, i);
        json_ctx_t ic = json_ctx_index(&ctx, i);
        meas_mem_t m;
        memset(&m, 0, sizeof m);
        if ((rc = json_expect_object(e, &ic, err)) ||
            (rc = json_get_string(e, "kernel", &ic, JSON_REQUIRED, m.kernel, sizeof m.kernel,
                                  err)) ||
            (rc = json_get_double(e, "bytes", &ic, JSON_REQUIRED, 1, 1e15, &m.bytes, err)) ||
            (rc = json_get_double(e, "time_us", &ic, JSON_REQUIRED, 1e-6, 1e12, &m.time_us, err)) ||
            (rc = meas_add_mem(s, &m, err)))
            return rc;
    }
    return ERR_OK;
}

static int read_coll_one(const cJSON *e, const json_ctx_t *ic, meas_coll_t *c, err_t *err)
{
    char op[24];
    const cJSON *pts;
    int rc;
    memset(c, 0, sizeof *c);
    snprintf(c->algo, sizeof c->algo, "default");
    c->nodes = 1;
    if ((rc = json_expect_object(e, ic, err)) ||
        (rc = json_get_string(e, "op", ic, JSON_REQUIRED, op, sizeof op, err)) ||
        (rc = json_get_string(e, "algo", ic, JSON_OPTIONAL, c->algo, sizeof c->algo, err)) ||
        (rc = json_get_int(e, "n_ranks", ic, JSON_REQUIRED, 1, 1 << 24, &c->n_ranks, err)) ||
        (rc = json_get_int(e, "nodes", ic, JSON_OPTIONAL, 1, 1 << 24, &c->nodes, err)) ||
        (rc = json_get_string(e, "source", ic, JSON_OPTIONAL, c->source, sizeof c->source,
                              err)) ||
        (rc = json_get_array(e, "points", ic, JSON_REQUIRED, &pts, err)))
        return rc;
    if ((rc = prof_coll_parse(op, &c->op, err))) {
        char where[JSON_PATH_MAX + 8];
        snprintf(where, sizeof where, "%s.op", ic->path);
        err_prefix(err, where);
        return err_prefix(err, ic->file);
    }
    if (c->nodes > c->n_ranks)
        return err_setf(err, ERR_INPUT, ic->file, ic->path,
                        "nodes (%d) cannot exceed n_ranks (%d)", c->nodes, c->n_ranks);
    int n = cJSON_GetArraySize(pts);
    json_ctx_t pctx = json_ctx_member(ic, "points");
    if (n < 1 || n > MEAS_MAX_COLL_POINTS)
        return err_setf(err, ERR_INPUT, ic->file, pctx.path, "must hold 1 to %d sizes (got %d)",
                        MEAS_MAX_COLL_POINTS, n);
    for (int j = 0; j < n; j++) {
        const cJSON *p = cJSON_GetArrayItem(pts, j);
        json_ctx_t pc = json_ctx_index(&pctx, j);
        if ((rc = json_expect_object(p, &pc, err)) ||
            (rc = json_get_double(p, "bytes", &pc, JSON_REQUIRED, 1, 1e18, &c->bytes[j], err)) ||
            (rc = json_get_double(p, "time_us", &pc, JSON_REQUIRED, 1e-6, 1e12, &c->time_us[j],
                                  err)))
            return rc;
        c->busbw_gbs[j] = c->bytes[j] * prof_bus_factor(c->op, c->n_ranks) / c->time_us[j] / 1e3;
        if ((rc = json_get_double(p, "busbw_gbs", &pc, JSON_OPTIONAL, 0, 1e9, &c->busbw_gbs[j],
                                  err)))
            return rc;
        if (j > 0 && !(c->bytes[j] > c->bytes[j - 1]))
            return err_setf(err, ERR_INPUT, pc.file, pc.path,
                            "bytes: sizes must increase (%.0f after %.0f)", c->bytes[j],
                            c->bytes[j - 1]);
    }
    c->n = n;
    return ERR_OK;
}

static int read_coll(const cJSON *root, const json_ctx_t *top, meas_set_t *s, err_t *err)
{
    const cJSON *arr;
    json_ctx_t ctx = json_ctx_member(top, "collectives");
    int rc = json_get_array(root, "collectives", top, JSON_OPTIONAL, &arr, err);
    if (rc || !arr)
        return rc;
    for (int i = 0; i < cJSON_GetArraySize(arr); i++) {
        json_ctx_t ic = json_ctx_index(&ctx, i);
        meas_coll_t *c = malloc(sizeof *c); /* ~4 KB: off the stack */
        if (!c)
            return err_set(err, ERR_RUNTIME, "out of memory reading %s", ctx.file);
        rc = read_coll_one(cJSON_GetArrayItem(arr, i), &ic, c, err);
        if (!rc)
            rc = meas_add_coll(s, c, err);
        free(c);
        if (rc)
            return rc;
    }
    return ERR_OK;
}

int meas_from_json(const cJSON *root, const char *file, meas_set_t *s, err_t *err)
{
    meas_init(s);
    json_ctx_t top = json_ctx_root(file);
    char format[40] = "";
    const cJSON *l, *su;
    int rc;
    if ((rc = json_expect_object(root, &top, err)) ||
        (rc = json_get_string(root, "format", &top, JSON_REQUIRED, format, sizeof format, err)))
        return rc;
    if (strcmp(format, MEAS_FORMAT) != 0)
        return err_setf(err, ERR_INPUT, file, "format", "expected \"%s\" (got \"%s\")",
                        MEAS_FORMAT, format);
    json_ctx_t lctx = json_ctx_member(&top, "launch");
    json_ctx_t sctx = json_ctx_member(&top, "gemm_sustained");
    if ((rc = json_get_string(root, "gpu", &top, JSON_OPTIONAL, s->env.gpu, sizeof s->env.gpu,
                              err)) ||
        (rc = read_env(root, &top, &s->env, err)) ||
        (rc = json_get_object(root, "launch", &top, JSON_OPTIONAL, &l, err)))
        goto fail;
    if (l && ((rc = json_get_double(l, "back_to_back_us", &lctx, JSON_REQUIRED, 0, 1e6,
                                    &s->launch_us, err)) ||
              (rc = json_get_double(l, "synchronous_us", &lctx, JSON_OPTIONAL, 0, 1e6,
                                    &s->launch_sync_us, err))))
        goto fail;
    if ((rc = json_get_object(root, "gemm_sustained", &top, JSON_OPTIONAL, &su, err)))
        goto fail;
    if (su && ((rc = json_get_double(su, "seconds", &sctx, JSON_REQUIRED, 1e-3, 1e5,
                                     &s->sustained_s, err)) ||
               (rc = json_get_double(su, "burst_tflops", &sctx, JSON_REQUIRED, 1e-6, 1e6,
                                     &s->burst_tflops, err)) ||
               (rc = json_get_double(su, "sustained_tflops", &sctx, JSON_REQUIRED, 1e-6, 1e6,
                                     &s->sustained_tflops, err))))
        goto fail;
    if ((rc = read_gemm(root, &top, s, err)) || (rc = read_mem(root, &top, s, err)) ||
        (rc = read_coll(root, &top, s, err)))
        goto fail;
    return ERR_OK;
fail:
    meas_free(s);
    return rc;
}

int meas_load(const char *path, meas_set_t *s, err_t *err)
{
    cJSON *root = NULL;
    meas_init(s);
    json_ctx_t top = json_ctx_root(path);
    int rc = json_parse_file(path, &root, err);
    if (rc)
        return rc;
    if (!(rc = json_check_unique_keys(root, &top, err)))
        rc = meas_from_json(root, path, s, err);
    cJSON_Delete(root);
    return rc;
}
