#include "mma_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/rng.h"
#include "model/numfmt.h"

/* The bit pattern of an exactly representable value, found by searching the decoder: independent
 * of any encoder under test. */
static void encode(int kind, unsigned fmt, double v, uint8_t *out)
{
    if (kind == MMA_KIND_F16) {
        for (uint32_t h = 0; h < 0x10000u; h++)
            if ((fmt == FMT_BF16 ? decode_bf16((uint16_t)h) : decode_f16((uint16_t)h)) == v) {
                out[0] = (uint8_t)h;
                out[1] = (uint8_t)(h >> 8);
                return;
            }
    } else {
        for (uint32_t b = 0; b < 256; b++)
            if ((fmt == FMT_E4M3 ? decode_e4m3((uint8_t)b) : decode_e5m2((uint8_t)b)) == v) {
                out[0] = (uint8_t)b;
                return;
            }
    }
    abort();
}

int mma_case_make(mma_case *c, int kind, unsigned fmt, int m, int n, int k, operand_major ma,
                  operand_major mb, swizzle_mode swz, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->fmt = fmt;
    c->eb = kind == MMA_KIND_F16 ? 2 : 1;
    c->m = m; c->n = n; c->k = k;
    c->kstep = idesc_k_per_mma(kind);
    c->ta = smem_tile_make(ma, swz, c->eb, m, k);
    c->tb = smem_tile_make(mb, swz, c->eb, n, k);
    c->a_off = 0;
    c->b_off = round_up_u32(c->ta.bytes, 1024);
    c->bytes = c->b_off + round_up_u32(c->tb.bytes, 1024);
    c->img = calloc(c->bytes, 1);
    c->a = malloc(sizeof(double) * (size_t)m * k);
    c->b = malloc(sizeof(double) * (size_t)n * k);
    c->ref = calloc((size_t)m * n, sizeof(double));
    if (!c->img || !c->a || !c->b || !c->ref) abort();
    memset(c->img, 0x7F, c->bytes); /* NaN-ish filler: a read of a byte no element owns shows */
    /* encoding cache for the 7 values */
    uint8_t code[7][2];
    for (int v = -3; v <= 3; v++) encode(kind, fmt, v, code[v + 3]);
    rng_t r;
    rng_seed(&r, seed);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < k; j++) {
            int v = rng_int(&r, -3, 3);
            c->a[i * k + j] = v;
            memcpy(c->img + c->a_off + smem_tile_offset(&c->ta, i, j), code[v + 3], (size_t)c->eb);
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < k; j++) {
            int v = rng_int(&r, -3, 3);
            c->b[i * k + j] = v;
            memcpy(c->img + c->b_off + smem_tile_offset(&c->tb, i, j), code[v + 3], (size_t)c->eb);
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int q = 0; q < k; q++) s += c->a[i * k + q] * c->b[j * k + q];
            c->ref[i * n + j] = s;
        }
    return 0;
}

void mma_case_free(mma_case *c)
{
    free(c->img); free(c->a); free(c->b); free(c->ref);
    memset(c, 0, sizeof *c);
}

uint64_t mma_case_desc_sm90(const mma_case *c, int which, int k)
{
    return which ? smem_tile_desc_sm90(&c->tb, c->b_off, 0, k) : smem_tile_desc_sm90(&c->ta, c->a_off, 0, k);
}

uint64_t mma_case_desc_sm100(const mma_case *c, int which, int k)
{
    return which ? smem_tile_desc_sm100(&c->tb, c->b_off, 0, k) : smem_tile_desc_sm100(&c->ta, c->a_off, 0, k);
}

void mma_case_name(const mma_case *c, char *buf, unsigned len)
{
    static const char *const sw[] = {"none", "32B", "64B", "128B", "128B32", "?"};
    snprintf(buf, len, "%s A:%s B:%s swz=%s m%d n%d k%d", c->kind == MMA_KIND_F16 ? "bf16" : "e4m3",
             c->ta.major == MAJOR_K ? "K" : "MN", c->tb.major == MAJOR_K ? "K" : "MN", sw[c->ta.swz],
             c->m, c->n, c->k);
}
