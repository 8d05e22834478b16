/* gpubench: what one GPU can do, measured with CUDA and cuBLASLt.
 *
 *   GEMMs     cuBLASLt matmuls in bf16, fp16, tf32, fp32 and fp8 (e4m3,
 *             sm_89 and later, with scale pointers), TN layout (the one fp8
 *             requires and frameworks favour), fp32 accumulation, the first
 *             algorithm of cuBLASLt's heuristic (what frameworks run), a
 *             32 MiB workspace. Inputs are random (never zero: zeros let
 *             the hardware save power and flatter the rate) and rotate
 *             through buffers larger than twice the L2 cache, so every
 *             GEMM reads its operands from HBM. Timed with CUDA events after
 *             a warm-up; the median of the repeats is kept.
 *   memory    a device-to-device cudaMemcpy and the memory-bound kernels a
 *             trainer runs (read-modify-write, residual add, GELU, RMSNorm,
 *             LayerNorm, AdamW), bytes counted read + write.
 *   launch    an empty kernel launched back to back (the per-kernel cost a
 *             stream of dependent kernels pays) and launched + synchronised.
 *   sustained the same large bf16 GEMM back to back for some seconds: the
 *             rate once clocks settle under the power limit.
 *
 * The measurements run in the CUDA plug-in (gpubench.cu, built into
 * scaleplan-cuda.so, common/plugin.h); the functions below (gpubench.c)
 * open it on first use and forward to its table, so only a process that
 * measures loads CUDA and cuBLASLt. Built without CUDA (no nvcc), or when
 * the plug-in cannot be opened, every function returns ERR_RUNTIME with one
 * line saying why; gpub_built_with_cuda tells which build this is.
 */
#ifndef SCALEPLAN_CALIBRATE_GPUBENCH_H
#define SCALEPLAN_CALIBRATE_GPUBENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "calibrate/measurements.h"
#include "common/error.h"
#include "topologies/gpu.h"

/* The message of the build without CUDA. */
#define GPUB_NO_CUDA_MSG                                                                      \
    "scaleplan was built without CUDA (nvcc not found under CUDA_HOME); GEMM/NCCL "          \
    "measurement needs it - import (--from-nccl-tests), --fit and --show work without it"

typedef struct {
    int ordinal;
    char name[96];
    int sm_count;
    int cc_major, cc_minor;
    double l2_bytes, memory_bytes, free_bytes;
    char driver[24], runtime[24], cublas[24];
} gpub_device_t;

/* Progress: done units of work so far (the caller knows the total). */
typedef void (*gpub_progress_fn)(void *ctx, double done);

typedef struct {
    dtype_t dtype;
    double m, n, k;
    bool table; /* keep in the profile's interpolation table */
} gpub_shape_t;

typedef struct {
    int repeats;          /* timed repeats; the median is kept (>= 1) */
    double repeat_ms;     /* each repeat runs enough work to last this long */
    double warmup_ms;     /* untimed work before the first repeat of a shape */
} gpub_timing_t;

bool gpub_built_with_cuda(void);

/* Visible CUDA devices. ERR_RUNTIME "no CUDA GPU visible: cudaGetDeviceCount:
 * ..." when there are none. */
int gpub_device_count(int *count, err_t *err);

/* Name, SMs, compute capability, L2 and memory sizes, driver, runtime and
 * cuBLAS versions of one device. */
int gpub_device_info(int ordinal, gpub_device_t *info, err_t *err);

/* Whether the device runs GEMMs in dtype (fp8 needs sm_89+; fp4 is not
 * measured). */
bool gpub_supports(const gpub_device_t *info, dtype_t dtype);

/* Time every shape the device supports, appending one meas_gemm_t each to
 * set; *skipped counts the others. progress is called after each shape
 * with the number done (may be NULL). */
int gpub_gemm(int ordinal, const gpub_shape_t *shapes, size_t n, const gpub_timing_t *timing,
              meas_set_t *set, size_t *skipped, gpub_progress_fn progress, void *ctx, err_t *err);

/* Run a dim^3 bf16 GEMM back to back for seconds; burst is the rate of the
 * first tenth of a second, sustained the rate of the last third. */
int gpub_gemm_sustained(int ordinal, double dim, double seconds, double *burst_tflops,
                        double *sustained_tflops, err_t *err);

/* Memory-bound kernels at every size (bytes of the main buffer), one
 * meas_mem_t per kernel and size. */
int gpub_memory(int ordinal, const double *sizes, size_t n_sizes, const gpub_timing_t *timing,
                meas_set_t *set, gpub_progress_fn progress, void *ctx, err_t *err);

/* Kernel launch overhead, microseconds. */
int gpub_launch(int ordinal, double *back_to_back_us, double *synchronous_us, err_t *err);

/* The plug-in's implementation of the functions above, exported by
 * scaleplan-cuda.so under GPUB_SYMBOL. */
typedef struct {
    int (*device_count)(int *count, err_t *err);
    int (*device_info)(int ordinal, gpub_device_t *info, err_t *err);
    bool (*supports)(const gpub_device_t *info, dtype_t dtype);
    int (*gemm)(int ordinal, const gpub_shape_t *shapes, size_t n, const gpub_timing_t *timing,
                meas_set_t *set, size_t *skipped, gpub_progress_fn progress, void *ctx, err_t *err);
    int (*gemm_sustained)(int ordinal, double dim, double seconds, double *burst_tflops,
                          double *sustained_tflops, err_t *err);
    int (*memory)(int ordinal, const double *sizes, size_t n_sizes, const gpub_timing_t *timing,
                  meas_set_t *set, gpub_progress_fn progress, void *ctx, err_t *err);
    int (*launch)(int ordinal, double *back_to_back_us, double *synchronous_us, err_t *err);
} gpub_ops_t;

#define GPUB_SYMBOL "scaleplan_gpubench"

/* The plug-in's table, opening the plug-in on first use; ERR_RUNTIME with
 * one line (GPUB_NO_CUDA_MSG in a build without CUDA) when it cannot. */
int gpub_ops(const gpub_ops_t **ops, err_t *err);

#endif
