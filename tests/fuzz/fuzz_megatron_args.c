/* libFuzzer target: any bytes as a Megatron-LM launch script or argument
 * list (inputs/megatron_args). The reader must return 0 or a one-line
 * error, never crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inputs/megatron_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    megatron_args_t a;
    err_t err;
    int rc = megatron_args_read((const char *)data, size, "fuzz", &a, &err);
    if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
        __builtin_trap(); /* errors are one non-empty line */
    megatron_args_free(&a);
    return 0;
}
