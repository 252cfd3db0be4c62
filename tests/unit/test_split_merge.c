/* The split-KV merge rule the merge kernel and the emu flow run (common/attn/split_merge.h, f32)
 * against its fp64 host reference (common/host/lse_merge.c): random partial rows with LSEs that
 * span a wide range (so the base-2 rescale matters), empty splits carrying NaN in O (never read),
 * an all-empty row (O = 0, LSE = -inf), and LSEs large enough that exp without the max would
 * overflow f32. */
#include <criterion/criterion.h>
#include <math.h>

#include "attn/split_merge.h"
#include "host/lse_merge.h"
#include "host/rng.h"

enum { D = 128, MAXS = 16 };

/* The f32 rule over one row, the way merge.cu walks it (splits stride apart). */
static void rule_row(int nsplit, const float *o, const float *lse, float *out, float *out_lse)
{
    const float m = merge_max_lse(lse, nsplit, 1);
    float wsum = 0.0f;
    for (int s = 0; s < nsplit; s++) wsum += merge_weight(lse[s], m);
    const float inv = wsum > 0.0f ? 1.0f / wsum : 0.0f;
    for (int c = 0; c < D; c++) out[c] = merge_elem(o + c, D, lse, 1, nsplit, m, inv);
    *out_lse = merge_lse(m, wsum);
}

Test(split_merge, f32_rule_matches_the_fp64_reference)
{
    rng_t r;
    rng_seed(&r, 29);
    static float o[MAXS * D], lse[MAXS], out[D];
    double ref[D], ref_lse;
    int cases = 0;
    for (int nsplit = 1; nsplit <= MAXS; nsplit++)
        for (int rep = 0; rep < 20; rep++, cases++) {
            const double spread = rep < 10 ? 5.0 : 60.0, offset = rep % 3 == 2 ? 120.0 : 0.0; /* exp(120) overflows f32 */
            for (int s = 0; s < nsplit; s++) {
                const int empty = nsplit > 2 && (s * 7 + rep) % 5 == 0;
                lse[s] = empty ? -INFINITY : (float)(offset + spread * (rng_uniform(&r) - 0.5));
                for (int c = 0; c < D; c++) o[s * D + c] = empty ? NAN : (float)rng_normal(&r);
            }
            float got_lse;
            rule_row(nsplit, o, lse, out, &got_lse);
            lse_merge_row(nsplit, D, o, lse, ref, &ref_lse);
            for (int c = 0; c < D; c++)
                cr_assert(fabs(out[c] - ref[c]) <= 1e-5 * (1.0 + fabs(ref[c])), "nsplit %d rep %d c %d: %g vs %g", nsplit, rep,
                          c, out[c], ref[c]);
            cr_assert(fabs(got_lse - ref_lse) <= 1e-5 * (1.0 + fabs(ref_lse)), "LSE %g vs %g", got_lse, ref_lse);
        }
    cr_expect_eq(cases, MAXS * 20);
}

Test(split_merge, every_split_empty_gives_zero_and_minus_infinity)
{
    float o[3 * D], lse[3] = {-INFINITY, -INFINITY, -INFINITY}, out[D], out_lse = 0.0f;
    for (int i = 0; i < 3 * D; i++) o[i] = NAN;
    rule_row(3, o, lse, out, &out_lse);
    for (int c = 0; c < D; c++) cr_assert_eq(out[c], 0.0f, "c %d: %g", c, out[c]);
    cr_assert(isinf(out_lse) && out_lse < 0, "LSE %g", out_lse);
}
