/* What stage F's sm100 kernel (fmha_sm100.cu) and its host-model twin (fmha_emu.c) share beyond
 * fmha.h: the roles and their warps, the sm100-only mbarriers (placed after the ring's, from
 * FMHA_RING_BARS up) with their arrival counts, and the TMEM column map of both pipelines
 * (overlap off and on). One definition, so the emu flow checks the numbers the kernel runs. */
#ifndef FMHA_STAGE_F_FLOW_SM100_H
#define FMHA_STAGE_F_FLOW_SM100_H

#include <stdint.h>

#include "fmha.h"

/* The roles: warps 0-3 softmax, correction and epilogue (warp w owns TMEM lanes 32w..32w+31),
 * warp 4 TMEM allocation and the MMAs (one lane issues), warp 5 the TMA loads (one lane). */
enum { FMHA_F_SOFTMAX_WARPS = 4, FMHA_F_MMA_WARP = 4, FMHA_F_LOAD_WARP = 5 };

/* The TMEM address handoff: warp 4 allocates and writes the address into SMEM, then warps 0-4
 * (the ones that use TMEM) meet at named barrier 1, 160 threads, and read it; the load warp does
 * not take part, so it starts Q's and the first tiles' loads without waiting for the allocation.
 * FG12's variant: the load warp joins that barrier too (seed 003), so 6 warps arrive at a barrier
 * counted for 5. */
enum { FMHA_F_TMEM_BAR_ID = 1, FMHA_F_TMEM_BAR_THREADS = 32 * (FMHA_F_SOFTMAX_WARPS + 1) };

/* The sm100 barriers after the shared ring (fmha.h: q_full, k_full[3], v_full[3], k_empty[3],
 * v_empty[3]):
 *   s_full[b]  1 tcgen05.commit: S_j is in S buffer b (b = j % buffers; 1 buffer without overlap)
 *   p_full     128 softmax threads (each warp's 32 lanes arrive): P_j is in TMEM, O rescaled
 *   o_done     1 tcgen05.commit: O += P_j V_j has completed (and every MMA issued before it)
 * Ring barriers' counts: q_full, k_full, v_full 1 arrive.expect_tx (+ the tile's bytes);
 * k_empty, v_empty 1 (the tcgen05.commit after the MMAs that read the slot; FG23: a plain arrive
 * at their issue). */
enum {
    FMHA_F_BAR_S_FULL = FMHA_RING_BARS,
    FMHA_F_BAR_P_FULL = FMHA_F_BAR_S_FULL + 2,
    FMHA_F_BAR_O_DONE,
    FMHA_F_SM100_BARS
};

#ifdef __cplusplus
static_assert((int)FMHA_F_SM100_BARS <= (int)FMHA_F_MAX_BARS, "the sm100 barriers must fit fmha.h's room");
#else
_Static_assert((int)FMHA_F_SM100_BARS <= (int)FMHA_F_MAX_BARS, "the sm100 barriers must fit fmha.h's room");
#endif

FMHA_HD uint32_t fmha_f_bar_count(int bar)
{
    return bar == FMHA_F_BAR_P_FULL ? 32u * FMHA_F_SOFTMAX_WARPS : 1u;
}

/* The barrier's name in reports ("k_full[1]"): kind and slot (or S buffer). */
FMHA_HD const char *fmha_f_bar_kind(int bar)
{
    if (bar == FMHA_F_BAR_Q_FULL) return "q_full";
    if (bar < FMHA_F_BAR_V_FULL) return "k_full";
    if (bar < FMHA_F_BAR_K_EMPTY) return "v_full";
    if (bar < FMHA_F_BAR_V_EMPTY) return "k_empty";
    if (bar < FMHA_RING_BARS) return "v_empty";
    if (bar < FMHA_F_BAR_P_FULL) return "s_full";
    return bar == FMHA_F_BAR_P_FULL ? "p_full" : "o_done";
}
FMHA_HD int fmha_f_bar_index(int bar) /* the slot or buffer; -1 for a barrier without one */
{
    if (bar == FMHA_F_BAR_Q_FULL || bar >= FMHA_F_BAR_P_FULL) return -1;
    if (bar >= FMHA_F_BAR_S_FULL) return bar - FMHA_F_BAR_S_FULL;
    return (bar - FMHA_F_BAR_K_FULL) % FMHA_RING_MAX;
}

/* TMEM, 512 columns x 128 lanes of 32 bits, allocated whole. Budget:
 *   overlap 0 (any D):     S [0, 128) f32 | P [128, 192) bf16 pairs | O [256, 256 + D) f32
 *                          = 128 + 64 + D <= 448 of 512 at D = 256 (stage E's map)
 *   overlap 1 (D <= 128):  S0 [0, 128) | S1 [128, 256) | O [256, 256 + D) | P0 [384, 448) |
 *                          P1 [448, 512) = 2 x 128 + D + 2 x 64 = 512 at D = 128: the reason
 *                          overlap stops at D = 128 (S_{j+1} is written while the softmax reads
 *                          S_j, and P_{j+1} while P V_j reads P_j, so each needs a second copy) */
#define FMHA_F_TMEM_COLS 512
#define FMHA_F_TMEM_O 256
FMHA_HD int fmha_f_s_buffers(int overlap) { return overlap ? 2 : 1; }
FMHA_HD uint32_t fmha_f_tmem_s(int b) { return 128u * (uint32_t)b; }
FMHA_HD uint32_t fmha_f_tmem_p(int overlap, int b) { return overlap ? 384u + 64u * (uint32_t)b : 128u; }

/* Whether the MMA warp releases a ring slot after tile j: only when tile j + R will be loaded into
 * it (the producer waits for that release); the last R tiles' releases would have no waiter, and
 * a commit may not land on SMEM after the CTA has exited. */
FMHA_HD int fmha_f_release_slot(int j, int ring, int ntiles) { return j + ring < ntiles; }

/* FG11's mask: cluster rank 1, which a launch without clusters does not have (its only rank is 0). */
#define FMHA_F_FG11_CTA_MASK 0x2u

#endif
