// Thread copies of row-major global tiles into the canonical SMEM layouts of model/canonical.h:
// how stages A-D fill SMEM before TMA takes over in stage E. Same code on sm_90a and sm_100a.
#pragma once

#include <stdint.h>

#include "model/canonical.h"

// Rows [row0, row0 + t.mn) of a row-major [rows x cols] 16-bit matrix (row pitch `ld` elements)
// into tile t, whose MN index is the row and K index the column (a K-major tile). Rows at or past
// `rows` are written as zeros, so a tail tile never feeds stale SMEM to the MMA. Each 16-byte
// chunk (8 elements) is one vector load and one vector store: the swizzle permutes whole chunks,
// so a chunk stays contiguous in SMEM. Requires cols % 8 == 0 and 16-byte aligned rows. Threads
// tid = 0 .. nthreads-1 share the work (the whole CTA, or one load warp).
__device__ __forceinline__ void copy_rows_to_kmajor_tile(uint8_t *tile_smem, const smem_tile &t, const uint16_t *src,
                                                         int row0, int rows, int64_t ld, int tid, int nthreads)
{
    const int chunks_per_row = t.k / 8;
    for (int c = tid; c < t.mn * chunks_per_row; c += nthreads) {
        const int r = c / chunks_per_row, kc = (c % chunks_per_row) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (row0 + r < rows) v = *(const uint4 *)(src + (size_t)(row0 + r) * ld + kc);
        *(uint4 *)(tile_smem + smem_tile_offset(&t, r, kc)) = v;
    }
}

// Rows [row0, row0 + t.k) of a row-major [rows x cols] 16-bit matrix into an MN-major tile t:
// the matrix row is the MMA's K index and the column its MN index (V [kv][d] as the B operand of
// P V, N = d). 8 consecutive columns of a row are 8 consecutive MN elements: one 16-byte chunk in
// SMEM too. Rows at or past `rows` are zeros. Requires t.mn % 8 == 0.
__device__ __forceinline__ void copy_rows_to_mnmajor_tile(uint8_t *tile_smem, const smem_tile &t, const uint16_t *src,
                                                          int row0, int rows, int64_t ld, int tid, int nthreads)
{
    const int chunks_per_row = t.mn / 8;
    for (int c = tid; c < t.k * chunks_per_row; c += nthreads) {
        const int r = c / chunks_per_row, mc = (c % chunks_per_row) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (row0 + r < rows) v = *(const uint4 *)(src + (size_t)(row0 + r) * ld + mc);
        *(uint4 *)(tile_smem + smem_tile_offset(&t, mc, r)) = v;
    }
}
