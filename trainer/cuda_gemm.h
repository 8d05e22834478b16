/* cuda_gemm: every matrix product of the CUDA trainer, through cuBLASLt.
 *
 * One call computes, in cuBLAS's column-major convention,
 *     D = alpha op(A) op(B) + beta D      (+ bias[i] on every column j of D)
 * for `batch` independent products at fixed element strides (strided
 * batched; batch 1 is a plain GEMM), with fp32 accumulation
 * (CUBLAS_COMPUTE_32F: true fp32 for fp32 inputs, never TF32) and A, B in
 * fp32 or bf16, D in the same type or fp32. The caller's row-major tensors
 * are mapped onto this by the call sites (each says how).
 *
 * Descriptors, layouts and the heuristic's algorithm are built once per
 * distinct shape (including the alignment of every pointer, which decides
 * which kernels may run) and cached, GEMM_CACHE_ENTRIES of them; a shape
 * met once the cache is full is built, run and released each time. The
 * bias is fused as cuBLASLt's CUBLASLT_EPILOGUE_BIAS when an algorithm
 * for it exists at that alignment, otherwise (and always when built with
 * GEMM_BIAS_FUSE 0) added by a small kernel after the product. Both limits
 * are compile-time defaults a test build overrides to run the rare paths.
 *
 * Split-K: with a bf16 output, cuBLASLt may split K and add the partial
 * sums in bf16 (its INPLACE and OUTPUT_TYPE reduction schemes; PyTorch
 * calls this a reduced-precision reduction and allows it unless
 * torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction is
 * off, pytorch/pytorch#89172). Each partial sum is then rounded to 8 bits:
 * measured on an H200 (2026-11-27, cuBLASLt 13.1), dinp = dout W for
 * N=8193, C=33, O=768 erred by up to 1% of the output's RMS, 2.5 times the
 * kernel tests' bf16 tolerance. The module therefore allows only fp32
 * partial sums (CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE) by default;
 * gemm_allow_bf16_reduction turns the cheaper scheme back on.
 *
 * Plain C interface (the kernel tests call it from C). Not thread-safe:
 * one gemm_t per stream of work.
 */
#ifndef SCALEPLAN_TRAINER_CUDA_GEMM_H
#define SCALEPLAN_TRAINER_CUDA_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "trainer/kern.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gemm gemm_t;

typedef struct {
    bool trans_a, trans_b; /* op(X) = X^T when set */
    int m, n, k;           /* op(A) is m x k, op(B) k x n, D m x n */
    const void *a;         /* stored k x m (trans_a) or m x k, column-major */
    int lda;
    long long stride_a; /* elements between batch members (0 when batch == 1) */
    const void *b;      /* stored n x k (trans_b) or k x n */
    int ldb;
    long long stride_b;
    void *d; /* m x n, also read as C when beta != 0 */
    int ldd;
    long long stride_d;
    int batch; /* >= 1 */
    float alpha, beta;
    kern_dtype_t ab_type; /* KERN_F32 or KERN_BF16 */
    kern_dtype_t d_type;  /* ab_type or KERN_F32 */
    const void *bias;     /* NULL, or m elements of d_type added to each column (batch 1) */
} gemm_args_t;

/* What the module did so far: products run from a cached entry, run with
 * a one-off entry because the cache was full, and products with a bias
 * fused into cuBLASLt's epilogue or added by the separate kernel. */
typedef struct {
    long cached, uncached;
    long bias_fused, bias_unfused;
    long split_k;      /* products whose algorithm splits K */
    long bf16_reduced; /* of those, partial sums added in bf16 */
    int entries;       /* shapes in the cache now */
} gemm_counters_t;

/* A cuBLASLt handle with workspace_bytes of device workspace on the current
 * device. ERR_RUNTIME when cuBLASLt or the allocation fails. */
int gemm_create(size_t workspace_bytes, gemm_t **out, err_t *err);
void gemm_destroy(gemm_t *g);

/* Allow (true) or forbid (false, the default) split-K partial sums added
 * in a bf16 output's own type; applies to shapes first met afterwards
 * (the setting is part of the cache key). */
void gemm_allow_bf16_reduction(gemm_t *g, bool allow);

/* Enqueue one product on stream. ERR_RUNTIME (with the shape) when no
 * cuBLASLt algorithm supports it or a call fails. */
int gemm_run(gemm_t *g, const gemm_args_t *a, kern_stream_t stream, err_t *err);

/* Device bytes the module holds (workspace). */
size_t gemm_workspace_bytes(const gemm_t *g);

/* The counters since gemm_create. */
void gemm_counters(const gemm_t *g, gemm_counters_t *out);

/* cuBLASLt's version number (130100 for 13.1.0). */
size_t gemm_cublaslt_version(void);

#ifdef __cplusplus
}
#endif

#endif
