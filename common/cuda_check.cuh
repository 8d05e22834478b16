/* cuda_check: the one error idiom of every .cu file (calibrator and trainer).
 *
 * Each macro runs one CUDA runtime, cuBLASLt or NCCL call; on failure it
 * fills the err_t named `err` in the calling scope with one line
 *     trainer/backend_cuda.cu:412: ncclAllReduce: unhandled cuda error
 * (file, line, the function called and the library's own reason) and
 * returns ERR_RUNTIME from the calling function, like nccl-tests' TESTCHECK.
 * The _OUT forms instead set the int `rc` in scope and jump to the label
 * `out`, for functions that release resources on the way out. Nothing here
 * exits or prints. KERNEL_CHECK() checks the launch just made
 * (launch-configuration errors; faults inside a kernel surface at the next
 * synchronising call, which is checked too).
 */
#ifndef SCALEPLAN_COMMON_CUDA_CHECK_CUH
#define SCALEPLAN_COMMON_CUDA_CHECK_CUH

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

extern "C" {
#include "common/error.h"
}

/* Fill err with "file:line: function: why" (the call's text is cut at its
 * opening parenthesis) and return ERR_RUNTIME. */
static inline int cuda_fail(err_t *err, const char *call, const char *why, const char *file,
                            int line)
{
    int n = 0;
    while (call[n] && call[n] != '(')
        n++;
    return err_set(err, ERR_RUNTIME, "%s:%d: %.*s: %s", file, line, n, call, why);
}

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return cuda_fail(err, #call, cudaGetErrorString(e_), __FILE__, __LINE__);              \
    } while (0)

#define LT_CHECK(call)                                                                             \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                           \
            return cuda_fail(err, #call, cublasLtGetStatusString(s_), __FILE__, __LINE__);         \
    } while (0)

#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess)                                                                     \
            return cuda_fail(err, #call, ncclGetErrorString(r_), __FILE__, __LINE__);              \
    } while (0)

#define KERNEL_CHECK() CUDA_CHECK(cudaGetLastError())

#define CUDA_CHECK_OUT(call)                                                                       \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            rc = cuda_fail(err, #call, cudaGetErrorString(e_), __FILE__, __LINE__);                \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

#define LT_CHECK_OUT(call)                                                                         \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            rc = cuda_fail(err, #call, cublasLtGetStatusString(s_), __FILE__, __LINE__);           \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

#define KERNEL_CHECK_OUT() CUDA_CHECK_OUT(cudaGetLastError())

/* Propagate a failed status of one of our own functions. */
#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
    } while (0)

#endif
