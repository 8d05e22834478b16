#include "common/rng.h"

uint64_t rng_mix(uint64_t seed, uint64_t stream)
{
    /* splitmix64 (Steele, Lea, Flood 2014) applied twice: once to separate
     * the stream ids, once more to decorrelate neighbouring seeds. */
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (stream + 1);
    for (int i = 0; i < 2; i++) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        z += 0x9e3779b97f4a7c15ull;
    }
    return z;
}

gsl_rng *rng_create(uint64_t seed, uint64_t stream, err_t *err)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) {
        err_set(err, ERR_RUNTIME, "out of memory creating a random generator");
        return NULL;
    }
    /* mt19937 takes an unsigned long seed; 0 would select GSL's default. */
    unsigned long s = (unsigned long)rng_mix(seed, stream);
    gsl_rng_set(r, s ? s : 1);
    return r;
}

void rng_destroy(gsl_rng *r)
{
    if (r)
        gsl_rng_free(r);
}
