#include "sim/precision.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/catalog.h"
#include "common/json.h"

#define PREC_FILE "sim/catalog/precisions.json"

typedef struct {
    prec_costs_t c;
    char requires[8];
} entry_t;

static int entry_from_json(const cJSON *o, const json_ctx_t *ctx, void *out, err_t *err)
{
    entry_t *e = out;
    memset(e, 0, sizeof *e);
    char dt[8] = "";
    int rc;
    if ((rc = json_expect_object(o, ctx, err)) ||
        (rc = json_get_string(o, "gemm_dtype", ctx, JSON_REQUIRED, dt, sizeof dt, err)) ||
        (rc = json_get_string(o, "requires", ctx, JSON_REQUIRED, e->requires, sizeof e->requires,
                              err)) ||
        (rc = json_get_double(o, "cast_input", ctx, JSON_REQUIRED, 0, 64, &e->c.cast_input, err)) ||
        (rc = json_get_double(o, "cast_grad", ctx, JSON_REQUIRED, 0, 64, &e->c.cast_grad, err)) ||
        (rc = json_get_double(o, "cast_weight", ctx, JSON_REQUIRED, 0, 64, &e->c.cast_weight, err)) ||
        (rc = json_get_bool(o, "weight_cast_per_step", ctx, JSON_REQUIRED,
                            &e->c.weight_cast_per_step, err)) ||
        (rc = json_get_double(o, "rescale_grad_out", ctx, JSON_OPTIONAL, 0, 64,
                              &e->c.rescale_grad_out, err)))
        return rc;
    if (dtype_parse(dt, &e->c.gemm_dtype, err))
        return err_setf(err, ERR_INPUT, ctx->file, ctx->path, "gemm_dtype: unknown '%s'", dt);
    e->c.quantized = true;
    return ERR_OK;
}

static int load_entry(catalog_t *cat, precision_t p, entry_t *e, err_t *err)
{
    return catalog_lookup_named(cat, PREC_FILE, "precisions", layout_precision_name(p),
                                "--precision", "scaleplan catalog precisions", entry_from_json, e,
                                err);
}

int prec_costs(precision_t p, prec_costs_t *out, err_t *err)
{
    return prec_costs_in(NULL, p, out, err);
}

int prec_costs_in(catalog_t *cat, precision_t p, prec_costs_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!layout_precision_quantized(p)) {
        out->gemm_dtype = p == PRECISION_FP32 ? DTYPE_TF32
                          : p == PRECISION_FP16 ? DTYPE_FP16
                                                : DTYPE_BF16;
        return ERR_OK;
    }
    entry_t e;
    int rc = load_entry(cat, p, &e, err);
    if (!rc)
        *out = e.c;
    return rc;
}

/* Whether the GPU has what a recipe requires. */
static bool has(const gpu_t *g, const char *requires)
{
    if (strcmp(requires, "fp8") == 0)
        return g->peak_tflops[DTYPE_FP8] > 0;
    if (strcmp(requires, "fp4") == 0)
        return g->peak_tflops[DTYPE_FP4] > 0;
    if (strcmp(requires, "mx") == 0)
        /* hardware block scaling: NVIDIA Blackwell, AMD CDNA4 */
        return g->peak_tflops[DTYPE_FP8] > 0 &&
               (strcmp(g->architecture, "blackwell") == 0 || strcmp(g->architecture, "cdna4") == 0);
    return false;
}

static bool runs(catalog_t *cat, precision_t p, const gpu_t *g)
{
    if (p == PRECISION_BF16)
        return g->peak_tflops[DTYPE_BF16] > 0;
    if (p == PRECISION_FP16)
        return g->peak_tflops[DTYPE_FP16] > 0;
    if (p == PRECISION_FP32)
        return true;
    entry_t e;
    err_t ignore;
    return load_entry(cat, p, &e, &ignore) == 0 && has(g, e.requires);
}

void prec_list_for_gpu(catalog_t *cat, const gpu_t *g, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int p = 0; p < PRECISION_COUNT && n < cap; p++)
        if (runs(cat, (precision_t)p, g))
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "",
                                  layout_precision_name((precision_t)p));
}

int prec_check_gpu(catalog_t *cat, precision_t p, const gpu_t *g, err_t *err)
{
    if (runs(cat, p, g))
        return ERR_OK;
    char list[160];
    prec_list_for_gpu(cat, g, list, sizeof list);
    return err_setf(err, ERR_INPUT, NULL, "--precision", "%s cannot run %s; it runs %s", g->name,
                    layout_precision_name(p), list);
}
