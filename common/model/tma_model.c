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

int tma_model_load(const tmap_params *p, int cc_major, const void *global, const int32_t *coords, uint8_t *smem,
                   uint32_t dst, uint32_t *tx_bytes, char *err, size_t len)
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
    if (dst % swizzle_repeat(swz)) {
        snprintf(err, len, "SMEM destination 0x%x is not aligned to the %u-byte swizzle repeat", dst, swizzle_repeat(swz));
        return 2;
    }
    const size_t es = tmap_elem_bits(p->data_type) / 8;
    const int nan_fill = p->oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    uint32_t box[5] = {1, 1, 1, 1, 1};
    for (unsigned i = 0; i < p->rank; i++) box[i] = p->box_dim[i];
    const uint8_t *g = global;
    uint32_t off = 0; /* dense offset of the element in the box */
    for (uint32_t i4 = 0; i4 < box[4]; i4++)
        for (uint32_t i3 = 0; i3 < box[3]; i3++)
            for (uint32_t i2 = 0; i2 < box[2]; i2++)
                for (uint32_t i1 = 0; i1 < box[1]; i1++)
                    for (uint32_t i0 = 0; i0 < box[0]; i0++, off += (uint32_t)es) {
                        const uint32_t idx[5] = {i0, i1, i2, i3, i4};
                        int inside = 1;
                        uint64_t at = 0;
                        for (unsigned d = 0; d < p->rank; d++) {
                            const int64_t c = (int64_t)coords[d] + idx[d];
                            if (c < 0 || (uint64_t)c >= p->global_dim[d]) inside = 0;
                            else at += (uint64_t)c * (d == 0 ? es : p->global_strides[d - 1]);
                        }
                        uint8_t *to = smem + swizzle_apply(dst + off, swz);
                        if (inside) memcpy(to, g + at, es);
                        /* the NaN's bit pattern is an assumption (the canonical quiet NaN) */
                        else if (nan_fill && es == 2) memcpy(to, &(uint16_t){0x7FC0u}, 2);
                        else if (nan_fill && es == 4) memcpy(to, &(uint32_t){0x7FC00000u}, 4);
                        else memset(to, 0, es);
                    }
    *tx_bytes = tma_box_bytes(p);
    return 0;
}
