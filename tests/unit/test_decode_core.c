/* The FP8 paged decode core (common/attn/decode_core.h): the rules every backend of stage D and
 * the host check share. Split-KV deals every tile of a sequence to exactly one split, in order;
 * the bottom-right causal count; the page lookup through the block table; --splits auto's choice;
 * the P scale's floor (finite and nonzero for a row that sees nothing). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "attn/decode_core.h"

static dec_params shape(int b, int hq, int hkv, int sq, int bm, int splits, int max_len)
{
    dec_params p = {0};
    p.b = b; p.hq = hq; p.hkv = hkv; p.sq = sq; p.d = 128; p.page = 64;
    p.bm = bm; p.splits = splits; p.max_len = max_len;
    return p;
}

Test(decode_core, splits_cover_every_tile_once_in_order)
{
    for (int splits = 1; splits <= DEC_MAX_SPLITS; splits += 3)
        for (int len = 1; len <= 20 * DEC_BN; len += 97) {
            const dec_params p = shape(1, 8, 1, 1, 64, splits, len);
            int next = 0, nonempty = 0;
            for (int s = 0; s < splits; s++) {
                int t0, t1;
                dec_split_tiles(&p, len, s, &t0, &t1);
                if (t0 >= t1) continue; /* an empty split: nothing after it may be non-empty */
                cr_assert_eq(t0, next, "len %d splits %d: split %d starts at tile %d, not %d", len, splits, s, t0, next);
                next = t1;
                nonempty++;
            }
            cr_assert_eq(next, dec_kv_tiles(len), "len %d splits %d: %d of %d tiles dealt", len, splits, next,
                         dec_kv_tiles(len));
            cr_assert_leq(nonempty, splits);
        }
}

/* --fair's total: every m-tile CTA of a (sequence, KV head, split) reads that split's tiles, counted
 * here by hand: 300 keys are 3 tiles of 128, split 2 ways as 2 + 1; 1 key is 1 tile, its second
 * split empty; 129 keys are 2 tiles. */
Test(decode_core, grid_tiles_count_every_cta_s_tiles)
{
    dec_params p;
    memset(&p, 0, sizeof p);
    p.b = 2; p.hq = 16; p.hkv = 2; p.sq = 1; p.bm = 8; p.splits = 2;
    const int32_t lens[2] = {1, 300};
    cr_expect_eq(dec_grid_tiles(&p, lens), 8ull, "(1 + 2 + 1) tiles x 1 m-tile x 2 KV heads");
    p.splits = 1; p.sq = 3; /* 24 packed rows: 3 m-tiles of 8 */
    const int32_t lens2[2] = {128, 129};
    cr_expect_eq(dec_grid_tiles(&p, lens2), 18ull, "(1 + 2) tiles x 3 m-tiles x 2 KV heads");
}

/* --persistent's walk over the grid dec_grid lays out: CTA c of G starts with item c and claims each
 * next one from the counter (dec_walk_item). Played here with the CTAs finishing their items in a
 * pseudo-random order (as a GPU's would), for grids of 1 CTA to all the items, on a counter that an
 * earlier launch left at `base`: every item is visited by exactly one CTA, its coordinates rebuild
 * its index (x + X (y + Hkv z)), every CTA ends on exactly one claim past the items, and the launch
 * moves the counter by exactly the items (the host's next base). A counter behind the base (a launch
 * that stopped short) ends the walks at once. Ragged lengths with empty splits, 2 m-tiles. */
Test(decode_core, persistent_walk_covers_every_item_once)
{
    dec_params p;
    memset(&p, 0, sizeof p);
    p.b = 5; p.hq = 24; p.hkv = 3; p.sq = 2; p.bm = 8; p.splits = 3; /* 16 packed rows: 2 m-tiles of 8 */
    const int32_t lens[5] = {1, 129, 700, 256, 1000};
    const int n = dec_items(&p), X = dec_m_tiles(&p) * p.splits;
    cr_assert_eq(n, 2 * 3 * 3 * 5);
    unsigned rng = 12345u;
    for (int G = 1; G <= n; G += 7) {
        const unsigned long long base = 1000ull * (unsigned long long)G + 17ull;
        unsigned long long ctr = base;
        int seen[90] = {0}, cur[90], ended = 0, past = 0;
        long long tiles = 0;
        for (int c = 0; c < G; c++) cur[c] = c;
        while (ended < G) {
            rng = rng * 1103515245u + 12345u;
            const int c = (int)((rng >> 8) % (unsigned)G); /* the CTA whose item ends next */
            if (cur[c] >= n) continue;
            const int i = cur[c];
            seen[i]++;
            const dec_item it = dec_item_tiles(&p, dec_item_flat(&p, lens, i));
            cr_expect_eq(it.split * dec_m_tiles(&p) + it.mt + X * (it.hk + p.hkv * it.b), i, "item %d's coordinates", i);
            cr_expect_eq(it.len, lens[it.b]);
            tiles += it.t1 > it.t0 ? it.t1 - it.t0 : 0;
            cur[c] = dec_walk_item(ctr++, base, G, n); /* its claim */
            cr_assert_leq(cur[c], n);
            if (cur[c] == n) ended++, past++;
        }
        for (int i = 0; i < n; i++) cr_expect_eq(seen[i], 1, "G %d: item %d visited %d times", G, i, seen[i]);
        cr_expect_eq(past, G, "G %d: one claim past the items a CTA", G);
        cr_expect_eq(ctr - base, (unsigned long long)n, "G %d: the launch moves the counter by its items", G);
        cr_expect_eq(dec_grid_tiles(&p, lens), (unsigned long long)tiles, "G %d: the walks' tiles", G);
    }
    cr_expect_eq(dec_walk_item(5, 9, 4, n), n, "a counter behind the base claims nothing");
    cr_expect_eq(dec_walk_item(9, 9, 4, n), 4, "the launch's first claim: the item after the grid's own");
}

Test(decode_core, causal_among_the_new_rows_is_bottom_right)
{
    const dec_params p = shape(1, 8, 1, 4, 64, 1, 100);
    cr_expect_eq(dec_visible_keys(&p, 100, 3), 100, "the last new row sees every key");
    cr_expect_eq(dec_visible_keys(&p, 100, 0), 97, "the first new row sees all but the 3 after it");
    cr_expect_eq(dec_visible_keys(&p, 2, 0), 0, "a sequence shorter than Sq: its first rows see nothing");
    cr_expect_eq(dec_visible_keys(&p, 2, 2), 1);
    cr_expect_eq(dec_visible_keys(&p, 2, 3), 2);
}

Test(decode_core, packed_rows_and_the_page_lookup)
{
    dec_params p = shape(1, 16, 2, 3, 64, 1, 300);
    cr_expect_eq(dec_group(&p), 8);
    cr_expect_eq(dec_rows(&p), 24);
    int i, h;
    dec_unpack_row(&p, 1, 13, &i, &h); /* packed row 13 = query row 1, head 8 + 5 */
    cr_expect_eq(i, 1);
    cr_expect_eq(h, 13);
    p.hkv = 2;
    const int32_t table[3] = {7, 2, 5};
    /* token 130 of a 64-token page table: page table[2] = 5, slot 2; row (5 * 64 + 2) * Hkv + hk */
    cr_expect_eq(dec_token_row(&p, table, 130, 1), (int64_t)(5 * 64 + 2) * 2 + 1);
    cr_expect_eq(dec_token_row(&p, table, 0, 0), (int64_t)7 * 64 * 2);
    p.faults = DEC_FAULT_READ_WHOLE_PAGE;
    cr_expect_eq(dec_gather_end(&p, 130), 192, "the FG18 variant reads to the end of the last page");
    p.faults = 0;
    cr_expect_eq(dec_gather_end(&p, 130), 130);
}

/* Each expectation worked by hand from cost(s) = ceil(base * s / slots) * (ceil(tiles / s) + 1). */
Test(decode_core, auto_splits_minimise_whole_waves)
{
    /* 512 CTAs on 396 slots, 64 tiles: s = 1: 2 x 65 = 130, 2: 3 x 33 = 99, 3: 4 x 23 = 92 (the least),
     * 4: 6 x 17 = 102, 8: 11 x 9 = 99, 64: 83 x 2 = 166. The H200 sweep: 0.530, 0.450, 0.428, 0.449,
     * 0.466 ms at s = 1, 2, 3, 4, 8. */
    dec_params p = shape(64, 64, 8, 1, 8, 1, 8192);
    cr_expect_eq(dec_auto_splits(&p, 396), 3);
    /* 64 CTAs (2 m-tiles x 32) on 264 slots, 128 tiles: s = 4 is one wave of 32 + 1; s = 5 spills
     * into a second wave (2 x 27 = 54), s = 8 two of 17. The H200 sweep: s = 4 0.194 ms, s = 5
     * 0.298 ms, s = 8 0.209 ms. */
    p = shape(32, 128, 1, 1, 64, 1, 16384);
    cr_expect_eq(dec_auto_splits(&p, 264), 4);
    /* already many waves and few tiles: 4096 CTAs on 396 slots, 2 tiles: s = 1 11 x 3 = 33,
     * s = 2 21 x 2 = 42 */
    p = shape(512, 64, 8, 1, 8, 1, 256);
    cr_expect_eq(dec_auto_splits(&p, 396), 1);
    /* a wave and a bit: 1024 CTAs on 396 slots, 32 tiles: s = 1 3 x 33 = 99, 3 8 x 12 = 96 */
    p = shape(128, 32, 8, 1, 8, 1, 4096);
    cr_expect_eq(dec_auto_splits(&p, 396), 3);
    p = shape(1, 8, 1, 1, 8, 1, 300);
    cr_expect_eq(dec_auto_splits(&p, 264), 3, "never more splits than tiles (300 keys: 3)");
    p = shape(1, 8, 1, 1, 8, 1, 1 << 20);
    cr_expect_eq(dec_auto_splits(&p, 100000), DEC_MAX_SPLITS);
    p = shape(1, 8, 1, 1, 8, 1, 1);
    cr_expect_eq(dec_auto_splits(&p, 264), 1, "one key: one split");
}

Test(decode_core, p_scale_is_finite_and_never_zero)
{
    cr_expect_float_eq(dec_p_scale(448.0f, 1.0f), 1.0f, 1e-7f, "the row's largest P' lands on 448");
    const float s0 = dec_p_scale(0.0f, 0.5f); /* a row that saw no key of the tile */
    cr_expect(s0 > 0.0f && isfinite(s0), "sp = %g", s0);
    cr_expect_float_eq(s0, 0.5f * DEC_P_FLOOR / 448.0f, 1e-12f);
    cr_expect_float_eq(dec_p_scale(1e-12f, 1.0f), DEC_P_FLOOR / 448.0f, 1e-12f, "the floor binds below 2^-20 svmax");
    const float tiny = dec_p_scale(0.0f, 1e-35f); /* V scales so small the floor is subnormal */
    cr_expect(tiny >= 1.17549435e-38f && isfinite(1.0f / tiny), "sp = %g: a normal float, its reciprocal finite", tiny);
}

/* dec_p_lscale_*: P's scale for the ring past 32 rows in log2 units, from the logs of the row's
 * largest P and of the tile's largest V scale, against dec_p_scale from the values: an integer in
 * [-126, 127], its power at or above dec_p_scale's (P's codes <= 448) and at most twice it, or a
 * hair more where the exact log lies within the bias (2^-12) below an integer */
Test(decode_core, p_scale_in_log2_units_is_a_power_of_two_at_or_above_dec_p_scale)
{
    uint64_t st = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 40000; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        /* emax in (0, 1] mostly (the row's largest P under its running max), some above (a max
         * that lags), some far below (the floor binds); V scales over 40 binades */
        const float emax = ldexpf((float)(st >> 40) / 16777216.0f + 1e-7f, (int)((st >> 8) % 48) - 40);
        const float svmax = ldexpf(1.0f + (float)((st >> 20) & 1023) / 1024.0f, (int)((st >> 32) % 40) - 30);
        const int fold = (int)((st >> 4) & 1);
        /* the logs as the kernel has them: rounded to float (the FFMA's exponent, an LG2) */
        const float lp = (float)log2((double)emax), lsv = (float)log2((double)svmax);
        const float lsp = dec_p_lscale_row(lp, dec_p_lscale_tile(lsv, fold));
        const float ref = dec_p_scale(fold ? emax * svmax : emax, svmax), q = dec_pow2_of(lsp);
        if (!(lsp == floorf(lsp) && lsp >= -126.0f && lsp <= 127.0f && q == ldexpf(1.0f, (int)lsp) && q >= ref &&
              q <= 2.0f * ref * (1.0f + 1.0f / 2048.0f))) {
            cr_assert_fail("emax %g svmax %g fold %d: 2^%g = %g against dec_p_scale's %g", emax, svmax, fold, lsp, q, ref);
        }
    }
    /* a row with no key in the tile: its lp is -inf, or NaN where Q's row factor is 0; both give
     * the floor, 2^-20 svmax / 448 rounded up */
    const float lsv = 3.0f; /* svmax 8 */
    const float want = ldexpf(1.0f, (int)ceilf(log2f(8.0f * DEC_P_FLOOR / 448.0f)));
    cr_expect_eq(dec_pow2_of(dec_p_lscale_row(-INFINITY, dec_p_lscale_tile(lsv, 1))), want);
    cr_expect_eq(dec_pow2_of(dec_p_lscale_row(NAN, dec_p_lscale_tile(lsv, 1))), want);
    cr_expect(dec_pow2_of(dec_p_lscale_row(NAN, dec_p_lscale_tile(lsv, 1))) >= dec_p_scale(0.0f, 8.0f));
    /* V scales all zero (lsv = -inf): the smallest normal float, as dec_p_scale's */
    cr_expect_eq(dec_p_lscale_row(-2.0f, dec_p_lscale_tile(-INFINITY, 1)), -126.0f);
    cr_expect_eq(dec_pow2_of(-126.0f), dec_p_scale(0.0f, 0.0f));
    /* the exponent bits both ways */
    for (int k = -126; k <= 127; k++) {
        cr_expect_eq(dec_pow2_of((float)k), ldexpf(1.0f, k));
        cr_expect_eq(dec_log2_of_pow2(ldexpf(1.0f, k)), (float)k);
    }
}

/* --prefetch N: while tile j of a split [t0, t1) is gathered, the tiles dec_prefetch_range names are
 * prefetched into L2. Every tile of the split but the first is prefetched exactly once, N tiles
 * before its gather (the split's first N at its first tile), nothing outside the split; N = 0
 * prefetches nothing. */
Test(decode_core, prefetch_covers_each_later_tile_once_ahead_of_its_gather)
{
    for (int n = 0; n <= DEC_MAX_PREFETCH; n++)
        for (int t0 = 0; t0 < 3; t0++)
            for (int t1 = t0 + 1; t1 < t0 + 9; t1++) {
                dec_params p = shape(1, 8, 1, 1, 64, 1, 1);
                p.prefetch = n;
                int times[16] = {0}, when[16];
                for (int j = t0; j < t1; j++) {
                    int lo, hi;
                    dec_prefetch_range(&p, j, t0, t1, &lo, &hi);
                    for (int q = lo; q <= hi; q++) {
                        cr_assert(q > j && q < t1, "n %d [%d, %d): tile %d prefetched at %d", n, t0, t1, q, j);
                        times[q]++;
                        when[q] = j;
                    }
                }
                for (int q = t0; q < t1; q++) {
                    const int want = n > 0 && q > t0;
                    cr_expect_eq(times[q], want, "n %d [%d, %d): tile %d prefetched %d times", n, t0, t1, q, times[q]);
                    if (want) /* N ahead, or from the split's first tile when that is nearer */
                        cr_expect_eq(when[q], q - n > t0 ? q - n : t0, "n %d: tile %d prefetched at %d", n, q, when[q]);
                }
            }
}

/* --kv-tma 1: a tile's TMA boxes. For every page size and a shuffled block table, box q of the
 * tile at kv0 starts at the token the cache holds at dec_token_row's row of its first token, each
 * of its rows is the next token of the same page (so one box per page's run of rows is right),
 * boxes start before `end` exactly when dec_kv_tma_box says so, and the boxes that load cover the
 * tile's tokens before `end` once each. */
Test(decode_core, kv_tma_boxes_are_the_pages_rows_of_the_tile)
{
    static const int pages[] = {16, 32, 64, 128, 256};
    enum { NP = 40 };
    int32_t table[NP];
    for (int i = 0; i < NP; i++) table[i] = (i * 17 + 5) % NP; /* a permutation: 17 and 40 are coprime */
    for (unsigned pi = 0; pi < sizeof pages / sizeof pages[0]; pi++) {
        dec_params p = shape(1, 8, 4, 1, 8, 1, 1);
        p.page = pages[pi];
        p.num_pages = NP;
        cr_assert(dec_kv_tma_fits(p.page), "page %d", p.page);
        const int rows = dec_kv_tma_box_rows(p.page), len_max = NP * p.page < 2000 ? NP * p.page : 2000;
        cr_assert(rows <= p.page && rows <= DEC_BN && DEC_BN % rows == 0, "page %d: %d rows a box", p.page, rows);
        for (int end = 1; end <= len_max; end += 37)
            for (int kv0 = 0; kv0 < end; kv0 += DEC_BN) {
                int covered = 0;
                for (int q = 0; q < DEC_BN / rows; q++) {
                    const int tok = kv0 + q * rows;
                    const int64_t c = dec_kv_tma_box(&p, table, kv0, q, end);
                    if (tok >= end) {
                        cr_expect_eq(c, -1, "page %d end %d kv0 %d: box %d starts past the end", p.page, end, kv0, q);
                        continue;
                    }
                    for (int i = 0; i < rows; i++)
                        for (int hk = 0; hk < p.hkv; hk++)
                            cr_assert_eq(dec_token_row(&p, table, tok + i, hk), (c + i) * p.hkv + hk,
                                         "page %d kv0 %d box %d: row %d of head %d is not token %d's", p.page, kv0, q,
                                         i, hk, tok + i);
                    covered += (tok + rows < end ? tok + rows : end) - tok;
                }
                const int want = (kv0 + DEC_BN < end ? kv0 + DEC_BN : end) - kv0;
                cr_expect_eq(covered, want, "page %d end %d kv0 %d: %d tokens covered, not %d", p.page, end, kv0,
                             covered, want);
            }
    }
    cr_expect(!dec_kv_tma_fits(48) && !dec_kv_tma_fits(0) && !dec_kv_tma_fits(4) && dec_kv_tma_fits(8) &&
                  dec_kv_tma_fits(512), "the fit rule: whole tiles a page, or whole pages of 8 or more a tile");
}

/* The table walk of --kv-tma 2 (dec_tile_cursor, dec_tok_part): for every page the gather accepts,
 * from any first tile, advanced tile by tile, the cursor plus each offset's fixed part is the
 * token's table entry and offset by plain division (tok / page, tok % page), and so dec_token_row's
 * row. Only those pages: the kernel takes the walk where dec_kv_tma_fits, and the stage refuses
 * --kv-tma with any other page before a launch. */
Test(decode_core, table_walk_matches_the_division_for_every_tile_and_token)
{
    static const int pages[] = {8, 16, 32, 64, 128, 256, 384, 512, 1024};
    enum { NP = 64 };
    int32_t table[NP];
    for (int i = 0; i < NP; i++) table[i] = (i * 29 + 3) % NP; /* a permutation: 29 and 64 are coprime */
    for (unsigned pi = 0; pi < sizeof pages / sizeof pages[0]; pi++) {
        dec_params p = shape(1, 8, 2, 1, 8, 1, 1);
        p.page = pages[pi];
        p.num_pages = NP;
        cr_assert(dec_kv_tma_fits(p.page), "page %d", p.page);
        const int tiles = NP * p.page / DEC_BN;
        for (int first = 0; first < tiles; first += 1 + first / 3) {
            dec_table_pos c = dec_tile_cursor(&p, first * DEC_BN);
            for (int j = first; j < tiles; j++, c = dec_tile_cursor_next(&p, c)) {
                const int kv0 = j * DEC_BN;
                for (int off = 0; off < DEC_BN; off++) {
                    const dec_table_pos f = dec_tok_part(&p, off);
                    const int tok = kv0 + off, entry = c.entry + f.entry, in_page = c.offset + f.offset;
                    cr_assert_eq(entry, tok / p.page, "page %d from tile %d: tile %d off %d: entry %d, not %d",
                                 p.page, first, j, off, entry, tok / p.page);
                    cr_assert_eq(in_page, tok % p.page, "page %d from tile %d: tile %d off %d: offset %d, not %d",
                                 p.page, first, j, off, in_page, tok % p.page);
                    cr_assert_eq(((int64_t)table[entry] * p.page + in_page) * p.hkv + 1, dec_token_row(&p, table, tok, 1),
                                 "page %d token %d: not dec_token_row's row", p.page, tok);
                }
            }
        }
    }
}

/* --kv-tma auto: the TMA gather exactly where it applies (sm90, no ring, a page that fits, not the
 * FG20 variant), there with the next tile's boxes during this one (2); 0, 1 and 2 pass through whatever the rest says (the stage's rules refuse one that does
 * not apply). */
Test(decode_core, kv_tma_auto_takes_tma_only_where_it_applies)
{
    static const int pages[] = {8, 16, 24, 32, 48, 64, 128, 256, 384};
    for (unsigned i = 0; i < sizeof pages / sizeof pages[0]; i++)
        for (int sm90 = 0; sm90 < 2; sm90++)
            for (int ring = 0; ring <= 3; ring++)
                for (int fg20 = 0; fg20 < 2; fg20++) {
                        const unsigned f = fg20 ? DEC_FAULT_V_NOT_TRANSPOSED : DEC_FAULT_K_SCALE_ON_ROWS;
                        const int page = pages[i];
                        const int fits = page % 128 == 0 || (128 % page == 0 && page % 8 == 0);
                        const int tma = sm90 && !ring && fits && !fg20;
                        cr_expect_eq(dec_kv_tma_resolve(-1, sm90, ring, page, f), tma ? 2 : 0,
                                     "auto: sm90 %d ring %d page %d FG20 %d", sm90, ring, page, fg20);
                        for (int v = 0; v <= 2; v++)
                            cr_expect_eq(dec_kv_tma_resolve(v, sm90, ring, page, f), v, "%d stays %d", v, v);
                    }
}

/* The sm90 kernels encode each MMA descriptor once and move it per K step by an add: for K's two
 * m64 halves and V's D/64 blocks (Vt K-major, or the FG20 variant's V as stored), at every K step,
 * the step-0 descriptor plus the offset is the descriptor encoded directly at that step. */
Test(decode_core, descriptors_encoded_once_then_added_match_direct_encoding)
{
    static const int ds[] = {64, 128, 256};
    const uint32_t base = 0x8000u; /* a 1024-aligned SMEM address */
    for (unsigned di = 0; di < 3; di++) {
        const int d = ds[di];
        const smem_tile tk = dec_k_tile(d), tvt = dec_vt_tile(d), tvm = dec_v_mn_tile(d);
        const uint64_t dk0 = smem_tile_desc_sm90(&tk, base, 0, 0);
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < d; k += 32)
                cr_assert_eq(smem_tile_desc_sm90_k(&tk, smem_desc_add(dk0, smem_tile_offset_raw(&tk, 64 * h, 0)), k),
                             smem_tile_desc_sm90(&tk, base, 64 * h, k), "D %d K half %d step %d", d, h, k);
        for (int v_mn = 0; v_mn < 2; v_mn++) {
            const smem_tile *t = v_mn ? &tvm : &tvt;
            const uint64_t dv0 = smem_tile_desc_sm90(t, base, 0, 0);
            for (int dm = 0; dm < d / 64; dm++)
                for (int k = 0; k < DEC_BN; k += 32)
                    cr_assert_eq(smem_desc_add(dv0, dec_vt_step_offset(&tvt, &tvm, v_mn, 64 * dm, k)),
                                 smem_tile_desc_sm90(t, base, 64 * dm, k), "D %d %s block %d step %d", d,
                                 v_mn ? "V as stored" : "Vt", dm, k);
        }
    }
}

/* sm90's V transpose in SMEM (decode_sm90.cu transpose_v, device/e4m3_transpose.cuh): bank
 * conflicts counted on the tile layouts. A 16-byte load is served 8 lanes at a time; the 8 are
 * one wavefront when their 16-byte slots (address / 16 % 8) differ. A 4-byte store of 32 lanes is
 * one wavefront when no two lanes hit one bank at different words. With dec_transpose_chunk every
 * load and store is one wavefront a phase; with every lane at its warp's chunk, 4. Every (token,
 * chunk) is also taken exactly once. */
/* spread: 0 every lane at its warp's chunk, 1 dec_transpose_chunk, 2 the permuted keys of P in
 * registers (lane a's q-th token dec_pv_key_of_pos(4a + q), its chunk dec_transpose_chunk_perm). */
static int lane_chunk(int ch, int a, int spread)
{
    return spread == 2 ? dec_transpose_chunk_perm(ch, a) : spread ? dec_transpose_chunk(ch, a) : ch;
}
static int load_wavefronts(const smem_tile *tvs, int ch, int q, int spread)
{
    int worst = 0;
    for (int phase = 0; phase < 4; phase++) {
        int slots[8] = {0};
        for (int l = 0; l < 8; l++) {
            const int a = 8 * phase + l, c = lane_chunk(ch, a, spread);
            const int tok = spread == 2 ? dec_pv_key_of_pos(4 * a + q) : 4 * a + q;
            slots[(smem_tile_offset(tvs, tok, 16 * c) / 16) % 8]++;
        }
        int m = 0;
        for (int i = 0; i < 8; i++) m = slots[i] > m ? slots[i] : m;
        worst = m > worst ? m : worst;
    }
    return worst;
}
static int store_wavefronts(const smem_tile *tvt, int ch, int wd, int k, int spread)
{
    uint32_t word[32][32]; /* per bank, the distinct words */
    int n[32] = {0}, worst = 0;
    for (int a = 0; a < 32; a++) {
        const int c = lane_chunk(ch, a, spread);
        const uint32_t w = smem_tile_offset(tvt, 16 * c + 4 * wd + k, 4 * a) / 4, b = w % 32;
        int seen = 0;
        for (int i = 0; i < n[b]; i++) seen |= word[b][i] == w;
        if (!seen) word[b][n[b]++] = w;
        worst = n[b] > worst ? n[b] : worst;
    }
    return worst;
}
Test(decode_core, v_transpose_is_free_of_bank_conflicts)
{
    static const int ds[] = {64, 128, 256};
    for (unsigned di = 0; di < 3; di++)
        for (int spread = 1; spread <= 2; spread++) {
            const int d = ds[di], chunks = d / 16;
            const smem_tile tvs = dec_vs_tile(d), tvt = dec_vt_tile(d);
            int taken[16][32] = {{0}};
            for (int w = 0; w < 4; w++)
                for (int ch = w; ch < chunks; ch += 4) {
                    for (int a = 0; a < 32; a++) taken[lane_chunk(ch, a, spread)][a]++;
                    for (int q = 0; q < 4; q++) {
                        cr_expect_eq(load_wavefronts(&tvs, ch, q, spread), 1, "D %d chunk %d token %d (%s): a load phase conflicts",
                                     d, ch, q, spread == 2 ? "permuted" : "plain");
                        cr_expect_eq(load_wavefronts(&tvs, ch, q, 0), 4, "D %d: the unspread reads are 4-way conflicts", d);
                    }
                    for (int wd = 0; wd < 4; wd++)
                        for (int k = 0; k < 4; k++)
                            cr_expect_eq(store_wavefronts(&tvt, ch, wd, k, spread), 1,
                                         "D %d chunk %d word %d.%d (%s): a store conflicts", d, ch, wd, k,
                                         spread == 2 ? "permuted" : "plain");
                }
            for (int c = 0; c < chunks; c++)
                for (int a = 0; a < 32; a++)
                    cr_expect_eq(taken[c][a], 1, "D %d: chunk %d of lane %d's tokens taken %d times", d, c, a, taken[c][a]);
        }
}

/* P in registers: for every thread, K step, A register and byte, the accumulator register that
 * dec_p_reg_src packs there holds the row wgmma_a8_map gives that byte, and the key that V's
 * permuted rows put at its K position (dec_pv_key_of_pos); the permutation maps each 16 keys onto
 * themselves once; and the 16 bytes of a thread's step are 16 distinct accumulator registers. */
Test(decode_core, p_registers_match_the_permuted_v)
{
    for (int pos = 0; pos < DEC_BN; pos++) {
        const int key = dec_pv_key_of_pos(pos);
        cr_assert_eq(key / 16, pos / 16, "position %d: key %d leaves its 16", pos, key);
        for (int other = pos + 1; other < DEC_BN; other++)
            cr_assert_neq(dec_pv_key_of_pos(other), key, "positions %d and %d carry key %d", pos, other, key);
    }
    for (int t = 0; t < 128; t++)
        for (int kk = 0; kk < DEC_BN / 32; kk++) {
            int used[DEC_BN / 2] = {0};
            for (int g = 0; g < 4; g++)
                for (int v = 0; v < 4; v++) {
                    const int i = dec_p_reg_src(kk, g, v);
                    cr_assert(i >= 16 * kk && i < 16 * kk + 16, "t %d step %d reg %d byte %d: register %d outside the step", t, kk, g, v, i);
                    cr_assert_eq(used[i]++, 0, "t %d step %d: register %d packed twice", t, kk, i);
                    int ra, ca, rp, kp;
                    wgmma_acc_map(t, i, &ra, &ca);
                    wgmma_a8_map(t, g, v, &rp, &kp);
                    cr_assert_eq(ra, rp, "t %d step %d reg %d byte %d: S row %d, A row %d", t, kk, g, v, ra, rp);
                    cr_assert_eq(ca, 32 * kk + dec_pv_key_of_pos(kp), "t %d step %d reg %d byte %d: S key %d, A position %d holds key %d",
                                 t, kk, g, v, ca, kp, 32 * kk + dec_pv_key_of_pos(kp));
                }
        }
}

/* sm90's 64-row softmax stores P's codes at dec_p_code_offset: for every thread, register pair and
 * warpgroup of a 64- or 128-row P tile, the offset dec_p_tile's general layout gives the element
 * of wgmma_acc_map's row and key, and the 32 x 128 pairs of a group cover its 64 x 128 codes once. */
Test(decode_core, p_code_offsets_are_the_p_tiles)
{
    for (int bm = 64; bm <= 128; bm += 64) {
        const smem_tile tp = dec_p_tile(bm);
        for (int prow0 = 0; prow0 < bm; prow0 += 64) {
            static unsigned char hit[64 * 128 * 2];
            memset(hit, 0, sizeof hit);
            for (int t = 0; t < 128; t++)
                for (int i = 0; i < DEC_BN / 2; i += 2) {
                    int r, c;
                    wgmma_acc_map(t, i, &r, &c);
                    const uint32_t off = dec_p_code_offset(t, i, prow0);
                    cr_assert_eq(off, smem_tile_offset(&tp, prow0 + r, c), "bm %d prow0 %d t %d i %d", bm, prow0, t, i);
                    cr_assert_eq(off + 1, smem_tile_offset(&tp, prow0 + r, c + 1), "bm %d t %d i %d: key c + 1", bm, t, i);
                    const uint32_t local = off - (uint32_t)prow0 * 128u;
                    cr_assert_lt(local + 1, sizeof hit);
                    cr_assert(!hit[local] && !hit[local + 1], "bm %d prow0 %d t %d i %d: written twice", bm, prow0, t, i);
                    hit[local] = hit[local + 1] = 1;
                }
            for (size_t k = 0; k < 64 * 128; k++) cr_assert(hit[k], "bm %d prow0 %d: byte %zu of the group's P never written", bm, prow0, k);
        }
    }
}
