/* The FP8 paged KV cache of stage D, as serving engines lay it out, on the host: K and V each
 * [num_pages, page_size, Hkv, D] e4m3, per-token scales [num_pages, page_size, Hkv] f32 for K and
 * for V, a block table [B, max_pages] int32 (page j of sequence b is block_table[b][j]) and
 * per-sequence lengths seqlens[B] (ragged). Token t of sequence b lives in page
 * block_table[b][t / page_size], slot t % page_size.
 *
 * paged_kv_validate is the host's gate before any launch (exit 2 naming the rule, footgun FG18):
 * the page size is one of 16/32/64/128/256, every length is >= 1, every sequence fits its row of
 * the table, every table entry a sequence uses is in [0, num_pages), every scale of a token in use
 * is finite and > 0 (when the host holds the scales). Entries past a sequence's last page are not read and not checked. */
#ifndef FMHA_HOST_PAGED_KV_H
#define FMHA_HOST_PAGED_KV_H

#include <stddef.h>
#include <stdint.h>

#include "host/rng.h"

typedef struct {
    int b, hkv, d, page_size, num_pages, max_pages;
    int32_t *block_table; /* [b * max_pages] */
    int32_t *seqlens;     /* [b] */
    uint8_t *k, *v;       /* [num_pages, page_size, hkv, d] e4m3 */
    float *k_scale, *v_scale; /* [num_pages, page_size, hkv] */
} paged_kv;

/* 0, or 2 with the broken rule named in err. */
int paged_kv_validate(const paged_kv *c, char *err, size_t len);

/* Index of token t's (head h) row in the [num_pages, page_size, hkv] token-head order: multiply by
 * d for the element offset into k / v. */
size_t paged_kv_row(const paged_kv *c, int b, int t, int h);

/* Build a cache from logical K, V [b][maxlen][hkv][d] (f32; sequence b uses its first seqlens[b]
 * tokens): per-(token, head) scales absmax / 448, saturating e4m3, pages handed out in a shuffled
 * order (no test passes by accident on contiguous pages), spare_pages extra unused pages. The
 * slots past each sequence's last token are poisoned: NaN codes and NaN scales, so anything that
 * reads them shows it. Returns 0, or 1 when out of memory. */
int paged_kv_build(paged_kv *c, int b, int hkv, int d, int page_size, const int32_t *seqlens, int maxlen,
                   const float *k, const float *v, int spare_pages, rng_t *rng);
void paged_kv_free(paged_kv *c);

/* The two halves of paged_kv_build. paged_kv_layout: the lengths, num_pages (pages in use +
 * spare_pages) and the shuffled block table (entries past a sequence's last page are -1); k, v
 * and the scales stay NULL (a device-filled cache needs no host copy). paged_kv_alloc: the host
 * arrays, every slot poisoned. Each returns 0, or 1 when out of memory. */
int paged_kv_layout(paged_kv *c, int b, int hkv, int d, int page_size, const int32_t *seqlens, int spare_pages,
                    rng_t *rng);
int paged_kv_alloc(paged_kv *c);
/* Token-head rows of the whole cache: num_pages * page_size * hkv. */
size_t paged_kv_rows(const paged_kv *c);

/* The dequantised value of K or V (which = 0 / 1) at (b, t, h, :) into out[d]: what the
 * reference reads. No range check: validate first. */
void paged_kv_token(const paged_kv *c, int which, int b, int t, int h, float *out);

#endif
