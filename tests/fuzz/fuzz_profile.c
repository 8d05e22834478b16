/* A cost profile (--profile FILE, calibrate --show): prof_from_json. */
#include "tests/fuzz/fuzz.h"

#include "profile/profile.h"
#include "profile/profile_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = fuzz_json(data, size);
    if (!root)
        return 0;
    profile_t p;
    err_t err;
    if (prof_from_json(root, "profile.json", &p, &err) == 0)
        prof_free(&p);
    cJSON_Delete(root);
    return 0;
}
