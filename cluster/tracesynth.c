#include "cluster/tracesynth.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "common/json.h"
#include "common/rng.h"

#define DUR_MIN_S 1.0 /* the clip's low end: a trace records whole seconds */

static const char *const SHARE_KEYS[3] = {"complete_share", "cancel_share", "fail_share"};
static const char *const OUTCOME[3] = {"completed", "canceled", "failed"};

/* One share: a number in [0, 1], or null (not published: -1). */
static int share_of(const cJSON *o, const char *key, const json_ctx_t *ctx, double *v, err_t *err)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!s || cJSON_IsNull(s))
        return *v = -1, ERR_OK;
    return json_get_double(o, key, ctx, JSON_REQUIRED, 0, 1, v, err);
}

static int parse_profile(const cJSON *o, const json_ctx_t *ctx, void *out, err_t *err)
{
    ctsynth_profile_t *p = out;
    memset(p, 0, sizeof *p);
    int rc;
    if ((rc = json_get_string(o, "name", ctx, JSON_REQUIRED, p->name, sizeof p->name, err)) ||
        (rc = json_get_string(o, "paper", ctx, JSON_REQUIRED, p->paper, sizeof p->paper, err)) ||
        (rc = json_get_double(o, "gpu_jobs", ctx, JSON_REQUIRED, 1, 1e10, &p->gpu_jobs, err)) ||
        (rc = json_get_double(o, "span_days", ctx, JSON_REQUIRED, 0.01, 1e5, &p->span_days,
                              err)) ||
        (rc = json_get_double(o, "cluster_gpus", ctx, JSON_REQUIRED, 1, 1e8, &p->cluster_gpus,
                              err)) ||
        (rc = json_get_double(o, "run_time_mean_s", ctx, JSON_REQUIRED, 1, 1e9,
                              &p->run_time_mean_s, err)) ||
        (rc = json_get_double(o, "run_time_median_s", ctx, JSON_REQUIRED, 1, 1e9,
                              &p->run_time_median_s, err)) ||
        (rc = json_get_double(o, "run_time_max_s", ctx, JSON_REQUIRED, 1, 1e10,
                              &p->run_time_max_s, err)) ||
        (rc = json_get_double(o, "gpus_mean", ctx, JSON_REQUIRED, 0.01, 1e6, &p->gpus_mean,
                              err)) ||
        (rc = json_get_double(o, "gpus_median", ctx, JSON_REQUIRED, 0.01, 1e6, &p->gpus_median,
                              err)) ||
        (rc = json_get_double(o, "gpus_max", ctx, JSON_REQUIRED, 1, CJOBS_MAX_GPUS, &p->gpus_max,
                              err)))
        return rc;
    const cJSON *gt = cJSON_GetObjectItemCaseSensitive(o, "gpu_time_s");
    p->gpu_time_s = -1; /* null: not published */
    if (!gt || !cJSON_IsNull(gt))
        rc = json_get_double(o, "gpu_time_s", ctx, JSON_REQUIRED, 1, 1e15, &p->gpu_time_s, err);
    for (int i = 0; !rc && i < 3; i++)
        rc = share_of(o, SHARE_KEYS[i], ctx, &p->share[i], err);
    return rc;
}

int ctsynth_load(const char *name, ctsynth_profile_t *out, err_t *err)
{
    return catalog_load_named(CTSYNTH_CATALOG, "traces", name, "--synthesize",
                              CTSYNTH_CATALOG, parse_profile, out, err);
}

/* The mean of exp(N(mu, s)) clipped to [lo, hi]. */
static double clipped_mean(double mu, double s, double lo, double hi)
{
    double za = (log(lo) - mu) / s, zb = (log(hi) - mu) / s;
    return lo * gsl_cdf_ugaussian_P(za) +
           exp(mu + s * s / 2) * (gsl_cdf_ugaussian_P(zb - s) - gsl_cdf_ugaussian_P(za - s)) +
           hi * gsl_cdf_ugaussian_Q(zb);
}

/* The run-time model's mixture over sizes: ln D of a 2^k-GPU job is
 * N(mu + beta k, sigma), clipped to [lo, hi]. Its CDF at x (no clip: the
 * median lies inside it), mean, and mean of GPUs x D. */
static double mix_cdf(const ctsynth_model_t *m, double mu, double x)
{
    double f = 0;
    for (int k = 0; k < m->n_sizes; k++)
        f += m->size_p[k] * gsl_cdf_ugaussian_P((log(x) - mu - m->dur_beta * k) / m->dur_sigma);
    return f;
}

static double mix_mean(const ctsynth_model_t *m, double mu, bool gpu_weighted)
{
    double e = 0;
    for (int k = 0; k < m->n_sizes; k++)
        e += m->size_p[k] * (gpu_weighted ? ldexp(1, k) : 1) *
             clipped_mean(mu + m->dur_beta * k, m->dur_sigma, m->dur_lo_s, m->dur_hi_s);
    return e;
}

/* mu such that the mixture's median is the published one (the CDF at the
 * median falls as mu grows). */
static double solve_mu(const ctsynth_model_t *m, double median)
{
    double lo = log(median) - fabs(m->dur_beta) * m->n_sizes - 60, hi = log(median) + 60;
    for (int it = 0; it < 80; it++) {
        double mid = (lo + hi) / 2;
        if (mix_cdf(m, mid, median) > 0.5)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* sigma (and mu) such that the mixture has the published median and mean:
 * at a fixed median the mean grows with sigma. false when even the widest
 * sigma falls short. */
static bool solve_sigma(const ctsynth_profile_t *p, ctsynth_model_t *m)
{
    double lo = 1e-3, hi = 8;
    m->dur_sigma = hi;
    if (mix_mean(m, solve_mu(m, p->run_time_median_s), false) < p->run_time_mean_s)
        return false;
    for (int it = 0; it < 60; it++) {
        m->dur_sigma = (lo + hi) / 2;
        if (mix_mean(m, solve_mu(m, p->run_time_median_s), false) < p->run_time_mean_s)
            lo = m->dur_sigma;
        else
            hi = m->dur_sigma;
    }
    m->dur_sigma = (lo + hi) / 2;
    m->dur_mu = solve_mu(m, p->run_time_median_s);
    return true;
}

/* The run-time model: median and mean as published and, where the trace
 * publishes its GPU time, beta (how much longer a job of twice the GPUs
 * runs) such that the mean GPU-seconds per job is the published one
 * (it grows with beta); else sizes and run times are independent. */
static int fit_durations(const ctsynth_profile_t *p, ctsynth_model_t *m, err_t *err)
{
    double target = p->gpu_time_s > 0 ? p->gpu_time_s / p->gpu_jobs : 0, lo = -3, hi = 3;
    m->dur_lo_s = DUR_MIN_S;
    m->dur_hi_s = p->run_time_max_s;
    m->dur_beta = 0;
    if (!(p->run_time_mean_s > p->run_time_median_s && p->run_time_max_s > p->run_time_mean_s) ||
        !solve_sigma(p, m))
        return err_setf(err, ERR_INPUT, CTSYNTH_CATALOG, p->name,
                        "run_time_mean_s %g fits no log-normal of median %g clipped at %g",
                        p->run_time_mean_s, p->run_time_median_s, p->run_time_max_s);
    if (target <= 0 || m->n_sizes == 1)
        return ERR_OK;
    for (int it = 0; it < 50; it++) {
        m->dur_beta = (lo + hi) / 2;
        if (!solve_sigma(p, m) || mix_mean(m, m->dur_mu, true) > target)
            hi = m->dur_beta;
        else
            lo = m->dur_beta;
    }
    m->dur_beta = lo;
    if (!solve_sigma(p, m) || fabs(mix_mean(m, m->dur_mu, true) / target - 1) > 0.01)
        return err_setf(err, ERR_INPUT, CTSYNTH_CATALOG, p->name,
                        "gpu_time_s %g: no coupling of size and run time reaches %g GPU-s a job",
                        p->gpu_time_s, target);
    return ERR_OK;
}

/* The mean of sizes 2^k (k = 1..kmax) weighted r^k. */
static double multi_mean(double r, int kmax)
{
    double w = 0, s = 0, rk = 1;
    for (int k = 1; k <= kmax; k++) {
        rk *= r;
        w += rk;
        s += rk * ldexp(1, k);
    }
    return s / w;
}

/* The size distribution: CTSYNTH_SINGLE_SHARE on 1 GPU, the rest on 2^k
 * with weights r^k, r such that the mean is the published one. */
static int fit_sizes(const ctsynth_profile_t *p, ctsynth_model_t *m, err_t *err)
{
    int kmax = 0;
    while (kmax < 22 && ldexp(1, kmax + 1) <= p->gpus_max)
        kmax++;
    m->n_sizes = kmax + 1;
    memset(m->size_p, 0, sizeof m->size_p);
    if (p->gpus_mean <= 1 || kmax == 0) { /* fractions of a GPU: one whole GPU each */
        m->n_sizes = 1;
        m->size_p[0] = 1;
        return ERR_OK;
    }
    double q = CTSYNTH_SINGLE_SHARE, target = (p->gpus_mean - q) / (1 - q);
    if (!(target > 2 && target < ldexp(1, kmax)))
        return err_setf(err, ERR_INPUT, CTSYNTH_CATALOG, p->name,
                        "gpus_mean %g is out of reach of sizes 1..%g with %g%% single-GPU jobs",
                        p->gpus_mean, ldexp(1, kmax), 100 * q);
    double lo = -30, hi = 30; /* log r */
    for (int it = 0; it < 200; it++) {
        double mid = (lo + hi) / 2;
        if (multi_mean(exp(mid), kmax) < target)
            lo = mid;
        else
            hi = mid;
    }
    double r = exp((lo + hi) / 2), w = 0, rk = 1;
    for (int k = 1; k <= kmax; k++)
        w += (rk *= r);
    m->size_p[0] = q;
    rk = 1;
    for (int k = 1; k <= kmax; k++)
        m->size_p[k] = (1 - q) * (rk *= r) / w;
    return ERR_OK;
}

int ctsynth_fit(const ctsynth_profile_t *p, ctsynth_model_t *m, err_t *err)
{
    memset(m, 0, sizeof *m);
    m->rate_per_gpu_s = p->gpu_jobs / (p->span_days * 86400) / p->cluster_gpus;
    int rc = fit_sizes(p, m, err);
    return rc ? rc : fit_durations(p, m, err);
}

double ctsynth_mean_gpu_s(const ctsynth_model_t *m)
{
    return mix_mean(m, m->dur_mu, true);
}

/* A draw from a discrete distribution p[0..n). */
static int pick(gsl_rng *r, const double *p, int n)
{
    double u = gsl_rng_uniform(r), acc = 0;
    for (int i = 0; i < n; i++)
        if (u < (acc += p[i]))
            return i;
    return n - 1;
}

/* The outcome shares normalised (they are rounded to 3 places and may sum
 * to 0.999 or 1.001); all zero when not published. */
static void outcome_p(const ctsynth_profile_t *p, double out[3])
{
    double s = 0;
    for (int i = 0; i < 3; i++)
        s += p->share[i] > 0 ? p->share[i] : 0;
    for (int i = 0; i < 3; i++)
        out[i] = s > 0 && p->share[i] > 0 ? p->share[i] / s : 0;
}

static int draw_jobs(const ctsynth_profile_t *p, const ctsynth_model_t *m,
                     const ctsynth_spec_t *spec, double rate, gsl_rng *r, cjobs_t *out,
                     err_t *err)
{
    double t_s = 0, op[3];
    outcome_p(p, op);
    int rc = ERR_OK;
    for (int i = 0; !rc && i < spec->n_jobs; i++) {
        char name[96];
        int k = pick(r, m->size_p, m->n_sizes), g = 1 << k;
        double d = gsl_ran_lognormal(r, m->dur_mu + m->dur_beta * k, m->dur_sigma);
        d = fmin(fmax(d, m->dur_lo_s), m->dur_hi_s);
        if (op[0] + op[1] + op[2] > 0)
            snprintf(name, sizeof name, "%s-%d-%s", p->name, i, OUTCOME[pick(r, op, 3)]);
        else
            snprintf(name, sizeof name, "%s-%d", p->name, i);
        cjob_t j = {.name = name, .gpus = g < spec->pool_gpus ? g : spec->pool_gpus,
                    .submit_ms = (int64_t)llround(t_s * 1000),
                    .duration_ms = (int64_t)llround(d * 1000), .preemptible = true,
                    .line = i + 1, .trace_start_ms = -1};
        rc = cjobs_add(out, &j, err);
        t_s += gsl_ran_exponential(r, 1.0 / rate);
    }
    return rc;
}

int ctsynth_make(const ctsynth_profile_t *p, const ctsynth_spec_t *spec, cjobs_t *out,
                 ctsynth_model_t *model, double *rate_per_s, err_t *err)
{
    memset(out, 0, sizeof *out);
    ctsynth_model_t m;
    if (spec->n_jobs < 1 || spec->pool_gpus < 1)
        return err_set(err, ERR_INPUT, "--synthesize: needs at least one job and one GPU");
    if (!(spec->load >= 0 && spec->load <= 100))
        return err_set(err, ERR_INPUT, "--load: must be in (0, 100] (got %g)", spec->load);
    int rc = ctsynth_fit(p, &m, err);
    if (rc)
        return rc;
    double rate = spec->load > 0 ? spec->load * spec->pool_gpus / ctsynth_mean_gpu_s(&m)
                                 : m.rate_per_gpu_s * spec->pool_gpus;
    if (rate_per_s)
        *rate_per_s = rate;
    if (model)
        *model = m;
    gsl_rng *r = rng_create(spec->seed, 0, err);
    if (!r)
        return err->code;
    rc = draw_jobs(p, &m, spec, rate, r, out, err);
    rng_destroy(r);
    if (rc)
        cjobs_free(out);
    return rc;
}
