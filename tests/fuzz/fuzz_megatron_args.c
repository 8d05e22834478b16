/* Megatron-LM arguments (a launch script, a command line or the start-up
 * argument block; sim/plan --megatron-args, validate --log): read, then
 * interpreted into a model, layout and options. */
#include "tests/fuzz/fuzz.h"

#include "inputs/megatron_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    megatron_args_t a;
    err_t err;
    (void)megatron_args_read((const char *)data, size, "args", &a, &err);
    megatron_args_free(&a);
    return 0;
}
