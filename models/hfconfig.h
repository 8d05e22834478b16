/* hfconfig: Hugging Face config.json files, read as transformers reads them.
 *
 * One reader per model_type scaleplan counts exactly: llama, mistral,
 * mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3 (and
 * gemma3_text), gemma4 (and gemma4_text; full-attention blocks of their
 * own head size and key/value heads, models/hfconfig_gemma4.c), phi3, nemotron, falcon (and the older RefinedWeb/RefinedWebModel),
 * gpt2, gpt_neox, opt, olmo, olmo2, olmoe, starcoder2, deepseek_v2,
 * deepseek_v3, deepseek_v32 and glm_moe_dsa (with the sparse-attention
 * indexer, shared across blocks by indexer_types), kimi_k2, glm4_moe,
 * minimax_m2, laguna (query heads per block, a gate per head), gpt_oss,
 * llama4 (and
 * llama4_text), nemotron-nas and deci (per-layer block_configs,
 * models/hfconfig_nas.c: one sub-layer a block, the FFN widths at their
 * mean, said as approximated). Keys a config leaves out take the defaults of the
 * transformers configuration class of that type (tie_word_embeddings,
 * head_dim, Gemma 3's sizes, ...), each said as an assumption. Multimodal
 * configs are read for their language model (text_config); the vision
 * tower is said to be left out.
 *
 * Any other model_type is read by structure, and a note says so: the
 * Llama block (RMSNorm, RoPE, the MLP hidden_act gives) with multi-latent
 * attention when kv_lora_rank is present, else grouped-query attention,
 * QK norm (use_qk_norm), experts in every naming (num_experts,
 * n_routed_experts, num_local_experts, moe_num_experts; top-k, expert
 * width, shared experts and dense-block placement likewise) and
 * multi-token prediction modules; absent keys take scaleplan's defaults,
 * each said. What it cannot read is refused naming the key.
 *
 * Hybrid layer patterns (Mamba-2, Gated DeltaNet and Jamba's Mamba-1
 * blocks: nemotron_h, qwen3_next, qwen3_5_moe, jamba, and any config with
 * their keys; Nemotron 3's layers_block_type list) are read by
 * models/hybrid_config.h after the type's reader; routed experts in a
 * latent width (moe_latent_size, LatentMoE) with the experts' keys.
 *
 * Refused with a one-line reason: a key given twice in one object (which
 * of the two counts is up to the JSON reader), encoder-only models (BERT and kin),
 * encoder-decoder models (T5, BART, is_encoder_decoder), state-space models
 * (Mamba, also the original mamba_ssm config without model_type), Zamba's
 * shared-attention hybrids (model_type, or a layers_block_type with
 * "hybrid"), layer_types kinds other than linear_attention and mamba, and
 * block_configs under a type other than nemotron-nas/deci (the key named). model_load_opts_t's assume_architecture reads a config as a known
 * type, and is refused when that type's reader would drop the config's
 * experts, multi-latent attention or indexer.
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
