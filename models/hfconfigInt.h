/* hfconfigInt: what the Hugging Face config reader's files share, and
 * nothing else includes (SQLite's *Int.h split). models/hfconfig.c picks
 * the reading of a config (its model_type, a wrapper's text_config, or by
 * structure) and refuses what is not priced; the readers are
 *   models/hfconfig_read.c       the pieces every reader shares (sizes,
 *                                heads, activation, ties, windows)
 *   models/hfconfig_arch.c       one reader per model_type, and their table
 *   models/hfconfig_structure.c  any other decoder config, read by its keys
 * Functions shared between the files are prefixed hf_ and documented where
 * they are defined; the key accessors below are inline. */
#ifndef SCALEPLAN_MODELS_HFCONFIGINT_H
#define SCALEPLAN_MODELS_HFCONFIGINT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/json.h"
#include "models/hfconfig.h"

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
    int layers_default;   /* > 0: num_hidden_layers when absent (the length of a
                             layer list the config derives it from) */
    bool qk_norm_always;  /* the type has a QK norm over the head whatever
                             use_qk_norm says (Laguna) */
    notes_t *notes;
    err_t *err;
} rd_t;

/* The sizes every llama-style config has. defs gives class defaults for
 * configs that leave them out (Gemma 3's text config), NULL when the keys
 * are required. */
typedef struct {
    int hidden, layers, heads, kv_heads, head_dim, ffn, vocab;
} size_defaults_t;

/* Structural features a config's keys describe, and which reader reads
 * each (arch_t.reads). */
enum { F_MOE = 1, F_MLA = 2, F_INDEXER = 4, F_BLOCKS = 8 /* per-layer block_configs */ };

typedef int (*read_fn)(rd_t *, model_t *);

typedef struct {
    const char *type;
    read_fn read;
    const char *wrapper_of; /* multimodal wrapper: read text_config as this type */
    unsigned reads;         /* the structural features (F_*) its reader counts */
} arch_t;

/* ---------------------------------------------------------------- hfconfig_read.c */

int hf_read_tie(rd_t *r, bool def, model_t *m);
int hf_read_structure_tie(rd_t *r, model_t *m);
int hf_read_core(rd_t *r, model_t *m, const size_defaults_t *defs, int max_pos_default);
int hf_read_act(rd_t *r, const char *key, model_t *m);
int hf_read_attention_bias(rd_t *r, bool def, model_t *m);
void hf_note_window(rd_t *r, model_t *m, int window, int layers);
int hf_read_window(rd_t *r, model_t *m, int layers);
void hf_llama_block(model_t *m);
void hf_all_moe(model_t *m);
int hf_moe_layers_limit(rd_t *r, const model_t *m);

/* ---------------------------------------------------------------- hfconfig_arch.c */

const arch_t *hf_find_arch(const char *type);
int hf_read_deepseek(rd_t *r, model_t *m);
int hf_qwen_moe_layers(rd_t *r, model_t *m);

/* ---------------------------------------------------------------- hfconfig_nas.c */

int hf_read_nemotron_nas(rd_t *r, model_t *m);

/* ---------------------------------------------------------------- hfconfig_structure.c */

extern const char *const HF_EXPERT_KEYS[];
const char *hf_first_key(const cJSON *c, const char *const *keys);
int hf_moe_list_layers(rd_t *r, const cJSON *list, const char *key, model_t *m);
int hf_read_moe_by_keys(rd_t *r, model_t *m);
int hf_read_gqa_by_keys(rd_t *r, model_t *m);
int hf_read_glm4_moe(rd_t *r, model_t *m);
int hf_read_laguna(rd_t *r, model_t *m);

/* ---------------------------------------------------------------- hfconfig_gemma4.c */

int hf_read_gemma4(rd_t *r, model_t *m);
int hf_read_structure(rd_t *r, model_t *m);

/* ---------------------------------------------------------------- reading keys */

static inline bool has(const rd_t *r, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->c, k);
    return v && !cJSON_IsNull(v);
}

static inline int geti(rd_t *r, const char *k, long lo, long hi, int *out)
{
    return json_get_int(r->c, k, &r->ctx, JSON_REQUIRED, lo, hi, out, r->err);
}

/* A note on key (its path in the file). */
static inline void assumed(rd_t *r, const char *key, const char *fmt, const char *detail)
{
    json_ctx_t k = json_ctx_member(&r->ctx, key);
    notes_add(r->notes, NOTE_ASSUMED, k.path, fmt, detail);
}

/* Say that key is absent and what stands for it: the class default of the
 * type, or what absence means. Every value a reader fills in goes through
 * here, so nothing is taken silently from a user's config; scaleplan's own
 * catalog entries are checked as they stand (their figures are pinned in
 * tests/test_hfconfig.c) and say nothing. */
static inline void absent(rd_t *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void absent(rd_t *r, const char *key, const char *fmt, ...)
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
static inline int readi(rd_t *r, const char *k, long lo, long hi, int *out)
{
    return json_get_int(r->c, k, &r->ctx, JSON_OPTIONAL, lo, hi, out, r->err);
}

static inline int readb(rd_t *r, const char *k, bool *out)
{
    return json_get_bool(r->c, k, &r->ctx, JSON_OPTIONAL, out, r->err);
}

static inline int readd(rd_t *r, const char *k, double lo, double hi, double *out)
{
    return json_get_double(r->c, k, &r->ctx, JSON_OPTIONAL, lo, hi, out, r->err);
}

static inline int reads(rd_t *r, const char *k, char *out, size_t cap)
{
    return json_get_string(r->c, k, &r->ctx, JSON_OPTIONAL, out, cap, r->err);
}

/* Optional keys whose absence leaves *out, the type's class default, and
 * says so. */
static inline int opti(rd_t *r, const char *k, long lo, long hi, int *out)
{
    if (!has(r, k))
        absent(r, k, "%s's default %d", r->type, *out);
    return readi(r, k, lo, hi, out);
}

static inline int optd(rd_t *r, const char *k, double lo, double hi, double *out)
{
    if (!has(r, k))
        absent(r, k, "%s's default %g", r->type, *out);
    return readd(r, k, lo, hi, out);
}

static inline int optb(rd_t *r, const char *k, bool *out)
{
    if (!has(r, k))
        absent(r, k, "%s's default %s", r->type, *out ? "true" : "false");
    return json_get_bool(r->c, k, &r->ctx, JSON_OPTIONAL, out, r->err);
}

static inline int opts(rd_t *r, const char *k, char *out, size_t cap)
{
    if (!has(r, k))
        absent(r, k, "%s's default '%s'", r->type, out);
    return reads(r, k, out, cap);
}

#endif
