/* args_inputs: the framework inputs a command line names (Megatron
 * arguments, a torchtitan config, an accelerate config, a DeepSpeed config,
 * Megatron-Bridge overrides) as flags, and cmd_scenario / cmd_scenario_from
 * of commands/args.h: the flags handed to the one step that decides which
 * source wins (inputs/compose.h), their own part applied there last. */
#include "commands/argsInt.h"

#include <stdlib.h>
#include <string.h>

#include "inputs/compose.h"
#include "reports/launch.h"

static const cmd_opt_t input_opts[] = {
    {"--megatron-args", NULL, "\"ARGS\"",
     "a Megatron-LM pretrain_gpt.py argument list or launch command, quoted: architecture, "
     "layout, precision and overlap flags are read (hybrid models' --hybrid-override-pattern "
     "and --mamba-* too); the rest listed as ignored; a plan --emit "
     "megatron file runs as the preset it was planned for unless --framework", CMD_WORD},
    {"--megatron-args-file", NULL, "FILE", "the same from a file (a launch script works)",
     CMD_WORD},
    {"--vocab-size", NULL, "N",
     "the tokenizer's vocabulary size, for Megatron arguments that name a tokenizer "
     "(--tokenizer-model) without giving its size; padded as the arguments say",
     CMD_KIND(CMD_COUNT, 1, 1e8)},
    {"--torchtitan", NULL, "FILE.toml|FILE.py",
     "a torchtitan job config: model flavor, parallelism, batch, activation checkpointing, "
     "float8, compile; runs as the torchtitan preset of its generation unless --framework",
     CMD_WORD},
    {"--accelerate-config", NULL, "FILE.yaml",
     "a Hugging Face accelerate config (accelerate config's YAML): distributed_type (DEEPSPEED, "
     "FSDP, MULTI_GPU), num_processes as --gpus, mixed_precision, ZeRO stage and offload or a "
     "deepspeed_config_file, FSDP sharding, offload and activation checkpointing; needs "
     "--seq-len and --micro-batch (or --global-batch), which no such file holds",
     CMD_WORD},
    {"--torchtitan-config", NULL, "NAME",
     "with --torchtitan config_registry.py (torchtitan's Python configs since February 2026): "
     "the function of the job (llama3_8b), read by structure, never run",
     CMD_WORD},
    {"--bridge-overrides", NULL, "FILE",
     "Megatron-Bridge / NeMo 2 recipe overrides (KEY=VALUE lines, as plan --emit nemo writes "
     "them, or a whole run_recipe.py or performance setup_experiment.py launch command): "
     "parallel sizes, batch, recompute, precision; the recipe's name (or -mr, -ng, -g, -c) "
     "gives the model, GPU, GPU count and precision the flags do not; runs as the preset a "
     "plan --emit nemo file was planned for, else the newest Megatron-Bridge preset, unless "
     "--framework",
     CMD_WORD},
};
const cmd_group_t CMD_INPUT_OPTS = {"Framework inputs (explicit flags override them)",
                                    input_opts, sizeof input_opts / sizeof input_opts[0]};

static int flags_deepspeed_given(void *flags, const model_t *m, deepspeed_given_t *g, err_t *err)
{
    return cmd_args_deepspeed_given((const cmd_args_t *)flags, m, g, err);
}

/* The flags' own part, over every other source: layout flags (a
 * --deepspeed config with them) and the simulator switches. */
static int flags_apply(void *flags, scenario_t *s, err_t *err)
{
    const cmd_args_t *a = flags;
    int rc = cmd_layout_flags(a, &s->model, &s->layout, &s->opt, &s->notes, err);
    return rc ? rc : cmd_sim_switches(a, &s->opt, err);
}

/* The sources the command line names, for compose_scenario. */
static int sources_of(const cmd_args_t *a, compose_sources_t *src, err_t *err)
{
    memset(src, 0, sizeof *src);
    src->megatron_args = cmd_get(a, "--megatron-args");
    src->megatron_args_file = cmd_get(a, "--megatron-args-file");
    src->torchtitan = cmd_get(a, "--torchtitan");
    src->torchtitan_config = cmd_get(a, "--torchtitan-config");
    src->accelerate_config = cmd_get(a, "--accelerate-config");
    src->bridge_overrides = cmd_get(a, "--bridge-overrides");
    src->deepspeed = cmd_get(a, "--deepspeed");
    src->vocab_size = cmd_get(a, "--vocab-size");
    src->model = cmd_get(a, "--model");
    if (!src->model && a->n_positional > 0)
        src->model = a->positional[0];
    src->framework = cmd_get(a, "--framework");
    src->assume_architecture = cmd_get(a, "--assume-architecture");
    src->profile = cmd_get(a, "--profile");
    src->micro_batch = cmd_has(a, "--micro-batch");
    src->global_batch = cmd_has(a, "--global-batch");
    src->recompute = cmd_has(a, "--recompute") || cmd_has(a, "--recompute-activations") ||
                     cmd_has(a, "--checkpoint-activations");
    src->precision = cmd_has(a, "--precision") || cmd_has(a, "--bf16") || cmd_has(a, "--fp16") ||
                     cmd_has(a, "--fp8-format");
    src->grad_dtype = cmd_get(a, "--grad-dtype") != NULL;
    src->bridge_framework = launch_framework(LAUNCH_NEMO);
    src->flags = (void *)a;
    src->deepspeed_given = flags_deepspeed_given;
    src->apply_flags = flags_apply;
    return cmd_cluster_spec(a, &src->cluster, err);
}

int cmd_scenario_from(const cmd_args_t *a, const cmd_base_t *base, scenario_t *s, err_t *err)
{
    compose_sources_t src;
    int rc = sources_of(a, &src, err);
    if (rc) {
        memset(s, 0, sizeof *s);
        return rc;
    }
    return compose_scenario(&src, base, s, err);
}

int cmd_scenario(const cmd_args_t *a, scenario_t *s, err_t *err)
{
    return cmd_scenario_from(a, NULL, s, err);
}
