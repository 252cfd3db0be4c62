// Two f32 -> one 32-bit word of two bf16, the way MMA operands want them: the element with the
// lower K index in the LOW half. PTX `cvt.rn.bf16x2.f32 d, a, b` puts a in the UPPER half and b in
// the lower (PTX ISA 9.7.9.21 cvt), so the odd element goes first (footgun FG07). sm_80 and later.
#pragma once

#include <stdint.h>

__device__ __forceinline__ uint32_t pack_bf16x2(float even_k, float odd_k)
{
    uint32_t d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(odd_k), "f"(even_k));
    return d;
}

// The two bf16 of one 32-bit word as f32 (element 2k in the low half, as pack_bf16x2 stores it).
__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }

// The largest |x| of the 8 bf16 in 16 bytes, folded into amax (stage D's per-row Q scale).
__device__ __forceinline__ float bf16x8_absmax(uint4 x, float amax)
{
    const uint32_t w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int k = 0; k < 4; k++) amax = fmaxf(amax, fmaxf(fabsf(bf16_lo(w[k])), fabsf(bf16_hi(w[k]))));
    return amax;
}
