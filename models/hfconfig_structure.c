/* hfconfig_structure: any other decoder config, read from what its keys
 * describe: grouped-query attention, mixture-of-experts keys in every
 * naming, QK norms, sliding windows (models/hfconfigInt.h). */
#include "models/hfconfigInt.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------- reading by structure */

/* The keys of each mixture-of-experts quantity, in every naming the
 * decoder configs of 2024-26 use (transformers' configuration_*.py:
 * Mixtral/gpt-oss/MiniMax num_local_experts, Qwen/OLMoE num_experts,
 * DeepSeek/Kimi/GLM n_routed_experts, ERNIE/Hunyuan moe_num_experts and
 * moe_topk, Megatron-style expert widths). NULL-terminated. */
const char *const HF_EXPERT_KEYS[] = {"n_routed_experts", "num_experts", "num_local_experts",
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
const char *hf_first_key(const cJSON *c, const char *const *keys)
{
    for (size_t i = 0; keys[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, keys[i]);
        if (v && !cJSON_IsNull(v))
            return keys[i];
    }
    return NULL;
}

/* Blocks listed in an array key (block numbers) get experts. */
int hf_moe_list_layers(rd_t *r, const cJSON *list, const char *key, model_t *m)
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

/* A list of one entry a block saying whether it holds experts: GLM-5.x's
 * mlp_layer_types ("dense" or "sparse"), or the list form of
 * moe_layer_freq (0 or 1 a block: MiniMax-M3, MiMo-V2-Flash). */
static int moe_typed_layers(rd_t *r, const cJSON *list, const char *key, model_t *m)
{
    if (cJSON_GetArraySize(list) != m->n_layers)
        return err_setf(r->err, ERR_INPUT, r->file, key, "has %d entries for %d blocks",
                        cJSON_GetArraySize(list), m->n_layers);
    const cJSON *v;
    int i = 0;
    cJSON_ArrayForEach(v, list)
    {
        bool sparse = (cJSON_IsString(v) && strcmp(v->valuestring, "sparse") == 0) ||
                      (cJSON_IsNumber(v) && v->valuedouble == 1);
        bool dense = (cJSON_IsString(v) && strcmp(v->valuestring, "dense") == 0) ||
                     (cJSON_IsNumber(v) && v->valuedouble == 0);
        if (!sparse && !dense)
            return err_setf(r->err, ERR_INPUT, r->file, key,
                            "entry %d is not \"dense\"/0 or \"sparse\"/1", i);
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
        return moe_typed_layers(r, list, "mlp_layer_types", m);
    }
    if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r->c, "moe_layer_freq")))
        return moe_typed_layers(r, cJSON_GetObjectItemCaseSensitive(r->c, "moe_layer_freq"),
                                "moe_layer_freq", m);
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
        return hf_qwen_moe_layers(r, m);
    if (has(r, "moe_layer_start_index") || has(r, "moe_layer_interval"))
        return ernie_moe_layers(r, m);
    if (has(r, "moe_layers")) {
        if ((rc = json_get_array(r->c, "moe_layers", &r->ctx, JSON_REQUIRED, &list, r->err)))
            return rc;
        return hf_moe_list_layers(r, list, "moe_layers", m);
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
    hf_all_moe(m);
    return ERR_OK;
}

/* Shared experts in their namings: a total width, or a count of experts
 * of the routed experts' width. */
static int moe_shared(rd_t *r, model_t *m)
{
    int rc, count = 0, width = 0;
    const char *ck = hf_first_key(r->c, SHARED_COUNT_KEYS);
    const char *wk = hf_first_key(r->c, SHARED_FFN_KEYS);
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
/* moe_latent_size (Nemotron 3's LatentMoE; null: none): the experts
 * between a hidden -> latent and a latent -> hidden projection
 * (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/models/modeling_nemotron_h.py @
 * d513eeaf417df794bbbd59552210eae0c1ce7299: fc1_latent_proj and
 * fc2_latent_proj around the routed experts, the router and shared expert
 * at hidden_size). */
static int read_latent(rd_t *r, model_t *m)
{
    int rc = readi(r, "moe_latent_size", 1, MAX_WIDTH, &m->moe.latent);
    if (rc || m->moe.latent == 0)
        return rc;
    assumed(r, "moe_latent_size",
            "%s: the two latent projections of each MoE block are replicated over tensor "
            "parallelism and priced as two GEMMs a token beside the router",
            "ASSUMED");
    return ERR_OK;
}

int hf_read_moe_by_keys(rd_t *r, model_t *m)
{
    const char *ek = hf_first_key(r->c, HF_EXPERT_KEYS), *tk = hf_first_key(r->c, TOPK_KEYS);
    const char *fk = hf_first_key(r->c, EXPERT_FFN_KEYS);
    if (!ek)
        return ERR_OK;
    if (!tk)
        return err_setf(r->err, ERR_INPUT, r->file, "num_experts_per_tok",
                        "missing: %s gives routed experts but no key says how many a token uses "
                        "(num_experts_per_tok, moe_topk, top_k)",
                        ek);
    int rc;
    if ((rc = hf_moe_layers_limit(r, m)) || (rc = geti(r, ek, 1, 1 << 20, &m->moe.n_experts)) ||
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
    if ((rc = read_latent(r, m)))
        return rc;
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
    on = on || r->qk_norm_always;
    if (!has(r, "use_qk_norm") && !r->qk_norm_always)
        absent(r, "use_qk_norm", "no QK norm");
    if (on)
        m->qk_norm = strcmp(kind, "per_layer") == 0 ? MODEL_QK_NORM_FULL : MODEL_QK_NORM_HEAD;
    return ERR_OK;
}

/* num_attention_heads_per_layer (poolside's Laguna): query heads per
 * block. One count for the windowed blocks and one for the others is read
 * as full-attention blocks of their own query heads (model_full_attn_t;
 * head_dim must be given, as hidden / heads would differ by block); counts
 * that vary within a kind are refused naming the key. types: layer_types
 * (NULL: every block one kind). */
static int heads_per_layer(rd_t *r, model_t *m, const cJSON *types)
{
    const cJSON *list = NULL;
    int rc = json_get_array(r->c, "num_attention_heads_per_layer", &r->ctx, JSON_OPTIONAL,
                            &list, r->err);
    if (rc || !list)
        return rc;
    const char *key = "num_attention_heads_per_layer";
    if (cJSON_GetArraySize(list) != m->n_layers || !has(r, "head_dim"))
        return err_setf(r->err, ERR_INPUT, r->file, key,
                        "needs one count for each of the %d layers and head_dim (got %d "
                        "counts%s)",
                        m->n_layers, cJSON_GetArraySize(list),
                        has(r, "head_dim") ? "" : ", no head_dim");
    int heads[2] = {0, 0}, i = 0; /* [0] windowed, [1] full attention */
    const cJSON *h;
    cJSON_ArrayForEach(h, list)
    {
        const cJSON *t = types ? cJSON_GetArrayItem(types, i) : NULL;
        int kind = !(t && cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0 &&
                     m->window_layers > 0);
        i++;
        if (!cJSON_IsNumber(h) || h->valuedouble < 1 || h->valuedouble > MAX_WIDTH ||
            h->valuedouble != (int)h->valuedouble || (heads[kind] && heads[kind] != h->valueint) ||
            h->valueint % m->n_kv_heads != 0)
            return err_setf(r->err, ERR_INPUT, r->file, key,
                            "entry %d: reading by structure takes one count of query heads, a "
                            "multiple of the %d key/value heads, for the sliding-window blocks "
                            "and one for the others",
                            i - 1, m->n_kv_heads);
        heads[kind] = h->valueint;
    }
    int full = heads[1] ? heads[1] : heads[0], heads_given = m->n_heads;
    m->n_heads = heads[0] ? heads[0] : full;
    if (full != m->n_heads)
        m->full_attn = (model_full_attn_t){m->head_dim, full, m->n_kv_heads, false};
    char what[200];
    snprintf(what, sizeof what, "the sliding-window blocks have %d query heads, the others %d "
             "(num_attention_heads, %d, is %s)", m->n_heads, full, heads_given,
             heads_given == full        ? "the full-attention blocks' count"
             : heads_given == m->n_heads ? "the sliding-window blocks' count"
                                         : "neither kind's count");
    assumed(r, key, "%s", what);
    return ERR_OK;
}

/* Windowed blocks: layer_types' sliding_attention entries, else
 * sliding_window on every block unless use_sliding_window is false; then
 * query heads per block. */
static int structure_window(rd_t *r, model_t *m)
{
    const cJSON *types = NULL;
    int rc;
    if ((rc = json_get_array(r->c, "layer_types", &r->ctx, JSON_OPTIONAL, &types, r->err)))
        return rc;
    if (!types) {
        bool use = true;
        if ((rc = readb(r, "use_sliding_window", &use)) ||
            (use && (rc = hf_read_window(r, m, m->n_layers))))
            return rc;
        return heads_per_layer(r, m, NULL);
    }
    int sliding = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, types)
    {
        if (cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0)
            sliding++;
    }
    if ((rc = hf_read_window(r, m, sliding)))
        return rc;
    return heads_per_layer(r, m, types);
}

/* A grouped-query decoder read from its keys: the Llama block, the
 * attention and expert keys it gives, multi-token prediction modules. */
int hf_read_gqa_by_keys(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc;
    if ((rc = hf_read_core(r, m, NULL, 2048)) || (rc = hf_read_structure_tie(r, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = optb(r, "mlp_bias", &m->mlp_bias)) ||
        (rc = hf_read_act(r, "hidden_act", m)) || (rc = read_qk_norm(r, m)) ||
        (rc = hf_read_moe_by_keys(r, m)) || (rc = structure_window(r, m)) ||
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
int hf_read_glm4_moe(rd_t *r, model_t *m)
{
    int rc = hf_read_gqa_by_keys(r, m);
    if (rc)
        return rc;
    m->out_bias = false;
    m->moe.router_bias = model_is_moe(m);
    return ERR_OK;
}

/* Laguna (poolside; transformers LagunaConfig and LagunaAttention,
 * src/transformers/models/laguna/ @ ca5ff0b0d29a3b30277e4518644df411193f9490):
 * the keys as read above, query heads per block from
 * num_attention_heads_per_layer, a QK norm over the head in every block, a
 * sigmoid router with its score-correction bias, and the softplus output
 * gate `gating`: true or "per-head" one gate a head (g_proj: hidden ->
 * heads), "per-element" one a query channel, false none. */
int hf_read_laguna(rd_t *r, model_t *m)
{
    r->qk_norm_always = true;
    int rc = hf_read_gqa_by_keys(r, m);
    if (rc)
        return rc;
    m->moe.router_bias = model_is_moe(m);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(r->c, "gating");
    if (!g || cJSON_IsTrue(g) || (cJSON_IsString(g) && strcmp(g->valuestring, "per-head") == 0))
        m->attn_head_gate = true;
    else if (cJSON_IsString(g) && strcmp(g->valuestring, "per-element") == 0)
        m->hybrid.attn_out_gate = true;
    else if (!cJSON_IsFalse(g))
        return err_setf(r->err, ERR_INPUT, r->file, "gating",
                        "use true, false, \"per-head\" or \"per-element\"");
    if (!g)
        absent(r, "gating", "LagunaConfig's default, true: one output gate a head");
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
        const char *unless; /* a key whose presence makes the row not apply */
    } keys[] = {
        {"global_head_dim", "head_dim", "full-attention blocks with another head size", NULL},
        {"num_global_key_value_heads", "num_key_value_heads",
         "full-attention blocks with another number of key/value heads", NULL},
        {"attention_k_eq_v", NULL, "keys and values from one projection", NULL},
        {"hidden_size_per_layer_input", NULL, "per-layer input embeddings", NULL},
        {"num_kv_shared_layers", NULL, "blocks that reuse another block's keys and values", NULL},
        {"use_double_wide_mlp", NULL, "blocks with a double-width MLP", NULL},
        {"altup_num_inputs", NULL, "AltUp streams", NULL},
        {"laurel_rank", NULL, "LAuReL low-rank residuals", NULL},
        {"intermediate_size_mlp", NULL, "dense blocks of another width than intermediate_size",
         NULL},
        /* MiMo-V2-Flash's sliding-window blocks in a shape of their own */
        {"swa_num_attention_heads", "num_attention_heads",
         "sliding-window blocks with another number of query heads", NULL},
        {"swa_num_key_value_heads", "num_key_value_heads",
         "sliding-window blocks with another number of key/value heads", NULL},
        {"swa_head_dim", "head_dim", "sliding-window blocks with another head size", NULL},
        {"swa_v_head_dim", "head_dim", "sliding-window blocks with another value head size", NULL},
        {"dense_intermediate_size", "intermediate_size",
         "dense blocks of another width than intermediate_size", NULL},
        /* values of another head size than the keys, outside MLA (whose
         * reader takes v_head_dim) */
        {"v_head_dim", "head_dim", "values of another head size than the keys'", "kv_lora_rank"},
        /* DeepSeek-V4: compressed sparse attention, several residual
         * streams (hyper-connections), a grouped low-rank output */
        {"compress_ratios", NULL, "compressed-attention blocks (compress_ratios)", NULL},
        {"hc_mult", NULL, "hyper-connections (several residual streams a block)", NULL},
        {"o_lora_rank", NULL, "grouped low-rank output projections", NULL},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->c, keys[i].key);
        if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v) ||
            (keys[i].unless && has(r, keys[i].unless)) ||
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
int hf_read_structure(rd_t *r, model_t *m)
{
    static const char *const need[] = {"num_hidden_layers", "hidden_size", "num_attention_heads",
                                        "intermediate_size", "vocab_size"};
    /* what cannot be counted first: a block kind outranks a missing size */
    int rc = structure_unreadable(r);
    for (size_t i = 0; !rc && i < sizeof need / sizeof need[0]; i++)
        if (!has(r, need[i]))
            return err_setf(r->err, ERR_INPUT, r->file, need[i],
                            "missing: model_type '%s' is not one scaleplan knows by name, and "
                            "reading it by structure needs %s",
                            r->own_type, need[i]);
    if (rc || (rc = has(r, "kv_lora_rank") ? hf_read_deepseek(r, m) : hf_read_gqa_by_keys(r, m)))
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
