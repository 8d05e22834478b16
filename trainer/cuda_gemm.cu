/* cuda_gemm: cuBLASLt products with cached descriptors (see cuda_gemm.h). */
#include "trainer/cuda_gemm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "common/cuda_check.cuh"

/* Distinct shapes kept; a training step of any model needs about 30 (each
 * linear layer's three products, the attention's six, the head's three),
 * times the few pointer-alignment classes its buffers fall into. The GPU
 * kernel tests build this file once with 2 to run the cache-full path. */
#if !defined(GEMM_CACHE_ENTRIES)
#define GEMM_CACHE_ENTRIES 128
#endif

/* 1: try cuBLASLt's bias epilogue first; 0: always the separate bias
 * kernel (the kernel tests' second build, so that path runs too). */
#if !defined(GEMM_BIAS_FUSE)
#define GEMM_BIAS_FUSE 1
#endif

/* Everything the algorithm choice depends on. Built with memset so padding
 * bytes compare equal. */
typedef struct {
    int trans_a, trans_b, m, n, k, lda, ldb, ldd, batch;
    int ab_type, d_type, bias;
    int bf16_reduction; /* gemm_allow_bf16_reduction at build time */
    long long stride_a, stride_b, stride_d;
    unsigned align_a, align_b, align_d, align_bias;
} gemm_key_t;

typedef struct {
    gemm_key_t key;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld; /* ld describes both C and D */
    cublasLtMatmulAlgo_t algo;
    bool fused_bias; /* CUBLASLT_EPILOGUE_BIAS in op; otherwise bias_add_kernel after */
    bool split_k;    /* the algorithm splits K ... */
    bool bf16_sums;  /* ... and adds its partial sums in the bf16 output */
} gemm_entry_t;

struct gemm {
    cublasLtHandle_t lt;
    void *workspace;
    size_t workspace_bytes;
    gemm_counters_t counters;
    bool allow_bf16_reduction;
    int n_entries;
    gemm_entry_t entries[GEMM_CACHE_ENTRIES];
};

static cudaDataType_t cuda_type(kern_dtype_t t)
{
    return t == KERN_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* Largest power of two up to 256 dividing the address of every batch
 * member: base + i * stride elements. */
static unsigned align_of(const void *p, long long stride, size_t elem, int batch)
{
    uintptr_t x = (uintptr_t)p;
    unsigned a = 256;
    while (a > 1 && x % a)
        a >>= 1;
    if (batch > 1) {
        unsigned long long s = (unsigned long long)stride * elem;
        while (a > 1 && s % a)
            a >>= 1;
    }
    return a;
}

static void entry_free(gemm_entry_t *e)
{
    if (e->la)
        cublasLtMatrixLayoutDestroy(e->la);
    if (e->lb)
        cublasLtMatrixLayoutDestroy(e->lb);
    if (e->ld)
        cublasLtMatrixLayoutDestroy(e->ld);
    if (e->op)
        cublasLtMatmulDescDestroy(e->op);
    memset(e, 0, sizeof *e);
}

extern "C" int gemm_create(size_t workspace_bytes, gemm_t **out, err_t *err)
{
    *out = NULL;
    gemm_t *g = (gemm_t *)calloc(1, sizeof *g);
    if (!g)
        return err_set(err, ERR_RUNTIME, "out of memory");
    cublasStatus_t st = cublasLtCreate(&g->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        free(g);
        return cuda_fail(err, "cublasLtCreate", cublasLtGetStatusString(st), __FILE__, __LINE__);
    }
    g->workspace_bytes = workspace_bytes;
    cudaError_t ce = cudaMalloc(&g->workspace, workspace_bytes);
    if (ce != cudaSuccess) {
        cublasLtDestroy(g->lt);
        free(g);
        return cuda_fail(err, "cudaMalloc", cudaGetErrorString(ce), __FILE__, __LINE__);
    }
    *out = g;
    return ERR_OK;
}

extern "C" void gemm_destroy(gemm_t *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n_entries; i++)
        entry_free(&g->entries[i]);
    cudaFree(g->workspace);
    cublasLtDestroy(g->lt);
    free(g);
}

extern "C" size_t gemm_workspace_bytes(const gemm_t *g)
{
    return g ? g->workspace_bytes : 0;
}

extern "C" void gemm_counters(const gemm_t *g, gemm_counters_t *out)
{
    *out = g->counters;
    out->entries = g->n_entries;
}

extern "C" void gemm_allow_bf16_reduction(gemm_t *g, bool allow)
{
    g->allow_bf16_reduction = allow;
}

extern "C" size_t gemm_cublaslt_version(void)
{
    return cublasLtGetVersion();
}

static void make_key(const gemm_t *g, const gemm_args_t *a, gemm_key_t *k)
{
    memset(k, 0, sizeof *k);
    k->trans_a = a->trans_a;
    k->trans_b = a->trans_b;
    k->m = a->m;
    k->n = a->n;
    k->k = a->k;
    k->lda = a->lda;
    k->ldb = a->ldb;
    k->ldd = a->ldd;
    k->batch = a->batch;
    k->ab_type = (int)a->ab_type;
    k->d_type = (int)a->d_type;
    k->bias = a->bias != NULL;
    k->bf16_reduction = a->d_type == KERN_BF16 && g->allow_bf16_reduction;
    k->stride_a = a->batch > 1 ? a->stride_a : 0;
    k->stride_b = a->batch > 1 ? a->stride_b : 0;
    k->stride_d = a->batch > 1 ? a->stride_d : 0;
    size_t ab = kern_dtype_bytes(a->ab_type), d = kern_dtype_bytes(a->d_type);
    k->align_a = align_of(a->a, a->stride_a, ab, a->batch);
    k->align_b = align_of(a->b, a->stride_b, ab, a->batch);
    k->align_d = align_of(a->d, a->stride_d, d, a->batch);
    k->align_bias = a->bias ? align_of(a->bias, 0, d, 1) : 0;
}

static int set_batch(cublasLtMatrixLayout_t l, int batch, long long stride, err_t *err)
{
    int32_t count = batch;
    int64_t offset = stride;
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                              sizeof count));
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &offset, sizeof offset));
    return ERR_OK;
}

/* Ask the heuristic for the best algorithm of e's current descriptors;
 * *found = 0 when none supports them. */
static int heuristic(gemm_t *g, gemm_entry_t *e, cublasLtMatmulPreference_t pref, int *found,
                     err_t *err)
{
    cublasLtMatmulHeuristicResult_t res;
    int count = 0;
    memset(&res, 0, sizeof res);
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(g->lt, e->op, e->la, e->lb, e->ld, e->ld,
                                                       pref, 1, &res, &count);
    *found = 0;
    if (st == CUBLAS_STATUS_NOT_SUPPORTED)
        return ERR_OK;
    LT_CHECK(st);
    if (count > 0 && res.state == CUBLAS_STATUS_SUCCESS) {
        e->algo = res.algo;
        *found = 1;
        uint32_t splits = 1, scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
        size_t got = 0;
        LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&e->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                                      &splits, sizeof splits, &got));
        LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(
            &e->algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme, &got));
        e->split_k = splits > 1;
        e->bf16_sums = e->split_k && e->key.d_type == (int)KERN_BF16 &&
                       (scheme == CUBLASLT_REDUCTION_SCHEME_INPLACE ||
                        scheme == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
    }
    return ERR_OK;
}

/* Descriptors and algorithm for a's shape; the caller frees e on failure. */
static int build(gemm_t *g, const gemm_args_t *a, const gemm_key_t *key, gemm_entry_t *e,
                 cublasLtMatmulPreference_t pref, err_t *err)
{
    e->key = *key;
    LT_CHECK(cublasLtMatmulDescCreate(&e->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = a->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = a->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    /* stored shapes: op(A) = A^T (m x k) means A is k x m */
    uint64_t ra = a->trans_a ? a->k : a->m, ca = a->trans_a ? a->m : a->k;
    uint64_t rb = a->trans_b ? a->n : a->k, cb = a->trans_b ? a->k : a->n;
    cudaDataType_t ab = cuda_type(a->ab_type), dt = cuda_type(a->d_type);
    LT_CHECK(cublasLtMatrixLayoutCreate(&e->la, ab, ra, ca, a->lda));
    LT_CHECK(cublasLtMatrixLayoutCreate(&e->lb, ab, rb, cb, a->ldb));
    LT_CHECK(cublasLtMatrixLayoutCreate(&e->ld, dt, (uint64_t)a->m, (uint64_t)a->n, a->ldd));
    if (a->batch > 1) {
        TRY(set_batch(e->la, a->batch, a->stride_a, err));
        TRY(set_batch(e->lb, a->batch, a->stride_b, err));
        TRY(set_batch(e->ld, a->batch, a->stride_d, err));
    }
    uint32_t al[4] = {key->align_a, key->align_b, key->align_d, key->align_d};
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                  &al[0], sizeof al[0]));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                  &al[1], sizeof al[1]));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                  &al[2], sizeof al[2]));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                  &al[3], sizeof al[3]));
    /* bf16 output: split-K partial sums in fp32 only, unless allowed
     * (cuda_gemm.h); NONE, no split, is always allowed */
    uint32_t schemes = key->d_type == (int)KERN_BF16 && !key->bf16_reduction
                           ? (uint32_t)CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
                           : (uint32_t)CUBLASLT_REDUCTION_SCHEME_MASK;
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                  &schemes, sizeof schemes));
    int found = 0;
    if (GEMM_BIAS_FUSE && a->bias && a->batch == 1) {
        /* the heuristic reads the bias pointer's alignment from the descriptor */
        cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        LT_CHECK(
            cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        LT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &a->bias,
                                                sizeof a->bias));
        TRY(heuristic(g, e, pref, &found, err));
        if (found) {
            e->fused_bias = true;
            return ERR_OK;
        }
        epi = CUBLASLT_EPILOGUE_DEFAULT;
        const void *none = NULL;
        LT_CHECK(
            cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        LT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &none,
                                                sizeof none));
    }
    TRY(heuristic(g, e, pref, &found, err));
    if (!found)
        return err_set(err, ERR_RUNTIME,
                       "cuBLASLt has no algorithm for %s%s GEMM m=%d n=%d k=%d lda=%d ldb=%d "
                       "ldd=%d batch=%d (%s inputs, %s output, alignment %u/%u/%u bytes)",
                       a->trans_a ? "T" : "N", a->trans_b ? "T" : "N", a->m, a->n, a->k, a->lda,
                       a->ldb, a->ldd, a->batch, a->ab_type == KERN_BF16 ? "bf16" : "fp32",
                       a->d_type == KERN_BF16 ? "bf16" : "fp32", key->align_a, key->align_b,
                       key->align_d);
    return ERR_OK;
}

/* D[i + j ldd] += bias[i] for i < m, j < n (column-major m x n).
 * Launch: grid-stride, 256 threads per block, one element per step. */
template <typename T> __global__ void bias_add_kernel(T *d, const T *bias, int m, int n, int ldd)
{
    size_t total = (size_t)m * n;
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
         idx += (size_t)gridDim.x * blockDim.x) {
        int i = (int)(idx % m);
        size_t j = idx / m;
        T *p = d + i + j * (size_t)ldd;
        *p = (T)((float)*p + (float)bias[i]);
    }
}

static int bias_add(const gemm_args_t *a, cudaStream_t s, err_t *err)
{
    size_t total = (size_t)a->m * a->n;
    size_t blocks = (total + 255) / 256;
    unsigned grid = (unsigned)(blocks < 65536 ? blocks : 65536);
    if (a->d_type == KERN_BF16)
        bias_add_kernel<__nv_bfloat16><<<grid, 256, 0, s>>>(
            (__nv_bfloat16 *)a->d, (const __nv_bfloat16 *)a->bias, a->m, a->n, a->ldd);
    else
        bias_add_kernel<float>
            <<<grid, 256, 0, s>>>((float *)a->d, (const float *)a->bias, a->m, a->n, a->ldd);
    KERNEL_CHECK();
    return ERR_OK;
}

static int run_entry(gemm_t *g, gemm_entry_t *e, const gemm_args_t *a, cudaStream_t s, err_t *err)
{
    if (a->bias)
        (e->fused_bias ? g->counters.bias_fused : g->counters.bias_unfused)++;
    g->counters.split_k += e->split_k;
    g->counters.bf16_reduced += e->bf16_sums;
    if (e->fused_bias)
        LT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &a->bias,
                                                sizeof a->bias));
    LT_CHECK(cublasLtMatmul(g->lt, e->op, &a->alpha, a->a, e->la, a->b, e->lb, &a->beta, a->d,
                            e->ld, a->d, e->ld, &e->algo, g->workspace, g->workspace_bytes, s));
    if (a->bias && !e->fused_bias)
        TRY(bias_add(a, s, err));
    return ERR_OK;
}

extern "C" int gemm_run(gemm_t *g, const gemm_args_t *a, kern_stream_t stream, err_t *err)
{
    if (a->bias && a->batch != 1)
        return err_set(err, ERR_RUNTIME, "gemm_run: a bias needs batch 1 (got %d)", a->batch);
    gemm_key_t key;
    make_key(g, a, &key);
    for (int i = 0; i < g->n_entries; i++)
        if (memcmp(&g->entries[i].key, &key, sizeof key) == 0) {
            g->counters.cached++;
            return run_entry(g, &g->entries[i], a, stream, err);
        }
    cublasLtMatmulPreference_t pref = NULL;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = g->workspace_bytes;
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st != CUBLAS_STATUS_SUCCESS) {
        cublasLtMatmulPreferenceDestroy(pref);
        return cuda_fail(err, "cublasLtMatmulPreferenceSetAttribute", cublasLtGetStatusString(st),
                         __FILE__, __LINE__);
    }
    gemm_entry_t fresh;
    memset(&fresh, 0, sizeof fresh);
    int rc = build(g, a, &key, &fresh, pref, err);
    cublasLtMatmulPreferenceDestroy(pref);
    if (rc) {
        entry_free(&fresh);
        return rc;
    }
    if (g->n_entries < GEMM_CACHE_ENTRIES) {
        g->entries[g->n_entries] = fresh;
        g->counters.cached++;
        return run_entry(g, &g->entries[g->n_entries++], a, stream, err);
    }
    /* cache full: use once (descriptors may go once the call is enqueued) */
    g->counters.uncached++;
    rc = run_entry(g, &fresh, a, stream, err);
    entry_free(&fresh);
    return rc;
}
