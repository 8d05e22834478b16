/* bridge: Megatron-Bridge's launch configuration read into a layout.
 *
 * Megatron-Bridge runs a recipe (a Python config function named
 * <model>_pretrain_<N>gpu_<gpu>_<precision>..._config) with overrides,
 * KEY=VALUE words (model.*, train.*, ddp.*, mixed_precision), on the
 * command line of scripts/training/run_recipe.py or of the performance
 * launcher scripts/performance/setup_experiment.py, whose own flags
 * (-tp, -pp, ... -gb) stand for overrides too. This module reads such a
 * text (after megatron_shell_command has expanded a launch script's
 * variables, for a whole command) into a layout over its current values,
 * what the recipe's name says (model, GPUs, GPU, precision), and the
 * layout the performance launcher's release config runs
 * (inputs/bridge_perf_configs.tsv). reports/launch writes the overrides
 * (plan --emit nemo); the two meet in tests/test_launch.c's round trips.
 */
#ifndef SCALEPLAN_INPUTS_BRIDGE_H
#define SCALEPLAN_INPUTS_BRIDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/notes.h"
#include "frameworks/options.h"
#include "models/layout.h"
#include "models/model.h"

/* Read Megatron-Bridge overrides (KEY=VALUE words, '#' comments) for model
 * m into a layout (over its current values) and its precision. The text
 * may be a whole launch command (uv run python scripts/training/
 * run_recipe.py --recipe NAME ... key=value ...): the words that are not
 * config overrides are left out, each with a note (notes may be NULL);
 * architecture overrides (model.num_layers, hidden_size, heads, query
 * groups, ffn) must agree with m. ERR_INPUT names the line. */
int bridge_read_overrides_notes(const char *text, const char *origin, const model_t *m, layout_t *l,
                           notes_t *notes, err_t *err);
int bridge_read_overrides(const char *text, const char *origin, const model_t *m, layout_t *l,
                     err_t *err);

/* The options Megatron-Bridge overrides in text set, over o:
 * model.moe_token_dispatcher_type (alltoall, allgather, flex: DeepEP, with
 * model.moe_flex_dispatcher_backend deepep or hybridep), model.cuda_graph_impl
 * (none, local, transformer_engine, full_iteration) with
 * model.cuda_graph_scope ([attn,moe_router,...]); each one named marks the
 * option given. A value none of these is ERR_INPUT naming the line and
 * the key. */
int bridge_read_options(const char *text, const char *origin, sim_options_t *o, err_t *err);

/* The recipe a Bridge launch command names (--recipe NAME), into recipe;
 * returns 1 if there is one, 0 if not. */
int bridge_recipe(const char *text, char *recipe, size_t cap);

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
} bridge_recipe_t;
int bridge_recipe_parts(const char *recipe, bridge_recipe_t *out);

/* What Megatron-Bridge's performance launcher (scripts/performance/
 * setup_experiment.py) says of the run, over out: -ng/--num_gpus, -g/--gpu
 * and -c/--compute_dtype (its -mr/--model_recipe_name is the recipe
 * bridge_recipe returns; its -tp, -pp, -cp, -vp, -ep, -et, -mb, -gb,
 * -sl, -rl, --use_megatron_fsdp and --recompute_modules are read as the
 * overrides they stand for). */
void bridge_perf_run(const char *text, bridge_recipe_t *out);

/* The layout Megatron-Bridge's performance launcher runs for the recipe a
 * setup_experiment.py command names (-m MODEL -s SIZE of Bridge v0.2,
 * -m FAMILY -mr RECIPE of later releases) on its GPU (-g, else gpu, the
 * catalog name scaleplan was given) in its precision (-c, default bf16):
 * the release's performance config (inputs/bridge_perf_configs.tsv, from
 * scripts/performance/configs), its global batch scaled to -ng as Bridge
 * scales it, written over l. 1 with what in words, 0 when the text names
 * no such recipe, -1 when the release has no config for it (what says
 * which). The command's own -tp ... -gb are read after, by
 * bridge_read_overrides_notes. */
int bridge_perf_layout(const char *text, const char *gpu, layout_t *l, char *what,
                            size_t cap);

#endif
