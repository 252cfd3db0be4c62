/* The TMA box model (common/model/tma_model.c): what a 128B-swizzled box of 64 bf16 x rows puts in
 * SMEM must be, byte for byte, one atom column of the canonical tiles the MMAs read, i.e. what the
 * thread copies (model/canonical_fill.c, the host mirror of device/canonical_copy.cuh) write:
 *   Q, K: K-major [128 x D] SW128, atom column a = box at (64a, row0), placed a * katom apart;
 *   V:    MN-major [D x 128 kv] SW128, atom column a = box at (64a, row0), placed a * LBO apart.
 * Plus: rows past the end and negative coordinates come back as zeros, the transaction bytes are
 * the whole box either way, rank-3/4 maps over BHSD and BSHD strides select the right head, and a
 * map the driver would refuse is refused, not copied. Stage E's hardware conformance test compares
 * the same model with real TMA copies. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/rng.h"
#include "model/canonical_fill.h"
#include "model/tma_model.h"
#include "tma_grid.h"

static tmap_params map2d(int cols, int rows, int ld, int box_rows) { return tma_bf16_map_2d(cols, rows, ld, box_rows); }

static uint16_t *random_matrix(size_t n, uint64_t seed)
{
    rng_t r;
    rng_seed(&r, seed);
    uint16_t *m = malloc(n * 2);
    for (size_t i = 0; i < n; i++) m[i] = (uint16_t)(rng_next(&r) & 0x7F7Fu) | 0x0101u; /* never 0 */
    return m;
}

/* Tile [128 x D] (K-major) or [D x 128] (MN-major) of rows row0.. by TMA boxes vs by the fill. */
static void compare_tile(int major_mn, int d, int rows, int row0)
{
    const int ld = d;
    uint16_t *src = random_matrix((size_t)rows * ld, (uint64_t)(d * 31 + rows + row0));
    const smem_tile t = major_mn ? smem_tile_make(MAJOR_MN, SWZ_128B, 2, d, 128) : smem_tile_make(MAJOR_K, SWZ_128B, 2, 128, d);
    uint8_t *by_fill = calloc(t.bytes, 1), *by_tma = malloc(t.bytes);
    memset(by_tma, 0xEE, t.bytes); /* poison: every byte must be written by some box */
    if (major_mn) smem_fill_rows_mnmajor(by_fill, &t, src, row0, rows, ld);
    else smem_fill_rows_kmajor(by_fill, &t, src, row0, rows, ld);
    const tmap_params p = map2d(d, rows, ld, 128);
    for (int a = 0; a < d / 64; a++) {
        const int32_t coords[2] = {64 * a, row0};
        uint32_t tx = 0;
        char err[256] = "";
        const uint32_t dst = (uint32_t)a * (major_mn ? t.lbo : t.katom);
        cr_assert_eq(tma_model_load(&p, 9, src, coords, by_tma, dst, &tx, err, sizeof err), 0, "%s", err);
        cr_expect_eq(tx, 64u * 128u * 2u, "the whole box is credited, out-of-bounds rows included (%u)", tx);
    }
    size_t diff = 0;
    for (uint32_t i = 0; i < t.bytes; i++) diff += by_fill[i] != by_tma[i];
    cr_expect_eq(diff, 0, "%s D=%d rows=%d row0=%d: %zu of %u bytes differ between the TMA boxes and the fill",
                 major_mn ? "MN-major V" : "K-major Q/K", d, rows, row0, diff, t.bytes);
    free(src); free(by_fill); free(by_tma);
}

Test(tma_model, boxes_are_canonical_kmajor_tiles)
{
    const int ds[3] = {64, 128, 256};
    for (int i = 0; i < 3; i++) {
        compare_tile(0, ds[i], 1000, 0);
        compare_tile(0, ds[i], 1000, 896); /* a tail tile: rows 1000..1023 are zeros in both */
        compare_tile(0, ds[i], 3, 0);
    }
}

Test(tma_model, boxes_are_canonical_mnmajor_tiles)
{
    const int ds[3] = {64, 128, 256};
    for (int i = 0; i < 3; i++) {
        compare_tile(1, ds[i], 1000, 128);
        compare_tile(1, ds[i], 1000, 896);
        compare_tile(1, ds[i], 113, 0);
    }
}

Test(tma_model, out_of_bounds_is_zero_and_counted)
{
    uint16_t *src = random_matrix(64 * 16, 7);
    const tmap_params p = map2d(64, 16, 64, 32);
    uint8_t img[64 * 32 * 2];
    memset(img, 0xEE, sizeof img);
    const int32_t coords[2] = {0, -8}; /* rows -8..23 of a 16-row tensor: 8 + 8 rows outside */
    uint32_t tx = 0;
    char err[256];
    cr_assert_eq(tma_model_load(&p, 9, src, coords, img, 0, &tx, err, sizeof err), 0, "%s", err);
    cr_expect_eq(tx, sizeof img, "tx counts the whole box");
    size_t zero_rows = 0, data_rows = 0;
    for (int r = 0; r < 32; r++) {
        int zeros = 1, match = 1;
        for (int c = 0; c < 64; c++) {
            uint16_t v;
            memcpy(&v, img + swizzle_apply((uint32_t)(r * 128 + c * 2), SWZ_128B), 2);
            zeros &= v == 0;
            if (r >= 8 && r < 24) match &= v == src[(r - 8) * 64 + c];
        }
        zero_rows += zeros && (r < 8 || r >= 24);
        data_rows += (r >= 8 && r < 24) && match;
    }
    cr_expect_eq(zero_rows, 16, "the 16 rows outside the tensor are zeros");
    cr_expect_eq(data_rows, 16, "the 16 rows inside are the tensor's rows 0..15");
    free(src);
}

Test(tma_model, rank4_maps_select_the_head_in_both_layouts)
{
    enum { B = 2, H = 3, S = 200, D = 128 };
    uint16_t *x = random_matrix((size_t)B * H * S * D, 99);
    for (int bshd = 0; bshd < 2; bshd++) {
        /* dims {D, S, H, B}; byte strides of dims 1..3 from the element strides of the layout */
        const uint64_t ss = bshd ? (uint64_t)H * D : D, sh = bshd ? D : (uint64_t)S * D, sb = (uint64_t)H * S * D;
        tmap_params p = map2d(D, S, (int)ss, 128);
        p.rank = 4;
        p.global_dim[2] = H;
        p.global_dim[3] = B;
        p.global_strides[1] = sh * 2;
        p.global_strides[2] = sb * 2;
        p.box_dim[2] = p.box_dim[3] = 1;
        const int b = 1, h = 2, row0 = 128;
        const smem_tile t = smem_tile_make(MAJOR_K, SWZ_128B, 2, 128, D);
        uint8_t *by_fill = calloc(t.bytes, 1), *by_tma = calloc(t.bytes, 1);
        smem_fill_rows_kmajor(by_fill, &t, x + b * sb + h * sh, row0, S, (int)ss);
        for (int a = 0; a < D / 64; a++) {
            const int32_t coords[4] = {64 * a, row0, h, b};
            uint32_t tx;
            char err[256];
            cr_assert_eq(tma_model_load(&p, 9, x, coords, by_tma, (uint32_t)a * t.katom, &tx, err, sizeof err), 0, "%s", err);
        }
        cr_expect_eq(memcmp(by_fill, by_tma, t.bytes), 0, "%s: the rank-4 boxes are head (b=1, h=2)'s tile",
                     bshd ? "BSHD" : "BHSD");
        free(by_fill); free(by_tma);
    }
    free(x);
}

Test(tma_model, refused_maps_are_not_copied)
{
    uint16_t src[64 * 8] = {0};
    uint8_t img[64 * 8 * 2];
    uint32_t tx = 12345;
    char err[256] = "";
    tmap_params p = map2d(64, 8, 50, 8); /* a 100-byte row pitch: not a multiple of 16 (FG13) */
    const int32_t coords[2] = {0, 0};
    cr_expect_eq(tma_model_load(&p, 9, src, coords, img, 0, &tx, err, sizeof err), 2);
    cr_expect(strstr(err, "multiple of 16") != NULL, "the checker's rule is named: %s", err);
    cr_expect_eq(tx, 12345u, "nothing credited");
    p = map2d(64, 8, 64, 8);
    cr_expect_eq(tma_model_load(&p, 9, src, coords, img, 512, &tx, err, sizeof err), 2, "a 512-byte aligned box");
    cr_expect(strstr(err, "1024-byte swizzle repeat") != NULL, "%s", err);
}
