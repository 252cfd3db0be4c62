/* FG06 — P V right for a 128x128 output, garbage (cosine ~0.01) for 128x64 (seed 003 Bug 4).
 *
 * Symptom (seed): with the CuTeDSL kernel, O = P V with V = I or random V was right for a
 *   (128, 128) output (cosine 1.0 / 0.999999) and garbage for a (128, 64) output, V MN-major
 *   (64, 128): cosine ~0.01. The seed lists the root cause as unknown.
 * Cause: UNCONFIRMED. This file reproduces the two candidate mechanisms of notes/hardware.md
 *   section 3.7 that live in descriptors, for output widths 64 and 128, and measures them:
 *   (a) the MN-major V descriptor advanced by the K-major rule, +32 B per k16 step instead of
 *       +2048 B (16 K-rows x 128 B): the start moves 16 elements along N and never along K;
 *   (b) a K-major P tile in SMEM whose K = 128 keys spans two 128B swizzle atoms, advanced
 *       linearly (+32 B per step): steps 4-7 walk into the next rows of the first atom instead of
 *       jumping to the second atom (smem_tile_k_advance gives the jump).
 *   The cosines are printed and recorded in notes/footguns.md#fg06. Each candidate breaks both
 *   widths here; neither gives the seed's pattern (128x128 right and 128x64 ~0.01), which the test
 *   asserts by measuring, so the seed's own cause remains open.
 * Fix: the descriptors come from the same smem_tile as the fill: smem_tile_desc_sm100/_sm90(&tile,
 *   base, 0, k) advances MN-major tiles by whole 8-K-row groups and K-major tiles atom by atom
 *   (common/model/canonical.h smem_tile_k_advance; stages/B_pv/pv_sm100.cu and pv_sm90.cu step 5).
 * Stage: B. Levels:
 *   emu   (a) stage B's emu data flow with PV_FAULT_V_ADVANCE_32B at D = 64 and 128; (b) the
 *         tcgen05 emulator, M = 128, P [128 x 128] in SMEM (SS form: stage B keeps P in TMEM, so
 *         (b) is shown at MMA level). Reproductions of the model.
 *   sm90  both candidates on a real wgmma (M = 64, N = 64 and 128) through the conformance kernel
 *         (tests/gpu/kernels/wgmma_conf.cu); skips without an sm_90 GPU (the same test runs here
 *         on the emulator and must give the numbers the notes record).
 *   sm100 no B200 here: nothing of the seed's kernel is reproduced on Blackwell.
 * Notes: notes/footguns.md#fg06 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "model/mma_emu.h"
#include "pv_fixture.h"
#include "test_util.h"
#include "wgmma_run.h"

/* The seed's exact pattern: the 128-wide output right, the 64-wide one garbage. */
static int seed_pattern(double cos64, double cos128) { return cos128 > 0.9999 && cos64 < 0.1; }

static void report(const char *level, const char *cand, double cos64, double cos128)
{
    fprintf(stderr, "FG06 %s, candidate %s: cosine %.4f at output width 64, %.4f at width 128: %s\n",
            level, cand, cos64, cos128,
            seed_pattern(cos64, cos128) ? "REPRODUCES the seed's pattern" : "both widths broken, not the seed's pattern");
}

Test(footgun, fg06_wrong_v_advance_32b_then_fixed_emu_stage)
{
    double cs[2];
    const int ds[2] = {64, 128};
    for (int i = 0; i < 2; i++) {
        pv_problem pp;
        pv_problem_make(&pp, 1, 1, 128, 256, ds[i], 60 + (uint64_t)i);
        double *ref = malloc(sizeof(double) * pp.nq);
        pv_problem_reference(&pp, NULL, ref);
        char err[320];
        cr_assert_eq(pv_problem_run(&pp, PV_FAULT_V_ADVANCE_32B, err, sizeof err), 0, "%s", err);
        cs[i] = cosine_f32(pp.p.o, ref, pp.nq);
        cr_expect(cs[i] < 0.99, "V advanced +32 B per k16 step, D=%d: cosine %.4f must show the break", ds[i], cs[i]);
        cr_assert_eq(pv_problem_run(&pp, 0, err, sizeof err), 0, "%s", err);
        cr_expect_eq(count_mismatch(pp.p.o, ref, pp.nq), 0, "fixed (+2048 B per k16 step), D=%d must be exact", ds[i]);
        free(ref);
        pv_problem_free(&pp);
    }
    report("emu stage B (128 rows)", "(a) V MN-major advanced +32 B", cs[0], cs[1]);
    cr_expect(!seed_pattern(cs[0], cs[1]), "candidate (a) does not reproduce the seed's exact pattern on the model");
}

/* (b) on the tcgen05 emulator: P [128 x 128] K-major SW128 x V MN-major [128 kv x d]. */
static double p_atom_tcgen05(int d, int linear)
{
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 128, d, 128, MAJOR_K, MAJOR_MN, SWZ_128B, 600 + (uint64_t)d);
    smem_image im = {c.img, 0, c.bytes};
    tmem_model *tm = tmem_model_new();
    uint32_t t;
    cr_assert_eq(tmem_alloc(tm, 128, &t), TMEM_OK);
    for (int s = 0; s < 8; s++) {
        emu_status st = {0};
        const uint64_t a = linear ? smem_desc_advance(mma_case_desc_sm100(&c, 0, 0), 32u * (uint32_t)s)
                                  : mma_case_desc_sm100(&c, 0, 16 * s);
        cr_assert_eq(emu_tcgen05_mma(tm, &im, t, 0, 0, a, mma_case_desc_sm100(&c, 1, 16 * s),
                                     idesc_bf16_f32(128, (unsigned)d, 0, 1), MMA_KIND_F16, s > 0, &st), EMU_OK, "%s", st.msg);
    }
    double *got = malloc(sizeof(double) * 128 * (size_t)d);
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < d; j++) {
            float v;
            memcpy(&v, &tm->cell[i][j], 4);
            got[i * d + j] = v;
        }
    const double cs = cosine_f64(got, c.ref, 128 * (size_t)d);
    const int exact = memcmp(got, c.ref, sizeof(double) * 128 * (size_t)d) == 0;
    if (!linear) cr_expect(exact, "atom-aware advance (smem_tile_k_advance), N=%d must be exact", d);
    free(got);
    tmem_model_free(tm);
    mma_case_free(&c);
    return cs;
}

Test(footgun, fg06_wrong_p_linear_advance_across_atoms_then_fixed_emu)
{
    const double c64 = p_atom_tcgen05(64, 1), c128 = p_atom_tcgen05(128, 1);
    p_atom_tcgen05(64, 0);
    p_atom_tcgen05(128, 0);
    report("emu tcgen05 M=128", "(b) P K-major linear +32 B across atoms", c64, c128);
    cr_expect(c64 < 0.99 && c128 < 0.99, "a linear advance across the atom breaks both widths: %.4f, %.4f", c64, c128);
    cr_expect(!seed_pattern(c64, c128), "candidate (b) does not reproduce the seed's exact pattern on the model");
}

/* Both candidates on wgmma (M = 64): cand 'a' = V advanced +32 B, 'b' = P advanced linearly; fixed
 * = both from smem_tile_desc_sm90. Returns the cosine against the plain loop; *exact set. On the
 * GPU the emulator runs the same descriptors too and the registers that agree are reported (the
 * broken start addresses are not covered by the conformance suite). */
static double wgmma_candidate(int on_gpu, char cand, int wrong, int d, int *exact)
{
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, d, 128, MAJOR_K, MAJOR_MN, SWZ_128B, 650 + (uint64_t)d);
    uint64_t descs[16];
    for (int s = 0; s < 8; s++) {
        descs[2 * s] = mma_case_desc_sm90(&c, 0, 16 * s);
        descs[2 * s + 1] = mma_case_desc_sm90(&c, 1, 16 * s);
        if (wrong && cand == 'a') descs[2 * s + 1] = smem_desc_advance(mma_case_desc_sm90(&c, 1, 0), 32u * (uint32_t)s);
        if (wrong && cand == 'b') descs[2 * s] = smem_desc_advance(mma_case_desc_sm90(&c, 0, 0), 32u * (uint32_t)s);
    }
    const size_t regs = 128 * (size_t)d / 2;
    float *out = malloc(sizeof(float) * regs), *emu = malloc(sizeof(float) * regs);
    double *got = malloc(sizeof(double) * 64 * (size_t)d);
    wgmma_conf_opts o = {d, 0, 1, NULL, 0.0f, 0};
    cr_assert_eq(wgmma_run(on_gpu, &o, c.img, c.bytes, descs, 8, out), 0, "launch failed");
    if (on_gpu && wrong) {
        cr_assert_eq(wgmma_run(0, &o, c.img, c.bytes, descs, 8, emu), 0);
        size_t same = 0;
        for (size_t r = 0; r < regs; r++) same += f32_bits(out[r]) == f32_bits(emu[r]);
        fprintf(stderr, "FG06 sm90 candidate (%c), N=%d: %zu of %zu registers equal the emulator's prediction\n", cand,
                d, same, regs);
    }
    wgmma_acc_to_matrix(out, d, got);
    const double cs = cosine_f64(got, c.ref, 64 * (size_t)d);
    *exact = memcmp(got, c.ref, sizeof(double) * 64 * (size_t)d) == 0;
    free(out); free(emu); free(got);
    mma_case_free(&c);
    return cs;
}

static void candidates_wgmma(int on_gpu)
{
    const char *lvl = on_gpu ? "sm90 wgmma M=64" : "emu wgmma M=64";
    const char cands[2] = {'a', 'b'};
    const char *names[2] = {"(a) V MN-major advanced +32 B", "(b) P K-major linear +32 B across atoms"};
    for (int i = 0; i < 2; i++) {
        int e64, e128;
        const double c64 = wgmma_candidate(on_gpu, cands[i], 1, 64, &e64);
        const double c128 = wgmma_candidate(on_gpu, cands[i], 1, 128, &e128);
        report(lvl, names[i], c64, c128);
        cr_expect(c64 < 0.99 && c128 < 0.99, "%s: both widths must break (%.4f, %.4f)", names[i], c64, c128);
        cr_expect(!seed_pattern(c64, c128), "%s does not reproduce the seed's exact pattern", names[i]);
        wgmma_candidate(on_gpu, cands[i], 0, 64, &e64);
        wgmma_candidate(on_gpu, cands[i], 0, 128, &e128);
        cr_expect(e64 && e128, "fixed descriptors must be exact at N=64 and N=128");
    }
}

Test(footgun, fg06_wrong_descriptor_advances_then_fixed_wgmma_emu) { candidates_wgmma(0); }

Test(footgun, fg06_wrong_descriptor_advances_then_fixed_sm90, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    candidates_wgmma(1);
}
