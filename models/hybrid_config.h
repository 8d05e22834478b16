/* hybrid_config: the layer pattern and mixer sizes of a hybrid config.json,
 * read by structure (models/hybrid.h says what they mean).
 *
 * The pattern comes from whichever key the config has:
 *   - hybrid_override_pattern: Megatron's letters, one a layer
 *     (Nemotron-H); it must have num_hidden_layers letters;
 *   - layer_types: one name a block, "linear_attention" (Gated DeltaNet),
 *     "mamba" (Mamba-2), or an attention block ("full_attention",
 *     "attention", "sliding_attention");
 *   - attn_layer_period / attn_layer_offset with mamba_dt_rank (Jamba):
 *     attention where layer % period == offset, Mamba-1 elsewhere;
 *   - full_attention_interval with the Gated DeltaNet keys: every
 *     interval-th block attention, the rest Gated DeltaNet (the default
 *     layer_types of transformers' Qwen3NextConfig), said as assumed.
 * Mamba-2 sizes in any of their spellings (ssm_state_size/mamba_d_state,
 * mamba_num_heads/mamba_n_heads or mamba_expand x hidden / head size,
 * mamba_head_dim/mamba_d_head, n_groups/mamba_n_groups, conv_kernel/
 * mamba_d_conv, chunk_size/mamba_chunk_size); Gated DeltaNet's
 * linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
 * linear_value_head_dim, linear_conv_kernel_dim; attn_output_gate.
 * Absent sizes take the defaults named in the notes.
 */
#ifndef SCALEPLAN_MODELS_HYBRID_CONFIG_H
#define SCALEPLAN_MODELS_HYBRID_CONFIG_H

#include <cjson/cJSON.h>

#include "common/error.h"
#include "common/json.h"
#include "common/notes.h"
#include "models/model.h"

/* Whether config c describes a hybrid pattern this reader reads (a string
 * hybrid_override_pattern, layer_types with a "linear_attention" or
 * "mamba" entry, or full_attention_interval > 1 with
 * linear_num_value_heads). */
bool model_hybrid_config_has(const cJSON *c);

/* Read c's pattern and mixer sizes into m, whose other fields (layers,
 * widths, experts) the type's reader has read. Nothing happens when c has
 * no hybrid pattern. ERR_INPUT naming file and key on a bad or
 * inconsistent value; notes (may be NULL) gets the defaults used. */
int model_hybrid_config_read(const cJSON *c, const json_ctx_t *ctx, const char *file,
                             model_t *m, notes_t *notes, err_t *err);

#endif
