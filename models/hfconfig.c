/* hfconfig: one reader per Hugging Face model_type, and one by structure
 * for any other decoder config. Each states the tensors its architecture
 * has (what model_params then counts) and the defaults of the transformers
 * configuration class for keys a config leaves out. Sources: the
 * modeling_*.py / configuration_*.py of huggingface/transformers for each
 * type; the counts they give are checked against published figures in
 * tests/test_hfconfig.c and tests/test_hfstructure.c.
 *
 * This file picks the reading of a config and refuses what scaleplan does
 * not price; the readers are models/hfconfig_arch.c (by model_type) and
 * models/hfconfig_structure.c (by structure), over the shared pieces of
 * models/hfconfig_read.c (models/hfconfigInt.h). */
#include "models/hfconfig.h"
#include "models/hfconfigInt.h"

#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "models/hybrid_config.h"

/* The structural features (F_*) config c's keys describe; *key the key
 * that says the last of them (NULL when none). */
static unsigned config_features(const cJSON *c, const char **key)
{
    unsigned f = 0;
    *key = NULL;
    if (hf_first_key(c, HF_EXPERT_KEYS)) {
        f |= F_MOE;
        *key = hf_first_key(c, HF_EXPERT_KEYS);
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
    /* deepseek_sparse_attention: GLM-5.2's attention with the DSA indexer
     * (model_indexer_t, read with the index_* keys) */
    static const char *const attention[] = {"full_attention", "sliding_attention",
                                            "chunked_attention", "attention",
                                            "deepseek_sparse_attention"};
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
static int refuse_unpriced_layers(const cJSON *c, const char *file, unsigned reads, err_t *err)
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
        {"layers_block_type", "Mamba layers", true},
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
        if ((reads & F_BLOCKS) && strcmp(keys[i].key, "block_configs") == 0)
            continue; /* the type's reader prices them (models/hfconfig_nas.c) */
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

const char *hfconfig_supported_types(void)
{
    return "llama, mistral, mixtral, qwen, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, "
           "gemma3, gemma4, phi3, nemotron, falcon, gpt2, bloom, gpt_neox, opt, olmo, olmo2, olmoe, starcoder2, "
           "deepseek_v2, deepseek_v3, deepseek_v32, kimi_k2, glm4_moe, glm_moe_dsa, minimax_m2, laguna, "
           "gpt_oss, llama4, nemotron_h, qwen3_next, qwen3_5_moe, jamba, nemotron-nas, deci";
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
static const arch_t BY_STRUCTURE = {"scaleplan", hf_read_structure, NULL,
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
    const cJSON *tt = cJSON_GetObjectItemCaseSensitive(tc, "model_type");
    const arch_t *ta = cJSON_IsString(tt) ? hf_find_arch(tt->valuestring) : NULL;
    int rc = refuse_unpriced_layers(tc, file, ta ? ta->reads : 0, err);
    if (rc)
        return rc;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(tc, "model_type");
    const arch_t *own = cJSON_IsString(t) ? hf_find_arch(t->valuestring) : NULL;
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
        *arch = hf_find_arch("gpt2");
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
    const arch_t *reader = hf_find_arch(assume ? assume : type ? type : "");
    int rc = refuse_unpriced_layers(c, file, reader ? reader->reads : 0, err);
    if (rc)
        return rc;
    if (!type && !assume)
        return pick_untyped(c, file, arch, notes, err);
    const char *want = assume ? assume : type;
    const arch_t *a = hf_find_arch(want);
    if (!a && assume)
        return err_setf(err, ERR_INPUT, NULL, "--assume-architecture",
                        "'%s' is not an architecture scaleplan reads (%s)", assume,
                        hfconfig_supported_types());
    if (assume && (!type || strcmp(type, assume) != 0))
        notes_add(notes, NOTE_ASSUMED, "model_type",
                  "'%s' read as %s (--assume-architecture)", type ? type : "(none)", assume);
    bool wrapped = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(c, "text_config"));
    if (a && a->wrapper_of)
        rc = pick_text(c, file, hf_find_arch(a->wrapper_of), arch, text, notes, err);
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
