/* FG01 — SMEM fill uses the global column `full_d` instead of the K-slice-local `k`.
 *
 * Symptom: QK^T is right when D = 16 (one K step) and wrong for D >= 32; the seed's tests at one
 *   K step passed. (Seed 000, "CRITICAL BUG FIXED".)
 * Cause: the seed stores Q and K as one SMEM tile per 16-column K slice (K-major, no swizzle) and
 *   points the MMA descriptor of slice s at that slice's base, but the fill computed the canonical
 *   offset from the global column d = 16 s + k. The no-swizzle offset grows by (d / 8) * LBO, so
 *   element (r, 16 s + k) lands 2 s * LBO further out — inside slice 2 s — while the MMA of slice s
 *   reads slice s. Only slice 0 is right (notes/hardware.md section 3.6).
 * Fix: fill each slice tile with the local k (what the descriptor's origin expects). The stage
 *   kernels avoid the trap by construction: one tile for the whole K block and the descriptor
 *   advanced from a common base (model/canonical.h smem_tile_k_advance), with the fill and the
 *   descriptor built from the same smem_tile (stages/A_qk/qk_sm100.cu steps 2 and 4).
 * Stage: A.  Levels: emu (the MMA emulator reads the image through the descriptors), sm90 (a real
 *   wgmma reads the same image on the H200; skips elsewhere), sm100: no B200 here; the stage A
 *   sm100 kernel uses the whole-tile fill and is compiled only.
 * Notes: notes/footguns.md#fg01 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "host/init.h"
#include "host/rng.h"
#include "gpu/kernels/wgmma_conf.h"
#include "model/canonical_fill.h"
#include "model/frag_map.h"
#include "model/mma_emu.h"
#include "stages/A_qk/qk.h"
#include "test_util.h"

typedef enum { FILL_FIXED_LOCAL_K = 0, FILL_WRONG_FULL_D = 1 } fill_kind;

/* The seed's layout: one [rows x 16] K-major no-swizzle tile per K slice, slices back to back
 * (model/canonical_fill.h smem_fill_rows_kslices, which stage A's FG01 variant uses too). The image
 * holds the wrong fill's overshoot (smem_kslices_bytes; on the GPU it would corrupt whatever
 * follows). */
typedef struct {
    int rows, d;
    smem_tile slice; /* [rows x 16] */
    uint32_t slice_bytes, bytes;
} seed_layout;

static seed_layout seed_layout_make(int rows, int d)
{
    seed_layout l = {rows, d, smem_tile_make(MAJOR_K, SWZ_NONE, 2, rows, 16), 0, 0};
    l.slice_bytes = l.slice.bytes;
    l.bytes = smem_kslices_bytes(&l.slice, d);
    return l;
}

static void fill(uint8_t *img, const seed_layout *l, const float *x, fill_kind kind)
{
    uint16_t *h = malloc(sizeof(uint16_t) * (size_t)l->rows * l->d);
    for (int i = 0; i < l->rows * l->d; i++) h[i] = f32_to_bf16(x[i]);
    smem_fill_rows_kslices(img, &l->slice, h, 0, l->rows, l->d, l->d, kind == FILL_WRONG_FULL_D);
    free(h);
}

static double cosine(const double *a, const double *b, int n)
{
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < n; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
    return ab / sqrt(aa * bb);
}

/* S = Q K^T through the model or the hardware; Q [m x d], K [128 x d]; returns the cosine with
 * the plain loop and whether it is exact. */
static double run(int on_gpu, int m, int d, fill_kind kind, int *exact)
{
    const int n = 128;
    rng_t r;
    rng_seed(&r, (uint64_t)(d * 7 + kind));
    float *q = malloc(sizeof(float) * (size_t)m * d), *k = malloc(sizeof(float) * (size_t)n * d);
    for (int i = 0; i < m * d; i++) q[i] = (float)rng_int(&r, -3, 3);
    for (int i = 0; i < n * d; i++) k[i] = (float)rng_int(&r, -3, 3);
    seed_layout lq = seed_layout_make(m, d), lk = seed_layout_make(n, d);
    uint32_t k_base = lq.bytes, bytes = lq.bytes + lk.bytes;
    uint8_t *img = calloc(bytes, 1);
    fill(img, &lq, q, kind);
    fill(img + k_base, &lk, k, kind);
    double *ref = calloc((size_t)m * n, sizeof(double)), *got = calloc((size_t)m * n, sizeof(double));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            for (int c = 0; c < d; c++) ref[i * n + j] += (double)q[i * d + c] * k[j * d + c];
    const int steps = d / 16;
    smem_image im = {img, 0, bytes};
    if (!on_gpu) {
        /* sm100 data flow: M=128 N=128 MMAs into the TMEM model, descriptor at each slice base */
        tmem_model *tm = tmem_model_new();
        uint32_t t;
        cr_assert_eq(tmem_alloc(tm, 128, &t), TMEM_OK);
        for (int s = 0; s < steps; s++) {
            emu_status st = {0};
            uint64_t a = smem_tile_desc_sm100(&lq.slice, (uint32_t)s * lq.slice_bytes, 0, 0);
            uint64_t b = smem_tile_desc_sm100(&lk.slice, k_base + (uint32_t)s * lk.slice_bytes, 0, 0);
            cr_assert_eq(emu_tcgen05_mma(tm, &im, t, 0, 0, a, b, idesc_bf16_f32(128, 128, 0, 0), MMA_KIND_F16, s > 0, &st),
                         EMU_OK, "%s", st.msg);
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                float v;
                memcpy(&v, &tm->cell[i][j], 4);
                got[i * n + j] = v;
            }
        tmem_model_free(tm);
    } else {
        /* sm90: one warpgroup, m64n128k16 per slice, the same image and slice-base descriptors */
        uint64_t descs[32];
        for (int s = 0; s < steps; s++) {
            descs[2 * s] = smem_tile_desc_sm90(&lq.slice, (uint32_t)s * lq.slice_bytes, 0, 0);
            descs[2 * s + 1] = smem_tile_desc_sm90(&lk.slice, k_base + (uint32_t)s * lk.slice_bytes, 0, 0);
        }
        float *hw = malloc(sizeof(float) * 128 * 64);
        cr_assert_eq(wgmma_conf_launch(128, 0, 0, 0, img, bytes, descs, steps, hw), 0);
        for (int t = 0; t < 128; t++)
            for (int i = 0; i < 64; i++) {
                int row, col;
                wgmma_acc_map(t, i, &row, &col);
                got[row * n + col] = hw[t * 64 + i];
            }
        free(hw);
    }
    *exact = memcmp(ref, got, sizeof(double) * (size_t)m * n) == 0;
    double c = cosine(got, ref, m * n);
    free(q); free(k); free(img); free(ref); free(got);
    return c;
}

static void wrong_then_fixed(int on_gpu)
{
    const int m = on_gpu ? 64 : 128;
    const char *level = on_gpu ? "sm90" : "emu";
    int exact;
    /* broken variant: right at D = 16, wrong from D = 32 on */
    double c16 = run(on_gpu, m, 16, FILL_WRONG_FULL_D, &exact);
    fprintf(stderr, "FG01 broken (full_d fill, %s) D=16: cosine %.6f, exact %s\n", level, c16, exact ? "yes" : "no");
    cr_expect(exact, "full_d fill with one K step (D=16) is still exact: the trap the seed fell into");
    const int ds[3] = {32, 64, 128};
    for (int i = 0; i < 3; i++) {
        double c = run(on_gpu, m, ds[i], FILL_WRONG_FULL_D, &exact);
        fprintf(stderr, "FG01 broken (full_d fill, %s) D=%d: cosine %.6f, exact %s\n", level, ds[i], c, exact ? "yes" : "no");
        cr_expect(!exact && c < 0.9, "full_d fill, D=%d: cosine %.4f should collapse far below 0.99", ds[i], c);
    }
    /* fixed variant: exact for every D */
    const int all[4] = {16, 32, 64, 128};
    for (int i = 0; i < 4; i++) {
        double c = run(on_gpu, m, all[i], FILL_FIXED_LOCAL_K, &exact);
        fprintf(stderr, "FG01 fixed (slice-local k fill, %s) D=%d: cosine %.6f, exact %s\n", level, all[i], c,
                exact ? "yes" : "no");
        cr_expect(exact, "local-k fill, D=%d must be exact", all[i]);
    }
}

Test(footgun, fg01_wrong_full_d_fill_then_fixed_emu) { wrong_then_fixed(0); }

Test(footgun, fg01_wrong_full_d_fill_then_fixed_sm90, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    wrong_then_fixed(1);
}

/* The same bug in stage A's own data flow (`stage_A --fault fill-full-d`): QK_FAULT_FILL_FULL_D
 * lays Q and K out in the seed's slices with the global-column fill; the correct flow is the
 * stage's whole-tile fill (one tile, descriptors advanced from one base). Integer inputs, so the
 * right S is exact and the reference is a plain loop. */
static void stage_a_run(unsigned faults, int d, double *cos_out, size_t *wrong_out, size_t *unwritten_out)
{
    const int n = 128;
    uint16_t *q = malloc(sizeof(uint16_t) * (size_t)n * d), *k = malloc(sizeof(uint16_t) * (size_t)n * d);
    float *s = malloc(sizeof(float) * n * n);
    double *ref = calloc((size_t)n * n, sizeof(double)), *got = malloc(sizeof(double) * n * n);
    rng_t r;
    rng_seed(&r, (uint64_t)(31 + d));
    for (int i = 0; i < n * d; i++) q[i] = f32_to_bf16((float)rng_int(&r, -3, 3));
    for (int i = 0; i < n * d; i++) k[i] = f32_to_bf16((float)rng_int(&r, -3, 3));
    poison_f32(s, (size_t)n * n);
    qk_params p = {q, k, s, 1, 1, n, n, d, 1.0f, NULL};
    char err[320];
    cr_assert_eq(qk_emu_run(&p, faults, err, sizeof err), 0, "%s", err);
    size_t wrong = 0, unwritten = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            for (int c = 0; c < d; c++) ref[i * n + j] += (double)bf16_to_f32(q[i * d + c]) * bf16_to_f32(k[j * d + c]);
            got[i * n + j] = s[i * n + j];
            unwritten += f32_bits(s[i * n + j]) == POISON_F32;
            wrong += got[i * n + j] != ref[i * n + j];
        }
    *cos_out = unwritten ? 0.0 : cosine(got, ref, n * n);
    *wrong_out = wrong;
    *unwritten_out = unwritten;
    free(q); free(k); free(s); free(ref); free(got);
}

Test(footgun, fg01_stage_a_fault_fill_full_d_then_fixed_emu)
{
    double c;
    size_t wrong, unwritten;
    stage_a_run(QK_FAULT_FILL_FULL_D, 16, &c, &wrong, &unwritten);
    fprintf(stderr, "FG01 broken (stage A --fault fill-full-d, emu) D=16: %zu of %d elements wrong, cosine %.6f\n",
            wrong, 128 * 128, c);
    cr_expect(wrong == 0 && unwritten == 0, "one K slice: the global column is the local one, S exact (the trap)");
    const int ds[3] = {32, 64, 128};
    for (int i = 0; i < 3; i++) {
        stage_a_run(QK_FAULT_FILL_FULL_D, ds[i], &c, &wrong, &unwritten);
        fprintf(stderr, "FG01 broken (stage A --fault fill-full-d, emu) D=%d: %zu of %d elements wrong, cosine %.6f\n",
                ds[i], wrong, 128 * 128, c);
        cr_expect(unwritten == 0 && wrong > 128 * 128 / 2 && c < 0.9, "D=%d: S wrong almost everywhere (%zu), cosine %.4f",
                  ds[i], wrong, c);
    }
    const int all[4] = {16, 32, 64, 128};
    for (int i = 0; i < 4; i++) {
        stage_a_run(0u, all[i], &c, &wrong, &unwritten);
        fprintf(stderr, "FG01 fixed (stage A's whole-tile fill, emu) D=%d: %zu of %d elements wrong, cosine %.6f\n", all[i],
                wrong, 128 * 128, c);
        cr_expect(wrong == 0 && unwritten == 0, "stage A's own fill, D=%d: S exact", all[i]);
    }
}
