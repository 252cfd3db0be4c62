/* Who holds what: TMEM addresses and the per-thread data maps of tcgen05.ld/st (sm100), the wgmma
 * accumulator and A-operand register fragments (sm90), and bf16x2 packing.
 *
 * TMEM (PTX 9.7.16.1): 128 lanes x 512 columns of 32-bit cells per CTA; an address holds the lane
 * in bits 31:16 and the column in bits 15:0. Warp w of a warpgroup may touch only lanes
 * 32*(w%4) .. 32*(w%4)+31 (PTX 9.7.16.8.1 "Access restrictions"): no shape lets one warp read all
 * 128 lanes (footgun FG02). These rules come from the PTX ISA only: no machine here runs tcgen05.
 *
 * tcgen05.ld/st shapes (thread t of the warp, register r, .num = n): lane and column offsets from
 * the address's (lane, column). PTX gives these as figures; the formulas are decoded from CUTLASS
 * `Copy_Traits<SM100_TMEM_LOAD_*>` (notes/hardware.md section 5.3) and are unconfirmed on hardware:
 *   32x32b   reg i            -> (t, i)                                  32 lanes
 *   16x64b   reg i            -> (t/4 + 8*(t%2), 2i + (t/2)%2)           16 lanes
 *   16x128b  reg 2i+h         -> (t/4 + 8h, 4i + t%4)                    16 lanes
 *   16x256b  reg 4i+2h+j      -> (t/4 + 8h, 8i + 2(t%4) + j)             16 lanes
 *   16x32bx2 reg i            -> (t%16, i + (t >= 16 ? half_off : 0))     16 lanes, twice
 * wgmma m64nNk16 (PTX 9.7.15.5.1.1; CUTLASS CLayout_64xN / ALayout_64x16; notes/hardware.md section 6.3),
 * warp w = thread/32 of the warpgroup, lane l, q = l%4:
 *   accumulator reg i -> row 16w + l/4 + 8*((i>>1)&1), col 8*(i>>2) + 2q + (i&1)
 *   A (bf16) value v  -> row 16w + l/4 + 8*((v>>1)&1), k 2q + (v&1) + 8*(v>>2)
 *   (so accumulator registers 8kk..8kk+7 of S are exactly the A values of P's k-step kk.)
 * wgmma m64nNk32 A from registers, 8-bit types (CUTLASS ALayout_64x32):
 *   A (e4m3) register g, byte v -> row 16w + l/4 + 8*(g&1), k 4q + v + 16*(g>>1)
 *   (not the accumulator's key order: a thread's S values of one row are keys 2q, 2q+1, 8+2q,
 *   9+2q of each 16; stage D's P in registers permutes V's keys to match: dec_pv_key_of_pos.) */
#ifndef FMHA_MODEL_FRAG_MAP_H
#define FMHA_MODEL_FRAG_MAP_H

#include <stdint.h>

#include "model/hd.h"

FMHA_HD uint32_t tmem_addr(uint32_t base, int lane, int col)
{
    return base + ((uint32_t)lane << 16) + (uint32_t)col;
}
FMHA_HD int tmem_addr_lane(uint32_t a) { return (int)(a >> 16); }
FMHA_HD int tmem_addr_col(uint32_t a) { return (int)(a & 0xFFFFu); }

/* First lane warp `warp` (any warp index of the CTA) may access: 32 * (warp % 4). */
FMHA_HD int tmem_warp_lane_base(int warp) { return 32 * (warp % 4); }

typedef enum { TMEM_32x32b = 0, TMEM_16x64b, TMEM_16x128b, TMEM_16x256b, TMEM_16x32bx2, TMEM_SHAPES } tmem_shape;

/* Lanes one instruction touches (32 or 16). */
FMHA_HD int tmem_shape_lanes(tmem_shape s) { return s == TMEM_32x32b ? 32 : 16; }

/* 32-bit registers per thread for .num = n (PTX 9.7.16.8.3 Table 47). */
FMHA_HD int tmem_regs_per_thread(tmem_shape s, int num)
{
    return s == TMEM_16x128b ? 2 * num : s == TMEM_16x256b ? 4 * num : num;
}

/* Largest legal .num: x128 for 32x32b/16x64b/16x32bx2, x64 for 16x128b, x32 for 16x256b. */
FMHA_HD int tmem_max_num(tmem_shape s) { return s == TMEM_16x128b ? 64 : s == TMEM_16x256b ? 32 : 128; }

/* Lane / column offset (from the instruction's address) of thread t's register r. */
FMHA_HD void tmem_thread_map(tmem_shape s, int half_off, int t, int r, int *dlane, int *dcol)
{
    switch (s) {
    case TMEM_32x32b:   *dlane = t; *dcol = r; break;
    case TMEM_16x64b:   *dlane = t / 4 + 8 * (t % 2); *dcol = 2 * r + (t / 2) % 2; break;
    case TMEM_16x128b:  *dlane = t / 4 + 8 * (r % 2); *dcol = 4 * (r / 2) + t % 4; break;
    case TMEM_16x256b:  *dlane = t / 4 + 8 * ((r / 2) % 2); *dcol = 8 * (r / 4) + 2 * (t % 4) + r % 2; break;
    default:            *dlane = t % 16; *dcol = r + (t >= 16 ? half_off : 0); break;
    }
}

/* wgmma m64nNk16 accumulator: thread tid (0..127 of the warpgroup), register i. */
FMHA_HD void wgmma_acc_map(int tid, int i, int *row, int *col)
{
    int w = tid / 32, l = tid % 32;
    *row = 16 * w + l / 4 + 8 * ((i >> 1) & 1);
    *col = 8 * (i >> 2) + 2 * (l % 4) + (i & 1);
}

/* wgmma A operand from registers, 16-bit types: thread tid, value v (0..7; 4 b32 registers, value
 * v in register v/2, the even v in the low half) of one k16 step. */
FMHA_HD void wgmma_a_map(int tid, int v, int *row, int *k)
{
    int w = tid / 32, l = tid % 32;
    *row = 16 * w + l / 4 + 8 * ((v >> 1) & 1);
    *k = 2 * (l % 4) + (v & 1) + 8 * (v >> 2);
}

/* `cvt.rn.bf16x2.f32 d, a, b` puts a in the UPPER half and b in the lower half (PTX cvt). A packed
 * bf16 pair for an MMA operand holds the even-k element in the low half, so the call is
 * cvt(d, odd, even). These take bf16 bit patterns already rounded. */
FMHA_HD uint32_t pack_bf16x2_cvt_order(uint16_t a_upper, uint16_t b_lower)
{
    return ((uint32_t)a_upper << 16) | b_lower;
}
FMHA_HD uint32_t pack_bf16_pair(uint16_t even_k, uint16_t odd_k) { return pack_bf16x2_cvt_order(odd_k, even_k); }

/* wgmma A operand from registers, 8-bit types (e4m3): thread tid, register g (0..3 of one k32 step),
 * byte v (0..3, the lowest first). */
FMHA_HD void wgmma_a8_map(int tid, int g, int v, int *row, int *k)
{
    int w = tid / 32, l = tid % 32;
    *row = 16 * w + l / 4 + 8 * (g & 1);
    *k = 4 * (l % 4) + v + 16 * (g >> 1);
}

#endif
