/* A torchtitan job config (--torchtitan FILE.toml): inputs/torchtitan with
 * no GPU count and with two, then the layout it gives checked against its
 * model as sim does. Errors are one line. */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "inputs/torchtitan.h"

static void check(const torchtitan_t *t, int n_gpus)
{
    model_t m;
    err_t err;
    if (t->have_model)
        m = t->model;
    else if (!t->model_name[0] || model_load(t->model_name, &m, &err) != 0)
        return;
    layout_t l = t->layout;
    int gpus = n_gpus ? n_gpus : t->world_size;
    if (gpus > 0)
        (void)layout_finalize(&l, &m, gpus, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int gpus[] = {0, 8, 64};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        torchtitan_t t;
        err_t err;
        int rc = torchtitan_read((const char *)data, size, "fuzz.toml", gpus[i], &t, &err);
        if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
            __builtin_trap(); /* errors are one non-empty line */
        if (rc == 0)
            check(&t, gpus[i]);
        torchtitan_free(&t);
    }
    return 0;
}
