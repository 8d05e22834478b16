/* job: the pieces the run-level commands (reliability, budget, plan) share:
 * a simulated step for a model on a cluster (with the best layout found by
 * the planner when the user gives none), and the reliability settings. */
#ifndef SCALEPLAN_COMMANDS_JOB_H
#define SCALEPLAN_COMMANDS_JOB_H

#include <stdbool.h>

#include "commands/args.h"
#include "plan/ladder.h"
#include "run/reliability.h"
#include "sim/step.h"

extern const cmd_group_t CMD_RUN_OPTS; /* --tokens --days --global-batch-tokens */
extern const cmd_group_t CMD_REL_OPTS; /* checkpoints, failures, restarts, MC */

typedef struct {
    scenario_t s;     /* model, cluster, layout, profile, options */
    bool searched;         /* layout chosen by the planner */
    plan_search_t search;  /* when searched */
    sim_result_t step;     /* the simulated step */
} cmd_job_t;

/* Whether any layout flag was given. */
bool cmd_layout_given(const cmd_args_t *a);

/* Set up and simulate one step; without layout flags, search every layout
 * for the fastest that fits (plan_search). */
int cmd_job_setup(const cmd_args_t *a, cmd_job_t *job, err_t *err);
void cmd_job_free(cmd_job_t *job);

/* Checkpoint bytes of a model: --checkpoint-size, else parameters x
 * --checkpoint-bytes-per-param (default REL_CKPT_BYTES_PER_PARAM). */
int cmd_checkpoint_bytes(const cmd_args_t *a, const model_t *m, double *bytes, err_t *err);

/* The failure-rate set of the job: --failure-rates, else the default for
 * --environment (or env_hint, e.g. the environment of a --provider; NULL =
 * the catalog's default) and the GPU's architecture. *choice says how it
 * was chosen (set_given when --failure-rates named it). */
typedef struct {
    failure_choice_t choice;
    bool set_given;
} cmd_failure_pick_t;
int cmd_failure_set(const cmd_args_t *a, const cluster_t *c, const char *env_hint,
                    failure_set_t *f, cmd_failure_pick_t *pick, err_t *err);

/* Reliability settings from the flags, on cluster c with failure set f
 * (cmd_failure_set) in environment env (NULL = the default): the storage
 * system (--storage), the restart profile (--restart, else the
 * environment's), checkpoint mode, format and interval (the best unless
 * --checkpoint-every), repairs, spot, Monte Carlo. The work (step time,
 * tokens, duration) is set by the caller. */
int cmd_rel_config(const cmd_args_t *a, const cluster_t *c, const failure_set_t *f,
                   const char *env, rel_config_t *cfg, err_t *err);

/* One line per assumption and default the run's answer rests on (what was
 * chosen and why), for the text output; and the same as a JSON object. */
void cmd_rel_print_defaults(const cmd_args_t *a, const rel_config_t *cfg,
                            const cmd_failure_pick_t *pick, const rel_result_t *r);
struct cJSON;
bool cmd_rel_defaults_json(struct cJSON *o, const cmd_args_t *a, const rel_config_t *cfg,
                           const cmd_failure_pick_t *pick, const rel_result_t *r);

/* The run's length: --tokens and/or --days (seconds). */
int cmd_run_length(const cmd_args_t *a, double *tokens, double *duration_s, err_t *err);

#endif
