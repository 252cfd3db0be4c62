/* Fragment maps: each tcgen05.ld/st shape covers its lanes x columns exactly once; the wgmma
 * accumulator and A maps are bijections with the values of notes/hardware.md section 6.3; the S -> P
 * register re-view holds; the bf16x2 pack order. */
#include <criterion/criterion.h>
#include <string.h>

#include "model/frag_map.h"

Test(frag_map, tmem_address_fields)
{
    cr_expect_eq(tmem_addr(0, 5, 7), 0x00050007u);
    cr_expect_eq(tmem_addr(0x20, 96, 0), (96u << 16) + 0x20);
    cr_expect_eq(tmem_addr_lane(0x00400010u), 64);
    cr_expect_eq(tmem_addr_col(0x00400010u), 16);
    cr_expect_eq(tmem_warp_lane_base(5), 32, "warp 5 is warp 1 of its warpgroup");
}

static void check_cover(tmem_shape s, int num, int half_off)
{
    int lanes = tmem_shape_lanes(s), regs = tmem_regs_per_thread(s, num);
    int cols = 32 * regs / lanes; /* columns one instruction covers (per lane) */
    if (s == TMEM_16x32bx2) cols = 2 * num;
    static int hits[32][1024];
    memset(hits, 0, sizeof hits);
    for (int t = 0; t < 32; t++)
        for (int r = 0; r < regs; r++) {
            int dl, dc;
            tmem_thread_map(s, half_off, t, r, &dl, &dc);
            cr_assert(dl >= 0 && dl < lanes, "shape %d: lane %d", s, dl);
            int col = s == TMEM_16x32bx2 ? (dc >= half_off ? num + dc - half_off : dc) : dc;
            cr_assert(col >= 0 && col < cols, "shape %d: col %d", s, dc);
            hits[dl][col]++;
        }
    for (int l = 0; l < lanes; l++)
        for (int c = 0; c < cols; c++) cr_assert_eq(hits[l][c], 1, "shape %d num %d: (lane %d, col %d) hit %d times", s, num, l, c, hits[l][c]);
}

Test(frag_map, tmem_shapes_cover_their_cells_once)
{
    for (int num = 1; num <= 8; num *= 2) {
        check_cover(TMEM_32x32b, num, 0);
        check_cover(TMEM_16x64b, num, 0);
        check_cover(TMEM_16x128b, num, 0);
        check_cover(TMEM_16x256b, num, 0);
        check_cover(TMEM_16x32bx2, num, 64);
    }
    cr_expect_eq(tmem_regs_per_thread(TMEM_16x256b, 2), 8);
    cr_expect_eq(tmem_max_num(TMEM_16x256b), 32);
}

Test(frag_map, tmem_16x256b_is_the_mma_m16n8_pattern)
{
    int dl, dc;
    tmem_thread_map(TMEM_16x256b, 0, 5, 0, &dl, &dc); /* t=5: lane 1, cols 2,3 */
    cr_expect(dl == 1 && dc == 2);
    tmem_thread_map(TMEM_16x256b, 0, 5, 3, &dl, &dc);
    cr_expect(dl == 9 && dc == 3);
    tmem_thread_map(TMEM_16x256b, 0, 5, 4, &dl, &dc);
    cr_expect(dl == 1 && dc == 10);
}

Test(frag_map, wgmma_accumulator_known_values_and_bijection)
{
    int r, c;
    wgmma_acc_map(0, 0, &r, &c); cr_expect(r == 0 && c == 0);
    wgmma_acc_map(0, 1, &r, &c); cr_expect(r == 0 && c == 1);
    wgmma_acc_map(0, 2, &r, &c); cr_expect(r == 8 && c == 0);
    wgmma_acc_map(0, 4, &r, &c); cr_expect(r == 0 && c == 8);
    wgmma_acc_map(5, 0, &r, &c); cr_expect(r == 1 && c == 2);
    wgmma_acc_map(37, 3, &r, &c); cr_expect(r == 16 + 1 + 8 && c == 3, "warp 1 lane 5 reg 3: (%d,%d)", r, c);
    static int hits[64][256];
    memset(hits, 0, sizeof hits);
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < 128; i++) {
            wgmma_acc_map(t, i, &r, &c);
            hits[r][c]++;
        }
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 256; j++) cr_assert_eq(hits[i][j], 1);
}

Test(frag_map, wgmma_a_map_bijection_and_s_to_p_review)
{
    static int hits[64][16];
    memset(hits, 0, sizeof hits);
    for (int t = 0; t < 128; t++)
        for (int v = 0; v < 8; v++) {
            int r, k;
            wgmma_a_map(t, v, &r, &k);
            hits[r][k]++;
            /* accumulator register 8kk+v of S (N = 128) holds the A value v of P's k-step kk */
            for (int kk = 0; kk < 8; kk++) {
                int sr, sc;
                wgmma_acc_map(t, 8 * kk + v, &sr, &sc);
                cr_assert(sr == r && sc == 16 * kk + k, "t %d v %d kk %d: S(%d,%d) vs P(%d,%d)", t, v, kk, sr, sc, r, 16 * kk + k);
            }
        }
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 16; j++) cr_assert_eq(hits[i][j], 1);
}

Test(frag_map, bf16x2_pack_order)
{
    /* cvt.rn.bf16x2.f32 d, a, b: a -> upper half. The even-k element belongs in the low half. */
    cr_expect_eq(pack_bf16x2_cvt_order(0x4000, 0x3F80), 0x40003F80u);
    cr_expect_eq(pack_bf16_pair(0x3F80 /* k even: 1.0 */, 0x4000 /* k odd: 2.0 */), 0x40003F80u);
}
