/* Conformance of the host model with a real wgmma on the H200: for every swizzle mode x K/MN-major
 * x N in {8, 16, 64, 128, 256} (bf16, several K steps, so the K-advance rule is exercised too) and
 * for e4m3 (K-major only), the SMEM image laid out by the model is multiplied by the hardware and
 * by the emulator. Integer inputs: the two must agree bit for bit, and every register the hardware
 * wrote must hold D[row][col] of the plain loop at the (row, col) the fragment map assigns it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "kernels/wgmma_conf.h"
#include "model/frag_map.h"
#include "model/mma_emu.h"
#include "mma_fixture.h"
#include "test_util.h"

static const swizzle_mode SWZ[4] = {SWZ_NONE, SWZ_32B, SWZ_64B, SWZ_128B};
static const int NS[5] = {8, 16, 64, 128, 256};

/* Returns the number of mismatching registers (0 = conformant); prints the first few. */
static int run_case(mma_case *c)
{
    char name[96];
    mma_case_name(c, name, sizeof name);
    int ksteps = c->k / c->kstep;
    uint64_t descs[16];
    for (int s = 0; s < ksteps; s++) {
        descs[2 * s] = mma_case_desc_sm90(c, 0, s * c->kstep);
        descs[2 * s + 1] = mma_case_desc_sm90(c, 1, s * c->kstep);
    }
    int regs = c->n / 2;
    float *hw = malloc(sizeof(float) * 128 * (size_t)regs), *emu = calloc(128 * (size_t)regs, sizeof(float));
    int fp8 = c->kind == MMA_KIND_F8F6F4;
    int rc = wgmma_conf_launch(c->n, c->ta.major, c->tb.major, fp8, c->img, c->bytes, descs, ksteps, hw);
    cr_assert_eq(rc, 0, "%s: launch failed (%d)", name, rc);
    smem_image img = {c->img, 0, c->bytes};
    for (int s = 0; s < ksteps; s++) {
        emu_status st = {0};
        cr_assert_eq(emu_wgmma_ss(emu, &img, descs[2 * s], descs[2 * s + 1], c->n, c->kind, c->fmt, c->ta.major,
                                  c->tb.major, s > 0, &st), EMU_OK, "%s: %s", name, st.msg);
    }
    int bad = 0;
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < regs; i++) {
            int row, col;
            wgmma_acc_map(t, i, &row, &col);
            float h = hw[t * regs + i], e = emu[t * regs + i];
            double ref = c->ref[row * c->n + col];
            if (f32_bits(h) != f32_bits(e) || (double)h != ref) {
                if (bad++ < 4)
                    fprintf(stderr, "%s: thread %d reg %d (row %d col %d): hardware %g emulator %g loop %g\n",
                            name, t, i, row, col, h, e, ref);
            }
        }
    free(hw);
    free(emu);
    return bad;
}

Test(wgmma_conformance, bf16_every_swizzle_major_and_n, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    int cases = 0, failed = 0;
    for (int s = 0; s < 4; s++)
        for (int m = 0; m < 2; m++)
            for (int ni = 0; ni < 5; ni++) {
                mma_case c;
                mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, NS[ni], 64, (operand_major)m, (operand_major)m, SWZ[s],
                              100 + (uint64_t)cases);
                failed += run_case(&c) != 0;
                cases++;
                mma_case_free(&c);
            }
    fprintf(stderr, "wgmma conformance (bf16, A and B same major): %d cases, %d disagree\n", cases, failed);
    cr_expect_eq(failed, 0, "%d of %d bf16 cases disagree", failed, cases);
}

Test(wgmma_conformance, bf16_mixed_majors, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    int cases = 0, failed = 0;
    for (int s = 0; s < 4; s++)
        for (int ma = 0; ma < 2; ma++) {
            mma_case c;
            /* A K-major with B MN-major is the PV case (P x V, V row-major [kv][d]) */
            mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, 64, 64, (operand_major)ma, (operand_major)!ma, SWZ[s],
                          200 + (uint64_t)cases);
            failed += run_case(&c) != 0;
            cases++;
            mma_case_free(&c);
        }
    fprintf(stderr, "wgmma conformance (bf16, mixed majors): %d cases, %d disagree\n", cases, failed);
    cr_expect_eq(failed, 0);
}

Test(wgmma_conformance, e4m3_k_major_every_swizzle_and_n, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    int cases = 0, failed = 0;
    for (int s = 0; s < 4; s++)
        for (int ni = 0; ni < 5; ni++) {
            mma_case c;
            mma_case_make(&c, MMA_KIND_F8F6F4, FMT_E4M3, 64, NS[ni], 64, MAJOR_K, MAJOR_K, SWZ[s], 300 + (uint64_t)cases);
            failed += run_case(&c) != 0;
            cases++;
            mma_case_free(&c);
        }
    fprintf(stderr, "wgmma conformance (e4m3): %d cases, %d disagree\n", cases, failed);
    cr_expect_eq(failed, 0);
}
