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
 * micro-batch (k / pv) * p + k mod p. */
static pp_op_t interleaved_step(int p, int v, int k, bool forward)
{
    int in_group = k % (p * v);
    int chunk = in_group / p;
    if (!forward)
        chunk = v - 1 - chunk;
    int mb = (k / (p * v)) * p + k % p;
    return (pp_op_t){mb, chunk, forward};
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
    int n = 0;
    for (int k = 0; k < warmup; k++)
        out[n++] = interleaved_step(p, v, k, true);
    for (int i = 0; i < total - warmup; i++) {
        out[n++] = interleaved_step(p, v, warmup + i, true);
        out[n++] = interleaved_step(p, v, i, false);
    }
    for (int k = total - warmup; k < total; k++)
        out[n++] = interleaved_step(p, v, k, false);
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
