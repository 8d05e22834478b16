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
    const cmd_group_t *const *groups;
    int n_groups;
    int (*run)(const cmd_args_t *a, err_t *err);
    int max_operands;        /* bare words the command takes besides the
                                options' (catalog SECTION..., report FILE) */
} cmd_command_t;

extern const cmd_command_t CMD_CMD_PLAN, CMD_CMD_CATALOG, CMD_CMD_MODEL, CMD_CMD_SIM,
    CMD_CMD_RELIABILITY, CMD_CMD_BUDGET, CMD_CMD_TRAIN, CMD_CMD_VALIDATE, CMD_CMD_PREFLIGHT,
    CMD_CMD_REPORT, CMD_CMD_CALIBRATE, CMD_CMD_CLUSTER, CMD_CMD_POWER;

/* sim's step time on argv[0..argc) (argv[0] "sim"), with sim's checks and
 * messages but no text or document built: the library's fast path for
 * loops (sp_step_time). cat: the catalog names are looked up in (not
 * NULL). A layout that does not fit is ERR_RUNTIME unless --allow-oom. */
int cmd_sim_step_time(int argc, char **argv, catalog_t *cat, double *step_s, err_t *err);

#endif
