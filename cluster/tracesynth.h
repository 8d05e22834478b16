/* tracesynth: a workload synthesized from a public trace's published
 * statistics (cluster/catalog/traces.json: helios, philly, pai, acme, each
 * figure with its source), for `scaleplan cluster --synthesize NAME`.
 *
 * What is matched, and how:
 *   arrivals   Poisson at the trace's rate per GPU (gpu_jobs / span /
 *              cluster_gpus) times the pool's GPUs; or, with load > 0, at
 *              the rate that offers load x the pool's GPU-time.
 *   run time   log-normal, clipped to [1 s, the published maximum]; a job
 *              of 2^k GPUs has ln run time N(mu + beta k, sigma): mu and sigma
 *              solved so that the mixture's median and clipped mean are the
 *              published ones and, where the trace publishes its GPU time,
 *              beta so that the mean GPU-seconds per job is too (bigger jobs
 *              run longer in every trace; beta 0 where it is not published).
 *   GPUs       1 GPU with probability CTSYNTH_SINGLE_SHARE (ASSUMED: the
 *              papers give a median of 1, not the share), else 2^k GPUs
 *              (k >= 1, up to the published maximum) with weights r^k, r
 *              solved so that the mean is the published mean. A trace whose
 *              jobs ask for fractions of a GPU (PAI: mean 0.683) gets one
 *              whole GPU a job. Sizes are capped at the pool.
 *   outcome    completed / canceled / failed with the published shares, in
 *              the job's name ("helios-12-failed"): the run time already is
 *              the time to that end, as the traces record it.
 * Not matched (said by the command): the diurnal and weekly arrival cycles,
 * users and virtual clusters.
 * Deterministic per seed (common/rng.h).
 */
#ifndef SCALEPLAN_CLUSTER_TRACESYNTH_H
#define SCALEPLAN_CLUSTER_TRACESYNTH_H

#include <stdint.h>

#include "cluster/jobs.h"
#include "common/catalog.h"
#include "common/error.h"

/* The catalog file of the profiles. */
#define CTSYNTH_CATALOG "cluster/catalog/traces.json"
/* Share of single-GPU jobs: ASSUMED (said by the command). */
#define CTSYNTH_SINGLE_SHARE 0.6

/* One trace's published statistics (cluster/catalog/traces.json). */
typedef struct {
    char name[32];
    char paper[256];
    double gpu_jobs;          /* GPU jobs in the trace */
    double span_days;         /* its length */
    double cluster_gpus;      /* the traced cluster's GPUs */
    double run_time_mean_s, run_time_median_s, run_time_max_s;
    double gpus_mean, gpus_median, gpus_max;
    double gpu_time_s;        /* the GPU jobs' GPU-seconds in all; < 0 = not published */
    double share[3];          /* completed, canceled, failed; all < 0 = not published */
} ctsynth_profile_t;

/* The profile called name (ERR_INPUT naming --synthesize for an unknown
 * one; or naming the file and field of a bad entry). */
int ctsynth_load(const char *name, ctsynth_profile_t *out, err_t *err);

/* The fitted model of a profile (what ctsynth_make draws from). */
typedef struct {
    double dur_mu, dur_sigma;   /* log-normal of a 1-GPU job's run time in s, before clipping */
    double dur_beta;            /* ln run time grows by this per doubling of the GPUs */
    double dur_lo_s, dur_hi_s;  /* the clip */
    int n_sizes;                /* sizes 1, 2, 4, ..., 2^(n_sizes-1) */
    double size_p[24];          /* their probabilities */
    double rate_per_gpu_s;      /* published arrivals per second per GPU */
} ctsynth_model_t;

/* Fit the model to p. ERR_INPUT when the published figures admit none
 * (a mean below the median, a mean size above the maximum). */
int ctsynth_fit(const ctsynth_profile_t *p, ctsynth_model_t *m, err_t *err);

typedef struct {
    int n_jobs;
    int pool_gpus;   /* sizes capped at it; the published rate scaled to it */
    double load;     /* > 0: arrivals offer this load instead of the published rate */
    uint64_t seed;
} ctsynth_spec_t;

/* Fill out (initialised here) with n_jobs jobs of profile p. ERR_INPUT for
 * n_jobs < 1, pool_gpus < 1, a load above 100 or a profile that does not
 * fit; ERR_RUNTIME on OOM (out empty). *model gets the fitted model and
 * *rate_per_s the arrival rate used (either may be NULL). */
int ctsynth_make(const ctsynth_profile_t *p, const ctsynth_spec_t *spec, cjobs_t *out,
                 ctsynth_model_t *model, double *rate_per_s, err_t *err);

/* The mean GPU-seconds per job of the fitted model before the pool cap. */
double ctsynth_mean_gpu_s(const ctsynth_model_t *m);

#endif
