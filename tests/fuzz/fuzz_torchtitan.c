/* libFuzzer target: any bytes as a torchtitan job config
 * (inputs/torchtitan). The reader must return 0 or a one-line error, never
 * crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inputs/torchtitan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int gpus[] = {0, 8, 64};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        torchtitan_t t;
        err_t err;
        int rc = torchtitan_read((const char *)data, size, "fuzz.toml", gpus[i], &t, &err);
        if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
            __builtin_trap();
        torchtitan_free(&t);
    }
    return 0;
}
