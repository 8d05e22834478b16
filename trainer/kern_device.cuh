/* kern_device: device-side helpers the kern_*.cu files share (type
 * conversions, warp reductions, grid sizing, the dtype dispatch). Included
 * only by .cu files; everything here is inline or a macro.
 */
#ifndef SCALEPLAN_TRAINER_KERN_DEVICE_CUH
#define SCALEPLAN_TRAINER_KERN_DEVICE_CUH

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "common/cuda_check.cuh"
#include "trainer/kern.h"

typedef __nv_bfloat16 bf16;

__device__ __forceinline__ float to_f(float x)
{
    return x;
}
__device__ __forceinline__ float to_f(bf16 x)
{
    return __bfloat162float(x);
}

template <typename T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x)
{
    return x;
}
template <> __device__ __forceinline__ bf16 from_f<bf16>(float x)
{
    return __float2bfloat16(x);
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Merge two partial softmax denominators (running max m, sum s of
 * exp(x - m)); an empty part has m = -inf, s = 0. */
__device__ __forceinline__ void softmax_merge(float &m, float &s, float m2, float s2)
{
    float mx = fmaxf(m, m2);
    float a = m == -INFINITY ? 0.f : s * __expf(m - mx);
    float b = m2 == -INFINITY ? 0.f : s2 * __expf(m2 - mx);
    m = mx;
    s = a + b;
}

__device__ __forceinline__ void warp_softmax_merge(float &m, float &s)
{
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        softmax_merge(m, s, m2, s2);
    }
}

/* Blocks for a grid-stride loop over n elements with 256 threads (capped:
 * each thread then handles several elements). */
static inline unsigned grid_for(size_t n)
{
    size_t b = (n + 255) / 256;
    if (b < 1)
        b = 1;
    return (unsigned)(b < 65536u * 8u ? b : 65536u * 8u);
}

#define GRID_STRIDE(i, n)                                                                          \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                        \
         i += (size_t)gridDim.x * blockDim.x)

/* Rows per block for one-warp-per-row kernels (256 threads). */
#define ROWS_PER_BLOCK 8

/* Blocks of ROWS_PER_BLOCK rows covering n rows. */
static inline unsigned row_blocks(size_t n)
{
    return (unsigned)((n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
}

/* out[0] = sum of x[0 .. n) in double, in a fixed order: one block of 1024
 * threads, each summing a strided slice, then a tree in shared memory. */
template <typename In> __global__ void sum_kernel(double *out, const In *x, size_t n)
{
    __shared__ double sh[1024];
    double acc = 0;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        acc += (double)x[i];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[0] = sh[0];
}

/* Run the statement with T the C++ type of dtype t (float or bf16). */
#define KERN_DISPATCH(t, ...)                                                                      \
    do {                                                                                           \
        if ((t) == KERN_BF16) {                                                                    \
            typedef bf16 T;                                                                        \
            __VA_ARGS__;                                                                           \
        } else {                                                                                   \
            typedef float T;                                                                       \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
    } while (0)

#endif
