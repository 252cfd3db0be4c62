#include "host/paged_kv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/fp8.h"

static int pages_of(const paged_kv *c, int b) { return (c->seqlens[b] + c->page_size - 1) / c->page_size; }

int paged_kv_validate(const paged_kv *c, char *err, size_t len)
{
    const int ps = c->page_size;
    if (ps != 16 && ps != 32 && ps != 64 && ps != 128 && ps != 256) {
        snprintf(err, len, "--page=%d: the page size must be 16, 32, 64, 128 or 256 tokens", ps);
        return 2;
    }
    for (int b = 0; b < c->b; b++) {
        if (c->seqlens[b] < 1) {
            snprintf(err, len, "seqlens[%d]=%d: every sequence needs at least one token", b, c->seqlens[b]);
            return 2;
        }
        if (pages_of(c, b) > c->max_pages) {
            snprintf(err, len, "seqlens[%d]=%d: needs %d pages of %d tokens, but its block-table row has %d", b,
                     c->seqlens[b], pages_of(c, b), ps, c->max_pages);
            return 2;
        }
        for (int j = 0; j < pages_of(c, b); j++) {
            const int32_t p = c->block_table[(size_t)b * c->max_pages + j];
            if (p < 0 || p >= c->num_pages) {
                snprintf(err, len, "block_table[%d][%d]=%d: a page index must be in [0, %d)", b, j, p, c->num_pages);
                return 2;
            }
        }
        for (int t = 0; c->k_scale && t < c->seqlens[b]; t++)
            for (int h = 0; h < c->hkv; h++) {
                const size_t r = paged_kv_row(c, b, t, h);
                const float ks = c->k_scale[r], vs = c->v_scale[r];
                if (!(isfinite(ks) && ks > 0.0f) || !(isfinite(vs) && vs > 0.0f)) {
                    snprintf(err, len, "%s_scale of sequence %d, token %d, head %d is %g: scales must be finite and > 0",
                             !(isfinite(ks) && ks > 0.0f) ? "k" : "v", b, t, h, !(isfinite(ks) && ks > 0.0f) ? ks : vs);
                    return 2;
                }
            }
    }
    return 0;
}

size_t paged_kv_row(const paged_kv *c, int b, int t, int h)
{
    const int32_t page = c->block_table[(size_t)b * c->max_pages + t / c->page_size];
    return ((size_t)page * c->page_size + (size_t)(t % c->page_size)) * (size_t)c->hkv + (size_t)h;
}

int paged_kv_layout(paged_kv *c, int b, int hkv, int d, int page_size, const int32_t *seqlens, int spare_pages,
                    rng_t *rng)
{
    memset(c, 0, sizeof *c);
    c->b = b; c->hkv = hkv; c->d = d; c->page_size = page_size;
    c->seqlens = malloc(sizeof(int32_t) * (size_t)b);
    if (!c->seqlens) return 1;
    memcpy(c->seqlens, seqlens, sizeof(int32_t) * (size_t)b);
    int need = 0;
    for (int i = 0; i < b; i++) {
        const int p = (seqlens[i] + page_size - 1) / page_size;
        need += p;
        if (p > c->max_pages) c->max_pages = p;
    }
    c->num_pages = need + spare_pages;
    c->block_table = malloc(sizeof(int32_t) * (size_t)b * (c->max_pages ? c->max_pages : 1));
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)(c->num_pages ? c->num_pages : 1));
    if (!c->block_table || !perm) { free(perm); return 1; }
    for (int p = 0; p < c->num_pages; p++) perm[p] = p;
    for (int p = c->num_pages - 1; p > 0; p--) { /* Fisher-Yates */
        const int q = (int)(rng_next(rng) % (uint64_t)(p + 1));
        const int32_t t = perm[p];
        perm[p] = perm[q];
        perm[q] = t;
    }
    int next = 0;
    for (int i = 0; i < b; i++)
        for (int j = 0; j < c->max_pages; j++)
            c->block_table[(size_t)i * c->max_pages + j] = j < (seqlens[i] + page_size - 1) / page_size ? perm[next++] : -1;
    free(perm);
    return 0;
}

size_t paged_kv_rows(const paged_kv *c) { return (size_t)c->num_pages * c->page_size * c->hkv; }

int paged_kv_alloc(paged_kv *c)
{
    const size_t rows = paged_kv_rows(c), d = (size_t)c->d;
    c->k = malloc(rows * d); c->v = malloc(rows * d);
    c->k_scale = malloc(rows * sizeof(float)); c->v_scale = malloc(rows * sizeof(float));
    if (!c->k || !c->v || !c->k_scale || !c->v_scale) return 1;
    memset(c->k, 0x7F, rows * d); /* poison: NaN codes and NaN scales, so a read of an unused slot shows */
    memset(c->v, 0x7F, rows * d);
    for (size_t r = 0; r < rows; r++) c->k_scale[r] = c->v_scale[r] = NAN;
    return 0;
}

int paged_kv_build(paged_kv *c, int b, int hkv, int d, int page_size, const int32_t *seqlens, int maxlen,
                   const float *k, const float *v, int spare_pages, rng_t *rng)
{
    if (paged_kv_layout(c, b, hkv, d, page_size, seqlens, spare_pages, rng) || paged_kv_alloc(c)) return 1;
    for (int i = 0; i < b; i++)
        for (int t = 0; t < seqlens[i]; t++)
            for (int h = 0; h < hkv; h++) {
                const size_t src = (((size_t)i * maxlen + t) * hkv + h) * d, r = paged_kv_row(c, i, t, h);
                e4m3_quantise_rows(k + src, 1, (size_t)d, 0.0f, 1, c->k + r * d, &c->k_scale[r], NULL);
                e4m3_quantise_rows(v + src, 1, (size_t)d, 0.0f, 1, c->v + r * d, &c->v_scale[r], NULL);
            }
    return 0;
}

void paged_kv_free(paged_kv *c)
{
    free(c->block_table); free(c->seqlens); free(c->k); free(c->v); free(c->k_scale); free(c->v_scale);
    memset(c, 0, sizeof *c);
}

void paged_kv_token(const paged_kv *c, int which, int b, int t, int h, float *out)
{
    const size_t r = paged_kv_row(c, b, t, h);
    const uint8_t *q = (which ? c->v : c->k) + r * c->d;
    const float s = (which ? c->v_scale : c->k_scale)[r];
    for (int e = 0; e < c->d; e++) out[e] = s * e4m3_decode(q[e]);
}
