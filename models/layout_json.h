/* layout_json: a layout at the JSON edge.
 *
 * The "layout" object of sim/train --json results (written and read back);
 * DeepSpeed configs are read by inputs/deepspeed.
 * Kept apart from layout.h so that the simulator's headers carry no JSON
 * library.
 */
#ifndef SCALEPLAN_MODELS_LAYOUT_JSON_H
#define SCALEPLAN_MODELS_LAYOUT_JSON_H

#include <cjson/cJSON.h>

#include "common/json.h"
#include "models/layout.h"

/* The layout object (tp, pp, dp, cp, ep, vpp, micro_batch, global_batch,
 * grad_accum, zero, recompute, schedule, seq_len, sequence_parallel,
 * distributed_optimizer, precision, flash_attention, grad_bytes, gpus;
 * finetune, and with a frozen base lora_rank, lora_targets, base_bits, only
 * where set); the caller deletes it. NULL on OOM. */
cJSON *layout_to_json(const layout_t *l);

/* Read a layout object as layout_to_json writes it (derived keys dp,
 * grad_accum and gpus are ignored) over l's current values. Errors name
 * file and key. The caller finalizes. */
int layout_from_json(const cJSON *o, const json_ctx_t *ctx, layout_t *l, err_t *err);

#endif
