/* hfconfig: Hugging Face config.json files, read as transformers reads them.
 *
 * One reader per model_type scaleplan counts exactly: llama, mistral,
 * mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3 (and
 * gemma3_text), phi3, nemotron, falcon (and the older RefinedWeb/RefinedWebModel),
 * gpt2, gpt_neox, opt, olmo, olmo2, olmoe, starcoder2, deepseek_v2,
 * deepseek_v3, gpt_oss, llama4 (and llama4_text). Keys a config leaves out
 * take the defaults of the transformers configuration class of that type
 * (tie_word_embeddings, head_dim, Gemma 3's sizes, ...), each said as an
 * assumption. Multimodal configs (gemma3, llama4) are read for their
 * language model; the vision tower is said to be left out.
 *
 * Refused with a one-line reason: a key given twice in one object (which
 * of the two counts is up to the JSON reader), encoder-only models (BERT and kin),
 * encoder-decoder models (T5, BART, is_encoder_decoder), state-space models
 * (Mamba, also the original mamba_ssm config without model_type), and any
 * other model_type, listing what is supported; model_load_opts_t's
 * assume_architecture reads an unknown type as a known one.
 *
 * The JSON edge of models/model.h: only this header carries cJSON.
 */
#ifndef SCALEPLAN_MODELS_HFCONFIG_H
#define SCALEPLAN_MODELS_HFCONFIG_H

#include <cjson/cJSON.h>

#include "common/error.h"
#include "common/notes.h"
#include "models/model.h"

/* Read a parsed config; file names it in messages, name is stored as the
 * model name. scaleplan's own catalog keys ("display_name", "source",
 * "aliases") are read too. opts and notes may be NULL. */
int model_from_config_ex(const cJSON *config, const char *file, const char *name,
                         const model_load_opts_t *opts, model_t *m, notes_t *notes, err_t *err);

/* model_from_config_ex without options or notes. */
int model_from_config(const cJSON *config, const char *file, const char *name, model_t *m,
                      err_t *err);

/* The supported model_type names, comma-separated, for messages. */
const char *hfconfig_supported_types(void);

#endif
