/* The FP8 paged decode core (stage D, and later the pipelined decode): what the kernels, the emu
 * flow and the host check share about the problem, so the rules are written once.
 *
 *   dec_params        the paged e4m3 cache, its scales and block table, the decode queries, the
 *                     split-KV partials, shape, faults
 *   packed rows       the Hq / Hkv query heads of one KV head times the Sq new rows are one M
 *                     dimension: packed row m = i * G + g is query row i of head hk * G + g
 *   dec_visible_keys  causal among the Sq new rows (bottom-right): row i sees the first
 *                     L - Sq + 1 + i keys of its sequence (none when that is <= 0)
 *   dec_split_tiles   which KV tiles of a sequence split s reads (tile-aligned, possibly none)
 *   dec_token_row     token t's row in the cache, through the block table
 *   dec_p_scale       the per-row, per-tile scale P is quantised with (notes/fp8-scales.md)
 *   dec_p_lscale_*    dec_p_scale rounded up to a power of two, in log2 units (the sm90 ring
 *                     past 32 rows)
 *   dec_*_tile        the e4m3 SMEM operand tiles of both MMAs, every backend
 *   dec_grid          x = split * m_tiles + m_tile, y = KV head, z = sequence
 *
 * Layouts: Q and O [B, Sq, Hq, D] bf16 (the new tokens of each sequence, heads innermost), LSE
 * [B, Hq, Sq] f32 (natural log), K and V [num_pages, page, Hkv, D] e4m3, their scales
 * [num_pages, page, Hkv] f32, block_table [B, max_pages] int32, seqlens [B] int32 (each
 * sequence's whole length, the Sq new tokens included). Split partials: O_part [splits, B, Sq,
 * Hq, D] f32 (already divided by the split's own row sum) and LSE_part [splits, B, Hq, Sq]. */
#ifndef FMHA_ATTN_DECODE_CORE_H
#define FMHA_ATTN_DECODE_CORE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "attn/fmha_core.h" /* fmha_exp_base: the fully-masked-row guard (FG14), one rule for both */
#include "host/watchdog.h"
#include "model/canonical.h"
#include "model/frag_map.h"
#include "model/grid.h"

#define DEC_BN 128        /* Bc: keys per KV tile */
#define DEC_BM_SM90 64    /* packed query rows a warpgroup takes on sm90: 8, 16, 32 (swapped MMAs) or 64; a CTA
                           * of two such warpgroups takes 128 (--m64-groups 2) */
#define DEC_BM_SM100 128  /* on sm100 (and emu, its twin): the M = 128 MMA, one row per TMEM lane */
#define DEC_MAX_SPLITS 64 /* split-KV: at most this many CTAs share one sequence's keys */
#define DEC_MAX_RING 4    /* the pipelined decode's deepest K/V ring */
#define DEC_MAX_PREFETCH 4 /* the furthest KV tile the L2 prefetch reaches ahead of the gather */
#define DEC_E4M3_MAX 448.0f
/* P's quantisation scale never drops below 2^-20 of the tile's largest V scale (dec_p_scale). */
#define DEC_P_FLOOR 9.5367431640625e-07f

#define DEC_LOG2E 1.4426950408889634f
#define DEC_LN2 0.6931471805599453f

typedef struct {
    const uint16_t *q;               /* [B, Sq, Hq, D] bf16 */
    const uint8_t *k, *v;            /* [num_pages, page, Hkv, D] e4m3 */
    const float *k_scale, *v_scale;  /* [num_pages, page, Hkv] f32, one per (token, KV head) */
    const int32_t *block_table;      /* [B, max_pages]: page j of sequence b */
    const int32_t *seqlens;          /* [B] */
    uint16_t *o;                     /* [B, Sq, Hq, D] bf16 */
    float *lse;                      /* [B, Hq, Sq] f32 */
    float *o_part, *lse_part;        /* split partials (splits > 1 only; else unused) */
    int b, hq, hkv, sq, d;
    int page, num_pages, max_pages;
    int max_len;                     /* the longest sequence (the grid's split count is sized by it) */
    int splits;                      /* CTAs per (sequence, KV head, m-tile) along the keys */
    int bm;                          /* packed rows per CTA: sm90 8..DEC_BM_SM90 by the shape (2 x DEC_BM_SM90 with
                                      * --m64-groups 2), sm100 DEC_BM_SM100 */
    int ring;                        /* sm90's pipelined decode: K/V ring slots (2..DEC_MAX_RING); 0 = no ring */
    int overlap;                     /* sm90's ring past 32 rows: P_{j-1} V_{j-1} under tile j's softmax (0/1) */
    int prefetch;                    /* sm90's unpipelined kernels: KV tiles prefetched into L2 ahead of the
                                      * gather (0..DEC_MAX_PREFETCH); 0 = none */
    int kv_tma;                      /* sm90's unpipelined kernels and (1) its ring past 32 rows: K and V
                                      * gathered by TMA, one box a page (dec_kv_tma_box); 0 = cp.async, 16
                                      * bytes a copy */
    int fair;                        /* sm90's swapped kernel with the next tile's boxes ahead (--fair N): a
                                      * CTA more than N tiles ahead of the grid's mean holds its next boxes
                                      * back; 0 = off */
    unsigned long long *fair_ctr;    /* --fair: the KV tiles whose boxes the grid issued, never reset */
    unsigned long long fair_base;    /* --fair: the counter's value when this launch began */
    unsigned long long fair_total;   /* --fair: the KV tiles all CTAs of one launch read */
    int persistent;                  /* sm90's swapped kernel with the next tile's boxes ahead (--persistent
                                      * 1): one CTA per resident slot walks the grid's items */
    unsigned long long *walk_ctr;    /* --persistent: the items claimed, never reset (dec_walk_item) */
    unsigned long long walk_base;    /* --persistent: the counter's value when this launch began */
    float scale;                     /* softmax scale, usually 1/sqrt(D) */
    unsigned faults;                 /* DEC_FAULT_* */
    fmha_watchdog *wd;               /* device pointer of the deadlock report */
    uint64_t *timeline;              /* sm90 (--timeline): DEC_TL_WORDS a CTA (dec_tl_*); NULL = no stamps */
} dec_params;

/* --timeline: what each CTA of an sm90 decode kernel writes (one thread, CTA c at words
 * DEC_TL_WORDS c .. of p->timeline): %globaltimer in ns at its entry, once its first KV tile is in
 * SMEM and ready for the MMAs (0: a split with no tile), at its exit (its stores issued), and the SM
 * it ran on (%smid). The last timed launch's stamps are what the host reads back (host/cta_timeline.h). */
enum { DEC_TL_ENTRY, DEC_TL_FIRST_TILE, DEC_TL_EXIT, DEC_TL_SM, DEC_TL_WORDS };

/* Broken variants the footgun tests run (0 = correct). */
enum {
    DEC_FAULT_K_SCALE_ON_ROWS = 1u << 0,   /* FG17: S's row i scaled by key i's scale, not column j by key j's */
    DEC_FAULT_V_SCALE_ON_O_ROWS = 1u << 1, /* FG17: V's scale left out of P, applied to O's rows instead */
    DEC_FAULT_K_SCALE_DROPPED = 1u << 2,   /* FG17: K's scale left out */
    DEC_FAULT_READ_WHOLE_PAGE = 1u << 3,   /* FG18: the gather reads every slot of the last page */
    DEC_FAULT_TABLE_OUT_OF_RANGE = 1u << 4, /* FG18: a block-table entry past the cache, the host check skipped */
    DEC_FAULT_NO_SATURATION = 1u << 5,     /* FG19: the cache quantised by a per-tensor scale, unsaturated */
    DEC_FAULT_V_NOT_TRANSPOSED = 1u << 6,  /* FG20: V copied as stored (MN-major), read as K-major */
    DEC_FAULT_RING_EARLY_RELEASE = 1u << 7, /* FG23 (--ring): a slot released right after S's MMA, before
                                             * the softmax read its scales and P V its Vt */
};

/* Query heads per KV head (GQA; Hq for MQA). */
FMHA_HD int dec_group(const dec_params *p) { return p->hq / p->hkv; }
/* Packed rows per (sequence, KV head) and the CTAs that cover them. */
FMHA_HD int dec_rows(const dec_params *p) { return dec_group(p) * p->sq; }
/* sm90's packed rows per CTA for m packed rows of a KV head: the swapped MMAs' N (8, 16 or 32: S^T =
 * K Q^T, the keys on the m64 side) up to 32 rows, one warpgroup's m64 past that. */
FMHA_HD int dec_sm90_bm(int m) { return m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : DEC_BM_SM90; }
FMHA_HD int dec_m_tiles(const dec_params *p) { return (dec_rows(p) + p->bm - 1) / p->bm; }

/* Packed row m -> its query row i and query head h (of KV head hk). */
FMHA_HD void dec_unpack_row(const dec_params *p, int hk, int m, int *i, int *h)
{
    *i = m / dec_group(p);
    *h = hk * dec_group(p) + m % dec_group(p);
}

/* Keys query row i of a sequence of L tokens sees: the cache holds the Sq new tokens last, and
 * new token i sees itself and everything before it. 0 when L < Sq - i (a row with no key: O = 0,
 * LSE = -inf). */
FMHA_HD int dec_visible_keys(const dec_params *p, int len, int i)
{
    const int n = len - p->sq + 1 + i;
    return n < 0 ? 0 : (n > len ? len : n);
}

FMHA_HD int dec_kv_tiles(int len) { return (len + DEC_BN - 1) / DEC_BN; }

/* Split s of a sequence of L tokens reads KV tiles [*t0, *t1): the tiles are dealt out in equal
 * runs, so a short sequence may leave the last splits empty (*t0 >= *t1: LSE_part = -inf, its
 * O_part never read). */
FMHA_HD void dec_split_tiles(const dec_params *p, int len, int s, int *t0, int *t1)
{
    const int nt = dec_kv_tiles(len), per = (nt + p->splits - 1) / p->splits;
    *t0 = s * per;
    *t1 = *t0 + per < nt ? *t0 + per : nt;
}

/* The KV tiles one launch reads over all its CTAs, for sequence lengths lens[B] (--fair's total):
 * each of the m-tile CTAs of a (sequence, KV head, split) reads that split's tiles. */
FMHA_HD unsigned long long dec_grid_tiles(const dec_params *p, const int32_t *lens)
{
    unsigned long long n = 0;
    for (int b = 0; b < p->b; b++)
        for (int s = 0; s < p->splits; s++) {
            int t0, t1;
            dec_split_tiles(p, lens[b], s, &t0, &t1);
            if (t1 > t0) n += (unsigned long long)(t1 - t0);
        }
    return n * (unsigned long long)dec_m_tiles(p) * (unsigned long long)p->hkv;
}

/* --persistent 1 (sm90's swapped kernel with the next tile's boxes ahead): a grid of at most one
 * CTA per resident slot walks the items of the grid dec_grid lays out (x = split * m_tiles + m_tile,
 * y = KV head, z = sequence; item = x + X (y + Hkv z)). CTA c starts with item c and claims each
 * next one from a counter (dec_walk_item). An item: its coordinates, its sequence's length (lens:
 * p->seqlens on the device, the host's copy on the host) and, by dec_item_tiles, the tiles [t0, t1)
 * of its split (none: an empty split). */
typedef struct {
    int mt, split, hk, b, len, t0, t1;
} dec_item;
FMHA_HD int dec_items(const dec_params *p) { return dec_m_tiles(p) * p->splits * p->hkv * p->b; }
FMHA_HD dec_item dec_item_at(const dec_params *p, const int32_t *lens, unsigned x, unsigned y, unsigned z)
{
    dec_item it;
    const int mtiles = dec_m_tiles(p);
    it.mt = x % mtiles, it.split = x / mtiles, it.hk = y, it.b = z;
    it.len = lens[it.b];
    it.t0 = it.t1 = 0; /* dec_item_tiles */
    return it;
}
FMHA_HD dec_item dec_item_tiles(const dec_params *p, dec_item it)
{
    dec_split_tiles(p, it.len, it.split, &it.t0, &it.t1);
    return it;
}
FMHA_HD dec_item dec_item_flat(const dec_params *p, const int32_t *lens, int item)
{
    const unsigned gx = (unsigned)(dec_m_tiles(p) * p->splits), i = (unsigned)item;
    return dec_item_at(p, lens, i % gx, i / gx % (unsigned)p->hkv, i / gx / (unsigned)p->hkv);
}
/* --persistent's claims: the grid's first `grid` items are its CTAs' own; every later one goes to
 * the CTA that claims it, from one counter the launches share and never reset: the claim that read
 * `claimed` (the counter before its add) gets item grid + (claimed - base), a claim past the items
 * gets nitems and ends its CTA's walk. So the items go to whichever CTA is free first, as the
 * hardware hands a later wave's CTAs to the first free slots, each item once; and since every CTA
 * makes exactly one claim past the items, a launch moves the counter by nitems - grid + grid =
 * nitems, the next launch's base. A counter behind the base (a launch that stopped short) reads as
 * past the items: the walks end, they never repeat an item. */
FMHA_HD int dec_walk_item(unsigned long long claimed, unsigned long long base, int grid, int nitems)
{
    const unsigned long long v = claimed - base;
    return v < (unsigned long long)(nitems - grid) ? grid + (int)v : nitems;
}

/* The KV tiles the L2 prefetch (--prefetch N) covers while tile j of a split [t0, t1) is gathered:
 * [*lo, *hi], empty when *lo > *hi. The split's first tile prefetches the N after it, every later
 * tile j the one N ahead, so each tile of the split but the first is prefetched once, N tiles
 * before its gather, and nothing past the split. */
FMHA_HD void dec_prefetch_range(const dec_params *p, int j, int t0, int t1, int *lo, int *hi)
{
    const int n = p->prefetch;
    *lo = j == t0 ? j + 1 : j + n;
    *hi = n <= 0 ? *lo - 1 : (j + n < t1 - 1 ? j + n : t1 - 1);
}

/* The TMA gather (--kv-tma 1): K and V as a 3-D tensor each, {D bytes, Hkv, num_pages * page
 * tokens}, innermost first; a box is {min(D, 128) bytes, 1 head, dec_kv_tma_box_rows tokens}, so a
 * page's rows of one KV head (Hkv * D bytes apart in the cache) land as one box, SW128 like the
 * cp.async gather's K tile (D = 256: two boxes side by side, one per 128-byte K block). A page
 * holds whole tiles, or a tile whole pages of 8 tokens or more (dec_kv_tma_fits). */
FMHA_HD int dec_kv_tma_fits(int page)
{ /* and a box of at least 8 rows, so each box's SMEM start keeps the SW128 tile's 1024-byte alignment */
    return page > 0 && (page % DEC_BN == 0 || (DEC_BN % page == 0 && page % 8 == 0));
}
FMHA_HD int dec_kv_tma_box_rows(int page) { return page < DEC_BN ? page : DEC_BN; }
/* --kv-tma auto (the default): the TMA gather wherever it applies, since it measured the faster
 * gather at every page size (notes/fp8-decode-pipeline.md): sm90's unpipelined kernels (no ring),
 * a page that fits, and not the FG20 variant, whose V is gathered as stored; there with the next
 * tile's copies issued during the current one (2), which measured faster in the swapped kernel and
 * in the 64-row ones alike. 0, 1 and 2 as given. */
FMHA_HD int dec_kv_tma_resolve(int kv_tma, int sm90, int ring, int page, unsigned faults)
{
    if (kv_tma >= 0) return kv_tma;
    if (!(sm90 && !ring && dec_kv_tma_fits(page) && !(faults & DEC_FAULT_V_NOT_TRANSPOSED))) return 0;
    return 2;
}
/* Box q of the tile starting at token kv0 (q < Bc / box rows): its first token's row in the
 * tensor's token dimension (page * page size + the offset in the page), or -1 when the box starts
 * at or past `end` (nothing to load: the SMEM rows keep what they held, and the kernel zeroes V's). */
FMHA_HD int64_t dec_kv_tma_box(const dec_params *p, const int32_t *table_row, int kv0, int q, int end)
{
    const int tok = kv0 + q * dec_kv_tma_box_rows(p->page);
    if (tok >= end) return -1;
    return (int64_t)table_row[tok / p->page] * p->page + tok % p->page;
}

/* The TMA gather's walk through the block table, tile by tile, without a division a token (the
 * swapped kernel's --kv-tma 2 looks up each next tile this way). Token kv0 + off of a tile (kv0 a
 * multiple of DEC_BN, 0 <= off < DEC_BN), with a page the gather accepts (dec_kv_tma_fits), sits at
 *   page <= DEC_BN (a divisor of it): table entry kv0 / page + off / page, offset off % page;
 *   page >= DEC_BN (a multiple of it): table entry kv0 / page, offset kv0 % page + off (< page),
 * so the sum of a tile's cursor (kv0's entry and offset, advanced a tile at a time by adds) and a
 * thread's fixed part (dec_tok_part, computed once) gives dec_token_row's and dec_kv_tma_box's
 * entry and offset. ncu counted their two divisions at about 30 of a warp's 750 instructions a
 * tile (B128 Hq32 Hkv8 Skv 4k, notes/fp8-decode-pipeline.md). */
typedef struct {
    int entry, offset; /* block-table index and token offset in that page */
    int step;          /* the cursor's entries a tile when a tile spans whole pages, else 0 */
} dec_table_pos;
FMHA_HD dec_table_pos dec_tok_part(const dec_params *p, int off)
{
    dec_table_pos f = {0, off, 0};
    if (p->page <= DEC_BN) f.entry = off / p->page, f.offset = off % p->page;
    return f;
}
FMHA_HD dec_table_pos dec_tile_cursor(const dec_params *p, int kv0)
{
    dec_table_pos c = {kv0 / p->page, kv0 % p->page, p->page <= DEC_BN ? DEC_BN / p->page : 0};
    return c;
}
FMHA_HD dec_table_pos dec_tile_cursor_next(const dec_params *p, dec_table_pos c)
{
    if (c.step) {
        c.entry += c.step;
    } else {
        c.offset += DEC_BN;
        if (c.offset >= p->page) c.offset -= p->page, c.entry += 1;
    }
    return c;
}

/* Token t (of sequence b) head hk's row in the [num_pages, page, Hkv] order: multiply by D for
 * the byte offset of its codes; index the scales with it directly. */
FMHA_HD int64_t dec_token_row(const dec_params *p, const int32_t *table_row, int t, int hk)
{
    const int64_t page = table_row[t / p->page];
    return (page * p->page + t % p->page) * p->hkv + hk;
}

/* Tokens of a tile the gather reads: up to the sequence's last token. The FG18 variant reads to
 * the end of the last page, into slots no token was written to. */
FMHA_HD int dec_gather_end(const dec_params *p, int len)
{
    if (p->faults & DEC_FAULT_READ_WHOLE_PAGE) return (len + p->page - 1) / p->page * p->page;
    return len;
}

/* The scale of P's e4m3 codes for one row of one tile (notes/fp8-scales.md):
 *   P'_j = P_j sv_j (V's scale folded into P's columns), sp = max(max_j P'_j, floor) / 448,
 *   p8_j = e4m3(P'_j / sp)
 * so the row's largest P' lands on 448 and the others keep e4m3's 3 bits of precision. The
 * floor (2^-20 of the tile's largest V scale, svmax) keeps sp finite and nonzero for a row that
 * sees no key of the tile (or only keys far below its running max): the running output is
 * carried in units of sp (O_true = sp O_acc), and dividing by a tiny sp would overflow it. The
 * floor binds only when every P'_j of the row is under 2^-20 svmax; what it rounds away would
 * matter only if V's token scales differed by more than 2^20. */
FMHA_HD float dec_p_scale(float pmax, float svmax)
{
    const float floor = svmax * DEC_P_FLOOR;
    const float sp = (pmax > floor ? pmax : floor) / DEC_E4M3_MAX;
    /* and never below the smallest normal float: the sm90 kernels multiply by its fast reciprocal
     * (__fdividef, exact only for normal divisors), which would be inf below it */
    return sp > 1.17549435e-38f ? sp : 1.17549435e-38f;
}

/* P's scale for the sm90 ring past 32 rows, in log2 units. The ring folds 1 / sp into the
 * exponentials' FFMA (exp2(t - base - lsp) = P / sp), so what it needs first is lsp = log2 sp, an
 * integer: sp is then a power of two, O's unit changes by exact factors, and P's codes top out
 * between 224 and 448 instead of at 448, with the same 3 bits (notes/fp8-scales.md). This is
 * dec_p_scale's max(emax svmax, 2^-20 svmax) / 448 rounded up to a power of two, from the logs
 * the kernel has at hand: lp = log2 emax (the exponent the exponentials' FFMA gives the row's
 * largest score: no exponential of its own; -inf or NaN for a row with no key in the tile) and
 * lsv = log2 svmax (one LG2 a tile, before S completes):
 *   lsp = ceil(max(lp + lsv, lsv - 20) - log2 448 + bias), and at least -126
 * (the smallest normal float; fmaxf returns the other operand where one is NaN). A tile's part
 * (dec_p_lscale_tile) is computed once, so the chain from a row's max to its first exponential is
 * an FFMA, an FADD, a max and a rounding (dec_p_lscale_row), where the quotient's power took an
 * exponential and a dozen bit operations. bias (2^-12) covers the rounding of the logs and of the
 * FFMA, so 2^lsp stays at or above dec_p_scale's and the codes at or below 448; where the exact
 * log lies less than bias below an integer, the next power up (codes top out near 224). fold = 0
 * (FG17's variant, V's scale left for O's rows): emax alone, as dec_p_scale(emax, svmax). */
typedef struct {
    float c;  /* what the row's lp is offset by */
    float lo; /* the floor's log and the smallest normal float's, whichever is larger */
} dec_p_lscale_k;
#define DEC_LOG2_E4M3_MAX 8.807354922057604f /* log2 448 */
#define DEC_LSCALE_BIAS 2.44140625e-4f        /* 2^-12 */
FMHA_HD dec_p_lscale_k dec_p_lscale_tile(float lsv, int fold)
{
    dec_p_lscale_k k;
    k.c = (fold ? lsv : 0.0f) + (DEC_LSCALE_BIAS - DEC_LOG2_E4M3_MAX);
    k.lo = fmaxf(lsv + (DEC_LSCALE_BIAS - 20.0f - DEC_LOG2_E4M3_MAX), -126.0f); /* the floor: 2^-20 svmax */
    return k;
}
FMHA_HD float dec_p_lscale_row(float lp, dec_p_lscale_k k) { return ceilf(fmaxf(lp + k.c, k.lo)); }
/* 2^lg for an integer lg in [-126, 127] (dec_p_lscale_row's range), exact, from the exponent bits */
FMHA_HD float dec_pow2_of(float lg)
{
    const uint32_t u = (uint32_t)((int)lg + 127) << 23;
    float r;
    memcpy(&r, &u, 4);
    return r;
}
/* The log2 of a power of two (u = 2^k, k >= -126), exact, from the exponent bits */
FMHA_HD float dec_log2_of_pow2(float u)
{
    uint32_t b;
    memcpy(&b, &u, 4);
    return (float)((int)((b >> 23) & 0xFFu) - 127);
}

/* The operand tiles in SMEM, e4m3 (1 byte), K-major, 128-byte swizzle (one swizzle row holds 128
 * elements; D = 64 uses half of each row), the same on sm90, sm100 and emu:
 *   Q  [bm x D]    A of S = Q K^T            K  [Bc x D]  B of S (K as stored: token rows)
 *   Vt [D x Bc]    B of O = P V: V transposed on its way in, because FP8 wgmma reads K-major
 *                  operands only (footgun FG20; sm100 could read V MN-major, but one layout
 *                  serves both)
 *   P  [bm x Bc]   A of O = P V (e4m3 codes written by the softmax threads)
 *   Vs [Bc x D]    V as stored, the gather's staging tile before the transpose */
FMHA_HD smem_tile dec_q_tile(int bm, int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 1, bm, d); }
FMHA_HD smem_tile dec_k_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 1, DEC_BN, d); }
FMHA_HD smem_tile dec_vt_tile(int d) { return smem_tile_make(MAJOR_K, SWZ_128B, 1, d, DEC_BN); }
FMHA_HD smem_tile dec_p_tile(int bm) { return smem_tile_make(MAJOR_K, SWZ_128B, 1, bm, DEC_BN); }
FMHA_HD smem_tile dec_vs_tile(int d) { return dec_k_tile(d); }
/* Where sm90's 64-row softmax stores P's codes for accumulator registers i, i + 1 (i even: keys c,
 * c + 1 of one row, wgmma_acc_map) of thread t in the warpgroup whose rows start at P row prow0
 * (a multiple of 8): smem_tile_offset of dec_p_tile, written so the compiler sees it as a row
 * base, one of 8 XORs and an immediate. P's rows hold one SW128 atom (smem_sw128_row_offset): chunk
 * c / 16 of row r sits at (c / 16) ^ (r % 8); c / 16 = i / 8, and rows r and r + 8 share r % 8 and
 * lie 1024 bytes apart. Through the general tile offset a store cost about 5 address
 * instructions; through smem_sw128_row_offset of each row the 32 addresses stayed live in
 * registers and the 64-row ring spilled 76 bytes. */
FMHA_HD uint32_t dec_p_code_offset(int t, int i, int prow0)
{
    int r0, c0;
    wgmma_acc_map(t, 0, &r0, &c0);
    const uint32_t xr = (uint32_t)((prow0 + r0) & 7) << 4;
    return (uint32_t)(prow0 + r0) * 128u + (uint32_t)c0 + ((16u * (uint32_t)(i >> 3)) ^ xr) +
           8u * (uint32_t)((i >> 2) & 1) + 1024u * (uint32_t)((i >> 1) & 1);
}
/* The FG20 variant's V tile: as stored, MN-major for P V (V[kv][d]: N = d contiguous). */
FMHA_HD smem_tile dec_v_mn_tile(int d) { return smem_tile_make(MAJOR_MN, SWZ_128B, 1, d, DEC_BN); }
/* The 16-byte d-chunk lane `lane` takes when its warp transposes chunk ch of V (sm90's transpose:
 * lane a holds tokens 4a..4a+3, and each of its four 16-byte reads is token 4a+q's row at its
 * chunk). In the SW128 tile a row's chunk c sits at c ^ (row % 8), and row % 8 = 4 (a % 2) + q, so
 * with every lane at chunk ch the 8 lanes of a read phase hit 2 chunk slots: 4-way bank conflicts
 * (ncu: 26% excess shared wavefronts). XOR-ing ch with (a / 2) % 4 spreads the 8 lanes over 8
 * slots; it only permutes which of a group of 4 chunks a lane takes, so a warp's lanes together
 * still take every chunk a warp is given once. The stores stay conflict-free: a store's Vt row
 * differs per lane, but its row % 8 does not. tests/unit/test_decode_core.c counts both. */
FMHA_HD int dec_transpose_chunk(int ch, int lane) { return ch ^ ((lane >> 1) & 3); }

/* P's codes in registers (the 64-row pipelined kernel): FP8 wgmma takes A from registers in
 * wgmma_a8_map's layout, bytes 4q..4q+3 of a row's 16 keys in one register, where the thread's S
 * accumulator holds keys 2q, 2q+1, 8+2q, 9+2q of each 16 (wgmma_acc_map). Rather than move bytes
 * between lanes, P V's K positions carry V's keys in that order: position 16h + 4q + j holds key
 * dec_pv_key_of_pos of it, and the load warps' transpose writes V's rows there. S's registers then
 * pack straight into A's: register g of K step kk takes accumulator registers dec_p_reg_src(kk, g,
 * 0..3) (tests/unit/test_decode_core.c checks both against the two fragment maps). */
FMHA_HD int dec_pv_key_of_pos(int pos)
{
    const int j = pos & 3, q = (pos >> 2) & 3;
    return (pos & ~15) + 2 * q + (j & 1) + 8 * (j >> 1);
}
FMHA_HD int dec_p_reg_src(int kk, int g, int v)
{
    return 16 * kk + 8 * (g >> 1) + 2 * (g & 1) + (v & 1) + 4 * (v >> 1);
}
/* The transpose's chunk for a lane when it reads the permuted keys (dec_pv_key_of_pos): lane a
 * reads keys 16 (a / 4) + 2 (a % 4) + {0, 1, 8, 9}, so row % 8 = 2 (a % 4) + {0, 1} and lanes a and
 * a + 4 of a read phase share it; XOR-ing the chunk with (a / 4) % 2 puts them in different slots.
 * Like dec_transpose_chunk it only permutes a group of 4 chunks, so the stores (whose row % 8 does
 * not depend on the lane) stay conflict-free. */
FMHA_HD int dec_transpose_chunk_perm(int ch, int lane) { return ch ^ ((lane >> 2) & 1); }

/* The byte offset of V's operand in P V (rows mn0.. of D, K step k of the keys) from its step-0
 * descriptor's start: Vt K-major, or the FG20 variant's V as stored (MN-major). The sm90 kernels
 * encode each descriptor once and add this per step (smem_desc_add). Both tiles are constants
 * there, so each offset folds and the choice is one select (a reference to one tile chosen at run
 * time would put both tiles on the stack). */
FMHA_HD uint32_t dec_vt_step_offset(const smem_tile *tvt, const smem_tile *tv_mn, int v_mn, int mn0, int k)
{
    return v_mn ? smem_tile_offset_raw(tv_mn, mn0, 0) + smem_tile_k_advance(tv_mn, k)
                : smem_tile_offset_raw(tvt, mn0, 0) + smem_tile_k_advance(tvt, k);
}

FMHA_HD grid3 dec_grid(const dec_params *p)
{
    grid3 g = {(unsigned)(dec_m_tiles(p) * p->splits), (unsigned)p->hkv, (unsigned)p->b};
    return g;
}

/* Split-KV's choice. `slots` resident CTAs run at once, and all CTAs of one launch take about the
 * same time (every split of the longest sequence reads ceil(tiles / s) tiles), so a launch of n CTAs
 * lasts ceil(n / slots) waves of that time. A CTA's fixed work (Q, its partial O and LSE, its share
 * of the merge) costs about one more tile. --splits auto picks the s with the fewest tile-times
 *     cost(s) = ceil(base * s / slots) * (ceil(tiles / s) + 1),   base = m-tiles x KV heads x B,
 * the smallest such s on a tie, s at most the tiles and DEC_MAX_SPLITS. Example: 512 CTAs on 396
 * slots, 64 tiles: s = 1 costs 2 waves x 65 = 130, s = 3 costs 4 x 23 = 92, s = 8 11 x 9 = 99
 * (notes/stage-d.md has the H200 sweep that this cost follows). */
FMHA_HD int dec_auto_splits(const dec_params *p, int slots)
{
    const long long base = (long long)dec_m_tiles(p) * p->hkv * p->b;
    const int nt = dec_kv_tiles(p->max_len);
    if (slots < 1) slots = 1;
    int best = 1;
    long long best_cost = -1;
    for (int s = 1; s <= nt && s <= DEC_MAX_SPLITS; s++) {
        const long long waves = (base * s + slots - 1) / slots, cost = waves * ((nt + s - 1) / s + 1);
        if (best_cost < 0 || cost < best_cost) best = s, best_cost = cost;
    }
    return best;
}

#endif
