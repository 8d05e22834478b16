/* schedule: pipeline schedules as the order each stage runs its work.
 *
 * A schedule is a table entry that lists, for pipeline rank `stage` of p,
 * the forward and backward passes of its m micro-batches over its v model
 * chunks in program order. The step builder turns that order into tasks on
 * the stage's compute stream; the pipeline bubble then comes out of the
 * event simulation, not from a formula. Entries: GPipe (all forwards, then
 * all backwards), 1F1B (PipeDream-Flush: warm-up, one forward one
 * backward, cool-down), Megatron's interleaved 1F1B over virtual stages,
 * and DeepSeek's DualPipeV (two stages per rank in a V, forward and
 * backward chunks paired so that each hides the other's communication,
 * weight gradients split off to fill the bubbles; deepseek-ai/DualPipe
 * dualpipev.py, the 8 steps of DualPipeV.step).
 */
#ifndef SCALEPLAN_SIM_SCHEDULE_H
#define SCALEPLAN_SIM_SCHEDULE_H

#include <stdbool.h>

#include "models/layout.h"

/* What one entry of a stage's program does. */
typedef enum {
    PP_OP_PASS = 0,   /* forward, or whole backward, of (mb, chunk) */
    PP_OP_INPUT_GRAD, /* backward of (mb, chunk) for its input only: its weight
                         gradient is left for a later PP_OP_WEIGHT (zero bubble) */
    PP_OP_WEIGHT,     /* the weight gradient an earlier PP_OP_INPUT_GRAD of
                         (mb, chunk) left */
    PP_OP_PAIR        /* forward of (mb, chunk) and whole backward of (mb2,
                         chunk2) run together, each one's communication
                         behind the other's compute (DualPipe's F&B) */
} pp_op_kind_t;

typedef struct {
    int mb;       /* micro-batch 0..m-1 */
    int chunk;    /* model chunk on this rank 0..v-1 (layout_vstage maps it) */
    bool forward; /* forward or backward pass (PP_OP_PAIR: true) */
    pp_op_kind_t kind;
    int mb2, chunk2; /* PP_OP_PAIR: the backward's micro-batch and chunk */
} pp_op_t;

/* Fill out[0 .. n) with the program order of rank stage and return n (at
 * most sched_max_ops), or -1 when the schedule cannot run this shape (e.g.
 * interleaved with m not a multiple of p). Every schedule runs each
 * (micro-batch, chunk)'s forward once and its backward once (whole, or an
 * input-gradient part and a weight part). */
typedef int (*sched_order_fn)(int p, int stage, int m, int v, pp_op_t *out);

typedef struct {
    schedule_t id;
    const char *name;
    sched_order_fn order;
    bool async_p2p; /* sends/receives overlap compute by default (Megatron:
                       interleaved overlaps p2p, 1F1B blocks on it) */
    int ops_per_pass; /* room per (micro-batch, chunk): 2, or 3 where weight
                         gradients are split off */
} sched_def_t;

/* Most entries a rank's program can have. */
long sched_max_ops(const sched_def_t *s, int m, int v);

const sched_def_t *sched_get(schedule_t s);

#endif
