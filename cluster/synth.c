#include "cluster/synth.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "common/rng.h"

/* The mix (ASSUMED, see the header). */
static const int SIZES[] = {1, 2, 4, 8, 16, 32};
static const double SIZE_P[] = {0.60, 0.10, 0.10, 0.12, 0.05, 0.03};
#define N_SIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
#define DUR_MEDIAN_S 600.0
#define DUR_SIGMA 2.0
#define DUR_MIN_S 60.0
#define DUR_MAX_S (30 * 86400.0)

double csynth_mean_gpu_s(void)
{
    double g = 0;
    for (int i = 0; i < N_SIZES; i++)
        g += SIZES[i] * SIZE_P[i];
    return g * DUR_MEDIAN_S * exp(DUR_SIGMA * DUR_SIGMA / 2);
}

static int draw_size(gsl_rng *r, int cap)
{
    double u = gsl_rng_uniform(r), acc = 0;
    int g = SIZES[N_SIZES - 1];
    for (int i = 0; i < N_SIZES; i++) {
        acc += SIZE_P[i];
        if (u < acc) {
            g = SIZES[i];
            break;
        }
    }
    return g < cap ? g : cap;
}

int csynth_make(const csynth_spec_t *spec, cjobs_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (spec->n_jobs < 1 || spec->pool_gpus < 1)
        return err_set(err, ERR_INPUT, "--synthesize: needs at least one job and one GPU");
    if (!(spec->load > 0 && spec->load <= 100))
        return err_set(err, ERR_INPUT, "--load: must be in (0, 100] (got %g)", spec->load);
    gsl_rng *r = rng_create(spec->seed, 0, err);
    if (!r)
        return err->code;
    /* arrivals per second that offer load x the pool's GPU-seconds */
    double rate = spec->load * spec->pool_gpus / csynth_mean_gpu_s(), t_s = 0;
    int rc = ERR_OK;
    for (int i = 0; !rc && i < spec->n_jobs; i++) {
        char name[32];
        snprintf(name, sizeof name, "s%d", i);
        double d = gsl_ran_lognormal(r, log(DUR_MEDIAN_S), DUR_SIGMA);
        d = fmin(fmax(d, DUR_MIN_S), DUR_MAX_S);
        cjob_t j = {.name = name, .gpus = draw_size(r, spec->pool_gpus),
                    .submit_ms = (int64_t)llround(t_s * 1000),
                    .duration_ms = (int64_t)llround(d * 1000),
                    .preemptible = true, .line = i + 1, .trace_start_ms = -1};
        rc = cjobs_add(out, &j, err);
        t_s += gsl_ran_exponential(r, 1.0 / rate);
    }
    rng_destroy(r);
    if (rc)
        cjobs_free(out);
    return rc;
}
