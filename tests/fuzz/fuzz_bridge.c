/* Megatron-Bridge recipe overrides (inputs/bridge bridge_read_overrides,
 * the reader under sim --bridge-overrides): any bytes, NUL-terminated, onto a
 * default layout of a small model; 0 or a one-line error, and a layout it
 * accepts is checked against the model as sim does. */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "inputs/bridge.h"
#include "models/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static model_t m;
    static int loaded = -1;
    err_t err;
    if (loaded < 0)
        loaded = model_load("gpt2-124m", &m, &err) == 0;
    if (!loaded)
        __builtin_trap(); /* the catalog model must load */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    layout_t l;
    layout_defaults(&l);
    int rc = bridge_read_overrides(text, "fuzz.bridge", &m, &l, &err);
    if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
        __builtin_trap(); /* errors are one non-empty line */
    if (rc == 0)
        (void)layout_finalize(&l, &m, 64, &err);
    free(text);
    return 0;
}
