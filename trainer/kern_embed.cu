/* kern_embed: embedding kernels (see kern_embed.h). */
#include "trainer/kern_embed.h"

#include "trainer/kern_device.cuh"

/* Grid-stride over n*C, 256 threads. */
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

extern "C" int kern_embed_fwd(kern_stream_t s, float *out, const int32_t *tok, const float *wte,
                              const float *wpe, int n, int t, int C, err_t *err)
{
    embed_fwd_kernel<<<grid_for((size_t)n * C), 256, 0, s>>>(out, tok, wte, wpe, n, t, C);
    KERNEL_CHECK();
    return ERR_OK;
}

extern "C" void kern_embed_group(const int32_t *tokens, int n, int32_t *count, int32_t *rows,
                                 int32_t *start, int32_t *uniq, int *n_uniq)
{
    int U = 0;
    for (int r = 0; r < n; r++)
        if (count[tokens[r]]++ == 0)
            uniq[U++] = tokens[r];
    start[0] = 0;
    for (int u = 0; u < U; u++) {
        start[u + 1] = start[u] + count[uniq[u]];
        count[uniq[u]] = start[u]; /* now the next free slot of that token */
    }
    for (int r = 0; r < n; r++)
        rows[count[tokens[r]]++] = r;
    for (int u = 0; u < U; u++)
        count[uniq[u]] = 0;
    *n_uniq = U;
}

/* Grid: n_uniq blocks x 256 threads; threads stride over the C channels and
 * each sums its token's rows in increasing order. */
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

extern "C" int kern_embed_bwd(kern_stream_t s, float *dwte, float *dwpe, const float *dx,
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
