/* A torchtitan config registry (--torchtitan FILE.py --torchtitan-config F):
 * inputs/pyregistry through inputs/torchtitan, the first function of the
 * input's defs named by the fuzzer's own text. Errors are one line. */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "inputs/torchtitan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const functions[] = {"llama3_8b", "llama3_debugmodel", "f",
                                            "deepseek_v3_671b", "qwen3_30b_a3b"};
    const char *fn = functions[size % (sizeof functions / sizeof functions[0])];
    torchtitan_t t;
    err_t err;
    int rc = torchtitan_read_registry((const char *)data, size, "config_registry.py", fn, 64,
                                      false, &t, &err);
    if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
        __builtin_trap(); /* errors are one non-empty line */
    torchtitan_free(&t);
    return 0;
}
