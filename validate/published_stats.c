/* The replayed rows summed up (split off from published.c, issue 34):
 * error quantiles, per-framework groups and pairwise orderings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/publishedInt.h"

/* ------------------------------------------------------------ summaries */

bool pub_row_dense(const pub_row_t *r)
{
    return !r->moe && !strstr(r->reason, "mixture-of-experts") && r->sim_layout.ep <= 1 &&
           !model_is_moe(&r->sim_model);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double row_abs_error(const pub_row_t *r)
{
    return r->skipped ? 1.0 : fabs(r->error);
}

/* Median and 90th percentile (nearest rank) of v[0..k), sorted in place. */
static void quantiles(double *v, int k, double *median, double *p90)
{
    if (k == 0) {
        *median = *p90 = 0;
        return;
    }
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    *median = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    int r = (int)ceil(0.9 * k) - 1;
    *p90 = v[r < 0 ? 0 : r];
}

void pub_summary(const pub_row_t *rows, int n, bool (*keep)(const pub_row_t *), double *median,
                 double *p90, int *count)
{
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    int k = 0;
    for (int i = 0; e && i < n; i++)
        if (!keep || keep(&rows[i]))
            e[k++] = row_abs_error(&rows[i]);
    quantiles(e, k, median, p90);
    *count = k;
    free(e);
}

int pub_groups(const pub_row_t *rows, int n, pub_group_t **groups, int *n_groups, err_t *err)
{
    *groups = NULL;
    *n_groups = 0;
    pub_group_t *g = calloc((size_t)(n > 0 ? n : 1), sizeof *g);
    double *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!g || !e) {
        free(g);
        free(e);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    int ng = 0;
    for (int i = 0; i < n; i++) {
        const char *name = rows[i].group[0] ? rows[i].group : "(no framework)";
        int k = 0;
        while (k < ng && strcmp(g[k].group, name) != 0)
            k++;
        if (k < ng)
            continue;
        pub_group_t *x = &g[ng++];
        snprintf(x->group, sizeof x->group, "%s", name);
        int m = 0;
        for (int j = i; j < n; j++) {
            const char *nj = rows[j].group[0] ? rows[j].group : "(no framework)";
            if (strcmp(nj, name) != 0)
                continue;
            x->rows++;
            x->skipped += rows[j].skipped;
            e[m++] = row_abs_error(&rows[j]);
            if (row_abs_error(&rows[j]) > x->worst)
                x->worst = row_abs_error(&rows[j]);
        }
        quantiles(e, m, &x->median, &x->p90);
    }
    free(e);
    *groups = g;
    *n_groups = ng;
    return ERR_OK;
}

int pub_ordering(const pub_row_t *rows, int n, double min_gap, int *pairs, int *misordered,
                 int **wrong, err_t *err)
{
    *pairs = *misordered = 0;
    int cap = 64, k = 0;
    int *w = wrong ? malloc((size_t)cap * 2 * sizeof *w) : NULL;
    if (wrong && !w)
        return err_set(err, ERR_RUNTIME, "out of memory");
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            const pub_row_t *x = &rows[a], *y = &rows[b];
            if (x->skipped || y->skipped || x->gpus != y->gpus ||
                strcmp(x->model_key, y->model_key) != 0)
                continue;
            double hi = fmax(x->published_tps_gpu, y->published_tps_gpu);
            double lo = fmin(x->published_tps_gpu, y->published_tps_gpu);
            if (!(lo > 0) || hi / lo - 1 <= min_gap)
                continue;
            (*pairs)++;
            bool pub = x->published_tps_gpu > y->published_tps_gpu;
            bool pred = x->predicted_tps_gpu > y->predicted_tps_gpu;
            if (pub == pred)
                continue;
            (*misordered)++;
            if (!w)
                continue;
            if (k == cap) {
                int *nw = realloc(w, (size_t)cap * 4 * sizeof *w);
                if (!nw) {
                    free(w);
                    return err_set(err, ERR_RUNTIME, "out of memory");
                }
                w = nw;
                cap *= 2;
            }
            w[2 * k] = a;
            w[2 * k + 1] = b;
            k++;
        }
    if (wrong)
        *wrong = w;
    return ERR_OK;
}
