/* kern_elem: cast and residual kernels (see kern_elem.h). */
#include "trainer/kern_elem.h"

#include "trainer/kern_device.cuh"

/* out[i] = (T)in[i], i < n. Grid-stride, 256 threads. */
template <typename T> __global__ void cast_kernel(T *out, const float *in, size_t n)
{
    GRID_STRIDE(i, n)
    {
        out[i] = from_f<T>(in[i]);
    }
}

extern "C" int kern_cast(kern_stream_t s, kern_dtype_t t, void *out, const float *in, size_t n,
                         err_t *err)
{
    KERN_DISPATCH(t, cast_kernel<T><<<grid_for(n), 256, 0, s>>>((T *)out, in, n));
    KERNEL_CHECK();
    return ERR_OK;
}

/* x[i] += res[i] + (bias ? bias[i % C] : 0). Grid-stride, 256 threads. */
__global__ void residual_kernel(float *x, const float *res, const float *bias, size_t n, int C)
{
    GRID_STRIDE(i, n)
    {
        x[i] += res[i] + (bias ? bias[i % C] : 0.f);
    }
}

extern "C" int kern_residual(kern_stream_t s, float *x, const float *res, const float *bias,
                             size_t n, int C, err_t *err)
{
    residual_kernel<<<grid_for(n), 256, 0, s>>>(x, res, bias, n, C);
    KERNEL_CHECK();
    return ERR_OK;
}
