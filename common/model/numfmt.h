/* Decoding the element types the MMAs read: bf16, f16, e4m3 and e5m2 bit patterns -> double.
 * e4m3 (OCP "E4M3FN", PTX .e4m3): bias 7, no infinity, S.1111.111 is NaN, largest finite 448.
 * e5m2: bias 15, IEEE-like with infinities and NaNs. Host only. */
#ifndef FMHA_MODEL_NUMFMT_H
#define FMHA_MODEL_NUMFMT_H

#include <math.h>
#include <stdint.h>

static inline double decode_bf16(uint16_t h)
{
    union { uint32_t u; float f; } v = {(uint32_t)h << 16};
    return (double)v.f;
}

static inline double decode_f16(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double x = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -x : x;
}

static inline double decode_e4m3(uint8_t b)
{
    int s = b >> 7, e = (b >> 3) & 0xF, m = b & 7;
    double x = (e == 15 && m == 7) ? NAN : e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
    return s ? -x : x;
}

static inline double decode_e5m2(uint8_t b)
{
    int s = b >> 7, e = (b >> 2) & 0x1F, m = b & 3;
    double x = e == 0 ? ldexp(m, -16) : e == 31 ? (m ? NAN : INFINITY) : ldexp(4 + m, e - 17);
    return s ? -x : x;
}

#endif
