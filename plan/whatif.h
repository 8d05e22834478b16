/* whatif: the best plan rerun with one thing changed.
 *
 * After the ladder picks a rung, a planner user asks "and with a slower
 * network?", "at $3.10 an hour?", "on H200s?", "with 512 GPUs?", "for 3T
 * tokens?". Each change reruns that rung (its GPU count, unless the change
 * is the GPU count) with a fresh layout search, reliability simulation and
 * budget, without the deadline and budget constraints, so the answer is
 * what the change does on its own.
 */
#ifndef SCALEPLAN_PLAN_WHATIF_H
#define SCALEPLAN_PLAN_WHATIF_H

#include <stdbool.h>

#include "common/error.h"
#include "plan/ladder.h"

#define WHATIF_MAX 8 /* changes one --what-if list may name */

typedef struct {
    char change[64];   /* "fabric=ib-hdr" */
    bool ok;           /* some layout fits */
    char why_not[200]; /* when not */
    int gpus;
    double days_p50, cost_usd, mfu, tokens_per_s;
    char layout[160];  /* layout_describe of the new best layout */
    layout_t best_layout; /* that layout itself (when ok), for other notations */
} whatif_t;

/* Rerun rung best of a ladder made from in with key=val: fabric=NAME
 * (replaces the node or network fabric), price=$/GPU-h, gpu=NAME (its
 * default profile and catalog price), gpus=N, tokens=N. ERR_INPUT names
 * the key or the value when either is wrong. in is not changed. */
int whatif_run(const ladder_input_t *in, const rung_t *best, const char *key, const char *val,
               whatif_t *w, err_t *err);

/* Each "key=value" of the comma-separated spec, at most WHATIF_MAX, for
 * the best rung of l (nothing when l has none). */
int whatif_list(const ladder_input_t *in, const ladder_t *l, const char *spec, whatif_t *out,
                int *n, err_t *err);

#endif
