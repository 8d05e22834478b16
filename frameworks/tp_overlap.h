/* tp_overlap: how Transformer Engine overlaps tensor-parallel collectives
 * with the GEMMs beside them (userbuffers), as a framework configures it.
 *
 * With sequence parallelism every column-parallel GEMM (qkv, fc1) needs
 * its input all-gathered and every row-parallel GEMM (proj, fc2) has its
 * output reduce-scattered; the backward does the reverse. Transformer
 * Engine hides each collective behind one of ten GEMMs of the layer, named
 * as TE names them (qkv_fprop, qkv_dgrad, ...), by one of three methods:
 *
 *   ring      the GEMM split into TP chunks, each chunk's peer data moved
 *             by copy engines (P2P) while the previous chunk computes; 1 SM;
 *             "aggregate" (all-gathers only): TP/2 GEMMs of two chunks each,
 *             after a first one-chunk exchange with the paired neighbour
 *             that the first GEMM waits for (Transformer Engine
 *             comm_gemm_overlap.cpp split_overlap_ag, _aggregate)
 *   pipeline  the GEMM split into `splits` chunks, each chunk's
 *             reduce-scatter run by `sms` SMs while the next computes
 *   bulk      one collective run by `sms` SMs beside one whole GEMM
 *
 * With sm_margin the GEMM is launched on the SMs the communication leaves
 * free, for its whole length; without it the two share the SMs while the
 * communication runs. A framework preset gives TE's defaults and, where
 * its recipes ship per-model settings (NeMo, Megatron-Bridge), those
 * settings keyed by GPU architecture, hidden size and TP degree.
 * PyTorch's async TP (torchtitan) is described with the same roles: ring
 * chunks moved by copy engines, and (reduce_pass) the reduce-scatter's
 * partial sums added by one more kernel after the last chunk.
 */
#ifndef SCALEPLAN_FRAMEWORKS_TP_OVERLAP_H
#define SCALEPLAN_FRAMEWORKS_TP_OVERLAP_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/error.h"
#include "common/json.h"

typedef enum {
    TPO_QKV_FPROP = 0, /* all-gather of the norm output  | qkv forward */
    TPO_QKV_DGRAD,     /* all-gather of the input        | qkv input gradient */
    TPO_QKV_WGRAD,     /* reduce-scatter of the dgrad    | qkv weight gradient */
    TPO_PROJ_FPROP,    /* reduce-scatter of the output   | proj forward */
    TPO_PROJ_DGRAD,    /* all-gather of the output grad  | proj input gradient */
    TPO_FC1_FPROP,
    TPO_FC1_DGRAD,
    TPO_FC1_WGRAD,
    TPO_FC2_FPROP,
    TPO_FC2_DGRAD,
    TPO_COUNT
} tpo_gemm_t;

typedef enum { TPO_RING = 0, TPO_PIPELINE, TPO_BULK } tpo_method_t;

typedef struct {
    tpo_method_t method;
    int sms;        /* SMs the communication kernel takes */
    bool sm_margin; /* GEMM launched on the remaining SMs */
    bool aggregate; /* ring all-gather in TP/2 steps of two chunks */
    int splits;     /* pipeline chunks (TE: 4) */
} tpo_role_t;

#define TPO_ARCH_MAX 16
#define TPO_MAX_CONFIGS 12

typedef struct {
    char architecture[TPO_ARCH_MAX]; /* gpu_t.architecture, e.g. "hopper" */
    int hidden, tp;
    tpo_role_t role[TPO_COUNT];
} tpo_config_t;

typedef struct {
    tpo_role_t def[TPO_COUNT]; /* what runs when no config matches */
    bool off_unmatched;        /* no config matches: no overlap at all (the
                                  recipe turns it on only for its models) */
    bool rowwise_gather_unfused; /* with row-scaled fp8 the all-gathers are not
                                  fused with their GEMMs (PyTorch's async TP
                                  pass matches only the reduce-scatter side):
                                  they run whole, before the GEMM */
    bool reduce_pass;          /* a reduce-scatter's partial sums are moved
                                  whole and added by one kernel after the last
                                  chunk (PyTorch's symmetric-memory async TP):
                                  a memory pass over the t partials, on the
                                  SMs and after the GEMM, that nothing hides */
    int n_configs;
    tpo_config_t configs[TPO_MAX_CONFIGS];
} tp_overlap_t;

/* TE name of a role ("qkv_fprop", ...). */
const char *tpo_name(tpo_gemm_t g);

/* Transformer Engine 1.x defaults (module/base.py initialize_ub, v1.7 to
 * v1.13): ring exchange with 1 SM for qkv/fc1 fprop and proj/fc2 dgrad,
 * pipeline with 16 SMs and 4 splits for proj/fc2 fprop, bulk with 16 SMs
 * for the qkv/fc1 dgrad and wgrad, no SM margin. */
void tpo_default(tp_overlap_t *t);

/* Read a preset's "tp_overlap" object: {"default": {role: "method sms
 * [margin]", ...}, "unmatched": "default"|"off", "reduce_pass": bool, "configs":
 * [{"architecture", "hidden", "tp", "roles": {...}}]}. Roles a config
 * leaves out take the default's. */
int tpo_from_json(const cJSON *o, const json_ctx_t *ctx, tp_overlap_t *t, err_t *err);

/* The roles for a GPU architecture, hidden size and TP degree: the
 * matching config's, else the default, or NULL (no overlap) when the
 * preset overlaps only where a config matches. */
const tpo_role_t *tpo_select(const tp_overlap_t *t, const char *architecture, int hidden, int tp);

#endif
