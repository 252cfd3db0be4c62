/* Seeded RNG: reproducible streams, bounds, and the moments of the normal generator. */
#include <criterion/criterion.h>
#include <math.h>

#include "host/rng.h"

Test(rng, same_seed_same_stream_different_seed_different)
{
    rng_t a, b, c;
    rng_seed(&a, 42); rng_seed(&b, 42); rng_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rng_next(&a), y = rng_next(&b), z = rng_next(&c);
        cr_assert_eq(x, y);
        differ += x != z;
    }
    cr_expect(differ > 95);
}

Test(rng, int_range_is_inclusive)
{
    rng_t r;
    rng_seed(&r, 1);
    int seen_lo = 0, seen_hi = 0;
    for (int i = 0; i < 10000; i++) {
        int x = rng_int(&r, -2, 2);
        cr_assert(x >= -2 && x <= 2);
        seen_lo |= x == -2;
        seen_hi |= x == 2;
    }
    cr_expect(seen_lo && seen_hi);
}

Test(rng, uniform_and_normal_moments)
{
    rng_t r;
    rng_seed(&r, 2);
    double s = 0, s2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double u = rng_uniform(&r);
        cr_assert(u >= 0.0 && u < 1.0);
        double z = rng_normal(&r);
        s += z;
        s2 += z * z;
    }
    double mean = s / n, var = s2 / n - mean * mean;
    cr_expect(fabs(mean) < 0.01, "mean %g", mean);
    cr_expect(fabs(var - 1.0) < 0.02, "variance %g", var);
}
