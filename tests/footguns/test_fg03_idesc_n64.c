/* FG03 — the N=64 instruction descriptor (seed 000 "Layout D N=64 Bug").
 *
 * Symptom (seed): tcgen05.mma with make_idesc(128, 64) "skips TMEM cols 32-35, 48-51"; the seed
 *   worked around it with N=16 sub-tiles written at TMEM column offsets 16 n.
 * Cause: UNCONFIRMED. The seed shows neither its make_idesc nor its readout, and there is no B200
 *   here. This test pins the encoder (M>>4 at bits 24-28, N>>3 at bits 17-22: 0x08100490 for
 *   M=128, N=64, bf16 -> f32, both K-major) and emulates the two common mis-encodings of
 *   notes/hardware.md section 2.4:
 *     - M at bit 23 ((M>>4) << 23): 0x04100490, which IS the valid M=64, N=64 descriptor. The MMA
 *       silently runs as M=64 (layout F): only lanes 0-15, 32-47, 64-79, 96-111 are written, from
 *       rows 0-63 of A; the other 64 lanes keep what they held.
 *     - N shifted by one bit ((N>>3) << 16): decodes as N=32; columns 32-63 are never written.
 *   Neither produces the seed's exact pattern (columns 32-35 and 48-51 only): the test measures the
 *   set of unwritten columns of each and asserts that it is not the seed's. The seed's root cause
 *   therefore stays open; notes/hardware.md section 3.7 lists candidates outside the descriptor (e.g. the
 *   TMEM readout, #10) that this file does not test.
 * Fix: encode with idesc_bf16_f32() (common/model/idesc.h) and decode/check what is issued
 *   (idesc_check, `build/bin/explain`); stages/B_pv/pv_sm100.cu issues one N=64 (N = D) MMA per
 *   k16 step. The seed's workaround is equivalent, not necessary: one N=64 MMA equals four N=16
 *   MMAs whose B descriptors start 16 rows further each (smem_tile_desc_sm100(&tile, base, 16 i, k))
 *   and whose D starts 16 columns further each.
 * Stage: B. Levels:
 *   emu   decode + emulation of the mis-encodings on the TMEM model (poisoned cells show what is
 *         never written), and N=64 vs 4 x N=16 on the tcgen05 emulator, B K-major and MN-major.
 *         Reproductions of the model.
 *   sm90  wgmma has no instruction descriptor; what carries over is the sub-tile equivalence: a real
 *         wgmma m64n64k16 vs four m64n16k16 with per-sub-tile B descriptors
 *         (tests/gpu/kernels/wgmma_conf.cu), asserted bit-identical for K-major B; the MN-major B
 *         sub-tiles (descriptor start 32 B into the 128B swizzle atom) are printed, not asserted.
 *   sm100 no B200 here: the stage B kernel is compiled only; the seed's symptom is not reproduced.
 * Notes: notes/footguns.md#fg03 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "model/idesc.h"
#include "model/mma_emu.h"
#include "model/tmem_model.h"
#include "mma_fixture.h"
#include "test_util.h"
#include "wgmma_run.h"

/* The correct descriptor and the two mis-encodings, built from it by moving one field. */
static uint32_t idesc_right(void) { return idesc_bf16_f32(128, 64, 0, 0); }
static uint32_t idesc_m_at_bit23(void) { return idesc_miscoded(idesc_right(), IDESC_MISCODE_M_AT_BIT23); }
static uint32_t idesc_n_shifted(void) { return idesc_miscoded(idesc_right(), IDESC_MISCODE_N_BIT_LOW); }

typedef struct {
    tmem_model *tm;
    uint32_t base;
    mma_case c; /* A [128 x 64], B [64 x 64], both K-major SW128: four k16 steps */
} run_t;

/* Run the four K steps with the given descriptor into freshly poisoned TMEM. */
static void run_idesc(run_t *r, uint32_t idesc)
{
    mma_case_make(&r->c, MMA_KIND_F16, FMT_BF16, 128, 64, 64, MAJOR_K, MAJOR_K, SWZ_128B, 30);
    r->tm = tmem_model_new();
    cr_assert_eq(tmem_alloc(r->tm, 64, &r->base), TMEM_OK);
    smem_image im = {r->c.img, 0, r->c.bytes};
    for (int k = 0; k < 64; k += 16) {
        emu_status st = {0};
        cr_assert_eq(emu_tcgen05_mma(r->tm, &im, r->base, 0, 0, mma_case_desc_sm100(&r->c, 0, k),
                                     mma_case_desc_sm100(&r->c, 1, k), idesc, MMA_KIND_F16, k > 0, &st),
                     EMU_OK, "idesc 0x%08X: %s", idesc, st.msg);
    }
}

static void run_free(run_t *r)
{
    tmem_model_free(r->tm);
    mma_case_free(&r->c);
}

static int poisoned(const run_t *r, int lane, int col)
{
    return r->tm->cell[lane][tmem_addr_col(r->base) + col] == TMEM_POISON;
}

static double value(const run_t *r, int lane, int col)
{
    float v;
    memcpy(&v, &r->tm->cell[lane][tmem_addr_col(r->base) + col], 4);
    return v;
}

/* Columns (of 64) where at least one lane was never written, as a bit mask. */
static uint64_t unwritten_columns(const run_t *r)
{
    uint64_t m = 0;
    for (int j = 0; j < 64; j++)
        for (int i = 0; i < 128; i++)
            if (poisoned(r, i, j)) { m |= 1ull << j; break; }
    return m;
}

/* The seed's report: columns 32-35 and 48-51 skipped, nothing else. */
static const uint64_t SEED_COLUMNS = (0xFull << 32) | (0xFull << 48);

Test(footgun, fg03_wrong_m_at_bit23_then_fixed_emu)
{
    /* decode: the mis-encoding is exactly the valid M=64, N=64 descriptor, so nothing can reject it */
    idesc_fields f;
    idesc_decode(idesc_m_at_bit23(), &f);
    cr_expect_eq(idesc_m_at_bit23(), 0x04100490u);
    cr_expect_eq(idesc_m_at_bit23(), idesc_bf16_f32(64, 64, 0, 0));
    cr_expect_eq(f.m, 64);
    cr_expect_eq(f.n, 64);
    cr_expect_eq(f.reserved, 0, "bit 23 is clear again: the M field absorbed it");

    run_t r;
    run_idesc(&r, idesc_m_at_bit23());
    int written = 0, untouched = 0;
    for (int lane = 0; lane < 128; lane++) {
        int all_w = 1, all_p = 1;
        for (int j = 0; j < 64; j++) {
            all_w &= !poisoned(&r, lane, j);
            all_p &= poisoned(&r, lane, j);
        }
        if (lane % 32 < 16) {
            written += all_w;
            /* layout F: lane 32w + i holds row 16w + i of D, computed from rows 0-63 of A */
            const int row = 16 * (lane / 32) + lane % 32;
            for (int j = 0; j < 64; j++)
                cr_assert_eq(value(&r, lane, j), r.c.ref[row * 64 + j], "lane %d col %d", lane, j);
        } else {
            untouched += all_p;
        }
    }
    const uint64_t cols = unwritten_columns(&r);
    fprintf(stderr, "FG03 emu, M at bit 23 (0x%08X): %d lanes fully written (0-15, 32-47, 64-79, 96-111), %d lanes "
            "never written; columns with an unwritten cell: mask 0x%016llx\n", idesc_m_at_bit23(), written, untouched,
            (unsigned long long)cols);
    cr_expect_eq(written, 64);
    cr_expect_eq(untouched, 64, "lanes 16-31, 48-63, 80-95, 112-127 keep the poison");
    cr_expect_neq(cols, SEED_COLUMNS, "not the seed's pattern (columns 32-35, 48-51)");
    run_free(&r);

    /* fixed: 0x08100490 writes all 128 lanes x 64 columns with D */
    cr_expect_eq(idesc_right(), 0x08100490u);
    run_idesc(&r, idesc_right());
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < 64; j++) cr_assert_eq(value(&r, i, j), r.c.ref[i * 64 + j], "fixed: D(%d,%d)", i, j);
    cr_expect_eq(unwritten_columns(&r), 0);
    run_free(&r);
}

Test(footgun, fg03_wrong_n_field_shifted_then_fixed_emu)
{
    idesc_fields f;
    idesc_decode(idesc_n_shifted(), &f);
    cr_expect_eq(f.n, 32, "N>>3 one bit low decodes as N/2");
    cr_expect_eq(f.m, 128);
    cr_expect_eq(f.b_mn, 0, "for N=64 the shifted field does not reach bit 16 (transpose B)");

    run_t r;
    run_idesc(&r, idesc_n_shifted());
    const uint64_t cols = unwritten_columns(&r);
    size_t right = 0;
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < 32; j++) right += value(&r, i, j) == r.c.ref[i * 64 + j];
    fprintf(stderr, "FG03 emu, N field shifted (0x%08X): columns 0-31 right in %zu of %d cells; unwritten columns "
            "mask 0x%016llx (the seed's 32-35, 48-51 would be 0x%016llx)\n", idesc_n_shifted(), right, 128 * 32,
            (unsigned long long)cols, (unsigned long long)SEED_COLUMNS);
    cr_expect_eq(right, 128 * 32, "the first N/2 columns are computed correctly");
    cr_expect_eq(cols, 0xFFFFFFFF00000000ull, "columns 32-63 are never written, in every lane");
    cr_expect_neq(cols, SEED_COLUMNS, "not the seed's pattern (columns 32-35, 48-51)");
    run_free(&r);

    run_idesc(&r, idesc_right());
    cr_expect_eq(unwritten_columns(&r), 0, "fixed: every column written");
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < 64; j++) cr_assert_eq(value(&r, i, j), r.c.ref[i * 64 + j]);
    run_free(&r);
}

/* sm100 emu: one M=128, N=64 MMA per k16 step vs four N=16 MMAs per step, sub-tile i with its B
 * descriptor 16 rows further (smem_tile_desc_sm100(&tile, base, 16 i, k)) and D 16 columns further. */
static void n64_vs_n16(operand_major mb)
{
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 128, 64, 64, MAJOR_K, mb, SWZ_128B, 31 + (uint64_t)mb);
    smem_image im = {c.img, 0, c.bytes};
    tmem_model *tm = tmem_model_new();
    uint32_t one, four;
    cr_assert_eq(tmem_alloc(tm, 64, &one), TMEM_OK);
    cr_assert_eq(tmem_alloc(tm, 64, &four), TMEM_OK);
    for (int k = 0; k < 64; k += 16) {
        emu_status st = {0};
        cr_assert_eq(emu_tcgen05_mma(tm, &im, one, 0, 0, mma_case_desc_sm100(&c, 0, k), mma_case_desc_sm100(&c, 1, k),
                                     idesc_bf16_f32(128, 64, 0, mb), MMA_KIND_F16, k > 0, &st), EMU_OK, "%s", st.msg);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(emu_tcgen05_mma(tm, &im, four + 16u * (uint32_t)i, 0, 0, mma_case_desc_sm100(&c, 0, k),
                                         smem_tile_desc_sm100(&c.tb, c.b_off, 16 * i, k), idesc_bf16_f32(128, 16, 0, mb),
                                         MMA_KIND_F16, k > 0, &st), EMU_OK, "%s", st.msg);
    }
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < 64; j++) {
            const uint32_t a = tm->cell[i][tmem_addr_col(one) + j], b = tm->cell[i][tmem_addr_col(four) + j];
            cr_assert_eq(a, b, "B %s: N=64 and 4 x N=16 differ at (%d,%d)", mb ? "MN-major" : "K-major", i, j);
            cr_assert_eq((double)bits_f32(a), c.ref[i * 64 + j]);
        }
    tmem_model_free(tm);
    mma_case_free(&c);
}

Test(footgun, fg03_n64_equals_four_n16_subtiles_emu)
{
    n64_vs_n16(MAJOR_K);
    n64_vs_n16(MAJOR_MN);
}

/* Hopper: wgmma m64n64k16 vs four m64n16k16, A [64 x 64] K-major, B [64 x 64] SW128. Returns the
 * number of registers where the two disagree (bit for bit) or differ from the plain loop. */
static int n64_vs_n16_wgmma(int on_gpu, operand_major mb)
{
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, 64, 64, MAJOR_K, mb, SWZ_128B, 35 + (uint64_t)mb);
    uint64_t descs[8];
    float one[128 * 32], sub[128 * 8];
    double d_one[64 * 64], d_four[64 * 64], d_sub[64 * 16];
    for (int s = 0; s < 4; s++) {
        descs[2 * s] = mma_case_desc_sm90(&c, 0, 16 * s);
        descs[2 * s + 1] = mma_case_desc_sm90(&c, 1, 16 * s);
    }
    wgmma_conf_opts o64 = {64, 0, (int)mb, NULL, 0.0f, 0}, o16 = {16, 0, (int)mb, NULL, 0.0f, 0};
    cr_assert_eq(wgmma_run(on_gpu, &o64, c.img, c.bytes, descs, 4, one), 0, "launch failed");
    wgmma_acc_to_matrix(one, 64, d_one);
    for (int i = 0; i < 4; i++) {
        for (int s = 0; s < 4; s++) descs[2 * s + 1] = smem_tile_desc_sm90(&c.tb, c.b_off, 16 * i, 16 * s);
        cr_assert_eq(wgmma_run(on_gpu, &o16, c.img, c.bytes, descs, 4, sub), 0, "launch failed");
        wgmma_acc_to_matrix(sub, 16, d_sub);
        for (int r = 0; r < 64; r++)
            for (int j = 0; j < 16; j++) d_four[r * 64 + 16 * i + j] = d_sub[r * 16 + j];
    }
    int bad = 0;
    for (int i = 0; i < 64 * 64; i++) bad += d_one[i] != d_four[i] || d_one[i] != c.ref[i];
    fprintf(stderr, "FG03 %s wgmma, B %s: m64n64k16 vs 4 x m64n16k16: %d of 4096 elements differ (from each other or "
            "from the loop)\n", on_gpu ? "sm90" : "emu", mb ? "MN-major" : "K-major", bad);
    mma_case_free(&c);
    return bad;
}

static void n64_vs_n16_sm90_logic(int on_gpu)
{
    cr_expect_eq(n64_vs_n16_wgmma(on_gpu, MAJOR_K), 0, "K-major B: one N=64 wgmma must equal four N=16 sub-tiles");
    /* MN-major B sub-tiles start 32 B into the 128B swizzle atom; the model predicts they work (the
     * same XOR-on-address rule as the confirmed +32 B K advance) but this case is not yet confirmed
     * on hardware: reported, asserted only on the emulator */
    const int mn_bad = n64_vs_n16_wgmma(on_gpu, MAJOR_MN);
    if (!on_gpu) cr_expect_eq(mn_bad, 0);
}

Test(footgun, fg03_n64_equals_four_n16_subtiles_wgmma_emu) { n64_vs_n16_sm90_logic(0); }

Test(footgun, fg03_n64_equals_four_n16_subtiles_sm90, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    n64_vs_n16_sm90_logic(1);
}
