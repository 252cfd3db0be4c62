/* FG05 — the first P V MMA issued with accumulate on.
 *
 * Symptom: O = P V + whatever the accumulator held before (seed 003 Bug 3 and footgun 7:
 *   "ACCUMULATE=True on the first PV adds uninitialized TMEM").
 * Cause: the enable-input-d predicate (tcgen05.mma) / scale-d (wgmma) on means D = A B + D. Freshly
 *   allocated TMEM is not zeroed (nothing in PTX says it is) and nothing clears it between CTAs, so
 *   the first MMA of a new accumulator tile adds the previous CTA's O, or garbage (notes/hardware.md
 *   section 5.5). On Hopper the same happens with accumulator registers that were never zeroed.
 * Fix: accumulate off for the first P V MMA of each Q tile, on for every later one: `j > 0 || k > 0`
 *   in stages/B_pv/pv_sm100.cu step 5 (tcgen05.mma predicate) and pv_sm90.cu step 5 (scale-d).
 * Stage: B. Levels:
 *   emu   stage B's emu data flow with PV_FAULT_ACCUMULATE_FIRST; the TMEM model starts as a NaN
 *         poison pattern and keeps its cells from one CTA to the next, as one SM's TMEM does. And a
 *         two-CTA sequence on the TMEM model with finite stale values, where the error can be read
 *         off exactly. Reproductions of the model.
 *   sm90  a real wgmma (tests/gpu/kernels/wgmma_conf.cu, wgmma_conf_launch_opts) whose accumulator
 *         registers start at a known value instead of 0, with scale-d on (wrong) or off (fixed) for
 *         the first MMA; skips without an sm_90 GPU (the same test runs here on the emulator).
 *   sm100 no B200 here: the stage B kernel with the fix is compiled only.
 * Notes: notes/footguns.md#fg05 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/mma_emu.h"
#include "pv_fixture.h"
#include "test_util.h"
#include "wgmma_run.h"

Test(footgun, fg05_wrong_accumulate_first_then_fixed_emu_stage)
{
    /* Sq = 256: two CTAs (two Q tiles) run one after the other on the same TMEM model */
    pv_problem pp;
    pv_problem_make(&pp, 1, 1, 256, 256, 64, 50);
    double *ref = malloc(sizeof(double) * pp.nq);
    pv_problem_reference(&pp, NULL, ref);
    char err[320];

    /* wrong: CTA 0 adds the poison (a NaN pattern) of never-written TMEM; CTA 1 adds CTA 0's stale
     * O, which is by then NaN as well: every element of O is NaN */
    cr_assert_eq(pv_problem_run(&pp, PV_FAULT_ACCUMULATE_FIRST, err, sizeof err), 0, "%s", err);
    const size_t half = pp.nq / 2, nan0 = count_nan(pp.p.o, half), nan1 = count_nan(pp.p.o + half, half);
    fprintf(stderr, "FG05 emu stage B, accumulate on for the first PV: NaN in %zu of %zu (CTA 0) and %zu of %zu (CTA 1)\n",
            nan0, half, nan1, half);
    cr_expect_eq(nan0, half, "CTA 0 adds never-written TMEM (the model's NaN poison) to every element");
    cr_expect_eq(nan1, half, "CTA 1 adds CTA 0's stale O to every element");

    /* fixed: accumulate off for the first PV MMA */
    cr_assert_eq(pv_problem_run(&pp, 0, err, sizeof err), 0, "%s", err);
    cr_expect_eq(count_mismatch(pp.p.o, ref, pp.nq), 0, "fixed flow must be exact");
    free(ref);
    pv_problem_free(&pp);
}

/* O = P V for one 128-row tile on the sm100 emulator: P [128 x 128] K-major SW128 in SMEM, V
 * MN-major SW128, eight k16 MMAs into the TMEM columns at `base`; `first_acc` is the first MMA's
 * predicate. */
static void cta_pv(tmem_model *tm, uint32_t base, const mma_case *c, int first_acc)
{
    smem_image im = {c->img, 0, c->bytes};
    for (int k = 0; k < c->k; k += 16) {
        emu_status st = {0};
        cr_assert_eq(emu_tcgen05_mma(tm, &im, base, 0, 0, mma_case_desc_sm100(c, 0, k), mma_case_desc_sm100(c, 1, k),
                                     idesc_bf16_f32(128, (unsigned)c->n, 0, 1), MMA_KIND_F16, k > 0 || first_acc, &st),
                     EMU_OK, "%s", st.msg);
    }
}

static double cell(const tmem_model *tm, uint32_t base, int lane, int col)
{
    float v;
    memcpy(&v, &tm->cell[lane][tmem_addr_col(base) + col], 4);
    return v;
}

Test(footgun, fg05_wrong_stale_tmem_between_ctas_then_fixed_emu)
{
    const int d = 64;
    mma_case c0, c1;
    mma_case_make(&c0, MMA_KIND_F16, FMT_BF16, 128, d, 128, MAJOR_K, MAJOR_MN, SWZ_128B, 51);
    mma_case_make(&c1, MMA_KIND_F16, FMT_BF16, 128, d, 128, MAJOR_K, MAJOR_MN, SWZ_128B, 52);
    tmem_model *tm = tmem_model_new();
    uint32_t b0, b1, b2;

    /* CTA 0, correct: its O stays in TMEM after it frees the columns */
    cr_assert_eq(tmem_alloc(tm, 128, &b0), TMEM_OK);
    cta_pv(tm, b0, &c0, 0);
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < d; j++) cr_assert_eq(cell(tm, b0, i, j), c0.ref[i * d + j]);
    cr_assert_eq(tmem_dealloc(tm, b0, 128), TMEM_OK);
    cr_assert_eq(tmem_next_cta(tm), TMEM_OK);

    /* CTA 1, wrong: first MMA with accumulate on. Where it is given the same columns (the model's
     * allocator does that; the hardware's placement is unspecified), O1 = P1 V1 + O0 exactly. */
    cr_assert_eq(tmem_alloc(tm, 128, &b1), TMEM_OK);
    cr_assert_eq(b1, b0, "the model hands the next CTA the same columns");
    cta_pv(tm, b1, &c1, 1);
    size_t stale = 0, wrong = 0;
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < d; j++) {
            const double v = cell(tm, b1, i, j), r = c1.ref[i * d + j];
            wrong += v != r;
            stale += v - r == c0.ref[i * d + j];
        }
    fprintf(stderr, "FG05 emu, CTA 1 accumulate on: %zu of %d elements wrong; O1 - ref1 == O0 for %zu\n", wrong,
            128 * d, stale);
    cr_expect_gt(wrong, 128 * d / 2, "the stale O must show");
    cr_expect_eq(stale, 128 * d, "the difference is exactly the previous CTA's O");
    cr_assert_eq(tmem_dealloc(tm, b1, 128), TMEM_OK);
    cr_assert_eq(tmem_next_cta(tm), TMEM_OK);

    /* CTA 2, fixed: accumulate off first; the stale values in the same columns do not matter */
    cr_assert_eq(tmem_alloc(tm, 128, &b2), TMEM_OK);
    cta_pv(tm, b2, &c1, 0);
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < d; j++) cr_assert_eq(cell(tm, b2, i, j), c1.ref[i * d + j], "fixed: D(%d,%d)", i, j);
    tmem_model_free(tm);
    mma_case_free(&c0);
    mma_case_free(&c1);
}

/* Hopper: P [64 x 128] K-major x V MN-major (N = 64), accumulators starting at INIT instead of 0.
 * INIT + any partial sum is exact in f32 (|sum| <= 128 * 9). */
#define INIT 1000.25f

static void scale_d_wrong_then_fixed(int on_gpu)
{
    const int d = 64, ksteps = 8;
    const size_t regs = 128 * (size_t)d / 2, nn = 64 * (size_t)d;
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, d, 128, MAJOR_K, MAJOR_MN, SWZ_128B, 55);
    uint64_t descs[16];
    for (int s = 0; s < ksteps; s++) {
        descs[2 * s] = mma_case_desc_sm90(&c, 0, 16 * s);
        descs[2 * s + 1] = mma_case_desc_sm90(&c, 1, 16 * s);
    }
    float *out = malloc(sizeof(float) * regs);
    double *got = malloc(sizeof(double) * nn);
    for (int wrong = 1; wrong >= 0; wrong--) {
        wgmma_conf_opts o = {d, 0, 1, NULL, INIT, wrong};
        cr_assert_eq(wgmma_run(on_gpu, &o, c.img, c.bytes, descs, ksteps, out), 0, "launch failed");
        wgmma_acc_to_matrix(out, d, got);
        size_t eq_ref = 0, eq_ref_init = 0;
        for (size_t i = 0; i < nn; i++) {
            eq_ref += got[i] == c.ref[i];
            eq_ref_init += got[i] == c.ref[i] + (double)INIT;
        }
        fprintf(stderr, "FG05 %s wgmma, accumulators start at %g, scale-d %s for the first MMA: %zu of %zu == loop, "
                "%zu == loop + %g\n", on_gpu ? "sm90" : "emu", (double)INIT, wrong ? "on" : "off", eq_ref, nn,
                eq_ref_init, (double)INIT);
        if (wrong) cr_expect_eq(eq_ref_init, nn, "scale-d on first: every element must be the loop + the stale value");
        else cr_expect_eq(eq_ref, nn, "scale-d off first: the stale value must not matter");
    }
    free(out); free(got);
    mma_case_free(&c);
}

Test(footgun, fg05_wrong_scale_d_first_then_fixed_wgmma_emu) { scale_d_wrong_then_fixed(0); }

Test(footgun, fg05_wrong_scale_d_first_then_fixed_sm90, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    scale_d_wrong_then_fixed(1);
}
