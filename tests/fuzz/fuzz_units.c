/* The quantities users type (common/units): every parser on the same
 * text, as the command line reads flag values. */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "common/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    double v;
    long n;
    err_t err;
    (void)units_parse_count(text, "--x", &v, &err);
    (void)units_parse_bytes(text, "--x", &v, &err);
    (void)units_parse_bandwidth(text, "--x", &v, &err);
    (void)units_parse_duration(text, "--x", &v, &err);
    (void)units_parse_price(text, "--x", &v, &err);
    (void)units_parse_money(text, "--x", &v, &err);
    (void)units_parse_int(text, "--x", -(1L << 40), 1L << 40, &n, &err);
    (void)units_parse_real(text, "--x", -1e300, 1e300, &v, &err);
    free(text);
    return 0;
}
