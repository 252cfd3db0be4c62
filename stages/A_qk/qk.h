/* Stage A: S = scale * Q K^T. What the stage's backends share: the problem description and the
 * entry points of the three backends (qk_sm100.cu, qk_sm90.cu, qk_emu.c). */
#ifndef FMHA_STAGE_A_QK_H
#define FMHA_STAGE_A_QK_H

#include <stdint.h>

#include "host/watchdog.h"
#include "model/canonical.h"
#include "model/grid.h"
#include "model/smem_layout.h"

#define QK_BM 128 /* query rows per CTA tile */
#define QK_BN 128 /* keys per CTA tile */

typedef struct {
    const uint16_t *q; /* [B, H, Sq, D] bf16, row-major (D contiguous) */
    const uint16_t *k; /* [B, H, Skv, D] bf16, row-major */
    float *s;          /* [B, H, Sq, Skv] f32, row-major: the output */
    int b, h, sq, skv, d;
    float scale;
    fmha_watchdog *wd; /* device pointer of the deadlock report (sm100 mbarrier waits) */
} qk_params;

/* The operand tiles, decided once for every backend: Q [128 x D] and K [128 x D], K-major (D is
 * the MMA's K), 128-byte swizzle, bf16. D = 128 spans two swizzle atoms along K. */
FMHA_HD smem_tile qk_q_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, QK_BM, d); }
FMHA_HD smem_tile qk_k_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, QK_BN, d); }

/* One CTA's SMEM (offsets from the 1024-aligned base; the sm90 kernel uses the tiles only):
 *   smem_q, smem_k: the two tiles; one mbarrier (mma_done: the MMAs' commit arrives on it); the
 *   TMEM base address written by tcgen05.alloc. */
enum { QK_SMEM_Q, QK_SMEM_K, QK_SMEM_TILES };

FMHA_HD smem_layout qk_smem_layout_make(int d)
{
    const uint32_t tiles[QK_SMEM_TILES] = {qk_q_tile(d).bytes, qk_k_tile(d).bytes};
    return smem_layout_make(tiles, QK_SMEM_TILES, 1);
}

/* The grid: x = KV tiles, y = query tiles, z = batch x heads (validate() checks the limits). */
FMHA_HD grid3 qk_grid(const qk_params *p)
{
    grid3 g = {(unsigned)((p->skv + QK_BN - 1) / QK_BN), (unsigned)((p->sq + QK_BM - 1) / QK_BM), (unsigned)(p->b * p->h)};
    return g;
}

#ifdef __cplusplus
extern "C" {
#endif

/* GPU launchers (params: const qk_params *): enqueue on the default stream; 0, or 1 after printing
 * a CUDA error. */
int stage_a_sm100_launch(const void *params);
int stage_a_sm90_launch(const void *params);

#ifdef __cplusplus
}
#endif

/* Broken variants of the emu data flow, one per footgun whose mechanism lives in this stage (the
 * footgun tests and `stage_A --fault NAME` run them). 0 = the correct flow. */
enum {
    QK_FAULT_ONE_WARP_EPILOGUE = 1u << 0, /* FG02: warp 0 alone tries to read all 128 TMEM lanes (the
                                             seed's blocked "T > 32" kernel) */
    QK_FAULT_FILL_FULL_D = 1u << 1,       /* FG01: Q and K in the seed's K slices (qk_fg01_slice_tile),
                                             filled from the global column */
};

/* FG01's slice tile: one [128 x 16] K-major no-swizzle tile per 16-column K slice, as the seed laid
 * out Q and K (one tile shape for both, since QK_BM = QK_BN). */
#if QK_BM != QK_BN
#error "qk_fg01_slice_tile serves Q and K alike: QK_BM must equal QK_BN"
#endif
FMHA_HD smem_tile qk_fg01_slice_tile(void) { return smem_tile_make(MAJOR_K, SWZ_NONE, 2, QK_BM, 16); }

/* The sm100 data flow on the host model, on host pointers. Returns 0; nonzero when the model
 * reported a broken rule (message in err). With QK_FAULT_ONE_WARP_EPILOGUE the out-of-quadrant
 * reads are refused (err names the rule) and those rows stay unwritten; the function still returns
 * 0 after recording the error, so a caller can look at what was and was not written. */
int qk_emu_run(const qk_params *p, unsigned faults, char *err, int errlen);

#endif
