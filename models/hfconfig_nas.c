/* hfconfig_nas: Nemotron-NAS / DeciLM configs (model_type "nemotron-nas",
 * "deci"), whose block_configs give every decoder layer its own attention
 * and FFN: either may be a no-op (the sub-layer and its norm are absent),
 * attention has its own n_heads_in_group (query heads per KV head), the
 * FFN its own ffn_mult.
 *
 * Read as a hybrid layer pattern (models/hybrid.h) of one sub-layer a
 * block, as Nemotron-H is: an attention sub-layer becomes an attention
 * block without an MLP, an FFN sub-layer an MLP-only block, each with its
 * one pre-norm. What model_t cannot hold per block is the FFN width: the
 * blocks are priced at the mean of their widths (to the multiple of 256
 * every width is), which keeps the total parameters and FLOPs (both linear
 * in the width) within that rounding and is said as an approximation, with
 * the difference, when the widths differ.
 *
 * Sources: the FFN width rule int(2 x ffn_mult x hidden / 3) rounded up to
 * a multiple of 256, and the sub-layers a no-op removes (norm included), as
 * vllm-project/vllm vllm/model_executor/models/nemotron_nas.py @
 * 2ee6ae787f3088315ea02f64650df0a05dfe566b (_ffn_mult_to_intermediate_size,
 * DeciLMDecoderLayer) builds them; the keys as nvidia's configs write them
 * (tests/fixtures/real/configs/Llama-3_3-Nemotron-Super-49B-v1). */
#include "models/hfconfigInt.h"

#include <math.h>
#include <string.h>

#include "models/hybrid.h"

/* One block_configs entry's sub-layers. */
typedef struct {
    bool attn, ffn;   /* present (not a no-op) */
    int heads_in_group;
    int ffn_width;
} nas_block_t;

/* A sub-layer object's no_op, refusing replace_with_linear (a linear layer
 * is not a block kind scaleplan prices). */
static int sub_no_op(rd_t *r, const cJSON *sub, const json_ctx_t *ctx, bool *no_op)
{
    bool linear = false;
    *no_op = false;
    int rc = json_expect_object(sub, ctx, r->err);
    if (rc || (rc = json_get_bool(sub, "no_op", ctx, JSON_OPTIONAL, no_op, r->err)) ||
        (rc = json_get_bool(sub, "replace_with_linear", ctx, JSON_OPTIONAL, &linear, r->err)))
        return rc;
    if (linear && !*no_op) {
        json_ctx_t k = json_ctx_member(ctx, "replace_with_linear");
        return err_setf(r->err, ERR_INPUT, r->file, k.path,
                        "a linear layer in place of the sub-layer is not a block kind scaleplan "
                        "prices (attention, MLP or none)");
    }
    return ERR_OK;
}

/* DeciLM's FFN width for ffn_mult at hidden h: int(2 mult h / 3), rounded
 * up to a multiple of 256. */
static long ffn_width(double mult, int h)
{
    long w = (long)(2 * mult * h / 3);
    return w % 256 == 0 ? w : w + 256 - w % 256;
}

/* Entry i of block_configs into b. */
static int read_entry(rd_t *r, const cJSON *e, const json_ctx_t *ctx, const model_t *m,
                      nas_block_t *b)
{
    const cJSON *attn = NULL, *ffn = NULL;
    int rc = json_expect_object(e, ctx, r->err);
    if (rc || (rc = json_get_object(e, "attention", ctx, JSON_REQUIRED, &attn, r->err)) ||
        (rc = json_get_object(e, "ffn", ctx, JSON_REQUIRED, &ffn, r->err)))
        return rc;
    json_ctx_t ac = json_ctx_member(ctx, "attention"), fc = json_ctx_member(ctx, "ffn");
    bool no_attn, no_ffn;
    if ((rc = sub_no_op(r, attn, &ac, &no_attn)) || (rc = sub_no_op(r, ffn, &fc, &no_ffn)))
        return rc;
    b->attn = !no_attn;
    b->ffn = !no_ffn;
    if (b->attn) {
        if ((rc = json_get_int(attn, "n_heads_in_group", &ac, JSON_REQUIRED, 1, m->n_heads,
                               &b->heads_in_group, r->err)))
            return rc;
        if (m->n_heads % b->heads_in_group != 0) {
            json_ctx_t k = json_ctx_member(&ac, "n_heads_in_group");
            return err_setf(r->err, ERR_INPUT, r->file, k.path,
                            "must divide num_attention_heads %d (got %d)", m->n_heads,
                            b->heads_in_group);
        }
    }
    if (b->ffn) {
        double mult = 0;
        if ((rc = json_get_double(ffn, "ffn_mult", &fc, JSON_REQUIRED, 1e-6, 1e4, &mult,
                                  r->err)))
            return rc;
        long w = ffn_width(mult, m->hidden);
        if (w < 1 || w > MAX_WIDTH) {
            json_ctx_t k = json_ctx_member(&fc, "ffn_mult");
            return err_setf(r->err, ERR_INPUT, r->file, k.path,
                            "gives an FFN width of %ld at hidden_size %d (1 to %ld)", w,
                            m->hidden, MAX_WIDTH);
        }
        b->ffn_width = (int)w;
    }
    return ERR_OK;
}

/* Append b's sub-layers to m's pattern; the KV grouping must be one for the
 * whole model (model_t has one KV head count). */
static int add_blocks(rd_t *r, const nas_block_t *b, const json_ctx_t *ctx, model_t *m,
                      double *width_sum, int *n_ffn, int *wmin, int *wmax)
{
    int n = m->hybrid.n_layers_hybrid;
    if (n + b->attn + b->ffn > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, "block_configs",
                        "more than %d sub-layers", MODEL_MAX_MOE_LAYERS);
    if (b->attn) {
        int kv = m->n_heads / b->heads_in_group;
        if (m->n_kv_heads > 0 && kv != m->n_kv_heads) {
            json_ctx_t ac = json_ctx_member(ctx, "attention");
            json_ctx_t k = json_ctx_member(&ac, "n_heads_in_group");
            return err_setf(r->err, ERR_INPUT, r->file, k.path,
                            "%d KV heads here, %d in an earlier block: per-block KV head "
                            "counts are not modelled (scaleplan's model has one)",
                            kv, m->n_kv_heads);
        }
        m->n_kv_heads = kv;
        m->hybrid.block[n++] = MODEL_MIXER_ATTENTION | MODEL_BLOCK_NO_MLP;
    }
    if (b->ffn) {
        m->hybrid.block[n++] = MODEL_MIXER_NONE;
        *width_sum += b->ffn_width;
        *n_ffn += 1;
        *wmin = *n_ffn == 1 || b->ffn_width < *wmin ? b->ffn_width : *wmin;
        *wmax = b->ffn_width > *wmax ? b->ffn_width : *wmax;
    }
    m->hybrid.n_layers_hybrid = n;
    return ERR_OK;
}

/* block_configs into m's pattern and widths. */
static int read_blocks(rd_t *r, model_t *m)
{
    const cJSON *list = NULL;
    if (!has(r, "block_configs"))
        return err_setf(r->err, ERR_INPUT, r->file, "block_configs",
                        "missing: a %s config is read from its per-layer block_configs%s",
                        r->type,
                        has(r, "num_key_value_heads_per_layer")
                            ? " (DeciLM's num_key_value_heads_per_layer, one KV head count a "
                              "layer, is not modelled: scaleplan's model has one)"
                            : "");
    int rc = json_get_array(r->c, "block_configs", &r->ctx, JSON_REQUIRED, &list, r->err);
    if (rc)
        return rc;
    int n = cJSON_GetArraySize(list);
    if (n != m->n_layers)
        return err_setf(r->err, ERR_INPUT, r->file, "block_configs",
                        "has %d entries but num_hidden_layers is %d (one entry a layer)", n,
                        m->n_layers);
    json_ctx_t lc = json_ctx_member(&r->ctx, "block_configs");
    double width_sum = 0;
    int n_ffn = 0, wmin = 0, wmax = 0, i = 0;
    m->n_kv_heads = 0;
    m->hybrid.n_layers_hybrid = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        json_ctx_t ec = json_ctx_index(&lc, i);
        nas_block_t b = {0};
        if ((rc = read_entry(r, e, &ec, m, &b)) ||
            (rc = add_blocks(r, &b, &ec, m, &width_sum, &n_ffn, &wmin, &wmax)))
            return rc;
    }
    if (n_ffn == 0 || m->n_kv_heads == 0)
        return err_setf(r->err, ERR_INPUT, r->file, "block_configs",
                        "every %s is a no-op: not a language model scaleplan prices",
                        n_ffn == 0 ? "ffn" : "attention");
    m->n_layers = m->hybrid.n_layers_hybrid;
    /* the mean, kept a multiple of the rule's 256 as every block's width is
     * (tensor parallelism splits it) */
    m->ffn = 256 * (int)lround(width_sum / n_ffn / 256);
    if (wmin != wmax)
        notes_add(r->notes, NOTE_ASSUMED, "block_configs",
                  "APPROXIMATED: the %d FFN blocks' widths (%d to %d, from each ffn_mult) are "
                  "priced at their mean, %d to a multiple of 256 (scaleplan's model has one MLP "
                  "width): total parameters and FLOPs keep their sum within %.0f parameters, but a pipeline "
                  "stage holds the mean width a block, not its own blocks' widths",
                  n_ffn, wmin, wmax, m->ffn,
                  fabs(width_sum - (double)m->ffn * n_ffn) * (m->mlp == MODEL_MLP_SWIGLU ? 3.0 : 2.0) *
                      m->hidden);
    return ERR_OK;
}

/* Nemotron-NAS / DeciLM (DeciLMConfig, a LlamaConfig with block_configs):
 * the Llama block's norms, activation and positions, sub-layers per
 * block_configs. */
int hf_read_nemotron_nas(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc;
    if ((rc = geti(r, "num_hidden_layers", 1, MAX_LAYERS, &m->n_layers)) ||
        (rc = geti(r, "hidden_size", 1, MAX_WIDTH, &m->hidden)) ||
        (rc = geti(r, "num_attention_heads", 1, MAX_WIDTH, &m->n_heads)) ||
        (rc = geti(r, "vocab_size", 1, MAX_VOCAB, &m->vocab)))
        return rc;
    if (m->hidden % m->n_heads != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "num_attention_heads",
                        "must divide hidden_size %d (got %d)", m->hidden, m->n_heads);
    m->head_dim = m->hidden / m->n_heads; /* DeciLMAttention: hidden / heads */
    m->max_seq = 2048;                    /* LlamaConfig's default */
    m->rope_theta = 10000.0;
    m->norm_eps = 1e-6;
    if ((rc = opti(r, "max_position_embeddings", 1, MAX_SEQ, &m->max_seq)) ||
        (rc = optd(r, "rope_theta", 1, 1e12, &m->rope_theta)) ||
        (rc = optd(r, "rms_norm_eps", 1e-12, 0.1, &m->norm_eps)) ||
        (rc = optd(r, "attention_dropout", 0, 1, &m->dropout)) ||
        (rc = hf_read_tie(r, false, m)) || (rc = hf_read_attention_bias(r, false, m)) ||
        (rc = optb(r, "mlp_bias", &m->mlp_bias)) || (rc = hf_read_act(r, "hidden_act", m)) ||
        (rc = read_blocks(r, m)))
        return rc;
    m->norms_per_layer = 1; /* each sub-layer its own pre-norm */
    return ERR_OK;
}
