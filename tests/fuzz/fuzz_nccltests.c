/* An nccl-tests log, text or -J JSON (calibrate --from-nccl-tests):
 * nccltests_parse. */
#include "tests/fuzz/fuzz.h"

#include "calibrate/nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nccltests_hint_t hint = {0, 0};
    meas_coll_t c;
    char device[64];
    err_t err;
    (void)nccltests_parse((const char *)data, size, "log", &hint, &c, device, sizeof device, &err);
    nccltests_hint_t given = {8, 1};
    (void)nccltests_parse((const char *)data, size, "log", &given, &c, device, sizeof device,
                          &err);
    return 0;
}
