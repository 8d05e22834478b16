/* profile: the cost model of one GPU type and its network.
 *
 * A profile_t answers three questions for the simulator:
 *   prof_gemm_time  how long a GEMM of shape M x N x K (batched) takes,
 *   prof_mem_time   how long a memory-bound kernel moving B bytes takes,
 *   prof_coll_time  how long a collective of B bytes takes on a group that
 *                   spans given nodes and links.
 * GEMMs follow a small physical model (peak x best efficiency, wave
 * quantization over the SMs, a K-dependent main-loop efficiency, a memory
 * roofline and a launch overhead) corrected by measured points when the
 * profile carries them. Collectives follow NCCL's structure: intra-node
 * times come from measured alpha-beta lines (the fastest line wins, as NCCL
 * picks the fastest protocol), multi-node times from ring and tree models
 * over the rails, whichever is faster.
 *
 * Profiles are JSON (format "scaleplan-profile/1"). One default per catalog
 * GPU ships in profile/catalog/, built from datasheets and published
 * measurements with each constant's source; `scaleplan calibrate` writes
 * measured ones (calibrate/ produces profiles, sim/ reads them; both sit on
 * this module). JSON parsing and writing are declared in profile_json.h,
 * so that readers of this header do not depend on a JSON library. Figures the profile does not set (peak throughput, SM
 * count, memory bandwidth) come from the GPU catalog.
 */
#ifndef SCALEPLAN_PROFILE_PROFILE_H
#define SCALEPLAN_PROFILE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/catalog.h"
#include "common/error.h"
#include "topologies/fabric.h"
#include "topologies/gpu.h"

typedef enum {
    COLL_ALL_REDUCE = 0,
    COLL_ALL_GATHER,
    COLL_REDUCE_SCATTER,
    COLL_BROADCAST,
    COLL_SEND_RECV,
    COLL_ALL_TO_ALL,
    COLL_OP_COUNT
} coll_op_t;

#define PROF_FORMAT "scaleplan-profile/1"
#define PROF_MAX_TABLES 48
#define PROF_MAX_LINES 8
#define PROF_SOURCE_MAX 1024

/* One protocol regime: time = alpha + bus_bytes / busbw. */
typedef struct {
    double alpha_us;
    double busbw_gbs;
} prof_line_t;

/* Intra-node measurements of one collective at one group size. */
typedef struct {
    coll_op_t op;
    int n_ranks; /* group size measured; 0 = any size */
    int n_lines;
    prof_line_t lines[PROF_MAX_LINES];
    char source[PROF_SOURCE_MAX];
} prof_coll_table_t;

/* A fused attention kernel's efficiency (a fraction of the dtype's dense
 * peak) as measured: at long sequences and head dimension 128 forward
 * (without and with the causal mask) and backward, and how it falls at
 * shorter key lengths s and smaller head dimensions d:
 *     eff = plateau x s / (s + s_half) x f(d),
 *     f(d) = d / (d + d_half) x (128 + d_half) / 128 for d < 128, else 1.
 * Fitted to the kernels' published benchmark tables (each profile's
 * source says which). */
#define PROF_MAX_ATTN_KERNELS 8

typedef struct {
    char name[16];          /* "cudnn", "flash2", "flash3", "triton" */
    double fwd_full, fwd_causal, bwd; /* plateau efficiencies */
    double s_half_full, s_half_causal, s_half_bwd; /* keys per query row at half the plateau */
    double d_half;
    double max_keys;        /* the longest key length its figures were
                               measured at (0: the source does not say);
                               longer ones take the fitted plateau, said */
    char source[PROF_SOURCE_MAX];
} prof_attn_kernel_t;

/* One measured GEMM. */
typedef struct {
    dtype_t dtype;
    double m, n, k; /* C[m x n] = A[m x k] B[k x n] */
    double tflops;  /* achieved */
} prof_gemm_point_t;

/* What a calibration fitted, for `scaleplan calibrate --show` and for
 * judging a measured profile: one record per fit (the GEMM model, memory
 * kernels, each collective table). R^2 is computed on the logarithm of the
 * measured quantity (time or throughput), so it does not depend on scale;
 * errors are relative (predicted / measured - 1). */
#define PROF_MAX_PARAMS 12
#define PROF_FIT_NAME_MAX 48
#define PROF_FIT_MODEL_MAX 200

/* One size regime of an alpha-beta collective fit. */
typedef struct {
    double min_bytes, max_bytes; /* nccl-tests sizes the regime covers */
    int n_points;
    double alpha_us, busbw_gbs;  /* the profile line fitted to them */
    double worst_rel_err;        /* over the regime's points */
    double pi95_rel;             /* widest 95% prediction interval, relative */
} prof_regime_t;

typedef struct {
    char name[PROF_FIT_NAME_MAX];   /* "gemm", "memory", "all_reduce/8/default" */
    char model[PROF_FIT_MODEL_MAX]; /* what was fitted to what, and how */
    int n_points;
    double r2;            /* on log scale; 1 = perfect */
    double worst_rel_err; /* max |predicted/measured - 1| over the points */
    double pi95_rel;      /* widest half-width of the 95% prediction
                             interval over the points, relative to the
                             prediction */
    int n_params;
    char param_names[PROF_MAX_PARAMS][24];
    double params[PROF_MAX_PARAMS];
    double param_se[PROF_MAX_PARAMS]; /* standard errors; 0 = not estimated */
    int n_regimes;
    prof_regime_t regimes[PROF_MAX_LINES];
} prof_fit_t;

/* Where and with what a measured profile was made. */
typedef struct {
    char device[96];       /* as the driver names it */
    char driver[24];       /* CUDA driver version */
    char cuda_runtime[24];
    char cublas[24];
    char nccl[24];
    int nodes;             /* nodes the collectives spanned */
    int gpus_per_node;
    int ranks;             /* ranks in the largest measured group */
    char date[32];         /* UTC, ISO 8601 */
    char command[256];     /* how it was made */
} prof_env_t;

typedef struct {
    char gpu[GPU_NAME_MAX]; /* catalog GPU this profile describes */
    char origin[24];        /* "default" or "measured" */
    char description[200];

    /* From the GPU catalog unless the profile overrides them. */
    double peak_tflops[DTYPE_COUNT];
    int sm_count;
    double mem_bw_peak_gbs;

    /* GEMM model */
    double gemm_max_eff[DTYPE_COUNT]; /* best achievable fraction of peak */
    int tile_m, tile_n;  /* output tile per SM for wave quantization */
    double wave_penalty; /* 0..1: share of the wave-quantization loss seen */
    double k_half;       /* K at which main-loop efficiency is one half, in
                            bf16; a faster type's (fp8, fp4) is this times
                            its peak over bf16's (the fixed cost per tile is
                            a time: docs/gpu-runs/2026-11-27-h200-2) */
    double gemm_launch_us;
    double sustained_factor; /* share of the modeled GEMM and attention
                                throughput that sustained training reaches
                                (clock under the power limit, library
                                versions, kernels the model does not list) */
    size_t n_gemm_points;
    prof_gemm_point_t *gemm_points; /* heap, owned; may be NULL */
    char gemm_source[PROF_SOURCE_MAX];
    char gemm_dtype_source[DTYPE_COUNT][PROF_SOURCE_MAX]; /* per max_efficiency */

    /* Fused (flash) attention, as a fraction of the dtype's peak: the
     * default (any kernel the table does not list) ... */
    double attn_fwd_eff, attn_bwd_eff;
    char attn_source[PROF_SOURCE_MAX];
    /* ... and the measured kernels by name, with their dependence on the
     * sequence length and head dimension (prof_attn_kernel_t). */
    int n_attn_kernels;
    prof_attn_kernel_t attn_kernels[PROF_MAX_ATTN_KERNELS];

    /* Memory-bound kernels and memory overheads */
    double mem_bw_eff;   /* achieved / peak device bandwidth */
    double kernel_launch_us;
    double reserved_gib; /* CUDA context, NCCL, cuBLAS workspaces */
    double fragmentation;
    char mem_source[PROF_SOURCE_MAX];
    double atomic_add_gops; /* bf16 atomic adds to global memory per second,
                               billions, as PyTorch's scatter_add_ reaches
                               them (0: not known; such scatters are then
                               priced as memory traffic) */
    char atomic_source[PROF_SOURCE_MAX];

    /* Collectives */
    char intra_fabric[32]; /* fabric the tables were measured on */
    double coll_base_us;   /* launch + synchronisation of any collective */
    double intra_hop_us;   /* per ring step inside a node */
    int n_tables;
    prof_coll_table_t tables[PROF_MAX_TABLES];
    char net_fabric[32];   /* scale-out fabric the network figures are for */
    double net_efficiency; /* fraction of NIC line rate; 0 = the fabric's */
    double net_hop_us;     /* per ring/tree step across nodes */
    double tree_bw_factor; /* tree bandwidth relative to ring */
    double net_gpu_gbs;    /* measured: the scale-out bandwidth per GPU, GB/s,
                              that makes this model reproduce the measured
                              inter-node collectives (calibrate over several
                              nodes or imported nccl-tests logs); replaces
                              line rate x efficiency; 0 = not measured */
    char net_source[PROF_SOURCE_MAX];

    /* Per-rank compute-time jitter (coefficient of variation). */
    double straggler_cv;
    char straggler_source[PROF_SOURCE_MAX];

    /* Calibration record (optional "calibration" block): where it was
     * measured and the quality of every fit. */
    bool has_env;
    prof_env_t env;
    int n_fits;
    prof_fit_t *fits; /* heap, owned; may be NULL */
} profile_t;

/* How a collective's group sits on the machine. */
typedef struct {
    int n_ranks;            /* ranks in the group */
    int ranks_per_node;     /* members on each node */
    int nodes;              /* nodes spanned */
    const fabric_t *intra;  /* the nodes' scale-up fabric */
    const fabric_t *inter;  /* scale-out fabric; may be NULL when nodes == 1 */
    double nic_gbs_per_gpu; /* scale-out line rate per GPU, GB/s */
    double taper;           /* >= 1: oversubscription seen by this group */
} coll_span_t;

/* Load a profile file, or the default profile of a catalog GPU. Both fill
 * catalog figures from the GPU named in the profile. Free with prof_free. */
int prof_load(const char *path, profile_t *p, err_t *err);
int prof_load_default(const char *gpu_name, profile_t *p, err_t *err);

/* The same with the GPUs looked up in the parsed catalog cat (NULL: parse
 * it now). */
int prof_load_in(catalog_t *cat, const char *path, profile_t *p, err_t *err);
int prof_load_default_in(catalog_t *cat, const char *gpu_name, profile_t *p, err_t *err);

/* Save atomically (profile_json.h has the JSON form itself). */
int prof_save(const profile_t *p, const char *path, err_t *err);

/* Free what the profile owns (the GEMM table, the fit records); the
 * struct is reusable. */
void prof_free(profile_t *p);
/* Append a copy of fit to p's fit records, replacing one of the same name.
 * ERR_RUNTIME on OOM (p unchanged). */
int prof_add_fit(profile_t *p, const prof_fit_t *fit, err_t *err);
/* The fit record called name, or NULL. */
const prof_fit_t *prof_find_fit(const profile_t *p, const char *name);
/* Deep copy; dst must be freed with prof_free. ERR_RUNTIME on OOM. */
int prof_copy(profile_t *dst, const profile_t *src, err_t *err);

/* Seconds for batch GEMMs of m x n x k in dtype (an unsupported dtype runs
 * at the bf16 rate). Zero-sized work takes no time. */
double prof_gemm_time(const profile_t *p, dtype_t dtype, double m, double n,
                      double k, double batch);
/* The model's efficiency (fraction of peak) for that GEMM, before the
 * memory roofline, launch overhead and table correction. */
double prof_gemm_model_eff(const profile_t *p, dtype_t dtype, double m,
                           double n, double k, double batch);
/* How one fused attention call runs: the kernel (a name in the profile's
 * table, or NULL/unknown for its default efficiencies), the mask, the keys
 * each query attends over and the head dimension. */
typedef struct {
    const char *kernel;
    bool causal;
    double keys;   /* key length of one call (s, or s/CP per ring step) */
    int head_dim;
} prof_attn_call_t;

/* Seconds of fused attention doing flops (forward or backward). */
double prof_attn_time(const profile_t *p, dtype_t dtype, const prof_attn_call_t *call,
                      double flops, bool backward);

/* Seconds of `adds` bf16 atomic adds scattered into global memory (an
 * unfused scatter_add_ / index_add_): at the profile's atomic rate, or as
 * 6 bytes of memory traffic each when the profile has none. */
double prof_atomic_time(const profile_t *p, double adds);

/* The efficiency prof_attn_time uses (a fraction of the dtype's peak, before
 * the sustained factor). */
double prof_attn_eff(const profile_t *p, const prof_attn_call_t *call, bool backward);

/* The profile's table entry for attention kernel `name`, or NULL (then the
 * profile's fwd/bwd_efficiency apply). */
const prof_attn_kernel_t *prof_attn_kernel(const profile_t *p, const char *name);
/* Seconds for a memory-bound kernel reading and writing bytes in total. */
double prof_mem_time(const profile_t *p, double bytes);
/* Seconds for collective op of bytes (the nccl-tests "size": the whole
 * buffer for all-reduce/broadcast/send, the gathered output for
 * all-gather, the input for reduce-scatter) on the group span. */
double prof_coll_time(const profile_t *p, coll_op_t op, const coll_span_t *s,
                      double bytes);
/* nccl-tests bus-bandwidth factor: all-reduce 2(n-1)/n, all-gather,
 * reduce-scatter and all-to-all (n-1)/n, broadcast and send/recv 1. */
double prof_bus_factor(coll_op_t op, int n_ranks);

const char *prof_coll_name(coll_op_t op);
int prof_coll_parse(const char *text, coll_op_t *op, err_t *err);

#endif
