/* 2^x by a cubic on the FMA pipe, for part of a softmax's exponentials (FlashAttention-4's trick:
 * the MUFU unit that ex2.approx runs on issues a warp's 32 lanes over 8 cycles of a sub-partition,
 * and two warps' softmaxes queue there; an FFMA chain goes to another pipe).
 *   2^x = 2^j * 2^f, j = floor(x), f = x - j in [0, 1)
 *   2^f ~ 1 + f (C1 + f (C2 + f C3)), with 1 + C1 + C2 + C3 = 2 (continuous across each integer)
 * The coefficients minimise the largest relative error over [0, 1) under that constraint: 1.07e-4
 * (tests/unit/test_exp2_poly.c checks it), where an e4m3 code of P keeps 3 mantissa bits (2^-4)
 * and the row sum adds many such terms. 2^j goes into the exponent bits by an integer add.
 * x is clamped below at -126 (inputs under it give 2^-126: nothing a softmax keeps); x >= 128 overflows into the sign (MUFU gives inf there; both break a row sum). */
#ifndef FMHA_EXP2_POLY_H
#define FMHA_EXP2_POLY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/hd.h"

#define EXP2_POLY_C2 0.22665127883298064f
#define EXP2_POLY_C3 0.07804872116701936f
#define EXP2_POLY_C1 (1.0f - EXP2_POLY_C2 - EXP2_POLY_C3)

/* The cubic of f in [0, 1). */
FMHA_HD float exp2_poly_frac(float f) { return fmaf(fmaf(fmaf(EXP2_POLY_C3, f, EXP2_POLY_C2), f, EXP2_POLY_C1), f, 1.0f); }

/* The host's form (floorf for j); the device's (device/fast_exp2.cuh, poly_exp2) finds j with a
 * rounding-down add instead, the same j for |x| < 2^22. */
FMHA_HD float exp2_poly_ref(float x)
{
    x = x < -126.0f ? -126.0f : x;
    const float j = floorf(x);
    const float p = exp2_poly_frac(x - j);
    uint32_t bits;
    memcpy(&bits, &p, sizeof bits);
    bits += (uint32_t)(int32_t)j << 23;
    float y;
    memcpy(&y, &bits, sizeof y);
    return y;
}

#endif
