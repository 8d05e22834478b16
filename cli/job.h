/* job: the pieces the run-level commands (reliability, budget, plan) share:
 * a simulated step for a model on a cluster (with the best layout found by
 * the planner when the user gives none), and the reliability settings. */
#ifndef SCALEPLAN_CLI_JOB_H
#define SCALEPLAN_CLI_JOB_H

#include <stdbool.h>

#include "cli/args.h"
#include "sim/ladder.h"
#include "sim/reliability.h"
#include "sim/step.h"

extern const cli_group_t CLI_RUN_OPTS; /* --tokens --days --global-batch-tokens */
extern const cli_group_t CLI_REL_OPTS; /* checkpoints, failures, restarts, MC */

typedef struct {
    scenario_t s;     /* model, cluster, layout, profile, options */
    bool searched;         /* layout chosen by the planner */
    plan_search_t search;  /* when searched */
    sim_result_t step;     /* the simulated step */
} cli_job_t;

/* Whether any layout flag was given. */
bool cli_layout_given(const cli_args_t *a);

/* Set up and simulate one step; without layout flags, search every layout
 * for the fastest that fits (plan_search). */
int cli_job_setup(const cli_args_t *a, cli_job_t *job, err_t *err);
void cli_job_free(cli_job_t *job);

/* Checkpoint bytes of a model: --checkpoint-size, else parameters x
 * --checkpoint-bytes-per-param (default REL_CKPT_BYTES_PER_PARAM). */
int cli_checkpoint_bytes(const cli_args_t *a, const model_t *m, double *bytes, err_t *err);

/* Reliability settings from the flags, on cluster c with failure set f
 * (loaded by the caller from --failure-rates). The work (step time,
 * tokens, duration) is set by the caller. */
int cli_rel_config(const cli_args_t *a, const cluster_t *c, const failure_set_t *f,
                   rel_config_t *cfg, err_t *err);

/* The run's length: --tokens and/or --days (seconds). */
int cli_run_length(const cli_args_t *a, double *tokens, double *duration_s, err_t *err);

#endif
