/* The trainer's data (train --data FILE): a token file or any text,
 * tok_load, then the checks and sequences a run reads. */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>

#include "trainer/tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("data.bin", data, size);
    tok_data_t d;
    err_t err;
    if (!path || tok_load(path, &d, &err) != 0)
        return 0;
    if (tok_check(&d, 8, 1 << 20, &err) == 0) {
        int32_t in[8], out[8];
        for (int g = 0; g < 4; g++)
            tok_sequence(&d, 3, 4, g, 8, in, out);
    }
    tok_free(&d);
    return 0;
}
