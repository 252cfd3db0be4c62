#include "model/tma_model.h"

#include <stdio.h>
#include <string.h>

#include "model/canonical.h"

uint32_t tma_box_bytes(const tmap_params *p)
{
    uint64_t n = tmap_elem_bits(p->data_type) / 8;
    for (unsigned i = 0; i < p->rank; i++) n *= p->box_dim[i];
    return (uint32_t)n;
}

static swizzle_mode swizzle_of(int s)
{
    return s == CU_TENSOR_MAP_SWIZZLE_128B ? SWZ_128B : s == CU_TENSOR_MAP_SWIZZLE_64B ? SWZ_64B
         : s == CU_TENSOR_MAP_SWIZZLE_32B ? SWZ_32B : SWZ_NONE;
}

uint32_t tma_smem_row_bytes(const tmap_params *p)
{
    const uint32_t inner = p->box_dim[0] * (uint32_t)(tmap_elem_bits(p->data_type) / 8);
    const swizzle_mode swz = swizzle_of(p->swizzle);
    const uint32_t span = swz == SWZ_NONE ? 0u : (uint32_t)swizzle_span(swz);
    return inner > span ? inner : span;
}

uint32_t tma_smem_bytes(const tmap_params *p)
{
    uint64_t n = tma_smem_row_bytes(p);
    for (unsigned i = 1; i < p->rank; i++) n *= p->box_dim[i];
    return (uint32_t)n;
}

/* The checks both directions share: 0, or 2 with the message. */
static int covered(const tmap_params *p, int cc_major, uint32_t smem_off, char *err, size_t len)
{
    char why[256];
    if (tmap_check(p, cc_major, why, sizeof why)) {
        snprintf(err, len, "tensor map refused: %s", why);
        return 2;
    }
    if (p->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || tmap_is_packed(p->data_type) ||
        p->swizzle > CU_TENSOR_MAP_SWIZZLE_128B) {
        snprintf(err, len, "tma_model covers INTERLEAVE_NONE, unpacked types and swizzle NONE/32B/64B/128B only");
        return 2;
    }
    for (unsigned i = 0; i < p->rank; i++)
        if (p->element_strides[i] != 1) {
            snprintf(err, len, "tma_model covers elementStrides of 1 only (elementStrides[%u]=%u)", i, p->element_strides[i]);
            return 2;
        }
    const swizzle_mode swz = swizzle_of(p->swizzle);
    if (smem_off % swizzle_repeat(swz)) {
        snprintf(err, len, "SMEM address 0x%x is not aligned to the %u-byte swizzle repeat", smem_off, swizzle_repeat(swz));
        return 2;
    }
    return 0;
}

/* Every element of the box in its dense order: its SMEM byte (swizzled) and, when inside the
 * tensor, its global byte offset (else -1). */
typedef void (*box_visit)(void *ctx, uint32_t smem_byte, int64_t global_byte, size_t es);

static void walk_box(const tmap_params *p, const int32_t *coords, uint32_t smem_off, box_visit f, void *ctx)
{
    const swizzle_mode swz = swizzle_of(p->swizzle);
    const size_t es = tmap_elem_bits(p->data_type) / 8;
    const uint32_t pitch = tma_smem_row_bytes(p);
    uint32_t box[5] = {1, 1, 1, 1, 1};
    for (unsigned i = 0; i < p->rank; i++) box[i] = p->box_dim[i];
    uint32_t row = 0; /* the box row (every index but dim 0's), in the dense order */
    for (uint32_t i4 = 0; i4 < box[4]; i4++)
        for (uint32_t i3 = 0; i3 < box[3]; i3++)
            for (uint32_t i2 = 0; i2 < box[2]; i2++)
                for (uint32_t i1 = 0; i1 < box[1]; i1++, row++)
                    for (uint32_t i0 = 0; i0 < box[0]; i0++) {
                        const uint32_t off = row * pitch + i0 * (uint32_t)es;
                        const uint32_t idx[5] = {i0, i1, i2, i3, i4};
                        int64_t at = 0;
                        for (unsigned d = 0; d < p->rank && at >= 0; d++) {
                            const int64_t c = (int64_t)coords[d] + idx[d];
                            if (c < 0 || (uint64_t)c >= p->global_dim[d]) at = -1;
                            else at += c * (int64_t)(d == 0 ? es : p->global_strides[d - 1]);
                        }
                        f(ctx, swizzle_apply(smem_off + off, swz), at, es);
                    }
}

typedef struct {
    const uint8_t *g;
    uint8_t *smem;
    int nan_fill;
} load_ctx;

static void load_one(void *ctx, uint32_t smem_byte, int64_t global_byte, size_t es)
{
    load_ctx *c = ctx;
    uint8_t *to = c->smem + smem_byte;
    if (global_byte >= 0) memcpy(to, c->g + global_byte, es);
    /* the NaN the H200 writes: 0x7FF7 per 16 bits, for bf16 and f32 alike (f32 0x7FF77FF7), read off
     * its SMEM images (tests/data/tma_conformance_h200.csv) */
    else if (c->nan_fill && (es == 2 || es == 4)) for (size_t b = 0; b < es; b += 2) memcpy(to + b, &(uint16_t){0x7FF7u}, 2);
    else memset(to, 0, es);
}

int tma_model_load(const tmap_params *p, int cc_major, const void *global, const int32_t *coords, uint8_t *smem,
                   uint32_t dst, uint32_t *tx_bytes, char *err, size_t len)
{
    if (covered(p, cc_major, dst, err, len)) return 2;
    load_ctx c = {global, smem, p->oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA};
    walk_box(p, coords, dst, load_one, &c);
    *tx_bytes = tma_box_bytes(p);
    return 0;
}

typedef struct {
    uint8_t *g;
    const uint8_t *smem;
} store_ctx;

static void store_one(void *ctx, uint32_t smem_byte, int64_t global_byte, size_t es)
{
    store_ctx *c = ctx;
    if (global_byte >= 0) memcpy(c->g + global_byte, c->smem + smem_byte, es); /* outside: clipped */
}

int tma_model_store(const tmap_params *p, int cc_major, void *global, const int32_t *coords, const uint8_t *smem,
                    uint32_t src, char *err, size_t len)
{
    if (covered(p, cc_major, src, err, len)) return 2;
    store_ctx c = {global, smem};
    walk_box(p, coords, src, store_one, &c);
    return 0;
}

void tma_queue_init(tma_store_queue *q, uint8_t *view, uint32_t bytes)
{
    memset(q, 0, sizeof *q);
    q->view = view;
    q->bytes = bytes;
}

void tma_queue_fence(tma_store_queue *q, const uint8_t *smem) { memcpy(q->view, smem, q->bytes); }

int tma_queue_store(tma_store_queue *q, const tmap_params *p, const int32_t *coords, uint32_t src)
{
    if (q->n >= TMA_QUEUE_MAX) return 2;
    q->p[q->n] = *p;
    for (unsigned i = 0; i < 5; i++) q->coords[q->n][i] = i < p->rank ? coords[i] : 0;
    q->src[q->n] = src;
    q->n++;
    return 0;
}

int tma_queue_wait_read(tma_store_queue *q, int cc_major, void *global, char *err, size_t len)
{
    for (int i = 0; i < q->n; i++)
        if (tma_model_store(&q->p[i], cc_major, global, q->coords[i], q->view, q->src[i], err, len)) return 2;
    q->n = 0;
    return 0;
}
