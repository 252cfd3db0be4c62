/* What a TMA stage (E and later) hands its kernel: the attention parameters and one tensor map
 * per tensor, in one struct passed as a `const __grid_constant__` kernel parameter (a map must
 * live in parameter, constant or global memory, and the copy instructions take its generic
 * address). The host builds the maps with fmha_tmaps_encode (host/fmha_tmaps.h).
 *
 * Boxes (host/fmha_tmaps.h): Q, K, V {64 columns, 128 rows}: one 128-byte swizzle-atom column of a
 * whole tile, D / 64 of them per tile; O {64, FMHA_O_BOX_ROWS}: the rows one storing warp owns. */
#ifndef FMHA_ATTN_FMHA_TMA_H
#define FMHA_ATTN_FMHA_TMA_H

#include <cuda.h>

#include "attn/fmha_core.h"

/* O is stored in boxes of 16 rows: one sm90 warp's rows of the m64 accumulator (warp w of a
 * warpgroup holds rows 16w..16w+15); an sm100 softmax warp owns 32 TMEM lanes and stores two. */
#define FMHA_O_BOX_ROWS 16
/* Columns per box: 128 bytes of bf16, the 128B swizzle span. */
#define FMHA_BOX_COLS 64

typedef struct {
    CUtensorMap q, k, v, o; /* first: CUtensorMap's 128-byte alignment */
    fmha_params p;
} fmha_tma_args;

/* Transaction bytes of one whole tile of `rows` rows of D bf16 columns: D / 64 boxes, each
 * counted in full even where rows fall past the end (the zero-filled ones). */
FMHA_HD uint32_t fmha_tile_tx_bytes(int d, int rows) { return (uint32_t)(rows * d * 2); }
FMHA_HD uint32_t fmha_box_tx_bytes(int rows) { return (uint32_t)(rows * FMHA_BOX_COLS * 2); }

/* The coordinate along dim H of the K map (v = 0) or the V map (v = 1) for query head h: its KV
 * head, or 0 where that tensor's head stride is 0 (one shared head, mapped as a dimension of
 * extent 1; each map by its own stride, as host/fmha_tmaps.c builds it). */
FMHA_HD int fmha_tma_kv_head(const fmha_params *p, int h, int v)
{
    return (v ? p->v_sh : p->k_sh) ? fmha_kv_head(p, h) : 0;
}

#endif
