/* schedule: pipeline schedules as the order each stage runs its work.
 *
 * A schedule is a table entry that lists, for pipeline rank `stage` of p,
 * the forward and backward passes of its m micro-batches over its v model
 * chunks in program order. The step builder turns that order into tasks on
 * the stage's compute stream; the pipeline bubble then comes out of the
 * event simulation, not from a formula. Entries: GPipe (all forwards, then
 * all backwards), 1F1B (PipeDream-Flush: warm-up, one forward one
 * backward, cool-down) and Megatron's interleaved 1F1B over virtual stages.
 */
#ifndef SCALEPLAN_SIM_SCHEDULE_H
#define SCALEPLAN_SIM_SCHEDULE_H

#include <stdbool.h>

#include "models/layout.h"

typedef struct {
    int mb;       /* micro-batch 0..m-1 */
    int chunk;    /* model chunk on this rank 0..v-1; virtual stage chunk*p + stage */
    bool forward; /* forward or backward pass */
} pp_op_t;

/* Fill out[0 .. 2*m*v) with the program order of rank stage. Returns the
 * count, or -1 when the schedule cannot run this shape (e.g. interleaved
 * with m not a multiple of p). */
typedef int (*sched_order_fn)(int p, int stage, int m, int v, pp_op_t *out);

typedef struct {
    schedule_t id;
    const char *name;
    sched_order_fn order;
    bool async_p2p; /* sends/receives overlap compute by default (Megatron:
                       interleaved overlaps p2p, 1F1B blocks on it) */
} sched_def_t;

const sched_def_t *sched_get(schedule_t s);

#endif
