/* hybrid_config: hybrid layer patterns read by structure (hybrid_config.h). */
#include "models/hybrid_config.h"

#include <string.h>

#include "models/hybrid.h"

#define MAX_SIZE 10000000L

typedef struct {
    const cJSON *c;
    const json_ctx_t *ctx;
    const char *file;
    notes_t *notes;
    err_t *err;
} hrd_t;

static bool present(const cJSON *c, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return v && !cJSON_IsNull(v);
}

/* The first key of keys (NULL-terminated) the config has, or NULL. */
static const char *spelled(const cJSON *c, const char *const *keys)
{
    for (; *keys; keys++)
        if (present(c, *keys))
            return *keys;
    return NULL;
}

/* A size under any of its spellings; absent, *out = def and a note says so
 * (def 0: required, an error naming the first spelling). */
static int size_of(hrd_t *r, const char *const *keys, int def, const char *why, int *out)
{
    const char *k = spelled(r->c, keys);
    if (!k) {
        if (def <= 0)
            return err_setf(r->err, ERR_INPUT, r->file, keys[0],
                            "missing: the hybrid layers need it (%s)", why);
        *out = def;
        json_ctx_t kc = json_ctx_member(r->ctx, keys[0]);
        notes_add(r->notes, NOTE_ASSUMED, kc.path, "absent: %d (%s)", def, why);
        return ERR_OK;
    }
    return json_get_int(r->c, k, r->ctx, JSON_REQUIRED, 1, MAX_SIZE, out, r->err);
}

static bool list_has_kind(const cJSON *types, const char *kind)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, types)
    {
        if (cJSON_IsString(v) && strcmp(v->valuestring, kind) == 0)
            return true;
    }
    return false;
}

bool model_hybrid_config_has(const cJSON *c)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "hybrid_override_pattern");
    if (cJSON_IsString(p))
        return true;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(c, "layers_block_type");
    if (cJSON_IsArray(b) && !list_has_kind(b, "hybrid")) /* Zamba's "hybrid": shared blocks */
        return true;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "layer_types");
    if (cJSON_IsArray(t) && (list_has_kind(t, "linear_attention") || list_has_kind(t, "mamba")))
        return true;
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(c, "full_attention_interval");
    if (cJSON_IsNumber(i) && i->valuedouble > 1 && present(c, "linear_num_value_heads"))
        return true;
    if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c, "linear_attn_config")) ||
        present(c, "mamba_d_ssm"))
        return true;
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(c, "attn_type_list"), *v;
    cJSON_ArrayForEach(v, at)
    {
        if (cJSON_IsNumber(v) && v->valuedouble == 0)
            return true; /* MiniMax: 0 a lightning (linear) attention layer */
    }
    return present(c, "attn_layer_period") && present(c, "mamba_dt_rank");
}

/* layer_types: one mixer a block, each block keeping its MLP. */
static int read_types(hrd_t *r, const cJSON *types, model_t *m)
{
    int n = cJSON_GetArraySize(types);
    json_ctx_t lc = json_ctx_member(r->ctx, "layer_types");
    if (n != m->n_layers || n > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, lc.path,
                        "has %d entries but num_hidden_layers is %d (at most %d)", n,
                        m->n_layers, MODEL_MAX_MOE_LAYERS);
    static const struct {
        const char *name;
        model_mixer_t k;
    } kinds[] = {{"linear_attention", MODEL_MIXER_GDN}, {"mamba", MODEL_MIXER_MAMBA2},
                 {"full_attention", MODEL_MIXER_ATTENTION}, {"attention", MODEL_MIXER_ATTENTION},
                 {"sliding_attention", MODEL_MIXER_ATTENTION}};
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, types)
    {
        int found = -1;
        for (size_t j = 0; cJSON_IsString(v) && j < sizeof kinds / sizeof kinds[0]; j++)
            if (strcmp(v->valuestring, kinds[j].name) == 0)
                found = (int)j;
        if (found < 0) {
            json_ctx_t ec = json_ctx_index(&lc, i);
            return err_setf(r->err, ERR_INPUT, r->file, ec.path,
                            "'%.40s' layers: not modelled (scaleplan prices linear_attention, "
                            "mamba and attention blocks)",
                            cJSON_IsString(v) ? v->valuestring : "(not a name)");
        }
        m->hybrid.block[i++] = (unsigned char)kinds[found].k;
    }
    m->hybrid.n_layers_hybrid = n;
    return ERR_OK;
}

/* layers_block_type (NemotronHConfig's list form of the pattern, Nemotron
 * 3): "mamba", "attention", "moe", "mlp" a layer, the pattern's 'M', '*',
 * 'E', '-'. As many entries as num_hidden_layers. */
static int read_block_types(hrd_t *r, const cJSON *types, model_t *m)
{
    static const char *const names[] = {"mamba", "attention", "moe", "mlp"};
    static const char letters[] = "M*E-";
    char pat[MODEL_MAX_MOE_LAYERS + 1];
    int n = cJSON_GetArraySize(types), want = m->n_layers, i = 0;
    json_ctx_t lc = json_ctx_member(r->ctx, "layers_block_type");
    if (n != want || n > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, lc.path,
                        "has %d entries but num_hidden_layers is %d (at most %d)", n, want,
                        MODEL_MAX_MOE_LAYERS);
    const cJSON *v;
    cJSON_ArrayForEach(v, types)
    {
        int found = -1;
        for (int j = 0; cJSON_IsString(v) && j < 4; j++)
            if (strcmp(v->valuestring, names[j]) == 0)
                found = j;
        if (found < 0) {
            json_ctx_t ec = json_ctx_index(&lc, i);
            return err_setf(r->err, ERR_INPUT, r->file, ec.path,
                            "'%.40s' layers: not modelled (a Nemotron-H list has mamba, "
                            "attention, moe and mlp)",
                            cJSON_IsString(v) ? v->valuestring : "(not a name)");
        }
        pat[i++] = letters[found];
    }
    pat[i] = '\0';
    int rc = model_hybrid_set_pattern(m, pat, r->file, lc.path, r->err);
    if (rc)
        return rc;
    m->norms_per_layer = 1; /* each entry one sub-layer with its pre-norm */
    return ERR_OK;
}

/* hybrid_override_pattern: Megatron's letters, as many as the layers. */
static int read_pattern(hrd_t *r, model_t *m)
{
    char pat[MODEL_MAX_MOE_LAYERS + 64];
    int rc, want = m->n_layers;
    if ((rc = json_get_string(r->c, "hybrid_override_pattern", r->ctx, JSON_REQUIRED, pat,
                              sizeof pat, r->err)))
        return rc;
    json_ctx_t pc = json_ctx_member(r->ctx, "hybrid_override_pattern");
    if ((rc = model_hybrid_set_pattern(m, pat, r->file, pc.path, r->err)))
        return rc;
    if (m->n_layers != want)
        return err_setf(r->err, ERR_INPUT, r->file, pc.path,
                        "has %d layers but num_hidden_layers is %d", m->n_layers, want);
    m->norms_per_layer = 1; /* each letter one sub-layer with its pre-norm */
    return ERR_OK;
}

/* Mamba-2 sizes in their spellings; heads from mamba_expand x hidden /
 * head size when no key gives them. */
static int read_mamba(hrd_t *r, model_t *m)
{
    static const char *const state[] = {"ssm_state_size", "mamba_d_state", NULL};
    static const char *const heads[] = {"mamba_num_heads", "mamba_n_heads", NULL};
    static const char *const hdim[] = {"mamba_head_dim", "mamba_d_head", NULL};
    static const char *const groups[] = {"n_groups", "mamba_n_groups", "mamba_num_groups", NULL};
    static const char *const conv[] = {"conv_kernel", "mamba_d_conv", NULL};
    static const char *const chunk[] = {"chunk_size", "mamba_chunk_size", NULL};
    static const char *const expand[] = {"mamba_expand", "expand", NULL};
    model_hybrid_t *h = &m->hybrid;
    int rc;
    if ((rc = size_of(r, state, 0, "the Mamba-2 state size", &h->ssm_state)) ||
        (rc = size_of(r, hdim, 64, "Mamba2Config's head_dim", &h->ssm_head_dim)) ||
        (rc = size_of(r, groups, 1, "one B/C group, Mamba2Config's n_groups", &h->ssm_groups)) ||
        (rc = size_of(r, conv, 4, "Mamba2Config's conv_kernel", &h->ssm_conv)) ||
        (rc = size_of(r, chunk, 128,
                      "Megatron MambaMixer's and NemotronHConfig's chunk_size",
                      &h->ssm_chunk)))
        return rc;
    if (spelled(r->c, heads))
        return size_of(r, heads, 0, "", &h->ssm_heads);
    int ex = 0;
    if ((rc = size_of(r, expand, 2, "Mamba2Config's expand", &ex)))
        return rc;
    if (((long)ex * m->hidden) % h->ssm_head_dim != 0)
        return err_setf(r->err, ERR_INPUT, r->file, "mamba_head_dim",
                        "must divide mamba_expand x hidden_size %ld (got %d)",
                        (long)ex * m->hidden, h->ssm_head_dim);
    h->ssm_heads = (int)((long)ex * m->hidden / h->ssm_head_dim);
    return ERR_OK;
}

static int read_gdn(hrd_t *r, model_t *m)
{
    static const char *const kh[] = {"linear_num_key_heads", NULL};
    static const char *const vh[] = {"linear_num_value_heads", NULL};
    static const char *const kd[] = {"linear_key_head_dim", NULL};
    static const char *const vd[] = {"linear_value_head_dim", NULL};
    static const char *const conv[] = {"linear_conv_kernel_dim", NULL};
    model_hybrid_t *h = &m->hybrid;
    int rc;
    if ((rc = size_of(r, kh, 0, "Gated DeltaNet key heads", &h->gdn_k_heads)) ||
        (rc = size_of(r, vh, 0, "Gated DeltaNet value heads", &h->gdn_v_heads)) ||
        (rc = size_of(r, kd, 0, "Gated DeltaNet key head size", &h->gdn_k_dim)) ||
        (rc = size_of(r, vd, 0, "Gated DeltaNet value head size", &h->gdn_v_dim)) ||
        (rc = size_of(r, conv, 4, "Qwen3NextConfig's linear_conv_kernel_dim", &h->gdn_conv)))
        return rc;
    /* fla-org/flash-linear-attention fla/ops/gated_delta_rule/chunk.py
     * runs the chunkwise form in chunks of 64 tokens (BT = 64) */
    h->gdn_chunk = 64;
    json_ctx_t kc = json_ctx_member(r->ctx, "linear_num_value_heads");
    notes_add(r->notes, NOTE_ASSUMED, kc.path,
              "Gated DeltaNet FLOPs in chunks of 64 tokens (fla chunk_gated_delta_rule)");
    return ERR_OK;
}

/* Jamba's layout (JambaConfig): attention where layer % attn_layer_period
 * == attn_layer_offset, a Mamba-1 mixer elsewhere, an MLP in every block;
 * its mixer sizes (mamba_dt_rank "auto": ceil(hidden / 16)). */
static int read_period(hrd_t *r, model_t *m)
{
    int period = 0, offset = 0, rc;
    if ((rc = json_get_int(r->c, "attn_layer_period", r->ctx, JSON_REQUIRED, 1,
                           MODEL_MAX_MOE_LAYERS, &period, r->err)) ||
        (rc = json_get_int(r->c, "attn_layer_offset", r->ctx, JSON_REQUIRED, 0, period - 1,
                           &offset, r->err)))
        return rc;
    if (m->n_layers > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, "num_hidden_layers",
                        "a hybrid model may have at most %d layers", MODEL_MAX_MOE_LAYERS);
    for (int i = 0; i < m->n_layers; i++)
        m->hybrid.block[i] = i % period == offset ? MODEL_MIXER_ATTENTION : MODEL_MIXER_MAMBA1;
    m->hybrid.n_layers_hybrid = m->n_layers;
    model_hybrid_t *h = &m->hybrid;
    static const char *const state[] = {"mamba_d_state", NULL};
    static const char *const conv[] = {"mamba_d_conv", NULL};
    static const char *const expand[] = {"mamba_expand", NULL};
    int ex = 0;
    h->ssm_conv_bias = true, h->ssm_proj_bias = false, h->ssm_dt_norms = true;
    if ((rc = size_of(r, state, 16, "JambaConfig's mamba_d_state", &h->ssm_state)) ||
        (rc = size_of(r, conv, 4, "JambaConfig's mamba_d_conv", &h->ssm_conv)) ||
        (rc = size_of(r, expand, 2, "JambaConfig's mamba_expand", &ex)) ||
        (rc = json_get_bool(r->c, "mamba_conv_bias", r->ctx, JSON_OPTIONAL, &h->ssm_conv_bias,
                            r->err)) ||
        (rc = json_get_bool(r->c, "mamba_proj_bias", r->ctx, JSON_OPTIONAL, &h->ssm_proj_bias,
                            r->err)))
        return rc;
    h->ssm_inner = ex * m->hidden;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(r->c, "mamba_dt_rank");
    if (cJSON_IsString(dt) && strcmp(dt->valuestring, "auto") == 0)
        h->ssm_dt_rank = (m->hidden + 15) / 16;
    else if ((rc = json_get_int(r->c, "mamba_dt_rank", r->ctx, JSON_REQUIRED, 1, MAX_SIZE,
                                &h->ssm_dt_rank, r->err)))
        return rc;
    return ERR_OK;
}

/* One 1-based layer list of linear_attn_config into mark[] (value v);
 * each entry a layer from 1 to n_layers, marked once. */
static int kda_list(hrd_t *r, const cJSON *lac, const json_ctx_t *lc, const char *key, int n,
                    unsigned char v, unsigned char *mark)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(lac, key);
    json_ctx_t kc = json_ctx_member(lc, key);
    if (!cJSON_IsArray(list))
        return err_setf(r->err, ERR_INPUT, r->file, kc.path,
                        "must be a list of layer numbers (1 to %d)", n);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        json_ctx_t ec = json_ctx_index(&kc, i++);
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1 && e->valuedouble <= n) ||
            e->valuedouble != (int)e->valuedouble) /* (range first: the cast) */
            return err_setf(r->err, ERR_INPUT, r->file, ec.path,
                            "must be a layer number from 1 to %d (modeling_kimi counts from 1)",
                            n);
        if (mark[(int)e->valuedouble - 1])
            return err_setf(r->err, ERR_INPUT, r->file, ec.path,
                            "layer %d is listed twice in kda_layers / full_attn_layers",
                            (int)e->valuedouble);
        mark[(int)e->valuedouble - 1] = v;
    }
    return ERR_OK;
}

/* Kimi Linear's linear_attn_config (KimiLinearConfig.is_kda_layer: layer
 * i is KDA when i + 1 is in kda_layers; the others MLA, each block with
 * its MLP or MoE); with full_attn_layers every layer must be in exactly
 * one list. KDA sizes: num_heads, head_dim (keys and values alike),
 * short_conv_kernel_size; the low-rank gates have head_dim's rank
 * (KimiDeltaAttention's f_a_proj and g_a_proj: hidden -> head_dim). */
static int read_kda(hrd_t *r, model_t *m)
{
    const cJSON *lac = cJSON_GetObjectItemCaseSensitive(r->c, "linear_attn_config");
    json_ctx_t lc = json_ctx_member(r->ctx, "linear_attn_config");
    int n = m->n_layers, rc;
    if (n > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, "num_hidden_layers",
                        "a hybrid model may have at most %d layers", MODEL_MAX_MOE_LAYERS);
    unsigned char mark[MODEL_MAX_MOE_LAYERS] = {0};
    if ((rc = kda_list(r, lac, &lc, "kda_layers", n, 1, mark)))
        return rc;
    bool full = present(lac, "full_attn_layers");
    if (full && (rc = kda_list(r, lac, &lc, "full_attn_layers", n, 2, mark)))
        return rc;
    for (int i = 0; i < n; i++) {
        if (full && !mark[i]) {
            json_ctx_t fc = json_ctx_member(&lc, "full_attn_layers");
            return err_setf(r->err, ERR_INPUT, r->file, fc.path,
                            "layer %d is in neither kda_layers nor full_attn_layers", i + 1);
        }
        m->hybrid.block[i] = mark[i] == 1 ? MODEL_MIXER_KDA : MODEL_MIXER_ATTENTION;
    }
    m->hybrid.n_layers_hybrid = n;
    model_hybrid_t *h = &m->hybrid;
    hrd_t sub = {lac, &lc, r->file, r->notes, r->err};
    static const char *const heads[] = {"num_heads", NULL};
    static const char *const hdim[] = {"head_dim", NULL};
    static const char *const conv[] = {"short_conv_kernel_size", NULL};
    if ((rc = size_of(&sub, heads, 0, "Kimi Delta Attention heads", &h->gdn_k_heads)) ||
        (rc = size_of(&sub, hdim, 0, "Kimi Delta Attention head size", &h->gdn_k_dim)) ||
        (rc = size_of(&sub, conv, 4, "KimiDeltaAttention's ShortConvolution width",
                      &h->gdn_conv)))
        return rc;
    h->gdn_v_heads = h->gdn_k_heads, h->gdn_v_dim = h->gdn_k_dim;
    h->kda_gate_rank = h->gdn_k_dim;
    /* fla-org/flash-linear-attention fla/ops/kda/chunk.py: chunks of 64 */
    h->gdn_chunk = 64;
    notes_add(r->notes, NOTE_ASSUMED, lc.path,
              "Kimi Delta Attention FLOPs in chunks of 64 tokens (fla chunk_kda), its gates "
              "of rank head_dim (modeling_kimi f_a_proj, g_a_proj)");
    return ERR_OK;
}

/* MiniMax-01 / M1's attn_type_list: one entry a block, 0 lightning
 * attention, 1 softmax attention, each block with its MoE
 * (MiniMaxM1DecoderLayer). Lightning attention has the attention's heads
 * and head size (MiniMaxM1LightningAttention: num_attention_heads,
 * head_dim) and runs in blocks of 256 tokens (modeling_minimax_m1.py's
 * BLOCK; transformers' MiniMaxConfig block_size, read when present). */
static int read_lightning(hrd_t *r, const cJSON *list, model_t *m)
{
    int n = cJSON_GetArraySize(list), i = 0;
    json_ctx_t lc = json_ctx_member(r->ctx, "attn_type_list");
    if (n != m->n_layers || n > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, lc.path,
                        "has %d entries but num_hidden_layers is %d (at most %d)", n,
                        m->n_layers, MODEL_MAX_MOE_LAYERS);
    const cJSON *v;
    cJSON_ArrayForEach(v, list)
    {
        if (!cJSON_IsNumber(v) || (v->valuedouble != 0 && v->valuedouble != 1)) {
            json_ctx_t ec = json_ctx_index(&lc, i);
            return err_setf(r->err, ERR_INPUT, r->file, ec.path,
                            "must be 0 (lightning attention) or 1 (softmax attention)");
        }
        m->hybrid.block[i++] =
            v->valuedouble == 0 ? MODEL_MIXER_LIGHTNING : MODEL_MIXER_ATTENTION;
    }
    m->hybrid.n_layers_hybrid = n;
    model_hybrid_t *h = &m->hybrid;
    h->gdn_k_heads = h->gdn_v_heads = m->n_heads;
    h->gdn_k_dim = h->gdn_v_dim = m->head_dim;
    static const char *const block[] = {"block_size", NULL};
    return size_of(r, block, 256, "MiniMax's lightning attention BLOCK", &h->gdn_chunk);
}

/* Falcon-H1 (transformers' FalconH1DecoderLayer): every block runs its
 * attention and a Mamba-2 mixer (FalconH1Mixer) on the same normed input,
 * sums them, then its MLP. mamba_d_ssm is the mixer's inner width (heads x
 * head size); mamba_rms_norm (FalconH1Config's default false) says whether
 * the gated RMSNorm is there; the conv has a bias and the projections none
 * (mamba_conv_bias true, mamba_proj_bias false: the Mamba-2 count here),
 * others refused naming the key. The mup multipliers scale weights and
 * activations, not counts. */
static int read_parallel(hrd_t *r, model_t *m)
{
    int d_ssm = 0, rc;
    bool rms = false, conv_bias = true, proj_bias = false;
    if (m->n_layers > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, "num_hidden_layers",
                        "a hybrid model may have at most %d layers", MODEL_MAX_MOE_LAYERS);
    if ((rc = json_get_int(r->c, "mamba_d_ssm", r->ctx, JSON_REQUIRED, 1, MAX_SIZE, &d_ssm,
                           r->err)) ||
        (rc = json_get_bool(r->c, "mamba_rms_norm", r->ctx, JSON_OPTIONAL, &rms, r->err)) ||
        (rc = json_get_bool(r->c, "mamba_conv_bias", r->ctx, JSON_OPTIONAL, &conv_bias,
                            r->err)) ||
        (rc = json_get_bool(r->c, "mamba_proj_bias", r->ctx, JSON_OPTIONAL, &proj_bias,
                            r->err)))
        return rc;
    if (!conv_bias || proj_bias)
        return err_setf(r->err, ERR_INPUT, r->file,
                        !conv_bias ? "mamba_conv_bias" : "mamba_proj_bias",
                        "%s: not modelled (scaleplan counts Mamba-2 with a conv bias and "
                        "projections without)",
                        !conv_bias ? "false" : "true");
    for (int i = 0; i < m->n_layers; i++)
        m->hybrid.block[i] = MODEL_MIXER_ATTENTION;
    m->hybrid.n_layers_hybrid = m->n_layers;
    m->hybrid.par_mamba2 = true;
    m->hybrid.ssm_no_norm = !rms;
    if ((rc = read_mamba(r, m)))
        return rc;
    if ((long)m->hybrid.ssm_heads * m->hybrid.ssm_head_dim != d_ssm)
        return err_setf(r->err, ERR_INPUT, r->file, "mamba_d_ssm",
                        "must be mamba_n_heads x mamba_d_head = %ld (got %d)",
                        (long)m->hybrid.ssm_heads * m->hybrid.ssm_head_dim, d_ssm);
    return ERR_OK;
}

/* full_attention_interval alone: Qwen3NextConfig's default layer_types. */
static int read_interval(hrd_t *r, model_t *m)
{
    int every = 0, rc;
    if ((rc = json_get_int(r->c, "full_attention_interval", r->ctx, JSON_REQUIRED, 2,
                           MODEL_MAX_MOE_LAYERS, &every, r->err)))
        return rc;
    if (m->n_layers > MODEL_MAX_MOE_LAYERS)
        return err_setf(r->err, ERR_INPUT, r->file, "num_hidden_layers",
                        "a hybrid model may have at most %d layers", MODEL_MAX_MOE_LAYERS);
    for (int i = 0; i < m->n_layers; i++)
        m->hybrid.block[i] = (i + 1) % every == 0 ? MODEL_MIXER_ATTENTION : MODEL_MIXER_GDN;
    m->hybrid.n_layers_hybrid = m->n_layers;
    json_ctx_t kc = json_ctx_member(r->ctx, "layer_types");
    notes_add(r->notes, NOTE_ASSUMED, kc.path,
              "absent: every %d-th block full attention, the others Gated DeltaNet "
              "(Qwen3NextConfig's default)",
              every);
    return ERR_OK;
}

int model_hybrid_config_read(const cJSON *c, const json_ctx_t *ctx, const char *file,
                             model_t *m, notes_t *notes, err_t *err)
{
    if (!model_hybrid_config_has(c))
        return ERR_OK;
    hrd_t r = {c, ctx, file, notes, err};
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(c, "layer_types");
    int rc;
    const cJSON *blocks = cJSON_GetObjectItemCaseSensitive(c, "layers_block_type");
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(c, "hybrid_override_pattern")))
        rc = read_pattern(&r, m);
    else if (cJSON_IsArray(blocks) && !list_has_kind(blocks, "hybrid"))
        rc = read_block_types(&r, blocks, m);
    else if (cJSON_IsArray(types))
        rc = read_types(&r, types, m);
    else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c, "linear_attn_config")))
        rc = read_kda(&r, m);
    else if (present(c, "mamba_d_ssm"))
        rc = read_parallel(&r, m);
    else if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c, "attn_type_list")))
        rc = read_lightning(&r, cJSON_GetObjectItemCaseSensitive(c, "attn_type_list"), m);
    else if (present(c, "attn_layer_period"))
        rc = read_period(&r, m);
    else
        rc = read_interval(&r, m);
    if (rc)
        return rc;
    if (model_hybrid_count(m, MODEL_MIXER_MAMBA2) > 0 && !m->hybrid.par_mamba2 &&
        (rc = read_mamba(&r, m)))
        return rc;
    if (model_hybrid_count(m, MODEL_MIXER_GDN) > 0 && (rc = read_gdn(&r, m)))
        return rc;
    if (model_hybrid_count(m, MODEL_MIXER_MAMBA2) + model_hybrid_count(m, MODEL_MIXER_GDN) +
            model_hybrid_count(m, MODEL_MIXER_MAMBA1) + model_hybrid_count(m, MODEL_MIXER_KDA) +
            model_hybrid_count(m, MODEL_MIXER_LIGHTNING) >
        0)
        notes_add(notes, NOTE_ASSUMED, "hybrid layers",
                  "the step prices the Mamba-2 / Gated DeltaNet / Kimi Delta Attention / "
                  "lightning attention kernels "
                  "as their chunked "
                  "products at the profile's GEMM rates (sim/ssm_cost.h), the backward at "
                  "2.5x the forward (ASSUMED: no published backward timing found)");
    if (model_hybrid_count(m, MODEL_MIXER_GDN) + model_hybrid_count(m, MODEL_MIXER_KDA) +
            model_hybrid_count(m, MODEL_MIXER_LIGHTNING) + model_hybrid_count(m, MODEL_MIXER_MAMBA1) >
        0)
        notes_add(notes, NOTE_ASSUMED, "hybrid layers",
                  "run by the frameworks with supports.hybrid (sim/catalog/frameworks.json), "
                  "which is cited for Mamba-2 hybrids (Megatron-Core 0.8's megatron/core/ssm); "
                  "these %s blocks are assumed to run there too",
                  model_hybrid_count(m, MODEL_MIXER_GDN) ? "Gated DeltaNet"
                  : model_hybrid_count(m, MODEL_MIXER_KDA) ? "Kimi Delta Attention"
                  : model_hybrid_count(m, MODEL_MIXER_LIGHTNING) ? "lightning attention"
                                                                 : "Mamba-1");
    if (present(c, "attn_output_gate") &&
        (rc = json_get_bool(c, "attn_output_gate", ctx, JSON_OPTIONAL, &m->hybrid.attn_out_gate,
                            err)))
        return rc;
    return ERR_OK;
}
