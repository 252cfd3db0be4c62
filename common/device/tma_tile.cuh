// One attention operand tile by TMA: rows [row0, row0 + 128) of a 4-D map (columns, rows, head,
// batch) as D / 64 boxes of 64 columns x 128 rows, all completing on one mbarrier. A box is one
// 16 KB SW128 atom column of the tile: a K-major tile (Q, K) takes box c at the K offset 64c, an
// MN-major tile (V) at the MN offset 64c, so the same box fills either (host/fmha_tmaps.h builds
// the maps). The caller announces the tile's bytes with mbar_arrive_expect_tx first.
//   tma_load_tile<D>  head dim known at compile time (the sm90 kernels: unrolled)
//   tma_load_tile     head dim at run time (the sm100 kernels)
#pragma once

#include <stdint.h>

#include "attn/fmha_tma.h"
#include "device/tma.cuh"
#include "model/smem_layout.h"

__device__ __forceinline__ uint32_t tma_tile_box_offset(const smem_tile &t, int c)
{
    return t.major == MAJOR_K ? smem_tile_offset(&t, 0, FMHA_BOX_COLS * c) : smem_tile_offset(&t, FMHA_BOX_COLS * c, 0);
}

template <int D>
__device__ __forceinline__ void tma_load_tile(uint32_t tile, const smem_tile &t, const CUtensorMap *map, uint32_t bar,
                                              int row0, int head, int batch)
{
#pragma unroll
    for (int c = 0; c < D / FMHA_BOX_COLS; c++)
        tma_load_4d(tile + tma_tile_box_offset(t, c), map, bar, FMHA_BOX_COLS * c, row0, head, batch);
}

__device__ __forceinline__ void tma_load_tile(uint32_t tile, const smem_tile &t, int d, const CUtensorMap *map,
                                              uint32_t bar, int row0, int head, int batch)
{
    for (int c = 0; c < d / FMHA_BOX_COLS; c++)
        tma_load_4d(tile + tma_tile_box_offset(t, c), map, bar, FMHA_BOX_COLS * c, row0, head, batch);
}
