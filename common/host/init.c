#include "host/init.h"

#include "host/bf16.h"

void init_bf16(uint16_t *dst, float *val, size_t n, init_t mode, rng_t *r, int int_lo, int int_hi)
{
    for (size_t i = 0; i < n; i++) {
        float x;
        switch (mode) {
        case INIT_INT:  x = (float)rng_int(r, int_lo, int_hi); break;
        case INIT_RAMP: x = (float)((int)(i % 17) - 8) / 8.0f; break;
        case INIT_ONES: x = 1.0f; break;
        case INIT_RAND:
        default:        x = (float)rng_normal(r); break;
        }
        uint16_t h = f32_to_bf16(x);
        dst[i] = h;
        if (val) val[i] = bf16_to_f32(h);
    }
}

void poison_f32(float *p, size_t n)
{
    float v = bits_f32(POISON_F32);
    for (size_t i = 0; i < n; i++) p[i] = v;
}

void poison_bf16(uint16_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = POISON_BF16;
}

size_t poison_count_f32(const float *p, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += f32_bits(p[i]) == POISON_F32;
    return c;
}

size_t poison_count_bf16(const uint16_t *p, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += p[i] == POISON_BF16;
    return c;
}
