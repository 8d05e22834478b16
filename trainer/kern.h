/* kern: what the launchers of the CUDA trainer's own kernels share.
 *
 * Each group of kernels lives in a kern_NAME.cu file behind a plain-C
 * header kern_NAME.h whose launchers C code can call (the backend, and the
 * kernel tests in tests/gpu/kernels_test.c that run every launcher against
 * its twin in cpu_ops.h). Conventions, matching trainer/cpu_ops.h so the
 * two paths compute the same function:
 *   - tensors are row-major; n is the number of token rows (batch x seq);
 *   - activations are of the run's dtype (KERN_F32 or KERN_BF16) and passed
 *     as void pointers; arithmetic is always fp32 (loads convert, stores
 *     round to nearest even);
 *   - the residual stream, its gradient, norm statistics, master weights
 *     and gradients are fp32 (float *) in both modes;
 *   - reductions that produce parameter gradients are deterministic: fixed
 *     partitions summed in a fixed order (no atomics), so a rerun on the
 *     same GPU gives the same bits.
 * Every launcher enqueues on its stream and returns 0, or ERR_RUNTIME with
 * one line when the launch fails (faults inside a kernel surface at the
 * next synchronising call, which the caller checks).
 */
#ifndef SCALEPLAN_TRAINER_KERN_H
#define SCALEPLAN_TRAINER_KERN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "common/error.h"

/* A CUDA stream (the same type as cudaStream_t), so headers need no CUDA
 * include. */
typedef struct CUstream_st *kern_stream_t;

/* The type of activations and of the weights the GEMMs read. */
typedef enum { KERN_F32 = 0, KERN_BF16 = 1 } kern_dtype_t;

/* Row partitions of the deterministic column reductions (bias and norm
 * weight gradients): scratch buffers for them hold KERN_PART_MAX x C floats. */
#define KERN_PART_MAX 64

/* Partial sums of the gradient norm: scratch of this many doubles. */
#define KERN_SUMSQ_BLOCKS 1024

static inline size_t kern_dtype_bytes(kern_dtype_t t)
{
    return t == KERN_BF16 ? 2 : 4;
}

#ifdef __cplusplus
}
#endif

#endif
