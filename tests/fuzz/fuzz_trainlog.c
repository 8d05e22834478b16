/* A training log (validate --log): every reader on the same text, by
 * detection and by name, then the steady state from what the command line
 * could add. */
#include "tests/fuzz/fuzz.h"

#include "inputs/trainlog.h"

static void settle_and_free(trainlog_t *t)
{
    tlog_known_t known = {64, 512, 512 * 4096.0};
    err_t err;
    (void)trainlog_settle(t, &known, &err);
    (void)trainlog_setting(t, "tensor_model_parallel_size");
    trainlog_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trainlog_t t;
    err_t err;
    if (trainlog_parse((const char *)data, size, "run.log", NULL, &t, &err) == 0)
        settle_and_free(&t);
    else
        trainlog_free(&t);
    for (int i = 0; i < trainlog_format_count(); i++) {
        if (trainlog_parse((const char *)data, size, "run.log", trainlog_format_name(i), &t,
                           &err) == 0)
            settle_and_free(&t);
        else
            trainlog_free(&t);
    }
    return 0;
}
