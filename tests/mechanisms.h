/* mechanisms: the helpers tests/test_mechanisms.c and
 * tests/test_mechanisms_step.c share to price one step of a scenario and
 * read its parts (defined in test_mechanisms.c). */
#ifndef SCALEPLAN_TESTS_MECHANISMS_H
#define SCALEPLAN_TESTS_MECHANISMS_H

#include <stdbool.h>

#include "sim/scenario.h"
#include "sim/step.h"

typedef struct {
    scenario_t s;
    step_costs_t c;
} priced_t;

/* Start a scenario for model on gpus x gpu under framework fw (NULL: the
 * default preset). The caller sets layout and options, then mech_price().
 * 0, or the error (printed). */
int mech_begin(priced_t *p, const char *model, const char *gpu, int gpus, const char *fw);

/* Finish the scenario and price its step's costs into p->c; 0, or the
 * error (printed). */
int mech_price(priced_t *p);

/* On the timeline of one run, stage's gradient reductions: how many, how
 * many started before the stage's last backward ended, their seconds. */
void mech_stage_reductions(const sim_event_t *ev, int n, int stage, int *reductions, int *early,
                           double *seconds);

/* One priced operation's forward / backward seconds (NaN, and a failed
 * assertion, when the layer has no such operation). */
double mech_op_fwd(const step_costs_t *c, const char *name);
double mech_op_bwd(const step_costs_t *c, const char *name);

/* TP, micro-batch, global batch and sequence length onto l (SP with TP). */
void mech_set_batch(layout_t *l, int tp, int mb, int gb, int seq);

/* Llama 3 8B on 8 H100 SXM under framework fw: TP tp, one micro-batch of
 * seq tokens a step, in precision prec, priced (the caller frees). */
void mech_price_8b(priced_t *p, const char *fw, int tp, int seq, precision_t prec);

/* A mixture-of-experts layout of p's scenario: EP ep, global batch gb
 * (defined in test_mechanisms_step.c). */
void mech_moe_layout(priced_t *p, int ep, int gb);

#endif
