/* kern_loss: cross-entropy and sum kernels (see kern_loss.h). */
#include "trainer/kern_loss.h"

#include "trainer/kern_device.cuh"

#define CE_THREADS 512

/* Launch: one block of CE_THREADS threads per row, grid n; threads stride
 * over the v columns, the block merges (max, sum) pairs through shared
 * memory (16 warps). */
template <typename T>
__global__ void crossentropy_kernel(T *logits, float *losses, const int32_t *targets, int v, int ld,
                                    float scale)
{
    __shared__ float sm[32], ss[32];
    __shared__ float fm, fs;
    size_t row = blockIdx.x;
    T *z = logits + row * ld;
    float m = -INFINITY, sum = 0;
    for (int k = threadIdx.x; k < v; k += blockDim.x) {
        float x = to_f(z[k]);
        if (x > m) {
            sum = (m == -INFINITY ? 0.f : sum * __expf(m - x)) + 1.f;
            m = x;
        } else {
            sum += __expf(x - m);
        }
    }
    warp_softmax_merge(m, sum);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, n_warps = blockDim.x / 32;
    if (lane == 0) {
        sm[warp] = m;
        ss[warp] = sum;
    }
    __syncthreads();
    if (warp == 0) {
        m = lane < n_warps ? sm[lane] : -INFINITY;
        sum = lane < n_warps ? ss[lane] : 0.f;
        warp_softmax_merge(m, sum);
        if (lane == 0) {
            fm = m;
            fs = sum;
        }
    }
    __syncthreads();
    m = fm;
    sum = fs;
    int tgt = targets[row];
    float zt = to_f(z[tgt]); /* read before the row is overwritten below */
    __syncthreads();
    if (threadIdx.x == 0)
        losses[row] = logf(sum) - (zt - m);
    float inv = 1.f / sum;
    for (int k = threadIdx.x; k < v; k += blockDim.x) {
        float p = __expf(to_f(z[k]) - m) * inv;
        z[k] = from_f<T>((p - (k == tgt ? 1.f : 0.f)) * scale);
    }
}

extern "C" int kern_crossentropy(kern_stream_t s, kern_dtype_t t, void *logits, float *losses,
                                 const int32_t *targets, int n, int v, int ld, float scale,
                                 err_t *err)
{
    if (n < 1)
        return ERR_OK;
    KERN_DISPATCH(t, crossentropy_kernel<T><<<n, CE_THREADS, 0, s>>>((T *)logits, losses, targets,
                                                                     v, ld, scale));
    KERNEL_CHECK();
    return ERR_OK;
}

extern "C" int kern_sum(kern_stream_t s, double *out, const float *x, size_t n, err_t *err)
{
    sum_kernel<float><<<1, 1024, 0, s>>>(out, x, n);
    KERNEL_CHECK();
    return ERR_OK;
}
