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
