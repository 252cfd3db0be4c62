/* bf16 <-> f32 conversion: round-to-nearest-even on ties, subnormals, overflow, NaN and Inf.
 * Expected values are hand-derived bit patterns, plus an independent nearest-value search. */
#include <criterion/criterion.h>
#include <math.h>

#include "host/bf16.h"
#include "host/rng.h"

static uint16_t conv(uint32_t bits) { return f32_to_bf16(bits_f32(bits)); }

Test(bf16, exact_values_pass_through)
{
    cr_expect_eq(conv(0x3F800000u), 0x3F80); /* 1.0 */
    cr_expect_eq(conv(0xC0400000u), 0xC040); /* -3.0 */
    cr_expect_eq(conv(0x00000000u), 0x0000); /* +0 */
    cr_expect_eq(conv(0x80000000u), 0x8000); /* -0 keeps its sign */
}

Test(bf16, ties_go_to_even)
{
    /* 1 + 2^-8 lies exactly between 1.0 (0x3F80, even) and 1 + 2^-7 (0x3F81, odd) */
    cr_expect_eq(conv(0x3F808000u), 0x3F80);
    /* 1 + 3*2^-8 lies between 0x3F81 (odd) and 0x3F82 (even) */
    cr_expect_eq(conv(0x3F818000u), 0x3F82);
    /* just above / below the tie */
    cr_expect_eq(conv(0x3F808001u), 0x3F81);
    cr_expect_eq(conv(0x3F807FFFu), 0x3F80);
    /* negative tie */
    cr_expect_eq(conv(0xBF808000u), 0xBF80);
}

Test(bf16, subnormals_round_like_normals)
{
    cr_expect_eq(conv(0x00008000u), 0x0000); /* tie to even (0) */
    cr_expect_eq(conv(0x00018000u), 0x0002); /* tie to even (2) */
    cr_expect_eq(conv(0x00008001u), 0x0001); /* above the tie */
    cr_expect_eq(conv(0x00000001u), 0x0000); /* smallest f32 subnormal -> +0 */
    cr_expect_eq(conv(0x007FFFFFu), 0x0080); /* largest subnormal rounds up to the smallest normal */
    cr_expect_eq(conv(0x80008001u), 0x8001);
}

Test(bf16, overflow_rounds_to_infinity)
{
    cr_expect_eq(conv(0x7F7FFFFFu), 0x7F80); /* FLT_MAX -> +inf (past the largest bf16 0x7F7F) */
    cr_expect_eq(conv(0x7F7F7FFFu), 0x7F7F); /* below the tie: largest finite bf16 */
    cr_expect_eq(conv(0xFF7FFFFFu), 0xFF80);
}

Test(bf16, inf_and_nan)
{
    cr_expect_eq(conv(0x7F800000u), 0x7F80);
    cr_expect_eq(conv(0xFF800000u), 0xFF80);
    /* NaN whose payload sits only in the low 16 bits must stay NaN, not become infinity */
    uint16_t n1 = conv(0x7F800001u);
    cr_expect((n1 & 0x7F80) == 0x7F80 && (n1 & 0x007F) != 0, "0x7F800001 -> 0x%04X is not NaN", n1);
    uint16_t n2 = conv(0xFFC00000u);
    cr_expect(isnan(bf16_to_f32(n2)) && (n2 & 0x8000), "negative quiet NaN -> 0x%04X", n2);
    cr_expect(isnan(bf16_to_f32(conv(0x7FFFFFFFu))));
}

Test(bf16, widening_is_exact_for_all_patterns)
{
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = bf16_to_f32((uint16_t)h);
        cr_assert_eq(f32_bits(f), h << 16);
        if (!isnan(f)) cr_assert_eq(f32_to_bf16(f), h, "round trip of 0x%04X", h);
    }
}

/* Independent reference: the nearest of the two bf16 neighbours by exact double arithmetic,
 * ties to the even mantissa. */
static uint16_t nearest_bf16(float x)
{
    uint32_t u = f32_bits(x);
    uint16_t lo = (uint16_t)(u >> 16);
    uint16_t hi = (uint16_t)(lo + 1);
    double dl = fabs((double)bf16_to_f32(lo) - (double)x);
    double dh = isinf(bf16_to_f32(hi)) ? INFINITY : fabs((double)bf16_to_f32(hi) - (double)x);
    if (isinf(bf16_to_f32(hi))) {
        /* overflow: x rounds to inf iff it is at or past the midpoint to 2^128 */
        double mid = (double)bf16_to_f32(lo) + ldexp(1.0, 127 - 8) * ((lo & 0x8000) ? -1 : 1);
        return fabs((double)x) >= fabs(mid) ? hi : lo;
    }
    if (dl < dh) return lo;
    if (dh < dl) return hi;
    return (lo & 1) ? hi : lo;
}

Test(bf16, random_values_match_nearest_search)
{
    rng_t r;
    rng_seed(&r, 12345);
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)rng_next(&r);
        float x = bits_f32(u);
        if (isnan(x)) continue;
        cr_assert_eq(f32_to_bf16(x), nearest_bf16(x), "x bits 0x%08X", u);
    }
}
