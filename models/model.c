#include "models/model.h"
#include "models/hybrid.h"

#include <math.h>
#include <string.h>

/* Limits that catch typos and overflow long before any real model. */
#define MAX_LAYERS 100000
#define MAX_WIDTH 10000000L

const char *model_family_name(model_family_t f)
{
    return f == MODEL_FAMILY_LLAMA ? "llama" : "gpt";
}

const char *model_act_name(model_act_t a, bool gated)
{
    switch (a) {
    case MODEL_ACT_SILU:
        return gated ? "SwiGLU" : "SiLU";
    case MODEL_ACT_RELU:
        return gated ? "ReGLU" : "ReLU";
    case MODEL_ACT_RELU2:
        return gated ? "gated squared ReLU" : "squared ReLU";
    default:
        return gated ? "GeGLU" : "GELU";
    }
}

bool model_has_full_attn(const model_t *m) { return m->full_attn.head_dim > 0; }

/* Share of the attention blocks in the full-attention shape. */
static double full_share(const model_t *m)
{
    return (double)(m->n_layers - m->window_layers) / m->n_layers;
}

/* The mean over blocks of a figure that is `local` in the windowed blocks
 * and `full` in the others. */
static double block_mean(const model_t *m, double local, double full)
{
    double f = full_share(m);
    return (1 - f) * local + f * full;
}

double model_q_width(const model_t *m)
{
    double local = (double)m->n_heads * m->head_dim;
    if (!model_has_full_attn(m))
        return local;
    return block_mean(m, local, (double)m->full_attn.n_heads * m->full_attn.head_dim);
}

double model_kv_width(const model_t *m)
{
    double local = (double)m->n_kv_heads * m->head_dim;
    if (!model_has_full_attn(m))
        return local;
    return block_mean(m, local, (double)m->full_attn.n_kv_heads * m->full_attn.head_dim);
}

/* The mean over blocks of a K/V figure that is `local` in the windowed
 * blocks and `full` in the others, where the KV-shared blocks (the last
 * kv_shared_layers, kv_shared_full of them full attention) have none. */
static double kv_blocks_mean(const model_t *m, double local, double full)
{
    if (m->kv_shared_layers == 0)
        return block_mean(m, local, full);
    double windowed = m->window_layers - (m->kv_shared_layers - m->kv_shared_full);
    double whole = m->n_layers - m->window_layers - m->kv_shared_full;
    return (windowed * local + whole * full) / m->n_layers;
}

double model_kv_proj_width(const model_t *m)
{
    double local = 2.0 * m->n_kv_heads * m->head_dim;
    if (!model_has_full_attn(m) && m->kv_shared_layers == 0)
        return local;
    const model_full_attn_t *g = &m->full_attn;
    double full = model_has_full_attn(m)
                      ? (g->k_eq_v ? 1.0 : 2.0) * g->n_kv_heads * g->head_dim
                      : local;
    return kv_blocks_mean(m, local, full);
}

double model_k_proj_width(const model_t *m)
{
    double local = (double)m->n_kv_heads * m->head_dim;
    if (!model_has_full_attn(m) && m->kv_shared_layers == 0)
        return local;
    double full = model_has_full_attn(m) ? (double)m->full_attn.n_kv_heads * m->full_attn.head_dim
                                         : local;
    return kv_blocks_mean(m, local, full);
}

/* One block's per-layer input gate (hidden -> dim), projection (dim ->
 * hidden) and norm, on one GPU of a TP group of t (the linears split). */
static double ple_block_params(const model_t *m, double t)
{
    if (m->ple.dim <= 0)
        return 0;
    return 2.0 * m->hidden * m->ple.dim / t + model_norm_params(m, m->hidden);
}

double model_input_params(const model_t *m)
{
    double p = (double)m->vocab * m->hidden;
    if (m->ple.dim > 0) /* the per-layer table and its projection and norm */
        p += (double)m->ple.vocab * m->n_layers * m->ple.dim +
             (double)m->hidden * m->n_layers * m->ple.dim + model_norm_params(m, m->ple.dim);
    return p;
}

double model_heads_mean(const model_t *m)
{
    if (!model_has_full_attn(m))
        return m->n_heads;
    return block_mean(m, m->n_heads, m->full_attn.n_heads);
}

double model_head_dim_mean(const model_t *m)
{
    if (!model_has_full_attn(m))
        return m->head_dim;
    return block_mean(m, m->head_dim, m->full_attn.head_dim);
}

bool model_heads_split(const model_t *m, int tp)
{
    if (tp < 1 || m->n_heads % tp != 0 || m->n_kv_heads % tp != 0)
        return false;
    const model_full_attn_t *g = &m->full_attn;
    return !model_has_full_attn(m) || (g->n_heads % tp == 0 && g->n_kv_heads % tp == 0);
}

int model_norms_per_layer(const model_t *m)
{
    return m->norms_per_layer > 0 ? m->norms_per_layer : 2;
}

double model_norm_params(const model_t *m, double width)
{
    if (m->norm_weightless)
        return 0;
    return m->norm == MODEL_NORM_LAYERNORM ? 2 * width : width;
}

double model_position_rows(const model_t *m)
{
    return m->pos == MODEL_POS_LEARNED ? (double)m->max_seq + m->pos_extra_rows : 0;
}

bool model_is_mla(const model_t *m)
{
    return m->mla.kv_lora_rank > 0;
}

/* Probability that k experts drawn without replacement from n miss a given
 * a of them: C(n - a, k) / C(n, k). */
static double miss_all(int n, int a, int k)
{
    double p = 1;
    for (int i = 0; i < k; i++) {
        if (n - a - i <= 0)
            return 0;
        p *= (double)(n - a - i) / (n - i);
    }
    return p;
}

/* Hypergeometric: of G groups, m in a block, t drawn: P(j of the block's). */
static double hypergeom(int G, int m, int t, int j)
{
    if (j > m || t - j > G - m || j < 0 || t - j < 0)
        return 0;
    /* C(m, j) C(G - m, t - j) / C(G, t) through log-gamma */
    double lp = lgamma(m + 1.0) - lgamma(j + 1.0) - lgamma(m - j + 1.0) + lgamma(G - m + 1.0) -
                lgamma(t - j + 1.0) - lgamma(G - m - t + j + 1.0) - lgamma(G + 1.0) +
                lgamma(t + 1.0) + lgamma(G - t + 1.0);
    return exp(lp);
}

double model_moe_destinations(const model_t *m, int n_dest)
{
    const model_moe_t *x = &m->moe;
    int E = x->n_experts, k = x->top_k;
    if (E <= 0 || n_dest <= 1)
        return 1;
    if (E % n_dest != 0)
        return k;
    int q = E / n_dest; /* experts per destination */
    int G = x->n_groups, t = x->group_topk;
    double touched; /* probability one destination receives the token */
    if (G <= 1 || t >= G || E % G != 0) {
        touched = 1 - miss_all(E, q, k);
    } else if (n_dest % G == 0) {
        /* each destination inside one group: used when its group is drawn */
        int avail = t * (E / G);
        touched = (double)t / G * (1 - miss_all(avail, q, k));
    } else if (G % n_dest == 0) {
        /* each destination holds G / n_dest whole groups, j of them drawn */
        int per = G / n_dest, avail = t * (E / G);
        touched = 0;
        for (int j = 1; j <= per && j <= t; j++)
            touched += hypergeom(G, per, t, j) * (1 - miss_all(avail, j * (E / G), k));
    } else {
        return k;
    }
    double d = n_dest * touched;
    return d < 1 ? 1 : d;
}

/* Recount the MoE blocks from the mask (bits beyond n_layers cleared). */
static void recount_moe(model_t *m)
{
    int n = 0;
    for (int i = 0; i < MODEL_MAX_MOE_LAYERS; i++) {
        if (i >= m->n_layers)
            model_moe_set_layer(m, i, false);
        else
            n += (m->moe.layer_mask[i / 64] >> (i % 64)) & 1u;
    }
    m->moe.n_moe_layers = n;
}

static int validate_moe(model_t *m, const char *ctx, err_t *err)
{
    model_moe_t *e = &m->moe;
    if (e->n_experts < 0)
        return err_setf(err, ERR_INPUT, ctx, "experts", "must not be negative (got %d)",
                        e->n_experts);
    if (e->n_experts == 0) {
        memset(e, 0, sizeof *e);
        return ERR_OK;
    }
    if (m->n_layers > MODEL_MAX_MOE_LAYERS)
        return err_setf(err, ERR_INPUT, ctx, "layers",
                        "a mixture-of-experts model may have at most %d layers (got %d)",
                        MODEL_MAX_MOE_LAYERS, m->n_layers);
    if (e->top_k < 1 || e->top_k > e->n_experts)
        return err_setf(err, ERR_INPUT, ctx, "num_experts_per_tok",
                        "must be from 1 to the %d routed experts (got %d)", e->n_experts,
                        e->top_k);
    if (e->expert_ffn < 1 || e->expert_ffn > MAX_WIDTH || e->shared_ffn < 0 ||
        e->shared_ffn > MAX_WIDTH)
        return err_setf(err, ERR_INPUT, ctx, "moe_intermediate_size",
                        "expert widths must be from 1 to %ld (got %d, shared %d)", MAX_WIDTH,
                        e->expert_ffn, e->shared_ffn);
    if (e->latent < 0 || e->latent > MAX_WIDTH)
        return err_setf(err, ERR_INPUT, ctx, "moe_latent_size",
                        "must be from 1 to %ld when given (got %d)", MAX_WIDTH, e->latent);
    if (e->n_groups < 0 || e->group_topk < 0 ||
        (e->n_groups > 1 && (e->n_experts % e->n_groups != 0 || e->group_topk < 1 ||
                             e->group_topk > e->n_groups ||
                             e->top_k > e->group_topk * (e->n_experts / e->n_groups))))
        return err_setf(err, ERR_INPUT, ctx, "n_group",
                        "%d expert groups with %d per token do not fit %d experts with top-%d "
                        "(the groups must divide the experts and hold the top-k)",
                        e->n_groups, e->group_topk, e->n_experts, e->top_k);
    recount_moe(m);
    if (e->n_moe_layers == 0)
        return err_setf(err, ERR_INPUT, ctx, "experts",
                        "%d experts but no block has an MoE MLP (check the layer pattern)",
                        e->n_experts);
    return ERR_OK;
}

static int validate_mla(const model_t *m, const char *ctx, err_t *err)
{
    const model_mla_t *a = &m->mla;
    if (a->kv_lora_rank == 0 && !a->q_lora_rank && !a->qk_nope_dim && !a->qk_rope_dim &&
        !a->v_dim)
        return ERR_OK;
    if (a->kv_lora_rank < 1 || a->q_lora_rank < 0 || a->qk_nope_dim < 1 || a->qk_rope_dim < 0 ||
        a->v_dim < 1 || a->kv_lora_rank > MAX_WIDTH || a->q_lora_rank > MAX_WIDTH)
        return err_setf(err, ERR_INPUT, ctx, "kv_lora_rank",
                        "multi-latent attention needs positive kv_lora_rank, qk_nope_head_dim "
                        "and v_head_dim (got %d, %d, %d)",
                        a->kv_lora_rank, a->qk_nope_dim, a->v_dim);
    if (m->head_dim != a->qk_nope_dim + a->qk_rope_dim)
        return err_setf(err, ERR_INPUT, ctx, "head_dim",
                        "with multi-latent attention the head is qk_nope + qk_rope = %d (got %d)",
                        a->qk_nope_dim + a->qk_rope_dim, m->head_dim);
    return ERR_OK;
}

/* Gemma 4's per-layer inputs and KV-shared blocks: sizes in range, the
 * shared blocks among the model's, their full-attention ones among both. */
static int validate_ple(const model_t *m, const char *ctx, err_t *err)
{
    if (m->ple.dim < 0 || m->ple.dim > MAX_WIDTH || (m->ple.dim > 0 && m->ple.vocab < 1) ||
        m->ple.vocab > 100000000)
        return err_setf(err, ERR_INPUT, ctx, "hidden_size_per_layer_input",
                        "per-layer inputs need a positive width and vocabulary (got %d, %d)",
                        m->ple.dim, m->ple.vocab);
    int full = m->n_layers - m->window_layers;
    if (m->kv_shared_layers < 0 || m->kv_shared_layers >= m->n_layers ||
        m->kv_shared_full < 0 || m->kv_shared_full > m->kv_shared_layers ||
        m->kv_shared_full > full || m->kv_shared_layers - m->kv_shared_full > m->window_layers)
        return err_setf(err, ERR_INPUT, ctx, "num_kv_shared_layers",
                        "must leave a block with keys and values of its own (got %d of %d)",
                        m->kv_shared_layers, m->n_layers);
    return ERR_OK;
}

/* Full-attention blocks of their own shape: positive sizes, key/value
 * heads dividing the query heads, and neither MLA nor a hybrid pattern
 * (whose blocks the window count does not describe). */
static int validate_full_attn(const model_t *m, const char *ctx, err_t *err)
{
    const model_full_attn_t *g = &m->full_attn;
    if (!model_has_full_attn(m))
        return g->n_kv_heads == 0 && !g->k_eq_v
                   ? ERR_OK
                   : err_setf(err, ERR_INPUT, ctx, "global_head_dim",
                              "full-attention blocks of their own shape need their head size");
    if (g->head_dim > MAX_WIDTH || g->n_heads < 1 || g->n_heads > MAX_WIDTH ||
        g->n_kv_heads < 1 || g->n_heads % g->n_kv_heads != 0)
        return err_setf(err, ERR_INPUT, ctx, "num_global_key_value_heads",
                        "the full-attention blocks' key/value heads must divide their %d query "
                        "heads (got %d; head size %d)",
                        g->n_heads, g->n_kv_heads, g->head_dim);
    if (model_is_mla(m) || m->hybrid.n_layers_hybrid > 0 || m->window_layers > m->n_layers)
        return err_setf(err, ERR_INPUT, ctx, "global_head_dim",
                        "full-attention blocks of their own shape go with grouped-query "
                        "attention in every block and at most %d windowed blocks",
                        m->n_layers);
    return ERR_OK;
}

int model_validate(model_t *m, const char *ctx, err_t *err)
{
    if (m->n_layers < 1 || m->n_layers > MAX_LAYERS)
        return err_setf(err, ERR_INPUT, ctx, "layers",
                        "must be between 1 and %d (got %d)", MAX_LAYERS,
                        m->n_layers);
    if (m->hidden < 1 || m->n_heads < 1 || m->n_kv_heads < 1 ||
        m->head_dim < 1 || m->ffn < 1 || m->vocab < 1 || m->max_seq < 1)
        return err_setf(err, ERR_INPUT, ctx, NULL,
                        "hidden, heads, kv heads, head_dim, ffn, vocab and "
                        "max_seq must all be positive");
    if (m->n_heads % m->n_kv_heads != 0)
        return err_setf(err, ERR_INPUT, ctx, "kv_heads",
                        "must divide heads %d (got %d)", m->n_heads,
                        m->n_kv_heads);
    if (!(m->dropout >= 0 && m->dropout <= 1))
        return err_setf(err, ERR_INPUT, ctx, "dropout",
                        "must be between 0 and 1 (got %g)", m->dropout);
    if (m->norms_per_layer < 0 || m->norms_per_layer > 16 || m->pos_extra_rows < 0 ||
        m->pos_extra_rows > 1024 || m->n_mtp < 0 || m->n_mtp > 64)
        return err_setf(err, ERR_INPUT, ctx, NULL,
                        "norms per layer, extra position rows and MTP modules out of range");
    const model_indexer_t *x = &m->indexer;
    if (x->n_heads < 0 || x->n_heads > MAX_WIDTH ||
        (x->n_heads > 0 && (x->head_dim < 1 || x->head_dim > MAX_WIDTH || x->topk < 1)) ||
        x->own_layers < 0 || x->own_layers > m->n_layers)
        return err_setf(err, ERR_INPUT, ctx, "index_n_heads",
                        "a sparse-attention indexer needs positive index_n_heads, "
                        "index_head_dim and index_topk (got %d, %d, %d)",
                        x->n_heads, x->head_dim, x->topk);
    int rc;
    if ((rc = validate_moe(m, ctx, err)) || (rc = validate_mla(m, ctx, err)) ||
        (rc = model_hybrid_validate(m, ctx, err)) || (rc = validate_full_attn(m, ctx, err)) ||
        (rc = validate_ple(m, ctx, err)))
        return rc;
    return ERR_OK;
}

/* ------------------------------------------------------------ counting */

static double gate_factor(const model_t *m)
{
    return m->mlp == MODEL_MLP_SWIGLU ? 2 : 1;
}

/* One MLP of width f: weights, and biases when bias. */
static double mlp_params(const model_t *m, double f, bool bias)
{
    double h = m->hidden, g = gate_factor(m);
    double p = (g + 1) * h * f;
    if (bias)
        p += g * f + h;
    return p;
}

/* QK norm weights of one block. */
static double qk_norm_params(const model_t *m)
{
    switch (m->qk_norm) {
    case MODEL_QK_NORM_HEAD:
        if (m->kv_shared_layers > 0) /* KV-shared blocks have no key norm */
            return model_norm_params(m, model_head_dim_mean(m)) +
                   model_norm_params(m, kv_blocks_mean(m, m->head_dim,
                                                       model_has_full_attn(m)
                                                           ? m->full_attn.head_dim
                                                           : m->head_dim));
        return model_norm_params(m, 2.0 * model_head_dim_mean(m));
    case MODEL_QK_NORM_FULL:
        return model_norm_params(m, (double)model_q_width(m) + model_kv_width(m));
    default:
        return 0;
    }
}

/* Multi-latent attention's projections and norms. */
static double mla_params(const model_t *m)
{
    const model_mla_t *a = &m->mla;
    double h = m->hidden, nh = m->n_heads, qk = a->qk_nope_dim + a->qk_rope_dim;
    double p = 0;
    double norms = a->no_latent_norms ? 0 : 1; /* RMSNorm weights on the latents */
    if (a->q_lora_rank > 0)
        p += h * a->q_lora_rank + norms * a->q_lora_rank /* q_a_layernorm */ +
             (double)a->q_lora_rank * nh * qk;
    else
        p += h * nh * qk;
    p += h * ((double)a->kv_lora_rank + a->qk_rope_dim) + norms * a->kv_lora_rank +
         (double)a->kv_lora_rank * nh * (a->qk_nope_dim + a->v_dim);
    p += nh * a->v_dim * h;
    if (m->qkv_bias)
        p += (a->q_lora_rank > 0 ? a->q_lora_rank : nh * qk) + a->kv_lora_rank + a->qk_rope_dim;
    if (m->out_bias)
        p += h;
    return p;
}

/* The sparse-attention indexer of one block (model_indexer_t); every GPU
 * of a TP group holds all of it (SGLang and vLLM replicate it). */
static double indexer_params(const model_t *m)
{
    const model_indexer_t *x = &m->indexer;
    if (x->n_heads <= 0)
        return 0;
    double h = m->hidden, q_in = m->mla.q_lora_rank > 0 ? m->mla.q_lora_rank : h;
    double p = q_in * x->n_heads * x->head_dim + h * x->head_dim + 2.0 * x->head_dim +
               h * x->n_heads;
    return p * model_indexer_share(m);
}

double model_indexer_share(const model_t *m)
{
    const model_indexer_t *x = &m->indexer;
    return x->own_layers > 0 ? (double)x->own_layers / m->n_layers : 1.0;
}

static double attention_params(const model_t *m)
{
    double h = m->hidden, qw = model_q_width(m), kvpw = model_kv_proj_width(m);
    double p;
    if (model_is_mla(m)) {
        p = mla_params(m);
    } else {
        p = h * qw + h * kvpw + qw * h;
        if (m->hybrid.attn_out_gate)
            p += h * qw; /* the output gate's half of q_proj (Qwen3-Next) */
        if (m->attn_head_gate)
            p += h * model_heads_mean(m); /* one gate a head (Laguna's g_proj) */
        if (m->qkv_bias)
            p += qw + kvpw;
        if (m->out_bias)
            p += h;
    }
    p += qk_norm_params(m) + indexer_params(m);
    if (m->attn_sinks)
        p += m->n_heads;
    return p;
}

/* One routed expert: an MLP of width expert_ffn between tokens of
 * model_moe_io (the latent width under LatentMoE). */
static double expert_params(const model_t *m)
{
    double io = model_moe_io(m), g = gate_factor(m), f = m->moe.expert_ffn;
    return (g + 1) * io * f + (m->moe.expert_bias ? g * f + io : 0);
}

/* LatentMoE's two projections of one MoE block (hidden <-> latent). */
static double latent_params(const model_t *m)
{
    double L = m->moe.latent, h = m->hidden;
    return L > 0 ? 2 * h * L + (m->mlp_bias ? L + h : 0) : 0;
}

/* The router, and with LatentMoE its projections: the dense weights of an
 * MoE block besides the shared experts (replicated over TP: ASSUMED for the
 * projections, said by the reader). */
static double router_params(const model_t *m)
{
    double e = m->moe.n_experts;
    return e * m->hidden + (m->moe.router_bias ? e : 0) + latent_params(m);
}

static double shared_params(const model_t *m)
{
    if (m->moe.shared_ffn <= 0)
        return 0;
    return mlp_params(m, m->moe.shared_ffn, m->mlp_bias) + (m->moe.shared_gate ? m->hidden : 0);
}

static void block_gpu_fwd(const model_t *m, int layer, double *dense, double *experts);

/* A hybrid model's total and active counts: its blocks one by one (each
 * block's routed experts, top_k of them active). */
static void hybrid_totals(const model_t *m, model_params_t *p)
{
    double blocks = 0, active = 0;
    for (int i = 0; i < m->n_layers; i++) {
        double dense, experts;
        block_gpu_fwd(m, i, &dense, &experts);
        blocks += dense + experts;
        active += dense + (experts > 0 ? experts * m->moe.top_k / m->moe.n_experts : 0);
    }
    double edges = p->word_embedding + p->position_embedding + p->final_norm + p->output_head +
                   p->per_layer_inputs + p->per_layer_proj;
    p->total = edges + blocks;
    p->active = edges + active;
}

void model_params(const model_t *m, model_params_t *p)
{
    double h = m->hidden;
    memset(p, 0, sizeof *p);
    p->word_embedding = (double)m->vocab * h;
    p->position_embedding = model_position_rows(m) * h;
    p->attention = attention_params(m);
    p->mlp = mlp_params(m, m->ffn, m->mlp_bias);
    double one_norm = model_norm_params(m, h);
    p->norms = model_norms_per_layer(m) * one_norm;
    p->ple_block = ple_block_params(m, 1);
    p->per_layer = p->attention + p->mlp + p->norms + p->ple_block;
    p->final_norm = one_norm;
    if (m->ple.dim > 0) {
        p->per_layer_inputs = (double)m->ple.vocab * m->n_layers * m->ple.dim;
        p->per_layer_proj = model_input_params(m) - p->word_embedding - p->per_layer_inputs;
    }
    p->output_head = m->tied_embeddings ? 0 : (double)m->vocab * h;
    p->n_moe_layers = model_is_moe(m) ? m->moe.n_moe_layers : 0;
    p->n_dense_layers = m->n_layers - p->n_moe_layers;
    double moe = 0, moe_active = 0;
    if (model_is_moe(m)) {
        p->router = router_params(m);
        p->expert = expert_params(m);
        p->shared_expert = shared_params(m);
        double base = p->attention + p->norms + p->router + p->shared_expert + p->ple_block;
        p->moe_layer = base + m->moe.n_experts * p->expert;
        p->moe_layer_active = base + m->moe.top_k * p->expert;
        moe = p->n_moe_layers * p->moe_layer;
        moe_active = p->n_moe_layers * p->moe_layer_active;
    }
    p->total = p->word_embedding + p->position_embedding + p->n_dense_layers * p->per_layer +
               moe + p->final_norm + p->output_head + p->per_layer_inputs + p->per_layer_proj;
    p->active = p->total - moe + moe_active;
    if (model_is_hybrid(m))
        hybrid_totals(m, p);
    p->non_embedding = p->total - p->word_embedding - p->position_embedding -
                       p->output_head - p->per_layer_inputs;
    if (m->n_mtp > 0) {
        /* enorm + hnorm, the 2h -> h projection (+ bias), one block like
         * the last main block, the module's final norm. */
        bool last_moe = model_moe_layer(m, m->n_layers - 1);
        double block = last_moe ? p->moe_layer : p->per_layer;
        double block_active = last_moe ? p->moe_layer_active : p->per_layer;
        double glue = 3 * one_norm + 2 * h * h + (m->out_bias ? h : 0);
        p->mtp = m->n_mtp * (glue + block);
        p->mtp_active = m->n_mtp * (glue + block_active);
    }
}

/* ------------------------------------------------------------ per GPU */

/* Attention of one block on one GPU of a TP group of t. */
static double attention_gpu(const model_t *m, double t)
{
    double h = m->hidden, p;
    if (model_is_mla(m)) {
        /* Down projections and their norms are replicated; the up
         * projections are column-parallel, the output row-parallel. */
        const model_mla_t *a = &m->mla;
        double nh = m->n_heads, qk = a->qk_nope_dim + a->qk_rope_dim;
        double norms = a->no_latent_norms ? 0 : 1;
        p = a->q_lora_rank > 0 ? h * a->q_lora_rank + norms * a->q_lora_rank +
                                     (double)a->q_lora_rank * nh * qk / t
                               : h * nh * qk / t;
        p += h * ((double)a->kv_lora_rank + a->qk_rope_dim) + norms * a->kv_lora_rank +
             (double)a->kv_lora_rank * nh * (a->qk_nope_dim + a->v_dim) / t + nh * a->v_dim * h / t;
        if (m->qkv_bias)
            p += (a->q_lora_rank > 0 ? a->q_lora_rank : nh * qk / t) + a->kv_lora_rank +
                 a->qk_rope_dim;
        if (m->out_bias)
            p += h;
    } else {
        double qw = model_q_width(m), kvpw = model_kv_proj_width(m);
        p = (h * (qw + kvpw) + qw * h) / t;
        if (m->hybrid.attn_out_gate)
            p += h * qw / t;
        if (m->attn_head_gate)
            p += h * model_heads_mean(m) / t; /* column-parallel with the heads */
        if (m->qkv_bias)
            p += (qw + kvpw) / t;
        if (m->out_bias)
            p += h;
    }
    return p + qk_norm_params(m) + indexer_params(m) + (m->attn_sinks ? m->n_heads / t : 0);
}

/* An MLP of width f split over a TP group of t: column-parallel in,
 * row-parallel out (its bias replicated). */
static double mlp_gpu(const model_t *m, double f, bool bias, double t)
{
    double h = m->hidden, g = gate_factor(m);
    double p = (h * f * g + f * h) / t;
    if (bias)
        p += f * g / t + h;
    return p;
}

/* One routed expert split over an expert-TP group of et (model_moe_io
 * wide tokens in and out). */
static double expert_gpu(const model_t *m, double et)
{
    double io = model_moe_io(m), g = gate_factor(m), f = m->moe.expert_ffn;
    return (io * f * g + f * io) / et + (m->moe.expert_bias ? f * g / et + io : 0);
}

/* A block of a hybrid model: its mixer (attention, Mamba-2, Gated
 * DeltaNet or none), its MLP (dense, MoE or none) and its norms. */
static void hybrid_block_gpu(const model_t *m, int layer, double t, double e, double et,
                             double *dense, double *experts)
{
    double h = m->hidden;
    model_mixer_t k = model_block_mixer(m, layer);
    double p = model_norms_per_layer(m) * model_norm_params(m, h);
    p += k == MODEL_MIXER_ATTENTION ? attention_gpu(m, t) : model_hybrid_mixer_params(m, k, t);
    if (k == MODEL_MIXER_ATTENTION && m->hybrid.par_mamba2) /* Falcon-H1 */
        p += model_hybrid_mixer_params(m, MODEL_MIXER_MAMBA2, t);
    *experts = 0;
    if (model_block_has_mlp(m, layer) && model_moe_layer(m, layer)) {
        p += router_params(m) + (m->moe.shared_ffn > 0
                                     ? mlp_gpu(m, m->moe.shared_ffn, m->mlp_bias, t) +
                                           (m->moe.shared_gate ? h : 0)
                                     : 0);
        *experts = m->moe.n_experts / e * expert_gpu(m, et);
    } else if (model_block_has_mlp(m, layer)) {
        p += mlp_gpu(m, m->ffn, m->mlp_bias, t);
    }
    *dense = p;
}

void model_block_params_gpu(const model_t *m, int layer, int tp, int ep, int etp,
                            double *dense, double *experts)
{
    double t = tp > 0 ? tp : 1, h = m->hidden, f = m->ffn;
    double norms = model_norms_per_layer(m) * model_norm_params(m, h);
    *experts = 0;
    if (model_is_hybrid(m)) {
        hybrid_block_gpu(m, layer, t, ep > 0 ? ep : 1, etp > 0 ? etp : t, dense, experts);
        return;
    }
    if (!model_is_moe(m) || !model_moe_layer(m, layer)) {
        if (!model_is_mla(m) && m->qk_norm == MODEL_QK_NORM_NONE && !m->attn_sinks &&
            !m->attn_head_gate && m->indexer.n_heads == 0) {
            /* The plain block, summed in the order scaleplan always has. */
            double qw = model_q_width(m), kvpw = model_kv_proj_width(m), gate = gate_factor(m);
            double block = (h * (qw + kvpw) + qw * h + h * f * gate + f * h) / t;
            if (m->qkv_bias)
                block += (qw + kvpw) / t;
            if (m->out_bias)
                block += h;
            if (m->mlp_bias)
                block += f * gate / t + h;
            *dense = block + norms + ple_block_params(m, t);
            return;
        }
        *dense = attention_gpu(m, t) + mlp_gpu(m, f, m->mlp_bias, t) + norms +
                 ple_block_params(m, t);
        return;
    }
    double e = ep > 0 ? ep : 1, et = etp > 0 ? etp : t;
    double shared = m->moe.shared_ffn > 0 ? mlp_gpu(m, m->moe.shared_ffn, m->mlp_bias, t) +
                                                 (m->moe.shared_gate ? h : 0)
                                           : 0;
    *dense = attention_gpu(m, t) + norms + router_params(m) + shared + ple_block_params(m, t);
    *experts = m->moe.n_experts / e * expert_gpu(m, et);
}

static void block_gpu_fwd(const model_t *m, int layer, double *dense, double *experts)
{
    model_block_params_gpu(m, layer, 1, 1, 1, dense, experts);
}

void model_mtp_params_gpu(const model_t *m, int tp, int ep, int etp, double *dense,
                          double *experts)
{
    *dense = *experts = 0;
    if (m->n_mtp <= 0)
        return;
    double h = m->hidden, t = tp > 0 ? tp : 1;
    model_block_params_gpu(m, m->n_layers - 1, tp, ep, etp, dense, experts);
    /* eh_proj is column-parallel in Megatron; its norms replicated. */
    *dense += 3 * model_norm_params(m, h) + 2 * h * h / t + (m->out_bias ? h : 0);
    *dense *= m->n_mtp;
    *experts *= m->n_mtp;
}

const char *model_trainer_unsupported(const model_t *m)
{
    if (model_is_hybrid(m))
        return "hybrid layers (Mamba-2, Gated DeltaNet or MLP-only blocks)";
    if (model_has_full_attn(m) || m->ple.dim > 0 || m->kv_shared_layers > 0)
        return "full-attention blocks of their own head size, per-layer inputs or KV sharing";
    if (model_is_moe(m))
        return "mixture-of-experts layers";
    if (model_is_mla(m))
        return "multi-latent attention";
    if (m->qk_norm != MODEL_QK_NORM_NONE)
        return "QK norm";
    if (m->attn_sinks)
        return "attention sinks";
    if (m->norm_weightless || model_norms_per_layer(m) != 2)
        return "its norm layout";
    if (m->mlp == MODEL_MLP_SWIGLU && m->act != MODEL_ACT_SILU)
        return "a gated MLP other than SwiGLU";
    if (m->mlp == MODEL_MLP_GELU && m->act != MODEL_ACT_GELU)
        return "a plain MLP other than GELU";
    if (m->pos == MODEL_POS_NONE || m->pos_extra_rows > 0)
        return "its position embedding";
    if (m->n_mtp > 0)
        return "multi-token prediction modules";
    return NULL;
}

static const model_torchtitan_t TORCHTITAN[] = {
    {"llama3", "8B", "llama3-8b"},
    {"llama3", "70B", "llama3-70b"},
    {"llama3", "405B", "llama3-405b"},
    {"llama4", "17bx16e", "llama4-scout"},
    {"deepseek_v3", "671B", "deepseek-v3"},
    /* torchtitan's deepseek_v3 "16B" flavor is DeepSeek-V2-Lite's shape
     * (models/deepseek_v3/__init__.py at 1bd254: dim 2048, 27 layers, 1
     * dense, 16 heads, 64 routed + 2 shared experts of 1408, top 6, MLA kv
     * rank 512, vocabulary 102400); mid-2025 ran it as the deepseek_v2
     * experiment under its Hugging Face name */
    {"deepseek_v3", "16B", "deepseek-v2-lite"},
    {"deepseek_v2", "deepseek-ai/DeepSeek-V2-Lite", "deepseek-v2-lite"},
    {"qwen3", "30B-A3B", "qwen3-30b-a3b"},
    {"qwen3", "235B-A22B", "qwen3-235b-a22b"},
};

const model_torchtitan_t *model_torchtitan(size_t i)
{
    return i < sizeof TORCHTITAN / sizeof TORCHTITAN[0] ? &TORCHTITAN[i] : NULL;
}

const model_torchtitan_t *model_torchtitan_of(const char *catalog_name)
{
    for (size_t i = 0; i < sizeof TORCHTITAN / sizeof TORCHTITAN[0]; i++)
        if (strcmp(TORCHTITAN[i].catalog, catalog_name) == 0)
            return &TORCHTITAN[i];
    return NULL;
}
