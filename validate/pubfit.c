/* pubfit: see pubfit.h. */
#include "validate/pubfit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median signed error of the dense, replayed rows on gpu; *count of them.
 * NAN when there are none. */
static double median_signed(const pub_row_t *rows, int n, const char *gpu, int *count)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    int k = 0;
    for (int i = 0; v && i < n; i++)
        if (!rows[i].skipped && pub_row_dense(&rows[i]) && strcmp(rows[i].profile_gpu, gpu) == 0)
            v[k++] = rows[i].error;
    double med = NAN;
    if (k > 0) {
        qsort(v, (size_t)k, sizeof *v, cmp_double);
        med = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    }
    if (count)
        *count = v ? k : -1; /* -1: out of memory */
    free(v);
    return med;
}

/* The median signed error on gpu with the profile p at factor x. */
static int error_at(const char *csv, const pub_options_t *base, profile_t *p, double x,
                    double *med, err_t *err)
{
    p->sustained_factor = x;
    pub_options_t o = *base;
    o.profile = p;
    o.only_gpu = p->gpu;
    o.progress = false;
    pub_row_t *rows = NULL;
    int n = 0, k = 0;
    int rc = pub_replay(csv, &o, &rows, &n, err);
    if (rc)
        return rc;
    *med = median_signed(rows, n, p->gpu, &k);
    free(rows);
    return k < 0 ? err_set(err, ERR_RUNTIME, "out of memory") : ERR_OK;
}

/* Bisect the factor of p (its GPU's rows in csv) to a zero median. */
static int fit_one(const char *csv, const pub_options_t *opt, profile_t *p, pub_fit_t *f,
                   err_t *err)
{
    double lo = 0.1, hi = 1.2, m_lo, m_hi; /* the range a profile accepts */
    int rc;
    if ((rc = error_at(csv, opt, p, lo, &m_lo, err)) || (rc = error_at(csv, opt, p, hi, &m_hi, err)))
        return rc;
    f->bracketed = m_lo <= 0 && m_hi >= 0;
    if (!f->bracketed) {
        f->fitted = m_lo > 0 ? lo : hi;
        f->median_fitted = m_lo > 0 ? m_lo : m_hi;
        return ERR_OK;
    }
    /* the error rises with the factor: more throughput, more predicted */
    while (hi - lo > 1e-4) {
        double mid = 0.5 * (lo + hi), m;
        if ((rc = error_at(csv, opt, p, mid, &m, err)))
            return rc;
        if (m > 0)
            hi = mid;
        else
            lo = mid;
    }
    f->fitted = 0.5 * (lo + hi);
    return error_at(csv, opt, p, f->fitted, &f->median_fitted, err);
}

/* The row ids of gpu's dense rows, comma separated, cut short to fit. */
static void list_ids(const pub_row_t *rows, int n, const char *gpu, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (rows[i].skipped || !pub_row_dense(&rows[i]) || strcmp(rows[i].profile_gpu, gpu) != 0)
            continue;
        size_t need = strlen(rows[i].row_id) + (len ? 2 : 0);
        if (len + need + 4 >= cap) {
            snprintf(out + len, cap - len, "%s...", len ? ", " : "");
            return;
        }
        len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", rows[i].row_id);
    }
}

int pub_fit_profile(const pub_options_t *opt, const char *gpu, profile_t *p, err_t *err)
{
    if (opt && opt->profile && strcmp(opt->profile->gpu, gpu) == 0)
        return prof_copy(p, opt->profile, err);
    return prof_load_default_in(opt ? opt->catalog : NULL, gpu, p, err);
}

int pub_fit_sustained(const char *csv_path, const pub_options_t *opt, pub_fit_t **fits, int *n,
                      err_t *err)
{
    *fits = NULL;
    *n = 0;
    pub_options_t base = {0};
    if (opt)
        base = *opt;
    base.only_gpu = NULL;
    pub_row_t *rows = NULL;
    int n_rows = 0;
    int rc = pub_replay(csv_path, &base, &rows, &n_rows, err);
    if (rc)
        return rc;
    pub_fit_t *out = calloc((size_t)(n_rows > 0 ? n_rows : 1), sizeof *out);
    if (!out) {
        free(rows);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    int k = 0;
    for (int i = 0; i < n_rows && !rc; i++) {
        const pub_row_t *r = &rows[i];
        if (r->skipped || !pub_row_dense(r))
            continue;
        bool seen = false;
        for (int j = 0; j < k && !seen; j++)
            seen = strcmp(out[j].gpu, r->profile_gpu) == 0;
        if (seen)
            continue;
        pub_fit_t *f = &out[k++];
        snprintf(f->gpu, sizeof f->gpu, "%s", r->profile_gpu);
        f->median_current = median_signed(rows, n_rows, r->profile_gpu, &f->rows);
        list_ids(rows, n_rows, r->profile_gpu, f->row_ids, sizeof f->row_ids);
        profile_t p;
        if ((rc = pub_fit_profile(&base, r->profile_gpu, &p, err)))
            break;
        f->current = p.sustained_factor;
        rc = fit_one(csv_path, &base, &p, f, err);
        prof_free(&p);
    }
    free(rows);
    if (rc) {
        free(out);
        return rc;
    }
    *fits = out;
    *n = k;
    return ERR_OK;
}
