/* measurements: the raw numbers a calibration measured or imported.
 *
 * A meas_set_t holds everything the fits need and nothing fitted: GEMM
 * timings by shape and dtype, memory-bound kernel timings by size, the
 * kernel launch overhead, and collective timings by message size (measured
 * with NCCL or imported from nccl-tests logs). A measuring run saves it as
 * JSON ("scaleplan-measurements/1", next to the profile) so a profile can be
 * refitted later without the GPU (`scaleplan calibrate --fit FILE`).
 *
 * Sizes follow nccl-tests: a collective's "bytes" is the whole buffer for
 * all-reduce, broadcast and send/recv, the gathered output for all-gather,
 * the input of reduce-scatter, and each rank's buffer for all-to-all.
 */
#ifndef SCALEPLAN_CALIBRATE_MEASUREMENTS_H
#define SCALEPLAN_CALIBRATE_MEASUREMENTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "profile/profile.h"
#include "common/error.h"
#include "topologies/gpu.h"

#define MEAS_FORMAT "scaleplan-measurements/1"
#define MEAS_MAX_COLL_POINTS 64 /* 8 B to 2^63 B by factors of 2 fit */
#define MEAS_KERNEL_MAX 24
#define MEAS_ALGO_MAX 16

/* Where the numbers were taken. */
typedef struct {
    char gpu[GPU_NAME_MAX]; /* catalog GPU; "" when unknown */
    char device[96];        /* as the driver names it */
    char driver[24], cuda_runtime[24], cublas[24], nccl[24];
    int sm_count;           /* 0 = unknown */
    double l2_bytes;        /* 0 = unknown */
    double memory_bytes;    /* device memory; 0 = unknown */
    int nodes, gpus_per_node, ranks; /* of the collective runs; 1 when none */
    char date[32];          /* UTC, ISO 8601 */
    char command[256];
} meas_env_t;

/* One GEMM: C[m x n] = A[m x k] B[k x n] (cuBLASLt, TN layout). */
typedef struct {
    dtype_t dtype;
    double m, n, k;
    double time_us; /* median per GEMM */
    double tflops;  /* 2mnk / time */
    bool table;     /* a transformer or square shape: kept in the profile's
                       interpolation table (grid points only feed the fit) */
} meas_gemm_t;

/* One memory-bound kernel run: bytes read plus bytes written. */
typedef struct {
    char kernel[MEAS_KERNEL_MAX]; /* "copy", "rmw", "add", "gelu", ... */
    double bytes;
    double time_us; /* median per kernel */
} meas_mem_t;

/* One collective at every measured size. */
typedef struct {
    coll_op_t op;
    char algo[MEAS_ALGO_MAX]; /* "default" (NCCL's choice), "ring", "tree" */
    int n_ranks;
    int nodes;
    char source[PROF_SOURCE_MAX]; /* where the numbers come from */
    int n;
    double bytes[MEAS_MAX_COLL_POINTS];     /* nccl-tests size */
    double time_us[MEAS_MAX_COLL_POINTS];   /* out-of-place, per operation */
    double busbw_gbs[MEAS_MAX_COLL_POINTS]; /* as reported (or computed) */
} meas_coll_t;

typedef struct {
    meas_env_t env;
    double launch_us;      /* back-to-back empty kernel; 0 = not measured */
    double launch_sync_us; /* launch + synchronize round trip; 0 = not measured */
    /* Sustained GEMM rate: the same large bf16 GEMM run back to back for
     * sustained_s seconds; 0 = not measured. */
    double sustained_s, burst_tflops, sustained_tflops;
    size_t n_gemm;
    meas_gemm_t *gemm; /* heap, owned */
    size_t n_mem;
    meas_mem_t *mem;   /* heap, owned */
    int n_coll;
    meas_coll_t *coll; /* heap, owned */
} meas_set_t;

/* An empty set (all counts zero, pointers NULL). */
void meas_init(meas_set_t *s);
void meas_free(meas_set_t *s);

/* Append one record (copied). ERR_RUNTIME on OOM, set unchanged. */
int meas_add_gemm(meas_set_t *s, const meas_gemm_t *g, err_t *err);
int meas_add_mem(meas_set_t *s, const meas_mem_t *m, err_t *err);
int meas_add_coll(meas_set_t *s, const meas_coll_t *c, err_t *err);

/* JSON form. meas_to_json returns NULL on OOM (caller deletes). */
cJSON *meas_to_json(const meas_set_t *s);
int meas_from_json(const cJSON *root, const char *file, meas_set_t *s, err_t *err);
int meas_save(const meas_set_t *s, const char *path, err_t *err);
/* Load a file; errors name the file and field (ERR_INPUT). On error *s is
 * empty and needs no freeing. */
int meas_load(const char *path, meas_set_t *s, err_t *err);

/* The current UTC time as ISO 8601 ("2025-01-31T12:00:00Z"). */
void meas_now_utc(char *buf, size_t cap);

#endif
