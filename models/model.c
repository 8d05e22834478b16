#include "models/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/catalog.h"
#include "common/json.h"
#include "common/names.h"

#define CATALOG_DIR "models/catalog"

/* Limits that catch typos and overflow long before any real model. */
#define MAX_LAYERS 100000
#define MAX_WIDTH 10000000L
#define MAX_VOCAB 100000000L
#define MAX_SEQ 100000000L

const char *model_family_name(model_family_t f)
{
    return f == MODEL_FAMILY_LLAMA ? "llama" : "gpt";
}

int model_q_width(const model_t *m) { return m->n_heads * m->head_dim; }
int model_kv_width(const model_t *m) { return m->n_kv_heads * m->head_dim; }

static bool has_key(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return v && !cJSON_IsNull(v);
}

/* Keys that only mixture-of-experts configs carry. Until MoE is modelled,
 * such a config is refused: counting only its dense part would be a silent
 * wrong answer. */
static int refuse_moe(const cJSON *c, const char *file, err_t *err)
{
    static const char *keys[] = {"num_local_experts", "num_experts",
                                 "n_routed_experts", "moe_intermediate_size",
                                 "num_experts_per_tok"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, keys[i]);
        if (v && cJSON_IsNumber(v) && v->valuedouble > 1)
            return err_setf(err, ERR_INPUT, file, keys[i],
                            "mixture-of-experts models are not supported yet "
                            "(only dense decoder-only transformers)");
    }
    return ERR_OK;
}

/* A gpt2-style config: n_layer, n_embd, n_head, n_positions, vocab_size. */
static int load_gpt2_style(const cJSON *c, const json_ctx_t *ctx, model_t *m,
                           err_t *err)
{
    int rc;
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->pos = MODEL_POS_LEARNED;
    m->tied_embeddings = true; /* GPT2Config default */
    m->qkv_bias = m->out_bias = m->mlp_bias = true;
    m->dropout = 0.1; /* GPT2Config default resid/attn/embd dropout */
    m->norm_eps = 1e-5; /* GPT2Config layer_norm_epsilon default */
    m->rope_theta = 0;
    if ((rc = json_get_int(c, "n_layer", ctx, JSON_REQUIRED, 1, MAX_LAYERS,
                           &m->n_layers, err)) ||
        (rc = json_get_int(c, "n_embd", ctx, JSON_REQUIRED, 1, MAX_WIDTH,
                           &m->hidden, err)) ||
        (rc = json_get_int(c, "n_head", ctx, JSON_REQUIRED, 1, MAX_WIDTH,
                           &m->n_heads, err)) ||
        (rc = json_get_int(c, "vocab_size", ctx, JSON_REQUIRED, 1, MAX_VOCAB,
                           &m->vocab, err)))
        return rc;
    const char *pos_key = has_key(c, "n_positions") ? "n_positions" : "n_ctx";
    if ((rc = json_get_int(c, pos_key, ctx, JSON_REQUIRED, 1, MAX_SEQ,
                           &m->max_seq, err)))
        return rc;
    m->ffn = 4 * m->hidden;
    if ((rc = json_get_int(c, "n_inner", ctx, JSON_OPTIONAL, 1, MAX_WIDTH,
                           &m->ffn, err)) ||
        (rc = json_get_bool(c, "tie_word_embeddings", ctx, JSON_OPTIONAL,
                            &m->tied_embeddings, err)) ||
        (rc = json_get_double(c, "resid_pdrop", ctx, JSON_OPTIONAL, 0, 1,
                              &m->dropout, err)) ||
        (rc = json_get_double(c, "layer_norm_epsilon", ctx, JSON_OPTIONAL, 1e-12, 0.1,
                              &m->norm_eps, err)))
        return rc;
    char act[32] = "gelu_new";
    if ((rc = json_get_string(c, "activation_function", ctx, JSON_OPTIONAL,
                              act, sizeof act, err)))
        return rc;
    if (strstr(act, "glu") && strcmp(act, "gelu") != 0 &&
        strncmp(act, "gelu", 4) != 0)
        return err_setf(err, ERR_INPUT, ctx->file, "activation_function",
                        "gated MLP '%s' in a gpt2-style config is not supported",
                        act);
    m->n_kv_heads = m->n_heads;
    if (m->hidden % m->n_heads != 0)
        return err_setf(err, ERR_INPUT, ctx->file, "n_head",
                        "must divide n_embd %d (got %d)", m->hidden,
                        m->n_heads);
    m->head_dim = m->hidden / m->n_heads;
    return ERR_OK;
}

/* Model types whose MLP is gated (SwiGLU) and whose positions are rotary. */
static bool is_llama_like_type(const char *type)
{
    static const char *types[] = {"llama", "mistral", "qwen2", "qwen3",
                                  "internlm2", "yi", "deepseek"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(type, types[i]) == 0)
            return true;
    return false;
}

/* A llama-style config: hidden_size, intermediate_size, num_hidden_layers,
 * num_attention_heads, num_key_value_heads, vocab_size, ... */
static int load_llama_style(const cJSON *c, const json_ctx_t *ctx, model_t *m,
                            err_t *err)
{
    int rc;
    char type[48] = "", act[32] = "silu";
    if ((rc = json_get_string(c, "model_type", ctx, JSON_OPTIONAL, type,
                              sizeof type, err)) ||
        (rc = json_get_string(c, "hidden_act", ctx, JSON_OPTIONAL, act,
                              sizeof act, err)))
        return rc;
    bool gated = is_llama_like_type(type) || strcmp(act, "silu") == 0 ||
                 strcmp(act, "swish") == 0;
    m->family = gated ? MODEL_FAMILY_LLAMA : MODEL_FAMILY_GPT;
    m->mlp = gated ? MODEL_MLP_SWIGLU : MODEL_MLP_GELU;
    m->norm = has_key(c, "layer_norm_eps") && !has_key(c, "rms_norm_eps")
                  ? MODEL_NORM_LAYERNORM
                  : MODEL_NORM_RMSNORM;
    m->pos = MODEL_POS_ROPE;
    m->tied_embeddings = false; /* LlamaConfig/MistralConfig/Qwen2Config default */
    m->qkv_bias = strcmp(type, "qwen2") == 0; /* Qwen2 always biases Q, K, V */
    m->out_bias = m->mlp_bias = false;
    m->dropout = 0;
    m->max_seq = 2048; /* LlamaConfig default */
    m->norm_eps = 1e-6;       /* LlamaConfig rms_norm_eps default */
    m->rope_theta = 10000.0;  /* LlamaConfig rope_theta default */
    if ((rc = json_get_int(c, "num_hidden_layers", ctx, JSON_REQUIRED, 1,
                           MAX_LAYERS, &m->n_layers, err)) ||
        (rc = json_get_int(c, "hidden_size", ctx, JSON_REQUIRED, 1, MAX_WIDTH,
                           &m->hidden, err)) ||
        (rc = json_get_int(c, "num_attention_heads", ctx, JSON_REQUIRED, 1,
                           MAX_WIDTH, &m->n_heads, err)) ||
        (rc = json_get_int(c, "intermediate_size", ctx, JSON_REQUIRED, 1,
                           MAX_WIDTH, &m->ffn, err)) ||
        (rc = json_get_int(c, "vocab_size", ctx, JSON_REQUIRED, 1, MAX_VOCAB,
                           &m->vocab, err)) ||
        (rc = json_get_int(c, "max_position_embeddings", ctx, JSON_OPTIONAL,
                           1, MAX_SEQ, &m->max_seq, err)) ||
        (rc = json_get_bool(c, "tie_word_embeddings", ctx, JSON_OPTIONAL,
                            &m->tied_embeddings, err)) ||
        (rc = json_get_double(c, "attention_dropout", ctx, JSON_OPTIONAL, 0, 1,
                              &m->dropout, err)) ||
        (rc = json_get_double(c, "rope_theta", ctx, JSON_OPTIONAL, 1, 1e12, &m->rope_theta,
                              err)) ||
        (rc = json_get_double(c, has_key(c, "rms_norm_eps") ? "rms_norm_eps" : "layer_norm_eps",
                              ctx, JSON_OPTIONAL, 1e-12, 0.1, &m->norm_eps, err)))
        return rc;
    bool attn_bias = false;
    if ((rc = json_get_bool(c, "attention_bias", ctx, JSON_OPTIONAL,
                            &attn_bias, err)) ||
        (rc = json_get_bool(c, "mlp_bias", ctx, JSON_OPTIONAL, &m->mlp_bias,
                            err)))
        return rc;
    if (attn_bias)
        m->qkv_bias = m->out_bias = true;
    m->n_kv_heads = m->n_heads;
    if ((rc = json_get_int(c, "num_key_value_heads", ctx, JSON_OPTIONAL, 1,
                           MAX_WIDTH, &m->n_kv_heads, err)))
        return rc;
    m->head_dim = 0;
    if ((rc = json_get_int(c, "head_dim", ctx, JSON_OPTIONAL, 1, MAX_WIDTH,
                           &m->head_dim, err)))
        return rc;
    if (m->head_dim == 0) {
        if (m->hidden % m->n_heads != 0)
            return err_setf(err, ERR_INPUT, ctx->file, "num_attention_heads",
                            "must divide hidden_size %d (got %d)", m->hidden,
                            m->n_heads);
        m->head_dim = m->hidden / m->n_heads;
    }
    if (m->n_heads % m->n_kv_heads != 0)
        return err_setf(err, ERR_INPUT, ctx->file, "num_key_value_heads",
                        "must divide num_attention_heads %d (got %d)",
                        m->n_heads, m->n_kv_heads);
    return ERR_OK;
}

int model_validate(const model_t *m, const char *ctx, err_t *err)
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
    return ERR_OK;
}

int model_from_config(const cJSON *config, const char *file, const char *name,
                      model_t *m, err_t *err)
{
    memset(m, 0, sizeof *m);
    json_ctx_t ctx = json_ctx_root(file);
    int rc = json_expect_object(config, &ctx, err);
    if (rc)
        return rc;
    if ((rc = refuse_moe(config, file, err)))
        return rc;
    bool gpt2_keys = has_key(config, "n_embd") || has_key(config, "n_layer");
    bool llama_keys =
        has_key(config, "hidden_size") || has_key(config, "num_hidden_layers");
    if (!gpt2_keys && !llama_keys) {
        if (has_key(config, "text_config"))
            return err_setf(err, ERR_INPUT, file, "text_config",
                            "multimodal configs are not supported; pass the "
                            "language model's own config.json");
        return err_setf(err, ERR_INPUT, file, NULL,
                        "not a transformer config: expected gpt2-style "
                        "n_layer/n_embd/n_head or llama-style "
                        "hidden_size/num_hidden_layers keys");
    }
    rc = gpt2_keys ? load_gpt2_style(config, &ctx, m, err)
                   : load_llama_style(config, &ctx, m, err);
    if (rc)
        return rc;
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->display, sizeof m->display, "%s", name);
    snprintf(m->source, sizeof m->source, "%s", file);
    /* scaleplan's own annotations in catalog files (ignored by HF). */
    if ((rc = json_get_string(config, "display_name", &ctx, JSON_OPTIONAL,
                              m->display, sizeof m->display, err)) ||
        (rc = json_get_string(config, "source", &ctx, JSON_OPTIONAL, m->source,
                              sizeof m->source, err)))
        return rc;
    return model_validate(m, file, err);
}

/* The model name for a config file: its stem, or for ".../NAME/config.json"
 * the directory name, which is how Hugging Face checkouts are laid out. */
static void name_from_path(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, "config.json") == 0 && base > path + 1) {
        const char *end = base - 1; /* the '/' before config.json */
        const char *start = end;
        while (start > path && start[-1] != '/')
            start--;
        snprintf(out, cap, "%.*s", (int)(end - start), start);
        return;
    }
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    snprintf(out, cap, "%.*s", (int)n, base);
}

static int load_file(const char *path, model_t *m, err_t *err)
{
    cJSON *root = NULL;
    int rc = json_parse_file(path, &root, err);
    if (rc)
        return rc;
    char name[MODEL_NAME_MAX];
    name_from_path(path, name, sizeof name);
    rc = model_from_config(root, path, name, m, err);
    cJSON_Delete(root);
    return rc;
}

static int load_catalog_entry(const char *name, model_t *m, err_t *err)
{
    char rel[160], origin[CATALOG_ORIGIN_MAX];
    snprintf(rel, sizeof rel, CATALOG_DIR "/%s.json", name);
    char *text = NULL;
    size_t len = 0;
    int rc = catalog_read(rel, &text, &len, origin, sizeof origin, err);
    if (rc)
        return rc;
    cJSON *root = NULL;
    rc = json_parse_text(text, len, origin, &root, err);
    free(text);
    if (rc)
        return rc;
    rc = model_from_config(root, origin, name, m, err);
    cJSON_Delete(root);
    return rc;
}

/* Whether a catalog file lists alias among its "aliases". */
static bool catalog_has_alias(const char *name, const char *alias)
{
    char rel[160];
    snprintf(rel, sizeof rel, CATALOG_DIR "/%s.json", name);
    char *text = NULL;
    size_t len = 0;
    err_t ignored;
    if (catalog_read(rel, &text, &len, NULL, 0, &ignored) != 0)
        return false;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    bool found = false;
    const cJSON *aliases = root ? cJSON_GetObjectItemCaseSensitive(root, "aliases")
                                : NULL;
    const cJSON *a;
    cJSON_ArrayForEach(a, aliases)
    {
        if (cJSON_IsString(a)) {
            char norm[MODEL_NAME_MAX];
            names_normalize(a->valuestring, norm, sizeof norm);
            if (strcmp(norm, alias) == 0)
                found = true;
        }
    }
    cJSON_Delete(root);
    return found;
}

int model_catalog_names(char ***names, size_t *count, err_t *err)
{
    return catalog_list(CATALOG_DIR, names, count, err);
}

static int load_by_name(const char *query, model_t *m, err_t *err)
{
    /* "meta-llama/Meta-Llama-3-70B" -> "meta-llama-3-70b" */
    const char *slash = strrchr(query, '/');
    char norm[MODEL_NAME_MAX];
    names_normalize(slash ? slash + 1 : query, norm, sizeof norm);
    char rel[160];
    snprintf(rel, sizeof rel, CATALOG_DIR "/%s.json", norm);
    if (catalog_exists(rel))
        return load_catalog_entry(norm, m, err);
    char **names = NULL;
    size_t n = 0;
    int rc = model_catalog_names(&names, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (catalog_has_alias(names[i], norm)) {
            rc = load_catalog_entry(names[i], m, err);
            catalog_free_names(names, n);
            return rc;
        }
    }
    catalog_free_names(names, n);
    return catalog_unknown_name(CATALOG_DIR, query, "--model", "model",
                                "scaleplan catalog models",
                                "; a path to a config.json works too", err);
}

int model_load(const char *name_or_path, model_t *m, err_t *err)
{
    if (!name_or_path || !*name_or_path)
        return err_setf(err, ERR_INPUT, NULL, "--model",
                        "needs a catalog name or a config.json path");
    struct stat st;
    size_t n = strlen(name_or_path);
    bool looks_like_file = (n > 5 && strcasecmp(name_or_path + n - 5, ".json") == 0);
    if (stat(name_or_path, &st) == 0 && S_ISREG(st.st_mode))
        return load_file(name_or_path, m, err);
    if (looks_like_file)
        return err_setf(err, ERR_INPUT, name_or_path, NULL,
                        "no such file");
    if (stat(name_or_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* A Hugging Face checkout directory: use its config.json. */
        char path[4096];
        snprintf(path, sizeof path, "%s/config.json", name_or_path);
        return load_file(path, m, err);
    }
    return load_by_name(name_or_path, m, err);
}

void model_params(const model_t *m, model_params_t *p)
{
    double h = m->hidden, f = m->ffn;
    double qw = model_q_width(m), kvw = model_kv_width(m);
    memset(p, 0, sizeof *p);
    p->word_embedding = (double)m->vocab * h;
    p->position_embedding = m->pos == MODEL_POS_LEARNED ? (double)m->max_seq * h : 0;
    p->attention = h * qw + 2 * h * kvw + qw * h;
    if (m->qkv_bias)
        p->attention += qw + 2 * kvw;
    if (m->out_bias)
        p->attention += h;
    if (m->mlp == MODEL_MLP_SWIGLU) {
        p->mlp = 3 * h * f;
        if (m->mlp_bias)
            p->mlp += 2 * f + h;
    } else {
        p->mlp = 2 * h * f;
        if (m->mlp_bias)
            p->mlp += f + h;
    }
    double one_norm = m->norm == MODEL_NORM_LAYERNORM ? 2 * h : h;
    p->norms = 2 * one_norm;
    p->per_layer = p->attention + p->mlp + p->norms;
    p->final_norm = one_norm;
    p->output_head = m->tied_embeddings ? 0 : (double)m->vocab * h;
    p->total = p->word_embedding + p->position_embedding +
               m->n_layers * p->per_layer + p->final_norm + p->output_head;
    p->non_embedding = p->total - p->word_embedding - p->position_embedding -
                       p->output_head;
}
