/* The shell reader of launch scripts (sim/plan --megatron-args-file, the
 * Bridge launch reader): any text, and what it makes of its variables is
 * counted. A text that makes more than MEGATRON_MAX_EXPANDED_BYTES of
 * words, whatever it does with its variables, is a defect (issue 35.2: a
 * variable doubled 40 times exhausted memory): abort, so libFuzzer keeps
 * the input. */
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"

#include "inputs/megatron_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    megatron_args_t a;
    megatron_args_init(&a, "script");
    err_t err;
    (void)megatron_args_parse_text(&a, (const char *)data, size, &err);
    if (a.expanded_bytes > MEGATRON_MAX_EXPANDED_BYTES)
        abort();
    megatron_args_free(&a);
    return 0;
}
