/* bf16 <-> f32 on the host, bit-exact with the hardware's round-to-nearest-even conversion
 * (PTX cvt.rn.bf16.f32) for every finite and infinite input.
 *
 * bf16 is the top 16 bits of an IEEE f32: 1 sign, 8 exponent, 7 mantissa bits. Rounding adds
 * 0x7FFF plus the lowest kept bit, then truncates: ties go to the even neighbour, values past the
 * largest finite bf16 round to infinity, subnormals round like any other value (same exponent
 * field, no special case). NaN must not go through the addition (a NaN with a low payload would
 * round to infinity), so NaN keeps its sign and top payload bits and gets the quiet bit set. The
 * hardware returns the canonical NaN 0x7FFF instead; both are NaN, which is what the tests check. */
#ifndef FMHA_BF16_H
#define FMHA_BF16_H

#include <stdint.h>
#include <string.h>

static inline uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline uint16_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* Round an f32 value to the nearest bf16 and back: the value a bf16 tensor would hold. */
static inline float bf16_round(float f) { return bf16_to_f32(f32_to_bf16(f)); }

#endif
