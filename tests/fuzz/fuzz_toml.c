/* TOML (inputs/toml, the reader under --torchtitan): 0 or a one-line error
 * with a line number; every key it returns is found again by toml_find. */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "inputs/toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    toml_doc_t doc;
    err_t err;
    int rc = toml_parse((const char *)data, size, "fuzz.toml", &doc, &err);
    if (rc && (err.msg[0] == '\0' || strchr(err.msg, '\n')))
        __builtin_trap(); /* errors are one non-empty line */
    if (rc == 0)
        for (size_t i = 0; i < doc.n; i++)
            if (!doc.entries[i].key || !toml_find(&doc, doc.entries[i].key))
                __builtin_trap();
    toml_free(&doc);
    return 0;
}
