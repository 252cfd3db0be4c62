/* fp64 reference attention: a hand-derived case, and the naive per-element formula
 * O[i][c] = sum_j exp(s_ij) v_jc / sum_j exp(s_ij) (no max subtraction, fine at these sizes) on
 * tiny shapes with causal masks (Sq < Skv, Sq > Skv), GQA and fully masked rows; the rounding
 * variants (at the max, and off it for a lagging max) against hand-derived values and bf16's bound. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "host/bf16.h"
#include "host/reference.h"
#include "host/rng.h"

Test(reference, hand_derived_two_keys)
{
    /* one query, two keys, D = 1, scale 1: scores (0, ln 3) -> softmax (1/4, 3/4);
     * V = (1, 5) -> O = 1/4 + 15/4 = 4; LSE = ln(e^0 + e^ln3) = ln 4. */
    attn_shape s = {.b = 1, .hq = 1, .hkv = 1, .sq = 1, .skv = 2, .d = 1, .scale = 1.0, .causal = 0};
    float q[1] = {1.0f};
    float k[2] = {0.0f, (float)log(3.0)};
    float v[2] = {1.0f, 5.0f};
    double o[1], lse[1];
    ref_attention(&s, q, k, v, o, lse);
    cr_expect(fabs(o[0] - 4.0) < 1e-6, "O = %.9f, expected 4", o[0]);
    cr_expect(fabs(lse[0] - log(4.0)) < 1e-6, "LSE = %.9f, expected ln 4", lse[0]);
}

Test(reference, hand_derived_scale_and_causal)
{
    /* Sq = 2, Skv = 3, causal bottom-right: row 0 sees keys 0..1, row 1 sees 0..2.
     * q = (2), k = (0, 0, 0) -> equal scores: row 0 averages v0, v1; row 1 averages all three.
     * scale does not matter for equal scores but enters the LSE: LSE = 0 + ln(count). */
    attn_shape s = {.b = 1, .hq = 1, .hkv = 1, .sq = 2, .skv = 3, .d = 1, .scale = 0.5, .causal = 1};
    float q[2] = {2.0f, 2.0f}, k[3] = {0, 0, 0}, v[3] = {3.0f, 6.0f, 30.0f};
    double o[2], lse[2];
    ref_attention(&s, q, k, v, o, lse);
    cr_expect(fabs(o[0] - 4.5) < 1e-12 && fabs(o[1] - 13.0) < 1e-12, "O = (%g, %g)", o[0], o[1]);
    cr_expect(fabs(lse[0] - log(2.0)) < 1e-12 && fabs(lse[1] - log(3.0)) < 1e-12);
}

Test(reference, last_visible_key_bottom_right)
{
    attn_shape a = {.b = 1, .hq = 1, .hkv = 1, .sq = 2, .skv = 4, .d = 1, .scale = 1, .causal = 1};
    cr_expect_eq(ref_last_visible_key(&a, 0), 2);
    cr_expect_eq(ref_last_visible_key(&a, 1), 3);
    attn_shape b = {.b = 1, .hq = 1, .hkv = 1, .sq = 4, .skv = 2, .d = 1, .scale = 1, .causal = 1};
    cr_expect_eq(ref_last_visible_key(&b, 0), -1); /* fully masked */
    cr_expect_eq(ref_last_visible_key(&b, 1), -1);
    cr_expect_eq(ref_last_visible_key(&b, 2), 0);
    cr_expect_eq(ref_last_visible_key(&b, 3), 1);
    b.causal = 0;
    cr_expect_eq(ref_last_visible_key(&b, 0), 1);
}

/* Naive formula written independently of reference.c: explicit mask test per (i, j). */
static void naive(const attn_shape *s, const float *q, const float *k, const float *v, double *o,
                  double *lse)
{
    int group = s->hq / s->hkv;
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->hq; h++)
            for (int i = 0; i < s->sq; i++) {
                size_t row = ((size_t)b * s->hq + h) * s->sq + i;
                double den = 0;
                double num[16] = {0};
                for (int j = 0; j < s->skv; j++) {
                    int visible = !s->causal || (j - i <= s->skv - s->sq);
                    if (!visible) continue;
                    double dot = 0;
                    for (int c = 0; c < s->d; c++)
                        dot += q[row * s->d + c] *
                               (double)k[(((size_t)b * s->hkv + h / group) * s->skv + j) * s->d + c];
                    double e = exp(dot * s->scale);
                    den += e;
                    for (int c = 0; c < s->d; c++)
                        num[c] += e * v[(((size_t)b * s->hkv + h / group) * s->skv + j) * s->d + c];
                }
                for (int c = 0; c < s->d; c++) o[row * s->d + c] = den > 0 ? num[c] / den : 0.0;
                lse[row] = den > 0 ? log(den) : -INFINITY;
            }
}

static void fill(float *x, size_t n, rng_t *r)
{
    for (size_t i = 0; i < n; i++) x[i] = bf16_round((float)rng_normal(r));
}

static void compare_with_naive(attn_shape s, uint64_t seed)
{
    size_t nq = (size_t)s.b * s.hq * s.sq * s.d, nkv = (size_t)s.b * s.hkv * s.skv * s.d;
    size_t nrows = (size_t)s.b * s.hq * s.sq;
    float *q = malloc(nq * 4), *k = malloc(nkv * 4), *v = malloc(nkv * 4);
    double *o = malloc(nq * 8), *lse = malloc(nrows * 8), *on = malloc(nq * 8), *lsen = malloc(nrows * 8);
    rng_t r;
    rng_seed(&r, seed);
    fill(q, nq, &r); fill(k, nkv, &r); fill(v, nkv, &r);
    ref_attention(&s, q, k, v, o, lse);
    naive(&s, q, k, v, on, lsen);
    for (size_t i = 0; i < nq; i++) {
        cr_assert(!isnan(o[i]), "NaN in O at %zu", i);
        cr_assert(fabs(o[i] - on[i]) <= 1e-12 * (1 + fabs(on[i])), "O[%zu] = %.15g, naive %.15g", i, o[i], on[i]);
    }
    for (size_t i = 0; i < nrows; i++) {
        if (isinf(lsen[i])) cr_assert(isinf(lse[i]) && lse[i] < 0, "row %zu: LSE %g, expected -inf", i, lse[i]);
        else cr_assert(fabs(lse[i] - lsen[i]) <= 1e-12 * (1 + fabs(lsen[i])), "LSE[%zu] %g vs %g", i, lse[i], lsen[i]);
    }
    free(q); free(k); free(v); free(o); free(lse); free(on); free(lsen);
}

Test(reference, matches_naive_noncausal)
{
    compare_with_naive((attn_shape){.b = 2, .hq = 2, .hkv = 2, .sq = 5, .skv = 7, .d = 8, .scale = 0.35, .causal = 0}, 1);
}

Test(reference, matches_naive_causal_sq_lt_skv)
{
    compare_with_naive((attn_shape){.b = 1, .hq = 3, .hkv = 3, .sq = 3, .skv = 9, .d = 4, .scale = 0.5, .causal = 1}, 2);
}

Test(reference, matches_naive_causal_fully_masked_rows)
{
    /* Sq = 6 > Skv = 2: rows 0..3 see no key: O = 0, LSE = -inf, never NaN */
    attn_shape s = {.b = 1, .hq = 2, .hkv = 1, .sq = 6, .skv = 2, .d = 4, .scale = 0.5, .causal = 1};
    compare_with_naive(s, 3);
    float q[2 * 6 * 4], k[2 * 4], v[2 * 4];
    rng_t r;
    rng_seed(&r, 4);
    fill(q, 48, &r); fill(k, 8, &r); fill(v, 8, &r);
    double o[48], lse[12];
    ref_attention(&s, q, k, v, o, lse);
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 4; i++) {
            cr_expect(isinf(lse[h * 6 + i]) && lse[h * 6 + i] < 0);
            for (int c = 0; c < 4; c++) cr_expect_eq(o[(h * 6 + i) * 4 + c], 0.0);
        }
    cr_expect(isfinite(lse[4]) && isfinite(lse[5]));
}

Test(reference, matches_naive_gqa_and_mqa)
{
    compare_with_naive((attn_shape){.b = 2, .hq = 8, .hkv = 2, .sq = 4, .skv = 6, .d = 4, .scale = 0.5, .causal = 1}, 5);
    compare_with_naive((attn_shape){.b = 1, .hq = 4, .hkv = 1, .sq = 3, .skv = 5, .d = 8, .scale = 0.3, .causal = 0}, 6);
}

Test(reference, gqa_head_mapping)
{
    /* Hq = 4, Hkv = 2: heads 0,1 read KV head 0; heads 2,3 read KV head 1. Make the two KV heads'
     * V constant and different (1 and 7): O of head h is then exactly that constant. */
    attn_shape s = {.b = 1, .hq = 4, .hkv = 2, .sq = 2, .skv = 3, .d = 2, .scale = 1, .causal = 0};
    float q[4 * 2 * 2], k[2 * 3 * 2], v[2 * 3 * 2];
    rng_t r;
    rng_seed(&r, 7);
    fill(q, 16, &r); fill(k, 12, &r);
    for (int i = 0; i < 12; i++) v[i] = i < 6 ? 1.0f : 7.0f;
    double o[16], lse[8];
    ref_attention(&s, q, k, v, o, lse);
    for (int h = 0; h < 4; h++)
        for (int e = 0; e < 4; e++)
            cr_expect(fabs(o[h * 4 + e] - (h < 2 ? 1.0 : 7.0)) < 1e-12, "head %d elem %d = %g", h, e, o[h * 4 + e]);
}

Test(reference, emulating_reference_rounds_p)
{
    /* Scores (0, ln 3): after subtracting the max, P = (1/3, 1); 1/3 is not a
     * bf16 value, so the emulating reference must differ from the exact one, but only by bf16
     * rounding (relative at most 2^-8). */
    attn_shape s = {.b = 1, .hq = 1, .hkv = 1, .sq = 1, .skv = 2, .d = 1, .scale = 1.0, .causal = 0};
    float q[1] = {1.0f}, k[2] = {0.0f, (float)log(3.0)}, v[2] = {1.0f, 5.0f};
    double o[1], oe[1], lse[1], lsee[1];
    ref_attention(&s, q, k, v, o, lse);
    ref_attention_bf16p(&s, q, k, v, oe, lsee);
    cr_expect(o[0] != oe[0], "rounding P to bf16 must change O here");
    cr_expect(fabs(o[0] - oe[0]) < 4.0 * 0x1p-8, "difference %g larger than bf16 rounding", o[0] - oe[0]);
    cr_expect_eq(lse[0], lsee[0], "LSE uses the unrounded sum");
    /* With equal scores P = 1 exactly: both references agree bit for bit. */
    k[1] = 0.0f;
    ref_attention(&s, q, k, v, o, lse);
    ref_attention_bf16p(&s, q, k, v, oe, lsee);
    cr_expect_eq(o[0], oe[0]);
}

Test(reference, off_max_variants_round_the_largest_p)
{
    /* One key: P = 1 and O = round(P * c) / (P * c) * v with l unrounded, so each variant's error is
     * exactly its scale's bf16 rounding, derived by hand: c = 2^(k/8), k = 1..7, irrational, so it
     * rounds, by at most 2^-8 relative (c = 2 would round as c = 1 does: no variant needed). The
     * emulating reference at the max (REF_P_BF16) leaves P = 1 exact. */
    attn_shape s = {.b = 1, .hq = 1, .hkv = 1, .sq = 1, .skv = 1, .d = 1, .scale = 1.0, .causal = 0};
    float q[1] = {1.0f}, k[1] = {0.5f}, v[1] = {3.0f};
    double sc[1], o[1], lse[1];
    ref_attention_row(&s, q, k, v, 0, 0, 0, REF_P_BF16, sc, o, lse);
    cr_expect_eq(o[0], 3.0, "at the max P = 1 is exact: O = v");
    for (int kk = 0; kk < REF_P_OFF_SCALES; kk++) {
        ref_attention_row(&s, q, k, v, 0, 0, 0, REF_P_BF16_OFF_MAX + kk, sc, o, lse);
        const double c = exp2((kk + 1) / 8.0), want = 3.0 * (double)bf16_round((float)c) / c;
        cr_expect(fabs(o[0] - want) < 1e-12, "variant %d: O = %.12f, by hand %.12f", kk, o[0], want);
        cr_expect(fabs(o[0] - 3.0) <= 3.0 * 0x1p-8, "variant %d: error %g past bf16's 2^-8 relative", kk, o[0] - 3.0);
        cr_expect(o[0] != 3.0, "variant %d: the largest P rounds off the max", kk);
        cr_expect(fabs(lse[0] - 0.5) < 1e-15, "LSE is unrounded: %g", lse[0]);
    }
}

Test(reference, off_max_variants_stay_within_bf16_rounding_of_p)
{
    /* On random rows, every off-max variant differs from the exact reference by at most
     * 2^-8 sum_j P_j |v_j| / l (each P rounded with a relative error of at most 2^-8, l unrounded):
     * the lagging-max yardstick (host/attention.c) cannot grow past bf16's rounding of P. */
    enum { SKV = 97, D = 8 };
    attn_shape s = {.b = 1, .hq = 1, .hkv = 1, .sq = 1, .skv = SKV, .d = D, .scale = 0.35, .causal = 0};
    float q[D], k[SKV * D], v[SKV * D];
    rng_t r;
    rng_seed(&r, 11);
    for (int t = 0; t < 20; t++) {
        fill(q, D, &r); fill(k, SKV * D, &r); fill(v, SKV * D, &r);
        double sc[SKV], ex[D], o[D], lse;
        ref_attention_row(&s, q, k, v, 0, 0, 0, REF_P_EXACT, sc, ex, &lse);
        double m = -INFINITY, l = 0.0, bound[D] = {0};
        for (int j = 0; j < SKV; j++) m = fmax(m, sc[j]);
        for (int j = 0; j < SKV; j++) {
            const double p = exp(sc[j] - m);
            l += p;
            for (int c = 0; c < D; c++) bound[c] += p * fabs(v[j * D + c]);
        }
        for (int kk = 0; kk < REF_P_OFF_SCALES; kk++) {
            ref_attention_row(&s, q, k, v, 0, 0, 0, REF_P_BF16_OFF_MAX + kk, sc, o, NULL);
            for (int c = 0; c < D; c++)
                cr_expect(fabs(o[c] - ex[c]) <= 0x1p-8 * bound[c] / l * (1 + 1e-9), "trial %d variant %d col %d: %g > %g", t, kk,
                          c, fabs(o[c] - ex[c]), 0x1p-8 * bound[c] / l);
        }
    }
}

Test(reference, qk_matches_dot_products)
{
    attn_shape s = {.b = 1, .hq = 2, .hkv = 1, .sq = 2, .skv = 3, .d = 2, .scale = 0.5, .causal = 0};
    float q[8] = {1, 2, 3, 4, -1, 0, 0, 2};
    float k[6] = {1, 0, 0, 1, 1, 1};
    double out[12];
    ref_qk(&s, q, k, out);
    double expect[12] = {0.5, 1.0, 1.5, 1.5, 2.0, 3.5, -0.5, 0.0, -0.5, 0.0, 1.0, 1.0};
    for (int i = 0; i < 12; i++) cr_expect_eq(out[i], expect[i], "S[%d] = %g, expected %g", i, out[i], expect[i]);
}
