/* FG04 — V passed as a K-major B operand; O = P V needs V MN-major.
 *
 * Symptom: O = P V is garbage while Q K^T is right (seed 003 Bug 1 and footgun 2: V from a default
 *   row-major (seq, head_dim) tensor, described with K's major mode; the seed's test with the wrong
 *   major reported cosine -0.02).
 * Cause: the B operand of O = P V is V with N = d and K = kv. V stored as V[kv][d] is contiguous
 *   along N: MN-major. Described as K-major, the tensor core reads element (n, k) from row n,
 *   column k of the stored tile, i.e. V's transpose; when d < kv the K steps past d also read
 *   bytes that are not part of the tile at all.
 * Fix: sm100: idesc bit 16 = 1 (idesc_bf16_f32(128, d, 0, 1)) with the MN-major descriptor of the
 *   MN-major tile (stages/B_pv/pv.h pv_v_tile, pv_sm100.cu step 5); sm90: the transpose-B
 *   immediate = 1 with the same tile (pv_sm90.cu step 5).
 * Stage: B. Levels:
 *   emu   stage B's emu data flow with PV_FAULT_V_KMAJOR (V filled and described K-major) against
 *         the fixed flow; and the wgmma test below with the emulator standing in for the hardware.
 *         Both are reproductions of the model.
 *   sm90  a real wgmma (tests/gpu/kernels/wgmma_conf.cu) on an SMEM image holding V in the MN-major
 *         layout, run with transpose-B = 0 (wrong) and 1 (fixed); skips without an sm_90 GPU.
 *   sm100 no B200 here: the stage B kernel with the fix is compiled only.
 * Notes: notes/footguns.md#fg04 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "host/init.h"
#include "pv_fixture.h"
#include "test_util.h"
#include "wgmma_run.h"

Test(footgun, fg04_wrong_v_kmajor_then_fixed_emu)
{
    const int ds[2] = {64, 128};
    for (int i = 0; i < 2; i++) {
        const int d = ds[i];
        pv_problem pp;
        pv_problem_make(&pp, 1, 1, 128, 256, d, 40 + (uint64_t)d);
        double *ref = malloc(sizeof(double) * pp.nq);
        pv_problem_reference(&pp, NULL, ref);
        char err[320];

        /* wrong: V filled and described K-major (idesc bit 16 = 0) */
        cr_assert_eq(pv_problem_run(&pp, PV_FAULT_V_KMAJOR, err, sizeof err), 0, "%s", err);
        const double c = cosine_f32(pp.p.o, ref, pp.nq);
        const size_t bad = count_mismatch(pp.p.o, ref, pp.nq);
        fprintf(stderr, "FG04 emu stage B, D=%d, V K-major: cosine %.4f, %zu of %zu elements differ\n", d, c, bad, pp.nq);
        cr_expect(c < 0.5, "V K-major, D=%d: cosine %.4f should be far from 1", d, c);
        cr_expect_gt(bad, pp.nq / 2);

        /* fixed: V MN-major, idesc bit 16 = 1: exact */
        cr_assert_eq(pv_problem_run(&pp, 0, err, sizeof err), 0, "%s", err);
        cr_expect_eq(count_mismatch(pp.p.o, ref, pp.nq), 0, "fixed flow, D=%d must be exact", d);
        cr_expect_eq(count_bits(pp.p.o, pp.nq, POISON_F32), 0);
        free(ref);
        pv_problem_free(&pp);
    }
}

/* P [64 x 128] K-major SW128 times V [128 kv x d] MN-major SW128 (as stored: V[kv][d]), eight k16
 * steps with the MN-major descriptors; the only difference between the runs is transpose-B. */
static void trans_b_wrong_then_fixed(int on_gpu)
{
    const int ds[2] = {64, 128};
    for (int i = 0; i < 2; i++) {
        const int d = ds[i], ksteps = 8;
        mma_case c;
        mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, d, 128, MAJOR_K, MAJOR_MN, SWZ_128B, 400 + (uint64_t)d);
        /* read K-major, the last K steps of the D = 64 tile run 6 KB past it: keep that inside */
        mma_case_pad(&c, 16384);
        uint64_t descs[16];
        for (int s = 0; s < ksteps; s++) {
            descs[2 * s] = mma_case_desc_sm90(&c, 0, 16 * s);
            descs[2 * s + 1] = mma_case_desc_sm90(&c, 1, 16 * s);
        }
        const size_t regs = 128 * (size_t)d / 2;
        float *out = malloc(sizeof(float) * regs), *emu = malloc(sizeof(float) * regs);
        double *got = malloc(sizeof(double) * 64 * (size_t)d);
        for (int tb = 0; tb < 2; tb++) {
            wgmma_conf_opts o = {d, 0, tb, NULL, 0.0f, 0};
            cr_assert_eq(wgmma_run(0, &o, c.img, c.bytes, descs, ksteps, emu), 0);
            if (on_gpu) cr_assert_eq(wgmma_run(1, &o, c.img, c.bytes, descs, ksteps, out), 0, "launch failed");
            else memcpy(out, emu, sizeof(float) * regs);
            wgmma_acc_to_matrix(out, d, got);
            const double cs = cosine_f64(got, c.ref, 64 * (size_t)d);
            const int exact = memcmp(got, c.ref, sizeof(double) * 64 * (size_t)d) == 0;
            size_t same = 0;
            for (size_t r = 0; r < regs; r++) same += f32_bits(out[r]) == f32_bits(emu[r]);
            fprintf(stderr, "FG04 %s wgmma m64n%dk16 x8, V MN-major, transpose-B=%d: cosine %.4f, %s; "
                    "%zu of %zu registers equal the emulator's\n", on_gpu ? "sm90" : "emu", d, tb, cs,
                    exact ? "exact" : "not exact", same, regs);
            if (tb == 0) {
                cr_expect(!exact && cs < 0.5, "transpose-B=0 on an MN-major V, N=%d: cosine %.4f should be far from 1", d, cs);
            } else {
                cr_expect(exact, "transpose-B=1, N=%d must equal the plain loop exactly", d);
                cr_expect_eq(same, regs, "transpose-B=1, N=%d: hardware and emulator must agree bit for bit", d);
            }
        }
        free(out); free(emu); free(got);
        mma_case_free(&c);
    }
}

Test(footgun, fg04_wrong_trans_b_then_fixed_wgmma_emu) { trans_b_wrong_then_fixed(0); }

Test(footgun, fg04_wrong_trans_b_then_fixed_sm90, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    trans_b_wrong_then_fixed(1);
}
