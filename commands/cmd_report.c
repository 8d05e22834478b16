/* scaleplan report: turn a saved result (the --json output of plan, sim,
 * reliability or validate) into the HTML report with its plots and CSV. */
#include <stdio.h>

#include "commands/args.h"
#include "commands/commands.h"
#include "commands/output.h"
#include "common/json.h"
#include "reports/gnuplot.h"
#include "reports/report.h"

static const cmd_opt_t own_opts[] = {
    {"--out", "-o", "DIR", "directory to write (created if needed; default report)", CMD_WORD},
};
static const cmd_group_t own_group = {"Report", own_opts, sizeof own_opts / sizeof own_opts[0]};

static int run(const cmd_args_t *a, err_t *err)
{
    int rc = ERR_OK;
    if (a->n_positional != 1)
        return err_set(err, ERR_INPUT,
                       "report: give exactly one result file (scaleplan report RESULT.json --out DIR)");
    const char *path = a->positional[0];
    const char *dir = cmd_get(a, "--out");
    if (!dir)
        dir = "report";
    cJSON *result = NULL;
    json_ctx_t top = json_ctx_root(path);
    if ((rc = json_parse_file(path, &result, err)))
        return rc;
    if ((rc = json_check_unique_keys(result, &top, err))) {
        cJSON_Delete(result);
        return rc;
    }
    report_info_t info;
    rc = report_write(result, path, dir, &info, err);
    cJSON_Delete(result);
    if (rc)
        return rc;
    if (cmd_machine_output(a)) {
        cJSON *o = cJSON_CreateObject();
        bool ok = o && cJSON_AddStringToObject(o, "index", info.index) &&
                  cJSON_AddStringToObject(o, "kind", info.kind) &&
                  json_add_number(o, "plots", info.plots) &&
                  cJSON_AddBoolToObject(o, "gnuplot", !info.no_gnuplot);
        rc = ok ? cmd_emit(a, o, NULL, err) : err_set(err, ERR_RUNTIME, "out of memory");
        cJSON_Delete(o);
    } else {
        printf("wrote %s: %s report, %d plot%s%s\n", info.index, info.kind, info.plots,
               info.plots == 1 ? "" : "s",
               info.no_gnuplot ? " (gnuplot missing: " GP_INSTALL_HINT ")" : "");
    }
    report_info_free(&info);
    return rc;
}

static const cmd_group_t *const groups[] = {&own_group,
                                         &CMD_OUTPUT_OPTS};

const cmd_command_t CMD_CMD_REPORT = {
    "report",
    "write the HTML report (plots, CSV) of a saved --json result",
    "scaleplan report RESULT.json --out DIR",
    "Write DIR/index.html, one self-contained page (inline style, images\n"
                       "beside it, no network), every plot as PNG and SVG (gnuplot), the data\n"
                       "behind them as CSV, and the result itself. RESULT.json is what plan,\n"
                       "sim, reliability or validate print with --json (sim needs --timeline for\n"
                       "the step's timeline plot, plan --details for the checkpoint and timeline\n"
                       "plots). The same report comes from their --report DIR.",
    groups,
    sizeof groups / sizeof groups[0],
    run,
    1,
};
