/* FG17 — FP8 per-token K/V scales on the wrong axis.
 *
 * Symptom: silent and wrong. With one scale per (token, head), K's scale belongs to the columns of
 *   S (key j) and V's to the columns of P (before the P V MMA); applied to the rows of S (the
 *   query's index), to the rows of O, or dropped, every value stays finite and plausible, only
 *   wrong.
 * Cause: S = Q K^T sums over D, not over tokens: a per-token K scale cannot be pulled out of the
 *   MMA as a row factor, and a per-token V scale cannot be pulled out of O = P V at all; it has to
 *   go into P's columns.
 * Fix: the scheme of common/host/fp8_attention.h (S_j = sq sk_j q8.k8_j; P'_j = P_j sv_j quantised
 *   per row; O = sp sum_j p8_j v8_j / l).
 * Stage: D. Level: host (the scheme emulated with every rounding against the fp64 attention over
 *   the dequantised cache); the kernel-level variants come with stage D.
 * Notes: notes/footguns.md#fg17 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "host/fp8_attention.h"
#include "host/paged_kv.h"
#include "host/reference.h"
#include "host/rng.h"
#include "stage_run.h"
#include "test_util.h"

enum { D = 128, LEN = 777, PAGE = 64 };

static double cosine(const double *a, const double *b)
{
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < D; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
    return ab / sqrt(aa * bb);
}

Test(footgun, fg17_scales_on_the_wrong_axis_then_right)
{
    /* tokens of very different magnitudes, so per-token scales differ by up to 30x */
    static float k[LEN * D], v[LEN * D], kt[LEN * D], vt[LEN * D], q[D];
    rng_t r;
    rng_seed(&r, 17);
    for (int t = 0; t < LEN; t++) {
        const float mk = 0.2f + 6.0f * (float)((t * 37) % 101) / 100.0f, mv = 0.2f + 6.0f * (float)((t * 53) % 97) / 96.0f;
        for (int e = 0; e < D; e++) { k[t * D + e] = mk * (float)rng_normal(&r); v[t * D + e] = mv * (float)rng_normal(&r); }
    }
    for (int e = 0; e < D; e++) q[e] = (float)rng_normal(&r) * 0.3f;
    paged_kv c;
    const int32_t lens[1] = {LEN};
    cr_assert_eq(paged_kv_build(&c, 1, 1, D, PAGE, lens, LEN, k, v, 2, &r), 0);
    /* the reference: fp64 attention over the dequantised cache */
    for (int t = 0; t < LEN; t++) { paged_kv_token(&c, 0, 0, t, 0, kt + t * D); paged_kv_token(&c, 1, 0, t, 0, vt + t * D); }
    const attn_shape s = {1, 1, 1, 1, LEN, D, 1.0 / sqrt((double)D), 0};
    double scores[LEN], ref[D], ref_lse;
    ref_attention_row(&s, q, kt, vt, 0, 0, 0, 0, scores, ref, &ref_lse);

    const unsigned variants[4] = {0, FP8_FAULT_K_SCALE_ON_ROWS, FP8_FAULT_V_SCALE_ON_O_ROWS, FP8_FAULT_K_SCALE_DROPPED};
    const char *names[4] = {"fixed (K scale on S's columns, V scale on P's columns)", "broken (K scale on S's rows)",
                            "broken (V scale on O's rows)", "broken (K scale dropped)"};
    for (int i = 0; i < 4; i++) {
        double o[D], lse;
        fp8_attention_row(&c, 0, 0, q, LEN, s.scale, variants[i], 5, 128, o, &lse);
        double err = 0, refmax = 0;
        int finite = 1;
        for (int e = 0; e < D; e++) {
            finite &= isfinite(o[e]);
            err = fmax(err, fabs(o[e] - ref[e]));
            refmax = fmax(refmax, fabs(ref[e]));
        }
        const double cs = cosine(o, ref);
        fprintf(stderr, "FG17 %s, host: cosine %.5f, max error %.3e (|O| up to %.3f), LSE %.4f vs %.4f, all finite: %s\n",
                names[i], cs, err, refmax, lse, ref_lse, finite ? "yes" : "no");
        cr_expect(finite, "%s: silent: nothing turns NaN", names[i]);
        if (i == 0) {
            cr_expect_gt(cs, 0.999, "the right scheme stays within e4m3 Q and P rounding (cosine %.5f)", cs);
            cr_expect_lt(fabs(lse - ref_lse), 0.05, "LSE %.4f vs %.4f", lse, ref_lse);
        } else {
            cr_expect(cs < 0.99 || err > 0.2 * refmax, "%s is wrong (cosine %.5f, max error %.3e)", names[i], cs, err);
        }
    }
    paged_kv_free(&c);
}

/* Stage level: the same mistake in stage D's kernels, through `stage_D --fault` (broken, then the
 * same shape fixed), on the host model and on the H200. */
Test(footgun, fg17_stage_d_emu)
{
    cr_expect_eq(fault_demo_pair("stage_D", "emu", "k-scale-on-rows", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "symptom: cosine"), 0, "k-scale-on-rows on emu");
    cr_expect_eq(fault_demo_pair("stage_D", "emu", "v-scale-on-o-rows", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "symptom: cosine"), 0, "v-scale-on-o-rows on emu");
    cr_expect_eq(fault_demo_pair("stage_D", "emu", "k-scale-dropped", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "symptom: cosine"), 0, "k-scale-dropped on emu");
}

Test(footgun, fg17_stage_d_h200, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    cr_expect_eq(fault_demo_pair("stage_D", "sm90", "k-scale-on-rows", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "symptom: cosine"), 0, "k-scale-on-rows on the H200");
    cr_expect_eq(fault_demo_pair("stage_D", "sm90", "v-scale-on-o-rows", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "symptom: cosine"), 0, "v-scale-on-o-rows on the H200");
    cr_expect_eq(fault_demo_pair("stage_D", "sm90", "k-scale-dropped", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "symptom: cosine"), 0, "k-scale-dropped on the H200");
}
