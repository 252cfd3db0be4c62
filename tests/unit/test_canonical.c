/* Canonical SMEM layouts: the swizzle pattern, the project's dense tiles (LBO/SBO values of
 * notes/hardware.md section 1.4), the K-advance rule of section 3.5 for every case, and that each tile is a
 * one-to-one map of its elements into its bytes. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "model/canonical.h"

Test(canonical, swizzle_128b_pattern)
{
    /* PTX 5.5.7: with 128B swizzle, 16-byte chunk c of row r (row = 128 B) lands at chunk c ^ (r % 8) */
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++)
            cr_assert_eq(swizzle_apply((uint32_t)(r * 128 + c * 16), SWZ_128B),
                         (uint32_t)(r * 128 + ((c ^ (r % 8)) * 16)));
    cr_expect_eq(swizzle_apply(0x80 + 4, SWZ_128B), 0x90 + 4, "byte within the chunk is kept");
    cr_expect_eq(swizzle_apply(0x1234, SWZ_NONE), 0x1234);
}

Test(canonical, swizzle_64b_and_32b_patterns)
{
    /* Swizzle<2,4,3> / Swizzle<1,4,3>: address bits [4,6) / [4,5) XOR bits [7,9) / [7,8) */
    cr_expect_eq(swizzle_apply(0x80, SWZ_64B), 0x90);
    cr_expect_eq(swizzle_apply(0x180, SWZ_64B), 0x1B0);
    cr_expect_eq(swizzle_apply(0x200, SWZ_64B), 0x200, "bit 9 is outside the 64B pattern");
    cr_expect_eq(swizzle_apply(0x80, SWZ_32B), 0x90);
    cr_expect_eq(swizzle_apply(0x100, SWZ_32B), 0x100);
}

Test(canonical, dense_tiles_match_the_documented_values)
{
    smem_tile q = smem_tile_make(MAJOR_K, SWZ_128B, 2, 128, 64);
    cr_expect(q.sbo == 1024 && q.lbo == 16, "K-major 128B bf16: SBO 1024 (8 rows x 128 B)");
    smem_tile v = smem_tile_make(MAJOR_MN, SWZ_128B, 2, 128, 128); /* V [kv=128][d=128], N = d */
    cr_expect(v.lbo == 16384 && v.sbo == 1024, "MN-major V tile: LBO %u SBO %u", v.lbo, v.sbo);
    smem_tile kn = smem_tile_make(MAJOR_K, SWZ_NONE, 2, 128, 64);
    cr_expect(kn.lbo == 2048 && kn.sbo == 128, "K-major no swizzle BLOCK_M=128: LBO %u SBO %u", kn.lbo, kn.sbo);
    smem_tile mn = smem_tile_make(MAJOR_MN, SWZ_NONE, 2, 16, 16);
    cr_expect(mn.lbo == 256 && mn.sbo == 128, "MN-major no swizzle bf16 (PTX example): LBO %u SBO %u", mn.lbo, mn.sbo);
}

Test(canonical, k_advance_rules)
{
    smem_tile a = smem_tile_make(MAJOR_K, SWZ_128B, 2, 128, 128);
    cr_expect_eq(smem_tile_k_advance(&a, 16), 32, "K-major 128B: +32 B per k16 inside an atom");
    cr_expect_eq(smem_tile_k_advance(&a, 48), 96);
    cr_expect_eq(smem_tile_k_advance(&a, 64), 128u * 128u, "next atom column: rows * 128 B");
    cr_expect_eq(smem_tile_k_advance(&a, 80), 128u * 128u + 32u);
    smem_tile v = smem_tile_make(MAJOR_MN, SWZ_128B, 2, 64, 128);
    cr_expect_eq(smem_tile_k_advance(&v, 16), 2048, "MN-major 128B: +2048 B per k16");
    smem_tile v8 = smem_tile_make(MAJOR_MN, SWZ_128B, 1, 128, 128);
    cr_expect_eq(smem_tile_k_advance(&v8, 32), 4096, "MN-major 128B fp8: +4096 B per k32");
    smem_tile n = smem_tile_make(MAJOR_K, SWZ_NONE, 2, 64, 64);
    cr_expect_eq(smem_tile_k_advance(&n, 16), 2 * n.lbo, "K-major none: two core-matrix columns");
    smem_tile s32 = smem_tile_make(MAJOR_K, SWZ_32B, 2, 64, 64);
    cr_expect_eq(smem_tile_k_advance(&s32, 16), s32.katom, "32B swizzle: one k16 fills the atom row");
}

static void check_injective(operand_major major, swizzle_mode s, int eb, int mn, int k)
{
    smem_tile t = smem_tile_make(major, s, eb, mn, k);
    unsigned char *seen = calloc(t.bytes, 1);
    for (int i = 0; i < mn; i++)
        for (int j = 0; j < k; j++) {
            uint32_t off = smem_tile_offset(&t, i, j);
            cr_assert(off + (uint32_t)eb <= t.bytes, "(%d,%d) at %u outside %u bytes", i, j, off, t.bytes);
            for (int b = 0; b < eb; b++) {
                cr_assert(!seen[off + b], "two elements share byte %u (major %d swz %d)", off + b, major, s);
                seen[off + b] = 1;
            }
        }
    free(seen);
}

Test(canonical, every_tile_is_one_to_one)
{
    swizzle_mode sw[4] = {SWZ_NONE, SWZ_32B, SWZ_64B, SWZ_128B};
    for (int m = 0; m < 2; m++)
        for (int s = 0; s < 4; s++)
            for (int eb = 1; eb <= 2; eb++) {
                check_injective((operand_major)m, sw[s], eb, 128, 128);
                check_injective((operand_major)m, sw[s], eb, 64, 32);
                check_injective((operand_major)m, sw[s], eb, 8, 64);
            }
}

Test(canonical, descriptor_addressing_equals_the_fill)
{
    /* For every K step, reading element (mn, kk) through the descriptor of that step lands where
     * the fill wrote element (mn, k0 + kk): the invariant FG01 breaks. */
    swizzle_mode sw[4] = {SWZ_NONE, SWZ_32B, SWZ_64B, SWZ_128B};
    for (int m = 0; m < 2; m++)
        for (int s = 0; s < 4; s++) {
            smem_tile t = smem_tile_make((operand_major)m, sw[s], 2, 64, 128);
            for (int k0 = 0; k0 < 128; k0 += 16) {
                uint32_t start = smem_tile_k_advance(&t, k0);
                for (int mn = 0; mn < 64; mn++)
                    for (int kk = 0; kk < 16; kk++)
                        cr_assert_eq(smem_desc_addr(t.major, t.swz, 2, start, t.lbo, t.sbo, mn, kk),
                                     smem_tile_offset(&t, mn, k0 + kk), "major %d swz %d k0 %d", m, s, k0);
            }
        }
}

Test(canonical, sw128_row_offset_equals_the_tile_offset)
{
    /* The written-out address stage D's V transpose stores through and its cp.async gather writes
     * K and V through (one-atom-wide K-major SW128, 1-byte elements: Vt, and K / Vs at D = 64 and
     * 128) against the general fill, on every row count a Vt tile can have and both row widths. */
    const int rows[] = {8, 16, 64, 128, 192, 256};
    for (int width = 64; width <= 128; width += 64)
        for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            smem_tile t = smem_tile_make(MAJOR_K, SWZ_128B, 1, rows[i], width);
            for (int r = 0; r < rows[i]; r++)
                for (int c = 0; c < width; c++)
                    cr_assert_eq(smem_sw128_row_offset(r, c), smem_tile_offset(&t, r, c), "rows %d width %d (%d, %d)", rows[i],
                                 width, r, c);
        }
}
