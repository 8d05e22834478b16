/* dispatch: the table of scaleplan's commands and the one way to run one.
 *
 * main() and the library's entry points (include/scaleplan.h) both look a
 * command up here and run it the same way: parse its words, print its
 * help when asked, run it on a catalog. The library passes its context's
 * catalog (parsed once, kept across calls) and a capture for the --json
 * document; main() passes neither.
 */
#ifndef SCALEPLAN_COMMANDS_DISPATCH_H
#define SCALEPLAN_COMMANDS_DISPATCH_H

#include "commands/commands.h"
#include "common/catalog.h"

/* The commands, in `scaleplan --help` order. */
int cmd_command_count(void);
const cmd_command_t *cmd_command_at(int i);

/* The command called name, or NULL. */
const cmd_command_t *cmd_command_find(const char *name);

/* Run c on argv[0..argc) (argv[0] its name). cat: a catalog to look names
 * up in (NULL: one of the run's own, created and destroyed here).
 * capture: where a --json document goes instead of stdout (NULL: printed).
 * Returns the command's status with err filled on failure. */
int cmd_command_run(const cmd_command_t *c, int argc, char **argv, catalog_t *cat,
                    char **capture, err_t *err);

#endif
