/* validate_failures: scaleplan validate --failures TABLE[,TABLE...]: the
 * published failure records replayed through the failure and reliability
 * models (validate/failval.h), one row per record with its error, and the
 * medians over every record, over the records from other sources than the
 * default rate set's, and over the held-out predictions. */
#ifndef SCALEPLAN_COMMANDS_VALIDATE_FAILURES_H
#define SCALEPLAN_COMMANDS_VALIDATE_FAILURES_H

#include "commands/args.h"
#include "common/error.h"

/* The option row cmd_validate.c lists. */
#define CMD_FAILURES_OPT                                                                       \
    {                                                                                          \
        "--failures", NULL, "FILE[,FILE]",                                                     \
            "replay published failure records (the columns of shared/validation/failures.csv: " \
            "counts, MTTFs, failures per 1000 node-days, goodputs)",                            \
            CMD_WORD                                                                           \
    }

/* Run it for the comma-separated tables in files. */
int cmd_validate_failures(const cmd_args_t *a, const char *files, err_t *err);

#endif
