/* plan_elastic: plan --elastic LO..HI, one job over a range of GPU counts
 * (plan/elastic.h): per count the fastest layout with the global batch in
 * --batch-band of the target, its days and cost (with --spot, on spot
 * capacity with preemptions), and with --target-days the fewest GPUs that
 * meet the date. */
#ifndef SCALEPLAN_COMMANDS_PLAN_ELASTIC_H
#define SCALEPLAN_COMMANDS_PLAN_ELASTIC_H

#include "commands/args.h"
#include "plan/elastic.h"

extern const cmd_group_t CMD_ELASTIC_OPTS;

/* ERR_INPUT naming the flag when an elastic option comes without
 * --elastic. */
int plan_elastic_check(const cmd_args_t *a, err_t *err);

/* Run the elastic listing for in (the plan command's settings: model,
 * cluster, space with the target global batch, reliability, prices) and
 * print it (text or --json). ERR_INPUT naming the flag for a bad range,
 * band or target. */
int plan_elastic_run(const cmd_args_t *a, ladder_input_t *in, err_t *err);

#endif
