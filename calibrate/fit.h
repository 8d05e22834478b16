/* fit: the least-squares fits behind a measured profile (GSL).
 *
 *   fit_line     time = alpha + beta * x by weighted least squares with
 *                relative weights (1/y^2), alpha >= 0 and beta > 0; used
 *                for memory-bound kernels (x = bytes moved).
 *   fit_regimes  collectives: time = min over regimes of alpha_r + beta_r x
 *                (x = bus bytes), one alpha-beta line per size regime (the
 *                LL / LL128 / Simple protocols, channel counts, NVLS). The
 *                number of regimes and their boundaries are chosen by
 *                dynamic programming and an F test; each line is then fitted
 *                by weighted least squares under the constraint that it
 *                never undercuts the measurements of the other regimes, so
 *                the profile's "fastest line wins" rule (NCCL picks the
 *                fastest protocol) reproduces the measurements.
 *   fit_gemm     the profile's GEMM model (profile.h: peak x best efficiency
 *                x wave quantization x K efficiency, memory roofline,
 *                launch) by nonlinear least squares (gsl_multifit_nlinear,
 *                Levenberg-Marquardt) on log time: one best efficiency per
 *                dtype, k_half and wave_penalty shared, the tile size chosen
 *                among candidates by the residual.
 *
 * Every fit reports its quality the same way (fit_quality_t): R^2 on the
 * logarithm of the measured quantity, the worst relative error over the
 * measured points, and the widest 95% prediction interval over them
 * (relative half-width, from the parameter covariance and the residual
 * variance, Student t quantile). GSL's aborting error handler is turned
 * off by these functions; every GSL status is checked.
 */
#ifndef SCALEPLAN_CALIBRATE_FIT_H
#define SCALEPLAN_CALIBRATE_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/profile.h"
#include "common/error.h"

#define FIT_MAX_LINES PROF_MAX_LINES
#define FIT_GEMM_MAX_P (DTYPE_COUNT + 2)

typedef struct {
    int n;                /* points */
    double r2;            /* on log(measured); 1 = perfect */
    double worst_rel_err; /* max |predicted / measured - 1| */
    double pi95_rel;      /* widest 95% prediction half-width / prediction */
} fit_quality_t;

/* y = alpha + beta x in the caller's units. */
typedef struct {
    double alpha, beta;
    double cov[2][2];  /* covariance of (alpha, beta), residual-scaled */
    double sigma2;     /* variance of the relative residuals */
    int dof;           /* points - 2 */
    double t95;        /* Student t quantile 0.975 at dof */
    double x_lo, x_hi; /* range of the points */
    bool constrained;  /* moved off the unconstrained optimum by a bound */
    fit_quality_t q;   /* over the line's own points */
} fit_line_t;

/* Fit y = alpha + beta x to n >= 3 points (x > 0, y > 0, finite).
 * ERR_INPUT for too few or invalid points; ERR_RUNTIME if GSL fails. */
int fit_line(const double *x, const double *y, size_t n, fit_line_t *out, err_t *err);

/* Prediction at x and its 95% prediction interval [lo, hi]. */
void fit_line_predict(const fit_line_t *f, double x, double *pred, double *lo, double *hi);

typedef struct {
    int n_lines;
    fit_line_t lines[FIT_MAX_LINES];
    size_t first[FIT_MAX_LINES], count[FIT_MAX_LINES]; /* points of each regime */
    fit_quality_t q; /* of the envelope (min over lines) on every point */
} fit_regimes_t;

/* Fit the regimes to n >= 3 points sorted by increasing x (x > 0, y > 0),
 * with at most max_lines (1..FIT_MAX_LINES) lines. */
int fit_regimes(const double *x, const double *y, size_t n, int max_lines, fit_regimes_t *out,
                err_t *err);

/* The envelope min_r (alpha_r + beta_r x), and the prediction interval of
 * the line that attains it. */
double fit_regimes_eval(const fit_regimes_t *f, double x);
void fit_regimes_predict(const fit_regimes_t *f, double x, double *pred, double *lo,
                         double *hi);

/* The GEMM model's parameters as fitted. */
typedef struct {
    int tile_m, tile_n;
    double k_half, wave_penalty;
    double max_eff[DTYPE_COUNT];    /* 0 for dtypes without measurements */
    double se_max_eff[DTYPE_COUNT]; /* standard errors */
    double se_k_half, se_wave_penalty;
    size_t n_used, n_skipped; /* points fitted; points of dtypes without a peak */
    /* For prediction intervals (transformed parameters). */
    int n_params;
    int param_dtype[FIT_GEMM_MAX_P]; /* dtype of each efficiency parameter; -1 after */
    double theta[FIT_GEMM_MAX_P];
    double cov[FIT_GEMM_MAX_P][FIT_GEMM_MAX_P];
    double sigma2; /* variance of the log residuals */
    int dof;
    double t95;
    fit_quality_t q; /* on the TFLOP/s of the points used */
} fit_gemm_t;

/* A measured rate may exceed the datasheet's figure by this factor (the
 * timer's resolution), no more. */
#define FIT_PEAK_SLACK 1.01

/* Fit the GEMM model to measured points. base supplies the fixed figures
 * (peak TFLOP/s per dtype, SM count, memory bandwidth and efficiency,
 * launch overhead); points whose dtype has no peak are skipped. Needs more
 * points than parameters. */
int fit_gemm(const profile_t *base, const prof_gemm_point_t *pts, size_t n, fit_gemm_t *out,
             err_t *err);

/* Put the fitted parameters into p (tile, k_half, wave_penalty, and the
 * best efficiency of every fitted dtype). */
void fit_gemm_apply(const fit_gemm_t *f, profile_t *p);

/* The fitted model's TFLOP/s for one GEMM (base as given to fit_gemm) and
 * its 95% prediction interval. ERR_RUNTIME on OOM. */
int fit_gemm_predict(const fit_gemm_t *f, const profile_t *base, dtype_t d, double m, double n,
                     double k, double *tflops, double *lo, double *hi, err_t *err);

#endif
