/* Saved calibration measurements (calibrate --fit FILE): meas_from_json. */
#include "tests/fuzz/fuzz.h"

#include "calibrate/measurements.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = fuzz_json(data, size);
    if (!root)
        return 0;
    meas_set_t s;
    err_t err;
    (void)meas_from_json(root, "measurements.json", &s, &err);
    meas_free(&s);
    cJSON_Delete(root);
    return 0;
}
