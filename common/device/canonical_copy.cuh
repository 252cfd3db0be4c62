// Thread copies of row-major global tiles into the canonical SMEM layouts of model/canonical.h:
// how stages A-D fill SMEM before TMA takes over in stage E. Same code on sm_90a and sm_100a.
//
// Each 16-byte chunk (8 elements) is one vector load and one vector store: the swizzle permutes
// whole chunks, so a chunk stays contiguous in SMEM. A thread issues COPY_BATCH loads before the
// first of their stores: the compiler cannot move a global load above a shared store through
// generic pointers (they might alias), so a plain load-store loop keeps one load in flight per
// thread and the copy runs at the latency of L2/HBM, not at its bandwidth.
#pragma once

#include <stdint.h>

#include "model/canonical.h"

#ifndef COPY_BATCH
#define COPY_BATCH 4
#endif

// Chunk c of nchunks: (row r, element e) of the source and its SMEM offset, by the tile's major.
// K-major: the matrix row is the MN index, the column the K index; MN-major: the row is the K
// index (V [kv][d] as the B operand of P V, N = d), 8 consecutive columns are 8 MN elements.
template <bool MN_MAJOR>
__device__ __forceinline__ void copy_rows_to_tile(uint8_t *tile_smem, const smem_tile &t, const uint16_t *src, int row0,
                                                  int rows, int64_t ld, int tid, int nthreads)
{
    const int per_row = (MN_MAJOR ? t.mn : t.k) / 8, nchunks = (MN_MAJOR ? t.k : t.mn) * per_row;
    for (int c0 = tid; c0 < nchunks; c0 += COPY_BATCH * nthreads) {
        uint4 v[COPY_BATCH];
#pragma unroll
        for (int b = 0; b < COPY_BATCH; b++) {
            const int c = c0 + b * nthreads, r = c / per_row, e = (c % per_row) * 8;
            v[b] = make_uint4(0, 0, 0, 0);
            if (c < nchunks && row0 + r < rows) v[b] = *(const uint4 *)(src + (size_t)(row0 + r) * ld + e);
        }
#pragma unroll
        for (int b = 0; b < COPY_BATCH; b++) {
            const int c = c0 + b * nthreads, r = c / per_row, e = (c % per_row) * 8;
            if (c < nchunks)
                *(uint4 *)(tile_smem + (MN_MAJOR ? smem_tile_offset(&t, e, r) : smem_tile_offset(&t, r, e))) = v[b];
        }
    }
}

// Rows [row0, row0 + t.mn) of a row-major [rows x cols] 16-bit matrix (row pitch `ld` elements)
// into K-major tile t. Rows at or past `rows` are written as zeros, so a tail tile never feeds
// stale SMEM to the MMA. Requires cols % 8 == 0 and 16-byte aligned rows. Threads
// tid = 0 .. nthreads-1 share the work (the whole CTA, or one load warp).
__device__ __forceinline__ void copy_rows_to_kmajor_tile(uint8_t *tile_smem, const smem_tile &t, const uint16_t *src,
                                                         int row0, int rows, int64_t ld, int tid, int nthreads)
{
    copy_rows_to_tile<false>(tile_smem, t, src, row0, rows, ld, tid, nthreads);
}

// Rows [row0, row0 + t.k) of a row-major [rows x cols] 16-bit matrix into MN-major tile t (the
// matrix row is the MMA's K index). Rows at or past `rows` are zeros. Requires t.mn % 8 == 0.
__device__ __forceinline__ void copy_rows_to_mnmajor_tile(uint8_t *tile_smem, const smem_tile &t, const uint16_t *src,
                                                          int row0, int rows, int64_t ld, int tid, int nthreads)
{
    copy_rows_to_tile<true>(tile_smem, t, src, row0, rows, ld, tid, nthreads);
}
