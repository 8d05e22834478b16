/* kern_optim: gradient-norm and AdamW kernels (see kern_optim.h). */
#include "trainer/kern_optim.h"

#include "trainer/kern_device.cuh"

/* part[blockIdx.x] = sum of g[i]^2 (double) over the block's grid-stride
 * share of flagged elements. Launch: KERN_SUMSQ_BLOCKS x 256 threads. */
__global__ void sumsq_kernel(double *part, const float *g, const uint8_t *flags, size_t n)
{
    __shared__ double sh[256];
    double acc = 0;
    GRID_STRIDE(i, n)
    {
        if (flags[i] & 2)
            acc += (double)g[i] * (double)g[i];
    }
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        part[blockIdx.x] = sh[0];
}

extern "C" int kern_sumsq(kern_stream_t s, double *out, double *part, const float *g,
                          const uint8_t *flags, size_t n, err_t *err)
{
    sumsq_kernel<<<KERN_SUMSQ_BLOCKS, 256, 0, s>>>(part, g, flags, n);
    KERNEL_CHECK();
    sum_kernel<double><<<1, 1024, 0, s>>>(out, part, KERN_SUMSQ_BLOCKS);
    KERNEL_CHECK();
    return ERR_OK;
}

/* Grid-stride, 256 threads. */
__global__ void adamw_kernel(float *p, bf16 *p16, const float *grads, float *m, float *v,
                             const uint8_t *flags, size_t n, float b1, float b2, double bc1,
                             double bc2, double lr, double eps, double wd, float scale)
{
    GRID_STRIDE(i, n)
    {
        float g = grads[i] * scale;
        float mi = b1 * m[i] + (1 - b1) * g;
        float vi = b2 * v[i] + (1 - b2) * g * g;
        m[i] = mi;
        v[i] = vi;
        double mhat = mi / bc1, vhat = vi / bc2;
        double decay = (flags[i] & 1) ? wd * p[i] : 0.0;
        float np = p[i] - (float)(lr * (mhat / (sqrt(vhat) + eps) + decay));
        p[i] = np;
        if (p16)
            p16[i] = __float2bfloat16(np);
    }
}

extern "C" int kern_adamw(kern_stream_t s, float *p, void *p16, const float *grads, float *m,
                          float *v, const uint8_t *flags, size_t n, float beta1, float beta2,
                          double bc1, double bc2, double lr, double eps, double weight_decay,
                          float scale, err_t *err)
{
    adamw_kernel<<<grid_for(n), 256, 0, s>>>(p, (bf16 *)p16, grads, m, v, flags, n, beta1, beta2,
                                             bc1, bc2, lr, eps, weight_decay, scale);
    KERNEL_CHECK();
    return ERR_OK;
}
