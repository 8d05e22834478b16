/* A Hugging Face config.json (or catalog model file): model_from_config_ex
 * as published and under --assume-architecture, then what every command
 * computes from a model (parameters, FLOPs, the memory of a default
 * layout). Errors are one line; a model that loads has positive parameters
 * and no more active than total. */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "models/flops.h"
#include "models/hfconfig.h"
#include "models/layout.h"
#include "models/memory.h"
#include "models/model.h"

static void use(const model_t *m)
{
    model_params_t p;
    model_params(m, &p);
    if (!(p.total > 0) || p.active > p.total)
        __builtin_trap();
    model_flops_t f;
    model_flops(m, m->max_seq < 4096 ? m->max_seq : 4096, &f);
    layout_t l;
    layout_defaults(&l);
    l.global_batch = 8;
    err_t err;
    if (layout_finalize(&l, m, 8, &err) == 0) {
        memory_opts_t mo;
        memset(&mo, 0, sizeof mo);
        model_memory_t mem;
        model_memory_peak(m, &l, &mo, &mem);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *root = fuzz_json(data, size);
    if (!root)
        return 0;
    static const char *const assume[] = {NULL, "llama", "deepseek_v3", "gpt2"};
    for (size_t i = 0; i < sizeof assume / sizeof assume[0]; i++) {
        model_t m;
        notes_t notes;
        notes_init(&notes);
        model_load_opts_t o = {.assume_architecture = assume[i]};
        err_t err;
        int rc = model_from_config_ex(root, "config.json", "fuzz", &o, &m, &notes, &err);
        if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
            __builtin_trap(); /* errors are one non-empty line */
        if (rc == 0)
            use(&m);
        notes_free(&notes);
    }
    cJSON_Delete(root);
    return 0;
}
