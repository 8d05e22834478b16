/* argsInt: what cli/args.c shares with cli/args_inputs.c and nothing else
 * (SQLite's *Int.h split): args.c parses the flags and reads the model,
 * cluster and layout from them; args_inputs.c reads the framework input
 * files and merges them with the flags into a scenario. */
#ifndef SCALEPLAN_COMMANDS_ARGSINT_H
#define SCALEPLAN_COMMANDS_ARGSINT_H

#include "commands/args.h"
#include "inputs/deepspeed.h"

/* The model's name: --model, or the first positional word; ERR_INPUT
 * saying how to give one when there is neither. */
int cmd_args_model_name(const cmd_args_t *a, const char **name, err_t *err);

/* What the flags say for a DeepSpeed config's "auto" values (batch,
 * precision, recompute, ZeRO stage) for model m (may be NULL). */
int cmd_args_deepspeed_given(const cmd_args_t *a, const model_t *m, deepspeed_given_t *out,
                             err_t *err);

#endif
