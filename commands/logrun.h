/* logrun: a training log as a run to check against the simulator.
 *
 * The log is read by inputs/trainlog; the configuration it prints becomes
 * command-line options that go in front of the user's own, so the same
 * option groups build the scenario (cmd_scenario_from) whatever the
 * configuration came from:
 *
 *   - what the log prints wins over defaults; a flag that contradicts it
 *     is an error naming the log's line ("the log says --tp 8"), except
 *     --model, --gpu and --framework, where a log only gives a guess (a
 *     flavour name, a device string, a framework family) and the flag
 *     decides;
 *   - what the log does not print comes from the flags (model, GPU, GPU
 *     count, layout); the global batch, the sequence length and the GPU
 *     count are never defaulted: when neither the log nor a flag gives
 *     one, the error names the flag to give;
 *   - a parameter count the log prints is checked against the model's
 *     (beyond 10% is an error naming both);
 *   - a Megatron-LM argument block is read by inputs/megatron_args into
 *     the model, the layout and the overlap options; layout flags and
 *     --model are then refused (the log already fixes them).
 *
 * The steady state is then settled with the scenario's GPU count and batch
 * (for logs that give throughput rather than seconds) and handed to the
 * simulator side as a dbl_measured_t.
 */
#ifndef SCALEPLAN_COMMANDS_LOGRUN_H
#define SCALEPLAN_COMMANDS_LOGRUN_H

#include "commands/args.h"
#include "common/error.h"
#include "inputs/megatron_args.h"
#include "inputs/trainlog.h"
#include "validate/doubling.h"
#include "sim/scenario.h"

typedef struct {
    trainlog_t log;
    megatron_args_t margs;     /* the argument block, when the log has one */
    bool has_margs;
    int margs_skipped;         /* block entries megatron_args does not take */
    cmd_args_t args;           /* the log's options then the user's */
    char **words;              /* what args points into (heap) */
    int n_words;
    scenario_t s;
    dbl_measured_t m;
    char from_log[400];        /* the options the log gave, with their lines */
    /* Where each figure of the run came from: "log line 12", "flag",
     * "log's argument block", "log lines 4-9 (tokens / sequences)". */
    char from_batch[96], from_seq[96], from_gpus[96], from_step[200];
} logrun_t;

/* Read the log at path (format: --log-format, or detected) and build its
 * run with the flags in a (parsed with the validate command's groups).
 * Errors name the log file (and line). Free with logrun_free whatever it
 * returns. */
int logrun_load(const cmd_args_t *a, const char *path, logrun_t *r, err_t *err);

void logrun_free(logrun_t *r);

#endif
