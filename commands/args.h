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
#ifndef SCALEPLAN_COMMANDS_ARGS_H
#define SCALEPLAN_COMMANDS_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "common/catalog.h"
#include "common/error.h"
#include "inputs/compose.h"
#include "models/layout.h"
#include "models/model.h"
#include "sim/scenario.h"
#include "topologies/cluster.h"

#define CMD_MAX_OPTS 128
#define CMD_MAX_POSITIONAL 16

/* How an option's value is read. Every value of a numeric kind is parsed
 * and checked against the option's range when the command line is read,
 * whether or not the command later uses it, so no flag accepts NaN, an
 * infinity, a negative amount or a number out of its range. */
typedef enum {
    CMD_TEXT = 0,   /* a name, file, list or switch: checked by its reader */
    CMD_INT,        /* whole number: 8, 16k (x1024), 1M (x1024^2), 1e3 */
    CMD_INT_SPAN,   /* a whole number or a range of them: 512 or 512..2048 */
    CMD_REAL,       /* plain number: 0.5, 1e-4 */
    CMD_COUNT,      /* count with SI suffix: 2T, 1.5e12, 300M */
    CMD_COUNT_SPAN, /* a count or a range of them: 4M or 2M..8M */
    CMD_BYTES,      /* 80GiB, 1.5TB (range in bytes) */
    CMD_BANDWIDTH,  /* 400Gbps, 2TB/s (range in bytes/s) */
    CMD_DURATION,   /* 90s, 30m, 2h, 14d (range in seconds) */
    CMD_DAYS,       /* a number of days (54) or a duration (2w) (range in seconds) */
    CMD_PRICE,      /* $2.49/h (range in USD per hour) */
    CMD_MONEY       /* $500k, 2.5M, 0.02 (range in USD) */
} cmd_kind_t;

/* Whether bare words on the command line may stand for an option. */
typedef enum {
    CMD_POS_NONE = 0,
    CMD_POS_ONE,  /* the first bare word is the option's value when the
                     option itself is absent (scaleplan sim llama3-70b) */
    CMD_POS_MORE  /* with the option given, bare words are more values of
                     it (--from-nccl-tests a.log b.log) */
} cmd_pos_t;

typedef struct {
    const char *name;    /* "--tp" */
    const char *alias;   /* another accepted spelling, or NULL */
    const char *metavar; /* "N" for options that take a value; NULL = switch */
    const char *help;
    cmd_kind_t kind;     /* how the value is read and checked */
    double lo, hi;       /* its accepted range, in the kind's unit */
    cmd_pos_t positional;
    bool repeat;         /* may be given more than once (cmd_get_all reads each) */
} cmd_opt_t;

/* The end of a table row: its kind and range, {"--tp", NULL, "N", "help",
 * CMD_N(1, 4096)}, or CMD_WORD for names, files and switches. */
#define CMD_KIND(k, min, max) .kind = (k), .lo = (min), .hi = (max)
#define CMD_N(min, max) CMD_KIND(CMD_INT, min, max)
#define CMD_X(min, max) CMD_KIND(CMD_REAL, min, max)
#define CMD_WORD .kind = CMD_TEXT

typedef struct {
    const char *title;
    const cmd_opt_t *opts;
    int n;
} cmd_group_t;

typedef struct {
    const cmd_group_t *const *groups;
    int n_groups;
    int argc;    /* the command's own argument vector (argv[0] = its name) */
    char **argv;
    const char *value[CMD_MAX_OPTS]; /* per option in group order; switches "1" */
    const char *positional[CMD_MAX_POSITIONAL]; /* bare words no option took */
    int n_positional;
    bool help;
    catalog_t *catalog; /* the process's parsed catalog (main() owns it; NULL
                           where a caller has none): names are looked up in it */
    char **capture;     /* when set (the library's callers, include/scaleplan.h),
                           the --json document is handed here (heap text, the
                           caller frees) instead of printed */
} cmd_args_t;

extern const cmd_group_t CMD_MODEL_OPTS, CMD_CLUSTER_OPTS, CMD_GPUS_OPTS, CMD_LAYOUT_OPTS,
    CMD_OUTPUT_OPTS, CMD_MODEL_NAME_OPTS, CMD_FINETUNE_OPTS;

/* --finetune, --lora-rank, --lora-targets, --base-bits (CMD_FINETUNE_OPTS)
 * into ft, checked against m (models/finetune.h finetune_check); what is
 * assumed goes to notes (may be NULL). Pretraining when --finetune is
 * absent (or the command does not declare the group). ERR_INPUT naming the
 * flag. cmd_layout_flags calls it for l->ft. */
int cmd_finetune(const cmd_args_t *a, const model_t *m, finetune_t *ft, notes_t *notes,
                 err_t *err);

/* Parse argv[1..argc) (argv[0] is the subcommand). Bare words go first to
 * the options that take them (CMD_POS_ONE, in table order, when absent),
 * then to the options they continue (CMD_POS_MORE, when given), and up to
 * max_operands of them are kept as the command's own operands. ERR_INPUT
 * on an unknown option, an option given twice (under either spelling; not
 * one declared repeat, whose last value cmd_get returns), a
 * missing value, a value that does not read as its kind or lies outside
 * its range, or a bare word nothing takes. */
int cmd_parse(int argc, char **argv, const cmd_group_t *const *groups, int n_groups,
              int max_operands, cmd_args_t *a, err_t *err);

/* The value of option name (its canonical name), or NULL when absent. */
const char *cmd_get(const cmd_args_t *a, const char *name);
bool cmd_has(const cmd_args_t *a, const char *name);

/* Typed getters over the option's declared kind and range (checked again
 * here, so a getter never returns an unchecked number); they leave *out
 * untouched when the option is absent. ERR_RUNTIME when the option is not
 * declared with a kind the getter reads (a bug in a command table). */
int cmd_get_int(const cmd_args_t *a, const char *name, int *out, err_t *err);
int cmd_get_long(const cmd_args_t *a, const char *name, long *out, err_t *err);
/* Any numeric kind but the spans, in its unit (seconds, bytes, USD, ...). */
int cmd_get_double(const cmd_args_t *a, const char *name, double *out, err_t *err);
/* CMD_INT_SPAN or CMD_COUNT_SPAN: "N" gives lo = hi = N. */
int cmd_get_span(const cmd_args_t *a, const char *name, double *lo, double *hi, err_t *err);

/* Read text as option o's kind and check its range: the same check
 * cmd_parse applies, for callers that validate values from elsewhere. */
int cmd_check_value(const cmd_opt_t *o, const char *text, double *value, err_t *err);

/* Print "usage", a summary and every option of the groups. */
void cmd_print_help(FILE *out, const char *usage, const char *summary,
                    const cmd_group_t *const *groups, int n_groups);

/* --model NAME|config.json (or the first positional word), read with
 * --assume-architecture. */
int cmd_model(const cmd_args_t *a, model_t *m, err_t *err);

/* The same, adding what the config reader assumed to notes (may be NULL). */
int cmd_model_noted(const cmd_args_t *a, model_t *m, notes_t *notes, err_t *err);

/* --cluster, --gpu, --gpus, --gpus-per-node, --fabric, ... into a spec.
 * Strings in the spec point into argv. */
int cmd_cluster_spec(const cmd_args_t *a, cluster_spec_t *spec, err_t *err);

/* Layout flags (and --deepspeed FILE), finalized for m on n_gpus GPUs. */
int cmd_layout(const cmd_args_t *a, const model_t *m, int n_gpus, layout_t *l,
               err_t *err);

/* Refuses (ERR_INPUT naming flag) a batch of sequences x seq_len tokens
 * beyond CMD_MAX_BATCH_TOKENS, which is a count of tokens given where
 * sequences are asked ("--global-batch 4M"): the message points to the
 * flag that takes tokens. */
#define CMD_MAX_BATCH_TOKENS (1L << 30) /* ASSUMED: 16x the largest published
                                           step (DeepSeek-V3: 15,360 x 4,096 =
                                           63M tokens) */
int cmd_check_batch_tokens(const char *flag, double sequences, int seq_len, err_t *err);

/* Layout flags only, not finalized (for commands that choose the GPU
 * count themselves). A --deepspeed config also sets opt (may be NULL) and
 * says what it assumed or ignored in notes (may be NULL). */
int cmd_layout_flags(const cmd_args_t *a, const model_t *m, layout_t *l, sim_options_t *opt,
                     notes_t *notes, err_t *err);

/* ---------------------------------------------------------------------
 * The simulation options (--profile, --framework, overlap switches). */
extern const cmd_group_t CMD_SIM_OPTS;

/* Framework inputs: --megatron-args, --megatron-args-file, --torchtitan
 * (read by cmd_scenario; commands that list this group accept them). */
extern const cmd_group_t CMD_INPUT_OPTS;

/* The scenario of the command line: model, cluster (--gpus required),
 * framework preset, layout flags, simulator switches and profile
 * (sim/scenario.h); scenario_free(s) afterwards, whatever it returns. */
int cmd_scenario(const cmd_args_t *a, scenario_t *s, err_t *err);

/* What a scenario starts from instead of the flags' defaults, each NULL
 * for "the usual": a model built elsewhere (no --model needed), a layout
 * (flags still apply on top; not finalized) and simulator options. */
typedef compose_base_t cmd_base_t;

/* cmd_scenario from a base (may be NULL); scenario_free(s) afterwards,
 * whatever it returns. */
int cmd_scenario_from(const cmd_args_t *a, const cmd_base_t *base, scenario_t *s, err_t *err);

/* The option called name (or its alias) among the parsed groups, or NULL. */
const cmd_opt_t *cmd_find_opt(const cmd_args_t *a, const char *name);

/* Every value given to option name, in command-line order (for options a
 * command takes more than once, such as validate --log); fills out[0..cap)
 * and returns how many there are (which may exceed cap). */
int cmd_get_all(const cmd_args_t *a, const char *name, const char **out, int cap);

/* The simulator switches given explicitly, over a preset's options. */
int cmd_sim_switches(const cmd_args_t *a, sim_options_t *o, err_t *err);

#endif
