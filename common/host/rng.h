/* Seeded random numbers: xoshiro256** seeded through splitmix64. Same seed, same stream, on every
 * machine; the generator is specified by its algorithm, not by the C library. */
#ifndef FMHA_RNG_H
#define FMHA_RNG_H

#include <stdint.h>

typedef struct { uint64_t s[4]; } rng_t;

void     rng_seed(rng_t *r, uint64_t seed);
uint64_t rng_next(rng_t *r);
double   rng_uniform(rng_t *r);                 /* [0, 1), 53 random bits */
int      rng_int(rng_t *r, int lo, int hi);     /* uniform in [lo, hi], inclusive */
double   rng_normal(rng_t *r);                  /* N(0, 1), Box-Muller */

#endif
