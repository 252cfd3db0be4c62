/* The attention core: what every attention stage from C on shares, on the host, in the emu flows
 * and on the device (FMHA_HD helpers). A later stage adds its one idea around these names; it
 * never copies or renames them, so `diff` of two stages shows the idea.
 *
 *   fmha_params      pointers and element strides (BHSD or BSHD), shape, scale, causal, faults
 *   FMHA_BM, FMHA_BN the tile: Br = 128 query rows per CTA, Bc = 128 keys per KV tile
 *   fmha_kv_head     GQA/MQA: the KV head a query head reads
 *   fmha_visible     the mask: tails and causal (bottom-right aligned)
 *   fmha_kv_tiles    how many KV tiles a query tile visits (the causal mask ends it early)
 *   fmha_exp_base    the softmax guard for rows that have seen no key yet (FG14)
 *   fmha_row_max_next a row's running max after a tile, lagging by up to pipe.rescale_th
 *   fmha_q_tile ...  the SMEM operand tiles of both MMAs
 *   fmha_grid        the grid: (query tiles, Hq, B)
 *
 * The online softmax works in the log2 domain (FMHA_LOG2E): s2 = scale log2(e) q.k, exp2 on the
 * MUFU unit; LSE is reported in natural log (FMHA_LN2) for a split-KV merge. */
#ifndef FMHA_ATTN_CORE_H
#define FMHA_ATTN_CORE_H

#include <math.h>
#include <stdint.h>

#include "host/watchdog.h"
#include "model/canonical.h"
#include "model/grid.h"

#define FMHA_BM 128 /* Br: query rows per CTA */
#define FMHA_BN 128 /* Bc: keys per KV tile */

#define FMHA_LOG2E 1.4426950408889634f
#define FMHA_LN2 0.6931471805599453f

typedef struct {
    const uint16_t *q, *k, *v; /* bf16; element (b, h, s, d) at b*sb + h*sh + s*ss + d */
    uint16_t *o;               /* bf16 output, same indexing as q */
    float *lse;                /* [B, Hq, Sq] f32: natural-log sum of exp of the scaled scores */
    int64_t q_sb, q_sh, q_ss;  /* element strides of Q */
    int64_t k_sb, k_sh, k_ss;  /* of K; a KV head stride of 0 shares one head (MQA) */
    int64_t v_sb, v_sh, v_ss;  /* of V */
    int64_t o_sb, o_sh, o_ss;  /* of O */
    int b, hq, hkv, sq, skv, d;
    float scale;               /* softmax scale, usually 1/sqrt(D) */
    int causal;                /* bottom-right aligned: row i sees keys j <= i + (Skv - Sq) */
    unsigned faults;           /* FMHA_FAULT_* (footgun variants; 0 in normal use) */
    fmha_watchdog *wd;         /* device pointer of the deadlock report */
    struct {                   /* stage F's pipeline switches (0 in the stages before it) */
        int ring;              /* K/V ring slots, 1..3 */
        int ws, pingpong, overlap;
        int rows;              /* query rows per CTA: 0 = FMHA_BM; sm90's three consumer groups 192 */
        int cols;              /* keys per KV tile: 0 = FMHA_BN; stage F's sm90 --kv-tile 64 (D 256) / 176 (D 128) */
        int persistent;        /* sm90: a grid of at most one CTA per SM, each walking query tiles */
        unsigned *tile_counter; /* --persistent: the tile scheduler's counter (device), never reset: */
        unsigned tile_base;     /* this launch's tiles are counter values tile_base .. + tiles - 1 */
        int lpt_heads;          /* causal: the (batch, head) pairs of one L2 section (fmha_tile_of); 0, 1: head by head */
        int kv_box5;            /* sm90 stage F (--kv-box 1): K and V as one 5-D box a tile (host/fmha_tmaps.c) */
        int cluster;            /* sm90 stage F (--cluster 2): neighbouring query tiles in a cluster of 2, each
                                 * K/V box loaded once and multicast into both CTAs; 0, 1: no cluster */
        float rescale_th;       /* sm90 and emu stage F (--rescale-th N): a row's max moves only when a tile's exceeds
                                 * it by more than N (log2 units: fmha_row_max_next), so O's rescale is skipped on most
                                 * tiles; 0: whenever it grows */
    } pipe;
} fmha_params;

/* Broken variants the footgun tests run (0 = correct). */
enum {
    FMHA_FAULT_NO_MASK_GUARD = 1u << 0,    /* FG14: exp2(s - m) with m = -inf on a fully masked row */
    FMHA_FAULT_ONE_SOFTMAX_WARP = 1u << 1, /* FG02 (stage level, emu): warp 0 alone reads S */
    FMHA_FAULT_P_FULL_COUNTS_WARPS = 1u << 2, /* FG10 (emu, sm100): p_full counts 4 warps, 128 threads arrive */
    /* stage E (TMA) and later */
    FMHA_FAULT_TMAP_RANK_STRIDES = 1u << 3,    /* FG13: the maps' strides, rank entries from the element size */
    FMHA_FAULT_TMAP_ELEMENT_STRIDES = 1u << 4, /* FG13: strides in elements, not bytes */
    FMHA_FAULT_TMAP_STRIDE_NOT_16 = 1u << 5,   /* FG13: a row stride 8 bytes past a multiple of 16 */
    FMHA_FAULT_TMAP_WIDE_INNER_BOX = 1u << 6,  /* FG13: one box the whole head dim wide */
    FMHA_FAULT_EXPECT_TX_SHORT = 1u << 7,      /* FG15: K's expect_tx one box short */
    FMHA_FAULT_EXPECT_TX_LONG = 1u << 8,       /* FG15: K's expect_tx one box too many */
    FMHA_FAULT_FIRST_WAIT_PARITY = 1u << 9,    /* FG16: K's full barrier waited on the wrong parity */
    FMHA_FAULT_NO_TAIL_MASK = 1u << 10,        /* FG21: keys past Skv (TMA zero fill) not masked */
    FMHA_FAULT_STORE_NO_FENCE = 1u << 11,      /* FG22: O's TMA store without fence.proxy.async */
    FMHA_FAULT_STORE_NO_WAIT = 1u << 12,       /* FG22: the CTA exits before the store has read SMEM */
    /* stage F (the ring) */
    FMHA_FAULT_EARLY_RELEASE = 1u << 13,       /* FG23: a ring slot released before the MMA reading it completed */
    FMHA_FAULT_RING_SAME_PARITY = 1u << 14,    /* FG16: the producer waits empty with the full parity */
    FMHA_FAULT_RING_NO_FLIP = 1u << 15,        /* FG15/16: the ring's phase not flipped at the wrap */
    FMHA_FAULT_COMMIT_MULTICAST = 1u << 16,    /* FG11: the commit sent with a cluster multicast mask */
    FMHA_FAULT_NAMED_BAR_JOIN = 1u << 17,      /* FG12: the load warp joins the TMEM-address barrier of warps 0-4 */
};

/* Probes a kernel's mbarrier wait spends before the watchdog reports a deadlock when a footgun
 * variant runs (p->faults set): hangs are expected there, so they are reported after 2^18 probes
 * (well under a second on the H200) instead of the default bound (device/mbarrier.cuh). */
#define FMHA_FAULT_WAIT_PROBES (1u << 18)

/* The KV head that query head h reads (GQA: Hq / Hkv query heads per KV head). */
FMHA_HD int fmha_kv_head(const fmha_params *p, int h) { return h / (p->hq / p->hkv); }

/* Does query row i see key j? Tails (j >= Skv) and the causal mask, bottom-right aligned. */
FMHA_HD int fmha_visible(const fmha_params *p, int i, int j)
{
    const int in_tail = j >= p->skv && !(p->faults & FMHA_FAULT_NO_TAIL_MASK); /* FG21 drops this test */
    return !in_tail && (!p->causal || j <= i + (p->skv - p->sq));
}

/* The keys of one KV tile, Bc: FMHA_BN, unless a kernel takes fewer (p->pipe.cols). */
FMHA_HD int fmha_kv_cols(const fmha_params *p) { return p->pipe.cols ? p->pipe.cols : FMHA_BN; }

/* Does every row from r0 on see every key of the tile [kv0, kv0 + bn)? Then the tile needs
 * no mask at all (most tiles of a long sequence: only the last one has a tail, and with causal
 * only the tiles that cross the diagonal are cut), and a kernel may skip fmha_visible for its rows
 * [r0, ...). Row r0 sees the fewest keys (the causal limit grows with the row), so it decides. The
 * same rules as fmha_visible, FG21's variant included. */
FMHA_HD int fmha_tile_unmasked_bn(const fmha_params *p, int r0, int kv0, int bn)
{
    const int last = kv0 + bn - 1;
    if (last >= p->skv && !(p->faults & FMHA_FAULT_NO_TAIL_MASK)) return 0;
    return !p->causal || last <= r0 + (p->skv - p->sq);
}
FMHA_HD int fmha_tile_unmasked(const fmha_params *p, int r0, int kv0) { return fmha_tile_unmasked_bn(p, r0, kv0, FMHA_BN); }

/* The query rows of one CTA, Br: FMHA_BM, unless a kernel takes more (p->pipe.rows). */
FMHA_HD int fmha_cta_rows(const fmha_params *p) { return p->pipe.rows ? p->pipe.rows : FMHA_BM; }

/* KV tiles of bn keys a CTA whose rows are [q0, q0 + br) must visit: the causal mask ends them
 * early; a tile where every row sees no key (Sq > Skv) visits none and writes O = 0, LSE = -inf. A
 * kernel that knows br and bn at compile time passes them; fmha_kv_tiles_rows takes the tile's
 * keys from p, fmha_kv_tiles the CTA's rows too. */
FMHA_HD int fmha_kv_tiles_bn(const fmha_params *p, int q0, int br, int bn)
{
    int keys = p->skv;
    if (p->causal) {
        int last_row = q0 + br - 1 < p->sq - 1 ? q0 + br - 1 : p->sq - 1;
        int last_key = last_row + (p->skv - p->sq);
        keys = last_key + 1 < p->skv ? last_key + 1 : p->skv;
        if (keys < 0) keys = 0;
    }
    return (keys + bn - 1) / bn;
}
FMHA_HD int fmha_kv_tiles_rows(const fmha_params *p, int q0, int br) { return fmha_kv_tiles_bn(p, q0, br, fmha_kv_cols(p)); }
FMHA_HD int fmha_kv_tiles(const fmha_params *p, int q0) { return fmha_kv_tiles_rows(p, q0, fmha_cta_rows(p)); }

/* The max to exponentiate against: a row that has seen no key yet has m = -inf, and
 * exp2(-inf - (-inf)) is NaN. Using 0 instead gives exp2(-inf) = 0 for every masked score and for
 * the rescale factor alpha = exp2(m_old - base), so a fully masked row keeps O = 0 and l = 0
 * (footgun FG14). The old max is never guarded: exp2(-inf - base) = 0 is exactly right for a row
 * that had seen nothing, and a guarded 0 there could overflow to inf and turn 0 * O into NaN. */
FMHA_HD float fmha_exp_base(float m, unsigned faults)
{
    return (m == -INFINITY && !(faults & FMHA_FAULT_NO_MASK_GUARD)) ? 0.0f : m;
}

/* A row's max after a tile whose own max is m_tile (both log2-scaled): it moves only when the
 * tile's exceeds it by more than lag (stage F's --rescale-th, FlashAttention-4's conditional
 * rescale), so P stays below 2^lag and alpha is exactly 1 on the tiles it stays. lag = 0 is the
 * running max of FlashAttention-2; -inf + lag is -inf, so a row's first visible key moves it. */
FMHA_HD float fmha_row_max_next(float m, float m_tile, float lag)
{
    return m_tile > m + lag ? m_tile : m;
}

/* The operand tiles in SMEM, decided once for every backend and stage:
 *   Q [Br x D] K-major SW128 (A of S = Q K^T), K [Bc x D] K-major SW128 (B of S),
 *   V [Bc kv x D] MN-major SW128 (B of O = P V, N = D: V[kv][d] as stored). */
FMHA_HD smem_tile fmha_q_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, FMHA_BM, d); }
FMHA_HD smem_tile fmha_q_tile_rows(int d, int rows) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, rows, d); }
FMHA_HD smem_tile fmha_k_tile_cols(int d, int bn) { return smem_tile_make(MAJOR_K, SWZ_128B, 2, bn, d); }
FMHA_HD smem_tile fmha_v_tile_cols(int d, int bn) { return smem_tile_make(MAJOR_MN, SWZ_128B, 2, d, bn); }
FMHA_HD smem_tile fmha_k_tile(int d) { return fmha_k_tile_cols(d, FMHA_BN); }
FMHA_HD smem_tile fmha_v_tile(int d) { return fmha_v_tile_cols(d, FMHA_BN); }

/* The grid: x = query tiles, y = query heads, z = batch (each within the hardware's limits, which
 * the stage's validate() checks with cli_check_grid). */
FMHA_HD grid3 fmha_grid(const fmha_params *p)
{
    const int br = fmha_cta_rows(p);
    grid3 g = {(unsigned)((p->sq + br - 1) / br), (unsigned)p->hq, (unsigned)p->b};
    return g;
}

/* The query tiles of fmha_grid as one list, in the order the CTAs run: the one-tile kernels map
 * their linear block index t = x + X (y + Y z) through it, and a persistent kernel's CTAs draw from
 * it in turn (a shared counter). Non-causal: the grid's own order, the query tiles of one head next
 * to each other (their K and V stay in L2). Causal, where a query tile's work grows with its index:
 * longest first within L2 sections of p->pipe.lpt_heads (batch, head) pairs (FlashAttention-3's
 * scheduler): the section's last query tiles of every head, then the ones before them, down to the
 * first; then the next section. Head by head (lpt_heads 1) each head ends on short tiles, but the
 * next head starts long ones after them, and the grid's last CTAs are long ones beside idle SMs;
 * across a section the last wave holds the shortest tiles of many heads, and the section's K and
 * V (fmha_lpt_heads sizes it) still fit in L2. */
typedef struct {
    int q0, h, b; /* the tile's first query row, its head and batch */
} fmha_tile;

FMHA_HD int fmha_tile_count(const fmha_params *p)
{
    const grid3 g = fmha_grid(p);
    return (int)(g.x * g.y * g.z);
}

FMHA_HD fmha_tile fmha_tile_of(const fmha_params *p, int t)
{
    const grid3 g = fmha_grid(p);
    int x = t % (int)g.x, hb = t / (int)g.x;
    const int sec = p->pipe.lpt_heads, nh = (int)(g.y * g.z);
    if (p->causal && sec > 1) {
        const int s = t / (sec * (int)g.x), i = t % (sec * (int)g.x); /* section s, place i in it */
        const int n = nh - s * sec < sec ? nh - s * sec : sec;            /* its pairs: the last one may hold fewer */
        x = i / n;
        hb = s * sec + i % n;
    }
    fmha_tile r;
    r.q0 = (p->causal ? (int)g.x - 1 - x : x) * fmha_cta_rows(p); /* causal: the longest tiles first */
    r.h = hb % (int)g.y;
    r.b = hb / (int)g.y;
    return r;
}

/* The pairs of an L2 section (fmha_tile_of) at this shape: the most, a power of 2, whose K and V
 * (Skv x D bf16 each, a KV head shared by Hq / Hkv query heads) fit in `mb` MiB. FlashAttention-3
 * takes 32 MiB of the H200's 50; 16 leaves room for Q and O streaming past (notes/stage-f-perf.md). */
FMHA_HD int fmha_lpt_heads(const fmha_params *p, int mb)
{
    const int64_t kv = (int64_t)p->skv * p->d * 2 * 2;               /* K and V bytes of one KV head */
    const int64_t per = kv / (p->hkv > 0 && p->hq >= p->hkv ? p->hq / p->hkv : 1); /* a query head's share */
    const int nh = p->b * p->hq;
    int n = 1;
    while (2 * n <= nh && 2 * n * (per > 0 ? per : 1) <= ((int64_t)mb << 20)) n *= 2;
    return n;
}

#endif
