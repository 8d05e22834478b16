/* rng: deterministic random number streams (GSL) for Monte Carlo work.
 *
 * A run is reproducible from one user seed. Independent streams (one per
 * thread, per trial block, per rank) are derived from (seed, stream id) by a
 * splitmix64 mix, so results do not depend on how work is split across
 * threads as long as each unit of work uses its own stream id.
 */
#ifndef SCALEPLAN_COMMON_RNG_H
#define SCALEPLAN_COMMON_RNG_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "common/error.h"

/* The seed used when the user gives none. */
#define RNG_DEFAULT_SEED 20240723u

/* A well-mixed 64-bit value from seed and stream (splitmix64). */
uint64_t rng_mix(uint64_t seed, uint64_t stream);

/* Create a generator (gsl_rng_mt19937) for (seed, stream). Returns NULL and
 * fills err (ERR_RUNTIME) when memory is short. Free with rng_destroy. */
gsl_rng *rng_create(uint64_t seed, uint64_t stream, err_t *err);
void rng_destroy(gsl_rng *r);

#endif
