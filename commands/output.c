#include "commands/output.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/json.h"
#include "reports/csvdoc.h"
#include "reports/jsonout.h"
#include "reports/gnuplot.h"
#include "reports/jsonout.h"
#include "reports/report.h"

bool cmd_machine_output(const cmd_args_t *a)
{
    return cmd_has(a, "--json") || cmd_has(a, "--csv");
}

void cmd_print_notes(FILE *out, const notes_t *notes)
{
    if (!notes || notes->n == 0)
        return;
    fprintf(out, "\n  read from the inputs (%zu note%s):\n", notes->n, notes->n == 1 ? "" : "s");
    for (size_t i = 0; i < notes->n; i++) {
        const note_t *n = &notes->items[i];
        fprintf(out, "    %s %s: %s\n", notes_kind_name(n->kind), n->field, n->text);
    }
}

bool cmd_add_notes_json(cJSON *result, const notes_t *notes)
{
    if (!notes || notes->n == 0)
        return true;
    cJSON *a = report_notes_json(notes);
    return a && cJSON_AddItemToObject(result, "notes", a);
}

bool cmd_wants_result(const cmd_args_t *a)
{
    return cmd_machine_output(a) || cmd_get(a, "--report") != NULL;
}

int cmd_emit(const cmd_args_t *a, cJSON *result, const char *table_key, err_t *err)
{
    if (!report_add_schema(result))
        return err_set(err, ERR_RUNTIME, "out of memory");
    if (cmd_has(a, "--csv"))
        return csv_document(stdout, result, table_key, err);
    if (a->capture) {
        /* the same text json_print_stdout writes, without its newline */
        free(*a->capture);
        if (!(*a->capture = cJSON_Print(result)))
            return err_set(err, ERR_RUNTIME, "out of memory while formatting JSON");
        return ERR_OK;
    }
    return json_print_stdout(result, err);
}

int cmd_output_result(const cmd_args_t *a, const char *command, cJSON *result,
                      const char *table_key, err_t *err)
{
    bool json = cmd_machine_output(a);
    if (!report_add_schema(result))
        return err_set(err, ERR_RUNTIME, "out of memory");
    const char *dir = cmd_get(a, "--report");
    if (dir) {
        report_info_t info;
        int rc = report_write(result, command, dir, &info, err);
        if (rc)
            return rc;
        FILE *to = json ? stderr : stdout;
        fprintf(to, "wrote %s (%d plot%s%s)\n", info.index, info.plots, info.plots == 1 ? "" : "s",
                info.no_gnuplot ? "; gnuplot missing: " GP_INSTALL_HINT : "");
        report_info_free(&info);
    }
    return json ? cmd_emit(a, result, table_key, err) : ERR_OK;
}
