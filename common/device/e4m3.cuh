// f32 -> e4m3 on the device, two at a time: PTX `cvt.rn.satfinite.e4m3x2.f32 d, a, b` (PTX ISA
// 9.7.9.21 cvt, sm_89 and later) rounds to nearest even and saturates to +-448 (footgun FG19: the
// unsaturated form does not exist for e4m3x2; an overflow would be NaN, e4m3 has no infinity).
// Like the bf16x2 form it puts a in the UPPER byte and b in the lower (footgun FG07's trap), so
// the element with the lower K index goes second. Same code on sm_90a and sm_100a.
#pragma once
#include <stdint.h>

__device__ __forceinline__ uint16_t pack_e4m3x2(float even_k, float odd_k)
{
    uint16_t d;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(odd_k), "f"(even_k));
    return d;
}

// Four f32 -> four e4m3 codes in one word, element 0 in the lowest byte.
__device__ __forceinline__ uint32_t pack_e4m3x4(float x0, float x1, float x2, float x3)
{
    return (uint32_t)pack_e4m3x2(x0, x1) | ((uint32_t)pack_e4m3x2(x2, x3) << 16);
}
