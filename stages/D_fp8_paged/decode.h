/* Stage D's own part of the FP8 paged decode: its SMEM layout, its mbarriers, its TMEM column map
 * and the entry points of its backends (decode_sm100.cu, decode_sm90.cu, decode_emu.c) and of the
 * split-KV merge (merge.cu). The decode core it shares with later stages (params, row packing,
 * visibility, splits, the P scale, the operand tiles) is common/attn/decode_core.h. */
#ifndef FMHA_STAGE_D_DECODE_H
#define FMHA_STAGE_D_DECODE_H

#include <stdint.h>

#include "attn/decode_core.h"
#include "model/smem_layout.h"

/* The sm100 kernel's mbarriers and their arrival counts (the emu flow models the same ones):
 *   q_full    128 softmax threads: Q quantised into SMEM, once
 *   kv_full   32 load-warp threads per KV tile: K_j, V_j^T and the scales in SMEM (the MMA
 *             thread waits on it, and the softmax warps too: they read the scales)
 *   kv_empty  1 commit: the P V MMAs that read K_j, V_j^T are done
 *   s_full    1 commit: S = Q K_j^T is in TMEM
 *   p_full    128 softmax threads: P's codes in SMEM, O rescaled
 *   o_done    1 commit: O += P V_j is in TMEM */
enum { DEC_BAR_Q_FULL, DEC_BAR_KV_FULL, DEC_BAR_KV_EMPTY, DEC_BAR_S_FULL, DEC_BAR_P_FULL, DEC_BAR_O_DONE, DEC_NUM_BARS };
enum { DEC_SOFTMAX_WARPS = 4, DEC_MMA_WARP = 4, DEC_LOAD_WARP = 5, DEC_SM100_THREADS = 192, DEC_SM90_THREADS = 128 };

FMHA_HD uint32_t dec_bar_count(int bar)
{
    switch (bar) {
    case DEC_BAR_Q_FULL:
    case DEC_BAR_P_FULL: return 32u * DEC_SOFTMAX_WARPS;
    case DEC_BAR_KV_FULL: return 32u;
    default: return 1u; /* kv_empty, s_full, o_done: one tcgen05.commit each */
    }
}

/* One CTA's SMEM (offsets from the 1024-aligned base), bm packed rows:
 *   Q [bm x D], K [Bc x D], Vs [Bc x D] (V as gathered), Vt [D x Bc] (V transposed: B of P V),
 *   P [bm x Bc] (e4m3 codes), all K-major SW128 e4m3 (decode_core.h); then the scales f32:
 *   sq [bm] (sm90: Q's row scales), sk [Bc], sv [Bc] (the tile's K and V scales), and sm90's
 *   row reductions across its 4 warps ([4][bm] twice, [4]); then the mbarriers and the TMEM
 *   address slot (sm100). A ring keeps sk and sv in its slots; the sm90 ring past 32 rows puts
 *   its slots' V-scale maxima ([ring][4], the load warps') where sk starts. */
#define DEC_SCALE_FLOATS(bm) ((bm) + 2 * DEC_BN + 8 * (bm) + 4)
/* Vt comes first: the FG20 variant reads its MN-major V through K-major descriptors, which run up to
 * 8 KB past the tile's end; placed first, that over-read lands in Q and K, inside the allocation. */
/* K_NEXT: the next tile's K [Bc x D] and its scales sk, sv [Bc], for sm90's unswapped kernels with
 * --kv-tma 2 (its copies land during this tile; V's go into Vs, free once transposed); 0 bytes
 * everywhere else. */
enum { DEC_SMEM_VT, DEC_SMEM_Q, DEC_SMEM_K, DEC_SMEM_VS, DEC_SMEM_P, DEC_SMEM_SCALES, DEC_SMEM_K_NEXT, DEC_SMEM_TILES };

FMHA_HD uint32_t dec_k_next_bytes(int d) { return dec_k_tile(d).bytes + 8u * DEC_BN; }
/* Whether the CTA keeps a second K buffer: the unswapped kernel (64 packed rows a warpgroup, one or
 * two warpgroups), unpipelined, with the next tile's copies issued during this one. */
FMHA_HD int dec_has_k_next(int bm, int ring, int kv_tma) { return ring <= 0 && kv_tma == 2 && bm >= DEC_BM_SM90; }

FMHA_HD smem_layout dec_smem_layout_make_k(int bm, int d, int k_next)
{
    /* the Vt slot also holds the FG20 variant's MN-major V, which pads D = 64 to a 128-byte row */
    const uint32_t vt = dec_vt_tile(d).bytes, vmn = dec_v_mn_tile(d).bytes;
    const uint32_t tiles[DEC_SMEM_TILES] = {vt > vmn ? vt : vmn,   dec_q_tile(bm, d).bytes,
                                            dec_k_tile(d).bytes,   dec_vs_tile(d).bytes,
                                            dec_p_tile(bm).bytes,  4u * (uint32_t)DEC_SCALE_FLOATS(bm),
                                            k_next ? dec_k_next_bytes(d) : 0u};
    return smem_layout_make(tiles, DEC_SMEM_TILES, DEC_NUM_BARS);
}

/* The pipelined decode (--ring R): R slots, each K [Bc x D], Vs [Bc x D] (V as gathered), the
 * tile's scales sk [Bc], sv [Bc] and Vt [D x Bc] (V transposed by the load role) back to back
 * (every part a multiple of 1024 bytes, so each K, Vs and Vt stays 1024-aligned), one tile of R
 * slots in place of K and Vs (the CTA's own Vt tile is then empty); then, after the DEC_NUM_BARS
 * barriers above, 3R more: full[s], empty[s] and landed[s].
 *   sm90:  full[s] one arrival a load thread (DEC_SM90_LOAD_WARPS warps after the consumer
 *          warpgroup), once the tile's copies landed, its V is transposed and both are fenced
 *          for the MMAs; empty[s] one arrival a consumer thread, once its P V that read the
 *          slot's Vt has completed (kv_full and kv_empty unused); landed[s] (the TMA gather of
 *          the ring past 32 rows, --kv-tma 1) one arrival, the load warp's expect_tx, and the
 *          bytes of the slot's K and V boxes, for the load warps' own wait before V's transpose
 *   sm100 and emu: full[s] as kv_full (the load warp's 32 lanes), empty[s] as kv_empty (one
 *          tcgen05.commit after the P V that read the slot) */
#ifndef DEC_SM90_LOAD_WARPS
#define DEC_SM90_LOAD_WARPS 4
#endif
FMHA_HD uint32_t dec_ring_slot_bytes(int d)
{
    return dec_k_tile(d).bytes + dec_vs_tile(d).bytes + 8u * DEC_BN + dec_vt_tile(d).bytes;
}
/* Slot s's parts, as offsets from the ring tile's start. */
typedef struct {
    uint32_t k, vs, sk, sv, vt;
} dec_ring_slot_offsets;
FMHA_HD dec_ring_slot_offsets dec_ring_slot_at(int d, int slot)
{
    const uint32_t s = (uint32_t)slot * dec_ring_slot_bytes(d), kb = dec_k_tile(d).bytes;
    dec_ring_slot_offsets o = {s, s + kb, s + 2 * kb, s + 2 * kb + 4u * DEC_BN, s + 2 * kb + 8u * DEC_BN};
    return o;
}
FMHA_HD uint32_t dec_ring_full_bar(int slot) { return (uint32_t)(DEC_NUM_BARS + slot); }
FMHA_HD uint32_t dec_ring_empty_bar(int ring, int slot) { return (uint32_t)(DEC_NUM_BARS + ring + slot); }
FMHA_HD uint32_t dec_ring_land_bar(int ring, int slot) { return (uint32_t)(DEC_NUM_BARS + 2 * ring + slot); }
/* (the empty count is the swapped kernel's one consumer warpgroup; decode_ring_sm90.cu's two groups
 * count 2 x DEC_SM90_THREADS) */
enum { DEC_SM90_LOAD_THREADS = 32 * DEC_SM90_LOAD_WARPS, DEC_RING_FULL_COUNT = DEC_SM90_LOAD_THREADS,
       DEC_RING_EMPTY_COUNT = DEC_SM90_THREADS };

/* The CTA's SMEM for `ring` slots (0: the unpipelined kernel's layout above). preg: P's codes stay
 * in registers (the sm90 ring past 32 rows, dec_ring_p_in_regs), so the layout has no P tile and
 * D = 128 fits a fourth slot. */
FMHA_HD int dec_ring_p_in_regs(int sm90, int bm) { return sm90 && bm > DEC_BM_SM90 / 2; }
FMHA_HD smem_layout dec_smem_layout_make_ring(int bm, int d, int ring, int preg)
{
    if (ring <= 0) return dec_smem_layout_make_k(bm, d, 0);
    const uint32_t tiles[DEC_SMEM_TILES] = {0u, dec_q_tile(bm, d).bytes, (uint32_t)ring * dec_ring_slot_bytes(d),
                                            0u, preg ? 0u : dec_p_tile(bm).bytes, 4u * (uint32_t)DEC_SCALE_FLOATS(bm), 0u};
    return smem_layout_make(tiles, DEC_SMEM_TILES, DEC_NUM_BARS + 3 * ring);
}
/* The CTA's SMEM for an sm90 kernel: the ring's, or the unpipelined layout with K_NEXT where it is used. */
FMHA_HD smem_layout dec_smem_layout_of(int bm, int d, int ring, int kv_tma)
{
    return ring > 0 ? dec_smem_layout_make_ring(bm, d, ring, dec_ring_p_in_regs(1, bm))
                    : dec_smem_layout_make_k(bm, d, dec_has_k_next(bm, ring, kv_tma));
}

/* TMEM columns (sm100), 512 allocated (S 128 + O up to 256, a power of two; P stays in SMEM: the
 * kind::f8f6f4 MMA reads it from there):
 *   S  lanes 0-127 x [0, 128)        f32   scores of the current KV tile
 *   O  lanes 0-127 x [256, 256 + D)  f32   the running output in units of the row's P scale */
#define DEC_TMEM_COLS 512
#define DEC_TMEM_S 0
#define DEC_TMEM_O 256

#ifdef __cplusplus
extern "C" {
#endif
/* GPU launchers (params: const dec_params *): the decode kernel, then (splits > 1) the merge. 0,
 * or 1 after printing a CUDA error. */
int stage_d_sm100_launch(const void *params);
int stage_d_sm90_launch(const void *params);
/* The split-KV merge kernel alone (both architectures): O_part, LSE_part -> O, LSE. */
int stage_d_merge_launch(const dec_params *p);
/* Resident CTAs per SM of the sm90 decode kernel at head dim d with `rows` packed rows, `ring`
 * slots (0: unpipelined), the TMA gather or not, and --fair's twin or not (it holds more
 * registers: at 16 rows 2 CTAs an SM instead of 3), by the occupancy calculator, for --splits
 * auto and --fair's one-wave rule. 0 on a CUDA error (printed). */
int stage_d_sm90_ctas_per_sm(int d, int rows, int ring, int kv_tma, int fair);
#ifdef __cplusplus
}
#endif

/* The sm100 data flow on the host model (6 modelled warps), on host pointers, then the merge.
 * 0, or 1 with the model's message in err. */
int stage_d_emu_run(const dec_params *p, char *err, int errlen);

#endif
