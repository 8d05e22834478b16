/* A saved result (scaleplan report RESULT.json): report_write, with
 * gnuplot off (the tables, CSV files and page only). */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setenv("SCALEPLAN_GNUPLOT", "/nonexistent/gnuplot", 1);
    cJSON *root = fuzz_json(data, size);
    if (!root)
        return 0;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/report", fuzz_dir());
    report_info_t info;
    err_t err;
    if (report_write(root, "result.json", dir, &info, &err) == 0)
        report_info_free(&info);
    fuzz_clear(dir);
    cJSON_Delete(root);
    return 0;
}
