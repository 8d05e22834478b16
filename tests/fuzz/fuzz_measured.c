/* A measured run (scaleplan train --json, validate --measured FILE):
 * val_measured_load, then the comparison validate makes. */
#include "tests/fuzz/fuzz.h"

#include "sim/step.h"
#include "validate/validation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("run.json", data, size);
    if (!path)
        return 0;
    val_measured_t m;
    err_t err;
    if (val_measured_load(path, NULL, &m, &err) == 0) {
        sim_ctx_t *ctx = sim_ctx_create();
        sim_result_t r;
        if (ctx && sim_run_step(ctx, &m.s.input, &r, &err) == 0) {
            val_component_t c[VAL_MAX_COMPONENTS];
            int n;
            val_measured_compare(&m, &r, 0.1, c, &n);
        }
        sim_ctx_destroy(ctx);
    }
    val_measured_free(&m);
    return 0;
}
