/* hfconfig: one reader per Hugging Face model_type, and one by structure
 * for any other decoder config. Each states the tensors its architecture
 * has (what model_params then counts) and the defaults of the transformers
 * configuration class for keys a config leaves out. Sources: the
 * modeling_*.py / configuration_*.py of huggingface/transformers for each
 * type; the counts they give are checked against published figures in
 * tests/test_hfconfig.c and tests/test_hfstructure.c. */
#include "models/hfconfig.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "models/hybrid_config.h"

#define MAX_LAYERS 100000
#define MAX_WIDTH 10000000L
#define MAX_VOCAB 100000000L
#define MAX_SEQ 100000000L

typedef struct {
    const cJSON *c;   /* the object being read (a text_config inside a wrapper) */
    json_ctx_t ctx;   /* its path, for messages */
    const char *file;
    const char *type; /* the model_type it is read as ("scaleplan" when read by
                         structure: absent keys then take scaleplan's own defaults) */
    const char *own_type; /* the config's own model_type, for messages */
    bool tie_outside; /* the wrapper config sets tie_word_embeddings */
    bool say_defaults; /* list what absent keys default to (not for catalog entries) */
    const char *eps_key;  /* the norm epsilon's key, NULL when the type has none */
    const char *rope_key; /* the RoPE base's key */
    int head_dim_default; /* the class default of head_dim, 0: hidden / heads */
    bool mla;             /* head sizes come from the MLA keys (DeepSeek) */
    notes_t *notes;
    err_t *err;
} rd_t;

static bool has(const rd_t *r, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->c, k);
    return v && !cJSON_IsNull(v);
}

static int geti(rd_t *r, const char *k, long lo, long hi, int *out)
{
    return json_get_int(r->c, k, &r->ctx, JSON_REQUIRED, lo, hi, out, r->err);
}

/* A note on key (its path in the file). */
static void assumed(rd_t *r, const char *key, const char *fmt, const char *detail)
{
    json_ctx_t k = json_ctx_member(&r->ctx, key);
    notes_add(r->notes, NOTE_ASSUMED, k.path, fmt, detail);
}

/* Say that key is absent and what stands for it: the class default of the
 * type, or what absence means. Every value a reader fills in goes through
 * here, so nothing is taken silently from a user's config; scaleplan's own
 * catalog entries are checked as they stand (their figures are pinned in
 * tests/test_hfconfig.c) and say nothing. */
static void absent(rd_t *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void absent(rd_t *r, const char *key, const char *fmt, ...)
{
    if (!r->say_defaults || !r->notes)
        return;
    char what[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    json_ctx_t k = json_ctx_member(&r->ctx, key);
    notes_add(r->notes, NOTE_ASSUMED, k.path, "absent: %s", what);
}

/* Optional keys read quietly: the caller says what their absence means. */
static int readi(rd_t *r, const char *k, long lo, long hi, int *out)
{
    return json_get_int(r->c, k, &r->ctx, JSON_OPTIONAL, lo, hi, out, r->err);
}

static int readb(rd_t *r, const char *k, bool *out)
{
    return json_get_bool(r->c, k, &r->ctx, JSON_OPTIONAL, out, r->err);
}

static int readd(rd_t *r, const char *k, double lo, double hi, double *out)
{
    return json_get_double(r->c, k, &r->ctx, JSON_OPTIONAL, lo, hi, out, r->err);
}

static int reads(rd_t *r, const char *k, char *out, size_t cap)
{
    return json_get_string(r->c, k, &r->ctx, JSON_OPTIONAL, out, cap, r->err);
}

/* Optional keys whose absence leaves *out, the type's class default, and
 * says so. */
static int opti(rd_t *r, const char *k, long lo, long hi, int *out)
{
    if (!has(r, k))
        absent(r, k, "%s's default %d", r->type, *out);
    return readi(r, k, lo, hi, out);
}

static int optd(rd_t *r, const char *k, double lo, double hi, double *out)
{
    if (!has(r, k))
        absent(r, k, "%s's default %g", r->type, *out);
    return readd(r, k, lo, hi, out);
}

static int optb(rd_t *r, const char *k, bool *out)
{
    if (!has(r, k))
        absent(r, k, "%s's default %s", r->type, *out ? "true" : "false");
    return json_get_bool(r->c, k, &r->ctx, JSON_OPTIONAL, out, r->err);
}

static int opts(rd_t *r, const char *k, char *out, size_t cap)
{
    if (!has(r, k))
        absent(r, k, "%s's default '%s'", r->type, out);
    return reads(r, k, out, cap);
}

/* tie_word_embeddings with the class default of the type, said when the
 * key is absent (the default decides whether the output head is a second
 * vocab x hidden matrix). */
static int read_tie_of(rd_t *r, bool def, const char *whose, model_t *m)
{
    m->tied_embeddings = def;
    if (r->tie_outside)
        return ERR_OK; /* read from the wrapper afterwards */
    if (!has(r, "tie_word_embeddings")) {
        absent(r, "tie_word_embeddings", "%s's default, %s (%s)", whose,
               def ? "true" : "false",
               def ? "the output head is the word embedding" : "a separate output head");
        return ERR_OK;
    }
    return readb(r, "tie_word_embeddings", &m->tied_embeddings);
}

static int read_tie(rd_t *r, bool def, model_t *m)
{
    return read_tie_of(r, def, r->type, m);
}

/* tie_word_embeddings' class default for the types read by structure whose
 * transformers configuration class ties by default (most decoder classes,
 * LlamaConfig among them, set false, scaleplan's default by structure).
 * Source: the classes' __init__ signatures in transformers. */
static const struct {
    const char *type;
    bool tied;
} STRUCTURE_TIE[] = {
    {"cohere", true},  /* CohereConfig(tie_word_embeddings=True): Command-R, Aya 23 */
    {"cohere2", true}, /* Cohere2Config(tie_word_embeddings=True): Command R7B */
};

/* read_tie for a type read by structure: its class default where the table
 * knows it, scaleplan's (false) otherwise. */
static int read_structure_tie(rd_t *r, model_t *m)
{
    for (size_t i = 0; i < sizeof STRUCTURE_TIE / sizeof STRUCTURE_TIE[0]; i++)
        if (strcmp(STRUCTURE_TIE[i].type, r->own_type) == 0)
            return read_tie_of(r, STRUCTURE_TIE[i].tied, r->own_type, m);
    return read_tie(r, false, m);
}

/* The sizes every llama-style config has. defs gives class defaults for
 * configs that leave them out (Gemma 3's text config), NULL when the keys
 * are required. */
typedef struct {
    int hidden, layers, heads, kv_heads, head_dim, ffn, vocab;
} size_defaults_t;

static int sized(rd_t *r, const char *k, long lo, long hi, int def, bool required, int *out)
{
    if (required)
        return geti(r, k, lo, hi, out);
    *out = def;
    return opti(r, k, lo, hi, out);
}

/* num_key_value_heads (absent: one per attention head) and head_dim
 * (absent: the type's class default, or hidden_size / heads). */
static int read_heads(rd_t *r, model_t *m)
{
    m->n_kv_heads = m->n_heads;
    m->head_dim = 0;
    int rc;
    if ((rc = readi(r, "num_key_value_heads", 1, MAX_WIDTH, &m->n_kv_heads)) ||
        (rc = readi(r, "head_dim", 1, MAX_WIDTH, &m->head_dim)))
        return rc;
    if (!has(r, "num_key_value_heads") && !r->mla)
        absent(r, "num_key_value_heads", "num_attention_heads, %d (no grouped-query attention)",
               m->n_heads);
    if (m->head_dim == 0 && r->head_dim_default > 0) {
        m->head_dim = r->head_dim_default;
        absent(r, "head_dim", "%s's default %d", r->type, m->head_dim);
    } else if (m->head_dim == 0) {
        if (m->hidden % m->n_heads != 0)
            return err_setf(r->err, ERR_INPUT, r->file, "num_attention_heads",
                            "must divide hidden_size %d (got %d)", m->hidden, m->n_heads);
        m->head_dim = m->hidden / m->n_heads;
        if (!r->mla)
            absent(r, "head_dim", "hidden_size / num_attention_heads = %d", m->head_dim);
    }
    return ERR_OK;
}

static int read_core(rd_t *r, model_t *m, const size_defaults_t *defs, int max_pos_default)
{
    int rc;
    bool req = defs == NULL;
    size_defaults_t d = defs ? *defs : (size_defaults_t){0};
    if ((rc = sized(r, "num_hidden_layers", 1, MAX_LAYERS, d.layers, req, &m->n_layers)) ||
        (rc = sized(r, "hidden_size", 1, MAX_WIDTH, d.hidden, req, &m->hidden)) ||
        (rc = sized(r, "num_attention_heads", 1, MAX_WIDTH, d.heads, req, &m->n_heads)) ||
        (rc = sized(r, "intermediate_size", 1, MAX_WIDTH, d.ffn, req, &m->ffn)) ||
        (rc = sized(r, "vocab_size", 1, MAX_VOCAB, d.vocab, req, &m->vocab)))
        return rc;
    m->max_seq = max_pos_default;
    if ((rc = opti(r, "max_position_embeddings", 1, MAX_SEQ, &m->max_seq)))
        return rc;
    if (defs) {
        if ((rc = sized(r, "num_key_value_heads", 1, MAX_WIDTH, d.kv_heads, false,
                        &m->n_kv_heads)) ||
            (rc = sized(r, "head_dim", 1, MAX_WIDTH, d.head_dim, false, &m->head_dim)))
            return rc;
    } else if ((rc = read_heads(r, m))) {
        return rc;
    }
    if (m->n_heads % m->n_kv_heads != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "num_key_value_heads",
                        "must divide num_attention_heads %d (got %d)", m->n_heads,
                        m->n_kv_heads);
    m->rope_theta = 10000.0;
    m->norm_eps = 1e-6;
    if ((rc = optd(r, r->rope_key, 1, 1e12, &m->rope_theta)) ||
        (r->eps_key && (rc = optd(r, r->eps_key, 1e-12, 0.1, &m->norm_eps))) ||
        (rc = optd(r, "attention_dropout", 0, 1, &m->dropout)))
        return rc;
    return ERR_OK;
}

/* hidden_act as the activation of an MLP. */
static int read_act(rd_t *r, const char *key, model_t *m)
{
    char act[48] = "";
    int rc = reads(r, key, act, sizeof act);
    if (!rc && !act[0])
        absent(r, key, "%s's default, %s", r->type,
               model_act_name(m->act, m->mlp == MODEL_MLP_SWIGLU));
    if (rc || !act[0])
        return rc;
    if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
        m->act = MODEL_ACT_SILU;
    else if (strncmp(act, "gelu", 4) == 0 || strcmp(act, "quick_gelu") == 0)
        m->act = MODEL_ACT_GELU;
    else if (strcmp(act, "relu") == 0)
        m->act = MODEL_ACT_RELU;
    else if (strcmp(act, "relu2") == 0)
        m->act = MODEL_ACT_RELU2;
    else
        return err_setf(r->err, ERR_INPUT, r->file, key,
                        "activation '%s' is not one scaleplan prices (silu, gelu, relu, relu2)",
                        act);
    return ERR_OK;
}

/* attention_bias: Q, K, V and output biases together. */
static int read_attention_bias(rd_t *r, bool def, model_t *m)
{
    bool b = def;
    int rc = optb(r, "attention_bias", &b);
    if (!rc && b)
        m->qkv_bias = m->out_bias = true;
    return rc;
}

/* Sliding-window attention: no parameters; model FLOPs count it as full
 * attention, the step prices it windowed (sim/costs price_window). */
static void note_window(rd_t *r, model_t *m, int window, int layers)
{
    if (window <= 0 || layers <= 0)
        return;
    m->window = window;
    m->window_layers = layers;
    char why[200];
    snprintf(why, sizeof why,
             "%d of %d blocks attend to a %d-token window: no parameters; FLOPs counted as "
             "full attention (Megatron's MFU convention), time as the window's",
             layers, m->n_layers, window);
    assumed(r, "sliding_window", "%s", why);
}

/* sliding_window over `layers` blocks; absent, every block attends to the
 * whole sequence (note_window). */
static int read_window(rd_t *r, model_t *m, int layers)
{
    int w = 0;
    int rc = readi(r, "sliding_window", 1, MAX_SEQ, &w);
    if (!rc && !has(r, "sliding_window"))
        absent(r, "sliding_window", "no sliding window: every block attends to the whole "
                                    "sequence");
    if (!rc)
        note_window(r, m, w, layers);
    return rc;
}

static void llama_block(model_t *m)
{
    m->family = MODEL_FAMILY_LLAMA;
    m->norm = MODEL_NORM_RMSNORM;
    m->mlp = MODEL_MLP_SWIGLU;
    m->act = MODEL_ACT_SILU;
    m->pos = MODEL_POS_ROPE;
}

/* Routed experts on every block. */
static void all_moe(model_t *m)
{
    for (int i = 0; i < m->n_layers; i++)
        model_moe_set_layer(m, i, true);
}

static int moe_layers_limit(rd_t *r, const model_t *m)
{
    if (m->n_layers > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, "num_hidden_layers",
                        "a mixture-of-experts model may have at most %d layers (got %d)",
                        MODEL_MAX_MOE_LAYERS, m->n_layers);
    return ERR_OK;
}

/* --------------------------------------------------------------- readers */

/* llama, mistral (and the dense DeepSeek LLM, Yi, ... that use them). */
static int read_llama(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    if ((rc = read_core(r, m, NULL, 2048)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = optb(r, "mlp_bias", &m->mlp_bias)) ||
        (rc = read_act(r, "hidden_act", m)))
        return rc;
    if (strcmp(r->type, "mistral") == 0)
        return read_window(r, m, m->n_layers);
    return ERR_OK;
}

/* Qwen (the first Qwen, custom code): QWenMLP's w1 and w2 are each
 * intermediate_size / 2 wide (modeling_qwen.py), so the gated MLP is half
 * the key; c_attn carries a bias ("no_bias" covers the other linears);
 * QWenConfig leaves the embeddings untied by default. */
static int read_qwen1(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    if ((rc = read_core(r, m, NULL, 8192)) || (rc = read_tie(r, false, m)))
        return rc;
    if (m->ffn % 2 != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "intermediate_size",
                        "must be even: Qwen's MLP projections are each half of it (got %d)",
                        m->ffn);
    m->ffn /= 2;
    notes_add(r->notes, NOTE_ASSUMED, "intermediate_size",
              "Qwen's MLP projections are each intermediate_size / 2 = %d wide", m->ffn);
    m->qkv_bias = true;
    return ERR_OK;
}

static int read_mixtral(rd_t *r, model_t *m)
{
    int rc;
    if ((rc = read_llama(r, m)) || (rc = moe_layers_limit(r, m)) ||
        (rc = geti(r, "num_local_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)))
        return rc;
    m->moe.expert_ffn = m->ffn; /* intermediate_size is each expert's width */
    all_moe(m);
    return ERR_OK;
}

/* Qwen2: biases on Q, K and V, never on the output. */
static int read_qwen2(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    if ((rc = read_core(r, m, NULL, 32768)) || (rc = read_tie(r, false, m)) ||
        (rc = read_act(r, "hidden_act", m)))
        return rc;
    m->qkv_bias = true;
    bool use_window = false;
    int max_window_layers = m->n_layers;
    if ((rc = optb(r, "use_sliding_window", &use_window)) ||
        (rc = readi(r, "max_window_layers", 0, MAX_LAYERS, &max_window_layers)))
        return rc;
    if (!use_window) { /* the window's size and layers then do not matter */
        int unused = 0;
        return readi(r, "sliding_window", 1, MAX_SEQ, &unused);
    }
    if (!has(r, "max_window_layers"))
        absent(r, "max_window_layers", "num_hidden_layers, %d (no block uses the window)",
               m->n_layers);
    return read_window(r, m, m->n_layers - max_window_layers);
}

/* Qwen3: per-head RMSNorm on Q and K, attention_bias for biases. */
static int read_qwen3(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    if ((rc = read_core(r, m, NULL, 32768)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = read_act(r, "hidden_act", m)))
        return rc;
    m->qk_norm = MODEL_QK_NORM_HEAD;
    return ERR_OK;
}

/* Qwen-MoE block pattern: block i is sparse unless listed in
 * mlp_only_layers, when (i + 1) % decoder_sparse_step == 0. */
static int qwen_moe_layers(rd_t *r, model_t *m)
{
    int rc, step = 1;
    const cJSON *only = NULL;
    if ((rc = moe_layers_limit(r, m)) || (rc = opti(r, "decoder_sparse_step", 1, MAX_LAYERS, &step)) ||
        (rc = json_get_array(r->c, "mlp_only_layers", &r->ctx, JSON_OPTIONAL, &only, r->err)))
        return rc;
    if (!only)
        absent(r, "mlp_only_layers", "none: decoder_sparse_step alone places the experts");
    for (int i = 0; i < m->n_layers; i++)
        model_moe_set_layer(m, i, (i + 1) % step == 0);
    const cJSON *v;
    int k = 0;
    cJSON_ArrayForEach(v, only)
    {
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 ||
            v->valuedouble >= m->n_layers) {
            json_ctx_t c = json_ctx_index(&r->ctx, k);
            return err_setf(r->err, ERR_INPUT, r->file, c.path,
                            "mlp_only_layers entries are block numbers from 0 to %d",
                            m->n_layers - 1);
        }
        model_moe_set_layer(m, (int)v->valuedouble, false);
        k++;
    }
    return ERR_OK;
}

static int read_qwen_moe(rd_t *r, model_t *m)
{
    bool v3 = strcmp(r->type, "qwen3_moe") == 0;
    int rc = v3 ? read_qwen3(r, m) : read_qwen2(r, m);
    if (rc || (rc = geti(r, "num_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)) ||
        (rc = geti(r, "moe_intermediate_size", 1, MAX_WIDTH, &m->moe.expert_ffn)) ||
        (rc = qwen_moe_layers(r, m)))
        return rc;
    if (!v3) {
        /* Qwen2MoeSparseMoeBlock: one shared expert and its gate. */
        if ((rc = geti(r, "shared_expert_intermediate_size", 1, MAX_WIDTH, &m->moe.shared_ffn)))
            return rc;
        m->moe.n_shared = 1;
        m->moe.shared_gate = true;
    }
    return ERR_OK;
}

/* Gemma: GeGLU, RMSNorm stored as (1 + w), head_dim 256 by default, tied. */
static int read_gemma(rd_t *r, model_t *m)
{
    llama_block(m);
    m->act = MODEL_ACT_GELU;
    int rc;
    bool v2 = strcmp(r->type, "gemma2") == 0, v3 = strcmp(r->type, "gemma3_text") == 0;
    static const size_defaults_t gemma3 = {2304, 26, 8, 4, 256, 9216, 262208};
    r->head_dim_default = 256; /* GemmaConfig / Gemma2Config default */
    if (v3)
        rc = read_core(r, m, &gemma3, 131072);
    else
        rc = read_core(r, m, NULL, 8192);
    if (rc || (rc = read_tie(r, true, m)) || (rc = read_attention_bias(r, false, m)) ||
        (rc = read_act(r, has(r, "hidden_activation") ? "hidden_activation" : "hidden_act", m)))
        return rc;
    m->mlp = MODEL_MLP_SWIGLU; /* gated whatever the activation */
    if (v2 || v3) {
        m->norms_per_layer = 4; /* input, post-attention, pre- and post-feedforward */
        int w = 4096, pattern = v3 ? 6 : 2;
        if ((rc = opti(r, "sliding_window", 1, MAX_SEQ, &w)) ||
            (rc = opti(r, "sliding_window_pattern", 1, MAX_LAYERS, &pattern)))
            return rc;
        note_window(r, m, w, m->n_layers - m->n_layers / pattern);
        if (has(r, "attn_logit_softcapping") || has(r, "final_logit_softcapping"))
            notes_add(r->notes, NOTE_IGNORED, "final_logit_softcapping",
                      "logit soft-capping: no parameters, elementwise cost not priced");
    }
    if (v3)
        m->qk_norm = MODEL_QK_NORM_HEAD;
    return ERR_OK;
}

/* Phi-3/4: fused qkv and gate_up projections (the same counts as separate
 * ones), no biases, untied by default. */
static int read_phi3(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    if ((rc = read_core(r, m, NULL, 4096)) || (rc = read_tie(r, false, m)) ||
        (rc = read_act(r, "hidden_act", m)))
        return rc;
    double partial = 1.0;
    if ((rc = optd(r, "partial_rotary_factor", 0, 1, &partial)))
        return rc;
    m->rope_fraction = partial;
    return read_window(r, m, m->n_layers);
}

/* OLMo: LayerNorm without parameters everywhere. OLMo 2: RMSNorm after
 * attention and after the MLP (no input norm) and RMSNorm over the whole Q
 * and K projections. */
static int read_olmo(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    bool v2 = strcmp(r->type, "olmo2") == 0;
    if (!v2)
        r->eps_key = NULL; /* OLMo's parameter-free LayerNorm has a fixed epsilon */
    if ((rc = read_core(r, m, NULL, 2048)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = read_act(r, "hidden_act", m)))
        return rc;
    if (v2) {
        m->qk_norm = MODEL_QK_NORM_FULL;
    } else {
        m->norm = MODEL_NORM_LAYERNORM;
        m->norm_weightless = true;
        m->norm_eps = 1e-5;
    }
    return ERR_OK;
}

static int read_olmoe(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    if ((rc = read_core(r, m, NULL, 4096)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = read_act(r, "hidden_act", m)) ||
        (rc = moe_layers_limit(r, m)) ||
        (rc = geti(r, "num_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)))
        return rc;
    m->qk_norm = MODEL_QK_NORM_FULL;
    m->moe.expert_ffn = m->ffn; /* intermediate_size is each expert's width */
    all_moe(m);
    return ERR_OK;
}

/* StarCoder2: LayerNorm with bias, plain GELU MLP, biases everywhere
 * (use_bias), tied by default. */
static int read_starcoder2(rd_t *r, model_t *m)
{
    llama_block(m);
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_GELU;
    int rc;
    bool bias = true;
    r->eps_key = "norm_epsilon";
    if ((rc = read_core(r, m, NULL, 4096)) || (rc = read_tie(r, true, m)) ||
        (rc = optb(r, "use_bias", &bias)) || (rc = read_act(r, "hidden_act", m)))
        return rc;
    m->qkv_bias = m->out_bias = m->mlp_bias = bias;
    char norm[32] = "layer_norm";
    if ((rc = opts(r, "norm_type", norm, sizeof norm)))
        return rc;
    if (strcmp(norm, "layer_norm") != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "norm_type",
                        "'%s' is not the LayerNorm StarCoder2 uses", norm);
    return read_window(r, m, m->n_layers);
}

/* GPT-2: learned positions, LayerNorm, GELU, biases everywhere, tied. */
static int read_gpt2(rd_t *r, model_t *m)
{
    int rc;
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_GELU;
    m->pos = MODEL_POS_LEARNED;
    m->qkv_bias = m->out_bias = m->mlp_bias = true;
    m->dropout = 0.1;   /* GPT2Config resid/attn/embd dropout */
    m->norm_eps = 1e-5; /* GPT2Config layer_norm_epsilon */
    m->rope_theta = 0;
    if ((rc = geti(r, "n_layer", 1, MAX_LAYERS, &m->n_layers)) ||
        (rc = geti(r, "n_embd", 1, MAX_WIDTH, &m->hidden)) ||
        (rc = geti(r, "n_head", 1, MAX_WIDTH, &m->n_heads)) ||
        (rc = geti(r, "vocab_size", 1, MAX_VOCAB, &m->vocab)))
        return rc;
    const char *pos_key = has(r, "n_positions") ? "n_positions" : "n_ctx";
    if ((rc = geti(r, pos_key, 1, MAX_SEQ, &m->max_seq)))
        return rc;
    m->ffn = 4 * m->hidden;
    if (!has(r, "n_inner"))
        absent(r, "n_inner", "4 x n_embd = %d", m->ffn);
    if ((rc = readi(r, "n_inner", 1, MAX_WIDTH, &m->ffn)) || (rc = read_tie(r, true, m)) ||
        (rc = optd(r, "resid_pdrop", 0, 1, &m->dropout)) ||
        (rc = optd(r, "layer_norm_epsilon", 1e-12, 0.1, &m->norm_eps)))
        return rc;
    char act[32] = "gelu_new";
    if ((rc = opts(r, "activation_function", act, sizeof act)))
        return rc;
    if (strstr(act, "glu") && strncmp(act, "gelu", 4) != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "activation_function",
                        "gated MLP '%s' in a gpt2-style config is not supported", act);
    if (strcmp(act, "relu") == 0)
        m->act = MODEL_ACT_RELU;
    m->n_kv_heads = m->n_heads;
    if (m->hidden % m->n_heads != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "n_head", "must divide n_embd %d (got %d)",
                        m->hidden, m->n_heads);
    m->head_dim = m->hidden / m->n_heads;
    return ERR_OK;
}

/* GPT-NeoX / Pythia: fused QKV with biases, LayerNorm x 2, plain GELU,
 * partial rotary, untied embed_out by default. */
static int read_gpt_neox(rd_t *r, model_t *m)
{
    int rc;
    llama_block(m);
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_GELU;
    r->eps_key = "layer_norm_eps";
    r->rope_key = has(r, "rotary_emb_base") ? "rotary_emb_base" : "rope_theta";
    /* the hidden dropout keys (two spellings) replace attention_dropout,
     * already said when absent */
    if ((rc = read_core(r, m, NULL, 2048)) || (rc = read_tie(r, false, m)) ||
        (rc = readd(r, "rotary_pct", 0, 1, &m->rope_fraction)) ||
        (rc = readd(r, "hidden_dropout", 0, 1, &m->dropout)) ||
        (rc = readd(r, "hidden_dropout_prob", 0, 1, &m->dropout)))
        return rc;
    if (!has(r, "rotary_pct"))
        absent(r, "rotary_pct", "1, the whole head rotated");
    bool bias = true; /* GPTNeoXConfig attention_bias default */
    if ((rc = optb(r, "attention_bias", &bias)))
        return rc;
    m->qkv_bias = m->out_bias = bias;
    m->mlp_bias = true;
    return ERR_OK;
}

/* OPT: learned positions with two extra rows (OPTLearnedPositionalEmbedding
 * offset 2), biases everywhere, ReLU, tied. */
static int read_opt(rd_t *r, model_t *m)
{
    int rc;
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_RELU;
    m->pos = MODEL_POS_LEARNED;
    m->pos_extra_rows = 2;
    m->norm_eps = 1e-5;
    m->dropout = 0.1; /* OPTConfig dropout */
    m->max_seq = 2048;
    if ((rc = geti(r, "num_hidden_layers", 1, MAX_LAYERS, &m->n_layers)) ||
        (rc = geti(r, "hidden_size", 1, MAX_WIDTH, &m->hidden)) ||
        (rc = geti(r, "num_attention_heads", 1, MAX_WIDTH, &m->n_heads)) ||
        (rc = geti(r, "ffn_dim", 1, MAX_WIDTH, &m->ffn)) ||
        (rc = geti(r, "vocab_size", 1, MAX_VOCAB, &m->vocab)) ||
        (rc = opti(r, "max_position_embeddings", 1, MAX_SEQ, &m->max_seq)) ||
        (rc = read_tie(r, true, m)) || (rc = optd(r, "dropout", 0, 1, &m->dropout)) ||
        (rc = read_act(r, "activation_function", m)))
        return rc;
    int proj = m->hidden;
    bool before = true, bias = true, affine = true;
    if (!has(r, "word_embed_proj_dim"))
        absent(r, "word_embed_proj_dim", "hidden_size, %d (no projection)", proj);
    if ((rc = readi(r, "word_embed_proj_dim", 1, MAX_WIDTH, &proj)) ||
        (rc = optb(r, "do_layer_norm_before", &before)) || (rc = optb(r, "enable_bias", &bias)) ||
        (rc = optb(r, "layer_norm_elementwise_affine", &affine)))
        return rc;
    if (proj != m->hidden)
        return err_setf(r->err, ERR_INPUT, r->file, "word_embed_proj_dim",
                        "%d differs from hidden_size %d: OPT-350m's projected embeddings are "
                        "not modeled",
                        proj, m->hidden);
    if (!before)
        return err_setf(r->err, ERR_INPUT, r->file, "do_layer_norm_before",
                        "false (post-norm OPT-350m without a final norm) is not modeled");
    m->qkv_bias = m->out_bias = m->mlp_bias = bias;
    m->norm_weightless = !affine;
    m->n_kv_heads = m->n_heads;
    if (m->hidden % m->n_heads != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "num_attention_heads",
                        "must divide hidden_size %d (got %d)", m->hidden, m->n_heads);
    m->head_dim = m->hidden / m->n_heads;
    return ERR_OK;
}

/* BLOOM (transformers BloomConfig; BigScience, arXiv:2211.05100): a GPT
 * block (LayerNorm, a GELU MLP of 4 x hidden, biases, tied embeddings)
 * with ALiBi attention biases instead of positions, so no position
 * parameters and no length limit of its own (max_seq: seq_length when
 * given, else the 2,048 it was trained at). The LayerNorm after the word
 * embeddings (2 x hidden parameters, one norm pass a step) is left out. */
static int read_bloom(rd_t *r, model_t *m)
{
    int rc;
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_GELU;
    m->pos = MODEL_POS_NONE;
    m->qkv_bias = m->out_bias = m->mlp_bias = true;
    m->norm_eps = 1e-5;
    m->dropout = 0.0; /* BloomConfig hidden_dropout and attention_dropout */
    m->max_seq = 2048;
    m->rope_theta = 0;
    const char *layers = has(r, "n_layer") ? "n_layer" : "num_hidden_layers";
    const char *heads = has(r, "n_head") ? "n_head" : "num_attention_heads";
    const char *width = has(r, "hidden_size") ? "hidden_size" : "n_embed";
    double hdrop = 0, adrop = 0;
    if ((rc = geti(r, layers, 1, MAX_LAYERS, &m->n_layers)) ||
        (rc = geti(r, width, 1, MAX_WIDTH, &m->hidden)) ||
        (rc = geti(r, heads, 1, MAX_WIDTH, &m->n_heads)) ||
        (rc = geti(r, "vocab_size", 1, MAX_VOCAB, &m->vocab)) ||
        (rc = opti(r, "seq_length", 1, MAX_SEQ, &m->max_seq)) ||
        (rc = optd(r, "layer_norm_epsilon", 1e-12, 0.1, &m->norm_eps)) ||
        (rc = optd(r, "hidden_dropout", 0, 1, &hdrop)) ||
        (rc = optd(r, "attention_dropout", 0, 1, &adrop)) || (rc = read_tie(r, true, m)))
        return rc;
    bool post = false;
    if ((rc = optb(r, "apply_residual_connection_post_layernorm", &post)))
        return rc;
    if (post)
        return err_setf(r->err, ERR_INPUT, r->file, "apply_residual_connection_post_layernorm",
                        "true (the residual taken after the norm) is not modeled");
    m->dropout = hdrop > adrop ? hdrop : adrop;
    m->ffn = 4 * m->hidden;
    m->n_kv_heads = m->n_heads;
    if (m->hidden % m->n_heads != 0)
        return err_setf(r->err, ERR_INPUT, r->file, heads, "must divide %s %d (got %d)", width,
                        m->hidden, m->n_heads);
    m->head_dim = m->hidden / m->n_heads;
    return ERR_OK;
}

/* Falcon's key/value heads and norms per block: the new decoder
 * architecture's grouped heads and one or two parallel norms, or the old
 * one's multi-query or full heads, parallel (one norm) or sequential. */
static int falcon_attention(rd_t *r, bool new_arch, model_t *m)
{
    int rc;
    m->n_kv_heads = m->n_heads;
    if (new_arch) {
        const char *kv = has(r, "num_kv_heads") ? "num_kv_heads" : "n_head_kv";
        int lns = 2;
        if (!has(r, kv))
            absent(r, kv, "num_attention_heads, %d (no grouped-query attention)", m->n_heads);
        if ((rc = readi(r, kv, 1, MAX_WIDTH, &m->n_kv_heads)) ||
            (rc = opti(r, "num_ln_in_parallel_attn", 1, 2, &lns)))
            return rc;
        m->norms_per_layer = lns; /* ln_attn and ln_mlp, or one shared */
        return ERR_OK;
    }
    bool multi_query = true, parallel = true;
    if ((rc = optb(r, "multi_query", &multi_query)) || (rc = optb(r, "parallel_attn", &parallel)))
        return rc;
    m->n_kv_heads = multi_query ? 1 : m->n_heads;
    m->norms_per_layer = parallel ? 1 : 2;
    return ERR_OK;
}

/* Falcon, and the RefinedWeb/RefinedWebModel configs it started as:
 * multi-query or grouped attention in one fused QKV, parallel attention
 * and MLP with one or two LayerNorms, no linear biases, tied. */
static int read_falcon(rd_t *r, model_t *m)
{
    int rc;
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_GELU;
    m->pos = MODEL_POS_ROPE;
    m->norm_eps = 1e-5;
    m->rope_theta = 10000.0;
    m->max_seq = 2048; /* FalconConfig max_position_embeddings */
    bool rw = strcmp(r->type, "RefinedWeb") == 0, rwm = strcmp(r->type, "RefinedWebModel") == 0;
    const char *layers = has(r, "num_hidden_layers") ? "num_hidden_layers" : "n_layer";
    const char *heads = has(r, "num_attention_heads") ? "num_attention_heads" : "n_head";
    const char *hidden = has(r, "hidden_size") ? "hidden_size" : "n_embed";
    if ((rc = geti(r, layers, 1, MAX_LAYERS, &m->n_layers)) ||
        (rc = geti(r, hidden, 1, MAX_WIDTH, &m->hidden)) ||
        (rc = geti(r, heads, 1, MAX_WIDTH, &m->n_heads)) ||
        (rc = geti(r, "vocab_size", 1, MAX_VOCAB, &m->vocab)) ||
        (rc = opti(r, "max_position_embeddings", 1, MAX_SEQ, &m->max_seq)) ||
        (rc = read_tie(r, true, m)) ||
        (rc = optd(r, "layer_norm_epsilon", 1e-12, 0.1, &m->norm_eps)) ||
        (rc = optd(r, "rope_theta", 1, 1e12, &m->rope_theta)) ||
        (rc = optd(r, "hidden_dropout", 0, 1, &m->dropout)))
        return rc;
    if (m->hidden % m->n_heads != 0)
        return err_setf(r->err, ERR_INPUT, r->file, heads, "must divide %s %d (got %d)", hidden,
                        m->hidden, m->n_heads);
    m->head_dim = m->hidden / m->n_heads;
    bool new_arch = rw, bias = false, alibi = false;
    if ((rc = optb(r, "new_decoder_architecture", &new_arch)) || (rc = optb(r, "bias", &bias)) ||
        (rc = optb(r, "alibi", &alibi)) || (rc = falcon_attention(r, new_arch, m)))
        return rc;
    (void)rwm;
    if (m->n_heads % m->n_kv_heads != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "num_kv_heads",
                        "must divide the %d attention heads (got %d)", m->n_heads, m->n_kv_heads);
    m->ffn = 4 * m->hidden;
    if (!has(r, "ffn_hidden_size"))
        absent(r, "ffn_hidden_size", "4 x hidden_size = %d", m->ffn);
    if ((rc = readi(r, "ffn_hidden_size", 1, MAX_WIDTH, &m->ffn)))
        return rc;
    m->qkv_bias = m->out_bias = m->mlp_bias = bias;
    if (alibi)
        m->pos = MODEL_POS_NONE;
    return ERR_OK;
}

static int read_deepseek(rd_t *r, model_t *m);

/* ------------------------------------------------- reading by structure */

/* The keys of each mixture-of-experts quantity, in every naming the
 * decoder configs of 2024-26 use (transformers' configuration_*.py:
 * Mixtral/gpt-oss/MiniMax num_local_experts, Qwen/OLMoE num_experts,
 * DeepSeek/Kimi/GLM n_routed_experts, ERNIE/Hunyuan moe_num_experts and
 * moe_topk, Megatron-style expert widths). NULL-terminated. */
static const char *const EXPERT_KEYS[] = {"n_routed_experts", "num_experts", "num_local_experts",
                                          "moe_num_experts", NULL};
static const char *const TOPK_KEYS[] = {"num_experts_per_tok", "experts_per_token",
                                        "num_experts_per_token", "moe_topk", "moe_k", "top_k",
                                        NULL};
static const char *const EXPERT_FFN_KEYS[] = {"moe_intermediate_size", "expert_intermediate_size",
                                              "moe_ffn_hidden_size", NULL};
static const char *const SHARED_COUNT_KEYS[] = {"n_shared_experts", "num_shared_experts",
                                                "moe_num_shared_experts", "num_shared_expert",
                                                NULL};
static const char *const SHARED_FFN_KEYS[] = {"shared_expert_intermediate_size",
                                              "moe_shared_expert_intermediate_size",
                                              "shared_intermediate_size", NULL};

/* The first of keys the object holds (not null), or NULL. */
static const char *first_key(const cJSON *c, const char *const *keys)
{
    for (size_t i = 0; keys[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, keys[i]);
        if (v && !cJSON_IsNull(v))
            return keys[i];
    }
    return NULL;
}

/* Structural features a config's keys describe, and which reader reads
 * each (arch_t.reads). */
enum { F_MOE = 1, F_MLA = 2, F_INDEXER = 4 };

static unsigned config_features(const cJSON *c, const char **key)
{
    unsigned f = 0;
    *key = NULL;
    if (first_key(c, EXPERT_KEYS)) {
        f |= F_MOE;
        *key = first_key(c, EXPERT_KEYS);
    }
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(c, "kv_lora_rank");
    if (kv && !cJSON_IsNull(kv)) {
        f |= F_MLA;
        *key = "kv_lora_rank";
    }
    const cJSON *ix = cJSON_GetObjectItemCaseSensitive(c, "index_n_heads");
    if (ix && !cJSON_IsNull(ix)) {
        f |= F_INDEXER;
        *key = "index_n_heads";
    }
    return f;
}

/* Whether a string list holds an entry starting with prefix. */
static bool list_has(const cJSON *list, const char *prefix)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, list)
    {
        if (cJSON_IsString(v) && strncmp(v->valuestring, prefix, strlen(prefix)) == 0)
            return true;
    }
    return false;
}

/* The first entry of a layer_types list that is not an attention block
 * (Qwen3-Next/Qwen3.5's linear_attention, LFM2's conv, Mamba), or NULL. */
static const char *unpriced_layer_kind(const cJSON *types)
{
    static const char *const attention[] = {"full_attention", "sliding_attention",
                                            "chunked_attention", "attention"};
    const cJSON *v;
    cJSON_ArrayForEach(v, types)
    {
        if (!cJSON_IsString(v))
            return "(not a name)";
        bool known = false;
        for (size_t i = 0; i < sizeof attention / sizeof attention[0]; i++)
            known = known || strcmp(v->valuestring, attention[i]) == 0;
        if (!known)
            return v->valuestring;
    }
    return NULL;
}

/* Layers the simulator cannot price: Mamba-2/SSM mixers and linear
 * attention have other FLOPs and state than attention, so a config that
 * has them is refused naming the key, never read as attention. */
static int refuse_unpriced_layers(const cJSON *c, const char *file, err_t *err)
{
    static const char *const why = "scaleplan prices one token mixer a block: attention, or the "
                                   "hybrid patterns of models/hybrid_config.h";
    bool hybrid = model_hybrid_config_has(c); /* read by models/hybrid_config.h */
    const char *kind = unpriced_layer_kind(cJSON_GetObjectItemCaseSensitive(c, "layer_types"));
    if (kind && !hybrid)
        return err_setf(err, ERR_INPUT, file, "layer_types",
                        "the layer pattern has '%.40s' layers: not modelled; %s", kind, why);
    static const struct {
        const char *key, *what;
        bool hybrid_reads; /* part of a pattern models/hybrid_config.h reads */
    } keys[] = {
        {"hybrid_override_pattern", "Mamba-2 layers ('M')", true},
        {"layers_block_type", "Mamba layers", false},
        {"mamba_d_ssm", "attention and a Mamba-2 mixer side by side in every block (Falcon-H1)",
         true},
        {"full_attention_interval", "linear-attention layers between the full-attention ones",
         true},
        {"linear_attn_config", "linear-attention layers", true},
        {"linear_num_value_heads", "linear-attention (Gated DeltaNet) layers", true},
        {"block_configs", "per-block attention and MLP sizes (Nemotron-NAS blocks)", false},
        {"ssm_state_size", "state-space (Mamba) mixers", true},
        {"mamba_d_state", "state-space (Mamba) mixers", true},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, keys[i].key);
        if (!v || cJSON_IsNull(v) || (hybrid && keys[i].hybrid_reads))
            continue;
        if (strcmp(keys[i].key, "hybrid_override_pattern") == 0 && !cJSON_IsString(v))
            return err_setf(err, ERR_INPUT, file, keys[i].key,
                            "must be a string of block letters (got a JSON %s)",
                            cJSON_IsNumber(v) ? "number" : "non-string");
        if (cJSON_IsString(v) && !strchr(v->valuestring, 'M'))
            continue; /* a pattern without Mamba layers */
        if (cJSON_IsArray(v) && strcmp(keys[i].key, "layers_block_type") == 0 &&
            !list_has(v, "mamba"))
            continue;
        if (cJSON_IsNumber(v) && strcmp(keys[i].key, "full_attention_interval") == 0 &&
            v->valuedouble <= 1)
            continue;
        return err_setf(err, ERR_INPUT, file, keys[i].key, "the model has %s: not modelled; %s",
                        keys[i].what, why);
    }
    const cJSON *at = hybrid ? NULL : cJSON_GetObjectItemCaseSensitive(c, "attn_type_list");
    const cJSON *v;
    cJSON_ArrayForEach(v, at)
    {
        if (cJSON_IsNumber(v) && v->valuedouble == 0) /* MiniMax: 0 = lightning (linear) */
            return err_setf(err, ERR_INPUT, file, "attn_type_list",
                            "the layer pattern has linear (lightning) attention layers: not "
                            "modelled; %s",
                            why);
    }
    return ERR_OK;
}

/* Blocks listed in an array key (block numbers) get experts. */
static int moe_list_layers(rd_t *r, const cJSON *list, const char *key, model_t *m)
{
    const cJSON *v;
    int k = 0;
    cJSON_ArrayForEach(v, list)
    {
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 ||
            v->valuedouble >= m->n_layers) {
            json_ctx_t list_ctx = json_ctx_member(&r->ctx, key);
            json_ctx_t c = json_ctx_index(&list_ctx, k);
            return err_setf(r->err, ERR_INPUT, r->file, c.path,
                            "%s entries are block numbers from 0 to %d", key, m->n_layers - 1);
        }
        model_moe_set_layer(m, (int)v->valuedouble, true);
        k++;
    }
    return ERR_OK;
}

/* mlp_layer_types (GLM-5.x): one "dense" or "sparse" a block. */
static int moe_typed_layers(rd_t *r, const cJSON *list, model_t *m)
{
    if (cJSON_GetArraySize(list) != m->n_layers)
        return err_setf(r->err, ERR_INPUT, r->file, "mlp_layer_types",
                        "has %d entries for %d blocks", cJSON_GetArraySize(list), m->n_layers);
    const cJSON *v;
    int i = 0;
    cJSON_ArrayForEach(v, list)
    {
        bool sparse = cJSON_IsString(v) && strcmp(v->valuestring, "sparse") == 0;
        if (!sparse && !(cJSON_IsString(v) && strcmp(v->valuestring, "dense") == 0))
            return err_setf(r->err, ERR_INPUT, r->file, "mlp_layer_types",
                            "entry %d is not \"dense\" or \"sparse\"", i);
        model_moe_set_layer(m, i++, sparse);
    }
    return ERR_OK;
}

/* ERNIE 4.5's placement (transformers Ernie4_5_MoeConfig): block i holds
 * experts from moe_layer_start_index to moe_layer_end_index (-1: the last
 * block) when (i + 1) % moe_layer_interval == 0. */
static int ernie_moe_layers(rd_t *r, model_t *m)
{
    int rc, start = 0, end = -1, interval = 1;
    if ((rc = opti(r, "moe_layer_start_index", 0, MAX_LAYERS, &start)) ||
        (rc = readi(r, "moe_layer_end_index", -1, MAX_LAYERS, &end)) ||
        (rc = opti(r, "moe_layer_interval", 1, MAX_LAYERS, &interval)))
        return rc;
    for (int i = 0; i < m->n_layers; i++)
        model_moe_set_layer(m, i, i >= start && (end < 0 || i <= end) && (i + 1) % interval == 0);
    return ERR_OK;
}

/* Which blocks hold experts, from the placement keys the config has:
 * DeepSeek's first_k_dense_replace/moe_layer_freq, Qwen's
 * decoder_sparse_step/mlp_only_layers, Llama 4's
 * interleave_moe_layer_step/moe_layers, GLM-5's mlp_layer_types, ERNIE's
 * moe_layer_start_index/moe_layer_interval; none of them: every block. */
static int moe_placement(rd_t *r, model_t *m)
{
    int rc;
    const cJSON *list = NULL;
    if (has(r, "mlp_layer_types")) {
        if ((rc = json_get_array(r->c, "mlp_layer_types", &r->ctx, JSON_REQUIRED, &list, r->err)))
            return rc;
        return moe_typed_layers(r, list, m);
    }
    if (has(r, "first_k_dense_replace") || has(r, "moe_layer_freq")) {
        int first = 0, freq = 1;
        if ((rc = opti(r, "first_k_dense_replace", 0, MAX_LAYERS, &first)) ||
            (rc = opti(r, "moe_layer_freq", 1, MAX_LAYERS, &freq)))
            return rc;
        for (int i = 0; i < m->n_layers; i++)
            model_moe_set_layer(m, i, i >= first && i % freq == 0);
        return ERR_OK;
    }
    if (has(r, "decoder_sparse_step") || has(r, "mlp_only_layers"))
        return qwen_moe_layers(r, m);
    if (has(r, "moe_layer_start_index") || has(r, "moe_layer_interval"))
        return ernie_moe_layers(r, m);
    if (has(r, "moe_layers")) {
        if ((rc = json_get_array(r->c, "moe_layers", &r->ctx, JSON_REQUIRED, &list, r->err)))
            return rc;
        return moe_list_layers(r, list, "moe_layers", m);
    }
    if (has(r, "interleave_moe_layer_step")) {
        int step = 1;
        if ((rc = readi(r, "interleave_moe_layer_step", 1, MAX_LAYERS, &step)))
            return rc;
        for (int i = step - 1; i < m->n_layers; i += step)
            model_moe_set_layer(m, i, true);
        return ERR_OK;
    }
    absent(r, "first_k_dense_replace", "no placement key: experts on every block");
    all_moe(m);
    return ERR_OK;
}

/* Shared experts in their namings: a total width, or a count of experts
 * of the routed experts' width. */
static int moe_shared(rd_t *r, model_t *m)
{
    int rc, count = 0, width = 0;
    const char *ck = first_key(r->c, SHARED_COUNT_KEYS), *wk = first_key(r->c, SHARED_FFN_KEYS);
    if ((ck && (rc = readi(r, ck, 0, 1 << 20, &count))) ||
        (wk && (rc = readi(r, wk, 0, MAX_WIDTH, &width))))
        return rc;
    if (!ck && !wk)
        absent(r, "n_shared_experts", "no shared experts");
    if (wk) {
        m->moe.shared_ffn = width;
        m->moe.n_shared = width > 0 ? (count > 0 ? count : 1) : 0;
    } else {
        m->moe.shared_ffn = count * m->moe.expert_ffn;
        m->moe.n_shared = count;
    }
    return ERR_OK;
}

/* Routed experts read from whichever naming the config uses; no expert
 * key is a dense model. */
static int read_moe_by_keys(rd_t *r, model_t *m)
{
    const char *ek = first_key(r->c, EXPERT_KEYS), *tk = first_key(r->c, TOPK_KEYS);
    const char *fk = first_key(r->c, EXPERT_FFN_KEYS);
    if (!ek)
        return ERR_OK;
    if (!tk)
        return err_setf(r->err, ERR_INPUT, r->file, "num_experts_per_tok",
                        "missing: %s gives routed experts but no key says how many a token uses "
                        "(num_experts_per_tok, moe_topk, top_k)",
                        ek);
    int rc;
    if ((rc = moe_layers_limit(r, m)) || (rc = geti(r, ek, 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, tk, 1, 1 << 20, &m->moe.top_k)))
        return rc;
    m->moe.expert_ffn = m->ffn;
    if (!fk)
        absent(r, "moe_intermediate_size", "intermediate_size, %d, is each expert's width",
               m->ffn);
    else if ((rc = geti(r, fk, 1, MAX_WIDTH, &m->moe.expert_ffn)))
        return rc;
    bool bias = false;
    char topk[32] = "";
    if ((rc = moe_shared(r, m)) || (rc = readb(r, "use_routing_bias", &bias)) ||
        (rc = reads(r, "topk_method", topk, sizeof topk)) ||
        (rc = readi(r, "n_group", 1, 1 << 20, &m->moe.n_groups)) ||
        (rc = readi(r, "topk_group", 1, 1 << 20, &m->moe.group_topk)))
        return rc;
    m->moe.router_bias = bias || strcmp(topk, "noaux_tc") == 0;
    return moe_placement(r, m);
}

/* QK norm: use_qk_norm (GLM-4.5, MiniMax), per head over head_dim unless
 * qk_norm_type says per_layer (over the whole Q and K projections). */
static int read_qk_norm(rd_t *r, model_t *m)
{
    bool on = false;
    char kind[32] = "per_head";
    int rc;
    if ((rc = readb(r, "use_qk_norm", &on)) || (rc = reads(r, "qk_norm_type", kind, sizeof kind)))
        return rc;
    if (!has(r, "use_qk_norm"))
        absent(r, "use_qk_norm", "no QK norm");
    if (on)
        m->qk_norm = strcmp(kind, "per_layer") == 0 ? MODEL_QK_NORM_FULL : MODEL_QK_NORM_HEAD;
    return ERR_OK;
}

/* Windowed blocks: layer_types' sliding_attention entries, else
 * sliding_window on every block unless use_sliding_window is false. */
static int structure_window(rd_t *r, model_t *m)
{
    const cJSON *types = NULL;
    int rc;
    if ((rc = json_get_array(r->c, "layer_types", &r->ctx, JSON_OPTIONAL, &types, r->err)))
        return rc;
    if (!types) {
        bool use = true;
        if ((rc = readb(r, "use_sliding_window", &use)))
            return rc;
        return use ? read_window(r, m, m->n_layers) : ERR_OK;
    }
    int sliding = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, types)
    {
        if (cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0)
            sliding++;
    }
    return read_window(r, m, sliding);
}

/* A grouped-query decoder read from its keys: the Llama block, the
 * attention and expert keys it gives, multi-token prediction modules. */
static int read_gqa_by_keys(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    if ((rc = read_core(r, m, NULL, 2048)) || (rc = read_structure_tie(r, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = optb(r, "mlp_bias", &m->mlp_bias)) ||
        (rc = read_act(r, "hidden_act", m)) || (rc = read_qk_norm(r, m)) ||
        (rc = read_moe_by_keys(r, m)) || (rc = structure_window(r, m)) ||
        (rc = readi(r, "num_nextn_predict_layers", 0, 64, &m->n_mtp)))
        return rc;
    if (has(r, "attention_chunk_size"))
        notes_add(r->notes, NOTE_ASSUMED, "attention_chunk_size",
                  "chunked attention is counted as full attention");
    if (has(r, "num_mtp_modules"))
        notes_add(r->notes, NOTE_IGNORED, "num_mtp_modules",
                  "multi-token prediction modules of this layout are not counted");
    if (m->n_mtp > 0)
        notes_add(r->notes, NOTE_ASSUMED, "num_nextn_predict_layers",
                  "%d multi-token prediction module(s) of DeepSeek-V3's layout: counted apart "
                  "from the total",
                  m->n_mtp);
    return ERR_OK;
}

/* GLM-4.5/4.6 (transformers Glm4MoeConfig): the keys as read above; the
 * output projection has no bias whatever attention_bias says (only Q, K
 * and V do), and the router always carries the score-correction bias
 * (Glm4MoeTopkRouter.e_score_correction_bias). */
static int read_glm4_moe(rd_t *r, model_t *m)
{
    int rc = read_gqa_by_keys(r, m);
    if (rc)
        return rc;
    m->out_bias = false;
    m->moe.router_bias = model_is_moe(m);
    return ERR_OK;
}

/* Keys that give some blocks another shape than the rest, or parameters
 * the Llama block has not (Gemma 4's wider full-attention heads, shared
 * K/V and per-layer inputs; Gemma 3n's AltUp and LAuReL): reading by
 * structure would count every block alike, so a config that sets one is
 * refused naming it. A key at its neutral value (0, false, null, or equal
 * to the key it differs from) is no such block. */
static int structure_unreadable(rd_t *r)
{
    static const struct {
        const char *key, *same_as, *what;
    } keys[] = {
        {"global_head_dim", "head_dim", "full-attention blocks with another head size"},
        {"num_global_key_value_heads", "num_key_value_heads",
         "full-attention blocks with another number of key/value heads"},
        {"attention_k_eq_v", NULL, "keys and values from one projection"},
        {"hidden_size_per_layer_input", NULL, "per-layer input embeddings"},
        {"num_kv_shared_layers", NULL, "blocks that reuse another block's keys and values"},
        {"use_double_wide_mlp", NULL, "blocks with a double-width MLP"},
        {"altup_num_inputs", NULL, "AltUp streams"},
        {"laurel_rank", NULL, "LAuReL low-rank residuals"},
        {"intermediate_size_mlp", NULL, "dense blocks of another width than intermediate_size"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->c, keys[i].key);
        if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v) ||
            (cJSON_IsNumber(v) && v->valuedouble == 0))
            continue;
        const cJSON *o = keys[i].same_as
                             ? cJSON_GetObjectItemCaseSensitive(r->c, keys[i].same_as)
                             : NULL;
        if (o && cJSON_IsNumber(o) && cJSON_IsNumber(v) && o->valuedouble == v->valuedouble)
            continue;
        return err_setf(r->err, ERR_INPUT, r->file, keys[i].key,
                        "model_type '%s' is not one scaleplan knows by name, and reading it "
                        "by structure cannot count its %s",
                        r->own_type, keys[i].what);
    }
    return ERR_OK;
}

/* A config whose model_type scaleplan does not know by name, read from
 * what its keys describe: MLA (kv_lora_rank, with DeepSeek's reader) or
 * grouped-query attention, experts in any naming. What it cannot read is
 * refused naming the key. */
static int read_structure(rd_t *r, model_t *m)
{
    static const char *const need[] = {"num_hidden_layers", "hidden_size", "num_attention_heads",
                                        "intermediate_size", "vocab_size"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!has(r, need[i]))
            return err_setf(r->err, ERR_INPUT, r->file, need[i],
                            "missing: model_type '%s' is not one scaleplan knows by name, and "
                            "reading it by structure needs %s",
                            r->own_type, need[i]);
    int rc = structure_unreadable(r);
    if (rc || (rc = has(r, "kv_lora_rank") ? read_deepseek(r, m) : read_gqa_by_keys(r, m)))
        return rc;
    char what[200];
    snprintf(what, sizeof what, "%s attention%s, %s", model_is_mla(m) ? "multi-latent" : "grouped-query",
             m->indexer.n_heads > 0 ? " with a sparse-attention indexer" : "",
             model_is_moe(m) ? "routed experts" : "a dense MLP");
    char who[96];
    if (strcmp(r->own_type, "(none)") == 0)
        snprintf(who, sizeof who, "absent");
    else
        snprintf(who, sizeof who, "'%.60s' is not a type scaleplan knows by name", r->own_type);
    notes_add(r->notes, NOTE_ASSUMED, "model_type",
              "%s: read by structure as a decoder with RMSNorm, RoPE and %s (%s) from its keys",
              who, m->mlp == MODEL_MLP_SWIGLU ? "a gated MLP" : "a plain MLP", what);
    return ERR_OK;
}

/* DeepSeek's routed experts: n_routed_experts absent is a dense model. */
static int deepseek_experts(rd_t *r, model_t *m)
{
    int rc, experts = 0;
    if ((rc = readi(r, "n_routed_experts", 1, 1 << 20, &experts)))
        return rc;
    if (experts == 0) {
        absent(r, "n_routed_experts", "a dense model (no routed experts)");
        return ERR_OK;
    }
    int first = 0, freq = 1, shared = 0;
    if ((rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)) ||
        (rc = geti(r, "moe_intermediate_size", 1, MAX_WIDTH, &m->moe.expert_ffn)) ||
        (rc = opti(r, "first_k_dense_replace", 0, MAX_LAYERS, &first)) ||
        (rc = opti(r, "moe_layer_freq", 1, MAX_LAYERS, &freq)) ||
        (rc = opti(r, "n_shared_experts", 0, 1 << 20, &shared)))
        return rc;
    m->moe.n_experts = experts;
    for (int i = 0; i < m->n_layers; i++)
        model_moe_set_layer(m, i, i >= first && i % freq == 0);
    m->moe.n_shared = shared;
    m->moe.shared_ffn = shared * m->moe.expert_ffn;
    char topk[32] = "";
    if ((rc = reads(r, "topk_method", topk, sizeof topk)))
        return rc;
    if (!topk[0])
        absent(r, "topk_method", "plain top-k routing (no score-correction bias)");
    m->moe.router_bias = strcmp(topk, "noaux_tc") == 0;
    /* group-limited routing: n_group groups, topk_group per token */
    if ((rc = readi(r, "n_group", 1, 1 << 20, &m->moe.n_groups)) ||
        (rc = readi(r, "topk_group", 1, 1 << 20, &m->moe.group_topk)))
        return rc;
    if (!has(r, "n_group") || !has(r, "topk_group"))
        absent(r, !has(r, "n_group") ? "n_group" : "topk_group",
               "no group-limited routing: every expert is open to every token");
    return ERR_OK;
}

/* DeepSeek Sparse Attention's indexer (DeepSeek-V3.2, GLM-5): index_n_heads,
 * index_head_dim and index_topk, all three or none. */
static int read_indexer(rd_t *r, model_t *m)
{
    model_indexer_t *x = &m->indexer;
    if (!has(r, "index_n_heads"))
        return ERR_OK;
    int rc;
    if ((rc = geti(r, "index_n_heads", 1, MAX_WIDTH, &x->n_heads)) ||
        (rc = geti(r, "index_head_dim", 1, MAX_WIDTH, &x->head_dim)) ||
        (rc = geti(r, "index_topk", 1, MAX_SEQ, &x->topk)))
        return rc;
    notes_add(r->notes, NOTE_ASSUMED, "index_topk",
              "sparse attention: the indexer's %d heads of %d are counted (parameters, "
              "projection and scoring FLOPs); the attention over its %d selected keys is "
              "priced as full attention over the sequence",
              x->n_heads, x->head_dim, x->topk);
    return ERR_OK;
}

/* DeepSeek-V2/V3: MLA, dense blocks before the first MoE block
 * (first_k_dense_replace) and every moe_layer_freq-th after, shared
 * experts as one MLP, the noaux_tc score-correction bias, and V3's
 * multi-token prediction modules. */
static int read_deepseek(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    r->mla = true;
    if ((rc = read_core(r, m, NULL, 2048)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = read_act(r, "hidden_act", m)) ||
        (rc = moe_layers_limit(r, m)))
        return rc;
    model_mla_t *a = &m->mla;
    if ((rc = geti(r, "kv_lora_rank", 1, MAX_WIDTH, &a->kv_lora_rank)) ||
        (rc = readi(r, "q_lora_rank", 1, MAX_WIDTH, &a->q_lora_rank)) ||
        (rc = geti(r, "qk_nope_head_dim", 1, MAX_WIDTH, &a->qk_nope_dim)) ||
        (rc = geti(r, "qk_rope_head_dim", 1, MAX_WIDTH, &a->qk_rope_dim)) ||
        (rc = geti(r, "v_head_dim", 1, MAX_WIDTH, &a->v_dim)))
        return rc;
    if (!has(r, "q_lora_rank"))
        absent(r, "q_lora_rank", "queries projected directly (no low-rank compression)");
    m->head_dim = a->qk_nope_dim + a->qk_rope_dim;
    m->n_kv_heads = m->n_heads;
    bool other_naming = !has(r, "n_routed_experts") && first_key(r->c, EXPERT_KEYS);
    if ((rc = other_naming ? read_moe_by_keys(r, m) : deepseek_experts(r, m)) ||
        (rc = read_indexer(r, m)) ||
        (rc = readi(r, "num_nextn_predict_layers", 0, 64, &m->n_mtp)))
        return rc;
    if (!has(r, "num_nextn_predict_layers"))
        absent(r, "num_nextn_predict_layers", "no multi-token prediction modules");
    if (m->n_mtp > 0)
        notes_add(r->notes, NOTE_ASSUMED, "num_nextn_predict_layers",
                  "%d multi-token prediction module(s): counted apart from the total (they "
                  "share the embedding and output head), trained with the model",
                  m->n_mtp);
    return ERR_OK;
}

/* gpt-oss: biases on Q, K, V and output, a sink logit per head, a router
 * with bias, experts with biases, alternating sliding windows. */
static int read_gpt_oss(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc;
    if ((rc = read_core(r, m, NULL, 131072)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, true, m)) || (rc = moe_layers_limit(r, m)) ||
        (rc = geti(r, "num_local_experts", 1, 1 << 20, &m->moe.n_experts)))
        return rc;
    const char *k = has(r, "num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
    if ((rc = geti(r, k, 1, 1 << 20, &m->moe.top_k)))
        return rc;
    m->attn_sinks = true;
    m->moe.expert_ffn = m->ffn;
    m->moe.router_bias = m->moe.expert_bias = true;
    all_moe(m);
    const cJSON *types = NULL;
    if ((rc = json_get_array(r->c, "layer_types", &r->ctx, JSON_OPTIONAL, &types, r->err)))
        return rc;
    int sliding = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, types)
    {
        if (cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0)
            sliding++;
    }
    if (!types) {
        sliding = m->n_layers / 2;
        absent(r, "layer_types", "every other block (%d of %d) uses the sliding window", sliding,
               m->n_layers);
    }
    return read_window(r, m, sliding);
}

/* Llama 4 text model: MoE blocks every interleave_moe_layer_step-th block
 * (or the listed moe_layers) with one shared expert of the experts' width,
 * dense blocks of intermediate_size_mlp; QK norm without weights. */
static int read_llama4_text(rd_t *r, model_t *m)
{
    llama_block(m);
    int rc, expert_ffn = 0;
    if ((rc = read_core(r, m, NULL, 4096 * 32)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = read_act(r, "hidden_act", m)) ||
        (rc = moe_layers_limit(r, m)) ||
        (rc = geti(r, "num_local_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)))
        return rc;
    expert_ffn = m->ffn;
    if ((rc = geti(r, "intermediate_size_mlp", 1, MAX_WIDTH, &m->ffn)))
        return rc;
    m->moe.expert_ffn = expert_ffn;
    m->moe.shared_ffn = expert_ffn;
    m->moe.n_shared = 1;
    int step = 1;
    const cJSON *list = NULL;
    if ((rc = readi(r, "interleave_moe_layer_step", 1, MAX_LAYERS, &step)) ||
        (rc = json_get_array(r->c, "moe_layers", &r->ctx, JSON_OPTIONAL, &list, r->err)))
        return rc;
    bool listed = list && cJSON_GetArraySize(list) > 0;
    if (!listed && !has(r, "interleave_moe_layer_step"))
        absent(r, "interleave_moe_layer_step", "%s's default 1 (experts on every block)", r->type);
    if (listed) {
        if ((rc = moe_list_layers(r, list, "moe_layers", m)))
            return rc;
    } else {
        for (int i = step - 1; i < m->n_layers; i += step)
            model_moe_set_layer(m, i, true);
    }
    int chunk = 0;
    if ((rc = readi(r, "attention_chunk_size", 1, MAX_SEQ, &chunk)))
        return rc;
    if (!has(r, "attention_chunk_size"))
        absent(r, "attention_chunk_size", "no chunked attention");
    if (chunk)
        notes_add(r->notes, NOTE_ASSUMED, "attention_chunk_size",
                  "chunked attention (%d tokens) on the RoPE blocks is counted as full "
                  "attention",
                  chunk);
    return ERR_OK;
}

/* Nemotron (Nemotron-4, Minitron): LayerNorm1P (weight and bias), a plain
 * squared-ReLU MLP, RoPE on part of the head, untied by default. */
static int read_nemotron(rd_t *r, model_t *m)
{
    llama_block(m);
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_RELU2;
    int rc;
    r->eps_key = "norm_eps";
    if ((rc = read_core(r, m, NULL, 4096)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = optb(r, "mlp_bias", &m->mlp_bias)) ||
        (rc = read_act(r, "hidden_act", m)))
        return rc;
    m->rope_fraction = 0.5; /* NemotronConfig partial_rotary_factor */
    return optd(r, "partial_rotary_factor", 0, 1, &m->rope_fraction);
}

/* Nemotron-H (transformers NemotronHConfig): blocks of one sub-layer each
 * (hybrid_override_pattern, read by models/hybrid_config.h), RMSNorm, a
 * plain MLP of mlp_hidden_act (up and down projections), attention
 * without position embeddings, routed experts for 'E' layers. */
static int read_nemotron_h(rd_t *r, model_t *m)
{
    llama_block(m);
    m->mlp = MODEL_MLP_GELU; /* NemotronHMLP: up_proj, down_proj */
    m->act = MODEL_ACT_RELU2;
    m->pos = MODEL_POS_NONE;
    int rc;
    r->eps_key = "layer_norm_epsilon";
    if ((rc = read_core(r, m, NULL, 4096)) || (rc = read_tie(r, false, m)) ||
        (rc = read_attention_bias(r, false, m)) || (rc = optb(r, "mlp_bias", &m->mlp_bias)) ||
        (rc = read_act(r, "mlp_hidden_act", m)) || (rc = read_moe_by_keys(r, m)))
        return rc;
    if (m->act == MODEL_ACT_SILU)
        m->mlp = MODEL_MLP_SWIGLU;
    return ERR_OK;
}

/* Qwen3-Next and Qwen3.5 (Qwen3NextConfig): Qwen3's attention blocks with
 * an output gate (q_proj twice the query width) and a quarter of each head
 * rotated, Gated DeltaNet blocks (models/hybrid_config.h), routed experts
 * with one gated shared expert when num_experts is given. */
static int read_qwen3_next(rd_t *r, model_t *m)
{
    /* Qwen3NextConfig's class defaults (an all-MoE text config such as
     * Qwen3.5's leaves intermediate_size out) */
    static const size_defaults_t defs = {2048, 48, 16, 2, 256, 5632, 151936};
    llama_block(m);
    int rc = read_core(r, m, &defs, 32768);
    if (!rc && !(rc = read_tie(r, false, m)) && !(rc = read_attention_bias(r, false, m)))
        rc = read_act(r, "hidden_act", m);
    m->qk_norm = MODEL_QK_NORM_HEAD; /* q_norm, k_norm over head_dim */
    m->rope_fraction = 0.25;
    m->hybrid.attn_out_gate = true; /* Qwen3NextAttention.q_proj: query and gate */
    if (rc || (rc = optd(r, "partial_rotary_factor", 0, 1, &m->rope_fraction)) ||
        !has(r, "num_experts"))
        return rc;
    if ((rc = geti(r, "num_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)) ||
        (rc = geti(r, "moe_intermediate_size", 1, MAX_WIDTH, &m->moe.expert_ffn)) ||
        (rc = qwen_moe_layers(r, m)) ||
        (rc = geti(r, "shared_expert_intermediate_size", 1, MAX_WIDTH, &m->moe.shared_ffn)))
        return rc;
    m->moe.n_shared = 1;
    m->moe.shared_gate = true; /* Qwen3NextSparseMoeBlock.shared_expert_gate */
    return ERR_OK;
}

/* Jamba (transformers JambaConfig): the Llama block without position
 * embeddings, a Mamba-1 mixer in the blocks that are not attention
 * (models/hybrid_config.h), routed experts where layer %
 * expert_layer_period == expert_layer_offset, each of intermediate_size. */
static int read_jamba(rd_t *r, model_t *m)
{
    llama_block(m);
    m->pos = MODEL_POS_NONE;
    int rc, period = 2, offset = 1;
    if ((rc = read_core(r, m, NULL, 262144)) || (rc = read_tie(r, false, m)) ||
        (rc = read_act(r, "hidden_act", m)) || (rc = moe_layers_limit(r, m)) ||
        (rc = opti(r, "expert_layer_period", 1, MAX_LAYERS, &period)) ||
        (rc = opti(r, "expert_layer_offset", 0, period - 1, &offset)) ||
        (rc = geti(r, "num_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)))
        return rc;
    m->moe.expert_ffn = m->ffn;
    for (int i = 0; i < m->n_layers; i++)
        model_moe_set_layer(m, i, m->moe.n_experts > 1 && i % period == offset);
    if (m->moe.n_experts == 1)
        m->moe.n_experts = 0; /* JambaConfig: one expert is a dense MLP */
    return ERR_OK;
}

/* --------------------------------------------------------------- table */

typedef int (*read_fn)(rd_t *, model_t *);

typedef struct {
    const char *type;
    read_fn read;
    const char *wrapper_of; /* multimodal wrapper: read text_config as this type */
    unsigned reads;         /* the structural features (F_*) its reader counts */
} arch_t;

static const arch_t ARCHS[] = {
    {"llama", read_llama, NULL, 0},
    {"mistral", read_llama, NULL, 0},
    {"mixtral", read_mixtral, NULL, F_MOE},
    {"qwen", read_qwen1, NULL, 0},
    {"qwen2", read_qwen2, NULL, 0},
    {"qwen2_moe", read_qwen_moe, NULL, F_MOE},
    {"qwen3", read_qwen3, NULL, 0},
    {"qwen3_moe", read_qwen_moe, NULL, F_MOE},
    {"gemma", read_gemma, NULL, 0},
    {"gemma2", read_gemma, NULL, 0},
    {"gemma3_text", read_gemma, NULL, 0},
    {"gemma3", NULL, "gemma3_text", 0},
    {"phi3", read_phi3, NULL, 0},
    {"nemotron", read_nemotron, NULL, 0},
    {"falcon", read_falcon, NULL, 0},
    {"RefinedWeb", read_falcon, NULL, 0},
    {"RefinedWebModel", read_falcon, NULL, 0},
    {"gpt2", read_gpt2, NULL, 0},
    {"bloom", read_bloom, NULL, 0},
    {"gpt_neox", read_gpt_neox, NULL, 0},
    {"opt", read_opt, NULL, 0},
    {"olmo", read_olmo, NULL, 0},
    {"olmo2", read_olmo, NULL, 0},
    {"olmoe", read_olmoe, NULL, F_MOE},
    {"starcoder2", read_starcoder2, NULL, 0},
    {"deepseek_v2", read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"deepseek_v3", read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"gpt_oss", read_gpt_oss, NULL, F_MOE},
    {"llama4_text", read_llama4_text, NULL, F_MOE},
    {"llama4", NULL, "llama4_text", F_MOE},
    {"deepseek_v32", read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"kimi_k2", read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"glm_moe_dsa", read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"glm4_moe", read_glm4_moe, NULL, F_MOE},
    {"minimax_m2", read_gqa_by_keys, NULL, F_MOE},
    {"nemotron_h", read_nemotron_h, NULL, F_MOE},
    {"qwen3_next", read_qwen3_next, NULL, F_MOE},
    {"qwen3_5_moe_text", read_qwen3_next, NULL, F_MOE},
    {"qwen3_5_moe", NULL, "qwen3_5_moe_text", F_MOE},
    {"jamba", read_jamba, NULL, F_MOE},
};

/* Types refused with the reason. */
static const struct {
    const char *type;
    const char *why;
} REFUSED[] = {
    {"bert", "encoder-only"},        {"roberta", "encoder-only"},
    {"distilbert", "encoder-only"},  {"albert", "encoder-only"},
    {"electra", "encoder-only"},     {"deberta", "encoder-only"},
    {"deberta-v2", "encoder-only"},  {"xlm-roberta", "encoder-only"},
    {"modernbert", "encoder-only"},  {"t5", "encoder-decoder"},
    {"mt5", "encoder-decoder"},      {"umt5", "encoder-decoder"},
    {"bart", "encoder-decoder"},     {"mbart", "encoder-decoder"},
    {"pegasus", "encoder-decoder"},  {"marian", "encoder-decoder"},
    {"whisper", "encoder-decoder"},  {"mamba", "state-space"},
    {"mamba2", "state-space"},       {"falcon_mamba", "state-space"},
    {"rwkv", "state-space"},         {"zamba", "hybrid"},
    {"zamba2", "hybrid"},
};

static const arch_t *find_arch(const char *type)
{
    for (size_t i = 0; i < sizeof ARCHS / sizeof ARCHS[0]; i++)
        if (strcmp(ARCHS[i].type, type) == 0)
            return &ARCHS[i];
    return NULL;
}

const char *hfconfig_supported_types(void)
{
    return "llama, mistral, mixtral, qwen, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, "
           "gemma3, phi3, nemotron, falcon, gpt2, bloom, gpt_neox, opt, olmo, olmo2, olmoe, starcoder2, "
           "deepseek_v2, deepseek_v3, deepseek_v32, kimi_k2, glm4_moe, glm_moe_dsa, minimax_m2, "
           "gpt_oss, llama4, nemotron_h, qwen3_next, qwen3_5_moe, jamba";
}

static int refuse(const char *file, const char *type, const char *why, err_t *err)
{
    if (strcmp(why, "encoder-only") == 0)
        return err_setf(err, ERR_INPUT, file, "model_type",
                        "'%s' is an encoder-only model; scaleplan models decoder-only "
                        "language models",
                        type);
    if (strcmp(why, "encoder-decoder") == 0)
        return err_setf(err, ERR_INPUT, file, "model_type",
                        "'%s' is an encoder-decoder model; scaleplan models decoder-only "
                        "language models",
                        type);
    if (strcmp(why, "hybrid") == 0)
        return err_setf(err, ERR_INPUT, file, "model_type",
                        "'%s' applies shared attention blocks (one set of weights reused; "
                        "Zamba2 adds LoRA adapters per use) between its Mamba layers, which "
                        "scaleplan does not model (it prices each block's own mixer)",
                        type);
    return err_setf(err, ERR_INPUT, file, "model_type",
                    "'%s' is a state-space model (Mamba-style, no attention blocks); scaleplan "
                    "models attention transformers",
                    type);
}

/* Any other decoder config: read from what its keys describe. */
static const arch_t BY_STRUCTURE = {"scaleplan", read_structure, NULL,
                                    F_MOE | F_MLA | F_INDEXER};

/* --assume-architecture must not drop what the config describes: a reader
 * that does not count experts or MLA would miscount (Kimi K2 read as llama
 * is 39B, not 1.04T). Refused naming the key and a reading that counts it. */
static int check_assumed(const cJSON *c, const char *file, const arch_t *a, err_t *err)
{
    const char *key;
    unsigned missing = config_features(c, &key) & ~a->reads;
    if (!missing)
        return ERR_OK;
    const char *what = missing & F_INDEXER ? "a sparse-attention indexer"
                       : missing & F_MLA   ? "multi-latent attention"
                                           : "routed experts";
    const char *right = missing & (F_MLA | F_INDEXER)
                            ? "--assume-architecture deepseek_v3 reads it"
                            : "without --assume-architecture scaleplan reads it by structure";
    return err_setf(err, ERR_INPUT, file, key,
                    "the config has %s, which %s's reader does not count (its size would be "
                    "wrong); %s",
                    what, a->type, right);
}

/* A multimodal wrapper's language model: text_config, read as its own
 * model_type when scaleplan knows it, else as fallback (the wrapper's
 * reader, or by structure). */
static int pick_text(const cJSON *c, const char *file, const arch_t *fallback, const arch_t **arch,
                     const cJSON **text, notes_t *notes, err_t *err)
{
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c, "text_config");
    if (!cJSON_IsObject(tc))
        return err_setf(err, ERR_INPUT, file, "text_config",
                        "missing: a %s config holds its language model there", fallback->type);
    int rc = refuse_unpriced_layers(tc, file, err);
    if (rc)
        return rc;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(tc, "model_type");
    const arch_t *own = cJSON_IsString(t) ? find_arch(t->valuestring) : NULL;
    *arch = own && own->read ? own : fallback;
    *text = tc;
    if (cJSON_GetObjectItemCaseSensitive(c, "vision_config"))
        notes_add(notes, NOTE_IGNORED, "vision_config",
                  "the vision tower and projector are not modeled: parameters, FLOPs and "
                  "memory are the language model's");
    return ERR_OK;
}

/* A config without model_type: GPT-2's keys, or refused. */
static int pick_untyped(const cJSON *c, const char *file, const arch_t **arch, notes_t *notes,
                        err_t *err)
{
    if (cJSON_GetObjectItemCaseSensitive(c, "ssm_cfg") ||
        (cJSON_GetObjectItemCaseSensitive(c, "d_model") &&
         !cJSON_GetObjectItemCaseSensitive(c, "n_head") &&
         !cJSON_GetObjectItemCaseSensitive(c, "num_attention_heads")))
        return err_setf(err, ERR_INPUT, file, "model_type",
                        "absent, and d_model/ssm_cfg make this a Mamba (state-space) "
                        "config; scaleplan models attention transformers");
    if (cJSON_GetObjectItemCaseSensitive(c, "n_embd") &&
        cJSON_GetObjectItemCaseSensitive(c, "n_head")) {
        notes_add(notes, NOTE_ASSUMED, "model_type",
                  "absent: read as gpt2 (the config has GPT-2's n_embd/n_head/n_layer)");
        *arch = find_arch("gpt2");
        return ERR_OK;
    }
    if (cJSON_GetObjectItemCaseSensitive(c, "hidden_size") &&
        cJSON_GetObjectItemCaseSensitive(c, "num_attention_heads")) {
        *arch = &BY_STRUCTURE; /* a decoder's keys without a name: said by the reader */
        return ERR_OK;
    }
    return err_setf(err, ERR_INPUT, file, "model_type",
                    "not a transformer config: no model_type (scaleplan reads %s, and other "
                    "decoder configs by structure; --assume-architecture NAME reads it as one "
                    "of them)",
                    hfconfig_supported_types());
}

/* The model_type to read as, after refusals; *text is set to the text
 * config of a multimodal wrapper. */
static int pick_type(const cJSON *c, const char *file, const model_load_opts_t *opts,
                     const arch_t **arch, const cJSON **text, notes_t *notes, err_t *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "model_type");
    const char *type = cJSON_IsString(t) ? t->valuestring : NULL;
    const char *assume = opts && opts->assume_architecture && *opts->assume_architecture
                             ? opts->assume_architecture
                             : NULL;
    *text = c;
    if (type) {
        for (size_t i = 0; i < sizeof REFUSED / sizeof REFUSED[0]; i++)
            if (strcmp(REFUSED[i].type, type) == 0)
                return refuse(file, type, REFUSED[i].why, err);
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "is_encoder_decoder")))
        return refuse(file, type ? type : "this config", "encoder-decoder", err);
    int rc = refuse_unpriced_layers(c, file, err);
    if (rc)
        return rc;
    if (!type && !assume)
        return pick_untyped(c, file, arch, notes, err);
    const char *want = assume ? assume : type;
    const arch_t *a = find_arch(want);
    if (!a && assume)
        return err_setf(err, ERR_INPUT, NULL, "--assume-architecture",
                        "'%s' is not an architecture scaleplan reads (%s)", assume,
                        hfconfig_supported_types());
    if (assume && (!type || strcmp(type, assume) != 0))
        notes_add(notes, NOTE_ASSUMED, "model_type",
                  "'%s' read as %s (--assume-architecture)", type ? type : "(none)", assume);
    bool wrapped = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c, "text_config"));
    if (a && a->wrapper_of)
        rc = pick_text(c, file, find_arch(a->wrapper_of), arch, text, notes, err);
    else if (!a && wrapped)
        rc = pick_text(c, file, &BY_STRUCTURE, arch, text, notes, err);
    else if (a && wrapped && !assume)
        return err_setf(err, ERR_INPUT, file, "text_config",
                        "a %s config holds its language model at the top level; pass the "
                        "language model's own config.json",
                        a->type);
    else
        *arch = a ? a : &BY_STRUCTURE;
    if (rc)
        return rc;
    return assume ? check_assumed(*text, file, *arch, err) : ERR_OK;
}

int model_from_config_ex(const cJSON *config, const char *file, const char *name,
                         const model_load_opts_t *opts, model_t *m, notes_t *notes, err_t *err)
{
    memset(m, 0, sizeof *m);
    json_ctx_t ctx = json_ctx_root(file);
    int rc = json_expect_object(config, &ctx, err);
    if (rc || (rc = json_check_unique_keys(config, &ctx, err)))
        return rc;
    const arch_t *arch = NULL;
    const cJSON *text = NULL;
    if ((rc = pick_type(config, file, opts, &arch, &text, notes, err)))
        return rc;
    bool tie_outside = text != config && cJSON_GetObjectItemCaseSensitive(config,
                                                                          "tie_word_embeddings");
    const cJSON *own = cJSON_GetObjectItemCaseSensitive(text, "model_type");
    if (!cJSON_IsString(own))
        own = cJSON_GetObjectItemCaseSensitive(config, "model_type");
    rd_t r = {.c = text,
              .own_type = cJSON_IsString(own) ? own->valuestring : "(none)",
              .ctx = text == config ? ctx : json_ctx_member(&ctx, "text_config"),
              .file = file,
              .type = arch->type,
              .tie_outside = tie_outside,
              .say_defaults = !(opts && opts->catalog_entry),
              .eps_key = "rms_norm_eps",
              .rope_key = "rope_theta",
              .notes = notes,
              .err = err};
    if ((rc = arch->read(&r, m)) ||
        (rc = model_hybrid_config_read(text, &r.ctx, file, m, notes, err)))
        return rc;
    if (text != config) {
        /* The wrapper's own tie_word_embeddings governs the output head. */
        rd_t top = {.c = config, .ctx = ctx, .file = file, .type = arch->type, .err = err};
        if ((rc = readb(&top, "tie_word_embeddings", &m->tied_embeddings)))
            return rc;
    }
    snprintf(m->arch, sizeof m->arch, "%s", arch == &BY_STRUCTURE ? r.own_type : arch->type);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->display, sizeof m->display, "%s", name);
    snprintf(m->source, sizeof m->source, "%s", file);
    /* scaleplan's own annotations in catalog files (ignored by HF). */
    if ((rc = json_get_string(config, "display_name", &ctx, JSON_OPTIONAL, m->display,
                              sizeof m->display, err)) ||
        (rc = json_get_string(config, "source", &ctx, JSON_OPTIONAL, m->source, sizeof m->source,
                              err)))
        return rc;
    return model_validate(m, file, err);
}

int model_from_config(const cJSON *config, const char *file, const char *name, model_t *m,
                      err_t *err)
{
    return model_from_config_ex(config, file, name, NULL, m, NULL, err);
}
