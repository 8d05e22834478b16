/* output: where a command's result goes - the --json object on stdout and,
 * with --report DIR, the HTML report (reports/report.h) - so that every
 * command that makes a report does it the same way.
 */
#ifndef SCALEPLAN_COMMANDS_OUTPUT_H
#define SCALEPLAN_COMMANDS_OUTPUT_H

#include <cjson/cJSON.h>

#include "commands/args.h"
#include "common/error.h"
#include "common/notes.h"

/* The option every reporting command lists among its own. */
#define CMD_REPORT_OPT                                                                        \
    {                                                                                         \
        "--report", NULL, "DIR",                                                              \
            "write an HTML report into DIR: index.html, plots (PNG, SVG), CSV, result.json", \
            CMD_WORD                                                                          \
    }

/* Write the report (with --report), print result (with --json) or as CSV
 * (with --csv: every figure of the JSON, table_key naming the member that
 * is the table, or NULL for key,value rows; reports/csvdoc.h); command
 * ("scaleplan plan") names the result in errors. Adds schema_version to
 * result. The line that names the report goes to stdout, or to stderr when
 * stdout carries JSON or CSV. Takes no ownership of result. */
int cmd_output_result(const cmd_args_t *a, const char *command, cJSON *result,
                      const char *table_key, err_t *err);

/* The same without a report: schema_version, then JSON or CSV. */
int cmd_emit(const cmd_args_t *a, cJSON *result, const char *table_key, err_t *err);

/* Print the notes of the readers of the user's files ("  ignored --seed:
 * no effect on speed or memory"), under a heading; nothing when empty. */
void cmd_print_notes(FILE *out, const notes_t *notes);

/* Add "notes" to a JSON result when there are any. false on OOM. */
bool cmd_add_notes_json(cJSON *result, const notes_t *notes);

/* Whether the command should build the JSON result at all. */
bool cmd_wants_result(const cmd_args_t *a);

/* Whether stdout carries machine output (--json or --csv): no text. */
bool cmd_machine_output(const cmd_args_t *a);

#endif
