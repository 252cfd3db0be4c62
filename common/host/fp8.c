#include "host/fp8.h"

#include <math.h>

#include "model/numfmt.h"

uint8_t e4m3_encode(float x, int saturate)
{
    if (isnan(x)) return 0x7F;
    const uint8_t sign = signbit(x) ? 0x80 : 0x00;
    double a = fabs((double)x);
    /* the finite e4m3 values are m * 2^(e - 10) for normals (e 1..15, m 8..15, except e 15 m 15)
     * and m * 2^-9 for subnormals (m 0..7): round a to the grid of its binade */
    int e2;
    frexp(a, &e2); /* a = f * 2^e2, f in [0.5, 1) */
    int exp = e2 - 1;                       /* a in [2^exp, 2^(exp+1)) */
    if (exp < -6) exp = -6;                 /* the subnormal range shares the step of 2^-6's binade */
    const double step = ldexp(1.0, exp - 3); /* 3 mantissa bits */
    double r = a / step;
    double fl = floor(r);
    double diff = r - fl;
    if (diff > 0.5 || (diff == 0.5 && fmod(fl, 2.0) != 0.0)) fl += 1.0; /* nearest, ties to even */
    const double v = fl * step;
    if (v > 448.0) return saturate ? (uint8_t)(sign | 0x7E) : (uint8_t)(sign | 0x7F);
    if (v == 0.0) return sign;
    /* encode v exactly */
    int ve;
    frexp(v, &ve);
    int be = ve - 1 + 7; /* biased exponent */
    if (be <= 0) return (uint8_t)(sign | (uint8_t)(v / ldexp(1.0, -9))); /* subnormal: m * 2^-9 */
    const int m = (int)(v / ldexp(1.0, ve - 1 - 3)) - 8;
    return (uint8_t)(sign | (uint8_t)(be << 3) | (uint8_t)m);
}

float e4m3_decode(uint8_t b) { return (float)decode_e4m3(b); }

void e4m3_quantise_rows(const float *x, size_t rows, size_t n, float fixed_scale, int saturate, uint8_t *q,
                        float *scale, float *deq)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float s = fixed_scale;
        if (!(s > 0.0f)) {
            float amax = 0.0f;
            for (size_t i = 0; i < n; i++) amax = fmaxf(amax, fabsf(xr[i]));
            s = amax > 0.0f ? amax / E4M3_MAX : 1.0f;
        }
        scale[r] = s;
        for (size_t i = 0; i < n; i++) {
            q[r * n + i] = e4m3_encode(xr[i] / s, saturate);
            if (deq) deq[r * n + i] = s * e4m3_decode(q[r * n + i]);
        }
    }
}
