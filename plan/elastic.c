/* elastic: batch bands, counts and per-count plans (see the header). */
#include "plan/elastic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void elastic_band(int target, double band, int *lo, int *hi)
{
    /* a hair of slack so that 2880 x 0.9 = 2592 stays inside */
    *lo = (int)ceil(target * (1 - band) - 1e-9);
    *hi = (int)floor(target * (1 + band) + 1e-9);
    if (*lo < 1)
        *lo = 1;
}

void elastic_batch_fit(int dp, int target, int lo, int hi, int mb_max, elastic_batch_t *out)
{
    memset(out, 0, sizeof *out);
    if (dp < 1 || mb_max < 1)
        return;
    /* candidates: multiples of dp in the band, closest to target first */
    for (int d = 0; d <= hi - lo + target; d++) {
        int pick[2] = {target - d, target + d};
        for (int k = 0; k < (d ? 2 : 1); k++) {
            int g = pick[k];
            if (g < lo || g > hi || g % dp)
                continue;
            int per_rank = g / dp; /* micro-batch x accumulation */
            for (int mb = mb_max < per_rank ? mb_max : per_rank; mb >= 1; mb--)
                if (per_rank % mb == 0) {
                    out->feasible = true;
                    out->micro_batch = mb;
                    out->accumulation = per_rank / mb;
                    out->global_batch = g;
                    out->deviation = (double)g / target - 1;
                    return;
                }
        }
        if (target - d < lo && target + d > hi)
            return;
    }
}

int elastic_counts(int lo, int hi, int step, int *out, int cap)
{
    int n = 0;
    if (step < 1)
        step = 1;
    for (long g = lo; g <= hi && n < cap; g += step)
        out[n++] = (int)g;
    return n;
}

/* With TP, PP and CP fixed, DP is known: when no batch of DP's multiples
 * lands in the band, say so (the planner's own note names the first
 * constraint it tried, not the band). */
static void band_reason(const plan_space_t *s, rung_t *r)
{
    const plan_range_t *fixed[] = {&s->tp, &s->pp, &s->cp};
    int model_ranks = 1;
    for (int k = 0; k < 3; k++) {
        if (fixed[k]->lo != fixed[k]->hi || fixed[k]->lo < 1)
            return;
        model_ranks *= fixed[k]->lo;
    }
    if (r->gpus % model_ranks)
        return;
    int dp = r->gpus / model_ranks, lo = s->global_batch_min, hi = s->global_batch_max;
    int mb_max = s->micro_batch.hi > 0 ? s->micro_batch.hi : 16;
    elastic_batch_t b;
    elastic_batch_fit(dp, (lo + hi) / 2, lo, hi, mb_max, &b);
    if (b.feasible)
        return;
    snprintf(r->why_not, sizeof r->why_not,
             "no micro-batch x accumulation x DP %d lands in %d..%d (the nearest are %d and %d)",
             dp, lo, hi, lo / dp * dp, (hi / dp + 1) * dp);
}

int elastic_plan(const ladder_input_t *in, const int *counts, int n, elastic_row_t *rows,
                 err_t *err)
{
    ladder_t *l = malloc(sizeof *l);
    if (!l)
        return err_set(err, ERR_RUNTIME, "out of memory");
    int rc = ERR_OK;
    for (int i = 0; i < n && !rc; i++) {
        ladder_input_t one = *in;
        one.min_gpus = one.max_gpus = counts[i];
        one.progress = false;
        rc = plan_ladder(&one, l, err);
        if (!rc) {
            rows[i].gpus = counts[i];
            rows[i].rung = l->rung[0];
            if (!rows[i].rung.feasible)
                band_reason(&in->space, &rows[i].rung);
        }
    }
    free(l);
    return rc;
}

int elastic_fewest_for_days(const elastic_row_t *rows, int n, double days)
{
    for (int i = 0; i < n; i++)
        if (rows[i].rung.feasible && rows[i].rung.days_p50 <= days)
            return i;
    return -1;
}
