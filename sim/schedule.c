#include "sim/schedule.h"

#include <stddef.h>

static int gpipe_order(int p, int stage, int m, int v, pp_op_t *out)
{
    (void)p;
    (void)stage;
    int n = 0;
    /* Forward every micro-batch through every chunk, then backward in
     * reverse so the last stage can start on the micro-batch it just did. */
    for (int mb = 0; mb < m; mb++)
        for (int c = 0; c < v; c++)
            out[n++] = (pp_op_t){mb, c, true};
    for (int mb = m - 1; mb >= 0; mb--)
        for (int c = v - 1; c >= 0; c--)
            out[n++] = (pp_op_t){mb, c, false};
    return n;
}

static int one_f_one_b_order(int p, int stage, int m, int v, pp_op_t *out)
{
    if (v != 1)
        return -1;
    int warmup = p - stage - 1 < m ? p - stage - 1 : m;
    int n = 0;
    for (int i = 0; i < warmup; i++)
        out[n++] = (pp_op_t){i, 0, true};
    for (int i = 0; i < m - warmup; i++) {
        out[n++] = (pp_op_t){warmup + i, 0, true};
        out[n++] = (pp_op_t){i, 0, false};
    }
    for (int i = m - warmup; i < m; i++)
        out[n++] = (pp_op_t){i, 0, false};
    return n;
}

/* Megatron-LM's interleaved schedule: virtual micro-step k of p*v per
 * group maps to chunk (k mod pv) / p (reversed for backward) and
 * micro-batch (k / pv) * p + k mod p. The forward and the backward steps
 * each run through k = 0, 1, 2, ...; a cursor keeps k's digits so that
 * stepping it needs no division. */
typedef struct {
    int p, v;
    int in_chunk;   /* k mod p */
    int chunk;      /* (k mod pv) / p */
    int group;      /* k / pv */
    bool forward;
} step_cursor_t;

static pp_op_t cursor_next(step_cursor_t *c)
{
    pp_op_t op = {c->group * c->p + c->in_chunk, c->forward ? c->chunk : c->v - 1 - c->chunk,
                  c->forward};
    if (++c->in_chunk == c->p) {
        c->in_chunk = 0;
        if (++c->chunk == c->v) {
            c->chunk = 0;
            c->group++;
        }
    }
    return op;
}

static int interleaved_order(int p, int stage, int m, int v, pp_op_t *out)
{
    if (m % p != 0)
        return -1;
    int total = m * v;
    int warmup;
    if (m == p)
        warmup = total; /* Megatron runs all forwards first in this case */
    else {
        warmup = (p - stage - 1) * 2 + (v - 1) * p;
        if (warmup > total)
            warmup = total;
    }
    step_cursor_t fwd = {p, v, 0, 0, 0, true}, bwd = {p, v, 0, 0, 0, false};
    int n = 0;
    for (int k = 0; k < warmup; k++)
        out[n++] = cursor_next(&fwd);
    for (int i = 0; i < total - warmup; i++) {
        out[n++] = cursor_next(&fwd);
        out[n++] = cursor_next(&bwd);
    }
    for (int k = total - warmup; k < total; k++)
        out[n++] = cursor_next(&bwd);
    return n;
}

static const sched_def_t schedules[SCHEDULE_COUNT] = {
    {SCHEDULE_GPIPE, "gpipe", gpipe_order, false},
    {SCHEDULE_1F1B, "1f1b", one_f_one_b_order, false},
    {SCHEDULE_INTERLEAVED, "interleaved", interleaved_order, true},
};

const sched_def_t *sched_get(schedule_t s)
{
    return s < SCHEDULE_COUNT ? &schedules[s] : NULL;
}
