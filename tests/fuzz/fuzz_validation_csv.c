/* A CSV of published runs (validate --published, make validate):
 * common/csv.c reads it (every cell looked up), and pub_replay interprets
 * and simulates each row it accepts - for files of a few rows, so that each
 * input stays fast (the simulations, not the parsing, dominate a long
 * file). */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>

#include "common/csv.h"
#include "validate/published.h"

#define MAX_SIMULATED_ROWS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("runs.csv", data, size);
    if (!path)
        return 0;
    csv_t *c = NULL;
    err_t err;
    if (csv_load(path, &c, &err) != 0)
        return 0;
    static const char *columns[] = {"row_id", "model", "num_gpus", "tp", "global_batch_seqs",
                                    "tflops_per_gpu", "notes", "no_such_column"};
    int rows = csv_rows(c);
    for (int r = -1; r <= rows; r++)
        for (size_t k = 0; k < sizeof columns / sizeof columns[0]; k++)
            (void)csv_get(c, r, columns[k]);
    csv_free(c);
    if (rows > MAX_SIMULATED_ROWS)
        return 0;
    pub_row_t *out = NULL;
    int n = 0;
    pub_options_t opt = {0};
    if (pub_replay(path, &opt, &out, &n, &err) == 0) {
        double median, p90;
        int count;
        pub_summary(out, n, NULL, &median, &p90, &count);
        pub_group_t *groups = NULL;
        int ng = 0;
        if (pub_groups(out, n, &groups, &ng, &err) == 0)
            free(groups);
        int pairs, wrong_n, *wrong = NULL;
        if (pub_ordering(out, n, 0.03, &pairs, &wrong_n, &wrong, &err) == 0)
            free(wrong);
    }
    free(out);
    return 0;
}
