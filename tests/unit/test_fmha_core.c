/* The attention core's mask rules (common/attn/fmha_core.h): fmha_tile_unmasked, which lets a
 * kernel skip the per-element mask on a tile, agrees with fmha_visible element by element, on
 * shapes with tails on both sides, causal with Sq below, at and above Skv, and FG21's variant;
 * the KV tiles of a CTA of 128 or 192 query rows are the ones its rows see; both rules for KV
 * tiles of 128 keys and of 64 (stage F's sm90 tile at D = 256). */
#include <criterion/criterion.h>

#include "attn/fmha_core.h"
#include "stages/F_pipeline/fmha.h"

static int brute_unmasked(const fmha_params *p, int r0, int rows, int kv0, int bn)
{
    for (int i = r0; i < r0 + rows; i++)
        for (int j = kv0; j < kv0 + bn; j++)
            if (!fmha_visible(p, i, j)) return 0;
    return 1;
}

Test(fmha_core, tile_unmasked_matches_the_element_mask)
{
    static const int sqs[] = {1, 64, 100, 128, 300, 1025}, skvs[] = {1, 127, 128, 129, 300, 1025, 4096};
    int checked = 0, unmasked = 0, masked = 0;
    for (unsigned si = 0; si < sizeof sqs / sizeof sqs[0]; si++)
        for (unsigned ki = 0; ki < sizeof skvs / sizeof skvs[0]; ki++)
            for (int causal = 0; causal < 2; causal++)
                for (int fault = 0; fault < 4; fault++) {
                    fmha_params p = {0};
                    p.sq = sqs[si];
                    p.skv = skvs[ki];
                    p.causal = causal;
                    p.faults = (fault & 1) ? FMHA_FAULT_NO_TAIL_MASK : 0;
                    const int bn = (fault & 2) ? 64 : FMHA_BN;
                    for (int r0 = 0; r0 < p.sq; r0 += 64)
                        for (int kv0 = 0; kv0 < p.skv + bn; kv0 += bn) {
                            const int want = brute_unmasked(&p, r0, 64, kv0, bn);
                            const int got = bn == FMHA_BN ? fmha_tile_unmasked(&p, r0, kv0) : fmha_tile_unmasked_bn(&p, r0, kv0, bn);
                            cr_assert_eq(got, want, "sq %d skv %d causal %d fault %d bn %d: rows %d.., tile %d: %d, not %d",
                                         p.sq, p.skv, causal, fault & 1, bn, r0, kv0, got, want);
                            checked++;
                            unmasked += want;
                            masked += !want;
                        }
                }
    cr_expect_gt(unmasked, 100, "the rule skips the mask on many tiles (%d of %d)", unmasked, checked);
    cr_expect_gt(masked, 100, "and keeps it on many (%d of %d)", masked, checked);
}

Test(fmha_core, a_long_sequence_masks_only_its_last_tile)
{
    fmha_params p = {0};
    p.sq = p.skv = 8192 + 5;
    int masked = 0;
    for (int kv0 = 0; kv0 < p.skv; kv0 += FMHA_BN) masked += !fmha_tile_unmasked(&p, 0, kv0);
    cr_expect_eq(masked, 1, "non-causal: the tail tile only");
    p.causal = 1;
    masked = 0;
    for (int kv0 = 0; kv0 < p.skv; kv0 += FMHA_BN) masked += !fmha_tile_unmasked(&p, 4096, kv0);
    /* rows 4096..4159 see keys up to 4096..4159: tiles 0..31 whole, tile 32 [4096, 4224) cut, and
     * every later one */
    cr_expect_eq(masked, 65 - 32, "causal: the diagonal tile and the ones past it");
}

/* fmha_kv_tiles_rows: the KV tiles a CTA of br query rows visits are exactly those holding a key
 * some row of it sees (br 128 and 192, the CTA heights of the stages), and fmha_grid and
 * fmha_kv_tiles take br from p->pipe.rows (0: FMHA_BM). */
Test(fmha_core, kv_tiles_cover_every_visible_key_for_each_cta_height)
{
    static const int sqs[] = {1, 100, 191, 192, 193, 400, 1025}, skvs[] = {1, 129, 300, 1025};
    static const int brs[] = {128, 192};
    for (unsigned bi = 0; bi < 4; bi++)
        for (unsigned si = 0; si < sizeof sqs / sizeof sqs[0]; si++)
            for (unsigned ki = 0; ki < sizeof skvs / sizeof skvs[0]; ki++)
                for (int causal = 0; causal < 2; causal++) {
                    fmha_params p = {0};
                    p.sq = sqs[si];
                    p.skv = skvs[ki];
                    p.causal = causal;
                    p.hq = p.b = 1;
                    const int br = brs[bi & 1], bn = (bi & 2) ? 64 : FMHA_BN;
                    p.pipe.rows = br == FMHA_BM ? 0 : br;
                    p.pipe.cols = bn == FMHA_BN ? 0 : bn;
                    const grid3 g = fmha_grid(&p);
                    cr_assert_eq(g.x, (unsigned)((p.sq + br - 1) / br), "the grid covers Sq in tiles of %d rows", br);
                    for (int q0 = 0; q0 < p.sq; q0 += br) {
                        int last_key = -1; /* the last key any row of the CTA sees */
                        for (int i = q0; i < q0 + br && i < p.sq; i++)
                            for (int j = 0; j < p.skv; j++)
                                if (fmha_visible(&p, i, j) && j > last_key) last_key = j;
                        const int want = last_key < 0 ? 0 : last_key / bn + 1;
                        cr_assert_eq(fmha_kv_tiles_rows(&p, q0, br), want, "br %d bn %d sq %d skv %d causal %d q0 %d", br, bn,
                                     p.sq, p.skv, causal, q0);
                        cr_assert_eq(fmha_kv_tiles_bn(&p, q0, br, bn), want, "the same with bn given");
                        cr_assert_eq(fmha_kv_tiles(&p, q0), want, "fmha_kv_tiles reads br and bn from p->pipe");
                    }
                }
}

/* fmha_tile_of, the persistent kernel's list of query tiles: tile t is the CTA that fmha_grid
 * would have launched at linear position t (x fastest), with the same query rows (causal: counted
 * from the last tile, cta_q0's rule), head and batch; every tile once. */
Test(fmha_core, tile_list_is_the_grid_in_launch_order)
{
    static const int shapes[][5] = {{300, 3, 2, 0, 0}, {2500, 24, 3, 1, 0}, {5000, 16, 1, 1, 192}, {1, 5, 1, 0, 0}, {777, 7, 5, 1, 192}};
    for (unsigned si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        fmha_params p = {0};
        p.sq = p.skv = shapes[si][0];
        p.hq = shapes[si][1];
        p.b = shapes[si][2];
        p.causal = shapes[si][3];
        p.pipe.rows = shapes[si][4];
        const grid3 g = fmha_grid(&p);
        const int n = fmha_tile_count(&p), br = fmha_cta_rows(&p);
        cr_assert_eq(n, (int)(g.x * g.y * g.z));
        int t = 0;
        for (unsigned z = 0; z < g.z; z++)
            for (unsigned y = 0; y < g.y; y++)
                for (unsigned x = 0; x < g.x; x++, t++) {
                    const fmha_tile tl = fmha_tile_of(&p, t);
                    const int q0 = (p.causal ? (int)(g.x - 1 - x) : (int)x) * br;
                    cr_assert(tl.q0 == q0 && tl.h == (int)y && tl.b == (int)z, "shape %u tile %d: (%d, %d, %d), not (%d, %u, %u)",
                              si, t, tl.q0, tl.h, tl.b, q0, y, z);
                }
    }
}

/* Causal with L2 sections (p->pipe.lpt_heads = n): every tile exactly once; within a section the
 * query tiles go longest first, each level across all of the section's (batch, head) pairs in
 * order; sections follow one another, the last one holding the pairs left (counted by hand for
 * 5 pairs in sections of 2: pairs {0, 1}, {2, 3}, {4}). Non-causal ignores the sections. */
Test(fmha_core, causal_tiles_longest_first_across_a_section)
{
    static const int shapes[][6] = {/* sq, hq, b, rows, lpt_heads, hkv */
                                    {700, 5, 1, 0, 2, 5}, {2500, 24, 3, 0, 8, 6}, {5000, 16, 1, 192, 16, 16},
                                    {777, 7, 5, 192, 4, 7}, {300, 3, 2, 0, 64, 1}, {1, 5, 3, 0, 3, 5}};
    for (unsigned si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        fmha_params p = {0};
        p.sq = p.skv = shapes[si][0];
        p.hq = shapes[si][1];
        p.b = shapes[si][2];
        p.pipe.rows = shapes[si][3];
        p.pipe.lpt_heads = shapes[si][4];
        p.hkv = shapes[si][5];
        p.causal = 1;
        const grid3 g = fmha_grid(&p);
        const int n = fmha_tile_count(&p), br = fmha_cta_rows(&p), nh = (int)(g.y * g.z), sec = p.pipe.lpt_heads;
        char *seen = calloc((size_t)n, 1);
        int t = 0;
        for (int s0 = 0; s0 < nh; s0 += sec) { /* the expected order, spelled out */
            const int cnt = nh - s0 < sec ? nh - s0 : sec;
            for (int lvl = 0; lvl < (int)g.x; lvl++)
                for (int k = 0; k < cnt; k++, t++) {
                    const int hb = s0 + k, q0 = ((int)g.x - 1 - lvl) * br;
                    const fmha_tile tl = fmha_tile_of(&p, t);
                    cr_assert(tl.q0 == q0 && tl.h == hb % p.hq && tl.b == hb / p.hq,
                              "shape %u tile %d: (%d, %d, %d), not (%d, %d, %d)", si, t, tl.q0, tl.h, tl.b, q0, hb % p.hq,
                              hb / p.hq);
                    const int id = (tl.b * p.hq + tl.h) * (int)g.x + tl.q0 / br;
                    cr_assert(!seen[id], "shape %u: tile %d drawn twice", si, id);
                    seen[id] = 1;
                }
        }
        cr_assert_eq(t, n, "shape %u: %d tiles ordered, %d in the grid", si, t, n);
        free(seen);
        p.causal = 0; /* non-causal: the grid's order whatever the sections */
        for (int u = 0; u < n; u++) {
            const fmha_tile tl = fmha_tile_of(&p, u);
            cr_assert(tl.q0 == (u % (int)g.x) * br && tl.h == (u / (int)g.x) % p.hq && tl.b == u / (int)g.x / p.hq,
                      "shape %u non-causal tile %d", si, u);
        }
    }
}

/* fmha_lpt_heads: the most (a power of 2) (batch, head) pairs whose K and V fit the budget, a KV
 * head's bytes shared by its Hq / Hkv query heads. By hand: S 4k D 256: K + V 4 MiB a head, so 4 in
 * 16 MiB; Llama S 8k D 128 Hq 64 / Hkv 8: 4 MiB a KV head, 0.5 a query head, 32 in 16 MiB; never
 * past the pairs there are (B 1 H 3: 2), never under 1 (S 64k D 256: 32 MiB a head). */
Test(fmha_core, lpt_heads_fit_the_l2_budget)
{
    fmha_params p = {0};
    p.b = 4, p.hq = p.hkv = 8, p.skv = 4096, p.d = 256;
    cr_expect_eq(fmha_lpt_heads(&p, 16), 4);
    cr_expect_eq(fmha_lpt_heads(&p, 32), 8);
    p.b = 1, p.hq = 64, p.hkv = 8, p.skv = 8192, p.d = 128;
    cr_expect_eq(fmha_lpt_heads(&p, 16), 32);
    p.b = 1, p.hq = p.hkv = 3, p.skv = 100, p.d = 64;
    cr_expect_eq(fmha_lpt_heads(&p, 16), 2);
    p.b = 2, p.hq = p.hkv = 4, p.skv = 65536, p.d = 256;
    cr_expect_eq(fmha_lpt_heads(&p, 16), 1);
}

/* Stage F's sm90 key tiles, counted by hand. SMEM: Q 32 KB at D 128 (64 at D 256); a K or V slot
 * of Bc keys Bc x D x 2 bytes: 176 keys at D 128 44 KB, so Q and two pairs 208 KB (fits the 227
 * KB opt-in), two Q buffers and two pairs 240 KB (do not: the persistent kernel takes one pair);
 * 128 keys at D 256 64 KB a slot, so only one pair fits beside Q (192 KB), 64 keys two (192 KB).
 * Registers for the overlap: S Bc/2, P Bc/4, O D/2 and 44 more, within 232 (240 at 176 keys). */
Test(fmha_core, sm90_key_tiles_fit_smem_and_registers)
{
    cr_expect_eq(fmha_k_tile_cols(128, 176).bytes, 45056u);
    cr_expect_eq(fmha_v_tile_cols(128, 176).bytes, 45056u);
    cr_expect_eq(fmha_f_auto_ring_cols(128, 176), 2, "Q and two 176-key pairs fit");
    cr_expect(fmha_f_smem_layout_make_kv(128, 2, 128, 1, 176).bytes <= SMEM_OPTIN_MAX_BYTES);
    cr_expect(fmha_f_smem_layout_make_kv(128, 2, 128, 2, 176).bytes > SMEM_OPTIN_MAX_BYTES, "two Q buffers: one pair");
    cr_expect(fmha_f_smem_layout_make_kv(128, 1, 128, 2, 176).bytes <= SMEM_OPTIN_MAX_BYTES);
    cr_expect_eq(fmha_f_auto_ring_cols(256, 128), 1, "D 256: one 128-key pair");
    cr_expect_eq(fmha_f_auto_ring_cols(256, 64), 2, "D 256: two 64-key pairs");
    cr_expect_eq(fmha_f_auto_ring_cols(128, 128), 2);
    const smem_layout L = fmha_f_smem_layout_make_kv(128, 2, 128, 1, 176);
    for (int t = 0; t < SMEM_MAX_TILES; t++) cr_expect_eq(L.tile[t] % SMEM_TILE_ALIGN, 0u, "tile %d aligned", t);
    cr_expect(FMHA_F_SM90_OVERLAP_FITS(128, 176), "88 + 44 + 64 + 44 = 240 of 240");
    cr_expect(FMHA_F_SM90_OVERLAP_FITS(128, 128) && FMHA_F_SM90_OVERLAP_FITS(64, 128) && FMHA_F_SM90_OVERLAP_FITS(256, 64));
    cr_expect(!FMHA_F_SM90_OVERLAP_FITS(256, 128), "64 + 32 + 128 + 44 = 268 past 232");
    cr_expect(FMHA_F_SM90_COLS176_OK(128) && !FMHA_F_SM90_COLS176_OK(64) && !FMHA_F_SM90_COLS176_OK(256));
}

/* Stage F's short rows (--persistent auto, --consumers auto): fewer than 24 KV tiles of 128 keys a
 * 128-row query tile on average. Counted by hand: causal S = 2048 has 16 query tiles seeing 1..16
 * tiles (8.5 on average), S = 4096 1..32 (16.5), S = 8192 1..64 (32.5); non-causal Skv / 128
 * rounded up. */
Test(fmha_core, short_rows_average_kv_tiles)
{
    cr_expect(fmha_f_short_rows(2048, 2048, 1), "causal S 2k: 8.5 tiles");
    cr_expect(fmha_f_short_rows(4096, 4096, 1), "causal S 4k: 16.5 tiles");
    cr_expect(!fmha_f_short_rows(8192, 8192, 1), "causal S 8k: 32.5 tiles");
    cr_expect(fmha_f_short_rows(2048, 2048, 0), "S 2k: 16 tiles");
    cr_expect(fmha_f_short_rows(100, 2944, 0), "Skv 2944: 23 tiles");
    cr_expect(!fmha_f_short_rows(100, 2945, 0), "Skv 2945: 24 tiles (23 and a tail)");
    cr_expect(!fmha_f_short_rows(4096, 4096, 0), "S 4k: 32 tiles");
    /* causal, bottom-right aligned, Sq < Skv: the 128 rows see the last 128 keys and 5952 before them */
    cr_expect(!fmha_f_short_rows(128, 6080, 1), "one query tile seeing 6080 keys: 48 tiles");
    cr_expect(fmha_f_short_rows(128, 2944, 1), "one query tile seeing 2944 keys: 23 tiles");
    cr_expect(!fmha_f_short_rows(0, 2048, 0), "no query rows: nothing to persist");
}
