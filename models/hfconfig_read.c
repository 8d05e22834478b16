/* hfconfig_read: the pieces every Hugging Face config reader shares: the
 * core sizes and heads, the activation, attention biases, tied embeddings,
 * sliding windows, the llama-style block and MoE limits
 * (models/hfconfigInt.h). */
#include "models/hfconfigInt.h"

#include <stdio.h>
#include <string.h>

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

int hf_read_tie(rd_t *r, bool def, model_t *m)
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

/* hf_read_tie for a type read by structure: its class default where the table
 * knows it, scaleplan's (false) otherwise. */
int hf_read_structure_tie(rd_t *r, model_t *m)
{
    for (size_t i = 0; i < sizeof STRUCTURE_TIE / sizeof STRUCTURE_TIE[0]; i++)
        if (strcmp(STRUCTURE_TIE[i].type, r->own_type) == 0)
            return read_tie_of(r, STRUCTURE_TIE[i].tied, r->own_type, m);
    return hf_read_tie(r, false, m);
}

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
    } else if (m->head_dim == 0 && r->mla) {
        /* the MLA reader sets it from qk_nope_head_dim + qk_rope_head_dim */
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

int hf_read_core(rd_t *r, model_t *m, const size_defaults_t *defs, int max_pos_default)
{
    int rc;
    bool req = defs == NULL;
    size_defaults_t d = defs ? *defs : (size_defaults_t){0};
    if (r->layers_default > 0 && !has(r, "num_hidden_layers")) {
        m->n_layers = r->layers_default;
        absent(r, "num_hidden_layers", "%d, the entries of the config's layer list",
               m->n_layers);
    } else if ((rc = sized(r, "num_hidden_layers", 1, MAX_LAYERS, d.layers, req,
                           &m->n_layers))) {
        return rc;
    }
    if ((rc = sized(r, "hidden_size", 1, MAX_WIDTH, d.hidden, req, &m->hidden)) ||
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
int hf_read_act(rd_t *r, const char *key, model_t *m)
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
int hf_read_attention_bias(rd_t *r, bool def, model_t *m)
{
    bool b = def;
    int rc = optb(r, "attention_bias", &b);
    if (!rc && b)
        m->qkv_bias = m->out_bias = true;
    return rc;
}

/* Sliding-window attention: no parameters; model FLOPs count it as full
 * attention, the step prices it windowed (sim/cost_attn.c price_window). */
void hf_note_window(rd_t *r, model_t *m, int window, int layers)
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
 * whole sequence (hf_note_window). */
int hf_read_window(rd_t *r, model_t *m, int layers)
{
    int w = 0;
    int rc = readi(r, "sliding_window", 1, MAX_SEQ, &w);
    if (!rc && !has(r, "sliding_window"))
        absent(r, "sliding_window", "no sliding window: every block attends to the whole "
                                    "sequence");
    if (!rc)
        hf_note_window(r, m, w, layers);
    return rc;
}

void hf_llama_block(model_t *m)
{
    m->family = MODEL_FAMILY_LLAMA;
    m->norm = MODEL_NORM_RMSNORM;
    m->mlp = MODEL_MLP_SWIGLU;
    m->act = MODEL_ACT_SILU;
    m->pos = MODEL_POS_ROPE;
}

/* Routed experts on every block. */
void hf_all_moe(model_t *m)
{
    for (int i = 0; i < m->n_layers; i++)
        model_moe_set_layer(m, i, true);
}

int hf_moe_layers_limit(rd_t *r, const model_t *m)
{
    if (m->n_layers > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, "num_hidden_layers",
                        "a mixture-of-experts model may have at most %d layers (got %d)",
                        MODEL_MAX_MOE_LAYERS, m->n_layers);
    return ERR_OK;
}
