/* FG20 — FP8 wgmma takes no transpose: V must be K-major.
 *
 * Symptom: O = P V with P and V in e4m3 on Hopper. V as stored (V[kv][d]) is MN-major for P V, and
 *   the bf16 path reads it through wgmma's transpose-B immediate (FG04). The FP8 forms have no
 *   transpose: both operands must be K-major. An MN-major V tile is then read as if it were
 *   K-major (wrong), and asking for the transpose is refused.
 * Cause: wgmma .e4m3/.e5m2 supports K-major A and B only (PTX ISA 9.7.15.5.1; notes/hardware.md
 *   section 6).
 * Fix: transpose V on its way into SMEM (K-major: V^T [d][kv]), then the FP8 wgmma is exact.
 *   (sm100's tcgen05.mma kind::f8f6f4 takes MN-major operands: the restriction is Hopper's.)
 * Stage: D. Level: host model (the wgmma emulator, integer e4m3 operands so every product and sum
 *   is exact); the H200 run comes with stage D's FP8 kernels.
 * Notes: notes/footguns.md#fg20 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/frag_map.h"
#include "model/mma_emu.h"
#include "mma_fixture.h"
#include "stage_run.h"
#include "test_util.h"

/* D = P V^T over one warpgroup (m64nNk32 per K step); returns the cosine with the plain loop and
 * the number of exact elements; rc is the emulator's verdict of the first step. */
static double run(mma_case *c, int trans_b, int *exact, emu_err *rc, char *msg, size_t len)
{
    float *acc = calloc(128 * (size_t)c->n / 2, sizeof(float));
    smem_image img = {c->img, 0, c->bytes};
    *rc = EMU_OK;
    for (int k = 0; k < c->k && *rc == EMU_OK; k += c->kstep) {
        emu_status st = {0};
        *rc = emu_wgmma_ss(acc, &img, mma_case_desc_sm90(c, 0, k), mma_case_desc_sm90(c, 1, k), c->n, c->kind, c->fmt, 0,
                           trans_b, k > 0, &st);
        if (*rc) snprintf(msg, len, "%.200s", st.msg);
    }
    double ab = 0, aa = 0, bb = 0;
    *exact = 0;
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < c->n / 2; i++) {
            int r, col;
            wgmma_acc_map(t, i, &r, &col);
            const double got = acc[t * (c->n / 2) + i], want = c->ref[r * c->n + col];
            ab += got * want; aa += got * got; bb += want * want;
            *exact += got == want;
        }
    free(acc);
    return aa > 0 ? ab / sqrt(aa * bb) : 0.0;
}

Test(footgun, fg20_fp8_v_mn_major_then_k_major)
{
    /* P [64 x 128 kv] e4m3 (A, K-major), V [d = 64 x 128 kv] as B: MN-major as stored, or K-major */
    mma_case mn, km;
    cr_assert_eq(mma_case_make(&mn, MMA_KIND_F8F6F4, FMT_E4M3, 64, 64, 128, MAJOR_K, MAJOR_MN, SWZ_128B, 20), 0);
    cr_assert_eq(mma_case_make(&km, MMA_KIND_F8F6F4, FMT_E4M3, 64, 64, 128, MAJOR_K, MAJOR_K, SWZ_128B, 20), 0);
    int exact;
    emu_err rc;
    char msg[256] = "";
    const int n = 64 * 64;
    run(&mn, 1, &exact, &rc, msg, sizeof msg);
    fprintf(stderr, "FG20 broken (V MN-major with the transpose asked for, model): refused: %s\n", msg);
    cr_expect_eq(rc, EMU_ERR_IDESC, "the FP8 form has no transpose");
    msg[0] = '\0';
    double cs = run(&mn, 0, &exact, &rc, msg, sizeof msg);
    fprintf(stderr, "FG20 broken (V MN-major read as K-major, model): cosine %.4f, %d of %d elements exact%s%s\n", cs, exact,
            n, rc ? "; the emulator: " : "", msg);
    cr_expect_lt(cs, 0.5, "an MN-major V read K-major is garbage (cosine %.4f)", cs);
    cr_expect_lt(exact, n / 10, "almost no element is right");
    cs = run(&km, 0, &exact, &rc, msg, sizeof msg);
    fprintf(stderr, "FG20 fixed (V transposed to K-major, model): cosine %.6f, %d of %d elements exact\n", cs, exact, n);
    cr_expect_eq(rc, EMU_OK, "%s", msg);
    cr_expect_eq(exact, n, "integer e4m3 operands: exact");
    mma_case_free(&mn);
    mma_case_free(&km);
}

/* Stage level: the same mistake in stage D's kernels, through `stage_D --fault` (broken, then the
 * same shape fixed), on the host model and on the H200. */
Test(footgun, fg20_stage_d_emu)
{
    cr_expect_eq(fault_demo_pair("stage_D", "emu", "v-not-transposed", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "symptom: cosine"), 0, "v-not-transposed on emu");
}

Test(footgun, fg20_stage_d_h200, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    cr_expect_eq(fault_demo_pair("stage_D", "sm90", "v-not-transposed", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "symptom: cosine"), 0, "v-not-transposed on the H200");
}
