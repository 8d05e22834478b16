#include "topologies/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/catalog.h"

#define GPU_FILE "topologies/catalog/gpus.json"

static const char *dtype_names[DTYPE_COUNT] = {"fp64", "fp32", "tf32", "bf16",
                                               "fp16", "fp8",  "fp4"};

const char *dtype_name(dtype_t d)
{
    return d < DTYPE_COUNT ? dtype_names[d] : "?";
}

int dtype_parse(const char *text, dtype_t *out, err_t *err)
{
    for (int i = 0; i < DTYPE_COUNT; i++)
        if (text && strcasecmp(text, dtype_names[i]) == 0) {
            *out = (dtype_t)i;
            return ERR_OK;
        }
    return err_setf(err, ERR_INPUT, NULL, "dtype",
                    "unknown data type '%s' (use bf16, fp16, fp8, tf32, fp32, "
                    "fp64 or fp4)",
                    text ? text : "");
}

double dtype_bytes(dtype_t d)
{
    static const double bytes[DTYPE_COUNT] = {8, 4, 4, 2, 2, 1, 0.5};
    return d < DTYPE_COUNT ? bytes[d] : 0;
}

int gpu_from_json(const cJSON *obj, const json_ctx_t *ctx, gpu_t *g, err_t *err)
{
    memset(g, 0, sizeof *g);
    int rc;
    if ((rc = json_expect_object(obj, ctx, err)) ||
        (rc = json_get_string(obj, "name", ctx, JSON_REQUIRED, g->name,
                              sizeof g->name, err)) ||
        (rc = json_get_string(obj, "display_name", ctx, JSON_OPTIONAL,
                              g->display, sizeof g->display, err)) ||
        (rc = json_get_string(obj, "vendor", ctx, JSON_OPTIONAL, g->vendor,
                              sizeof g->vendor, err)) ||
        (rc = json_get_string(obj, "architecture", ctx, JSON_OPTIONAL,
                              g->architecture, sizeof g->architecture, err)) ||
        (rc = json_get_string(obj, "default_cluster", ctx, JSON_REQUIRED,
                              g->default_cluster, sizeof g->default_cluster,
                              err)) ||
        (rc = json_get_int(obj, "sm_count", ctx, JSON_REQUIRED, 1, 100000,
                           &g->sm_count, err)))
        return rc;
    if (!g->display[0])
        snprintf(g->display, sizeof g->display, "%s", g->name);

    const cJSON *peak, *mem, *link, *power;
    json_ctx_t c_peak = json_ctx_member(ctx, "peak_tflops");
    json_ctx_t c_mem = json_ctx_member(ctx, "memory");
    json_ctx_t c_link = json_ctx_member(ctx, "interconnect");
    json_ctx_t c_pow = json_ctx_member(ctx, "power");
    if ((rc = json_get_object(obj, "peak_tflops", ctx, JSON_REQUIRED, &peak, err)) ||
        (rc = json_get_object(obj, "memory", ctx, JSON_REQUIRED, &mem, err)) ||
        (rc = json_get_object(obj, "interconnect", ctx, JSON_REQUIRED, &link, err)) ||
        (rc = json_get_object(obj, "power", ctx, JSON_REQUIRED, &power, err)))
        return rc;
    for (int d = 0; d < DTYPE_COUNT; d++)
        if ((rc = json_get_double(peak, dtype_names[d], &c_peak, JSON_OPTIONAL,
                                  0, 1e6, &g->peak_tflops[d], err)))
            return rc;
    if (!(g->peak_tflops[DTYPE_BF16] > 0 || g->peak_tflops[DTYPE_FP16] > 0))
        return err_setf(err, ERR_INPUT, ctx->file, c_peak.path,
                        "needs a positive bf16 or fp16 peak");
    if ((rc = json_get_string(peak, "source", &c_peak, JSON_REQUIRED, g->source,
                              sizeof g->source, err)) ||
        (rc = json_get_double(mem, "capacity_gib", &c_mem, JSON_REQUIRED, 0.1,
                              1e6, &g->memory_gib, err)) ||
        (rc = json_get_double(mem, "bw_gbs", &c_mem, JSON_REQUIRED, 1, 1e7,
                              &g->mem_bw_gbs, err)) ||
        (rc = json_get_double(mem, "l2_mib", &c_mem, JSON_OPTIONAL, 0, 1e6,
                              &g->l2_mib, err)) ||
        (rc = json_get_double(link, "scaleup_gbs", &c_link, JSON_REQUIRED, 0,
                              1e6, &g->scaleup_gbs, err)) ||
        (rc = json_get_int(link, "pcie_gen", &c_link, JSON_OPTIONAL, 1, 10,
                           &g->pcie_gen, err)) ||
        (rc = json_get_double(link, "host_link_gbs", &c_link, JSON_OPTIONAL, 0.1, 1e5,
                              &g->host_link_gbs, err)) ||
        (rc = json_get_double(power, "tdp_w", &c_pow, JSON_REQUIRED, 1, 1e5,
                              &g->tdp_w, err)))
        return rc;
    if (g->host_link_gbs <= 0) {
        /* A x16 link of the GPU's PCIe generation: 128b/130b lanes at 8, 16,
         * 32 GT/s for gen 3, 4, 5 (PCI-SIG base specifications), i.e. 15.75,
         * 31.5, 63 GB/s per direction, doubling per generation. */
        int gen = g->pcie_gen > 0 ? g->pcie_gen : 4;
        g->host_link_gbs = gen >= 3 ? 15.75 * (double)(1 << (gen - 3)) : 8.0 / (3 - gen + 1);
    }
    /* Every group of figures must say where it comes from. */
    const cJSON *groups[] = {mem, link, power};
    const json_ctx_t *ctxs[] = {&c_mem, &c_link, &c_pow};
    for (int i = 0; i < 3; i++) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(groups[i], "source");
        if (!cJSON_IsString(s) || !s->valuestring[0])
            return err_setf(err, ERR_INPUT, ctx->file, ctxs[i]->path,
                            "source: missing (every catalog figure needs one)");
    }
    return ERR_OK;
}

/* Adapter with the catalog parser signature. */
static int parse_entry(const cJSON *obj, const json_ctx_t *ctx, void *out,
                       err_t *err)
{
    return gpu_from_json(obj, ctx, out, err);
}

int gpu_load(const char *name, gpu_t *out, err_t *err)
{
    return gpu_load_in(NULL, name, out, err);
}

int gpu_load_in(catalog_t *cat, const char *name, gpu_t *out, err_t *err)
{
    return catalog_lookup_named(cat, GPU_FILE, "gpus", name, "--gpu", "scaleplan catalog gpus",
                                parse_entry, out, err);
}

int gpu_load_all(gpu_t **list, size_t *count, err_t *err)
{
    return catalog_load_table(GPU_FILE, "gpus", sizeof(**list),
                              parse_entry, (void **)list, count, err);
}
