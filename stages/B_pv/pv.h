/* Stage B: O = P V with the identity "softmax" P = bf16(scale * Q K^T). What the stage's backends
 * share: the problem, the SMEM tiles, the TMEM column map, and the entry points of the three
 * backends (pv_sm100.cu, pv_sm90.cu, pv_emu.c). */
#ifndef FMHA_STAGE_B_PV_H
#define FMHA_STAGE_B_PV_H

#include <stdint.h>

#include "host/watchdog.h"
#include "model/canonical.h"
#include "model/grid.h"
#include "model/smem_layout.h"

#define PV_BM 128 /* query rows per CTA */
#define PV_BN 128 /* keys per KV tile: the K of the P V MMA */

typedef struct {
    const uint16_t *q; /* [B, H, Sq, D] bf16 row-major */
    const uint16_t *k; /* [B, H, Skv, D] bf16 row-major */
    const uint16_t *v; /* [B, H, Skv, D] bf16 row-major */
    float *o;          /* [B, H, Sq, D] f32 row-major: the output */
    int b, h, sq, skv, d;
    float scale;       /* a power of two near 1/sqrt(D) (see stage_b.c) */
    fmha_watchdog *wd; /* device pointer of the deadlock report (sm100) */
} pv_params;

/* SMEM tiles, decided once for every backend:
 *   Q [128 x D]  K-major, 128B swizzle: A of S = Q K^T (K = D)
 *   K [128 x D]  K-major, 128B swizzle: B of S = Q K^T
 *   V [128 x D]  as stored, V[kv][d] is MN-major for P V (N = d, K = kv): B of O = P V, 128B
 *                swizzle; D = 128 spans two 64-element atoms along N (LBO apart). */
FMHA_HD smem_tile pv_q_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, PV_BM, d); }
FMHA_HD smem_tile pv_k_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, PV_BN, d); }
FMHA_HD smem_tile pv_v_tile(int d) { return smem_tile_make(MAJOR_MN, SWZ_128B, 2, d, PV_BN); }

/* The sm100 kernel's mbarriers: s_full (1 commit), p_full (128 softmax threads), o_done (1 commit). */
enum { PV_BAR_S_FULL, PV_BAR_P_FULL, PV_BAR_O_DONE, PV_NUM_BARS };

/* One CTA's SMEM (offsets from the 1024-aligned base; the sm90 kernel uses the tiles only):
 *   smem_q, smem_k, smem_v: the three tiles; the mbarriers; the TMEM base address slot. */
enum { PV_SMEM_Q, PV_SMEM_K, PV_SMEM_V, PV_SMEM_TILES };

FMHA_HD smem_layout pv_smem_layout_make(int d)
{
    const uint32_t tiles[PV_SMEM_TILES] = {pv_q_tile(d).bytes, pv_k_tile(d).bytes, pv_v_tile(d).bytes};
    return smem_layout_make(tiles, PV_SMEM_TILES, PV_NUM_BARS);
}

/* The grid: x = query tiles, y = batch x heads (validate() checks the limits). */
FMHA_HD grid3 pv_grid(const pv_params *p)
{
    grid3 g = {(unsigned)((p->sq + PV_BM - 1) / PV_BM), (unsigned)(p->b * p->h), 1u};
    return g;
}

/* TMEM columns (sm100), 512 allocated (S + P + O = 128 + 64 + D, rounded up to a power of two):
 *   S  lanes 0-127 x cols [0, 128)      f32: Q K^T of the current KV tile
 *   P  lanes 0-127 x cols [128, 192)    bf16 packed two per column: the A operand of P V
 *   O  lanes 0-127 x cols [256, 256+D)  f32: the accumulator across KV tiles */
#define PV_TMEM_COLS 512
#define PV_TMEM_S 0
#define PV_TMEM_P 128
#define PV_TMEM_O 256

/* P's place in TMEM as a CuTe layout, index m + 128 k for packed word k (keys 2k, 2k + 1) of row
 * m: mode 0 is one store block (128 lanes x 16 columns, 32 keys: the four softmax warps' 32x32b.x16
 * stores together), mode 2 the tile's four blocks grouped the way the seed's P layout groups its
 * eight, a nested (2,2). CuTe evaluates it colexicographically (model/layout.h): lane m, column
 * PV_TMEM_P + k, sequential (FG09). */
#define PV_P_TMEM_LAYOUT "((128,16),1,(2,2)):((65536,1),0,(16,32))"

#ifdef __cplusplus
extern "C" {
#endif
/* GPU launchers (params: const pv_params *): 0, or 1 after printing a CUDA error. */
int stage_b_sm100_launch(const void *params);
int stage_b_sm90_launch(const void *params);
#ifdef __cplusplus
}
#endif

/* Broken variants of the emu flow, one per footgun whose mechanism lives in this stage's data flow
 * (tests/footguns/test_fg0*.c run them). 0 = the correct flow. */
enum {
    PV_FAULT_V_KMAJOR = 1u << 0,          /* FG04: V described as K-major (idesc bit 16 = 0) */
    PV_FAULT_ACCUMULATE_FIRST = 1u << 1,  /* FG05: the first P V MMA with accumulate on */
    PV_FAULT_V_ADVANCE_32B = 1u << 2,     /* FG06 candidate: MN-major V advanced +32 B per K step */
    PV_FAULT_PACK_SWAPPED = 1u << 3,      /* FG07: cvt operands (even, odd): pairs swapped */
    PV_FAULT_STORE_16BIT = 1u << 4,       /* FG07: tcgen05.st asked to move 16-bit elements */
    PV_FAULT_P_OFFSET_X2 = 1u << 5,       /* FG08: P's f32 column offset doubled as if in bf16 units */
    PV_FAULT_IDESC_M_BIT23 = 1u << 6,     /* FG03: the P V idesc with M>>4 at bit 23 (M reads 64) */
    PV_FAULT_IDESC_N_BIT_LOW = 1u << 7,   /* FG03: the P V idesc with N>>3 one bit low (N reads D/2) */
    PV_FAULT_P_NESTED_LAST_FASTEST = 1u << 8, /* FG09: PV_P_TMEM_LAYOUT's nested mode read last
                                                 sub-mode fastest: P's blocks 1 and 2 swap places */
};

/* The sm100 data flow on the host model, on host pointers. Returns 0, or 1 with the model's
 * message in err when a rule was broken (the output then holds whatever was written). */
int pv_emu_run(const pv_params *p, unsigned faults, char *err, int errlen);

#endif
