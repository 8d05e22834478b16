/* libFuzzer target: any bytes as a training log (inputs/trainlog). The
 * first byte picks the reader (one of the formats, or detection); the rest
 * is the log. Parsing and settling must return 0 or a one-line error,
 * never crash, hang, leak or read past the input; a log that parses has a
 * record for every step it counts and a steady state inside its records. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inputs/trainlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(int rc, const err_t *err)
{
    if (rc && (err->msg[0] == '\0' || strchr(err->msg, '\n')))
        __builtin_trap(); /* errors are one non-empty line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int pick = data[0] % (trainlog_format_count() + 1);
    const char *format = pick < trainlog_format_count() ? trainlog_format_name(pick) : NULL;
    trainlog_t t;
    err_t err;
    int rc = trainlog_parse((const char *)data + 1, size - 1, "fuzz", format, &t, &err);
    check_error(rc, &err);
    if (rc == 0) {
        if (t.n_records <= 0 || t.warmup < 0 || t.warmup > t.n_records)
            __builtin_trap();
        tlog_known_t known = {8, 64, 64.0 * 4096};
        rc = trainlog_settle(&t, &known, &err);
        check_error(rc, &err);
        if (rc == 0 && (t.step_time_s.n < 1 || !(t.step_time_s.mean > 0) ||
                        t.first_steady < 0 || t.first_steady >= t.n_records))
            __builtin_trap();
    }
    trainlog_free(&t);
    return 0;
}
