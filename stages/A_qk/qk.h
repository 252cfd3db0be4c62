/* Stage A: S = scale * Q K^T. What the stage's backends share: the problem description and the
 * entry points of the three backends (qk_sm100.cu, qk_sm90.cu, qk_emu.c). */
#ifndef FMHA_STAGE_A_QK_H
#define FMHA_STAGE_A_QK_H

#include <stdint.h>

#include "host/watchdog.h"
#include "model/canonical.h"
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
 *   smem_q, smem_k: the two tiles; mma_done: the mbarrier the MMAs' commit arrives on; the TMEM
 *   base address written by tcgen05.alloc. */
typedef struct {
    uint32_t q, k, mma_done, tmem_slot;
    uint32_t used;  /* bytes from the aligned base */
    uint32_t bytes; /* dynamic SMEM to request: used + the base alignment's worst case */
} qk_smem_layout;

FMHA_HD qk_smem_layout qk_smem_layout_make(int d)
{
    qk_smem_layout l;
    uint32_t at = 0;
    l.q = smem_place(&at, qk_q_tile(d).bytes, SMEM_TILE_ALIGN);
    l.k = smem_place(&at, qk_k_tile(d).bytes, SMEM_TILE_ALIGN);
    l.mma_done = smem_place(&at, 8u, 8u);
    l.tmem_slot = smem_place(&at, 4u, 4u);
    l.used = at;
    l.bytes = smem_launch_bytes(at, SMEM_TILE_ALIGN);
    return l;
}

/* The grid: x = KV tiles, y = query tiles, z = batch x heads (validate() checks the limits). */
FMHA_HD void qk_grid_dims(const qk_params *p, unsigned *x, unsigned *y, unsigned *z)
{
    *x = (unsigned)((p->skv + QK_BN - 1) / QK_BN);
    *y = (unsigned)((p->sq + QK_BM - 1) / QK_BM);
    *z = (unsigned)(p->b * p->h);
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

/* Epilogue variants of the emu data flow (footgun FG02): all four warps of the warpgroup read
 * their own 32-lane quadrant (correct), or warp 0 alone tries to read all 128 lanes (the seed's
 * blocked "T > 32" kernel). */
typedef enum { QK_EPILOGUE_FOUR_WARPS = 0, QK_EPILOGUE_ONE_WARP = 1 } qk_epilogue;

/* The sm100 data flow on the host model, on host pointers. Returns 0; nonzero when the model
 * reported a broken rule (message in err). With QK_EPILOGUE_ONE_WARP the out-of-quadrant reads are
 * refused (err names the rule) and those rows stay unwritten; the function still returns 0 after
 * recording the error, so a caller can look at what was and was not written. */
int qk_emu_run(const qk_params *p, qk_epilogue epi, char *err, int errlen);

#endif
