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

/* Where column d of row r goes in the sliced layout (smem_fill_rows_kslices). */
static uint32_t kslice_offset(const smem_tile *t, int r, int d, int global_col)
{
    return (uint32_t)(d / 16) * t->bytes + smem_tile_offset(t, r, global_col ? d : d % 16);
}

void smem_fill_rows_kslices(uint8_t *img, const smem_tile *t, const uint16_t *src, int row0, int rows, int ld, int cols,
                            int global_col)
{
    for (int r = 0; r < t->mn; r++)
        for (int d = 0; d < cols; d += 8) { /* a 16-byte chunk: contiguous in either reading */
            uint8_t *dst = img + kslice_offset(t, r, d, global_col);
            if (row0 + r < rows) memcpy(dst, src + (size_t)(row0 + r) * ld + d, 16);
            else memset(dst, 0, 16);
        }
}

uint32_t smem_kslices_bytes(const smem_tile *t, int cols)
{
    uint32_t end = (uint32_t)(cols / 16) * t->bytes;
    for (int r = 0; r < t->mn; r++)
        for (int d = 0; d < cols; d += 8) {
            const uint32_t e = kslice_offset(t, r, d, 1) + 16u;
            if (e > end) end = e;
        }
    return end;
}
