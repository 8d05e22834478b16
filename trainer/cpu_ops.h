/* cpu_ops: the transformer's operations on the CPU, forward and backward.
 *
 * Each operation exists in float (what the CPU trainer trains with) and in
 * double (the reference the gradient checks compare against); the two are
 * compiled from one implementation (cpu_ops_impl.inc). Conventions:
 *   - tensors are row-major; n is the number of token rows (batch x seq);
 *   - linear layers store weights as [out, in], y = x W^T + b (PyTorch);
 *   - every backward function ADDS into the gradients it writes (the
 *     caller zeroes them), and a NULL gradient pointer skips that output;
 *   - work is split over OpenMP threads so that each output element is
 *     summed by one thread in a fixed order: results do not depend on the
 *     number of threads, and a rerun is bit-for-bit the same.
 */
#ifndef SCALEPLAN_TRAINER_CPU_OPS_H
#define SCALEPLAN_TRAINER_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#define CPU_OPS_DECLARE(T, S)                                                                     \
    /* out[n, oc] = inp[n, c] w[oc, c]^T (+ bias[oc]) */                                         \
    void cpu_matmul_fwd##S(T *out, const T *inp, const T *w, const T *bias, int n, int c, int oc); \
    void cpu_matmul_bwd##S(T *dinp, T *dw, T *dbias, const T *dout, const T *inp, const T *w,     \
                           int n, int c, int oc);                                                 \
    /* LayerNorm over the last dimension c; keeps mean and 1/std per row */                      \
    void cpu_layernorm_fwd##S(T *out, T *mean, T *rstd, const T *inp, const T *w, const T *b,    \
                              int n, int c, double eps);                                          \
    void cpu_layernorm_bwd##S(T *dinp, T *dw, T *db, const T *dout, const T *inp, const T *w,    \
                              const T *mean, const T *rstd, int n, int c);                        \
    /* RMSNorm: x / sqrt(mean(x^2) + eps) * w */                                                  \
    void cpu_rmsnorm_fwd##S(T *out, T *rstd, const T *inp, const T *w, int n, int c, double eps); \
    void cpu_rmsnorm_bwd##S(T *dinp, T *dw, const T *dout, const T *inp, const T *w,             \
                            const T *rstd, int n, int c);                                         \
    /* GELU, tanh approximation (GPT-2's "gelu_new") */                                          \
    void cpu_gelu_fwd##S(T *out, const T *inp, size_t n);                                        \
    void cpu_gelu_bwd##S(T *dinp, const T *inp, const T *dout, size_t n);                        \
    /* SwiGLU: gate_up[n, 2f] holds gate then up; out[n, f] = silu(gate) * up */                 \
    void cpu_swiglu_fwd##S(T *out, const T *gate_up, int n, int f);                              \
    void cpu_swiglu_bwd##S(T *dgate_up, const T *gate_up, const T *dout, int n, int f);          \
    /* Rotary embedding in place on the q and k parts of qkv[b*t, (nh + 2 nkv) hd],        \
     * rotate-half convention (Hugging Face Llama), position = row % t */                        \
    void cpu_rope_fwd##S(T *qkv, int b, int t, int nh, int nkv, int hd, double theta);           \
    /* its backward: the inverse rotation of dqkv's q and k parts, in place */                   \
    void cpu_rope_bwd##S(T *dqkv, int b, int t, int nh, int nkv, int hd, double theta);          \
    /* Causal attention with grouped K/V heads: qkv[b*t, (nh + 2 nkv) hd] -> out[b*t, nh hd];   \
     * probs[b, nh, t, t] keeps the softmax for backward */                                     \
    void cpu_attention_fwd##S(T *out, T *probs, const T *qkv, int b, int t, int nh, int nkv,     \
                              int hd);                                                            \
    /* scratch: b * nkv * t elements */                                                           \
    void cpu_attention_bwd##S(T *dqkv, T *scratch, const T *dout, const T *qkv, const T *probs,  \
                              int b, int t, int nh, int nkv, int hd);                             \
    /* out[b*t, c] = wte[token] (+ wpe[position]); wpe may be NULL */                           \
    void cpu_embed_fwd##S(T *out, const int32_t *tokens, const T *wte, const T *wpe, int b,      \
                          int t, int c);                                                          \
    void cpu_embed_bwd##S(T *dwte, T *dwpe, const T *dout, const int32_t *tokens, int b, int t,  \
                          int c, int v);                                                          \
    /* Softmax cross-entropy: probs[n, v] = softmax(logits), losses[n] = -log p(target) */      \
    void cpu_crossentropy_fwd##S(T *probs, double *losses, const T *logits,                      \
                                 const int32_t *targets, int n, int v);                           \
    /* dlogits += (probs - onehot(target)) * scale */                                            \
    void cpu_crossentropy_bwd##S(T *dlogits, const T *probs, const int32_t *targets, int n,      \
                                 int v, double scale);

CPU_OPS_DECLARE(float, _f32)
CPU_OPS_DECLARE(double, _f64)

#endif
