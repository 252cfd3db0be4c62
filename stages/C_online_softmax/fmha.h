/* Stage C's own part of the attention forward: its SMEM layout, its mbarriers, its TMEM column map
 * and the entry points of its three backends (fmha_sm100.cu, fmha_sm90.cu, fmha_emu.c). The
 * attention core it shares with every later stage (params, masks, tile counts, operand tiles) is
 * common/attn/fmha_core.h. Later stages keep these names and change what their idea changes. */
#ifndef FMHA_STAGE_C_FMHA_H
#define FMHA_STAGE_C_FMHA_H

#include <stdint.h>

#include "attn/fmha_core.h"
#include "model/smem_layout.h"

/* The sm100 kernel's mbarriers and their arrival counts (the emu flow models the same ones):
 *   q_full    32 load-warp threads, once        kv_full  32 load-warp threads per KV tile
 *   kv_empty  1 commit: the P V MMAs read K, V   s_full   1 commit: S = Q K_j^T is in TMEM
 *   p_full    128 softmax threads: P stored, O rescaled
 *   o_done    1 commit: O += P V_j is in TMEM */
enum { FMHA_BAR_Q_FULL, FMHA_BAR_KV_FULL, FMHA_BAR_KV_EMPTY, FMHA_BAR_S_FULL, FMHA_BAR_P_FULL, FMHA_BAR_O_DONE, FMHA_NUM_BARS };
enum { FMHA_SOFTMAX_WARPS = 4, FMHA_MMA_WARP = 4, FMHA_LOAD_WARP = 5, FMHA_SM100_THREADS = 192, FMHA_SM90_THREADS = 256 };

/* faults: FMHA_FAULT_P_FULL_COUNTS_WARPS gives p_full the count of warps (FG10). */
FMHA_HD uint32_t fmha_bar_count(int bar, unsigned faults)
{
    switch (bar) {
    case FMHA_BAR_Q_FULL:
    case FMHA_BAR_KV_FULL: return 32u;
    case FMHA_BAR_P_FULL:
        return (faults & FMHA_FAULT_P_FULL_COUNTS_WARPS) ? (uint32_t)FMHA_SOFTMAX_WARPS : 32u * FMHA_SOFTMAX_WARPS;
    default: return 1u; /* kv_empty, s_full, o_done: one tcgen05.commit each */
    }
}

/* One CTA's SMEM (offsets from the 1024-aligned base; the sm90 kernel uses the tiles only):
 *   smem_q [Br x D] K-major SW128, smem_k [Bc x D] K-major SW128, smem_v [Bc x D] MN-major SW128,
 *   then the mbarriers and the TMEM base address written by tcgen05.alloc. */
enum { FMHA_SMEM_Q, FMHA_SMEM_K, FMHA_SMEM_V, FMHA_SMEM_TILES };

FMHA_HD smem_layout fmha_smem_layout_make(int d)
{
    const uint32_t tiles[FMHA_SMEM_TILES] = {fmha_q_tile(d).bytes, fmha_k_tile(d).bytes, fmha_v_tile(d).bytes};
    return smem_layout_make(tiles, FMHA_SMEM_TILES, FMHA_NUM_BARS);
}

/* TMEM columns (sm100), 512 allocated (S 128 + P 64 + O up to 256, a power of two):
 *   S  lanes 0-127 x [0, 128)        f32   scores of the current KV tile
 *   P  lanes 0-127 x [128, 192)      bf16 packed two per column (A of the TS P V MMA)
 *   O  lanes 0-127 x [256, 256 + D)  f32   the running output, rescaled in place */
#define FMHA_TMEM_COLS 512
#define FMHA_TMEM_S 0
#define FMHA_TMEM_P 128
#define FMHA_TMEM_O 256

#ifdef __cplusplus
extern "C" {
#endif
/* GPU launchers (params: const fmha_params *): 0, or 1 after printing a CUDA error. */
int stage_c_sm100_launch(const void *params);
int stage_c_sm90_launch(const void *params);
#ifdef __cplusplus
}
#endif

/* The sm100 data flow on the host model (6 modelled warps), on host pointers. 0, or 1 with the
 * model's message in err. */
int stage_c_emu_run(const fmha_params *p, char *err, int errlen);

#endif
