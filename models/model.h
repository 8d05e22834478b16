/* model: dense decoder-only transformer architectures.
 *
 * A model_t describes one architecture: GPT-style (LayerNorm, GELU MLP,
 * learned positions, optional tied embeddings, dropout) or Llama-style
 * (RMSNorm, SwiGLU MLP, RoPE, grouped-query attention). It is loaded from a
 * catalog name ("llama3-70b") or from any Hugging Face config.json, read as
 * it is (gpt2-style n_layer/n_embd/... or llama-style hidden_size/...).
 *
 * From it the module computes parameter counts (total, per pipeline stage,
 * per GPU), FLOPs per token by operation in the Megatron-LM convention, and
 * per-GPU memory for a parallel layout (models/memory.h). Loading validates
 * every field and refuses what it cannot model (MoE configs, nested
 * configs) with an error instead of a wrong answer.
 */
#ifndef SCALEPLAN_MODELS_MODEL_H
#define SCALEPLAN_MODELS_MODEL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "common/error.h"

typedef enum { MODEL_FAMILY_GPT = 0, MODEL_FAMILY_LLAMA = 1 } model_family_t;
typedef enum { MODEL_NORM_LAYERNORM = 0, MODEL_NORM_RMSNORM = 1 } model_norm_t;
typedef enum { MODEL_MLP_GELU = 0, MODEL_MLP_SWIGLU = 1 } model_mlp_t;
typedef enum {
    MODEL_POS_LEARNED = 0, /* a learned table of max_seq x hidden */
    MODEL_POS_ROPE = 1,    /* rotary (no parameters) */
    MODEL_POS_NONE = 2     /* no position parameters or rotation (ALiBi, NoPE) */
} model_pos_t;

#define MODEL_NAME_MAX 64

typedef struct {
    char name[MODEL_NAME_MAX]; /* catalog name, or the config file's stem */
    char display[96];          /* human name, e.g. "Llama 3 70B" */
    char source[320];          /* where the architecture figures come from */
    model_family_t family;
    model_norm_t norm;
    model_mlp_t mlp;
    model_pos_t pos;
    int n_layers;     /* transformer blocks */
    int hidden;       /* d_model */
    int n_heads;      /* query heads */
    int n_kv_heads;   /* key/value heads (== n_heads without GQA) */
    int head_dim;     /* per head; hidden / n_heads unless the config says */
    int ffn;          /* MLP inner width (each of gate and up for SwiGLU) */
    int vocab;        /* vocabulary size (as configured, before TP padding) */
    int max_seq;      /* positions the model supports */
    bool tied_embeddings; /* output head shares the word embedding */
    bool qkv_bias;        /* bias on the Q, K, V projections */
    bool out_bias;        /* bias on the attention output projection */
    bool mlp_bias;        /* biases on the MLP linears */
    double dropout;       /* hidden/attention dropout probability; > 0 means
                             dropout masks are kept for backward */
    double norm_eps;      /* epsilon of LayerNorm/RMSNorm */
    double rope_theta;    /* RoPE base frequency (rotary models) */
} model_t;

/* Parameter counts (numbers of parameters, not bytes). */
typedef struct {
    double word_embedding;     /* vocab x hidden */
    double position_embedding; /* max_seq x hidden for learned positions */
    double attention;          /* one block: Q, K, V, output (+ biases) */
    double mlp;                /* one block: MLP weights (+ biases) */
    double norms;              /* one block: its two norms */
    double per_layer;          /* one block: attention + mlp + norms */
    double final_norm;
    double output_head; /* untied LM head; 0 when tied */
    double total;       /* unique parameters of the model */
    double non_embedding; /* total without word/position embeddings and
                             the untied output head */
} model_params_t;

/* Load a model by catalog name (normalised, "did you mean" on a miss) or,
 * when name_or_path ends in .json or names an existing file, from a Hugging
 * Face config.json. Errors: ERR_INPUT with file and field. */
int model_load(const char *name_or_path, model_t *m, err_t *err);

/* Load from an already parsed config; file names it in messages and name is
 * stored as the model name. */
int model_from_config(const cJSON *config, const char *file, const char *name,
                      model_t *m, err_t *err);

/* Check a model_t built in code (not from JSON) for consistency: positive
 * sizes, heads dividing hidden (or head_dim given), kv heads dividing heads.
 * ctx names the source in messages. */
int model_validate(const model_t *m, const char *ctx, err_t *err);

/* The catalog's model names, sorted. Caller frees with catalog_free_names. */
int model_catalog_names(char ***names, size_t *count, err_t *err);

/* Parameter counts of m. */
void model_params(const model_t *m, model_params_t *out);

/* Width of the Q projection output (n_heads * head_dim) and of each of K and
 * V (n_kv_heads * head_dim). */
int model_q_width(const model_t *m);
int model_kv_width(const model_t *m);

const char *model_family_name(model_family_t f);

#endif
