#include "trainer/gpt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/rng.h"
#include "models/flops.h"
#include "trainer/cpu_ops.h"

/* GPT-2 / Megatron initialisation: weights normal(0, 0.02), the two
 * projections back into the residual stream scaled by 1/sqrt(2L) (GPT-2
 * paper, section 2.3), norms 1, biases 0. */
#define INIT_STD 0.02
#define PI 3.14159265358979323846

typedef struct {
    gpt_t *m;
    size_t next;
    int cap;
    err_t *err;
} builder_t;

/* Add a tensor of full shape full_rows x full_cols; returns its offset. */
static size_t add(builder_t *b, const char *name, int layer, int full_rows, int full_cols,
                  gpt_split_t split, const int *segments, int n_segments, double std, double value,
                  bool decay)
{
    gpt_t *m = b->m;
    if (m->n_tensors == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        gpt_tensor_t *t = realloc(m->tensors, (size_t)cap * sizeof *t);
        if (!t)
            return GPT_ABSENT;
        m->tensors = t;
        b->cap = cap;
    }
    gpt_tensor_t *t = &m->tensors[m->n_tensors++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->layer = layer;
    t->full_rows = full_rows;
    t->full_cols = full_cols;
    t->split = m->tp > 1 ? split : GPT_SPLIT_NONE;
    t->rows = t->split == GPT_SPLIT_COLUMN ? full_rows / m->tp : full_rows;
    t->cols = t->split == GPT_SPLIT_ROW ? full_cols / m->tp : full_cols;
    t->n_segments = n_segments > 0 ? n_segments : 1;
    for (int s = 0; s < t->n_segments; s++)
        t->segment[s] = n_segments > 0 ? segments[s] : full_rows;
    t->init_std = std;
    t->init_value = value;
    t->decay = decay;
    t->offset = b->next;
    t->size = (size_t)t->rows * (size_t)t->cols;
    b->next += t->size;
    return t->offset;
}

static int check_split(const model_t *a, int tp, err_t *err)
{
    if (tp < 1)
        return err_setf(err, ERR_INPUT, NULL, "--tp", "must be at least 1 (got %d)", tp);
    const char *extra = model_trainer_unsupported(a);
    if (extra)
        return err_setf(err, ERR_INPUT, a->name, NULL,
                        "the reference trainer builds GPT- and Llama-style dense blocks; "
                        "this model has %s",
                        extra);
    if (a->n_heads % tp != 0)
        return err_setf(err, ERR_INPUT, a->name, "num_attention_heads",
                        "%d heads do not split over TP %d", a->n_heads, tp);
    if (a->n_kv_heads % tp != 0)
        return err_setf(err, ERR_INPUT, a->name, "num_key_value_heads",
                        "%d key/value heads do not split over TP %d", a->n_kv_heads, tp);
    if (a->ffn % tp != 0)
        return err_setf(err, ERR_INPUT, a->name, "intermediate_size",
                        "FFN width %d does not split over TP %d", a->ffn, tp);
    if (a->pos == MODEL_POS_ROPE && a->head_dim % 2 != 0)
        return err_setf(err, ERR_INPUT, a->name, "head_dim",
                        "rotary embeddings need an even head size (got %d)", a->head_dim);
    return ERR_OK;
}

int gpt_create(const model_t *arch, int tp, int tp_rank, gpt_t *m, err_t *err)
{
    memset(m, 0, sizeof *m);
    int rc = check_split(arch, tp, err);
    if (rc)
        return rc;
    m->arch = *arch;
    m->gpt_style = arch->norm == MODEL_NORM_LAYERNORM;
    m->n_layers = arch->n_layers;
    m->hidden = arch->hidden;
    m->vocab = arch->vocab;
    m->max_seq = arch->max_seq;
    m->n_heads = arch->n_heads;
    m->n_kv_heads = arch->n_kv_heads;
    m->head_dim = arch->head_dim;
    m->ffn = arch->ffn;
    m->tp = tp;
    m->tp_rank = tp_rank;
    m->heads_local = arch->n_heads / tp;
    m->kv_heads_local = arch->n_kv_heads / tp;
    m->ffn_local = arch->ffn / tp;
    m->qkv_local = (m->heads_local + 2 * m->kv_heads_local) * m->head_dim;
    bool swiglu = arch->mlp == MODEL_MLP_SWIGLU;
    m->fc_local = swiglu ? 2 * m->ffn_local : m->ffn_local;
    m->eps = arch->norm_eps > 0 ? arch->norm_eps : 1e-5;
    m->rope_theta = arch->rope_theta > 0 ? arch->rope_theta : 10000.0;
    m->tied = arch->tied_embeddings;
    m->qkv_bias = arch->qkv_bias;
    m->out_bias = arch->out_bias;
    m->mlp_bias = arch->mlp_bias;
    m->layers = calloc((size_t)m->n_layers, sizeof *m->layers);
    if (!m->layers)
        return err_set(err, ERR_RUNTIME, "out of memory");
    builder_t b = {m, 0, 0, err};
    int C = m->hidden, L = m->n_layers;
    int q = m->n_heads * m->head_dim, kv = m->n_kv_heads * m->head_dim;
    int qkv_seg[3] = {q, kv, kv};
    int fc_seg[2] = {m->ffn, m->ffn};
    double proj_std = INIT_STD / sqrt(2.0 * L);
    bool layernorm = m->gpt_style;
    m->wte = add(&b, "wte", -1, m->vocab, C, GPT_SPLIT_NONE, NULL, 0, INIT_STD, 0, true);
    m->wpe = arch->pos == MODEL_POS_LEARNED
                 ? add(&b, "wpe", -1, m->max_seq, C, GPT_SPLIT_NONE, NULL, 0, INIT_STD, 0, true)
                 : GPT_ABSENT;
    m->embed_end = b.next;
    for (int l = 0; l < L; l++) {
        gpt_layer_t *y = &m->layers[l];
        char n[40];
        y->begin = b.next;
#define NAME(s) (snprintf(n, sizeof n, "h.%d.%s", l, s), n)
        y->ln1_w = add(&b, NAME("ln1_w"), l, C, 1, GPT_SPLIT_NONE, NULL, 0, 0, 1, false);
        y->ln1_b = layernorm ? add(&b, NAME("ln1_b"), l, C, 1, GPT_SPLIT_NONE, NULL, 0, 0, 0, false)
                             : GPT_ABSENT;
        y->qkv_w = add(&b, NAME("qkv_w"), l, q + 2 * kv, C, GPT_SPLIT_COLUMN, qkv_seg, 3,
                       INIT_STD, 0, true);
        y->qkv_b = m->qkv_bias ? add(&b, NAME("qkv_b"), l, q + 2 * kv, 1, GPT_SPLIT_COLUMN,
                                     qkv_seg, 3, 0, 0, false)
                               : GPT_ABSENT;
        y->attn_w = add(&b, NAME("attn_w"), l, C, q, GPT_SPLIT_ROW, NULL, 0, proj_std, 0, true);
        y->attn_b = m->out_bias
                        ? add(&b, NAME("attn_b"), l, C, 1, GPT_SPLIT_NONE, NULL, 0, 0, 0, false)
                        : GPT_ABSENT;
        y->ln2_w = add(&b, NAME("ln2_w"), l, C, 1, GPT_SPLIT_NONE, NULL, 0, 0, 1, false);
        y->ln2_b = layernorm ? add(&b, NAME("ln2_b"), l, C, 1, GPT_SPLIT_NONE, NULL, 0, 0, 0, false)
                             : GPT_ABSENT;
        y->fc_w = add(&b, NAME("fc_w"), l, swiglu ? 2 * m->ffn : m->ffn, C, GPT_SPLIT_COLUMN,
                      fc_seg, swiglu ? 2 : 1, INIT_STD, 0, true);
        y->fc_b = m->mlp_bias ? add(&b, NAME("fc_b"), l, swiglu ? 2 * m->ffn : m->ffn, 1,
                                    GPT_SPLIT_COLUMN, fc_seg, swiglu ? 2 : 1, 0, 0, false)
                              : GPT_ABSENT;
        y->proj_w = add(&b, NAME("proj_w"), l, C, m->ffn, GPT_SPLIT_ROW, NULL, 0, proj_std, 0, true);
        y->proj_b = m->mlp_bias
                        ? add(&b, NAME("proj_b"), l, C, 1, GPT_SPLIT_NONE, NULL, 0, 0, 0, false)
                        : GPT_ABSENT;
#undef NAME
        y->end = b.next;
    }
    m->head_begin = b.next;
    m->lnf_w = add(&b, "lnf_w", -1, C, 1, GPT_SPLIT_NONE, NULL, 0, 0, 1, false);
    m->lnf_b = layernorm ? add(&b, "lnf_b", -1, C, 1, GPT_SPLIT_NONE, NULL, 0, 0, 0, false)
                         : GPT_ABSENT;
    m->lm_w = m->tied ? m->wte
                      : add(&b, "lm_w", -1, m->vocab, C, GPT_SPLIT_NONE, NULL, 0, INIT_STD, 0, true);
    m->n_params = b.next;
    /* an allocation failure in add() leaves fewer tensors than offsets */
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].size == 0) {
            gpt_free(m);
            return err_set(err, ERR_INPUT, "a tensor of the model has no elements");
        }
    if (m->lm_w == GPT_ABSENT || m->layers[L - 1].proj_w == GPT_ABSENT) {
        gpt_free(m);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    return ERR_OK;
}

void gpt_free(gpt_t *m)
{
    free(m->tensors);
    free(m->layers);
    memset(m, 0, sizeof *m);
}

const gpt_tensor_t *gpt_find(const gpt_t *m, const char *name)
{
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    return NULL;
}

/* FNV-1a of the name: the tensor's random stream, independent of layout. */
static uint64_t name_stream(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

double gpt_init_value(const gpt_tensor_t *t, uint64_t seed, int full_row, int full_col)
{
    if (t->init_std == 0)
        return t->init_value;
    uint64_t base = rng_mix(seed, name_stream(t->name));
    uint64_t j = (uint64_t)full_row * (uint64_t)t->full_cols + (uint64_t)full_col;
    /* Box-Muller: elements 2k and 2k+1 share two uniforms in (0, 1] and take
     * its cosine and sine halves */
    uint64_t pair = j / 2;
    double u1 = ((double)(rng_mix(base, 2 * pair) >> 11) + 1.0) / 9007199254740992.0;
    double u2 = (double)(rng_mix(base, 2 * pair + 1) >> 11) / 9007199254740992.0;
    double r = t->init_std * sqrt(-2.0 * log(u1));
    return j % 2 == 0 ? r * cos(2.0 * PI * u2) : r * sin(2.0 * PI * u2);
}

/* The full row of local row r of a column-split tensor. */
static int full_row_of(const gpt_tensor_t *t, int tp, int tp_rank, int r)
{
    if (t->split != GPT_SPLIT_COLUMN)
        return r;
    int full_start = 0;
    for (int s = 0; s < t->n_segments; s++) {
        int local = t->segment[s] / tp;
        if (r < local)
            return full_start + tp_rank * local + r;
        r -= local;
        full_start += t->segment[s];
    }
    return -1; /* not reached: segments cover the rows */
}

#define INIT_BODY(T)                                                                              \
    for (int i = 0; i < m->n_tensors; i++) {                                                      \
        const gpt_tensor_t *t = &m->tensors[i];                                                   \
        T *p = params + t->offset;                                                                \
        _Pragma("omp parallel for schedule(static)")                                              \
        for (int r = 0; r < t->rows; r++) {                                                       \
            int fr = full_row_of(t, m->tp, m->tp_rank, r);                                        \
            for (int c = 0; c < t->cols; c++) {                                                   \
                int fc = t->split == GPT_SPLIT_ROW ? m->tp_rank * t->cols + c : c;                \
                p[(size_t)r * t->cols + c] = (T)gpt_init_value(t, seed, fr, fc);                  \
            }                                                                                     \
        }                                                                                         \
    }

void gpt_init_f32(const gpt_t *m, uint64_t seed, float *params) { INIT_BODY(float) }
void gpt_init_f64(const gpt_t *m, uint64_t seed, double *params) { INIT_BODY(double) }

/* ------------------------------------------------------------ activations */

int gpt_acts_create(const gpt_t *m, int b, int t, size_t elem, gpt_acts_t *a, err_t *err)
{
    memset(a, 0, sizeof *a);
    if (b < 1 || t < 1)
        return err_set(err, ERR_INPUT, "micro-batch %d x sequence %d: both must be positive", b, t);
    if (t > m->max_seq)
        return err_setf(err, ERR_INPUT, m->arch.name, "max_position_embeddings",
                        "sequence length %d is longer than the model's %d positions", t,
                        m->max_seq);
    size_t N = (size_t)b * t, C = (size_t)m->hidden, V = (size_t)m->vocab;
    size_t att = (size_t)m->heads_local * m->head_dim;
    size_t probs = (size_t)b * m->heads_local * t * t;
    a->b = b;
    a->t = t;
    a->elem = elem;
    /* per block: x_in, ln1 (+ mean, rstd), qkv, probs, att, x_mid, ln2 (+
     * mean, rstd), fc, act */
    a->per_layer = N * C * 4 + N * 4 + N * (size_t)m->qkv_local + probs + N * att +
                   N * (size_t)m->fc_local + N * (size_t)m->ffn_local;
    a->layer_off = malloc((size_t)m->n_layers * sizeof *a->layer_off);
    if (!a->layer_off)
        return err_set(err, ERR_RUNTIME, "out of memory");
    size_t off = 0;
    for (int l = 0; l < m->n_layers; l++, off += a->per_layer)
        a->layer_off[l] = off;
    a->off_final = off, off += N * C;
    a->off_lnf = off, off += N * C;
    a->off_lnf_mean = off, off += N;
    a->off_lnf_rstd = off, off += N;
    a->off_logits = off, off += N * V;
    a->off_probs = off, off += N * V;
    a->off_dx = off, off += N * C;
    a->off_dtmp = off, off += N * C;
    a->off_dln = off, off += N * C;
    a->off_dqkv = off, off += N * (size_t)m->qkv_local;
    a->off_datt = off, off += N * att;
    a->off_dfc = off, off += N * (size_t)m->fc_local;
    a->off_dact = off, off += N * (size_t)m->ffn_local;
    a->off_dlogits = off, off += N * V;
    a->off_scratch = off, off += (size_t)b * m->kv_heads_local * t;
    a->bytes = off * elem;
    a->mem = calloc(off, elem);
    a->losses = calloc(N, sizeof *a->losses);
    if (!a->mem || !a->losses) {
        double gib = (double)a->bytes / (1u << 30);
        gpt_acts_free(a);
        return err_set(err, ERR_RUNTIME,
                       "out of memory for activations (%.2f GiB for micro-batch %d x %d); use a "
                       "smaller --micro-batch or --seq-len",
                       gib, b, t);
    }
    return ERR_OK;
}

void gpt_acts_free(gpt_acts_t *a)
{
    free(a->mem);
    free(a->layer_off);
    free(a->losses);
    memset(a, 0, sizeof *a);
}

double gpt_train_flops(const gpt_t *m, int t, double tokens)
{
    model_flops_t f;
    model_flops(&m->arch, t, &f);
    return f.model_per_token * tokens;
}

/* ------------------------------------------------------------ passes */

#define T float
#define S _f32
#define DIST_T DIST_F32
#include "trainer/gpt_impl.inc"
#undef T
#undef S
#undef DIST_T

#define T double
#define S _f64
#define DIST_T DIST_F64
#include "trainer/gpt_impl.inc"
#undef T
#undef S
#undef DIST_T
