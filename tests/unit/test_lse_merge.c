/* The split-KV merge reference (common/host/lse_merge.c) against the fp64 attention reference:
 * a row's keys split into 1..7 contiguous ranges (some empty), each range's attention computed on
 * its own (its O and LSE), merged: equal to the attention over all keys. Empty splits carry
 * poison in O and must not change the result; a row whose splits are all empty is O = 0,
 * LSE = -inf. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/lse_merge.h"
#include "host/reference.h"
#include "host/rng.h"

enum { D = 64, SKV = 1000 };

static void attend(const float *q, const float *k, const float *v, int n, double *o, double *lse)
{
    const attn_shape s = {1, 1, 1, 1, n, D, 1.0 / sqrt((double)D), 0};
    double *scores = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    ref_attention_row(&s, q, k, v, 0, 0, 0, 0, scores, o, lse);
    if (n == 0) *lse = -INFINITY; /* the reference's contract for a row that sees no key */
    free(scores);
}

Test(lse_merge, splits_merge_to_the_full_row)
{
    static float q[D], k[SKV * D], v[SKV * D];
    rng_t r;
    rng_seed(&r, 11);
    for (int i = 0; i < D; i++) q[i] = (float)rng_normal(&r) * 2.0f;
    for (int i = 0; i < SKV * D; i++) { k[i] = (float)rng_normal(&r); v[i] = (float)rng_normal(&r); }
    double full[D], full_lse;
    attend(q, k, v, SKV, full, &full_lse);
    for (int nsplit = 1; nsplit <= 7; nsplit++) {
        /* uneven contiguous ranges [bound[s], bound[s+1]) covering every key; from three splits on
         * one more, empty, range is inserted after the second, carrying garbage in its O */
        int bound[9], n = 0;
        for (int s = 0; s <= nsplit; s++) {
            bound[n++] = (int)((long)SKV * s * s / (nsplit * nsplit));
            if (nsplit >= 3 && s == 2) { bound[n] = bound[n - 1]; n++; }
        }
        const int parts = n - 1;
        float o_parts[8 * D], lse_parts[8];
        for (int s = 0; s < parts; s++) {
            const int lo = bound[s], hi = bound[s + 1];
            double o[D], lse;
            if (hi > lo) attend(q, k + (size_t)lo * D, v + (size_t)lo * D, hi - lo, o, &lse);
            else { lse = -INFINITY; for (int c = 0; c < D; c++) o[c] = NAN; }
            for (int c = 0; c < D; c++) o_parts[s * D + c] = (float)o[c];
            lse_parts[s] = (float)lse;
        }
        double o[D], lse;
        lse_merge_row(parts, D, o_parts, lse_parts, o, &lse);
        double err = 0;
        for (int c = 0; c < D; c++) err = fmax(err, fabs(o[c] - full[c]));
        cr_expect_lt(err, 1e-6, "%d splits: max |O - O_full| = %.3e", parts, err);
        cr_expect_lt(fabs(lse - full_lse), 1e-5, "%d splits: LSE %.9f vs %.9f", parts, lse, full_lse);
    }
}

Test(lse_merge, empty_splits)
{
    float o_parts[3 * 4], lse_parts[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < 12; i++) o_parts[i] = NAN;
    double o[4], lse;
    lse_merge_row(3, 4, o_parts, lse_parts, o, &lse);
    cr_expect(isinf(lse) && lse < 0, "all empty: LSE = -inf");
    for (int c = 0; c < 4; c++) cr_expect_eq(o[c], 0.0, "all empty: O = 0, never NaN");
    /* one real split among empty ones is returned unchanged */
    lse_parts[1] = 2.5f;
    for (int c = 0; c < 4; c++) o_parts[4 + c] = (float)(c + 1);
    lse_merge_row(3, 4, o_parts, lse_parts, o, &lse);
    cr_expect_float_eq(lse, 2.5, 1e-12);
    for (int c = 0; c < 4; c++) cr_expect_float_eq(o[c], c + 1.0, 1e-12);
}
