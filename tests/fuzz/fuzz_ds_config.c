/* A DeepSpeed ds_config.json (--deepspeed FILE): inputs/deepspeed with its
 * "auto" values filled as from the flags, then the layout checked against
 * a model as the commands do. Errors are one line. */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "inputs/deepspeed.h"
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
    layout_t l;
    layout_defaults(&l);
    sim_options_t o;
    sim_options_default(&o);
    notes_t notes;
    notes_init(&notes);
    deepspeed_given_t g = {.hidden = m.hidden};
    int rc = deepspeed_apply((const char *)data, size, "ds_config.json", &g, &l, &o, &notes, &err);
    if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
        __builtin_trap(); /* errors are one non-empty line */
    if (rc == 0)
        (void)layout_finalize(&l, &m, 64, &err);
    notes_free(&notes);
    return 0;
}
