/* commands: the scaleplan subcommands, one file each under cli/.
 *
 * Each takes the argument vector with argv[0] set to the subcommand name,
 * prints its result on stdout, and returns 0, or an error code with err
 * filled; main() prints the error and turns the code into the exit status.
 */
#ifndef SCALEPLAN_CLI_COMMANDS_H
#define SCALEPLAN_CLI_COMMANDS_H

#include "common/error.h"

#define SCALEPLAN_VERSION "0.1.0"

int cmd_catalog(int argc, char **argv, err_t *err);
int cmd_model(int argc, char **argv, err_t *err);
int cmd_sim(int argc, char **argv, err_t *err);
int cmd_reliability(int argc, char **argv, err_t *err);
int cmd_budget(int argc, char **argv, err_t *err);
int cmd_plan(int argc, char **argv, err_t *err);
int cmd_report(int argc, char **argv, err_t *err);
int cmd_calibrate(int argc, char **argv, err_t *err);
int cmd_train(int argc, char **argv, err_t *err);
int cmd_validate(int argc, char **argv, err_t *err);
int cmd_preflight(int argc, char **argv, err_t *err);

#endif
