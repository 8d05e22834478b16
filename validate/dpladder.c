#include "validate/dpladder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Same layout except for what DP scaling changes. */
static bool same_but_dp(const layout_t *a, const layout_t *b)
{
    return a->tp == b->tp && a->pp == b->pp && a->cp == b->cp && a->ep == b->ep &&
           a->vpp == b->vpp && a->micro_batch == b->micro_batch &&
           a->grad_accum == b->grad_accum && a->seq_len == b->seq_len &&
           a->zero == b->zero && a->distributed_optimizer == b->distributed_optimizer &&
           a->recompute == b->recompute && a->sequence_parallel == b->sequence_parallel &&
           a->precision == b->precision && a->schedule == b->schedule;
}

/* Whether row b continues the ladder whose last rung is row a, its GPU
 * counts rising (dir 1) or falling (dir -1). */
static bool next_rung(const pub_row_t *a, const pub_row_t *b, int dir)
{
    if (a->skipped || b->skipped || (b->gpus - a->gpus) * dir <= 0)
        return false;
    if (strcmp(a->group, b->group) || strcmp(a->model_key, b->model_key) ||
        strcmp(a->gpu, b->gpu))
        return false;
    if (!(a->published_tps_gpu > 0 && b->published_tps_gpu > 0 && a->predicted_tps_gpu > 0 &&
          b->predicted_tps_gpu > 0))
        return false;
    return same_but_dp(&a->sim_layout, &b->sim_layout);
}

/* The ladder of rows first..last (GPU counts rising or falling). */
static dpl_ladder_t ladder_of(const pub_row_t *rows, int first, int last)
{
    dpl_ladder_t d;
    bool rising = rows[last].gpus > rows[first].gpus;
    const pub_row_t *lo = &rows[rising ? first : last], *hi = &rows[rising ? last : first];
    d.first = rising ? first : last;
    d.last = rising ? last : first;
    d.rungs = last - first + 1;
    d.gpus_lo = lo->gpus;
    d.gpus_hi = hi->gpus;
    d.published_change = hi->published_tps_gpu / lo->published_tps_gpu - 1;
    d.predicted_change = hi->predicted_tps_gpu / lo->predicted_tps_gpu - 1;
    return d;
}

int dpl_find(const pub_row_t *rows, int n, dpl_ladder_t **out, int *n_out, err_t *err)
{
    *out = NULL;
    *n_out = 0;
    if (n < 2)
        return ERR_OK;
    dpl_ladder_t *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return err_set(err, ERR_RUNTIME, "out of memory finding DP ladders");
    int count = 0;
    for (int i = 0; i < n;) {
        int j = i;
        int dir = i + 1 < n && rows[i + 1].gpus < rows[i].gpus ? -1 : 1;
        while (j + 1 < n && next_rung(&rows[j], &rows[j + 1], dir))
            j++;
        if (j > i)
            v[count++] = ladder_of(rows, i, j);
        i = j + 1;
    }
    if (count == 0) {
        free(v);
        return ERR_OK;
    }
    *out = v;
    *n_out = count;
    return ERR_OK;
}

double dpl_gap_points(const dpl_ladder_t *d)
{
    return 100 * fabs(d->predicted_change - d->published_change);
}
