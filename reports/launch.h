/* launch: a layout as the configuration a framework launches it with.
 *
 *   megatron    a Megatron-LM pretrain_gpt.py argument list, one flag per
 *               line (architecture, parallel layout, batch, recompute,
 *               precision, overlap), as core_r0.9+ names them
 *   nemo        Megatron-Bridge recipe overrides, one KEY=VALUE per line
 *               (model.*, train.*, ddp.*, mixed_precision), for
 *               scripts/performance/run_script.py or a recipe's CLI
 *   deepspeed   a ds_config.json (batch sizes, ZeRO stage and overlap,
 *               precision, activation checkpointing) followed by the
 *               Megatron-DeepSpeed launcher arguments for TP and PP
 *   torchtitan  a torchtitan job TOML ([parallelism], [training],
 *               [activation_checkpoint], [float8], [compile])
 *
 * scaleplan reads each of them back (sim --megatron-args, inputs/bridge's
 * bridge_read_overrides, --deepspeed with --tp/--pp, --torchtitan) to the
 * same layout; the tests check the round trip and the flag names against
 * the frameworks' documented arguments.
 */
#ifndef SCALEPLAN_REPORTS_LAUNCH_H
#define SCALEPLAN_REPORTS_LAUNCH_H

#include <stdio.h>

#include "common/error.h"
#include "models/layout.h"
#include "models/model.h"
#include "sim/costs.h"

typedef enum {
    LAUNCH_MEGATRON = 0,
    LAUNCH_NEMO,
    LAUNCH_DEEPSPEED,
    LAUNCH_TORCHTITAN,
    LAUNCH_COUNT
} launch_kind_t;

/* "megatron", "nemo", "deepspeed", "torchtitan" (ERR_INPUT on --emit). */
int launch_parse(const char *name, launch_kind_t *k, err_t *err);
const char *launch_name(launch_kind_t k);

/* The framework preset a plan for this format searches (the current
 * version of that framework). */
const char *launch_framework(launch_kind_t k);

/* What is written carries a "# planned for NAME;" comment (Megatron
 * arguments, Bridge overrides), which inputs/compose reads back to run the
 * file as the preset it was planned for. */

/* Whether a framework preset's layouts can be written in this format. */
bool launch_accepts(launch_kind_t k, const char *framework);

/* Write model m under finalized layout l (and options o) to out. ERR_INPUT
 * when the format cannot express the layout (e.g. torchtitan has no
 * Megatron selective recompute), naming what. */
int launch_write(launch_kind_t k, const model_t *m, const layout_t *l, const sim_options_t *o,
                 FILE *out, err_t *err);

/* The same in the keys of the framework preset's version where they differ
 * (torchtitan-2024-12: torchtitan's December 2024 job config); NULL or
 * another preset: the current keys. */
int launch_write_for(launch_kind_t k, const char *framework, const model_t *m, const layout_t *l,
                     const sim_options_t *o, FILE *out, err_t *err);

/* The Megatron-DeepSpeed launcher arguments that go with a written
 * ds_config.json (layout, batch, recompute), into out. */
void launch_deepspeed_args(const layout_t *l, char *out, size_t cap);

#endif
