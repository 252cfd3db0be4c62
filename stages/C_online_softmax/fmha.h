/* Stage C: the full attention forward, O = softmax(scale * Q K^T + mask) V, plus LSE. What its
 * backends share: the parameters (the seed's FmhaParams: pointers and element strides, so BHSD and
 * BSHD both work), the SMEM tiles, the TMEM column map, the mask and the softmax guard, and the
 * entry points of fmha_sm100.cu, fmha_sm90.cu and fmha_emu.c. */
#ifndef FMHA_STAGE_C_FMHA_H
#define FMHA_STAGE_C_FMHA_H

#include <math.h>
#include <stdint.h>

#include "host/watchdog.h"
#include "model/canonical.h"

#define FMHA_BM 128 /* Br: query rows per CTA */
#define FMHA_BN 128 /* Bc: keys per KV tile */

typedef struct {
    const uint16_t *q, *k, *v; /* bf16; element (b, h, s, d) at b*sb + h*sh + s*ss + d */
    uint16_t *o;               /* bf16 output, same indexing as q */
    float *lse;                /* [B, Hq, Sq] f32: natural-log sum of exp of the scaled scores */
    int64_t q_sb, q_sh, q_ss;  /* element strides of Q (and O) */
    int64_t k_sb, k_sh, k_ss;  /* of K; a KV head stride of 0 shares one head (MQA) */
    int64_t v_sb, v_sh, v_ss;  /* of V */
    int64_t o_sb, o_sh, o_ss;  /* of O */
    int b, hq, hkv, sq, skv, d;
    float scale;               /* softmax scale, usually 1/sqrt(D) */
    int causal;                /* bottom-right aligned: row i sees keys j <= i + (Skv - Sq) */
    unsigned faults;           /* FMHA_FAULT_* (footgun variants; 0 in normal use) */
    fmha_watchdog *wd;         /* device pointer of the deadlock report */
} fmha_params;

/* Broken variants the footgun tests run (0 = correct). */
enum {
    FMHA_FAULT_NO_MASK_GUARD = 1u << 0, /* FG14: exp2(s - m) with m = -inf on a fully masked row */
    FMHA_FAULT_ONE_SOFTMAX_WARP = 1u << 1, /* FG02 (stage level, emu): warp 0 alone reads S */
};

/* The KV head that query head h reads (GQA: Hq / Hkv query heads per KV head). */
FMHA_HD int fmha_kv_head(const fmha_params *p, int h) { return h / (p->hq / p->hkv); }

/* Does query row i see key j? Tails (j >= Skv) and the causal mask, bottom-right aligned. */
FMHA_HD int fmha_visible(const fmha_params *p, int i, int j)
{
    return j < p->skv && (!p->causal || j <= i + (p->skv - p->sq));
}

/* KV tiles a CTA whose rows are [q0, q0 + 128) must visit: the causal mask ends them early; a tile
 * where every row sees no key (Sq > Skv) visits none and writes O = 0, LSE = -inf. */
FMHA_HD int fmha_kv_tiles(const fmha_params *p, int q0)
{
    int keys = p->skv;
    if (p->causal) {
        int last_row = q0 + FMHA_BM - 1 < p->sq - 1 ? q0 + FMHA_BM - 1 : p->sq - 1;
        int last_key = last_row + (p->skv - p->sq);
        keys = last_key + 1 < p->skv ? last_key + 1 : p->skv;
        if (keys < 0) keys = 0;
    }
    return (keys + FMHA_BN - 1) / FMHA_BN;
}

/* The max to exponentiate against: a row that has seen no key yet has m = -inf, and
 * exp2(-inf - (-inf)) is NaN. Using 0 instead gives exp2(-inf) = 0 for every masked score and for
 * the rescale factor alpha = exp2(m_old - base), so a fully masked row keeps O = 0 and l = 0
 * (footgun FG14). The old max is never guarded: exp2(-inf - base) = 0 is exactly right for a row
 * that had seen nothing, and a guarded 0 there could overflow to inf and turn 0 * O into NaN. */
FMHA_HD float fmha_exp_base(float m, unsigned faults)
{
    return (m == -INFINITY && !(faults & FMHA_FAULT_NO_MASK_GUARD)) ? 0.0f : m;
}

/* SMEM tiles, decided once for every backend (the same as stage B's):
 *   Q [128 x D] K-major SW128 (A of S = Q K^T), K [128 x D] K-major SW128 (B of S),
 *   V [128 kv x D] MN-major SW128 (B of O = P V, N = d). */
FMHA_HD smem_tile fmha_q_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, FMHA_BM, d); }
FMHA_HD smem_tile fmha_k_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, FMHA_BN, d); }
FMHA_HD smem_tile fmha_v_tile(int d) { return smem_tile_make(MAJOR_MN, SWZ_128B, 2, d, FMHA_BN); }
FMHA_HD uint32_t fmha_smem_bytes(int d)
{
    return fmha_q_tile(d).bytes + fmha_k_tile(d).bytes + fmha_v_tile(d).bytes + 128u + 1024u;
}

/* TMEM columns (sm100), 512 allocated (S 128 + P 64 + O up to 256):
 *   S  lanes 0-127 x [0, 128)        f32   scores of the current KV tile
 *   P  lanes 0-127 x [128, 192)      bf16 packed two per column (A of the TS P V MMA)
 *   O  lanes 0-127 x [256, 256 + D)  f32   the running output, rescaled in place */
#define FMHA_TMEM_COLS 512
#define FMHA_TMEM_S 0
#define FMHA_TMEM_P 128
#define FMHA_TMEM_O 256

#define FMHA_LOG2E 1.4426950408889634f
#define FMHA_LN2 0.6931471805599453f

#ifdef __cplusplus
extern "C" {
#endif
int fmha_sm100_launch(const fmha_params *p);
int fmha_sm90_launch(const fmha_params *p);
#ifdef __cplusplus
}
#endif

/* The sm100 data flow on the host model (6 modelled warps), on host pointers. 0, or 1 with the
 * model's message in err. */
int fmha_emu_run(const fmha_params *p, char *err, int errlen);

#endif
