#include "cli/output.h"

#include <stdio.h>

#include "common/json.h"
#include "reports/csvdoc.h"
#include "reports/jsonout.h"
#include "reports/gnuplot.h"
#include "reports/report.h"

bool cli_machine_output(const cli_args_t *a)
{
    return cli_has(a, "--json") || cli_has(a, "--csv");
}

bool cli_wants_result(const cli_args_t *a)
{
    return cli_machine_output(a) || cli_get(a, "--report") != NULL;
}

int cli_emit(const cli_args_t *a, cJSON *result, const char *table_key, err_t *err)
{
    if (!report_add_schema(result))
        return err_set(err, ERR_RUNTIME, "out of memory");
    if (cli_has(a, "--csv"))
        return csv_document(stdout, result, table_key, err);
    return json_print_stdout(result, err);
}

int cli_output_result(const cli_args_t *a, const char *command, cJSON *result,
                      const char *table_key, err_t *err)
{
    bool json = cli_machine_output(a);
    if (!report_add_schema(result))
        return err_set(err, ERR_RUNTIME, "out of memory");
    const char *dir = cli_get(a, "--report");
    if (dir) {
        report_info_t info;
        int rc = report_write(result, command, dir, &info, err);
        if (rc)
            return rc;
        FILE *to = json ? stderr : stdout;
        fprintf(to, "wrote %s (%d plot%s%s)\n", info.index, info.plots, info.plots == 1 ? "" : "s",
                info.no_gnuplot ? "; gnuplot missing: " GP_INSTALL_HINT : "");
    }
    return json ? cli_emit(a, result, table_key, err) : ERR_OK;
}
