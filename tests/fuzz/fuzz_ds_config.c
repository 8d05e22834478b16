/* A DeepSpeed ds_config.json (--deepspeed FILE): layout_apply_deepspeed,
 * then the layout checked against a model as the commands do. */
#include "tests/fuzz/fuzz.h"

#include "models/layout.h"
#include "models/layout_json.h"
#include "models/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static model_t m;
    static int loaded;
    err_t err;
    if (!loaded) {
        if (model_load("llama3-8b", &m, &err) != 0)
            return 0;
        loaded = 1;
    }
    cJSON *root = fuzz_json(data, size);
    if (!root)
        return 0;
    layout_t l;
    layout_defaults(&l);
    if (layout_apply_deepspeed(root, "ds_config.json", &l, &err) == 0)
        (void)layout_finalize(&l, &m, 64, &err);
    cJSON_Delete(root);
    return 0;
}
