/* A fixed-seed generator for the models' tests (splitmix64), so every failure
 * reproduces. Header-only; each test file includes it once. */
#ifndef MDL_TEST_RNG_H
#define MDL_TEST_RNG_H

#include <math.h>
#include <stdint.h>

static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* uniform in (0, 1] */
static inline double rng_unit(uint64_t *s)
{
    return ((double)(rng_next(s) >> 11) + 1.0) / 9007199254740992.0;
}

static inline double rng_exp(uint64_t *s, double mean)
{
    return -mean * log(rng_unit(s));
}

static inline double rng_normal(uint64_t *s)
{
    return sqrt(-2.0 * log(rng_unit(s))) * cos(2.0 * M_PI * rng_unit(s));
}

#endif
