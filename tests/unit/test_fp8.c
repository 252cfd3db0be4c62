/* e4m3 encoding against the format's own definition: every one of the 256 bit patterns decodes
 * and re-encodes to itself (NaN to a NaN), values between two neighbours round to the nearer and
 * ties to the even mantissa, the largest finite value is 448, and past it a saturating conversion
 * clamps while a plain one gives NaN. The quantiser's scales are absmax / 448, and its
 * dequantised values are within half an e4m3 step of the input. */
#include <criterion/criterion.h>
#include <math.h>

#include "host/fp8.h"
#include "host/rng.h"

Test(fp8, every_pattern_round_trips)
{
    for (int b = 0; b < 256; b++) {
        const float v = e4m3_decode((uint8_t)b);
        if (isnan(v)) {
            cr_expect((b & 0x7F) == 0x7F, "only S.1111.111 is NaN (0x%02x)", b);
            cr_expect_eq(e4m3_encode(v, 0) & 0x7F, 0x7F);
            continue;
        }
        if (v == 0.0f) { cr_expect_eq(e4m3_encode(v, 0), (uint8_t)b, "signed zero 0x%02x", b); continue; }
        cr_expect_eq(e4m3_encode(v, 0), (uint8_t)b, "0x%02x = %g re-encodes as 0x%02x", b, v, e4m3_encode(v, 0));
        cr_expect_eq(e4m3_encode(v, 1), (uint8_t)b);
    }
    cr_expect_eq(e4m3_decode(0x7E), 448.0f);
    cr_expect_eq(e4m3_decode(0x01), 0x1p-9f, "the smallest subnormal");
}

Test(fp8, rounding_is_nearest_even)
{
    /* between every pair of neighbouring positive finite values: the midpoint goes to the even
     * mantissa, a little above or below goes to the nearer one */
    for (int b = 0; b < 0x7E; b++) {
        const float lo = e4m3_decode((uint8_t)b), hi = e4m3_decode((uint8_t)(b + 1)), mid = 0.5f * (lo + hi);
        const uint8_t even = (b & 1) ? (uint8_t)(b + 1) : (uint8_t)b;
        cr_expect_eq(e4m3_encode(mid, 0), even, "midpoint of 0x%02x and 0x%02x", b, b + 1);
        cr_expect_eq(e4m3_encode(mid - (hi - lo) * 0.01f, 0), (uint8_t)b);
        cr_expect_eq(e4m3_encode(mid + (hi - lo) * 0.01f, 0), (uint8_t)(b + 1));
        cr_expect_eq(e4m3_encode(-mid, 0), (uint8_t)(0x80 | even), "the sign is symmetric");
    }
}

Test(fp8, overflow_saturates_or_is_nan)
{
    cr_expect_eq(e4m3_encode(460.0f, 0), 0x7E, "460 rounds down to 448 (below the 464 midpoint)");
    cr_expect_eq(e4m3_encode(464.0f, 0), 0x7E, "464, the midpoint to the absent 480, ties to even: 448 (mantissa 110)");
    cr_expect_eq(e4m3_encode(465.0f, 0), 0x7F, "past the midpoint it would round to 480, which does not exist: NaN");
    cr_expect_eq(e4m3_encode(1e6f, 0), 0x7F);
    cr_expect_eq(e4m3_encode(-1e6f, 0), 0xFF);
    cr_expect_eq(e4m3_encode(465.0f, 1), 0x7E, "saturating: +448");
    cr_expect_eq(e4m3_encode(-1e6f, 1), 0xFE, "saturating: -448");
    cr_expect_eq(e4m3_encode(INFINITY, 1), 0x7E);
}

Test(fp8, quantiser_scales_and_error)
{
    enum { ROWS = 64, N = 128 };
    static float x[ROWS * N], deq[ROWS * N], scale[ROWS];
    static uint8_t q[ROWS * N];
    rng_t r;
    rng_seed(&r, 3);
    for (int i = 0; i < ROWS * N; i++) x[i] = (float)rng_normal(&r) * (float)(1 + i / N);
    for (int i = 0; i < N; i++) x[5 * N + i] = 0.0f; /* an all-zero row */
    e4m3_quantise_rows(x, ROWS, N, 0.0f, 1, q, scale, deq);
    for (int row = 0; row < ROWS; row++) {
        float amax = 0;
        for (int i = 0; i < N; i++) amax = fmaxf(amax, fabsf(x[row * N + i]));
        cr_expect_float_eq(scale[row], amax > 0 ? amax / 448.0f : 1.0f, 1e-6f, "row %d scale", row);
        for (int i = 0; i < N; i++) {
            const float xi = x[row * N + i], err = fabsf(deq[row * N + i] - xi);
            /* half a step of xi's binade (3 mantissa bits), or of the subnormal grid */
            const float step = scale[row] * fmaxf(ldexpf(1.0f, ilogbf(fmaxf(fabsf(xi) / scale[row], 0x1p-6f)) - 3), 0x1p-9f);
            cr_expect_leq(err, 0.5f * step * 1.0001f, "row %d col %d: %g -> %g", row, i, xi, deq[row * N + i]);
        }
    }
}
