#include "calibrate/fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

/* Student t quantile for a two-sided 95% interval. */
static double t_quantile95(int dof)
{
    return dof > 0 ? gsl_cdf_tdist_Pinv(0.975, dof) : INFINITY;
}

static int check_points(const double *x, const double *y, size_t n, size_t min_n,
                        bool sorted, err_t *err)
{
    if (n < min_n)
        return err_set(err, ERR_INPUT, "a fit needs at least %zu points (got %zu)", min_n, n);
    for (size_t i = 0; i < n; i++) {
        if (!(isfinite(x[i]) && x[i] > 0 && isfinite(y[i]) && y[i] > 0))
            return err_set(err, ERR_INPUT,
                           "point %zu: size and time must be finite and positive (got %g, %g)",
                           i, x[i], y[i]);
        if (sorted && i > 0 && !(x[i] > x[i - 1]))
            return err_set(err, ERR_INPUT, "point %zu: sizes must increase (%g after %g)", i,
                           x[i], x[i - 1]);
    }
    return ERR_OK;
}

/* ------------------------------------------------ weighted alpha-beta */

/* Unconstrained weighted least squares over points [i0, i1) with weights
 * 1/y^2 (relative residuals); returns the weighted RSS. */
static double wls_range(const double *x, const double *y, size_t i0, size_t i1, double *a,
                        double *b)
{
    double sw = 0, sx = 0, sy = 0;
    for (size_t i = i0; i < i1; i++) {
        double w = 1 / (y[i] * y[i]);
        sw += w;
        sx += w * x[i];
        sy += w * y[i];
    }
    double xm = sx / sw, ym = sy / sw, sxx = 0, sxy = 0;
    for (size_t i = i0; i < i1; i++) {
        double w = 1 / (y[i] * y[i]);
        sxx += w * (x[i] - xm) * (x[i] - xm);
        sxy += w * (x[i] - xm) * (y[i] - ym);
    }
    *b = sxx > 0 ? sxy / sxx : 0;
    *a = ym - *b * xm;
    double rss = 0;
    for (size_t i = i0; i < i1; i++) {
        double r = (y[i] - *a - *b * x[i]) / y[i];
        rss += r * r;
    }
    return rss;
}

/* A constraint a + b x >= c. */
typedef struct {
    double x, c;
} cons_t;

typedef struct {
    const double *x, *y; /* the segment's points */
    size_t n;
    const cons_t *cons;
    size_t n_cons;
    double b_min;
} qp_t;

static double qp_objective(const qp_t *q, double a, double b)
{
    double f = 0;
    for (size_t i = 0; i < q->n; i++) {
        double r = (q->y[i] - a - b * q->x[i]) / q->y[i];
        f += r * r;
    }
    return f;
}

static bool qp_feasible(const qp_t *q, double a, double b)
{
    if (!(isfinite(a) && isfinite(b)) || b < q->b_min * (1 - 1e-12))
        return false;
    for (size_t k = 0; k < q->n_cons; k++) {
        double lhs = a + b * q->cons[k].x, c = q->cons[k].c;
        if (lhs < c - 1e-12 * (fabs(c) + fabs(a) + 1e-300))
            return false;
    }
    return true;
}

static void qp_consider(const qp_t *q, double a, double b, double *best_f, double *ba,
                        double *bb)
{
    if (!qp_feasible(q, a, b))
        return;
    double f = qp_objective(q, a, b);
    if (f < *best_f) {
        *best_f = f;
        *ba = a;
        *bb = b;
    }
}

/* Minimise the weighted RSS of one line over its points subject to
 * a + b x_k >= c_k for every constraint and b >= b_min: a convex problem
 * in two unknowns, so its optimum is the unconstrained one or lies on one
 * or two active constraints; every such candidate is tried. Returns false
 * when nothing is feasible (cannot happen with a >= 0 style constraints
 * only, since a large enough a satisfies them all). */
static bool qp_solve(const qp_t *q, double *a, double *b, bool *moved)
{
    double best_f = INFINITY, ba = 0, bb = 0;
    double ua, ub;
    wls_range(q->x, q->y, 0, q->n, &ua, &ub);
    if (qp_feasible(q, ua, ub)) {
        *a = ua;
        *b = ub;
        *moved = false;
        return true;
    }
    double sw = 0, swy = 0, swx = 0;
    for (size_t i = 0; i < q->n; i++) {
        double w = 1 / (q->y[i] * q->y[i]);
        sw += w;
        swy += w * q->y[i];
        swx += w * q->x[i];
    }
    /* on b = b_min */
    qp_consider(q, (swy - q->b_min * swx) / sw, q->b_min, &best_f, &ba, &bb);
    for (size_t k = 0; k < q->n_cons; k++) {
        const cons_t *ck = &q->cons[k];
        /* on a + b x_k = c_k: a = c_k - b x_k */
        double num = 0, den = 0;
        for (size_t i = 0; i < q->n; i++) {
            double w = 1 / (q->y[i] * q->y[i]);
            double dx = q->x[i] - ck->x;
            num += w * (q->y[i] - ck->c) * dx;
            den += w * dx * dx;
        }
        if (den > 0) {
            double bk = num / den;
            qp_consider(q, ck->c - bk * ck->x, bk, &best_f, &ba, &bb);
        }
        /* vertex with b = b_min */
        qp_consider(q, ck->c - q->b_min * ck->x, q->b_min, &best_f, &ba, &bb);
        /* vertices with another constraint */
        for (size_t l = k + 1; l < q->n_cons; l++) {
            const cons_t *cl = &q->cons[l];
            if (cl->x == ck->x)
                continue;
            double bkl = (ck->c - cl->c) / (ck->x - cl->x);
            qp_consider(q, ck->c - bkl * ck->x, bkl, &best_f, &ba, &bb);
        }
    }
    if (!isfinite(best_f))
        return false;
    *a = ba;
    *b = bb;
    *moved = true;
    return true;
}

/* Covariance of (a, b) for the points (scaled units) by GSL's weighted
 * least squares, scaled by the residual variance of the final line. */
static int line_covariance(const double *x, const double *y, size_t n, fit_line_t *f,
                           err_t *err)
{
    gsl_matrix *X = gsl_matrix_alloc(n, 2), *cov = gsl_matrix_alloc(2, 2);
    gsl_vector *w = gsl_vector_alloc(n), *yv = gsl_vector_alloc(n), *c = gsl_vector_alloc(2);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, 2);
    int rc = ERR_OK;
    if (!X || !cov || !w || !yv || !c || !ws) {
        rc = err_set(err, ERR_RUNTIME, "out of memory in a least-squares fit");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 0, 1.0);
        gsl_matrix_set(X, i, 1, x[i]);
        gsl_vector_set(w, i, 1 / (y[i] * y[i]));
        gsl_vector_set(yv, i, y[i]);
    }
    double chisq;
    int st = gsl_multifit_wlinear(X, w, yv, c, cov, &chisq, ws);
    if (st != GSL_SUCCESS) {
        rc = err_set(err, ERR_RUNTIME, "weighted least squares failed: %s", gsl_strerror(st));
        goto out;
    }
    double rss = 0;
    for (size_t i = 0; i < n; i++) {
        double r = (y[i] - f->alpha - f->beta * x[i]) / y[i];
        rss += r * r;
    }
    f->dof = (int)n - 2;
    f->sigma2 = f->dof > 0 ? rss / f->dof : 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            f->cov[i][j] = f->sigma2 * gsl_matrix_get(cov, (size_t)i, (size_t)j);
    f->t95 = t_quantile95(f->dof);
out:
    gsl_matrix_free(X);
    gsl_matrix_free(cov);
    gsl_vector_free(w);
    gsl_vector_free(yv);
    gsl_vector_free(c);
    gsl_multifit_linear_free(ws);
    return rc;
}

void fit_line_predict(const fit_line_t *f, double x, double *pred, double *lo, double *hi)
{
    double p = f->alpha + f->beta * x;
    double var = f->cov[0][0] + 2 * x * f->cov[0][1] + x * x * f->cov[1][1] +
                 f->sigma2 * p * p;
    double half = f->t95 * sqrt(var > 0 ? var : 0);
    if (pred)
        *pred = p;
    if (lo)
        *lo = p - half;
    if (hi)
        *hi = p + half;
}

/* Quality of a line (or envelope) on points: R^2 of log y, worst error. */
static void quality_of(const double *y, const double *pred, const double *half_rel, size_t n,
                       fit_quality_t *q)
{
    double mean = 0, ss_tot = 0, ss_res = 0;
    q->n = (int)n;
    q->worst_rel_err = 0;
    q->pi95_rel = 0;
    for (size_t i = 0; i < n; i++)
        mean += log(y[i]);
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = log(y[i]) - mean;
        double r = pred[i] > 0 ? log(y[i]) - log(pred[i]) : INFINITY;
        ss_tot += d * d;
        ss_res += r * r;
        double e = fabs(pred[i] / y[i] - 1);
        if (e > q->worst_rel_err)
            q->worst_rel_err = e;
        if (half_rel && half_rel[i] > q->pi95_rel)
            q->pi95_rel = half_rel[i];
    }
    q->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res < 1e-24 ? 1 : 0);
}

/* Fit one line to points (scaled units) under constraints, with its
 * covariance and quality on its own points. */
static int line_fit_scaled(const double *x, const double *y, size_t n, const cons_t *cons,
                           size_t n_cons, double b_min, fit_line_t *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    qp_t q = {x, y, n, cons, n_cons, b_min};
    if (!qp_solve(&q, &f->alpha, &f->beta, &f->constrained))
        return err_set(err, ERR_RUNTIME, "constrained line fit found no feasible line");
    f->x_lo = x[0];
    f->x_hi = x[0];
    for (size_t i = 1; i < n; i++) {
        if (x[i] < f->x_lo)
            f->x_lo = x[i];
        if (x[i] > f->x_hi)
            f->x_hi = x[i];
    }
    int rc = line_covariance(x, y, n, f, err);
    if (rc)
        return rc;
    double *pred = malloc(2 * n * sizeof *pred);
    if (!pred)
        return err_set(err, ERR_RUNTIME, "out of memory in a least-squares fit");
    double *half = pred + n;
    for (size_t i = 0; i < n; i++) {
        double lo, hi;
        fit_line_predict(f, x[i], &pred[i], &lo, &hi);
        half[i] = pred[i] > 0 ? (hi - pred[i]) / pred[i] : INFINITY;
    }
    quality_of(y, pred, half, n, &f->q);
    free(pred);
    return ERR_OK;
}

/* Back from scaled units (x / xs, y / ys) to the caller's. */
static void unscale_line(fit_line_t *f, double xs, double ys)
{
    f->alpha *= ys;
    f->beta *= ys / xs;
    f->cov[0][0] *= ys * ys;
    f->cov[0][1] *= ys * ys / xs;
    f->cov[1][0] *= ys * ys / xs;
    f->cov[1][1] *= ys * ys / (xs * xs);
    f->x_lo *= xs;
    f->x_hi *= xs;
}

/* Copies of x and y divided by their maxima, for a well-conditioned fit. */
static int scaled_copy(const double *x, const double *y, size_t n, double **xs, double **ys,
                       double *sx, double *sy, err_t *err)
{
    *sx = 0;
    *sy = 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i] > *sx)
            *sx = x[i];
        if (y[i] > *sy)
            *sy = y[i];
    }
    *xs = malloc(2 * n * sizeof **xs);
    if (!*xs)
        return err_set(err, ERR_RUNTIME, "out of memory in a least-squares fit");
    *ys = *xs + n;
    for (size_t i = 0; i < n; i++) {
        (*xs)[i] = x[i] / *sx;
        (*ys)[i] = y[i] / *sy;
    }
    return ERR_OK;
}

/* Smallest slope allowed, in scaled units: a line may not be flat, or it
 * would claim near-infinite bandwidth at sizes it never saw. */
#define B_MIN_SCALED 1e-6

int fit_line(const double *x, const double *y, size_t n, fit_line_t *out, err_t *err)
{
    gsl_set_error_handler_off();
    int rc = check_points(x, y, n, 3, false, err);
    if (rc)
        return rc;
    double *xs, *ys, sx, sy;
    if ((rc = scaled_copy(x, y, n, &xs, &ys, &sx, &sy, err)))
        return rc;
    cons_t alpha_nonneg = {0, 0};
    rc = line_fit_scaled(xs, ys, n, &alpha_nonneg, 1, B_MIN_SCALED, out, err);
    free(xs);
    if (rc)
        return rc;
    unscale_line(out, sx, sy);
    return ERR_OK;
}

/* ------------------------------------------------ regimes */

double fit_regimes_eval(const fit_regimes_t *f, double x)
{
    double best = INFINITY;
    for (int i = 0; i < f->n_lines; i++) {
        double v = f->lines[i].alpha + f->lines[i].beta * x;
        if (v < best)
            best = v;
    }
    return best;
}

void fit_regimes_predict(const fit_regimes_t *f, double x, double *pred, double *lo, double *hi)
{
    /* The value is the envelope; its uncertainty is that of the regime
     * fitted to the sizes around x (the one whose range holds x, else the
     * nearest in log size), not of whichever line happens to be lowest. */
    int arg = 0;
    double best_d = INFINITY;
    for (int i = 0; i < f->n_lines; i++) {
        const fit_line_t *l = &f->lines[i];
        double d = x < l->x_lo ? log(l->x_lo / x) : x > l->x_hi ? log(x / l->x_hi) : 0;
        if (d < best_d) {
            best_d = d;
            arg = i;
        }
    }
    double env = fit_regimes_eval(f, x), p, l, h;
    fit_line_predict(&f->lines[arg], x, &p, &l, &h);
    double half_rel = p > 0 ? (h - p) / p : INFINITY;
    if (pred)
        *pred = env;
    if (lo)
        *lo = env * (1 - half_rel);
    if (hi)
        *hi = env * (1 + half_rel);
}

/* The number of regimes: the fewest that no larger number improves on
 * significantly (F test at 99% on the relative RSS, each regime adding a
 * line and a boundary). Plain BIC splits pure noise here because the
 * boundaries are searched for; the F test over every larger count still
 * takes a distant gain that a nearer count misses. best[k * n + n - 1] is
 * the least RSS of all n points with k regimes, k = 1..k_max. */
static int regime_count(const double *best, size_t n, int k_max)
{
    int k_best = 1;
    for (int k = 1; k <= k_max; k++) {
        double rk = best[(size_t)k * n + n - 1];
        if (!isfinite(rk))
            continue;
        /* relative residuals below 1e-7 are rounding: nothing to improve */
        bool beaten = false, exact = rk <= (double)n * 1e-14;
        for (int k2 = k + 1; k2 <= k_max && !beaten && !exact; k2++) {
            double r2 = best[(size_t)k2 * n + n - 1];
            int d1 = 3 * (k2 - k), d2 = (int)n - (3 * k2 - 1);
            if (!isfinite(r2) || r2 >= rk || d2 <= 0)
                continue;
            if (r2 <= 1e-300) {
                beaten = true;
                break;
            }
            double F = ((rk - r2) / d1) / (r2 / d2);
            beaten = F > gsl_cdf_fdist_Pinv(0.99, d1, d2);
        }
        if (!beaten) {
            k_best = k;
            break;
        }
    }
    return k_best;
}

int fit_regimes(const double *x, const double *y, size_t n, int max_lines, fit_regimes_t *out,
                err_t *err)
{
    gsl_set_error_handler_off();
    memset(out, 0, sizeof *out);
    int rc = check_points(x, y, n, 3, true, err);
    if (rc)
        return rc;
    if (max_lines < 1 || max_lines > FIT_MAX_LINES)
        return err_set(err, ERR_INPUT, "regimes: max_lines must be 1 to %d (got %d)",
                       FIT_MAX_LINES, max_lines);
    /* Each regime needs enough points for a line with a residual
     * variance: 4 where the data allow, else 3. */
    size_t min_pts = n >= 12 ? 4 : 3;
    int k_max = (int)(n / min_pts);
    if (k_max > max_lines)
        k_max = max_lines;
    double *xs, *ys, sx, sy;
    if ((rc = scaled_copy(x, y, n, &xs, &ys, &sx, &sy, err)))
        return rc;
    double *cost = malloc(n * n * sizeof *cost);
    double *best = malloc((size_t)(k_max + 1) * n * sizeof *best);
    size_t *from = malloc((size_t)(k_max + 1) * n * sizeof *from);
    cons_t *cons = malloc((n + 1) * sizeof *cons);
    double *pred = malloc(2 * n * sizeof *pred);
    if (!cost || !best || !from || !cons || !pred) {
        rc = err_set(err, ERR_RUNTIME, "out of memory fitting regimes");
        goto out;
    }
    /* cost[i * n + j]: weighted RSS of one line over points i..j */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i; j < n; j++) {
            double a, b;
            cost[i * n + j] = j + 1 - i >= min_pts ? wls_range(xs, ys, i, j + 1, &a, &b)
                                                    : INFINITY;
        }
    /* best[k][j]: least RSS covering points 0..j with k regimes */
    for (int k = 0; k <= k_max; k++)
        for (size_t j = 0; j < n; j++) {
            best[(size_t)k * n + j] = INFINITY;
            from[(size_t)k * n + j] = 0;
        }
    for (size_t j = 0; j < n; j++)
        best[n + j] = cost[j];
    for (int k = 2; k <= k_max; k++)
        for (size_t j = 0; j < n; j++)
            for (size_t i = 1; i <= j; i++) {
                double v = best[(size_t)(k - 1) * n + i - 1] + cost[i * n + j];
                if (v < best[(size_t)k * n + j]) {
                    best[(size_t)k * n + j] = v;
                    from[(size_t)k * n + j] = i;
                }
            }
    int k_best = regime_count(best, n, k_max);
    /* the regimes' point ranges, from the last backwards */
    size_t end = n;
    for (int k = k_best; k >= 1; k--) {
        size_t start = k == 1 ? 0 : from[(size_t)k * n + end - 1];
        out->first[k - 1] = start;
        out->count[k - 1] = end - start;
        end = start;
    }
    out->n_lines = k_best;
    /* Slack for the envelope constraints: twice the RMS relative residual
     * of the unconstrained segments, at most 5%, so noise in one regime
     * does not push the others' lines. */
    double sigma = sqrt(best[(size_t)k_best * n + n - 1] / (double)n);
    double slack = 2 * sigma < 0.05 ? 2 * sigma : 0.05;
    for (int r = 0; r < k_best; r++) {
        size_t nc = 0, f0 = out->first[r], c0 = out->count[r];
        cons[nc++] = (cons_t){0, 0}; /* alpha >= 0 */
        for (size_t i = 0; i < n; i++)
            if (i < f0 || i >= f0 + c0)
                cons[nc++] = (cons_t){xs[i], ys[i] * (1 - slack)};
        if ((rc = line_fit_scaled(xs + f0, ys + f0, c0, cons, nc, B_MIN_SCALED, &out->lines[r],
                                  err)))
            goto out;
    }
    /* quality of the envelope on every point (scaled; relative measures
     * do not change with units) */
    double *half = pred + n;
    for (size_t i = 0; i < n; i++) {
        double lo, hi;
        fit_regimes_predict(out, xs[i], &pred[i], &lo, &hi);
        pred[i] = fit_regimes_eval(out, xs[i]);
        half[i] = pred[i] > 0 ? (hi - pred[i]) / pred[i] : INFINITY;
    }
    quality_of(ys, pred, half, n, &out->q);
    for (int r = 0; r < k_best; r++)
        unscale_line(&out->lines[r], sx, sy);
out:
    free(xs);
    free(cost);
    free(best);
    free(from);
    free(cons);
    free(pred);
    return rc;
}

/* ------------------------------------------------ GEMM model */

static double sigmoid(double u)
{
    return 1 / (1 + exp(-u));
}

static double logit(double p)
{
    return log(p / (1 - p));
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

typedef struct {
    profile_t *p; /* scratch copy of the base: no table, sustained factor 1 */
    const prof_gemm_point_t *pts;
    size_t n;
    double *log_t; /* measured log seconds */
    int nd;        /* efficiency parameters */
    dtype_t dts[DTYPE_COUNT];
} gemm_data_t;

#define U_LIMIT 10.0 /* efficiencies in [4.5e-5, 0.99995] */
#define KH_LO log(1.0)
#define KH_HI log(1e5)

static void gemm_set(gemm_data_t *d, const double *theta)
{
    for (int j = 0; j < d->nd; j++)
        d->p->gemm_max_eff[d->dts[j]] = sigmoid(clampd(theta[j], -U_LIMIT, U_LIMIT));
    d->p->k_half = exp(clampd(theta[d->nd], KH_LO, KH_HI));
    d->p->wave_penalty = sigmoid(clampd(theta[d->nd + 1], -U_LIMIT, U_LIMIT));
}

static double gemm_seconds(const gemm_data_t *d, const prof_gemm_point_t *pt)
{
    return prof_gemm_time(d->p, pt->dtype, pt->m, pt->n, pt->k, 1);
}

static int gemm_residuals(const gsl_vector *theta, void *params, gsl_vector *f)
{
    gemm_data_t *d = params;
    double th[FIT_GEMM_MAX_P];
    for (size_t j = 0; j < theta->size; j++)
        th[j] = gsl_vector_get(theta, j);
    gemm_set(d, th);
    for (size_t i = 0; i < d->n; i++) {
        double t = gemm_seconds(d, &d->pts[i]);
        if (!(t > 0 && isfinite(t)))
            return GSL_EDOM;
        gsl_vector_set(f, i, log(t) - d->log_t[i]);
    }
    return GSL_SUCCESS;
}

/* One Levenberg-Marquardt fit from theta (updated in place). Returns the
 * sum of squared log residuals, or INFINITY when GSL failed; fills the
 * unscaled covariance (J^T J)^-1. */
static double gemm_lm(gemm_data_t *d, double *theta, int p, double cov[FIT_GEMM_MAX_P][FIT_GEMM_MAX_P],
                      bool *oom)
{
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    fp.trs = gsl_multifit_nlinear_trs_lm;
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, d->n, (size_t)p);
    gsl_matrix *covar = gsl_matrix_alloc((size_t)p, (size_t)p);
    double chisq = INFINITY;
    if (!w || !covar) {
        *oom = true;
        goto out;
    }
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = gemm_residuals;
    fdf.df = NULL; /* finite-difference Jacobian */
    fdf.fvv = NULL;
    fdf.n = d->n;
    fdf.p = (size_t)p;
    fdf.params = d;
    gsl_vector_view x0 = gsl_vector_view_array(theta, (size_t)p);
    if (gsl_multifit_nlinear_init(&x0.vector, &fdf, w) != GSL_SUCCESS)
        goto out;
    int info = 0;
    int st = gsl_multifit_nlinear_driver(300, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w);
    /* No progress or the iteration limit still leave the best point so
     * far, which is what we want; anything else is a failure. */
    if (st != GSL_SUCCESS && st != GSL_EMAXITER && st != GSL_ENOPROG)
        goto out;
    const gsl_vector *x = gsl_multifit_nlinear_position(w);
    const gsl_vector *f = gsl_multifit_nlinear_residual(w);
    double c2;
    if (gsl_blas_ddot(f, f, &c2) != GSL_SUCCESS || !isfinite(c2))
        goto out;
    if (gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, covar) != GSL_SUCCESS)
        goto out;
    for (int i = 0; i < p; i++) {
        theta[i] = gsl_vector_get(x, (size_t)i);
        for (int j = 0; j < p; j++)
            cov[i][j] = gsl_matrix_get(covar, (size_t)i, (size_t)j);
    }
    chisq = c2;
out:
    if (w)
        gsl_multifit_nlinear_free(w);
    gsl_matrix_free(covar);
    return chisq;
}

/* A heap copy of base without its table and fit records, sustained
 * factor 1: the model alone. */
static profile_t *scratch_profile(const profile_t *base)
{
    profile_t *p = malloc(sizeof *p);
    if (!p)
        return NULL;
    memcpy(p, base, sizeof *p);
    p->gemm_points = NULL;
    p->n_gemm_points = 0;
    p->fits = NULL;
    p->n_fits = 0;
    p->sustained_factor = 1;
    return p;
}

/* d(log t)/d(theta) at one point by central differences. */
static void gemm_gradient(gemm_data_t *d, const double *theta, int p, const prof_gemm_point_t *pt,
                          double *g)
{
    double th[FIT_GEMM_MAX_P];
    memcpy(th, theta, (size_t)p * sizeof *th);
    for (int j = 0; j < p; j++) {
        double h = 1e-5 * (fabs(theta[j]) + 1);
        th[j] = theta[j] + h;
        gemm_set(d, th);
        double up = log(gemm_seconds(d, pt));
        th[j] = theta[j] - h;
        gemm_set(d, th);
        double dn = log(gemm_seconds(d, pt));
        th[j] = theta[j];
        g[j] = (up - dn) / (2 * h);
    }
    gemm_set(d, theta);
}

/* Half-width of the 95% prediction interval of log t at one point. */
static double gemm_half_log(const fit_gemm_t *f, gemm_data_t *d, const prof_gemm_point_t *pt)
{
    double g[FIT_GEMM_MAX_P];
    gemm_gradient(d, f->theta, f->n_params, pt, g);
    double var = f->sigma2;
    for (int i = 0; i < f->n_params; i++)
        for (int j = 0; j < f->n_params; j++)
            var += g[i] * f->cov[i][j] * g[j];
    return f->t95 * sqrt(var > 0 ? var : 0);
}

static int gemm_data_init(const profile_t *base, const prof_gemm_point_t *pts, size_t n,
                          gemm_data_t *d, prof_gemm_point_t **used, err_t *err)
{
    memset(d, 0, sizeof *d);
    d->p = scratch_profile(base);
    *used = malloc((n ? n : 1) * sizeof **used);
    d->log_t = malloc((n ? n : 1) * sizeof *d->log_t);
    if (!d->p || !*used || !d->log_t)
        return err_set(err, ERR_RUNTIME, "out of memory fitting GEMMs");
    bool seen[DTYPE_COUNT] = {false};
    for (size_t i = 0; i < n; i++) {
        const prof_gemm_point_t *pt = &pts[i];
        if (pt->dtype >= DTYPE_COUNT || !(base->peak_tflops[pt->dtype] > 0))
            continue;
        if (!(pt->m >= 1 && pt->n >= 1 && pt->k >= 1 && pt->tflops > 0 && isfinite(pt->tflops)))
            return err_set(err, ERR_INPUT,
                           "GEMM point %zu: dimensions and TFLOP/s must be positive", i);
        /* a GEMM faster than the datasheet's dense peak (at the boost
         * clock) was not measured on this GPU, or not timed whole; 1%
         * leaves room for the timer's resolution */
        if (pt->tflops > FIT_PEAK_SLACK * base->peak_tflops[pt->dtype])
            return err_set(err, ERR_INPUT,
                           "GEMM point %zu (%gx%gx%g %s): %.1f TFLOP/s is above %s's dense "
                           "peak of %.1f: not a measurement of this GPU, or a time that missed "
                           "part of the work",
                           i, pt->m, pt->n, pt->k, dtype_name(pt->dtype), pt->tflops, base->gpu,
                           base->peak_tflops[pt->dtype]);
        (*used)[d->n] = *pt;
        d->log_t[d->n] = log(2 * pt->m * pt->n * pt->k / (pt->tflops * 1e12));
        d->n++;
        seen[pt->dtype] = true;
    }
    for (int t = 0; t < DTYPE_COUNT; t++)
        if (seen[t])
            d->dts[d->nd++] = (dtype_t)t;
    d->pts = *used;
    return ERR_OK;
}

static void gemm_data_free(gemm_data_t *d, prof_gemm_point_t *used)
{
    free(d->p);
    free(d->log_t);
    free(used);
}

int fit_gemm(const profile_t *base, const prof_gemm_point_t *pts, size_t n, fit_gemm_t *out,
             err_t *err)
{
    gsl_set_error_handler_off();
    memset(out, 0, sizeof *out);
    gemm_data_t d;
    prof_gemm_point_t *used = NULL;
    int rc = gemm_data_init(base, pts, n, &d, &used, err);
    if (rc)
        goto out;
    int p = d.nd + 2;
    out->n_used = d.n;
    out->n_skipped = n - d.n;
    if (d.nd == 0) {
        rc = err_set(err, ERR_INPUT,
                     "no GEMM measurement in a dtype with a known peak for %s", base->gpu);
        goto out;
    }
    if (d.n <= (size_t)p) {
        rc = err_set(err, ERR_INPUT, "the GEMM fit needs more than %d measurements (got %zu)", p,
                     d.n);
        goto out;
    }
    /* Start from the best measured efficiency of each dtype. */
    double theta0[FIT_GEMM_MAX_P];
    for (int j = 0; j < d.nd; j++) {
        double best = 0;
        for (size_t i = 0; i < d.n; i++)
            if (d.pts[i].dtype == d.dts[j]) {
                double e = d.pts[i].tflops / base->peak_tflops[d.dts[j]];
                if (e > best)
                    best = e;
            }
        theta0[j] = logit(clampd(best * 1.05, 0.02, 0.98));
    }
    theta0[d.nd] = log(256.0);
    static const int tiles[] = {64, 128, 256};
    static const double wave_starts[] = {0.3, 0.8};
    double best_chisq = INFINITY;
    bool oom = false;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int s = 0; s < 2; s++) {
                double theta[FIT_GEMM_MAX_P], cov[FIT_GEMM_MAX_P][FIT_GEMM_MAX_P];
                memcpy(theta, theta0, sizeof theta);
                theta[d.nd + 1] = logit(wave_starts[s]);
                d.p->tile_m = tiles[a];
                d.p->tile_n = tiles[b];
                double chisq = gemm_lm(&d, theta, p, cov, &oom);
                if (oom) {
                    rc = err_set(err, ERR_RUNTIME, "out of memory fitting GEMMs");
                    goto out;
                }
                if (chisq < best_chisq * (1 - 1e-9)) {
                    best_chisq = chisq;
                    out->tile_m = tiles[a];
                    out->tile_n = tiles[b];
                    memcpy(out->theta, theta, sizeof theta);
                    memcpy(out->cov, cov, sizeof cov);
                }
            }
    if (!isfinite(best_chisq)) {
        rc = err_set(err, ERR_RUNTIME, "the GEMM fit did not converge from any start");
        goto out;
    }
    out->n_params = p;
    out->dof = (int)d.n - p;
    out->sigma2 = best_chisq / out->dof;
    out->t95 = t_quantile95(out->dof);
    for (int i = 0; i < p; i++)
        for (int j = 0; j < p; j++)
            out->cov[i][j] *= out->sigma2;
    for (int j = 0; j < FIT_GEMM_MAX_P; j++)
        out->param_dtype[j] = j < d.nd ? (int)d.dts[j] : -1;
    /* natural parameters and their standard errors (delta method) */
    for (int j = 0; j < d.nd; j++) {
        double e = sigmoid(clampd(out->theta[j], -U_LIMIT, U_LIMIT));
        out->max_eff[d.dts[j]] = e;
        out->se_max_eff[d.dts[j]] = sqrt(out->cov[j][j]) * e * (1 - e);
    }
    out->k_half = exp(clampd(out->theta[d.nd], KH_LO, KH_HI));
    out->se_k_half = sqrt(out->cov[d.nd][d.nd]) * out->k_half;
    out->wave_penalty = sigmoid(clampd(out->theta[d.nd + 1], -U_LIMIT, U_LIMIT));
    out->se_wave_penalty =
        sqrt(out->cov[d.nd + 1][d.nd + 1]) * out->wave_penalty * (1 - out->wave_penalty);
    /* quality on TFLOP/s */
    d.p->tile_m = out->tile_m;
    d.p->tile_n = out->tile_n;
    gemm_set(&d, out->theta);
    double *buf = malloc(3 * d.n * sizeof *buf);
    if (!buf) {
        rc = err_set(err, ERR_RUNTIME, "out of memory fitting GEMMs");
        goto out;
    }
    double *meas = buf, *pred = buf + d.n, *half = buf + 2 * d.n;
    for (size_t i = 0; i < d.n; i++) {
        const prof_gemm_point_t *pt = &d.pts[i];
        meas[i] = pt->tflops;
        pred[i] = 2 * pt->m * pt->n * pt->k / gemm_seconds(&d, pt) / 1e12;
        half[i] = exp(gemm_half_log(out, &d, pt)) - 1;
    }
    quality_of(meas, pred, half, d.n, &out->q);
    free(buf);
out:
    gemm_data_free(&d, used);
    return rc;
}

void fit_gemm_apply(const fit_gemm_t *f, profile_t *p)
{
    p->tile_m = f->tile_m;
    p->tile_n = f->tile_n;
    p->k_half = f->k_half;
    p->wave_penalty = f->wave_penalty;
    for (int t = 0; t < DTYPE_COUNT; t++)
        if (f->max_eff[t] > 0)
            p->gemm_max_eff[t] = clampd(f->max_eff[t], 0.01, 1.0);
}

int fit_gemm_predict(const fit_gemm_t *f, const profile_t *base, dtype_t dt, double m, double n,
                     double k, double *tflops, double *lo, double *hi, err_t *err)
{
    gemm_data_t d;
    memset(&d, 0, sizeof d);
    d.p = scratch_profile(base);
    if (!d.p)
        return err_set(err, ERR_RUNTIME, "out of memory predicting a GEMM");
    for (int j = 0; j < f->n_params && f->param_dtype[j] >= 0; j++)
        d.dts[d.nd++] = (dtype_t)f->param_dtype[j];
    d.p->tile_m = f->tile_m;
    d.p->tile_n = f->tile_n;
    gemm_set(&d, f->theta);
    prof_gemm_point_t pt = {dt, m, n, k, 0};
    double t = gemm_seconds(&d, &pt);
    double half = gemm_half_log(f, &d, &pt);
    double rate = 2 * m * n * k / t / 1e12;
    if (tflops)
        *tflops = rate;
    if (lo)
        *lo = rate * exp(-half);
    if (hi)
        *hi = rate * exp(half);
    free(d.p);
    return ERR_OK;
}
