/* kern_attn: attention kernels and their products (see kern_attn.h). */
#include "trainer/kern_attn.h"

#include <string.h>

#include "trainer/kern_device.cuh"

/* Split qkv [nb, t, (nh + 2 nkv) hd] into q, k, v [nb, nh, t, hd] for the
 * batched GEMMs; head h reads K/V head h / (nh / nkv), as cpu_ops.
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

/* In place on s [rows, t] (rows = nb nh t; row index % t is the query i):
 * scaled scores in, causal softmax out: p[j] = exp(s[j] - max) / sum over
 * j <= i, and p[j] = 0 for j > i (the PV GEMM reads whole rows).
 * Launch: one warp per row, 8 rows per 256-thread block. */
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

/* One strided-batched product over the nb x nh (batch, head) pairs, each
 * member's matrices t x hd or t x t row-major; see the call sites. */
static int attn_gemm(gemm_t *g, cudaStream_t s, kern_dtype_t dt, int batch, bool ta, bool tb,
                     int m_, int n_, int k_, const void *A, int lda, long long sa, const void *Bm,
                     int ldb, long long sb, void *D, int ldd, long long sd, float alpha, err_t *err)
{
    gemm_args_t a;
    memset(&a, 0, sizeof a);
    a.trans_a = ta, a.trans_b = tb;
    a.m = m_, a.n = n_, a.k = k_;
    a.a = A, a.lda = lda, a.stride_a = sa;
    a.b = Bm, a.ldb = ldb, a.stride_b = sb;
    a.d = D, a.ldd = ldd, a.stride_d = sd;
    a.batch = batch;
    a.alpha = alpha, a.beta = 0;
    a.ab_type = dt;
    a.d_type = dt;
    return gemm_run(g, &a, s, err);
}

template <typename T>
static int attention_fwd(gemm_t *g, cudaStream_t s, kern_dtype_t dt, T *att, T *probs,
                         const T *qkv, const kern_attn_scratch_t *sc, int B, int t, int nh,
                         int nkv, int hd, err_t *err)
{
    size_t heads = (size_t)B * nh * t * hd;
    long long st_h = (long long)t * hd, st_p = (long long)t * t;
    int batch = B * nh;
    split_qkv_kernel<T>
        <<<grid_for(heads), 256, 0, s>>>((T *)sc->q, (T *)sc->k, (T *)sc->v, qkv, B, t, nh, nkv, hd);
    KERNEL_CHECK();
    /* S[i][j] = scale q_i . k_j: column-major S^T (t_k x t_q, ld t) = K (stored hd x t,
     * transposed) x Q (stored hd x t) */
    TRY(attn_gemm(g, s, dt, batch, true, false, t, t, hd, sc->k, hd, st_h, sc->q, hd, st_h, probs,
                  t, st_p, (float)(1.0 / sqrt((double)hd)), err));
    softmax_fwd_kernel<T><<<row_blocks((size_t)batch * t), 32 * ROWS_PER_BLOCK, 0, s>>>(
        probs, (size_t)batch * t, t);
    KERNEL_CHECK();
    /* Y[i][d] = sum_j P[i][j] V[j][d]: Y^T (hd x t) = V^T (stored hd x t) x P^T (stored t x t) */
    TRY(attn_gemm(g, s, dt, batch, false, false, hd, t, t, sc->v, hd, st_h, probs, t, st_p, sc->y,
                  hd, st_h, 1.f, err));
    heads_rows_kernel<T><<<grid_for(heads), 256, 0, s>>>(att, (T *)sc->y, B, t, nh, hd, true);
    KERNEL_CHECK();
    return ERR_OK;
}

template <typename T>
static int attention_bwd(gemm_t *g, cudaStream_t s, kern_dtype_t dt, T *dqkv, const T *datt,
                         const T *qkv, const T *probs, const kern_attn_scratch_t *sc, int B, int t,
                         int nh, int nkv, int hd, err_t *err)
{
    size_t heads = (size_t)B * nh * t * hd;
    long long st_h = (long long)t * hd, st_p = (long long)t * t;
    int batch = B * nh;
    /* y := dY in heads */
    heads_rows_kernel<T>
        <<<grid_for(heads), 256, 0, s>>>((T *)datt, (T *)sc->y, B, t, nh, hd, false);
    KERNEL_CHECK();
    split_qkv_kernel<T>
        <<<grid_for(heads), 256, 0, s>>>((T *)sc->q, (T *)sc->k, (T *)sc->v, qkv, B, t, nh, nkv, hd);
    KERNEL_CHECK();
    /* dP[i][j] = dY_i . V_j: dP^T (t x t) = V (stored hd x t, transposed) x dY (stored hd x t) */
    TRY(attn_gemm(g, s, dt, batch, true, false, t, t, hd, sc->v, hd, st_h, sc->y, hd, st_h, sc->dp,
                  t, st_p, 1.f, err));
    /* dV[j][d] = sum_i P[i][j] dY[i][d]: dV^T (hd x t) = dY^T (stored hd x t) x op(P^T stored) */
    TRY(attn_gemm(g, s, dt, batch, false, true, hd, t, t, sc->y, hd, st_h, probs, t, st_p, sc->dv,
                  hd, st_h, 1.f, err));
    /* dp := dS */
    softmax_bwd_kernel<T><<<row_blocks((size_t)batch * t), 32 * ROWS_PER_BLOCK, 0, s>>>(
        (T *)sc->dp, probs, (size_t)batch * t, t, (float)(1.0 / sqrt((double)hd)));
    KERNEL_CHECK();
    /* dQ[i][d] = sum_j dS[i][j] K[j][d]: dQ^T = K^T (stored hd x t) x dS^T (stored t x t) */
    TRY(attn_gemm(g, s, dt, batch, false, false, hd, t, t, sc->k, hd, st_h, sc->dp, t, st_p, sc->dq,
                  hd, st_h, 1.f, err));
    /* dK[j][d] = sum_i dS[i][j] Q[i][d]: dK^T = Q^T (stored hd x t) x op(dS^T stored) */
    TRY(attn_gemm(g, s, dt, batch, false, true, hd, t, t, sc->q, hd, st_h, sc->dp, t, st_p, sc->dk,
                  hd, st_h, 1.f, err));
    size_t total = (size_t)B * t * (nh + 2 * nkv) * hd;
    merge_dqkv_kernel<T><<<grid_for(total), 256, 0, s>>>(
        dqkv, (const T *)sc->dq, (const T *)sc->dk, (const T *)sc->dv, B, t, nh, nkv, hd);
    KERNEL_CHECK();
    return ERR_OK;
}

extern "C" int kern_attention_fwd(gemm_t *g, kern_stream_t s, kern_dtype_t t, void *att,
                                  void *probs, const void *qkv, const kern_attn_scratch_t *sc,
                                  int nb, int seq, int nh, int nkv, int hd, err_t *err)
{
    if (nkv < 1 || nh % nkv)
        return err_set(err, ERR_RUNTIME, "kern_attention_fwd: %d heads over %d K/V heads", nh, nkv);
    if (t == KERN_BF16)
        return attention_fwd<bf16>(g, s, t, (bf16 *)att, (bf16 *)probs, (const bf16 *)qkv, sc, nb,
                                   seq, nh, nkv, hd, err);
    return attention_fwd<float>(g, s, t, (float *)att, (float *)probs, (const float *)qkv, sc, nb,
                                seq, nh, nkv, hd, err);
}

extern "C" int kern_attention_bwd(gemm_t *g, kern_stream_t s, kern_dtype_t t, void *dqkv,
                                  const void *datt, const void *qkv, const void *probs,
                                  const kern_attn_scratch_t *sc, int nb, int seq, int nh, int nkv,
                                  int hd, err_t *err)
{
    if (nkv < 1 || nh % nkv)
        return err_set(err, ERR_RUNTIME, "kern_attention_bwd: %d heads over %d K/V heads", nh, nkv);
    if (t == KERN_BF16)
        return attention_bwd<bf16>(g, s, t, (bf16 *)dqkv, (const bf16 *)datt, (const bf16 *)qkv,
                                   (const bf16 *)probs, sc, nb, seq, nh, nkv, hd, err);
    return attention_bwd<float>(g, s, t, (float *)dqkv, (const float *)datt, (const float *)qkv,
                                (const float *)probs, sc, nb, seq, nh, nkv, hd, err);
}
