/* Stage E's own part of the attention forward: its SMEM layout, its mbarriers, its TMEM column map
 * and the entry points of its three backends (fmha_sm100.cu, fmha_sm90.cu, fmha_emu.c). The
 * attention core is common/attn/fmha_core.h, the tensor maps common/attn/fmha_tma.h and
 * common/host/fmha_tmaps.c. The one idea over stage C: every global -> SMEM copy is a TMA box load
 * completing on an mbarrier by transaction bytes, and O leaves through SMEM by a TMA store. */
#ifndef FMHA_STAGE_E_FMHA_H
#define FMHA_STAGE_E_FMHA_H

#include <stdint.h>

#include "attn/fmha_core.h"
#include "attn/fmha_tma.h"
#include "model/smem_layout.h"

/* The mbarriers and their arrival counts (sm100 and the emu flow; sm90 uses the first five):
 *   q_full   1 arrive.expect_tx + the Q tile's bytes     k_full  1 + K_j's bytes
 *   v_full   1 + V_j's bytes (its own barrier: S = Q K_j^T starts while V_j is still in flight)
 *   k_empty  sm100: 1 commit (the S MMAs have read K_j); sm90: 8 consumer warps
 *   v_empty  sm100: 1 commit (the P V MMAs have read V_j); sm90: 8 consumer warps
 *   s_full   1 commit     p_full  128 softmax threads     o_done  1 commit (as stage C) */
enum {
    FMHA_BAR_Q_FULL, FMHA_BAR_K_FULL, FMHA_BAR_V_FULL, FMHA_BAR_K_EMPTY, FMHA_BAR_V_EMPTY,
    FMHA_BAR_S_FULL, FMHA_BAR_P_FULL, FMHA_BAR_O_DONE, FMHA_NUM_BARS
};
enum { FMHA_SOFTMAX_WARPS = 4, FMHA_MMA_WARP = 4, FMHA_LOAD_WARP = 5, FMHA_SM100_THREADS = 192, FMHA_SM90_THREADS = 256 };
enum { FMHA_SM90_CONSUMER_WARPS = 8 };

/* sm90: whether the barrier's arrivals are the consumer warps' (else the sm100 counts). */
FMHA_HD uint32_t fmha_bar_count(int bar, int sm90)
{
    switch (bar) {
    case FMHA_BAR_Q_FULL:
    case FMHA_BAR_K_FULL:
    case FMHA_BAR_V_FULL: return 1u; /* the producer's arrive.expect_tx; the bytes do the rest */
    case FMHA_BAR_K_EMPTY:
    case FMHA_BAR_V_EMPTY: return sm90 ? (uint32_t)FMHA_SM90_CONSUMER_WARPS : 1u;
    case FMHA_BAR_P_FULL: return 32u * FMHA_SOFTMAX_WARPS;
    default: return 1u; /* s_full, o_done: one tcgen05.commit each */
    }
}

/* The bytes K_j's expect_tx announces: the tile, or (FG15) one box short or one box too many. */
FMHA_HD uint32_t fmha_k_expect_bytes(int d, unsigned faults)
{
    const uint32_t tile = fmha_tile_tx_bytes(d, FMHA_BN), box = fmha_box_tx_bytes(FMHA_BN);
    return (faults & FMHA_FAULT_EXPECT_TX_SHORT) ? tile - box : (faults & FMHA_FAULT_EXPECT_TX_LONG) ? tile + box : tile;
}

/* The parity of K_j's full barrier for tile j: j & 1, or (FG16) the other one. */
FMHA_HD uint32_t fmha_k_full_parity(int j, unsigned faults)
{
    return ((uint32_t)j & 1u) ^ ((faults & FMHA_FAULT_FIRST_WAIT_PARITY) ? 1u : 0u);
}

/* One CTA's SMEM (offsets from the 1024-aligned base), the same tiles as stage C:
 *   smem_q [Br x D] K-major SW128 (after the last S MMA it stages O for the TMA store: the same
 *   layout, one FMHA_O_BOX_ROWS-row box per 64 columns and warp), smem_k [Bc x D] K-major SW128,
 *   smem_v [Bc x D] MN-major SW128, then the mbarriers and the TMEM base address. A box of 64
 *   columns x 128 rows is exactly one 16 KB atom column of these tiles (host/fmha_tmaps.h). */
enum { FMHA_SMEM_Q, FMHA_SMEM_K, FMHA_SMEM_V, FMHA_SMEM_TILES };

FMHA_HD smem_layout fmha_smem_layout_make(int d)
{
    const uint32_t tiles[FMHA_SMEM_TILES] = {fmha_q_tile(d).bytes, fmha_k_tile(d).bytes, fmha_v_tile(d).bytes};
    return smem_layout_make(tiles, FMHA_SMEM_TILES, FMHA_NUM_BARS);
}

/* TMEM columns (sm100), as stage C: S [0, 128) f32, P [128, 192) bf16 pairs, O [256, 256 + D). */
#define FMHA_TMEM_COLS 512
#define FMHA_TMEM_S 0
#define FMHA_TMEM_P 128
#define FMHA_TMEM_O 256

#ifdef __cplusplus
extern "C" {
#endif
/* GPU launchers (params: const fmha_params * with device pointers): build the tensor maps
 * (fmha_tmaps_encode), launch. 0, or 1 after printing what went wrong. */
int stage_e_sm100_launch(const void *params);
int stage_e_sm90_launch(const void *params);
#ifdef __cplusplus
}
#endif

/* The sm100 data flow on the host model, with the TMA copies on the TMA model (model/tma_flight.h,
 * model/tma_model.h). 0, or 1 with the model's message in err. */
int stage_e_emu_run(const fmha_params *p, char *err, int errlen);

#endif
