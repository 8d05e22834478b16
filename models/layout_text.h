/* layout_text: the one notation a layout is written in wherever people read
 * it: the plan table, the recommendation, sim/model/budget/validate text,
 * the `layout_text` field of --json and the HTML report.
 *
 *   TP4 CP2 PP2 VPP41 EP8 ETP1 DP256 mb1 gb512 SP dist-opt rc=full:54 fp8
 *
 * Parallel degrees first, in the order ranks are laid out (TP inside CP
 * inside PP; EP and ETP for experts, then DP), then the batch, then what
 * trades memory for time. Parts at their default are left out: CP1, VPP1,
 * EP1, the 1F1B schedule (GPipe and DualPipeV are named; VPP>1 means
 * interleaved 1F1B), no sharding, no recompute, bf16. Every abbreviation is
 * a term of reports/glossary.h, so glossary_legend explains any text made
 * here.
 */
#ifndef SCALEPLAN_MODELS_LAYOUT_TEXT_H
#define SCALEPLAN_MODELS_LAYOUT_TEXT_H

#include <stddef.h>

#include "models/layout.h"

/* Write l in the notation into buf (cap bytes; 200 always suffice; a
 * smaller buffer cuts the text). Returns buf. */
const char *layout_text_format(const layout_t *l, char *buf, size_t cap);

/* The notation followed by what it leaves out, for a line of its own:
 * "TP8 PP4 DP8 mb1 gb512 SP rc=sel (bf16, 1F1B schedule, 64 micro-batches
 * per replica per step)". Returns buf. */
const char *layout_text_long(const layout_t *l, char *buf, size_t cap);

/* The same notation from a layout object of a --json document (the keys of
 * the layout record: tp, pp, cp, ep, etp, vpp, dp, micro_batch,
 * global_batch, schedule, zero, distributed_optimizer, sequence_parallel,
 * recompute, recompute_layers, precision); keys absent read as their
 * defaults. o is a cJSON object (void * so this header needs no cJSON). */
const char *layout_text_from_json(const void *o, char *buf, size_t cap);

/* The layout as the flags or config keys of the framework preset's family
 * (megatron-core: Megatron-LM flags; nemo-*, megatron-bridge-*: Bridge
 * config overrides; deepspeed: ds_config keys with Megatron-DeepSpeed's TP
 * and PP flags; torchtitan-*: TOML keys), the parallel layout, batch,
 * sharding and recompute only; "" for a preset with none of these (fsdp,
 * pytorch-ddp, llm-foundry: their configuration is code). Returns buf. */
const char *layout_text_flags(const layout_t *l, const char *framework, char *buf, size_t cap);

/* models/layout_json.h's layout object with "layout_text" (the notation)
 * added as its last key; the caller deletes it. NULL on OOM. */
struct cJSON;
struct cJSON *layout_text_json(const layout_t *l);

#endif
