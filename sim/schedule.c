#include "sim/schedule.h"

#include <stddef.h>

/* A whole forward or backward pass of (mb, chunk). */
static pp_op_t pass(int mb, int chunk, bool forward)
{
    return (pp_op_t){mb, chunk, forward, PP_OP_PASS, 0, 0};
}

static int gpipe_order(int p, int stage, int m, int v, pp_op_t *out)
{
    (void)p;
    (void)stage;
    int n = 0;
    /* Forward every micro-batch through every chunk, then backward in
     * reverse so the last stage can start on the micro-batch it just did. */
    for (int mb = 0; mb < m; mb++)
        for (int c = 0; c < v; c++)
            out[n++] = pass(mb, c, true);
    for (int mb = m - 1; mb >= 0; mb--)
        for (int c = v - 1; c >= 0; c--)
            out[n++] = pass(mb, c, false);
    return n;
}

static int one_f_one_b_order(int p, int stage, int m, int v, pp_op_t *out)
{
    if (v != 1)
        return -1;
    int warmup = p - stage - 1 < m ? p - stage - 1 : m;
    int n = 0;
    for (int i = 0; i < warmup; i++)
        out[n++] = pass(i, 0, true);
    for (int i = 0; i < m - warmup; i++) {
        out[n++] = pass(warmup + i, 0, true);
        out[n++] = pass(i, 0, false);
    }
    for (int i = m - warmup; i < m; i++)
        out[n++] = pass(i, 0, false);
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
    pp_op_t op = pass(c->group * c->p + c->in_chunk,
                      c->forward ? c->chunk : c->v - 1 - c->chunk, c->forward);
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

/* DualPipeV's program for rank r of p, following the eight steps of
 * deepseek-ai/DualPipe dualpipev.py (DualPipeV.step): chunk 0 is stage r,
 * chunk 1 stage 2p - 1 - r; each chunk takes its forwards and its
 * backwards in micro-batch order; a weight op completes the oldest
 * input-gradient op still open. */
typedef struct {
    pp_op_t *out;
    int n;
    int fwd[2], bwd[2]; /* next micro-batch per chunk and direction */
} dpv_t;

static void dpv_f(dpv_t *d, int c)
{
    d->out[d->n++] = (pp_op_t){d->fwd[c]++, c, true, PP_OP_PASS, 0, 0};
}

static void dpv_b(dpv_t *d, int c, bool zero_bubble)
{
    d->out[d->n++] = (pp_op_t){d->bwd[c]++, c, false,
                               zero_bubble ? PP_OP_INPUT_GRAD : PP_OP_PASS, 0, 0};
}

static void dpv_w(dpv_t *d)
{
    d->out[d->n++] = (pp_op_t){0, 0, false, PP_OP_WEIGHT, 0, 0};
}

static void dpv_pair(dpv_t *d, int cf, int cb)
{
    d->out[d->n++] = (pp_op_t){d->fwd[cf]++, cf, true, PP_OP_PAIR, d->bwd[cb]++, cb};
}

static int dualpipev_order(int p, int r, int m, int v, pp_op_t *out)
{
    if (v != 2 || p < 2 || m < 2 * p)
        return -1;
    dpv_t d = {out, 0, {0, 0}, {0, 0}};
    int before = p - r - 1; /* ranks after this one */
    for (int i = 0; i < 2 * before; i++) /* 1: forwards of chunk 0 */
        dpv_f(&d, 0);
    for (int i = 0; i < r + 1; i++) { /* 2: forwards of both chunks */
        dpv_f(&d, 0);
        dpv_f(&d, 1);
    }
    for (int i = 0; i < before; i++) { /* 3: B1, its weight, F1 */
        dpv_b(&d, 1, true);
        dpv_w(&d);
        dpv_f(&d, 1);
    }
    for (int i = 0; i < m - 2 * p + r + 1; i++) { /* 4: the steady state */
        if (i == 0 && r == p - 1) {
            /* the turn of the V: not paired, to shorten the bubble */
            dpv_f(&d, 0);
            dpv_b(&d, 1, false);
        } else {
            dpv_pair(&d, 0, 1);
        }
        dpv_pair(&d, 1, 0);
    }
    for (int i = 0; i < before; i++) { /* 5: B1, then F1 with B0 */
        dpv_b(&d, 1, false);
        dpv_pair(&d, 1, 0);
    }
    bool zb = false; /* 6: B1 B0, the second half with split weights */
    for (int i = 0; i < r + 1; i++) {
        if (i == (r + 1) / 2 && r % 2 == 1)
            zb = true;
        dpv_b(&d, 1, zb);
        if (i == (r + 1) / 2 && r % 2 == 0)
            zb = true;
        dpv_b(&d, 0, zb);
    }
    for (int i = 0; i < before; i++) { /* 7: a weight, then B0 */
        dpv_w(&d);
        dpv_b(&d, 0, true);
    }
    for (int i = 0; i < r + 1; i++) /* 8: the weights left */
        dpv_w(&d);
    /* the k-th weight op completes the k-th input-gradient op */
    int next = 0;
    for (int i = 0; i < d.n; i++) {
        if (out[i].kind != PP_OP_WEIGHT)
            continue;
        while (next < d.n && out[next].kind != PP_OP_INPUT_GRAD)
            next++;
        if (next >= i)
            return -1; /* a weight before its input gradient: not a schedule */
        out[i].mb = out[next].mb;
        out[i].chunk = out[next].chunk;
        next++;
    }
    return d.n;
}

static const sched_def_t schedules[SCHEDULE_COUNT] = {
    {SCHEDULE_GPIPE, "gpipe", gpipe_order, false, 2},
    {SCHEDULE_1F1B, "1f1b", one_f_one_b_order, false, 2},
    {SCHEDULE_INTERLEAVED, "interleaved", interleaved_order, true, 2},
    {SCHEDULE_DUALPIPEV, "dualpipev", dualpipev_order, true, 3},
};

const sched_def_t *sched_get(schedule_t s)
{
    return s < SCHEDULE_COUNT ? &schedules[s] : NULL;
}

long sched_max_ops(const sched_def_t *s, int m, int v)
{
    return (long)s->ops_per_pass * m * v;
}
