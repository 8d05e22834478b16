/* cuda_kernels: the transformer's element-wise, normalisation, attention
 * softmax, embedding, loss and optimizer kernels for the CUDA trainer
 * (backend_cuda.cu includes this; CUDA-only, never seen by C code).
 *
 * Conventions, matching trainer/cpu_ops.h so the two paths compute the same
 * function:
 *   - tensors are row-major; n is the number of token rows (batch x seq);
 *   - T is the activation type, float (fp32 mode) or __nv_bfloat16 (bf16
 *     mode); arithmetic is always fp32 (loads convert, stores round);
 *   - the residual stream, its gradient, norm statistics, master weights
 *     and gradients are fp32 in both modes;
 *   - reductions that produce parameter gradients are deterministic: fixed
 *     partitions summed in a fixed order (no atomics), so a rerun on the
 *     same GPU gives the same bits.
 * Every kernel states its launch geometry and the shapes it assumes; each
 * launcher returns ERR_RUNTIME through KERNEL_CHECK on a launch failure.
 * The kernels are defined here, so exactly one translation unit
 * (backend_cuda.cu) includes this header.
 */
#ifndef SCALEPLAN_TRAINER_CUDA_KERNELS_CUH
#define SCALEPLAN_TRAINER_CUDA_KERNELS_CUH

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "common/cuda_check.cuh"

typedef __nv_bfloat16 bf16;

/* ------------------------------------------------------------ helpers */

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

/* Row partitions of the deterministic column reductions (bias and norm
 * weight gradients): partial sums of PART_MAX row ranges, then summed in
 * order. */
#define PART_MAX 64

static inline int part_count(int n)
{
    int p = (n + 63) / 64; /* at least 64 rows per partition */
    return p < 1 ? 1 : p > PART_MAX ? PART_MAX : p;
}

/* ------------------------------------------------------------ casts */

/* out[i] = (T)in[i], i < n. Grid-stride, 256 threads. */
template <typename T> __global__ void cast_kernel(T *out, const float *in, size_t n)
{
    GRID_STRIDE(i, n)
    {
        out[i] = from_f<T>(in[i]);
    }
}

template <typename T>
static inline int k_cast(cudaStream_t s, T *out, const float *in, size_t n, err_t *err)
{
    cast_kernel<T><<<grid_for(n), 256, 0, s>>>(out, in, n);
    KERNEL_CHECK();
    return ERR_OK;
}

/* ------------------------------------------------------------ embeddings */

/* out[r, c] = wte[tok[r], c] + (wpe ? wpe[r % t, c] : 0) for r < n, c < C;
 * out, wte [vocab, C], wpe [max_seq, C] fp32. Tokens were checked on the
 * host to lie in [0, vocab). Grid-stride over n*C, 256 threads. */
__global__ void embed_fwd_kernel(float *out, const int32_t *tok, const float *wte, const float *wpe,
                                 int n, int t, int C)
{
    size_t total = (size_t)n * C;
    GRID_STRIDE(i, total)
    {
        size_t r = i / C, c = i % C;
        float v = wte[(size_t)tok[r] * C + c];
        if (wpe)
            v += wpe[(r % t) * C + c];
        out[i] = v;
    }
}

static inline int k_embed_fwd(cudaStream_t s, float *out, const int32_t *tok, const float *wte,
                              const float *wpe, int n, int t, int C, err_t *err)
{
    embed_fwd_kernel<<<grid_for((size_t)n * C), 256, 0, s>>>(out, tok, wte, wpe, n, t, C);
    KERNEL_CHECK();
    return ERR_OK;
}

/* Word-embedding gradient without atomics: the host groups the micro-batch's
 * rows by token (uniq[u] the u-th distinct token, its rows
 * rows[start[u] .. start[u+1]) in increasing order), so each (token,
 * channel) is summed by one thread in a fixed order:
 *   dwte[uniq[u], c] += sum_k dx[rows[k], c].
 * Grid: n_uniq blocks x 256 threads; threads stride over the C channels. */
__global__ void embed_bwd_wte_kernel(float *dwte, const float *dx, const int32_t *uniq,
                                     const int32_t *start, const int32_t *rows, int C)
{
    int u = blockIdx.x;
    int k0 = start[u], k1 = start[u + 1];
    float *dst = dwte + (size_t)uniq[u] * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float acc = 0;
        for (int k = k0; k < k1; k++)
            acc += dx[(size_t)rows[k] * C + c];
        dst[c] += acc;
    }
}

/* dwpe[p, c] += sum over b < nb of dx[(b t + p), c], for p < t, c < C.
 * Grid-stride over t*C (one output element per step), 256 threads. */
__global__ void embed_bwd_wpe_kernel(float *dwpe, const float *dx, int nb, int t, int C)
{
    size_t total = (size_t)t * C;
    GRID_STRIDE(i, total)
    {
        size_t p = i / C, c = i % C;
        float acc = 0;
        for (int b = 0; b < nb; b++)
            acc += dx[((size_t)b * t + p) * C + c];
        dwpe[i] += acc;
    }
}

static inline int k_embed_bwd(cudaStream_t s, float *dwte, float *dwpe, const float *dx,
                              const int32_t *uniq, const int32_t *start, const int32_t *rows,
                              int n_uniq, int nb, int t, int C, err_t *err)
{
    if (n_uniq > 0) {
        embed_bwd_wte_kernel<<<n_uniq, 256, 0, s>>>(dwte, dx, uniq, start, rows, C);
        KERNEL_CHECK();
    }
    if (dwpe) {
        embed_bwd_wpe_kernel<<<grid_for((size_t)t * C), 256, 0, s>>>(dwpe, dx, nb, t, C);
        KERNEL_CHECK();
    }
    return ERR_OK;
}

/* ------------------------------------------------------------ norms */

/* LayerNorm (layernorm = true: (x - mean) rstd w + b) or RMSNorm (x rstd w)
 * of each row of inp[n, C] (fp32) into out[n, C] (T); mean (LayerNorm
 * only, else NULL) and rstd [n] fp32 kept for the backward; w, b [C] fp32
 * (b NULL when absent). rstd = 1 / sqrt(var + eps) as cpu_ops computes it.
 * Launch: one warp per row, 256 threads = 8 rows per block,
 * grid ceil(n / 8); lanes stride over the C channels. */
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

template <typename T>
static inline int k_norm_fwd(cudaStream_t s, T *out, float *mean, float *rstd, const float *inp,
                             const float *w, const float *b, int n, int C, double eps,
                             bool layernorm, err_t *err)
{
    unsigned grid = (unsigned)((n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    norm_fwd_kernel<T><<<grid, 32 * ROWS_PER_BLOCK, 0, s>>>(out, layernorm ? mean : NULL, rstd, inp,
                                                            w, b, n, C, eps, layernorm);
    KERNEL_CHECK();
    return ERR_OK;
}

/* Input gradient of the norm, per row of dout[n, C] (fp32):
 *   LayerNorm: dx += rstd (g w - mean(g w) - xhat mean(g w xhat)), xhat = (x - mean) rstd
 *   RMSNorm:   dx += rstd g w - rstd^3 x sum(g w x) / C
 * dx [n, C] fp32 is added to (accumulate) or overwritten; when dx_copy is
 * not NULL it also receives the resulting dx rounded to T (the next
 * GEMM's input in bf16 mode). inp [n, C] fp32, w [C], mean (NULL for
 * RMSNorm) and rstd [n] from the forward. Launch: one warp per row, 8 rows
 * per 256-thread block, grid ceil(n / 8). */
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
 * the 8 row-lanes are added in order through shared memory. pa, pb are
 * [P, C] fp32. */
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

/* dbias[c] += sum over rows of dout[n, ld] (columns [0, C)); pa is scratch of
 * PART_MAX x C floats. */
template <typename In>
static inline int k_bias_grad(cudaStream_t s, float *dbias, const In *dout, int ld, int n, int C,
                              float *pa, err_t *err)
{
    int P = part_count(n), rows_per = (n + P - 1) / P;
    dim3 grid((unsigned)((C + 31) / 32), (unsigned)P), block(32, 8);
    colsum_partial_kernel<In, 0>
        <<<grid, block, 0, s>>>(pa, NULL, dout, ld, NULL, NULL, NULL, n, C, rows_per);
    KERNEL_CHECK();
    colsum_finish_kernel<<<(unsigned)((C + 255) / 256), 256, 0, s>>>(dbias, pa, NULL, NULL, P, C);
    KERNEL_CHECK();
    return ERR_OK;
}

/* The whole norm backward: dx (see norm_bwd_dx_kernel) and dw (+= and db
 * += for LayerNorm; db NULL when the norm has no bias). pa, pb scratch of
 * PART_MAX x C floats each. */
template <typename T>
static inline int k_norm_bwd(cudaStream_t s, float *dx, T *dx_copy, float *dw, float *db,
                             const float *dout, const float *inp, const float *w, const float *mean,
                             const float *rstd, int n, int C, bool layernorm, bool accumulate,
                             float *pa, float *pb, err_t *err)
{
    unsigned grid = (unsigned)((n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    norm_bwd_dx_kernel<T><<<grid, 32 * ROWS_PER_BLOCK, 0, s>>>(
        dx, dx_copy, dout, inp, w, layernorm ? mean : NULL, rstd, n, C, accumulate);
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

/* ------------------------------------------------------------ residual */

/* x[i] += res[i] + (bias ? bias[i % C] : 0), i < n (fp32): the residual
 * connection after a row-parallel projection and its TP sum. Grid-stride,
 * 256 threads. */
__global__ void residual_kernel(float *x, const float *res, const float *bias, size_t n, int C)
{
    GRID_STRIDE(i, n)
    {
        x[i] += res[i] + (bias ? bias[i % C] : 0.f);
    }
}

static inline int k_residual(cudaStream_t s, float *x, const float *res, const float *bias,
                             size_t n, int C, err_t *err)
{
    residual_kernel<<<grid_for(n), 256, 0, s>>>(x, res, bias, n, C);
    KERNEL_CHECK();
    return ERR_OK;
}

/* ------------------------------------------------------------ MLP activations */

#define GELU_K 0.7978845608028654f /* sqrt(2 / pi) */

/* GELU, tanh approximation: out[i] = 0.5 x (1 + tanh(k (x + 0.044715 x^3))),
 * i < n. Grid-stride, 256 threads. */
template <typename T> __global__ void gelu_fwd_kernel(T *out, const T *inp, size_t n)
{
    GRID_STRIDE(i, n)
    {
        float x = to_f(inp[i]);
        float u = GELU_K * (x + 0.044715f * x * x * x);
        out[i] = from_f<T>(0.5f * x * (1.f + tanhf(u)));
    }
}

/* dinp[i] = gelu'(inp[i]) dout[i] (overwrites; the CPU adds into zeros). */
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

/* SwiGLU: gate_up [n, 2f] holds gate then up per row; out [n, f] =
 * silu(gate) up. Grid-stride over n*f (one output element per step). */
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

/* dgate_up [n, 2f] = (d gate, d up) of dout [n, f] (overwrites). */
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

template <typename T>
static inline int k_act_fwd(cudaStream_t s, bool swiglu, T *out, const T *fc, int n, int f,
                            err_t *err)
{
    size_t total = (size_t)n * f;
    if (swiglu)
        swiglu_fwd_kernel<T><<<grid_for(total), 256, 0, s>>>(out, fc, n, f);
    else
        gelu_fwd_kernel<T><<<grid_for(total), 256, 0, s>>>(out, fc, total);
    KERNEL_CHECK();
    return ERR_OK;
}

template <typename T>
static inline int k_act_bwd(cudaStream_t s, bool swiglu, T *dfc, const T *fc, const T *dact, int n,
                            int f, err_t *err)
{
    size_t total = (size_t)n * f;
    if (swiglu)
        swiglu_bwd_kernel<T><<<grid_for(total), 256, 0, s>>>(dfc, fc, dact, n, f);
    else
        gelu_bwd_kernel<T><<<grid_for(total), 256, 0, s>>>(dfc, fc, dact, total);
    KERNEL_CHECK();
    return ERR_OK;
}

/* ------------------------------------------------------------ rotary embedding */

/* Rotate-half RoPE in place on the q and k heads of qkv [n, (nh + 2 nkv) hd]
 * (row r at position r % t): for i < hd/2,
 *   x[i] = x1 cos - x2 sin', x[i + hd/2] = x2 cos + x1 sin',  sin' = sign sin,
 * sign +1 the forward rotation, -1 its inverse (the backward on dqkv).
 * cos_t, sin_t [t, hd/2] fp32 hold cos/sin(pos theta^(-2i/hd)) computed in
 * double on the host, as cpu_ops does. Grid-stride over n (nh + nkv) hd/2
 * (one rotated pair per step), 256 threads. */
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

template <typename T>
static inline int k_rope(cudaStream_t s, T *qkv, const float *cos_t, const float *sin_t, int n,
                         int t, int nh, int nkv, int hd, float sign, err_t *err)
{
    size_t total = (size_t)n * (nh + nkv) * (hd / 2);
    rope_kernel<T><<<grid_for(total), 256, 0, s>>>(qkv, cos_t, sin_t, n, t, nh, nkv, hd, sign);
    KERNEL_CHECK();
    return ERR_OK;
}

/* ------------------------------------------------------------ attention layout */

/* Split qkv [nb, t, (nh + 2 nkv) hd] into q, k, v [nb, nh, t, hd] for the
 * batched GEMMs; the K and V heads of a GQA group are repeated for each of
 * its nh / nkv query heads (head h reads K/V head h / group, as cpu_ops).
 * Grid-stride over nb nh t hd (element ((b nh + h) t + i) hd + d per step),
 * 256 threads. */
template <typename T>
__global__ void split_qkv_kernel(T *q, T *k, T *v, const T *qkv, int nb, int t, int nh, int nkv,
                                 int hd)
{
    size_t stride = (size_t)(nh + 2 * nkv) * hd;
    size_t total = (size_t)nb * nh * t * hd;
    int group = nh / nkv;
    GRID_STRIDE(idx, total)
    {
        int d = (int)(idx % hd);
        size_t rest = idx / hd;
        int i = (int)(rest % t);
        rest /= t;
        int h = (int)(rest % nh);
        size_t b = rest / nh;
        const T *row = qkv + (b * t + i) * stride;
        int kvh = h / group;
        q[idx] = row[(size_t)h * hd + d];
        k[idx] = row[(size_t)(nh + kvh) * hd + d];
        v[idx] = row[(size_t)(nh + nkv + kvh) * hd + d];
    }
}

/* heads [nb, nh, t, hd] <-> rows [nb, t, nh hd]: to_rows = true writes
 * rows[(b t + i) nh hd + h hd + d] = heads[((b nh + h) t + i) hd + d],
 * false the reverse. Grid-stride over nb nh t hd, 256 threads. */
template <typename T>
__global__ void heads_rows_kernel(T *rows, T *heads, int nb, int t, int nh, int hd, bool to_rows)
{
    size_t total = (size_t)nb * nh * t * hd;
    GRID_STRIDE(idx, total)
    {
        int d = (int)(idx % hd);
        size_t rest = idx / hd;
        int i = (int)(rest % t);
        rest /= t;
        int h = (int)(rest % nh);
        size_t b = rest / nh;
        size_t r = ((b * t + i) * nh + h) * hd + d;
        if (to_rows)
            rows[r] = heads[idx];
        else
            heads[idx] = rows[r];
    }
}

/* dqkv [nb, t, (nh + 2 nkv) hd] from dq, dk, dv [nb, nh, t, hd]: the q
 * part copied, each K/V head's gradient the sum over its group's query
 * heads in order of head (overwrites dqkv). Grid-stride over
 * nb t (nh + 2 nkv) hd (one dqkv element per step), 256 threads. */
template <typename T>
__global__ void merge_dqkv_kernel(T *dqkv, const T *dq, const T *dk, const T *dv, int nb, int t,
                                  int nh, int nkv, int hd)
{
    size_t stride = (size_t)(nh + 2 * nkv) * hd;
    size_t total = (size_t)nb * t * stride;
    int group = nh / nkv;
    GRID_STRIDE(idx, total)
    {
        size_t col = idx % stride, row = idx / stride;
        size_t b = row / t, i = row % t;
        int head = (int)(col / hd), d = (int)(col % hd);
        if (head < nh) {
            dqkv[idx] = dq[((b * nh + head) * t + i) * hd + d];
        } else {
            const T *src = head < nh + nkv ? dk : dv;
            int kvh = head < nh + nkv ? head - nh : head - nh - nkv;
            float acc = 0;
            for (int g = 0; g < group; g++)
                acc += to_f(src[((b * nh + (size_t)kvh * group + g) * t + i) * hd + d]);
            dqkv[idx] = from_f<T>(acc);
        }
    }
}

/* ------------------------------------------------------------ causal softmax */

/* In place on s [rows, t] (rows = nb nh t; row index % t is the query i):
 * scaled scores in, causal softmax out: p[j] = exp(s[j] - max) / sum over
 * j <= i, and p[j] = 0 for j > i (the PV GEMM reads whole rows).
 * Launch: one warp per row, 8 rows per 256-thread block, grid ceil(rows / 8). */
template <typename T> __global__ void softmax_fwd_kernel(T *s, size_t rows, int t)
{
    int lane = threadIdx.x % 32;
    size_t row = (size_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    if (row >= rows)
        return;
    int i = (int)(row % t);
    T *p = s + row * t;
    float m = -INFINITY, sum = 0;
    for (int j = lane; j <= i; j += 32) {
        float x = to_f(p[j]);
        if (x > m) {
            sum = (m == -INFINITY ? 0.f : sum * __expf(m - x)) + 1.f;
            m = x;
        } else {
            sum += __expf(x - m);
        }
    }
    warp_softmax_merge(m, sum);
    float inv = 1.f / sum;
    for (int j = lane; j < t; j += 32)
        p[j] = from_f<T>(j <= i ? __expf(to_f(p[j]) - m) * inv : 0.f);
}

/* In place on dp [rows, t]: dL/dP in, dL/dS out:
 * ds[j] = scale p[j] (dp[j] - sum_k p[k] dp[k]) for j <= i, 0 above.
 * p [rows, t] the forward's probabilities. Launch as softmax_fwd_kernel. */
template <typename T>
__global__ void softmax_bwd_kernel(T *dp, const T *p, size_t rows, int t, float scale)
{
    int lane = threadIdx.x % 32;
    size_t row = (size_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    if (row >= rows)
        return;
    int i = (int)(row % t);
    T *d = dp + row * t;
    const T *pr = p + row * t;
    float dot = 0;
    for (int j = lane; j <= i; j += 32)
        dot += to_f(pr[j]) * to_f(d[j]);
    dot = warp_sum(dot);
    for (int j = lane; j < t; j += 32)
        d[j] = from_f<T>(j <= i ? scale * to_f(pr[j]) * (to_f(d[j]) - dot) : 0.f);
}

template <typename T>
static inline int k_softmax_fwd(cudaStream_t s, T *scores, size_t rows, int t, err_t *err)
{
    unsigned grid = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    softmax_fwd_kernel<T><<<grid, 32 * ROWS_PER_BLOCK, 0, s>>>(scores, rows, t);
    KERNEL_CHECK();
    return ERR_OK;
}

template <typename T>
static inline int k_softmax_bwd(cudaStream_t s, T *dp, const T *p, size_t rows, int t, float scale,
                                err_t *err)
{
    unsigned grid = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    softmax_bwd_kernel<T><<<grid, 32 * ROWS_PER_BLOCK, 0, s>>>(dp, p, rows, t, scale);
    KERNEL_CHECK();
    return ERR_OK;
}

/* ------------------------------------------------------------ loss */

#define CE_THREADS 512

/* Fused softmax cross-entropy of logits [n, ld] (T; the first v columns are
 * the vocabulary): losses[r] = log sum_k exp(z_k - max) - (z_target - max)
 * (fp32), and the row is overwritten with its gradient
 * (softmax - onehot(target)) scale, scale = loss_scale / n. Columns [v, ld)
 * are never read or written.
 * Launch: one block of CE_THREADS (512) threads per row, grid n; threads
 * stride over the v columns, the block merges (max, sum) pairs through
 * shared memory (16 warps). */
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

/* ------------------------------------------------------------ gradient norm, AdamW */

#define SUMSQ_BLOCKS 1024

/* part[blockIdx.x] = sum of g[i]^2 (double) over i < n whose flags[i] has
 * bit 1 (counted in the norm). Launch: SUMSQ_BLOCKS blocks x 256 threads,
 * grid-stride; then sum_kernel<double> over the SUMSQ_BLOCKS partials. */
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

/* One AdamW update of n elements, as optim_adamw does it: g = grads scale;
 * m, v in fp32; bias-corrected ratio and decoupled weight decay (flags bit
 * 0) in double. p16 (bf16 mode) receives the new weights rounded to bf16,
 * NULL in fp32 mode. Grid-stride, 256 threads. */
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

#endif
