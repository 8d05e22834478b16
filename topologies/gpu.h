/* gpu: the GPU catalog (topologies/catalog/gpus.json).
 *
 * A gpu_t holds a GPU type's datasheet figures: dense peak throughput per
 * data type, usable memory and its bandwidth, scale-up bandwidth, SM count
 * and power. Names are lower-case catalog names ("h100-sxm"); common
 * spellings ("H100", "A100-SXM4-80GB", "NVIDIA H100 80GB HBM3") resolve
 * through each entry's aliases. Every figure's source stays in the JSON.
 */
#ifndef SCALEPLAN_TOPOLOGIES_GPU_H
#define SCALEPLAN_TOPOLOGIES_GPU_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/catalog.h"
#include "common/error.h"
#include "common/json.h"

typedef enum {
    DTYPE_FP64 = 0,
    DTYPE_FP32,
    DTYPE_TF32,
    DTYPE_BF16,
    DTYPE_FP16,
    DTYPE_FP8,
    DTYPE_FP4,
    DTYPE_COUNT
} dtype_t;

#define GPU_NAME_MAX 32

typedef struct {
    char name[GPU_NAME_MAX];  /* catalog name */
    char display[64];         /* e.g. "NVIDIA H100 SXM5 80GB" */
    char vendor[16];
    char architecture[16];
    char default_cluster[48]; /* cluster used when only --gpu is given */
    double peak_tflops[DTYPE_COUNT]; /* dense; 0 = unsupported or unlisted */
    double memory_gib;  /* usable device memory */
    double mem_bw_gbs;  /* device memory bandwidth, GB/s (1e9 B/s) */
    double l2_mib;
    int sm_count;       /* streaming multiprocessors (CUs on AMD) */
    double scaleup_gbs; /* NVLink/xGMI per GPU per direction, GB/s; 0 = PCIe */
    int pcie_gen;
    double host_link_gbs; /* GPU <-> host CPU memory, GB/s per direction (PCIe x16
                             or NVLink-C2C); from pcie_gen when the entry
                             does not give it */
    double tdp_w;
    char source[800];   /* source of the peak-throughput figures */
} gpu_t;

const char *dtype_name(dtype_t d);
/* "bf16", "fp16", "fp8", "tf32", "fp32", "fp64", "fp4" (case-insensitive). */
int dtype_parse(const char *text, dtype_t *out, err_t *err);
/* Bytes per element (fp8: 1, fp4: 0.5, tf32 stored as 4). */
double dtype_bytes(dtype_t d);

/* Load a GPU by catalog name or alias; unknown names suggest the closest. */
int gpu_load(const char *name, gpu_t *g, err_t *err);

/* The same, looked up in the parsed catalog cat (NULL: parse it now). */
int gpu_load_in(catalog_t *cat, const char *name, gpu_t *g, err_t *err);

/* Read one catalog entry (an object of gpus.json); ctx names it. */
int gpu_from_json(const cJSON *obj, const json_ctx_t *ctx, gpu_t *g,
                  err_t *err);

/* All catalog GPUs in file order. *gpus is a heap array the caller frees. */
int gpu_load_all(gpu_t **gpus, size_t *count, err_t *err);

#endif
