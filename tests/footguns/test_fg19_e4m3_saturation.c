/* FG19 — e4m3 without saturation: values past 448 become NaN.
 *
 * Symptom: e4m3 has no infinity (S.1111.111 is NaN), so a conversion that does not saturate turns
 *   every value that rounds past 448 into NaN, and one NaN in a K row makes that score NaN and the
 *   whole softmax row NaN. It happens when the scale is not the row's own absmax / 448: a
 *   per-tensor scale from other data, a stale calibration.
 * Cause: overflow in a format without infinity.
 * Fix: saturate (PTX cvt .satfinite: clamp to +-448), and scale per (token, head) by absmax / 448 so
 *   nothing overflows in the first place (common/host/fp8.c).
 * Stage: D. Level: host (the quantiser the FP8 cache is built with, and the fp64 attention over
 *   the dequantised values); the device quantiser of stage D's benchmark data comes with stage D.
 * Notes: notes/footguns.md#fg19 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "host/fp8.h"
#include "host/reference.h"
#include "host/rng.h"
#include "stage_run.h"
#include "test_util.h"

enum { D = 64, SKV = 256 };

/* K quantised with a fixed scale (the broken recipe) or per token; then one attention row. */
static void run(float fixed_scale, int saturate, int *nan_codes, int *clamped, int *row_nan, double *max_err)
{
    static float q[D], k[SKV * D], v[SKV * D], kdeq[SKV * D], scale[SKV];
    static uint8_t kq[SKV * D];
    rng_t r;
    rng_seed(&r, 19);
    for (int i = 0; i < D; i++) q[i] = (float)rng_normal(&r);
    for (int i = 0; i < SKV * D; i++) { k[i] = (float)rng_normal(&r); v[i] = (float)rng_normal(&r); }
    for (int i = 0; i < D; i++) k[7 * D + i] *= 8.0f; /* one outlier token, as real K caches have */
    e4m3_quantise_rows(k, SKV, D, fixed_scale, saturate, kq, scale, kdeq);
    *nan_codes = *clamped = 0;
    for (int i = 0; i < SKV * D; i++) {
        *nan_codes += (kq[i] & 0x7F) == 0x7F;
        *clamped += (kq[i] & 0x7F) == 0x7E;
    }
    const attn_shape s = {1, 1, 1, 1, SKV, D, 1.0 / sqrt((double)D), 0};
    double scores[SKV], o[D], o_exact[D], lse;
    ref_attention_row(&s, q, kdeq, v, 0, 0, 0, 0, scores, o, &lse);
    ref_attention_row(&s, q, k, v, 0, 0, 0, 0, scores, o_exact, &lse);
    *row_nan = 0;
    *max_err = 0;
    for (int c = 0; c < D; c++) {
        *row_nan += isnan(o[c]);
        if (!isnan(o[c])) *max_err = fmax(*max_err, fabs(o[c] - o_exact[c]));
    }
}

Test(footgun, fg19_no_saturation_then_saturated_then_per_token)
{
    /* a per-tensor scale that puts about 1 value in 90 past 448 */
    const float fixed = 2.5f / 448.0f;
    int nan_codes, clamped, row_nan;
    double err;
    run(fixed, 0, &nan_codes, &clamped, &row_nan, &err);
    fprintf(stderr, "FG19 broken (fixed scale, no saturation, host): %d of %d K values NaN, O row: %d of %d NaN\n",
            nan_codes, SKV * D, row_nan, D);
    cr_expect_gt(nan_codes, 0, "values past 448 * scale became NaN");
    cr_expect_eq(row_nan, D, "one NaN in K poisons the whole attention row");
    run(fixed, 1, &nan_codes, &clamped, &row_nan, &err);
    fprintf(stderr, "FG19 fixed (fixed scale, saturating, host): %d NaN, %d clamped to +-448, O row %d NaN, max error "
            "%.3e (the clamped values cost accuracy, not the row)\n", nan_codes, clamped, row_nan, err);
    cr_expect_eq(nan_codes, 0);
    cr_expect_gt(clamped, 0, "the same values clamp instead");
    cr_expect_eq(row_nan, 0);
    run(0.0f, 0, &nan_codes, &clamped, &row_nan, &err);
    fprintf(stderr, "FG19 fixed (per-token absmax / 448 scales, host): %d NaN even without saturation, O row max error "
            "%.3e\n", nan_codes, err);
    cr_expect_eq(nan_codes, 0, "a per-token scale never overflows");
    cr_expect_eq(row_nan, 0);
    cr_expect_lt(err, 0.05, "e4m3 K costs a few percent, no more (%.3e)", err);
}

/* Stage level: the same mistake in stage D's kernels, through `stage_D --fault` (broken, then the
 * same shape fixed), on the host model and on the H200. */
Test(footgun, fg19_stage_d_emu)
{
    cr_expect_eq(fault_demo_pair("stage_D", "emu", "no-saturation", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "the cache holds NaN codes"), 0, "no-saturation on emu");
}

Test(footgun, fg19_stage_d_h200, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    cr_expect_eq(fault_demo_pair("stage_D", "sm90", "no-saturation", "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1", "the cache holds NaN codes"), 0, "no-saturation on the H200");
}
