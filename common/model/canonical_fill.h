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

#endif
