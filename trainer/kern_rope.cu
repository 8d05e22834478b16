/* kern_rope: rotary embedding kernel (see kern_rope.h). */
#include "trainer/kern_rope.h"

#include "trainer/kern_device.cuh"

extern "C" void kern_rope_table(int t, int hd, double theta, float *cos_t, float *sin_t)
{
    int half = hd / 2;
    for (int pos = 0; pos < t; pos++)
        for (int i = 0; i < half; i++) {
            double angle = pos * pow(theta, -2.0 * i / hd);
            cos_t[(size_t)pos * half + i] = (float)cos(angle);
            sin_t[(size_t)pos * half + i] = (float)sin(angle);
        }
}

/* Grid-stride over n (nh + nkv) hd/2 (one rotated pair per step), 256
 * threads. */
template <typename T>
__global__ void rope_kernel(T *qkv, const float *cos_t, const float *sin_t, int n, int t, int nh,
                            int nkv, int hd, float sign)
{
    int half = hd / 2, heads = nh + nkv;
    size_t stride = (size_t)(nh + 2 * nkv) * hd;
    size_t total = (size_t)n * heads * half;
    GRID_STRIDE(idx, total)
    {
        int i = (int)(idx % half);
        size_t rest = idx / half;
        int h = (int)(rest % heads);
        size_t r = rest / heads;
        size_t pos = r % t;
        float cs = cos_t[pos * half + i], sn = sign * sin_t[pos * half + i];
        T *x = qkv + r * stride + (size_t)h * hd;
        float x1 = to_f(x[i]), x2 = to_f(x[i + half]);
        x[i] = from_f<T>(x1 * cs - x2 * sn);
        x[i + half] = from_f<T>(x2 * cs + x1 * sn);
    }
}

extern "C" int kern_rope(kern_stream_t s, kern_dtype_t dt, void *qkv, const float *cos_t,
                         const float *sin_t, int n, int t, int nh, int nkv, int hd, float sign,
                         err_t *err)
{
    size_t total = (size_t)n * (nh + nkv) * (hd / 2);
    KERN_DISPATCH(dt, rope_kernel<T><<<grid_for(total), 256, 0, s>>>((T *)qkv, cos_t, sin_t, n, t,
                                                                      nh, nkv, hd, sign));
    KERNEL_CHECK();
    return ERR_OK;
}
