/* An accelerate config YAML (--accelerate-config FILE): inputs/yaml and
 * inputs/accelerate, then the layout it gives checked against a model as
 * the commands do. Errors are one line. */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "inputs/accelerate.h"
#include "models/layout.h"
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
    accelerate_t t;
    int rc = accelerate_read((const char *)data, size, "accelerate.yaml", &t, &err);
    if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
        __builtin_trap(); /* errors are one non-empty line */
    if (rc == 0 && !t.ds_config_path) { /* a named ds_config is fuzz_ds_config's */
        layout_t l;
        layout_defaults(&l);
        notes_t notes;
        notes_init(&notes);
        deepspeed_given_t g = {.hidden = m.hidden, .micro_batch = 1};
        if (accelerate_apply(&t, &g, &l, NULL, &notes, &err) == 0)
            (void)layout_finalize(&l, &m, t.n_processes > 0 ? t.n_processes : 8, &err);
        notes_free(&notes);
    }
    accelerate_free(&t);
    return 0;
}
