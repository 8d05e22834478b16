/* An nccl-tests log, text or -J JSON, as written or pasted (calibrate
 * --from-nccl-tests): nccltests_parse, and nccltests_read with the
 * collective given (the path a log that does not name it takes). */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>

#include "calibrate/nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nccltests_hint_t hint = {0, 0, NULL};
    meas_coll_t c;
    char device[64];
    err_t err;
    (void)nccltests_parse((const char *)data, size, "log", &hint, &c, device, sizeof device, &err);
    nccltests_hint_t given = {8, 1, "reduce"};
    nccltests_reading_t *r = malloc(sizeof *r);
    if (r) {
        (void)nccltests_read((const char *)data, size, "log", &given, r, &err);
        free(r);
    }
    return 0;
}
