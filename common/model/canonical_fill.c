#include "model/canonical_fill.h"

#include <string.h>

void smem_fill_rows_kmajor(uint8_t *img, const smem_tile *t, const uint16_t *src, int row0, int rows, int ld)
{
    for (int r = 0; r < t->mn; r++)
        for (int kc = 0; kc < t->k; kc += 8) {
            uint8_t *dst = img + smem_tile_offset(t, r, kc); /* a 16-byte chunk: contiguous */
            if (row0 + r < rows) memcpy(dst, src + (size_t)(row0 + r) * ld + kc, 16);
            else memset(dst, 0, 16);
        }
}

void smem_fill_rows_mnmajor(uint8_t *img, const smem_tile *t, const uint16_t *src, int row0, int rows, int ld)
{
    for (int r = 0; r < t->k; r++)
        for (int mc = 0; mc < t->mn; mc += 8) {
            uint8_t *dst = img + smem_tile_offset(t, mc, r);
            if (row0 + r < rows) memcpy(dst, src + (size_t)(row0 + r) * ld + mc, 16);
            else memset(dst, 0, 16);
        }
}
