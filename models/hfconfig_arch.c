/* hfconfig_arch: one reader per Hugging Face model_type scaleplan knows,
 * with its transformers configuration class's defaults, and the table of
 * types (models/hfconfigInt.h). */
#include "models/hfconfigInt.h"

#include <math.h>
#include <string.h>

/* --------------------------------------------------------------- readers */

/* llama, mistral (and the dense DeepSeek LLM, Yi, ... that use them). */
static int read_llama(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc;
    if ((rc = hf_read_core(r, m, NULL, 2048)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = optb(r, "mlp_bias", &m->mlp_bias)) ||
        (rc = hf_read_act(r, "hidden_act", m)))
        return rc;
    if (strcmp(r->type, "mistral") == 0)
        return hf_read_window(r, m, m->n_layers);
    return ERR_OK;
}

/* Qwen (the first Qwen, custom code): QWenMLP's w1 and w2 are each
 * intermediate_size / 2 wide (modeling_qwen.py), so the gated MLP is half
 * the key; c_attn carries a bias ("no_bias" covers the other linears);
 * QWenConfig leaves the embeddings untied by default. */
static int read_qwen1(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc;
    if ((rc = hf_read_core(r, m, NULL, 8192)) || (rc = hf_read_tie(r, false, m)))
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
    if ((rc = read_llama(r, m)) || (rc = hf_moe_layers_limit(r, m)) ||
        (rc = geti(r, "num_local_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)))
        return rc;
    m->moe.expert_ffn = m->ffn; /* intermediate_size is each expert's width */
    hf_all_moe(m);
    return ERR_OK;
}

/* Qwen2: biases on Q, K and V, never on the output. */
static int read_qwen2(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc;
    if ((rc = hf_read_core(r, m, NULL, 32768)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_act(r, "hidden_act", m)))
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
    return hf_read_window(r, m, m->n_layers - max_window_layers);
}

/* Qwen3: per-head RMSNorm on Q and K, attention_bias for biases. */
static int read_qwen3(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc;
    if ((rc = hf_read_core(r, m, NULL, 32768)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = hf_read_act(r, "hidden_act", m)))
        return rc;
    m->qk_norm = MODEL_QK_NORM_HEAD;
    return ERR_OK;
}

/* Qwen-MoE block pattern: block i is sparse unless listed in
 * mlp_only_layers, when (i + 1) % decoder_sparse_step == 0. */
int hf_qwen_moe_layers(rd_t *r, model_t *m)
{
    int rc, step = 1;
    const cJSON *only = NULL;
    if ((rc = hf_moe_layers_limit(r, m)) ||
        (rc = opti(r, "decoder_sparse_step", 1, MAX_LAYERS, &step)) ||
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
        (rc = hf_qwen_moe_layers(r, m)))
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
    hf_llama_block(m);
    m->act = MODEL_ACT_GELU;
    int rc;
    bool v2 = strcmp(r->type, "gemma2") == 0, v3 = strcmp(r->type, "gemma3_text") == 0;
    static const size_defaults_t gemma3 = {2304, 26, 8, 4, 256, 9216, 262208};
    r->head_dim_default = 256; /* GemmaConfig / Gemma2Config default */
    if (v3)
        rc = hf_read_core(r, m, &gemma3, 131072);
    else
        rc = hf_read_core(r, m, NULL, 8192);
    if (rc || (rc = hf_read_tie(r, true, m)) || (rc = hf_read_attention_bias(r, false, m)) ||
        (rc = hf_read_act(r, has(r, "hidden_activation") ? "hidden_activation" : "hidden_act", m)))
        return rc;
    m->mlp = MODEL_MLP_SWIGLU; /* gated whatever the activation */
    if (v2 || v3) {
        m->norms_per_layer = 4; /* input, post-attention, pre- and post-feedforward */
        int w = 4096, pattern = v3 ? 6 : 2;
        if ((rc = opti(r, "sliding_window", 1, MAX_SEQ, &w)) ||
            (rc = opti(r, "sliding_window_pattern", 1, MAX_LAYERS, &pattern)))
            return rc;
        hf_note_window(r, m, w, m->n_layers - m->n_layers / pattern);
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
    hf_llama_block(m);
    int rc;
    if ((rc = hf_read_core(r, m, NULL, 4096)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_act(r, "hidden_act", m)))
        return rc;
    double partial = 1.0;
    if ((rc = optd(r, "partial_rotary_factor", 0, 1, &partial)))
        return rc;
    m->rope_fraction = partial;
    return hf_read_window(r, m, m->n_layers);
}

/* OLMo: LayerNorm without parameters everywhere. OLMo 2: RMSNorm after
 * attention and after the MLP (no input norm) and RMSNorm over the whole Q
 * and K projections. */
static int read_olmo(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc;
    bool v2 = strcmp(r->type, "olmo2") == 0;
    if (!v2)
        r->eps_key = NULL; /* OLMo's parameter-free LayerNorm has a fixed epsilon */
    if ((rc = hf_read_core(r, m, NULL, 2048)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = hf_read_act(r, "hidden_act", m)))
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
    hf_llama_block(m);
    int rc;
    if ((rc = hf_read_core(r, m, NULL, 4096)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = hf_read_act(r, "hidden_act", m)) ||
        (rc = hf_moe_layers_limit(r, m)) ||
        (rc = geti(r, "num_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)))
        return rc;
    m->qk_norm = MODEL_QK_NORM_FULL;
    m->moe.expert_ffn = m->ffn; /* intermediate_size is each expert's width */
    hf_all_moe(m);
    return ERR_OK;
}

/* StarCoder2: LayerNorm with bias, plain GELU MLP, biases everywhere
 * (use_bias), tied by default. */
static int read_starcoder2(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_GELU;
    int rc;
    bool bias = true;
    r->eps_key = "norm_epsilon";
    if ((rc = hf_read_core(r, m, NULL, 4096)) || (rc = hf_read_tie(r, true, m)) ||
        (rc = optb(r, "use_bias", &bias)) || (rc = hf_read_act(r, "hidden_act", m)))
        return rc;
    m->qkv_bias = m->out_bias = m->mlp_bias = bias;
    char norm[32] = "layer_norm";
    if ((rc = opts(r, "norm_type", norm, sizeof norm)))
        return rc;
    if (strcmp(norm, "layer_norm") != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "norm_type",
                        "'%s' is not the LayerNorm StarCoder2 uses", norm);
    return hf_read_window(r, m, m->n_layers);
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
    if ((rc = readi(r, "n_inner", 1, MAX_WIDTH, &m->ffn)) || (rc = hf_read_tie(r, true, m)) ||
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
    hf_llama_block(m);
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_GELU;
    r->eps_key = "layer_norm_eps";
    r->rope_key = has(r, "rotary_emb_base") ? "rotary_emb_base" : "rope_theta";
    /* the hidden dropout keys (two spellings) replace attention_dropout,
     * already said when absent */
    if ((rc = hf_read_core(r, m, NULL, 2048)) || (rc = hf_read_tie(r, false, m)) ||
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
        (rc = hf_read_tie(r, true, m)) || (rc = optd(r, "dropout", 0, 1, &m->dropout)) ||
        (rc = hf_read_act(r, "activation_function", m)))
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
        (rc = optd(r, "attention_dropout", 0, 1, &adrop)) || (rc = hf_read_tie(r, true, m)))
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
        (rc = hf_read_tie(r, true, m)) ||
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

/* indexer_types (GLM-5.2): "full" a block with its own indexer, "shared"
 * one that reuses the last full block's selection and has no indexer
 * weights (model_indexer_t.own_layers). */
static int read_indexer_types(rd_t *r, model_t *m)
{
    const cJSON *list = NULL, *v;
    int rc = json_get_array(r->c, "indexer_types", &r->ctx, JSON_OPTIONAL, &list, r->err);
    if (rc || !list)
        return rc;
    if (cJSON_GetArraySize(list) != m->n_layers)
        return err_setf(r->err, ERR_INPUT, r->file, "indexer_types", "has %d entries for %d blocks",
                        cJSON_GetArraySize(list), m->n_layers);
    int own = 0, i = 0;
    cJSON_ArrayForEach(v, list)
    {
        bool full = cJSON_IsString(v) && strcmp(v->valuestring, "full") == 0;
        if (!full && !(cJSON_IsString(v) && strcmp(v->valuestring, "shared") == 0))
            return err_setf(r->err, ERR_INPUT, r->file, "indexer_types",
                            "entry %d is not \"full\" or \"shared\"", i);
        own += full;
        i++;
    }
    if (own == 0)
        return err_setf(r->err, ERR_INPUT, r->file, "indexer_types",
                        "no block has an indexer of its own (\"full\") for the others to share");
    m->indexer.own_layers = own < m->n_layers ? own : 0;
    if (own < m->n_layers)
        notes_add(r->notes, NOTE_ASSUMED, "indexer_types",
                  "%d of %d blocks run the indexer; the other %d reuse its selection (no "
                  "indexer weights or scoring FLOPs of their own)",
                  own, m->n_layers, m->n_layers - own);
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
        (rc = geti(r, "index_topk", 1, MAX_SEQ, &x->topk)) || (rc = read_indexer_types(r, m)))
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
int hf_read_deepseek(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc;
    r->mla = true;
    if ((rc = hf_read_core(r, m, NULL, 2048)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = hf_read_act(r, "hidden_act", m)) ||
        (rc = hf_moe_layers_limit(r, m)))
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
    bool other_naming = !has(r, "n_routed_experts") && hf_first_key(r->c, HF_EXPERT_KEYS);
    if ((rc = other_naming ? hf_read_moe_by_keys(r, m) : deepseek_experts(r, m)) ||
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
    hf_llama_block(m);
    int rc;
    if ((rc = hf_read_core(r, m, NULL, 131072)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, true, m)) || (rc = hf_moe_layers_limit(r, m)) ||
        (rc = geti(r, "num_local_experts", 1, 1 << 20, &m->moe.n_experts)))
        return rc;
    const char *k = has(r, "num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
    if ((rc = geti(r, k, 1, 1 << 20, &m->moe.top_k)))
        return rc;
    m->attn_sinks = true;
    m->moe.expert_ffn = m->ffn;
    m->moe.router_bias = m->moe.expert_bias = true;
    hf_all_moe(m);
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
    return hf_read_window(r, m, sliding);
}

/* Llama 4 text model: MoE blocks every interleave_moe_layer_step-th block
 * (or the listed moe_layers) with one shared expert of the experts' width,
 * dense blocks of intermediate_size_mlp; QK norm without weights. */
static int read_llama4_text(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    int rc, expert_ffn = 0;
    if ((rc = hf_read_core(r, m, NULL, 4096 * 32)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = hf_read_act(r, "hidden_act", m)) ||
        (rc = hf_moe_layers_limit(r, m)) ||
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
        if ((rc = hf_moe_list_layers(r, list, "moe_layers", m)))
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
    hf_llama_block(m);
    m->family = MODEL_FAMILY_GPT;
    m->norm = MODEL_NORM_LAYERNORM;
    m->mlp = MODEL_MLP_GELU;
    m->act = MODEL_ACT_RELU2;
    int rc;
    r->eps_key = "norm_eps";
    if ((rc = hf_read_core(r, m, NULL, 4096)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = optb(r, "mlp_bias", &m->mlp_bias)) ||
        (rc = hf_read_act(r, "hidden_act", m)))
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
    hf_llama_block(m);
    m->mlp = MODEL_MLP_GELU; /* NemotronHMLP: up_proj, down_proj */
    m->act = MODEL_ACT_RELU2;
    m->pos = MODEL_POS_NONE;
    int rc;
    r->eps_key = "layer_norm_epsilon";
    /* NemotronHConfig derives num_hidden_layers from a layers_block_type list */
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(r->c, "layers_block_type");
    r->layers_default = cJSON_IsArray(types) ? cJSON_GetArraySize(types) : 0;
    if ((rc = hf_read_core(r, m, NULL, 4096)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) || (rc = optb(r, "mlp_bias", &m->mlp_bias)) ||
        (rc = hf_read_act(r, "mlp_hidden_act", m)) || (rc = hf_read_moe_by_keys(r, m)))
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
    hf_llama_block(m);
    int rc = hf_read_core(r, m, &defs, 32768);
    if (!rc && !(rc = hf_read_tie(r, false, m)) && !(rc = hf_read_attention_bias(r, false, m)))
        rc = hf_read_act(r, "hidden_act", m);
    m->qk_norm = MODEL_QK_NORM_HEAD; /* q_norm, k_norm over head_dim */
    m->rope_fraction = 0.25;
    m->hybrid.attn_out_gate = true; /* Qwen3NextAttention.q_proj: query and gate */
    if (rc || (rc = optd(r, "partial_rotary_factor", 0, 1, &m->rope_fraction)) ||
        !has(r, "num_experts"))
        return rc;
    if ((rc = geti(r, "num_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "num_experts_per_tok", 1, 1 << 20, &m->moe.top_k)) ||
        (rc = geti(r, "moe_intermediate_size", 1, MAX_WIDTH, &m->moe.expert_ffn)) ||
        (rc = hf_qwen_moe_layers(r, m)) ||
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
    hf_llama_block(m);
    m->pos = MODEL_POS_NONE;
    int rc, period = 2, offset = 1;
    if ((rc = hf_read_core(r, m, NULL, 262144)) || (rc = hf_read_tie(r, false, m)) ||
        (rc = hf_read_act(r, "hidden_act", m)) || (rc = hf_moe_layers_limit(r, m)) ||
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
    {"gemma4_text", hf_read_gemma4, NULL, F_MOE},
    {"gemma4", NULL, "gemma4_text", F_MOE},
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
    {"deepseek_v2", hf_read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"deepseek_v3", hf_read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"gpt_oss", read_gpt_oss, NULL, F_MOE},
    {"llama4_text", read_llama4_text, NULL, F_MOE},
    {"llama4", NULL, "llama4_text", F_MOE},
    {"deepseek_v32", hf_read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"kimi_k2", hf_read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"glm_moe_dsa", hf_read_deepseek, NULL, F_MOE | F_MLA | F_INDEXER},
    {"glm4_moe", hf_read_glm4_moe, NULL, F_MOE},
    {"minimax_m2", hf_read_gqa_by_keys, NULL, F_MOE},
    {"laguna", hf_read_laguna, NULL, F_MOE},
    {"nemotron_h", read_nemotron_h, NULL, F_MOE},
    {"qwen3_next", read_qwen3_next, NULL, F_MOE},
    {"qwen3_5_moe_text", read_qwen3_next, NULL, F_MOE},
    {"qwen3_5_moe", NULL, "qwen3_5_moe_text", F_MOE},
    {"jamba", read_jamba, NULL, F_MOE},
    {"nemotron-nas", hf_read_nemotron_nas, NULL, F_BLOCKS},
    {"deci", hf_read_nemotron_nas, NULL, F_BLOCKS},
};

const arch_t *hf_find_arch(const char *type)
{
    for (size_t i = 0; i < sizeof ARCHS / sizeof ARCHS[0]; i++)
        if (strcmp(ARCHS[i].type, type) == 0)
            return &ARCHS[i];
    return NULL;
}
