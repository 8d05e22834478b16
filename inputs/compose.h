/* compose: the one place that decides which source of a scenario wins.
 *
 * A scenario can come from several places at once: the framework input a
 * command names (Megatron-LM arguments or a launch script, a torchtitan
 * config, an accelerate config, Megatron-Bridge overrides or launch
 * command; one framework's at a time), a DeepSpeed config beside the flags,
 * a base built elsewhere (a training log's model and layout, a plan's), the
 * framework preset's defaults, and the flags. The order, lowest first:
 *
 *   preset defaults < base < launch file (Megatron, torchtitan) <
 *   accelerate config < Bridge recipe's release layout < Bridge overrides <
 *   flags
 *
 * The model: a torchtitan config's (unless --model), the Megatron
 * arguments' (then --model is refused), the base's, a Bridge recipe's, or
 * --model. The GPU count: --gpus, else the launch file's (torchrun's world
 * size, a torchtitan config's degrees, accelerate's num_processes, a Bridge
 * recipe's), said as assumed. The framework: --framework, else the one the
 * input names (said). Everything taken from an input rather than a flag is
 * a note in the scenario; a batch no source gives is the plan's default,
 * said (scenario_default_batch).
 *
 * The command line fills compose_sources_t from its flags
 * (commands/args_inputs.c); the flags' own part (layout flags, simulator
 * switches) is applied through the hooks, last, so they always win.
 */
#ifndef SCALEPLAN_INPUTS_COMPOSE_H
#define SCALEPLAN_INPUTS_COMPOSE_H

#include <stdbool.h>

#include "common/error.h"
#include "inputs/deepspeed.h"
#include "sim/scenario.h"

typedef struct {
    /* the framework inputs named (NULL: not given) */
    const char *megatron_args;      /* --megatron-args: the argument text */
    const char *megatron_args_file; /* --megatron-args-file */
    const char *torchtitan;         /* --torchtitan FILE.toml|FILE.py */
    const char *torchtitan_config;  /* --torchtitan-config NAME (a .py registry's job) */
    const char *accelerate_config;  /* --accelerate-config FILE.yaml */
    const char *bridge_overrides;   /* --bridge-overrides FILE */
    const char *deepspeed;          /* --deepspeed FILE (read by the flags' part) */
    const char *vocab_size;         /* --vocab-size N for Megatron arguments */
    /* what the flags say that decides between the sources */
    const char *model;              /* --model or the first bare word, NULL: none */
    const char *framework;          /* --framework */
    const char *assume_architecture;
    const char *profile;            /* --profile */
    cluster_spec_t cluster;         /* --gpu/--cluster/--gpus/... as given */
    bool micro_batch, global_batch; /* --micro-batch, --global-batch given */
    bool recompute;                 /* --recompute or a Megatron spelling of it */
    bool precision;                 /* --precision, --bf16, --fp16 or --fp8-format */
    bool grad_dtype;                /* --grad-dtype */
    /* the preset Bridge overrides run as without --framework */
    const char *bridge_framework;
    /* the flags' part: what they give a DeepSpeed or accelerate reader,
     * and the layout flags and switches applied over everything else */
    void *flags;
    int (*deepspeed_given)(void *flags, const model_t *m, deepspeed_given_t *g, err_t *err);
    int (*apply_flags)(void *flags, scenario_t *s, err_t *err);
} compose_sources_t;

/* What a scenario starts from instead of the preset's defaults, each NULL
 * for "the usual": a model built elsewhere (no --model needed), a layout
 * (flags still apply on top; not finalized) and simulator options. */
typedef struct {
    const model_t *model;
    const layout_t *layout;
    const sim_options_t *opt;
} compose_base_t;

/* The scenario of the sources over base (may be NULL), finished
 * (scenario_finish with src->profile). scenario_free(s) afterwards,
 * whatever it returns. Two framework inputs at once, a model both from
 * Megatron arguments and --model, a file that does not read: ERR_INPUT
 * naming the flag or the file. */
int compose_scenario(const compose_sources_t *src, const compose_base_t *base, scenario_t *s,
                     err_t *err);

#endif
