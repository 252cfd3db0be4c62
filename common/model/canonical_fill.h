/* Host mirror of common/device/canonical_copy.cuh, for the emu backends: the same rows land in
 * the same bytes of an SMEM image, because both call smem_tile_offset(). */
#ifndef FMHA_MODEL_CANONICAL_FILL_H
#define FMHA_MODEL_CANONICAL_FILL_H

#include <stdint.h>

#include "model/canonical.h"

/* Rows [row0, row0 + t->mn) of a row-major 16-bit [rows x cols] matrix (row pitch ld elements)
 * into the K-major tile t at img; rows at or past `rows` become zeros. */
void smem_fill_rows_kmajor(uint8_t *img, const smem_tile *t, const uint16_t *src, int row0, int rows, int ld);

/* Rows [row0, row0 + t->k) of a row-major [rows x cols] matrix into the MN-major tile t (matrix row
 * = K index, column = MN index: V [kv][d] as the B operand of P V). */
void smem_fill_rows_mnmajor(uint8_t *img, const smem_tile *t, const uint16_t *src, int row0, int rows, int ld);

/* Footgun FG01's layout, the seed's: a K-major operand of `cols` columns (a multiple of 16) as
 * cols / 16 slices, each a [t->mn x 16] tile t (K-major, no swizzle), slice s at img + s * t->bytes,
 * each read by an MMA whose descriptor points at the slice's base. Rows [row0, row0 + t->mn) of a
 * row-major matrix go in (rows at or past `rows` as zeros), column d into slice d / 16 at the tile
 * offset of the local column d % 16, or, with global_col (the seed's bug), of the global column d:
 * the no-swizzle offset grows by LBO (half a slice) every 8 columns, so slice s's data lands whole
 * in slice 2s, where the MMA of K step 2s reads it, and the odd slices stay empty. With both
 * operands filled so, the MMAs add up the products of the first half of the slices only: exact at
 * one slice (D = 16), about 1/sqrt(2) of cosine with the right S from two on. */
void smem_fill_rows_kslices(uint8_t *img, const smem_tile *t, const uint16_t *src, int row0, int rows, int ld, int cols,
                            int global_col);

/* The bytes smem_fill_rows_kslices may write from img, the global column's overshoot included. */
uint32_t smem_kslices_bytes(const smem_tile *t, int cols);

#endif
