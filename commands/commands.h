/* commands: the scaleplan subcommands, one file each under cli/.
 *
 * A command is a row of one table: its name, a one-line summary for
 * `scaleplan --help`, its usage and description for `scaleplan NAME
 * --help`, the option groups it accepts, and the function that runs it on
 * the parsed arguments. main() does the rest the same way for every
 * command: parse, print the help, run, and turn an error into a message and
 * an exit status. A run function prints its result on stdout and returns 0,
 * or an error code with err filled.
 */
#ifndef SCALEPLAN_COMMANDS_COMMANDS_H
#define SCALEPLAN_COMMANDS_COMMANDS_H

#include "commands/args.h"
#include "common/error.h"

#define SCALEPLAN_VERSION "0.1.0"

typedef struct {
    const char *name;        /* "sim" */
    const char *summary;     /* one line for scaleplan --help */
    const char *usage;       /* "scaleplan sim --model M ..." */
    const char *description; /* the paragraph under the usage */
    const cli_group_t *const *groups;
    int n_groups;
    int (*run)(const cli_args_t *a, err_t *err);
    int max_operands;        /* bare words the command takes besides the
                                options' (catalog SECTION..., report FILE) */
} cli_command_t;

extern const cli_command_t CLI_CMD_PLAN, CLI_CMD_CATALOG, CLI_CMD_MODEL, CLI_CMD_SIM,
    CLI_CMD_RELIABILITY, CLI_CMD_BUDGET, CLI_CMD_TRAIN, CLI_CMD_VALIDATE, CLI_CMD_PREFLIGHT,
    CLI_CMD_REPORT, CLI_CMD_CALIBRATE, CLI_CMD_CLUSTER, CLI_CMD_POWER;

/* sim's step time on argv[0..argc) (argv[0] "sim"), with sim's checks and
 * messages but no text or document built: the library's fast path for
 * loops (sp_step_time). cat: the catalog names are looked up in (not
 * NULL). A layout that does not fit is ERR_RUNTIME unless --allow-oom. */
int cli_sim_step_time(int argc, char **argv, catalog_t *cat, double *step_s, err_t *err);

#endif
