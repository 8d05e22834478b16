/* duration: how long a job given as model + tokens runs on its GPUs, from
 * the step simulator, in process.
 *
 * The layout is the planner's fastest (plan/plan.h plan_search over the
 * framework preset's layouts, bf16, the plan's default batch of about 4M
 * tokens a step at the model's default sequence length, as `scaleplan
 * plan` searches by default); the job's run time is tokens over that
 * layout's simulated tokens per second. Restarts, failures and
 * checkpoints are not included (said by the caller). Results are cached
 * per (model, GPU count): a trace with many jobs of one model searches
 * once per size.
 */
#ifndef SCALEPLAN_CLUSTER_DURATION_H
#define SCALEPLAN_CLUSTER_DURATION_H

#include "cluster/jobs.h"
#include "common/catalog.h"
#include "common/error.h"

/* Fill duration_ms (and mfu) of every job of l that gives model + tokens and no
 * duration, on its gpu_type or else gpu (a catalog GPU name) with the catalog cat (may be NULL:
 * the files are parsed). ERR_INPUT naming the file, line and field when a
 * model is unknown, when gpu is NULL while such a job exists (the message
 * asks for --gpu), or when no layout of the model fits on the job's GPUs;
 * *priced gets how many jobs were priced (may be NULL). */
int cdur_fill(cjobs_t *l, const char *gpu, catalog_t *cat, int *priced, err_t *err);

/* For a pool of several GPU types: *out (heap, [l->n x n_types], the
 * caller frees) gets each job's run time on each type: a model + tokens
 * job that names no type priced on each (a duration given, or a type
 * named, is the same everywhere). Errors as cdur_fill; *out NULL then. */
int cdur_by_group(const cjobs_t *l, const char *const *types, int n_types, catalog_t *cat,
                  int64_t **out, err_t *err);

/* Tokens per second of model on gpus x gpu (a catalog GPU), from the
 * planner's fastest layout, as cdur_fill prices a job; *mfu (may be NULL)
 * its step's model-FLOPs utilization; layout (cap bytes,
 * may be NULL) gets that layout described. ERR_INPUT (about --model,
 * --gpus) when the model is unknown or no layout fits; the caller
 * addresses it to its job. */
int cdur_tokens_per_s(const char *model, const char *gpu, int gpus, catalog_t *cat, double *tps,
                      double *mfu, char *layout, int cap, err_t *err);

#endif
