/* hfconfig_gemma4: Gemma 4 configs (model_type "gemma4_text", and "gemma4"
 * wrapping one in text_config).
 *
 * A Gemma 4 block is Gemma 3's (GeGLU MLP, RMSNorm before and after each
 * half, QK norm over the head) with two kinds of attention block, named by
 * layer_types: sliding_attention blocks attend to a sliding_window of keys
 * at head_dim with num_key_value_heads, full_attention blocks to every key
 * at global_head_dim with, under attention_k_eq_v, num_global_key_value_heads
 * and no V projection (model_full_attn_t). With enable_moe_block every
 * block also runs num_experts routed experts of moe_intermediate_size
 * (top_k_experts of them a token) beside its dense MLP of
 * intermediate_size, read as a shared expert; the router adds a weight
 * vector over the hidden state and a scale per expert, the MoE half three
 * norms.
 *
 * The on-device E2B/E4B models add per-layer inputs (model_ple_t: a second
 * embedding table, a projection before the blocks, a gate and projection
 * in every block) and KV-shared blocks (the last num_kv_shared_layers reuse
 * an earlier block's keys and values), whose MLPs use_double_wide_mlp
 * doubles (priced at the blocks' mean width, said).
 *
 * Sources: transformers src/transformers/models/gemma4/modeling_gemma4.py @
 * c308a309e651a7e033f683353f3f75aa66d29502 (Gemma4TextAttention,
 * Gemma4TextRouter, Gemma4TextDecoderLayer) and configuration_gemma4.py @
 * 351f643ab9f582c01026b6d75aab3e2c5a8338cd (Gemma4TextConfig's defaults:
 * sliding_window 512, a full-attention block every sixth, global_head_dim
 * 512, hidden_size_per_layer_input 256). */
#include "models/hfconfigInt.h"

#include <stdlib.h>
#include <string.h>

/* The on-device models' per-layer inputs (hidden_size_per_layer_input;
 * Gemma4TextConfig's default 256 when absent, 0 for none) and their
 * vocabulary (vocab_size_per_layer_input, default 262144). */
static int read_ple(rd_t *r, model_t *m)
{
    int dim = 256, vocab = 262144, rc;
    if ((rc = opti(r, "hidden_size_per_layer_input", 0, MAX_WIDTH, &dim)) || dim == 0)
        return rc;
    if ((rc = opti(r, "vocab_size_per_layer_input", 1, MAX_VOCAB, &vocab)))
        return rc;
    m->ple = (model_ple_t){dim, vocab};
    return ERR_OK;
}

/* num_kv_shared_layers: the last blocks reuse the keys and values of the
 * last earlier block of their kind (no K/V projections, no key norm);
 * use_double_wide_mlp gives those blocks twice intermediate_size. The
 * blocks are priced at the mean MLP width, said with its rounding. */
static int read_kv_sharing(rd_t *r, model_t *m, const bool *full)
{
    int shared = 0, rc;
    bool wide = false;
    if ((rc = readi(r, "num_kv_shared_layers", 0, MAX_LAYERS, &shared)) ||
        (rc = optb(r, "use_double_wide_mlp", &wide)))
        return rc;
    if (shared >= m->n_layers)
        return err_setf(r->err, ERR_INPUT, r->file, "num_kv_shared_layers",
                        "must leave a block with keys and values of its own (got %d of %d)",
                        shared, m->n_layers);
    m->kv_shared_layers = shared;
    for (int i = m->n_layers - shared; i < m->n_layers; i++)
        m->kv_shared_full += full[i];
    if (!wide || shared == 0)
        return ERR_OK;
    double mean = (double)m->ffn * (m->n_layers + shared) / m->n_layers;
    int f = m->ffn;
    m->ffn = (int)(mean + 0.5);
    char what[240];
    snprintf(what, sizeof what, "the %d KV-shared blocks' MLPs are %d wide, the others %d: priced "
             "at their mean, %d (APPROXIMATED: %+.2f a block)", shared, 2 * f, f, m->ffn,
             m->ffn - mean);
    assumed(r, "use_double_wide_mlp", "%s", what);
    return ERR_OK;
}

/* layer_types: which blocks attend to every key (full[i]) and how many
 * slide (absent: five of every six; the last block full whatever the list
 * says, as Gemma4TextConfig builds it). */
static int sliding_blocks(rd_t *r, const model_t *m, bool *full, int *sliding)
{
    const cJSON *types = NULL;
    int rc = json_get_array(r->c, "layer_types", &r->ctx, JSON_OPTIONAL, &types, r->err);
    if (rc)
        return rc;
    *sliding = 0;
    if (!types) {
        for (int i = 0; i < m->n_layers; i++) {
            full[i] = (i + 1) % 6 == 0 || i == m->n_layers - 1;
            *sliding += !full[i];
        }
        absent(r, "layer_types", "five sliding_attention blocks to one full_attention (%d of "
               "%d sliding, the last full)", *sliding, m->n_layers);
        return ERR_OK;
    }
    if (cJSON_GetArraySize(types) != m->n_layers)
        return err_setf(r->err, ERR_INPUT, r->file, "layer_types",
                        "has %d entries for %d layers", cJSON_GetArraySize(types), m->n_layers);
    const cJSON *t;
    int i = 0;
    cJSON_ArrayForEach(t, types)
    {
        bool slide = cJSON_IsString(t) && strcmp(t->valuestring, "sliding_attention") == 0;
        if (!slide && !(cJSON_IsString(t) && strcmp(t->valuestring, "full_attention") == 0))
            return err_setf(r->err, ERR_INPUT, r->file, "layer_types",
                            "Gemma 4 blocks are sliding_attention or full_attention (got %s)",
                            cJSON_IsString(t) ? t->valuestring : "a non-string");
        full[i] = !slide || i == m->n_layers - 1;
        *sliding += !full[i];
        i++;
    }
    return ERR_OK;
}

/* The full-attention blocks' own shape. */
static int read_full_attn(rd_t *r, model_t *m)
{
    model_full_attn_t g = {512, m->n_heads, m->n_kv_heads, false};
    int rc;
    if ((rc = opti(r, "global_head_dim", 1, MAX_WIDTH, &g.head_dim)) ||
        (rc = optb(r, "attention_k_eq_v", &g.k_eq_v)))
        return rc;
    /* Gemma4TextAttention: the global key/value heads count only under
     * attention_k_eq_v; unset, they are num_key_value_heads */
    if (g.k_eq_v && has(r, "num_global_key_value_heads") &&
        (rc = geti(r, "num_global_key_value_heads", 1, MAX_WIDTH, &g.n_kv_heads)))
        return rc;
    if (m->n_heads % g.n_kv_heads != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "num_global_key_value_heads",
                        "must divide num_attention_heads %d (got %d)", m->n_heads, g.n_kv_heads);
    if (g.head_dim != m->head_dim || g.n_kv_heads != m->n_kv_heads || g.k_eq_v)
        m->full_attn = g;
    return ERR_OK;
}

/* enable_moe_block: routed experts in every block beside the dense MLP. */
static int read_moe_block(rd_t *r, model_t *m)
{
    bool moe = false;
    int rc;
    if ((rc = optb(r, "enable_moe_block", &moe)) || !moe)
        return rc;
    if ((rc = hf_moe_layers_limit(r, m)) ||
        (rc = geti(r, "num_experts", 1, 1 << 20, &m->moe.n_experts)) ||
        (rc = geti(r, "top_k_experts", 1, 1 << 20, &m->moe.top_k)) ||
        (rc = geti(r, "moe_intermediate_size", 1, MAX_WIDTH, &m->moe.expert_ffn)))
        return rc;
    if (m->moe.top_k > m->moe.n_experts)
        return err_setf(r->err, ERR_INPUT, r->file, "top_k_experts",
                        "must be at most num_experts %d (got %d)", m->moe.n_experts,
                        m->moe.top_k);
    m->moe.shared_ffn = m->ffn; /* the dense MLP every token goes through */
    m->moe.n_shared = 1;
    m->moe.router_bias = true; /* per_expert_scale: one weight an expert */
    /* the router's scale over the hidden state is counted as one more norm,
     * with the MoE half's pre_feedforward_layernorm_2 and
     * post_feedforward_layernorm_1/_2 */
    m->norms_per_layer += 4;
    hf_all_moe(m);
    return ERR_OK;
}

int hf_read_gemma4(rd_t *r, model_t *m)
{
    hf_llama_block(m);
    m->act = MODEL_ACT_GELU;
    static const size_defaults_t defs = {2304, 30, 8, 4, 256, 9216, 262144};
    int rc, window = 512, sliding = 0;
    if ((rc = hf_read_core(r, m, &defs, 131072)) || (rc = hf_read_tie(r, true, m)) ||
        (rc = hf_read_attention_bias(r, false, m)) ||
        (rc = hf_read_act(r, "hidden_activation", m)))
        return rc;
    m->mlp = MODEL_MLP_SWIGLU; /* gated whatever the activation */
    m->norms_per_layer = 4;    /* input, post-attention, pre- and post-feedforward */
    m->qk_norm = MODEL_QK_NORM_HEAD;
    bool *full = calloc((size_t)m->n_layers, sizeof *full);
    if (!full)
        return err_set(r->err, ERR_RUNTIME, "out of memory reading layer_types");
    if (!(rc = opti(r, "sliding_window", 1, MAX_SEQ, &window)) &&
        !(rc = sliding_blocks(r, m, full, &sliding)) && !(rc = read_full_attn(r, m)) &&
        !(rc = read_moe_block(r, m)) && !(rc = read_ple(r, m)))
        rc = read_kv_sharing(r, m, full);
    free(full);
    if (rc)
        return rc;
    hf_note_window(r, m, window, sliding);
    if (model_has_full_attn(m)) {
        char what[320];
        snprintf(what, sizeof what,
                 "the %d full-attention blocks (%d-wide heads, %d key/value heads%s) and the %d "
                 "sliding ones are priced apart in the attention core; their projections, "
                 "activations and per-stage parameters at the blocks' mean width",
                 m->n_layers - sliding, m->full_attn.head_dim, m->full_attn.n_kv_heads,
                 m->full_attn.k_eq_v ? ", keys serving as values" : "", sliding);
        assumed(r, "global_head_dim", "%s", what);
    }
    if (has(r, "final_logit_softcapping"))
        notes_add(r->notes, NOTE_IGNORED, "final_logit_softcapping",
                  "logit soft-capping: no parameters, elementwise cost not priced");
    return ERR_OK;
}
