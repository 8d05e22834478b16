/* plan_sizing: plan --inference-tokens, the model's lifetime compute with
 * the inference it will serve and the smaller model of the same quality
 * that needs the least (plan/inference_sizing.h), priced at the plan's
 * recommended rung. */
#ifndef SCALEPLAN_COMMANDS_PLAN_SIZING_H
#define SCALEPLAN_COMMANDS_PLAN_SIZING_H

#include "commands/args.h"
#include "plan/inference_sizing.h"
#include "plan/ladder.h"

struct cJSON;

extern const cmd_group_t CMD_SIZING_OPTS; /* --inference-tokens --inference-mfu */

typedef struct {
    bool on;                 /* --inference-tokens given */
    double inference_tokens;
    double inference_mfu;    /* --inference-mfu, or the assumed default */
    bool mfu_assumed;
    infsize_law_t law;
    infsize_result_t r;
    /* priced at the recommended rung (0 when no rung fits) */
    double train_usd, alt_train_usd, infer_usd, alt_infer_usd;
} plan_sizing_t;

/* Read the flags (ERR_INPUT naming the flag) and load the law; s->on false
 * without --inference-tokens. Call before the ladder runs. */
int plan_sizing_setup(const cmd_args_t *a, plan_sizing_t *s, err_t *err);

/* Compute the sizing for model m trained on tokens, priced at ladder l's
 * recommended rung (its GPU-hours and price; the alternative's training at
 * the same MFU, inference at inference_mfu of g's bf16 peak). */
int plan_sizing_compute(plan_sizing_t *s, const model_t *m, double tokens, const ladder_t *l,
                        const gpu_t *g, err_t *err);

/* The text section; the JSON object under "inference_sizing" of o. */
void plan_sizing_print(const plan_sizing_t *s);
bool plan_sizing_json(const plan_sizing_t *s, struct cJSON *o);

#endif
