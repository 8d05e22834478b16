/* synth: a synthesized heavy-tailed workload for a GPU pool, from a seed.
 *
 * The shape follows what the published studies of shared deep-learning
 * clusters (Microsoft's Philly, Jeon et al., ATC 2019; SenseTime's Helios,
 * Hu et al., SC 2021) describe in words: most jobs ask for one GPU, a few
 * for many; run times are heavy-tailed (a small share of long jobs holds
 * most of the GPU time); arrivals are Poisson. The numbers themselves are
 * ASSUMED here, not fitted to either trace (said in --help):
 *   gpus       1 (60%), 2 (10%), 4 (10%), 8 (12%), 16 (5%), 32 (3%),
 *              capped at the pool
 *   duration   log-normal, median 10 min, sigma 2.0 (mean about 74 min),
 *              clipped to [1 min, 30 days]
 *   arrivals   Poisson at the rate that offers `load` times the pool's
 *              GPU-time (load 1.0 = as much work as the pool can do)
 * Deterministic per seed (common/rng.h).
 */
#ifndef SCALEPLAN_CLUSTER_SYNTH_H
#define SCALEPLAN_CLUSTER_SYNTH_H

#include <stdint.h>

#include "cluster/jobs.h"
#include "common/error.h"

typedef struct {
    int n_jobs;
    int pool_gpus;  /* sizes are capped at it; the rate is set for it */
    double load;    /* offered GPU-time over capacity, > 0 */
    uint64_t seed;
} csynth_spec_t;

/* The expected GPU-seconds of one job of the mix (before the pool cap):
 * E[gpus] x E[duration] (they are drawn independently). */
double csynth_mean_gpu_s(void);

/* Fill out (initialised here) with n_jobs jobs "s0", "s1", ... .
 * ERR_INPUT for n_jobs < 1, pool_gpus < 1 or load not in (0, 100];
 * ERR_RUNTIME on OOM (out empty). */
int csynth_make(const csynth_spec_t *spec, cjobs_t *out, err_t *err);

#endif
