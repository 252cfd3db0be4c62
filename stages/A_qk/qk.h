/* Stage A: S = scale * Q K^T. What the stage's backends share: the problem description and the
 * entry points of the three backends (qk_sm100.cu, qk_sm90.cu, qk_emu.c). */
#ifndef FMHA_STAGE_A_QK_H
#define FMHA_STAGE_A_QK_H

#include <stdint.h>

#include "host/watchdog.h"
#include "model/canonical.h"

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

/* SMEM of one CTA: the two tiles, 64 bytes for the mbarrier and the TMEM address slot, and 1024
 * bytes of slack to align the tiles to the 1024-byte swizzle repeat. */
FMHA_HD uint32_t qk_smem_bytes(int d) { return qk_q_tile(d).bytes + qk_k_tile(d).bytes + 64u + 1024u; }

#ifdef __cplusplus
extern "C" {
#endif

/* GPU launchers: enqueue on the default stream; 0, or 1 after printing a CUDA error. */
int qk_sm100_launch(const qk_params *p);
int qk_sm90_launch(const qk_params *p);

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
