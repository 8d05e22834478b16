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
 * scaleplan reads each of them back (sim --megatron-args, launch_read_nemo,
 * --deepspeed with --tp/--pp, --torchtitan) to the same layout; the tests
 * check the round trip and the flag names against the frameworks'
 * documented arguments.
 */
#ifndef SCALEPLAN_REPORTS_LAUNCH_H
#define SCALEPLAN_REPORTS_LAUNCH_H

#include <stdio.h>

#include "common/error.h"
#include "common/notes.h"
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

/* The framework a configuration scaleplan wrote was planned for: its
 * "# planned for NAME;" comment (Megatron arguments, Bridge overrides), into
 * name (cap bytes); false when there is none. */
bool launch_planned_for(const char *text, char *name, size_t cap);

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

/* Read Megatron-Bridge overrides (KEY=VALUE words, '#' comments) for model
 * m into a layout (over its current values) and its precision. The text
 * may be a whole launch command (uv run python scripts/training/
 * run_recipe.py --recipe NAME ... key=value ...): the words that are not
 * config overrides are left out, each with a note (notes may be NULL);
 * architecture overrides (model.num_layers, hidden_size, heads, query
 * groups, ffn) must agree with m. ERR_INPUT names the line. */
int launch_read_nemo_notes(const char *text, const char *origin, const model_t *m, layout_t *l,
                           notes_t *notes, err_t *err);
int launch_read_nemo(const char *text, const char *origin, const model_t *m, layout_t *l,
                     err_t *err);

/* The recipe a Bridge launch command names (--recipe NAME), into recipe;
 * returns 1 if there is one, 0 if not. */
int launch_nemo_recipe(const char *text, char *recipe, size_t cap);

/* What a Megatron-Bridge recipe's name says
 * (<model>_pretrain_<N>gpu_<gpu>_<precision>..._config, as in
 * src/megatron/bridge/recipes): the model as the catalog spells it
 * (llama31_405b: llama3.1-405b), the GPU count, the catalog GPU (h100:
 * h100-sxm) and the precision (bf16, fp8cs, fp8mx, fp8sc = blockwise,
 * nvfp4); "" / 0 / -1 for what it does not say. Returns 0 for a name
 * without a model part, or with one too long for any catalog name (never
 * a model cut to fit). */
typedef struct {
    char model[64];
    int gpus;
    char gpu[32];
    int precision; /* precision_t, or -1 */
} launch_recipe_t;
int launch_nemo_recipe_parts(const char *recipe, launch_recipe_t *out);

/* What Megatron-Bridge's performance launcher (scripts/performance/
 * setup_experiment.py) says of the run, over out: -ng/--num_gpus, -g/--gpu
 * and -c/--compute_dtype (its -mr/--model_recipe_name is the recipe
 * launch_nemo_recipe returns; its -tp, -pp, -cp, -vp, -ep, -et, -mb, -gb,
 * -sl, -rl, --use_megatron_fsdp and --recompute_modules are read as the
 * overrides they stand for). */
void launch_nemo_perf_run(const char *text, launch_recipe_t *out);

/* The layout Megatron-Bridge's performance launcher runs for the recipe a
 * setup_experiment.py command names (-m MODEL -s SIZE of Bridge v0.2,
 * -m FAMILY -mr RECIPE of later releases) on its GPU (-g, else gpu, the
 * catalog name scaleplan was given) in its precision (-c, default bf16):
 * the release's performance config (reports/bridge_perf_configs.tsv, from
 * scripts/performance/configs), its global batch scaled to -ng as Bridge
 * scales it, written over l. 1 with what in words, 0 when the text names
 * no such recipe, -1 when the release has no config for it (what says
 * which). The command's own -tp ... -gb are read after, by
 * launch_read_nemo_notes. */
int launch_nemo_perf_layout(const char *text, const char *gpu, layout_t *l, char *what,
                            size_t cap);

#endif
