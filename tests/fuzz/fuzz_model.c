/* A Hugging Face config.json (or catalog model file): model_from_config,
 * then what every command computes from a model (parameters, FLOPs, the
 * memory of a default layout). */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "models/flops.h"
#include "models/layout.h"
#include "models/memory.h"
#include "models/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = fuzz_json(data, size);
    if (!root)
        return 0;
    model_t m;
    err_t err;
    if (model_from_config(root, "config.json", "fuzz", &m, &err) == 0) {
        model_params_t p;
        model_params(&m, &p);
        model_flops_t f;
        model_flops(&m, m.max_seq < 4096 ? m.max_seq : 4096, &f);
        layout_t l;
        layout_defaults(&l);
        l.global_batch = 8;
        if (layout_finalize(&l, &m, 8, &err) == 0) {
            memory_opts_t mo;
            memset(&mo, 0, sizeof mo);
            model_memory_t mem;
            model_memory_peak(&m, &l, &mo, &mem);
        }
    }
    cJSON_Delete(root);
    return 0;
}
