/* args: command-line parsing shared by the subcommands.
 *
 * Each subcommand lists the option groups it accepts (model, cluster,
 * layout, output, and its own). The parser takes "--name value",
 * "--name=value" and switches, accepts each option's alias (Megatron-LM's
 * flag names for the layout), collects positional words, and rejects an
 * unknown option with the closest known one. Builders then turn the parsed
 * words into model_t, cluster_spec_t and layout_t with one-line errors that
 * name the flag.
 */
#ifndef SCALEPLAN_CLI_ARGS_H
#define SCALEPLAN_CLI_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "common/error.h"
#include "models/layout.h"
#include "models/model.h"
#include "sim/scenario.h"
#include "topologies/cluster.h"

#define CLI_MAX_OPTS 128
#define CLI_MAX_POSITIONAL 16

typedef struct {
    const char *name;    /* "--tp" */
    const char *alias;   /* another accepted spelling, or NULL */
    const char *metavar; /* "N" for options that take a value; NULL = switch */
    const char *help;
} cli_opt_t;

typedef struct {
    const char *title;
    const cli_opt_t *opts;
    int n;
} cli_group_t;

typedef struct {
    const cli_group_t *const *groups;
    int n_groups;
    int argc;    /* the command's own argument vector (argv[0] = its name) */
    char **argv;
    const char *value[CLI_MAX_OPTS]; /* per option in group order; switches "1" */
    const char *positional[CLI_MAX_POSITIONAL];
    int n_positional;
    bool help;
} cli_args_t;

extern const cli_group_t CLI_MODEL_OPTS, CLI_CLUSTER_OPTS, CLI_LAYOUT_OPTS,
    CLI_OUTPUT_OPTS;

/* Parse argv[1..argc) (argv[0] is the subcommand). ERR_INPUT on unknown
 * options, missing values or too many positional words. */
int cli_parse(int argc, char **argv, const cli_group_t *const *groups, int n_groups,
              cli_args_t *a, err_t *err);

/* The value of option name (its canonical name), or NULL when absent. */
const char *cli_get(const cli_args_t *a, const char *name);
bool cli_has(const cli_args_t *a, const char *name);

/* Typed getters: leave *out untouched when the option is absent. */
int cli_get_int(const cli_args_t *a, const char *name, long lo, long hi,
                int *out, err_t *err);
int cli_get_count(const cli_args_t *a, const char *name, double *out,
                  err_t *err);
int cli_get_duration(const cli_args_t *a, const char *name, double *out,
                     err_t *err);
int cli_get_price(const cli_args_t *a, const char *name, double *out,
                  err_t *err);
int cli_get_money(const cli_args_t *a, const char *name, double *out,
                  err_t *err);
int cli_get_double(const cli_args_t *a, const char *name, double lo,
                   double hi, double *out, err_t *err);

/* Print "usage", a summary and every option of the groups. */
void cli_print_help(FILE *out, const char *usage, const char *summary,
                    const cli_group_t *const *groups, int n_groups);

/* --model NAME|config.json (or the first positional word). */
int cli_model(const cli_args_t *a, model_t *m, err_t *err);

/* --cluster, --gpu, --gpus, --gpus-per-node, --fabric, ... into a spec.
 * Strings in the spec point into argv. */
int cli_cluster_spec(const cli_args_t *a, cluster_spec_t *spec, err_t *err);

/* Layout flags (and --deepspeed FILE), finalized for m on n_gpus GPUs. */
int cli_layout(const cli_args_t *a, const model_t *m, int n_gpus, layout_t *l,
               err_t *err);

/* Layout flags only, not finalized (for commands that choose the GPU
 * count themselves). */
int cli_layout_flags(const cli_args_t *a, const model_t *m, layout_t *l,
                     err_t *err);

/* ---------------------------------------------------------------------
 * The simulation options (--profile, --framework, overlap switches). */
extern const cli_group_t CLI_SIM_OPTS;

/* The scenario of the command line: model, cluster (--gpus required),
 * framework preset, layout flags, simulator switches and profile
 * (sim/scenario.h); scenario_free(s) afterwards, whatever it returns. */
int cli_scenario(const cli_args_t *a, scenario_t *s, err_t *err);

/* What a scenario starts from instead of the flags' defaults, each NULL
 * for "the usual": a model built elsewhere (no --model needed), a layout
 * (flags still apply on top; not finalized) and simulator options. */
typedef struct {
    const model_t *model;
    const layout_t *layout;
    const sim_options_t *opt;
} cli_base_t;

/* cli_scenario from a base (may be NULL); scenario_free(s) afterwards,
 * whatever it returns. */
int cli_scenario_from(const cli_args_t *a, const cli_base_t *base, scenario_t *s, err_t *err);

/* The option called name (or its alias) among the parsed groups, or NULL. */
const cli_opt_t *cli_find_opt(const cli_args_t *a, const char *name);

/* Every value given to option name, in command-line order (for options a
 * command takes more than once, such as validate --log); fills out[0..cap)
 * and returns how many there are (which may exceed cap). */
int cli_get_all(const cli_args_t *a, const char *name, const char **out, int cap);

/* The simulator switches given explicitly, over a preset's options. */
int cli_sim_switches(const cli_args_t *a, sim_options_t *o, err_t *err);

#endif
