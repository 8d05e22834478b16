/* kern_norm: norm and column-sum kernels (see kern_norm.h). */
#include "trainer/kern_norm.h"

#include "trainer/kern_device.cuh"

/* Partitions of n rows for the column sums: at least 64 rows each, at most
 * KERN_PART_MAX of them. */
static inline int part_count(int n)
{
    int p = (n + 63) / 64;
    return p < 1 ? 1 : p > KERN_PART_MAX ? KERN_PART_MAX : p;
}

/* Launch: one warp per row, 256 threads = 8 rows per block, grid
 * ceil(n / 8); lanes stride over the C channels. */
template <typename T>
__global__ void norm_fwd_kernel(T *out, float *mean, float *rstd, const float *inp, const float *w,
                                const float *b, int n, int C, double eps, bool layernorm)
{
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    if (row >= n)
        return;
    const float *x = inp + (size_t)row * C;
    float m = 0;
    if (layernorm) {
        float acc = 0;
        for (int k = lane; k < C; k += 32)
            acc += x[k];
        m = warp_sum(acc) / (float)C;
    }
    float v = 0;
    for (int k = lane; k < C; k += 32) {
        float d = x[k] - m;
        v += d * d;
    }
    v = warp_sum(v) / (float)C;
    float sc = 1.0f / (float)sqrt((double)v + eps);
    T *y = out + (size_t)row * C;
    for (int k = lane; k < C; k += 32)
        y[k] = from_f<T>((x[k] - m) * sc * w[k] + (b ? b[k] : 0.f));
    if (lane == 0) {
        if (mean)
            mean[row] = m;
        rstd[row] = sc;
    }
}

extern "C" int kern_norm_fwd(kern_stream_t s, kern_dtype_t t, void *out, float *mean, float *rstd,
                             const float *inp, const float *w, const float *b, int n, int C,
                             double eps, bool layernorm, err_t *err)
{
    KERN_DISPATCH(t, norm_fwd_kernel<T><<<row_blocks((size_t)n), 32 * ROWS_PER_BLOCK, 0, s>>>(
                         (T *)out, layernorm ? mean : NULL, rstd, inp, w, b, n, C, eps, layernorm));
    KERNEL_CHECK();
    return ERR_OK;
}

/* Input gradient, one warp per row, 8 rows per 256-thread block. */
template <typename T>
__global__ void norm_bwd_dx_kernel(float *dx, T *dx_copy, const float *dout, const float *inp,
                                   const float *w, const float *mean, const float *rstd, int n,
                                   int C, bool accumulate)
{
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    if (row >= n)
        return;
    size_t base = (size_t)row * C;
    const float *x = inp + base, *g = dout + base;
    float *d = dx + base;
    float sc = rstd[row], m = mean ? mean[row] : 0.f;
    float a = 0, bb = 0;
    for (int k = lane; k < C; k += 32) {
        float gw = g[k] * w[k];
        if (mean) {
            a += gw;
            bb += gw * (x[k] - m) * sc;
        } else {
            bb += gw * x[k];
        }
    }
    a = warp_sum(a) / (float)C;
    bb = warp_sum(bb);
    for (int k = lane; k < C; k += 32) {
        float gw = g[k] * w[k], v;
        if (mean)
            v = sc * (gw - a - (x[k] - m) * sc * (bb / (float)C));
        else
            v = sc * gw - sc * sc * sc * bb / (float)C * x[k];
        float r = accumulate ? d[k] + v : v;
        d[k] = r;
        if (dx_copy)
            dx_copy[base + k] = from_f<T>(r);
    }
}

/* Column partial sums over row partitions, for parameter gradients:
 *   mode 0 (bias):      pa[p, c] = sum_r dout[r, c]
 *   mode 1 (LayerNorm): pa[p, c] = sum_r dout[r, c] (x[r, c] - mean[r]) rstd[r],
 *                       pb[p, c] = sum_r dout[r, c]
 *   mode 2 (RMSNorm):   pa[p, c] = sum_r dout[r, c] x[r, c] rstd[r]
 * over rows r of partition p = [p rows_per, min(n, (p + 1) rows_per)).
 * dout [n, ld] of type In (columns [0, C) used), x [n, C] fp32.
 * Launch: block (32, 8), grid (ceil(C / 32), P); thread (tx, ty) sums
 * column 32 blockIdx.x + tx over rows ty, ty + 8, ... of its partition;
 * the 8 row-lanes are added in order through shared memory. */
template <typename In, int MODE>
__global__ void colsum_partial_kernel(float *pa, float *pb, const In *dout, int ld, const float *x,
                                      const float *mean, const float *rstd, int n, int C,
                                      int rows_per)
{
    __shared__ float sa[8][33], sb[8][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int c = blockIdx.x * 32 + tx, p = blockIdx.y;
    int r0 = p * rows_per, r1 = min(n, r0 + rows_per);
    float acc_a = 0, acc_b = 0;
    if (c < C) {
        for (int r = r0 + ty; r < r1; r += 8) {
            float g = to_f(dout[(size_t)r * ld + c]);
            if (MODE == 0) {
                acc_a += g;
            } else if (MODE == 1) {
                acc_a += g * (x[(size_t)r * C + c] - mean[r]) * rstd[r];
                acc_b += g;
            } else {
                acc_a += g * x[(size_t)r * C + c] * rstd[r];
            }
        }
    }
    sa[ty][tx] = acc_a;
    sb[ty][tx] = acc_b;
    __syncthreads();
    if (ty == 0 && c < C) {
        float s1 = 0, s2 = 0;
        for (int j = 0; j < 8; j++) {
            s1 += sa[j][tx];
            s2 += sb[j][tx];
        }
        pa[(size_t)p * C + c] = s1;
        if (MODE == 1)
            pb[(size_t)p * C + c] = s2;
    }
}

/* dst[c] += sum_{p < P} part[p, c] in order of p (dst2 likewise from
 * part2 when not NULL), c < C. Grid ceil(C / 256) x 256 threads. */
__global__ void colsum_finish_kernel(float *dst, const float *part, float *dst2, const float *part2,
                                     int P, int C)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    float s = 0, s2 = 0;
    for (int p = 0; p < P; p++) {
        s += part[(size_t)p * C + c];
        if (dst2)
            s2 += part2[(size_t)p * C + c];
    }
    dst[c] += s;
    if (dst2)
        dst2[c] += s2;
}

extern "C" int kern_bias_grad(kern_stream_t s, kern_dtype_t t_in, float *dbias, const void *dout,
                              int ld, int n, int C, float *pa, err_t *err)
{
    int P = part_count(n), rows_per = (n + P - 1) / P;
    dim3 grid((unsigned)((C + 31) / 32), (unsigned)P), block(32, 8);
    KERN_DISPATCH(t_in, colsum_partial_kernel<T, 0><<<grid, block, 0, s>>>(
                            pa, NULL, (const T *)dout, ld, NULL, NULL, NULL, n, C, rows_per));
    KERNEL_CHECK();
    colsum_finish_kernel<<<(unsigned)((C + 255) / 256), 256, 0, s>>>(dbias, pa, NULL, NULL, P, C);
    KERNEL_CHECK();
    return ERR_OK;
}

extern "C" int kern_norm_bwd(kern_stream_t s, kern_dtype_t t, float *dx, void *dx_copy, float *dw,
                             float *db, const float *dout, const float *inp, const float *w,
                             const float *mean, const float *rstd, int n, int C, bool layernorm,
                             bool accumulate, float *pa, float *pb, err_t *err)
{
    KERN_DISPATCH(t, norm_bwd_dx_kernel<T><<<row_blocks((size_t)n), 32 * ROWS_PER_BLOCK, 0, s>>>(
                         dx, (T *)dx_copy, dout, inp, w, layernorm ? mean : NULL, rstd, n, C,
                         accumulate));
    KERNEL_CHECK();
    int P = part_count(n), rows_per = (n + P - 1) / P;
    dim3 g2((unsigned)((C + 31) / 32), (unsigned)P), block(32, 8);
    if (layernorm)
        colsum_partial_kernel<float, 1>
            <<<g2, block, 0, s>>>(pa, pb, dout, C, inp, mean, rstd, n, C, rows_per);
    else
        colsum_partial_kernel<float, 2>
            <<<g2, block, 0, s>>>(pa, NULL, dout, C, inp, NULL, rstd, n, C, rows_per);
    KERNEL_CHECK();
    bool with_b = layernorm && db;
    colsum_finish_kernel<<<(unsigned)((C + 255) / 256), 256, 0, s>>>(dw, pa, with_b ? db : NULL,
                                                                     with_b ? pb : NULL, P, C);
    KERNEL_CHECK();
    return ERR_OK;
}
