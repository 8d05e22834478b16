/* The published-runs CSV (make validate; common/csv.c): val_run reads it
 * and simulates every row it accepts. */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>

#include "sim/validation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("runs.csv", data, size);
    val_row_t *rows = NULL;
    int n = 0;
    err_t err;
    if (path && val_run(path, NULL, &rows, &n, &err) == 0) {
        double median, worst;
        int count;
        val_summary(rows, n, false, &median, &worst, &count);
    }
    free(rows);
    return 0;
}
