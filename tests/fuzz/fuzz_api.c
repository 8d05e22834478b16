/* The library's spec (include/scaleplan.h): any bytes as the JSON spec of
 * `model` or `sim` (the first byte picks), through the same words and
 * checks as the command line; a `sim` spec also through the fast path
 * (sp_step_time), which must succeed where sim succeeds and, when it
 * does, give a finite positive step (it may succeed where sim fails only
 * on what it skips: writing a --trace or a report). A status other than SP_OK, SP_ERR_INPUT or
 * SP_ERR_RUNTIME, a failure without a message, or a success without a
 * document is a defect: abort, so libFuzzer keeps the input. */
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"

#include "scaleplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static sp_context_t *ctx;
    if (!ctx && !(ctx = sp_context_new()))
        abort();
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    const char *command = size > 0 && (data[0] & 1) ? "sim" : "model";
    char *doc = NULL;
    int rc = sp_run(ctx, command, spec, &doc);
    if (rc != SP_OK && rc != SP_ERR_INPUT && rc != SP_ERR_RUNTIME)
        abort();
    if (rc == SP_OK && !doc)
        abort();
    if (rc != SP_OK && !sp_last_error(ctx)[0])
        abort();
    if (size > 0 && (data[0] & 1)) {
        double step_s = -1.0;
        int fast = sp_step_time(ctx, spec, &step_s);
        if (rc == SP_OK && fast != SP_OK)
            abort();
        if (fast == SP_OK && !(step_s > 0.0 && step_s < 1e30))
            abort();
        if (fast != SP_OK && !sp_last_error(ctx)[0])
            abort();
    }
    sp_free(doc);
    free(spec);
    return 0;
}
