/* cpu_ops: every operation's backward against finite differences.
 *
 * For each op, a scalar loss L = sum(out * R) with fixed random R is
 * differentiated two ways: the float backward (what the trainer uses) and
 * central finite differences of the double forward (step 1e-6, error far
 * below the tolerance). The acceptance bar is a relative error (norm of the
 * difference over the norm of the reference) below 1e-4 for every input of
 * every op; the double backward must agree to 1e-7.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "trainer/cpu_ops.h"

#include "tests/testing.h"

#define FD_STEP 1e-6

static void fill(double *x, size_t n, uint64_t stream, double scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = scale * ((double)(rng_mix(77, stream * 1000003u + i) >> 11) / 9007199254740992.0 * 2 - 1);
}

static float *to_f32(const double *x, size_t n)
{
    float *y = malloc((n ? n : 1) * sizeof *y);
    for (size_t i = 0; i < n; i++)
        y[i] = (float)x[i];
    return y;
}

static double rel_err_f32(const float *a, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - ref[i]) * ((double)a[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num) / (sqrt(den) > 1e-30 ? sqrt(den) : 1e-30);
}

static double rel_err_f64(const double *a, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (a[i] - ref[i]) * (a[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num) / (sqrt(den) > 1e-30 ? sqrt(den) : 1e-30);
}

/* An op under test: its inputs (double), a double forward loss, and the
 * float and double backward. */
typedef struct op_case op_case_t;
struct op_case {
    const char *name;
    int n_inputs;
    double *in[4];
    size_t in_n[4];
    const char *in_name[4];
    double (*loss64)(op_case_t *c);
    /* gradients of L wrt each input, float and double */
    void (*grad32)(op_case_t *c, float **g);
    void (*grad64)(op_case_t *c, double **g);
    int dims[8];
    double *r; /* the fixed weights of the loss */
    size_t out_n;
    int32_t *tokens;
};

static double dotr(const double *out, const double *r, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += out[i] * r[i];
    return s;
}

static void check_case(op_case_t *c)
{
    for (int k = 0; k < c->n_inputs; k++) {
        size_t n = c->in_n[k];
        double *fd = calloc(n, sizeof *fd);
        for (size_t i = 0; i < n; i++) {
            double v = c->in[k][i];
            c->in[k][i] = v + FD_STEP;
            double lp = c->loss64(c);
            c->in[k][i] = v - FD_STEP;
            double lm = c->loss64(c);
            c->in[k][i] = v;
            fd[i] = (lp - lm) / (2 * FD_STEP);
        }
        float *g32[4] = {0};
        double *g64[4] = {0};
        for (int j = 0; j < c->n_inputs; j++) {
            g32[j] = calloc(c->in_n[j], sizeof(float));
            g64[j] = calloc(c->in_n[j], sizeof(double));
        }
        c->grad32(c, g32);
        c->grad64(c, g64);
        double e32 = rel_err_f32(g32[k], fd, n), e64 = rel_err_f64(g64[k], fd, n);
        if (!(e32 < 1e-4) || !(e64 < 1e-7))
            fprintf(stderr, "\n  %s d/d%s: float rel err %.2e, double %.2e\n", c->name,
                    c->in_name[k], e32, e64);
        CU_ASSERT(e32 < 1e-4);
        CU_ASSERT(e64 < 1e-7);
        for (int j = 0; j < c->n_inputs; j++) {
            free(g32[j]);
            free(g64[j]);
        }
        free(fd);
    }
}

/* ------------------------------------------------------------ matmul */

static double matmul_loss(op_case_t *c)
{
    int n = c->dims[0], ch = c->dims[1], oc = c->dims[2];
    double *out = malloc((size_t)n * oc * sizeof *out);
    cpu_matmul_fwd_f64(out, c->in[0], c->in[1], c->in[2], n, ch, oc);
    double l = dotr(out, c->r, (size_t)n * oc);
    free(out);
    return l;
}

static void matmul_g32(op_case_t *c, float **g)
{
    int n = c->dims[0], ch = c->dims[1], oc = c->dims[2];
    float *x = to_f32(c->in[0], c->in_n[0]), *w = to_f32(c->in[1], c->in_n[1]),
          *r = to_f32(c->r, (size_t)n * oc);
    cpu_matmul_bwd_f32(g[0], g[1], g[2], r, x, w, n, ch, oc);
    free(x), free(w), free(r);
}

static void matmul_g64(op_case_t *c, double **g)
{
    int n = c->dims[0], ch = c->dims[1], oc = c->dims[2];
    cpu_matmul_bwd_f64(g[0], g[1], g[2], c->r, c->in[0], c->in[1], n, ch, oc);
}

static void test_matmul_grad(void)
{
    int n = 9, ch = 13, oc = 7;
    double x[9 * 13], w[7 * 13], b[7], r[9 * 7];
    fill(x, sizeof x / sizeof *x, 1, 1), fill(w, sizeof w / sizeof *w, 2, 0.5);
    fill(b, 7, 3, 0.2), fill(r, sizeof r / sizeof *r, 4, 1);
    op_case_t c = {.name = "matmul", .n_inputs = 3, .in = {x, w, b},
                   .in_n = {sizeof x / sizeof *x, sizeof w / sizeof *w, 7},
                   .in_name = {"inp", "w", "bias"}, .loss64 = matmul_loss, .grad32 = matmul_g32,
                   .grad64 = matmul_g64, .dims = {n, ch, oc}, .r = r};
    check_case(&c);
    /* and the forward itself against a hand-written product */
    double out[9 * 7];
    cpu_matmul_fwd_f64(out, x, w, b, n, ch, oc);
    double s = b[3];
    for (int k = 0; k < ch; k++)
        s += x[5 * ch + k] * w[3 * ch + k];
    CHECK_REL(out[5 * oc + 3], s, 1e-12);
}

/* ------------------------------------------------------------ norms */

static double norm_loss(op_case_t *c)
{
    int n = c->dims[0], ch = c->dims[1], rms = c->dims[2];
    double *out = malloc((size_t)n * ch * sizeof *out), mean[16], rstd[16];
    if (rms)
        cpu_rmsnorm_fwd_f64(out, rstd, c->in[0], c->in[1], n, ch, 1e-5);
    else
        cpu_layernorm_fwd_f64(out, mean, rstd, c->in[0], c->in[1], c->in[2], n, ch, 1e-5);
    double l = dotr(out, c->r, (size_t)n * ch);
    free(out);
    return l;
}

static void norm_g32(op_case_t *c, float **g)
{
    int n = c->dims[0], ch = c->dims[1], rms = c->dims[2];
    float *x = to_f32(c->in[0], c->in_n[0]), *w = to_f32(c->in[1], c->in_n[1]),
          *b = to_f32(c->in[2], c->in_n[2]), *r = to_f32(c->r, (size_t)n * ch);
    float *out = malloc((size_t)n * ch * sizeof *out), mean[16], rstd[16];
    if (rms) {
        cpu_rmsnorm_fwd_f32(out, rstd, x, w, n, ch, 1e-5);
        cpu_rmsnorm_bwd_f32(g[0], g[1], r, x, w, rstd, n, ch);
    } else {
        cpu_layernorm_fwd_f32(out, mean, rstd, x, w, b, n, ch, 1e-5);
        cpu_layernorm_bwd_f32(g[0], g[1], g[2], r, x, w, mean, rstd, n, ch);
    }
    free(x), free(w), free(b), free(r), free(out);
}

static void norm_g64(op_case_t *c, double **g)
{
    int n = c->dims[0], ch = c->dims[1], rms = c->dims[2];
    double *out = malloc((size_t)n * ch * sizeof *out), mean[16], rstd[16];
    if (rms) {
        cpu_rmsnorm_fwd_f64(out, rstd, c->in[0], c->in[1], n, ch, 1e-5);
        cpu_rmsnorm_bwd_f64(g[0], g[1], c->r, c->in[0], c->in[1], rstd, n, ch);
    } else {
        cpu_layernorm_fwd_f64(out, mean, rstd, c->in[0], c->in[1], c->in[2], n, ch, 1e-5);
        cpu_layernorm_bwd_f64(g[0], g[1], g[2], c->r, c->in[0], c->in[1], mean, rstd, n, ch);
    }
    free(out);
}

static void test_norm_grads(void)
{
    for (int rms = 0; rms <= 1; rms++) {
        int n = 6, ch = 11;
        double x[6 * 11], w[11], b[11], r[6 * 11];
        fill(x, sizeof x / sizeof *x, 5, 2), fill(w, 11, 6, 1), fill(b, 11, 7, 0.3);
        fill(r, sizeof r / sizeof *r, 8, 1);
        for (int k = 0; k < 11; k++)
            w[k] += 1; /* weights near 1, as trained norms are */
        op_case_t c = {.name = rms ? "rmsnorm" : "layernorm", .n_inputs = rms ? 2 : 3,
                       .in = {x, w, b}, .in_n = {sizeof x / sizeof *x, 11, 11},
                       .in_name = {"inp", "w", "b"}, .loss64 = norm_loss, .grad32 = norm_g32,
                       .grad64 = norm_g64, .dims = {n, ch, rms}, .r = r};
        check_case(&c);
    }
}

/* ------------------------------------------------------------ activations */

static double act_loss(op_case_t *c)
{
    int n = c->dims[0], f = c->dims[1], swiglu = c->dims[2];
    size_t out_n = swiglu ? (size_t)n * f : (size_t)n * f;
    double *out = malloc(out_n * sizeof *out);
    if (swiglu)
        cpu_swiglu_fwd_f64(out, c->in[0], n, f);
    else
        cpu_gelu_fwd_f64(out, c->in[0], out_n);
    double l = dotr(out, c->r, out_n);
    free(out);
    return l;
}

static void act_g32(op_case_t *c, float **g)
{
    int n = c->dims[0], f = c->dims[1], swiglu = c->dims[2];
    float *x = to_f32(c->in[0], c->in_n[0]), *r = to_f32(c->r, (size_t)n * f);
    if (swiglu)
        cpu_swiglu_bwd_f32(g[0], x, r, n, f);
    else
        cpu_gelu_bwd_f32(g[0], x, r, (size_t)n * f);
    free(x), free(r);
}

static void act_g64(op_case_t *c, double **g)
{
    int n = c->dims[0], f = c->dims[1], swiglu = c->dims[2];
    if (swiglu)
        cpu_swiglu_bwd_f64(g[0], c->in[0], c->r, n, f);
    else
        cpu_gelu_bwd_f64(g[0], c->in[0], c->r, (size_t)n * f);
}

static void test_activation_grads(void)
{
    for (int swiglu = 0; swiglu <= 1; swiglu++) {
        int n = 5, f = 8;
        double x[5 * 16], r[5 * 8];
        size_t xn = swiglu ? 5 * 16 : 5 * 8;
        fill(x, xn, 9, 3), fill(r, 40, 10, 1);
        op_case_t c = {.name = swiglu ? "swiglu" : "gelu", .n_inputs = 1, .in = {x},
                       .in_n = {xn}, .in_name = {"inp"}, .loss64 = act_loss, .grad32 = act_g32,
                       .grad64 = act_g64, .dims = {n, f, swiglu}, .r = r};
        check_case(&c);
    }
    /* GELU(1) with the tanh approximation: 0.5 (1 + tanh(0.79788 x 1.044715)) */
    double one = 1, y;
    cpu_gelu_fwd_f64(&y, &one, 1);
    CHECK_REL(y, 0.5 * (1 + tanh(0.7978845608028654 * 1.044715)), 1e-14);
}

/* ------------------------------------------------------------ rope, attention */

static double rope_loss(op_case_t *c)
{
    int b = c->dims[0], t = c->dims[1], nh = c->dims[2], nkv = c->dims[3], hd = c->dims[4];
    size_t n = c->in_n[0];
    double *x = malloc(n * sizeof *x);
    memcpy(x, c->in[0], n * sizeof *x);
    cpu_rope_fwd_f64(x, b, t, nh, nkv, hd, 10000);
    double l = dotr(x, c->r, n);
    free(x);
    return l;
}

static void rope_g32(op_case_t *c, float **g)
{
    int b = c->dims[0], t = c->dims[1], nh = c->dims[2], nkv = c->dims[3], hd = c->dims[4];
    size_t n = c->in_n[0];
    float *r = to_f32(c->r, n);
    memcpy(g[0], r, n * sizeof(float));
    cpu_rope_bwd_f32(g[0], b, t, nh, nkv, hd, 10000);
    free(r);
}

static void rope_g64(op_case_t *c, double **g)
{
    int b = c->dims[0], t = c->dims[1], nh = c->dims[2], nkv = c->dims[3], hd = c->dims[4];
    memcpy(g[0], c->r, c->in_n[0] * sizeof(double));
    cpu_rope_bwd_f64(g[0], b, t, nh, nkv, hd, 10000);
}

static double attn_loss(op_case_t *c)
{
    int b = c->dims[0], t = c->dims[1], nh = c->dims[2], nkv = c->dims[3], hd = c->dims[4];
    size_t on = (size_t)b * t * nh * hd;
    double *out = malloc(on * sizeof *out), *p = malloc((size_t)b * nh * t * t * sizeof *p);
    cpu_attention_fwd_f64(out, p, c->in[0], b, t, nh, nkv, hd);
    double l = dotr(out, c->r, on);
    free(out), free(p);
    return l;
}

static void attn_g32(op_case_t *c, float **g)
{
    int b = c->dims[0], t = c->dims[1], nh = c->dims[2], nkv = c->dims[3], hd = c->dims[4];
    size_t on = (size_t)b * t * nh * hd;
    float *x = to_f32(c->in[0], c->in_n[0]), *r = to_f32(c->r, on);
    float *out = malloc(on * sizeof *out), *p = malloc((size_t)b * nh * t * t * sizeof *p);
    float *scratch = malloc((size_t)b * nkv * t * sizeof *scratch);
    cpu_attention_fwd_f32(out, p, x, b, t, nh, nkv, hd);
    cpu_attention_bwd_f32(g[0], scratch, r, x, p, b, t, nh, nkv, hd);
    free(x), free(r), free(out), free(p), free(scratch);
}

static void attn_g64(op_case_t *c, double **g)
{
    int b = c->dims[0], t = c->dims[1], nh = c->dims[2], nkv = c->dims[3], hd = c->dims[4];
    size_t on = (size_t)b * t * nh * hd;
    double *out = malloc(on * sizeof *out), *p = malloc((size_t)b * nh * t * t * sizeof *p);
    double *scratch = malloc((size_t)b * nkv * t * sizeof *scratch);
    cpu_attention_fwd_f64(out, p, c->in[0], b, t, nh, nkv, hd);
    cpu_attention_bwd_f64(g[0], scratch, c->r, c->in[0], p, b, t, nh, nkv, hd);
    free(out), free(p), free(scratch);
}

static void test_rope_and_attention_grads(void)
{
    int b = 2, t = 5, nh = 4, nkv = 2, hd = 6;
    size_t n = (size_t)b * t * (nh + 2 * nkv) * hd;
    double *x = malloc(n * sizeof *x), *r = malloc(n * sizeof *r);
    fill(x, n, 11, 1), fill(r, n, 12, 1);
    op_case_t c = {.name = "rope", .n_inputs = 1, .in = {x}, .in_n = {n},
                   .in_name = {"qkv"}, .loss64 = rope_loss, .grad32 = rope_g32,
                   .grad64 = rope_g64, .dims = {b, t, nh, nkv, hd}, .r = r};
    check_case(&c);
    op_case_t a = {.name = "attention (GQA, causal)", .n_inputs = 1, .in = {x}, .in_n = {n},
                   .in_name = {"qkv"}, .loss64 = attn_loss, .grad32 = attn_g32,
                   .grad64 = attn_g64, .dims = {b, t, nh, nkv, hd}, .r = r};
    check_case(&a);
    /* the first query sees only itself: its output is its own value */
    double out[2 * 5 * 4 * 6], p[2 * 4 * 5 * 5];
    cpu_attention_fwd_f64(out, p, x, b, t, nh, nkv, hd);
    size_t stride = (size_t)(nh + 2 * nkv) * hd;
    CHECK_REL(out[3 * hd + 2], x[(size_t)(nh + nkv + 1) * hd + 2], 1e-12); /* head 3 -> kv 1 */
    CHECK_REL(p[0], 1.0, 1e-12);
    (void)stride;
    /* rope is a rotation: norms kept */
    double *y = malloc(n * sizeof *y);
    memcpy(y, x, n * sizeof *y);
    cpu_rope_fwd_f64(y, b, t, nh, nkv, hd, 10000);
    double nx = 0, ny = 0;
    for (size_t i = 0; i < n; i++)
        nx += x[i] * x[i], ny += y[i] * y[i];
    CHECK_REL(ny, nx, 1e-12);
    free(x), free(r), free(y);
}

/* ------------------------------------------------------------ embedding, loss */

static double embed_loss(op_case_t *c)
{
    int b = c->dims[0], t = c->dims[1], ch = c->dims[2];
    size_t on = (size_t)b * t * ch;
    double *out = malloc(on * sizeof *out);
    cpu_embed_fwd_f64(out, c->tokens, c->in[0], c->in[1], b, t, ch);
    double l = dotr(out, c->r, on);
    free(out);
    return l;
}

static void embed_g32(op_case_t *c, float **g)
{
    int b = c->dims[0], t = c->dims[1], ch = c->dims[2], v = c->dims[3];
    float *r = to_f32(c->r, (size_t)b * t * ch);
    cpu_embed_bwd_f32(g[0], g[1], r, c->tokens, b, t, ch, v);
    free(r);
}

static void embed_g64(op_case_t *c, double **g)
{
    int b = c->dims[0], t = c->dims[1], ch = c->dims[2], v = c->dims[3];
    cpu_embed_bwd_f64(g[0], g[1], c->r, c->tokens, b, t, ch, v);
}

static double ce_loss(op_case_t *c)
{
    int n = c->dims[0], v = c->dims[1];
    double *p = malloc((size_t)n * v * sizeof *p), losses[8];
    cpu_crossentropy_fwd_f64(p, losses, c->in[0], c->tokens, n, v);
    double l = 0;
    for (int i = 0; i < n; i++)
        l += losses[i] * c->r[i];
    free(p);
    return l;
}

static void ce_g32(op_case_t *c, float **g)
{
    int n = c->dims[0], v = c->dims[1];
    float *z = to_f32(c->in[0], c->in_n[0]), *p = malloc((size_t)n * v * sizeof *p);
    double losses[8];
    cpu_crossentropy_fwd_f32(p, losses, z, c->tokens, n, v);
    /* per-row weights: the op takes one scale, so run it row by row */
    for (int i = 0; i < n; i++)
        cpu_crossentropy_bwd_f32(g[0] + (size_t)i * v, p + (size_t)i * v, c->tokens + i, 1, v,
                                 c->r[i]);
    free(z), free(p);
}

static void ce_g64(op_case_t *c, double **g)
{
    int n = c->dims[0], v = c->dims[1];
    double *p = malloc((size_t)n * v * sizeof *p), losses[8];
    cpu_crossentropy_fwd_f64(p, losses, c->in[0], c->tokens, n, v);
    for (int i = 0; i < n; i++)
        cpu_crossentropy_bwd_f64(g[0] + (size_t)i * v, p + (size_t)i * v, c->tokens + i, 1, v,
                                 c->r[i]);
    free(p);
}

static void test_embedding_and_loss_grads(void)
{
    int b = 2, t = 4, ch = 5, v = 7;
    int32_t tok[8] = {3, 1, 3, 6, 0, 3, 2, 1};
    double wte[7 * 5], wpe[4 * 5], r[8 * 5];
    fill(wte, 35, 13, 1), fill(wpe, 20, 14, 1), fill(r, 40, 15, 1);
    op_case_t c = {.name = "embedding", .n_inputs = 2, .in = {wte, wpe}, .in_n = {35, 20},
                   .in_name = {"wte", "wpe"}, .loss64 = embed_loss, .grad32 = embed_g32,
                   .grad64 = embed_g64, .dims = {b, t, ch, v}, .r = r, .tokens = tok};
    check_case(&c);
    double z[8 * 7], w8[8];
    fill(z, 56, 16, 3), fill(w8, 8, 17, 1);
    op_case_t e = {.name = "cross-entropy", .n_inputs = 1, .in = {z}, .in_n = {56},
                   .in_name = {"logits"}, .loss64 = ce_loss, .grad32 = ce_g32, .grad64 = ce_g64,
                   .dims = {8, 7}, .r = w8, .tokens = tok};
    check_case(&e);
    /* uniform logits: loss ln(v) */
    double zero[7] = {0}, p[7], loss;
    int32_t target = 2;
    cpu_crossentropy_fwd_f64(p, &loss, zero, &target, 1, 7);
    CHECK_REL(loss, log(7.0), 1e-14);
}

TEST_SUITE(suite_cpu_ops, "cpu_ops", TEST(test_matmul_grad), TEST(test_norm_grads),
           TEST(test_activation_grads), TEST(test_rope_and_attention_grads),
           TEST(test_embedding_and_loss_grads));
