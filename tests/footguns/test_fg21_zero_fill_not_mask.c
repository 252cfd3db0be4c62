/* FG21 — TMA zero-fill is not a mask.
 *
 * Symptom: the last KV tile of a sequence whose length is not a multiple of the tile comes back
 *   from TMA with its out-of-bounds rows zero-filled. Zero keys give scores of 0, not -inf, so a
 *   softmax without the tail mask counts the phantom keys: each adds exp(0 - m) to the row sum
 *   while its (zero) V adds nothing, and O shrinks; LSE grows.
 * Cause: out-of-bounds filling makes the copy safe, not the math.
 * Fix: keep the mask (fmha_visible: j < Skv) on the tail tile; zero-fill only guarantees the
 *   phantom rows are finite.
 * Stage: E. Level: host model (the TMA model's zero-filled tile, the online softmax of one row
 *   with and without the mask, against fp64); the stage-level variant comes with stage E.
 * Notes: notes/footguns.md#fg21 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/fmha_core.h"
#include "host/bf16.h"
#include "host/reference.h"
#include "host/rng.h"
#include "model/canonical.h"
#include "model/tma_model.h"
#include "tma_grid.h"

enum { D = 64, SKV = 100 };

static tmap_params map(void) { return tma_bf16_map_2d(D, SKV, D, FMHA_BN); }

/* The tile through the TMA model, read back element by element through the canonical layout. */
static void load_tile(const uint16_t *x, const smem_tile *t, float *rows /* [128][D] */)
{
    static uint8_t img[FMHA_BN * D * 2];
    uint32_t tx;
    char err[256];
    const tmap_params p = map();
    const int32_t c[2] = {0, 0};
    cr_assert_eq(tma_model_load(&p, 9, x, c, img, 0, &tx, err, sizeof err), 0, "%s", err);
    for (int r = 0; r < FMHA_BN; r++)
        for (int e = 0; e < D; e++) {
            uint16_t h;
            memcpy(&h, img + (t->major == MAJOR_K ? smem_tile_offset(t, r, e) : smem_tile_offset(t, e, r)), 2);
            rows[r * D + e] = bf16_to_f32(h);
        }
}

/* One row's softmax over the 128-key tile, masked (keys < SKV) or not. */
static void row(const float *q, const float *k, const float *v, int masked, double *o, double *lse)
{
    double s[FMHA_BN], m = -INFINITY, l = 0;
    for (int j = 0; j < FMHA_BN; j++) {
        double dot = 0;
        for (int e = 0; e < D; e++) dot += (double)q[e] * k[j * D + e];
        s[j] = (masked && j >= SKV) ? -INFINITY : dot / sqrt((double)D);
        if (s[j] > m) m = s[j];
    }
    for (int e = 0; e < D; e++) o[e] = 0;
    for (int j = 0; j < FMHA_BN; j++) {
        const double p = exp(s[j] - m);
        l += p;
        for (int e = 0; e < D; e++) o[e] += p * v[j * D + e];
    }
    for (int e = 0; e < D; e++) o[e] /= l;
    *lse = m + log(l);
}

Test(footgun, fg21_zero_fill_without_the_mask_then_masked)
{
    static uint16_t kx[SKV * D], vx[SKV * D];
    static float kf[SKV * D], vf[SKV * D], kt[FMHA_BN * D], vt[FMHA_BN * D], q[D];
    rng_t r;
    rng_seed(&r, 21);
    for (int i = 0; i < SKV * D; i++) {
        kx[i] = f32_to_bf16((float)rng_normal(&r)); kf[i] = bf16_to_f32(kx[i]);
        vx[i] = f32_to_bf16((float)rng_normal(&r)); vf[i] = bf16_to_f32(vx[i]);
    }
    for (int e = 0; e < D; e++) q[e] = (float)rng_normal(&r) * 0.25f; /* small scores: phantom keys weigh a lot */
    const smem_tile tk = fmha_k_tile(D), tv = fmha_v_tile(D);
    load_tile(kx, &tk, kt);
    load_tile(vx, &tv, vt);
    int zero_rows = 0;
    for (int j = SKV; j < FMHA_BN; j++) {
        int z = 1;
        for (int e = 0; e < D; e++) z &= kt[j * D + e] == 0.0f && vt[j * D + e] == 0.0f;
        zero_rows += z;
    }
    cr_expect_eq(zero_rows, FMHA_BN - SKV, "the 28 rows past Skv come back as zeros");
    const attn_shape s = {1, 1, 1, 1, SKV, D, 1.0 / sqrt((double)D), 0};
    double scores[SKV], ref[D], ref_lse, o[D], lse;
    ref_attention_row(&s, q, kf, vf, 0, 0, 0, 0, scores, ref, &ref_lse);
    double norm_ref = 0, norm = 0, err = 0;
    row(q, kt, vt, 0, o, &lse);
    for (int e = 0; e < D; e++) { norm_ref += ref[e] * ref[e]; norm += o[e] * o[e]; err = fmax(err, fabs(o[e] - ref[e])); }
    fprintf(stderr, "FG21 broken (zero-filled tail tile, no mask, model): %d phantom keys counted, |O| / |O_ref| = %.3f, max "
            "error %.3e, LSE %.4f vs %.4f\n", zero_rows, sqrt(norm / norm_ref), err, lse, ref_lse);
    cr_expect_lt(sqrt(norm / norm_ref), 0.95, "O shrinks: the phantom keys take weight and give nothing");
    cr_expect_gt(lse - ref_lse, 0.05, "LSE grows by the phantom keys' exp(0 - m)");
    row(q, kt, vt, 1, o, &lse);
    err = 0;
    for (int e = 0; e < D; e++) err = fmax(err, fabs(o[e] - ref[e]));
    fprintf(stderr, "FG21 fixed (zero-filled tail tile, masked j < Skv, model): max error %.3e, LSE %.6f vs %.6f\n", err, lse,
            ref_lse);
    cr_expect_lt(err, 1e-9);
    cr_expect_lt(fabs(lse - ref_lse), 1e-9);
}
