/* 2^x by the FMA pipe's cubic (common/attn/exp2_poly.h, poly_exp2 in device/fast_exp2.cuh):
 * its relative error against exp2 stays under 1.1e-4 from 2^-126 up, whole x give exact powers of
 * two (the cubic is 1 at 0 and 2 at 1, so 2^x is continuous from one integer to the next), the
 * clamp at -126 holds, and the device's way of finding floor(x) (an add onto 1.5 x 2^23 rounded
 * down, emulated in the host FPU's rounding mode) puts floor(x) << 23 in the bits it shifts, and the
 * whole device form matches the host form bit for bit. A cubic with a coefficient off by 1% fails. */
#include <criterion/criterion.h>
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attn/exp2_poly.h"
#include "host/rng.h"

static double rel_err(float x) { return fabs((double)exp2_poly_ref(x) / exp2((double)x) - 1.0); }

Test(exp2_poly, relative_error_at_most_1_1e_minus_4)
{
    double worst = 0.0;
    float at = 0.0f;
    for (int k = -126 * 4096; k < 100 * 4096; k++) { /* every 1/4096 from -126 to 100 */
        const float x = (float)k / 4096.0f;
        const double e = rel_err(x);
        if (e > worst) worst = e, at = x;
    }
    rng_t r;
    rng_seed(&r, 7);
    for (int n = 0; n < 200000; n++) {
        const float x = (float)(226.0 * rng_uniform(&r) - 126.0);
        const double e = rel_err(x);
        if (e > worst) worst = e, at = x;
    }
    cr_expect(worst < 1.1e-4, "largest relative error %.3e at x = %.6f", worst, at);
    cr_expect(worst > 5e-5, "the bound is tight (%.3e): the test would notice a better or worse cubic", worst);
}

Test(exp2_poly, whole_x_are_exact_and_the_clamp_holds)
{
    for (int j = -126; j < 128; j++)
        cr_expect_eq(exp2_poly_ref((float)j), ldexpf(1.0f, j), "2^%d", j);
    cr_expect_eq(exp2_poly_ref(-1000.0f), ldexpf(1.0f, -126), "clamped at -126");
    cr_expect_eq(exp2_poly_ref(-INFINITY), ldexpf(1.0f, -126), "-inf clamped too (a softmax masks those by select)");
    cr_expect_float_eq(EXP2_POLY_C1 + EXP2_POLY_C2 + EXP2_POLY_C3, 1.0f, 1e-7f, "the cubic is 2 at f = 1");
}

/* The device's floor: t = 1.5 x 2^23 + x rounded down (FADD.RM, __fadd_rd; the host's FPU in
 * round-toward-minus-infinity does the same IEEE add) is 1.5 x 2^23 + floor(x) for |x| < 2^22, and
 * its bits shifted by 23 are floor(x) << 23 (the constant's own bits shift out). The whole device
 * form, built on that add, gives the host form's bits. */
static float add_rounded_down(float a, float b)
{
    const int was = fegetround();
    fesetround(FE_DOWNWARD);
    volatile float va = a, vb = b; /* no constant folding in the default mode, */
    volatile float t = va + vb;   /* and the add stored before the mode is restored */
    fesetround(was);
    return t;
}

static float poly_exp2_device_form(float x)
{
    x = fmaxf(x, -126.0f);
    const float t = add_rounded_down(x, 12582912.0f);
    const float p = exp2_poly_frac(x - (t - 12582912.0f));
    uint32_t pb, tb;
    memcpy(&pb, &p, sizeof pb);
    memcpy(&tb, &t, sizeof tb);
    pb += tb << 23;
    float y;
    memcpy(&y, &pb, sizeof y);
    return y;
}

Test(exp2_poly, the_device_floor_trick)
{
    for (int k = -126 * 64; k < 128 * 64; k++) {
        const float x = (float)k / 64.0f + 1.0f / 8192.0f, j = floorf(x); /* off the grid: the add must round */
        const float t = add_rounded_down(x, 12582912.0f);
        uint32_t tb;
        memcpy(&tb, &t, sizeof tb);
        cr_assert_eq(t - 12582912.0f, j, "x = %g", x);
        cr_assert_eq(tb << 23, (uint32_t)(int32_t)j << 23, "x = %g", x);
        const float d = poly_exp2_device_form(x), h = exp2_poly_ref(x);
        cr_assert_eq(memcmp(&d, &h, sizeof d), 0, "x = %g: device form %a, host form %a", x, d, h);
    }
    /* round to nearest would put x = j + 0.75 on j + 1: the floor needs the rounding mode */
    volatile float vx = 2.75f, vc = 12582912.0f;
    cr_expect_eq((vx + vc) - 12582912.0f, 3.0f, "the default rounding goes up here");
    cr_expect_eq(add_rounded_down(2.75f, 12582912.0f) - 12582912.0f, 2.0f);
}

/* A cubic whose C3 is 1% off (continuity kept through C1) misses the bound: the check can fail. */
Test(exp2_poly, a_perturbed_cubic_misses_the_bound)
{
    const float c3 = EXP2_POLY_C3 * 1.01f, c2 = EXP2_POLY_C2, c1 = 1.0f - c2 - c3;
    double worst = 0.0;
    for (int k = 0; k < 4096; k++) {
        const float f = (float)k / 4096.0f;
        const float p = fmaf(fmaf(fmaf(c3, f, c2), f, c1), f, 1.0f);
        const double e = fabs((double)p / exp2((double)f) - 1.0);
        worst = e > worst ? e : worst;
    }
    cr_expect(worst > 1.1e-4, "a 1%% error in C3 gives %.3e", worst);
}
