/* kern_act: GELU and SwiGLU kernels (see kern_act.h). All grid-stride,
 * 256 threads, one output element per step. */
#include "trainer/kern_act.h"

#include "trainer/kern_device.cuh"

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */

template <typename T> __global__ void gelu_fwd_kernel(T *out, const T *inp, size_t n)
{
    GRID_STRIDE(i, n)
    {
        float x = to_f(inp[i]);
        float u = GELU_K * (x + 0.044715f * x * x * x);
        out[i] = from_f<T>(0.5f * x * (1.f + tanhf(u)));
    }
}

template <typename T>
__global__ void gelu_bwd_kernel(T *dinp, const T *inp, const T *dout, size_t n)
{
    GRID_STRIDE(i, n)
    {
        float x = to_f(inp[i]);
        float u = GELU_K * (x + 0.044715f * x * x * x);
        float th = tanhf(u);
        float du = GELU_K * (1.f + 3.f * 0.044715f * x * x);
        float grad = 0.5f * (1.f + th) + 0.5f * x * (1.f - th * th) * du;
        dinp[i] = from_f<T>(grad * to_f(dout[i]));
    }
}

template <typename T> __global__ void swiglu_fwd_kernel(T *out, const T *gate_up, int n, int f)
{
    size_t total = (size_t)n * f;
    GRID_STRIDE(i, total)
    {
        size_t r = i / f, k = i % f;
        float g = to_f(gate_up[r * 2 * f + k]), u = to_f(gate_up[r * 2 * f + f + k]);
        float sig = 1.f / (1.f + expf(-g));
        out[i] = from_f<T>(g * sig * u);
    }
}

template <typename T>
__global__ void swiglu_bwd_kernel(T *dgate_up, const T *gate_up, const T *dout, int n, int f)
{
    size_t total = (size_t)n * f;
    GRID_STRIDE(i, total)
    {
        size_t r = i / f, k = i % f;
        float g = to_f(gate_up[r * 2 * f + k]), u = to_f(gate_up[r * 2 * f + f + k]);
        float dy = to_f(dout[i]);
        float sig = 1.f / (1.f + expf(-g));
        dgate_up[r * 2 * f + k] = from_f<T>(dy * u * sig * (1.f + g * (1.f - sig)));
        dgate_up[r * 2 * f + f + k] = from_f<T>(dy * g * sig);
    }
}

extern "C" int kern_act_fwd(kern_stream_t s, kern_dtype_t t, bool swiglu, void *out,
                            const void *fc, int n, int f, err_t *err)
{
    size_t total = (size_t)n * f;
    if (swiglu)
        KERN_DISPATCH(t, swiglu_fwd_kernel<T><<<grid_for(total), 256, 0, s>>>((T *)out,
                                                                              (const T *)fc, n, f));
    else
        KERN_DISPATCH(t, gelu_fwd_kernel<T><<<grid_for(total), 256, 0, s>>>((T *)out,
                                                                            (const T *)fc, total));
    KERNEL_CHECK();
    return ERR_OK;
}

extern "C" int kern_act_bwd(kern_stream_t s, kern_dtype_t t, bool swiglu, void *dfc,
                            const void *fc, const void *dact, int n, int f, err_t *err)
{
    size_t total = (size_t)n * f;
    if (swiglu)
        KERN_DISPATCH(t, swiglu_bwd_kernel<T><<<grid_for(total), 256, 0, s>>>(
                             (T *)dfc, (const T *)fc, (const T *)dact, n, f));
    else
        KERN_DISPATCH(t, gelu_bwd_kernel<T><<<grid_for(total), 256, 0, s>>>(
                             (T *)dfc, (const T *)fc, (const T *)dact, total));
    KERNEL_CHECK();
    return ERR_OK;
}
