/* FG07 — a 16-bit TMEM store, and the bf16x2 pack order.
 *
 * Symptom: (1) the seed's St32x32bOp with a BFloat16 element type crashed with an illegal memory
 *   access (seed 003 footgun 1); (2) P packed with its two bf16 halves the wrong way round gives a
 *   wrong O without any error.
 * Cause: (1) tcgen05.ld/st move 32-bit words only (PTX 9.7.16.8); 16-bit data travels as two
 *   values per 32-bit word, and the TS MMA's A operand wants exactly that packing
 *   (notes/hardware.md section 4.4). (2) `cvt.rn.bf16x2.f32 d, a, b` puts a in the UPPER half and b in the
 *   lower (PTX cvt); a packed MMA operand holds the lower-k element in the LOW half, so the right
 *   call is cvt(odd, even); the intuitive cvt(even, odd) swaps every pair of keys.
 * Fix: store 32-bit words of bf16 pairs (stages/B_pv/pv_sm100.cu step 4, tcgen05.st 32x32b.x16);
 *   pack with pack_bf16x2(even, odd) (common/device/bf16_pack.cuh), which issues cvt(odd, even);
 *   the host model mirrors it in model/frag_map.h pack_bf16_pair.
 * Stage: B. Levels:
 *   emu   stage B's emu flow with PV_FAULT_STORE_16BIT (the TMEM model refuses the store with
 *         TMEM_ERR_ELEM_WIDTH: on hardware the seed saw a crash) and PV_FAULT_PACK_SWAPPED (O equals
 *         P V with every pair of keys swapped); reproductions of the model.
 *   sm90  (i) tests/gpu/kernels/pack_order.cu executes `cvt.rn.bf16x2.f32 d, a, b` and the helper on
 *         the hardware: a must land in the upper half; (ii) the RS form of wgmma (A from registers,
 *         wgmma_conf_launch_opts) with P packed right (exact, bit-exact with emu_wgmma_rs) and
 *         swapped (wrong). Skip without an sm_90 GPU; the same tests run here on the model.
 *         The 16-bit store has no sm90 analogue (no TMEM).
 *   sm100 no B200 here: the stage B kernel is compiled only.
 * Notes: notes/footguns.md#fg07 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/kernels/pack_order.h"
#include "host/bf16.h"
#include "host/init.h"
#include "model/frag_map.h"
#include "pv_fixture.h"
#include "test_util.h"
#include "wgmma_run.h"

Test(footgun, fg07_wrong_16bit_tmem_store_then_fixed_emu)
{
    pv_problem pp;
    pv_problem_make(&pp, 1, 1, 128, 256, 64, 70);
    double *ref = malloc(sizeof(double) * pp.nq);
    pv_problem_reference(&pp, NULL, ref);
    char err[320];

    /* wrong: the store asked to move 16-bit elements */
    cr_expect_eq(pv_problem_run(&pp, PV_FAULT_STORE_16BIT, err, sizeof err), 1, "the model must refuse the store");
    fprintf(stderr, "FG07 emu stage B, 16-bit tcgen05.st: %s\n", err);
    cr_expect(strstr(err, "TMEM_ERR_ELEM_WIDTH") != NULL, "the error is named: %s", err);
    cr_expect(strstr(err, "16-bit") != NULL, "and says what was wrong: %s", err);
    cr_expect_eq(count_bits(pp.p.o, pp.nq, POISON_F32), pp.nq, "the run stopped before O was written");

    /* fixed: 32-bit words holding bf16 pairs */
    cr_assert_eq(pv_problem_run(&pp, 0, err, sizeof err), 0, "%s", err);
    cr_expect_eq(count_mismatch(pp.p.o, ref, pp.nq), 0, "fixed flow must be exact");
    free(ref);
    pv_problem_free(&pp);
}

Test(footgun, fg07_wrong_pack_order_then_fixed_emu)
{
    const int d = 64, skv = 256;
    pv_problem pp;
    pv_problem_make(&pp, 1, 1, 128, skv, d, 71);
    double *ref = malloc(sizeof(double) * pp.nq), *swapped = malloc(sizeof(double) * pp.nq);
    int key_of[256];
    for (int j = 0; j < skv; j++) key_of[j] = j ^ 1; /* V row j meets P's key j^1 */
    pv_problem_reference(&pp, NULL, ref);
    pv_problem_reference(&pp, key_of, swapped);
    char err[320];

    /* wrong: cvt(even, odd): every pair of keys swapped in P */
    cr_assert_eq(pv_problem_run(&pp, PV_FAULT_PACK_SWAPPED, err, sizeof err), 0, "%s", err);
    const double c = cosine_f32(pp.p.o, ref, pp.nq);
    const size_t as_swapped = pp.nq - count_mismatch(pp.p.o, swapped, pp.nq);
    fprintf(stderr, "FG07 emu stage B, bf16 pairs packed the wrong way round: cosine %.4f; %zu of %zu elements equal "
            "P V with keys 2i and 2i+1 swapped\n", c, as_swapped, pp.nq);
    cr_expect(c < 0.5, "cosine %.4f should be far from 1", c);
    cr_expect_eq(as_swapped, pp.nq, "the wrong O is exactly P V with every key pair swapped");

    /* fixed: cvt(odd, even) */
    cr_assert_eq(pv_problem_run(&pp, 0, err, sizeof err), 0, "%s", err);
    cr_expect_eq(count_mismatch(pp.p.o, ref, pp.nq), 0, "fixed flow must be exact");
    free(ref); free(swapped);
    pv_problem_free(&pp);
}

/* (i) the cvt operand rule. Finite values only, including round-to-nearest-even ties. */
static void cvt_order(int on_gpu)
{
    const float a[6] = {1.0f, 3.5f, 1.00390625f, 1.01171875f, -65504.0f, 0.15625f};
    const float b[6] = {-2.0f, 0.25f, -7.0f, 96.0f, 1.0f / 1024.0f, 448.0f};
    uint32_t raw[6], helper[6];
    if (on_gpu) {
        cr_assert_eq(pack_order_launch(a, b, 6, raw, helper), 0, "launch failed");
    } else {
        for (int i = 0; i < 6; i++) {
            raw[i] = pack_bf16x2_cvt_order(f32_to_bf16(a[i]), f32_to_bf16(b[i]));
            helper[i] = pack_bf16_pair(f32_to_bf16(a[i]), f32_to_bf16(b[i]));
        }
    }
    for (int i = 0; i < 6; i++) {
        const uint16_t ha = f32_to_bf16(a[i]), hb = f32_to_bf16(b[i]);
        fprintf(stderr, "FG07 %s cvt.rn.bf16x2.f32 d, a=%g (0x%04X), b=%g (0x%04X) -> d = 0x%08X; pack_bf16x2(even=a, "
                "odd=b) -> 0x%08X\n", on_gpu ? "sm90" : "emu", (double)a[i], ha, (double)b[i], hb, raw[i], helper[i]);
        /* wrong reading: cvt(even, odd) would leave the even element a in the low half. It does not. */
        cr_expect_eq(raw[i] >> 16, ha, "a lands in the UPPER half");
        cr_expect_eq(raw[i] & 0xFFFFu, hb, "b lands in the lower half");
        cr_expect_neq(raw[i] & 0xFFFFu, ha, "so cvt(even, odd) puts the odd element where the even one belongs");
        /* fixed: the helper passes (odd, even) */
        cr_expect_eq(helper[i] & 0xFFFFu, ha, "pack_bf16x2(even, odd): even element in the low half");
        cr_expect_eq(helper[i] >> 16, hb, "odd element in the upper half");
    }
}

Test(footgun, fg07_wrong_cvt_operand_order_then_fixed_model) { cvt_order(0); }

Test(footgun, fg07_wrong_cvt_operand_order_then_fixed_sm90, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    cvt_order(1);
}

/* (ii) wgmma RS: P [64 x 128] from registers (wgmma_a_map), V [128 x 64] MN-major SW128. */
static void rs_pack(int on_gpu)
{
    const int d = 64, k = 128, ksteps = 8;
    const size_t regs = 128 * (size_t)d / 2, nn = 64 * (size_t)d;
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, d, k, MAJOR_K, MAJOR_MN, SWZ_128B, 77);
    uint64_t descs[16];
    for (int s = 0; s < ksteps; s++) {
        descs[2 * s] = 0; /* A comes from registers */
        descs[2 * s + 1] = mma_case_desc_sm90(&c, 1, 16 * s);
    }
    double *swapped = calloc(nn, sizeof(double)), *got = malloc(sizeof(double) * nn);
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < d; j++)
            for (int q = 0; q < k; q++) swapped[i * d + j] += c.a[i * k + (q ^ 1)] * c.b[j * k + q];
    uint32_t *a = malloc(sizeof(uint32_t) * 4 * 128 * (size_t)ksteps);
    float *out = malloc(sizeof(float) * regs), *emu = malloc(sizeof(float) * regs);
    for (int swap = 1; swap >= 0; swap--) {
        wgmma_a_fragments(c.a, k, swap, a);
        wgmma_conf_opts o = {d, 0, 1, a, 0.0f, 0};
        cr_assert_eq(wgmma_run(0, &o, c.img, c.bytes, descs, ksteps, emu), 0);
        if (on_gpu) cr_assert_eq(wgmma_run(1, &o, c.img, c.bytes, descs, ksteps, out), 0, "launch failed");
        else memcpy(out, emu, sizeof(float) * regs);
        wgmma_acc_to_matrix(out, d, got);
        size_t same = 0, eq_ref = 0, eq_swapped = 0;
        for (size_t r = 0; r < regs; r++) same += f32_bits(out[r]) == f32_bits(emu[r]);
        for (size_t i = 0; i < nn; i++) {
            eq_ref += got[i] == c.ref[i];
            eq_swapped += got[i] == swapped[i];
        }
        const double cs = cosine_f64(got, c.ref, nn);
        fprintf(stderr, "FG07 %s wgmma RS m64n64k16 x8, pairs %s: cosine %.4f, %zu of %zu == loop, %zu == loop with "
                "pairs swapped, %zu of %zu registers equal emu_wgmma_rs\n", on_gpu ? "sm90" : "emu",
                swap ? "swapped (cvt(even, odd))" : "right (cvt(odd, even))", cs, eq_ref, nn, eq_swapped, same, regs);
        if (swap) {
            cr_expect(cs < 0.5, "swapped pairs: cosine %.4f should be far from 1", cs);
            cr_expect_eq(eq_swapped, nn, "swapped pairs compute P V with keys 2i and 2i+1 exchanged");
        } else {
            cr_expect_eq(eq_ref, nn, "right packing must equal the plain loop exactly");
            cr_expect_eq(same, regs, "and the emulator bit for bit");
        }
    }
    free(a); free(out); free(emu); free(swapped); free(got);
    mma_case_free(&c);
}

Test(footgun, fg07_wrong_rs_pack_order_then_fixed_wgmma_emu) { rs_pack(0); }

Test(footgun, fg07_wrong_rs_pack_order_then_fixed_sm90, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    rs_pack(1);
}
