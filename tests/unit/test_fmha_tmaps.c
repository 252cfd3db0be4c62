/* The attention tensor maps (common/host/fmha_tmaps.c), checked without a GPU: each map the
 * builder makes for Q, K, V over BHSD and BSHD strides is accepted by the tensor-map checker, and
 * its boxes, copied by the TMA model (common/model/tma_model.c), put into SMEM exactly the tiles
 * stage C's thread copies put there (K-major Q and K, MN-major V), tails included. Then the FG13
 * mistakes through the same builder: the checker names the rule the rank-strides and wide-box
 * maps break; the strides-in-elements map is accepted at D = 128 (every stride happens to be a
 * multiple of 16) and silently copies the wrong rows, which the tile comparison shows. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/attention.h"
#include "host/fmha_tmaps.h"
#include "model/canonical_fill.h"
#include "model/tma_model.h"

static fmha_opts opts(int d, int bshd, int hkv)
{
    fmha_opts o;
    memset(&o, 0, sizeof o);
    o.b = 2; o.hq = 4; o.hkv = hkv; o.sq = 200; o.skv = 300; o.d = d;
    o.layout_bshd = bshd; o.backend = BACKEND_EMU; o.init = INIT_RAND; o.seed = 5; o.check = 1;
    return o;
}

/* Bytes that differ between the TMA model's boxes of tile (b, h, row0) of tensor t and the thread
 * fill of the same rows; -1 if the model refused the map (msg set). */
static long tile_diff(const attn_problem *ap, fmha_tensor t, fmha_tmap_mistake mistake, int b, int h, int row0,
                      char *msg, size_t len)
{
    const fmha_params *p = &ap->p;
    const int d = p->d, mn = t == FMHA_TENSOR_V;
    const uint16_t *base = t == FMHA_TENSOR_Q ? ap->q : t == FMHA_TENSOR_K ? ap->k : ap->v;
    const int64_t sb = t == FMHA_TENSOR_Q ? p->q_sb : t == FMHA_TENSOR_K ? p->k_sb : p->v_sb;
    const int64_t sh = t == FMHA_TENSOR_Q ? p->q_sh : t == FMHA_TENSOR_K ? p->k_sh : p->v_sh;
    const int64_t ss = t == FMHA_TENSOR_Q ? p->q_ss : t == FMHA_TENSOR_K ? p->k_ss : p->v_ss;
    const int rows = t == FMHA_TENSOR_Q ? p->sq : p->skv;
    const int bn = fmha_kv_cols(p); /* the key tile: 128, or stage F's 64 at D = 256 (p->pipe.cols) */
    const smem_tile tile = t == FMHA_TENSOR_Q ? fmha_q_tile(d) : t == FMHA_TENSOR_K ? fmha_k_tile_cols(d, bn) : fmha_v_tile_cols(d, bn);
    /* the thread fill reads a contiguous copy of the head's rows, as the emu flow does */
    uint16_t *head = malloc((size_t)rows * d * 2);
    for (int r = 0; r < rows; r++) memcpy(head + (size_t)r * d, base + b * sb + h * sh + (int64_t)r * ss, (size_t)d * 2);
    uint8_t *by_fill = calloc(tile.bytes, 1), *by_tma = malloc(tile.bytes);
    memset(by_tma, 0xEE, tile.bytes);
    if (mn) smem_fill_rows_mnmajor(by_fill, &tile, head, row0, rows, d);
    else smem_fill_rows_kmajor(by_fill, &tile, head, row0, rows, d);
    tmap_params m;
    fmha_tmap_params(p, t, 0x7f0000000000ull, mistake, &m);
    long diff = 0;
    if (m.rank == 5) { /* one box a tile (p->pipe.kv_box5): all D / 64 atom columns in one copy */
        const int32_t coords[5] = {0, row0, 0, h, b};
        uint32_t tx;
        if (tma_model_load(&m, 9, base, coords, by_tma, 0, &tx, msg, len)) diff = -1;
    }
    for (int a = 0; a < d / 64 && diff >= 0 && m.rank != 5; a++) {
        const int32_t coords[4] = {64 * a, row0, h, b};
        uint32_t tx;
        if (tma_model_load(&m, 9, base, coords, by_tma, (uint32_t)a * (mn ? tile.lbo : tile.katom), &tx, msg, len)) diff = -1;
    }
    for (uint32_t i = 0; i < tile.bytes && diff >= 0; i++) diff += by_fill[i] != by_tma[i];
    free(head); free(by_fill); free(by_tma);
    return diff;
}

Test(fmha_tmaps, maps_are_accepted_and_give_stage_c_tiles)
{
    const int ds[3] = {64, 128, 256};
    for (int di = 0; di < 3; di++)
        for (int bshd = 0; bshd < 2; bshd++)
            for (int hkv = 1; hkv <= 4; hkv *= 4) {
                fmha_opts o = opts(ds[di], bshd, hkv);
                attn_problem ap;
                cr_assert_eq(attn_problem_make(&o, &ap), 0);
                for (int t = FMHA_TENSOR_Q; t <= FMHA_TENSOR_O; t++) {
                    tmap_params m;
                    char msg[256] = "";
                    fmha_tmap_params(&ap.p, (fmha_tensor)t, 0x7f0000000000ull, FMHA_TMAP_RIGHT, &m);
                    cr_expect_eq(tmap_check(&m, 9, msg, sizeof msg), 0, "%s map, D=%d %s: %s", fmha_tensor_name(t), ds[di],
                                 bshd ? "BSHD" : "BHSD", msg);
                    cr_expect_eq(tmap_check(&m, 10, msg, sizeof msg), 0, "CC 10: %s", msg);
                    cr_expect_eq(tma_box_bytes(&m), 64u * (t == FMHA_TENSOR_O ? (unsigned)FMHA_O_BOX_ROWS : 128u) * 2u,
                                 "one box = one atom column of a tile (O: of one warp's rows)");
                }
                const int rows0[2] = {0, 256}; /* a full tile and a tail tile (Sq 200, Skv 300) */
                for (int t = FMHA_TENSOR_Q; t <= FMHA_TENSOR_V; t++)
                    for (int r = 0; r < 2; r++) {
                        const int h = t == FMHA_TENSOR_Q ? 3 : hkv - 1, row0 = t == FMHA_TENSOR_Q ? rows0[r] / 2 : rows0[r];
                        char msg[256] = "";
                        const long diff = tile_diff(&ap, (fmha_tensor)t, FMHA_TMAP_RIGHT, 1, h, row0, msg, sizeof msg);
                        cr_expect_eq(diff, 0, "%s tile (b=1, h=%d, row0=%d), D=%d %s Hkv=%d: %ld bytes differ %s",
                                     fmha_tensor_name(t), h, row0, ds[di], bshd ? "BSHD" : "BHSD", hkv, diff, msg);
                    }
                attn_problem_free(&ap);
            }
}

/* Stage F's 64-key tiles at D = 256 (p->pipe.cols = 64): the K and V maps take boxes of 64 rows,
 * the driver's rules accept them, and the TMA model lands each box exactly where the thread fill
 * of a 64-key tile puts those rows: a whole tile and the tail tile (Skv 300: keys 256..299). */
Test(fmha_tmaps, kv_maps_of_64_key_tiles)
{
    for (int bshd = 0; bshd < 2; bshd++)
        for (int hkv = 1; hkv <= 4; hkv *= 4) {
            fmha_opts o = opts(256, bshd, hkv);
            attn_problem ap;
            cr_assert_eq(attn_problem_make(&o, &ap), 0);
            ap.p.pipe.cols = 64;
            for (int t = FMHA_TENSOR_K; t <= FMHA_TENSOR_V; t++) {
                tmap_params m;
                char msg[256] = "";
                fmha_tmap_params(&ap.p, (fmha_tensor)t, 0x7f0000000000ull, FMHA_TMAP_RIGHT, &m);
                cr_expect_eq(tmap_check(&m, 9, msg, sizeof msg), 0, "%s map, 64-key tiles: %s", fmha_tensor_name(t), msg);
                cr_expect_eq(tma_box_bytes(&m), 64u * 64u * 2u, "one box = one atom column of a 64-key tile");
                const int rows0[3] = {0, 64, 256};
                for (int r = 0; r < 3; r++) {
                    const long diff = tile_diff(&ap, (fmha_tensor)t, FMHA_TMAP_RIGHT, 1, hkv - 1, rows0[r], msg, sizeof msg);
                    cr_expect_eq(diff, 0, "%s tile at key %d, %s Hkv=%d: %ld bytes differ %s", fmha_tensor_name(t), rows0[r],
                                 bshd ? "BSHD" : "BHSD", hkv, diff, msg);
                }
            }
            attn_problem_free(&ap);
        }
}

/* Stage F's one box a K/V tile (p->pipe.kv_box5, sm90 --kv-box 1): a 5-D map the driver's rules
 * accept, whose one box the TMA model lands exactly where the thread fill puts the tile (K-major K,
 * MN-major V), at D 64/128/256, 64-, 128- and 176-key tiles, BHSD and BSHD, MQA's shared head
 * (stride 0) and GQA, a whole tile and the tail tile. Q and O keep their maps. */
Test(fmha_tmaps, kv_maps_of_one_box_a_tile)
{
    const int ds[3] = {64, 128, 256};
    for (int di = 0; di < 3; di++)
        for (int bn = 64; bn <= 176; bn += bn == 64 ? 64 : 48) {
            if (bn == 176 && ds[di] != 128) continue; /* the 176-key tile is D 128's */
            for (int bshd = 0; bshd < 2; bshd++)
                for (int hkv = 1; hkv <= 4; hkv *= 4) {
                    fmha_opts o = opts(ds[di], bshd, hkv);
                    attn_problem ap;
                    cr_assert_eq(attn_problem_make(&o, &ap), 0);
                    ap.p.pipe.cols = bn;
                    ap.p.pipe.kv_box5 = 1;
                    for (int t = FMHA_TENSOR_Q; t <= FMHA_TENSOR_O; t++) {
                        tmap_params m;
                        char msg[256] = "";
                        fmha_tmap_params(&ap.p, (fmha_tensor)t, 0x7f0000000000ull, FMHA_TMAP_RIGHT, &m);
                        const int kv = t == FMHA_TENSOR_K || t == FMHA_TENSOR_V;
                        cr_expect_eq(m.rank, kv ? 5 : 4, "%s map rank %d", fmha_tensor_name(t), m.rank);
                        cr_expect_eq(tmap_check(&m, 9, msg, sizeof msg), 0, "%s map, D=%d bn=%d: %s", fmha_tensor_name(t),
                                     ds[di], bn, msg);
                        if (kv)
                            cr_expect_eq(tma_box_bytes(&m), (unsigned)ds[di] * (unsigned)bn * 2u, "the whole tile in one box");
                    }
                    const int rows0[2] = {0, 300 / bn * bn}; /* a whole tile and the tail tile (Skv 300) */
                    for (int t = FMHA_TENSOR_K; t <= FMHA_TENSOR_V; t++)
                        for (int r = 0; r < 2; r++) {
                            char msg[256] = "";
                            const long diff = tile_diff(&ap, (fmha_tensor)t, FMHA_TMAP_RIGHT, 1, hkv - 1, rows0[r], msg, sizeof msg);
                            cr_expect_eq(diff, 0, "%s tile at key %d, D=%d bn=%d %s Hkv=%d: %ld bytes differ %s",
                                         fmha_tensor_name(t), rows0[r], ds[di], bn, bshd ? "BSHD" : "BHSD", hkv, diff, msg);
                        }
                    attn_problem_free(&ap);
                }
        }
}

Test(fmha_tmaps, fg13_mistakes_through_the_same_builder)
{
    fmha_opts o = opts(128, 0, 4);
    attn_problem ap;
    cr_assert_eq(attn_problem_make(&o, &ap), 0);
    tmap_params m;
    char msg[256];
    /* broken: rank strides, the seed's INVALID_VALUE */
    fmha_tmap_params(&ap.p, FMHA_TENSOR_K, 0x7f0000000000ull, FMHA_TMAP_RANK_STRIDES, &m);
    int rule = tmap_check(&m, 9, msg, sizeof msg);
    fprintf(stderr, "FG13 broken (K map with rank strides, checker): %s: %s\n", tmap_rule_name(rule), msg);
    cr_expect_eq(rule, TMAP_R_STRIDE_MULT16, "%s", msg);
    /* broken: the whole head dim in one box, wider than the 128-byte swizzle span */
    fmha_tmap_params(&ap.p, FMHA_TENSOR_K, 0x7f0000000000ull, FMHA_TMAP_WIDE_INNER_BOX, &m);
    rule = tmap_check(&m, 9, msg, sizeof msg);
    fprintf(stderr, "FG13 broken (K map with a 256-byte inner box, checker): %s: %s\n", tmap_rule_name(rule), msg);
    cr_expect_eq(rule, TMAP_R_SWIZZLE_SPAN, "%s", msg);
    /* broken: strides in elements. At D = 128 every one is a multiple of 16, so the checker (and
     * the driver) accept it, and the copy reads rows 1/2 as far apart as they are: silent */
    fmha_tmap_params(&ap.p, FMHA_TENSOR_K, 0x7f0000000000ull, FMHA_TMAP_ELEMENT_STRIDES, &m);
    rule = tmap_check(&m, 9, msg, sizeof msg);
    const long wrong = tile_diff(&ap, FMHA_TENSOR_K, FMHA_TMAP_ELEMENT_STRIDES, 1, 2, 0, msg, sizeof msg);
    fprintf(stderr, "FG13 broken (K map with strides in elements, checker + TMA model): checker %s, %ld of %u tile bytes "
            "wrong\n", tmap_rule_name(rule), wrong, fmha_k_tile(128).bytes);
    cr_expect_eq(rule, TMAP_OK, "accepted: nothing catches it but the data");
    cr_expect_gt(wrong, 10000, "most of the tile is read from the wrong rows (%ld bytes)", wrong);
    /* fixed: the builder's map */
    fmha_tmap_params(&ap.p, FMHA_TENSOR_K, 0x7f0000000000ull, FMHA_TMAP_RIGHT, &m);
    rule = tmap_check(&m, 9, msg, sizeof msg);
    const long right = tile_diff(&ap, FMHA_TENSOR_K, FMHA_TMAP_RIGHT, 1, 2, 0, msg, sizeof msg);
    fprintf(stderr, "FG13 fixed (K map with byte strides of dims 1..3, 128-byte inner box): checker %s, %ld tile bytes "
            "wrong\n", tmap_rule_name(rule), right);
    cr_expect_eq(rule, TMAP_OK);
    cr_expect_eq(right, 0);
    attn_problem_free(&ap);
}
