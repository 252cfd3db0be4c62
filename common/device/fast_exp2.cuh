// 2^x on the MUFU unit in one instruction. `exp2f` without --use_fast_math is four: a compare
// with -126, a conditional halving, MUFU.EX2 and a conditional square, kept so that results
// below 2^-126 come out as denormals rather than 0. A softmax never needs those: its P is rounded
// to bf16 (or e4m3) and summed into l_i >= 1, so the flush-to-zero form (`ex2.approx.ftz.f32`,
// PTX ISA 9.7.3.21 "ex2": at most 2 ulp from the correctly rounded result, ex2(-inf) = +0, NaN
// stays NaN) gives the same P. It saves the softmax three FP instructions per score.
#pragma once

#include "attn/exp2_poly.h"

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// log2(x) on the MUFU unit in one instruction (`lg2.approx.ftz.f32`, PTX ISA "lg2": at most
// 2^-22 absolute error for x in [0.5, 2], relative 2^-22 elsewhere; lg2(0) = -inf, subnormals
// read as 0). Stage D's ring takes one a tile, for the log of its largest V scale.
__device__ __forceinline__ float fast_log2(float x)
{
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// 2^x on the FMA pipe (attn/exp2_poly.h: a cubic, relative error at most 1.07e-4; x clamped at
// -126): j = floor(x) comes from an add rounded down onto 1.5 x 2^23 (FADD.RM), which leaves j in
// the low mantissa bits, so shifting those bits by 23 puts 2^j into the cubic's exponent. Eight
// instructions (a max, three adds, three FFMAs, an integer multiply-add), none on the MUFU unit.
__device__ __forceinline__ float poly_exp2(float x)
{
    x = fmaxf(x, -126.0f);
    const float t = __fadd_rd(x, 12582912.0f); // 1.5 x 2^23 + floor(x)
    const float p = exp2_poly_frac(x - (t - 12582912.0f));
    return __uint_as_float(__float_as_uint(p) + (__float_as_uint(t) << 23)); // unsigned: the shift wraps
}
