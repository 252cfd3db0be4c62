/* Stage A glue: the stage's flags and rules, inputs, backend dispatch, verification and timing.
 * The kernels are in qk_sm100.cu / qk_sm90.cu, the host-model flow in qk_emu.c.
 *
 * Verification: S is compared element by element with an fp64 reference. With --init int the
 * inputs are small integers, every dot product is exact in f32 and the one rounding left is the
 * scale multiply, which the reference repeats in f32: zero difference is required. With random
 * inputs each element must lie within the worst-case bound of an f32 sum of D products,
 * scale * (D * 2^-24 * sum_d |q_d k_d|) + 2^-24 |S|, so the check can never flake. Large problems
 * are checked on a sample of rows (all elements are still checked for having been written). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/backend.h"
#include "host/bf16.h"
#include "host/check_rows.h"
#include "host/cli.h"
#include "host/init.h"
#include "host/rng.h"
#include "host/runner.h"
#include "host/shape_table.h"
#include "host/stage_gpu.h"
#include "qk.h"

#define EMU_MAX_MACS (1L << 29) /* the host model does about 10^8 multiply-adds per second */

static int validate(const fmha_opts *o, char *err, size_t len)
{
    if (o->d < 16 || o->d > 256 || o->d % 16) {
        snprintf(err, len, "--d=%d: stage A needs a multiple of 16 in [16, 256] (one MMA consumes K = 16)", o->d);
        return 2;
    }
    if (o->skv < 1) { /* a grid of no CTAs is a launch error, and an empty S has nothing to check */
        snprintf(err, len, "--skv=%d: stage A needs at least one key (S = Q K^T over no keys is empty)", o->skv);
        return 2;
    }
    if (cli_check_grid((o->skv + QK_BN - 1.0) / QK_BN, (o->sq + QK_BM - 1.0) / QK_BM, (double)o->b * o->hq, "--skv",
                       "--sq", "--b x --hq", err, len))
        return 2;
    if (cli_check_emu_budget(o, (double)o->b * o->hq * o->sq * o->skv * o->d, (double)EMU_MAX_MACS, err, len)) return 2;
    if ((double)o->b * o->hq * o->sq * o->skv > (double)(1L << 32)) {
        snprintf(err, len, "--b/--hq/--sq/--skv: S would hold more than 2^32 elements");
        return 2;
    }
    return 0;
}

extern const stage_def stage_A;

static int run_gpu(const fmha_opts *o, const qk_params *hp, size_t nq, size_t nk, size_t ns, stage_result *r)
{
    qk_params dp = *hp; /* its pointers become device pointers */
    const int dev = stage_inputs_on_device(o);
    stage_buf bufs[] = {{(void *)hp->q, nq * 2, 0, (void **)&dp.q, dev ? BUF_DEVICE_BF16 : BUF_UPLOAD, -2, 2, 0, 0},
                        {(void *)hp->k, nk * 2, 0, (void **)&dp.k, dev ? BUF_DEVICE_BF16 : BUF_UPLOAD, -2, 2, 0, 0},
                        {hp->s, ns * 4, 1, (void **)&dp.s, dev ? BUF_DEVICE_POISON32 : BUF_UPLOAD, 0, 0, 0, 0}};
    return stage_gpu_run(&stage_A, &dp, &dp.wd, bufs, 3, o, r);
}

/* Compare the rows in `rows` (flat row index over [B, H, Sq]) with the fp64 reference. */
static void check_rows(const fmha_opts *o, const float *qv, const float *kv, const float *s, float scale,
                       const size_t *rows, size_t nrows, int exact, stage_result *r)
{
    const int d = o->d, skv = o->skv;
    size_t n = nrows * (size_t)skv;
    float *out = malloc(n * sizeof(float));
    double *ref = malloc(n * sizeof(double));
    size_t beyond = 0;
    double worst_excess = 0;
    for (size_t i = 0; i < nrows; i++) {
        const size_t row = rows[i], bh = row / (size_t)o->sq;
        const float *qr = qv + row * (size_t)d;
        for (int j = 0; j < skv; j++) {
            const float *kr = kv + (bh * (size_t)skv + (size_t)j) * (size_t)d;
            double dot = 0, absdot = 0;
            for (int c = 0; c < d; c++) {
                dot += (double)qr[c] * kr[c];
                absdot += fabs((double)qr[c] * kr[c]);
            }
            double ref_v = exact ? (double)((float)dot * scale) : dot * (double)scale;
            size_t at = i * (size_t)skv + (size_t)j;
            out[at] = s[row * (size_t)skv + (size_t)j];
            ref[at] = ref_v;
            double bound = (double)scale * d * 0x1p-24 * absdot + 0x1p-24 * fabs(ref_v);
            double excess = fabs((double)out[at] - ref_v) - bound;
            if (!exact && (excess > 0 || out[at] != out[at])) {
                beyond++;
                if (excess > worst_excess) worst_excess = excess;
            }
        }
    }
    verify_f32(out, ref, n, &r->rep);
    r->checked = 1;
    r->err = r->rep.max_abs;
    r->passed = exact ? verify_exact_ok(&r->rep)
                      : (beyond == 0 && r->rep.unwritten == 0 && r->rep.nonfinite_mismatch == 0);
    char summary[400];
    int dims[2] = {(int)nrows, skv};
    const char *names[2] = {"checked_row", "j"};
    verify_summary(&r->rep, dims, names, 2, summary, sizeof summary);
    snprintf(r->detail, sizeof r->detail, "check: %s rows %zu of %zu, %s; %s", exact ? "exact" : "bounded",
             nrows, (size_t)o->b * o->hq * o->sq, summary,
             exact ? "zero difference required" : (beyond ? "elements beyond the f32 sum bound" : "all within the f32 sum bound"));
    free(out);
    free(ref);
}

static int run(const fmha_opts *o, stage_result *r)
{
    const size_t nq = (size_t)o->b * o->hq * o->sq * o->d, nk = (size_t)o->b * o->hq * o->skv * o->d;
    const size_t ns = (size_t)o->b * o->hq * o->sq * o->skv, nrows_all = (size_t)o->b * o->hq * o->sq;
    uint16_t *q = malloc(nq * 2), *k = malloc(nk * 2);
    float *qv = malloc(nq * 4), *kv = malloc(nk * 4), *s = malloc(ns * 4);
    if (!q || !k || !qv || !kv || !s) { fprintf(stderr, "stage A: out of host memory\n"); return 1; }
    const int on_device = stage_inputs_on_device(o); /* a timing run: inputs made on the GPU */
    if (!on_device) {
        rng_t rng;
        rng_seed(&rng, o->seed);
        /* int mode: values in [-2, 2], |S| <= 4 D <= 1024: exact in f32 */
        init_bf16(q, qv, nq, o->init, &rng, -2, 2);
        init_bf16(k, kv, nk, o->init, &rng, -2, 2);
        poison_f32(s, ns);
    }
    const float scale = 1.0f / sqrtf((float)o->d);
    qk_params p = {q, k, s, o->b, o->hq, o->sq, o->skv, o->d, scale, NULL};

    int rc = 0;
    if (o->backend == BACKEND_EMU) {
        char err[320];
        rc = qk_emu_run(&p, o->fault_bits, err, sizeof err);
        if (err[0]) snprintf(r->model_msg, sizeof r->model_msg, "%s", err);
        if (rc) fprintf(stderr, "stage A (emu): %s\n", err);
    } else {
        rc = run_gpu(o, &p, nq, nk, ns, r);
    }
    r->flops = 2.0 * (double)ns * o->d;
    r->bytes = 2.0 * (double)(nq + nk) + 4.0 * (double)ns;

    const dump_item dumps[] = {{"q_bf16bits", "<u2", 4, {o->b, o->hq, o->sq, o->d}, q, 2},
                               {"k_bf16bits", "<u2", 4, {o->b, o->hq, o->skv, o->d}, k, 2},
                               {"s", "<f4", 4, {o->b, o->hq, o->sq, o->skv}, s, 4}};
    if (runner_dump_list(o, "A", dumps, 3)) rc = 1;

    if (rc == 0 && o->check) {
        size_t *rows;
        size_t nrows = check_rows_select(nrows_all, (double)o->skv * o->d, o->seed, &rows);
        check_rows(o, qv, kv, s, scale, rows, nrows, o->init == INIT_INT, r);
        result_note_unwritten(r, poison_count_f32(s, ns), ns, "S"); /* every element written? (all of S) */
        free(rows);
    }
    free(q); free(k); free(qv); free(kv); free(s);
    return rc;
}

/* The shape table. gpu: D {64, 128, 256} (the tests pick one per run) x six shapes (square,
 * rectangular, long, tails both ways, one query row) x exact (integer) and random inputs; gpu-quick
 * (the sanitizers) the shapes without 1024 or 4096. emu: every head dim exact, tails, batch.
 * bench: the GEMM S = Q K^T of each non-causal prefill protocol shape (host/shape_table.h). */
static const char *const gpu_shapes[] = {
    "--sq 128 --skv 128", "--sq 256 --skv 1024", "--sq 1024 --skv 256", "--sq 4096 --skv 4096 --hq 1",
    "--sq 200 --skv 333", /* tails in both directions */
    "--sq 1 --skv 4097 --b 2",
};
static const char *const emu_rows[] = {
    "--init int --d 64 --sq 128 --skv 128",   "--init int --d 128 --sq 256 --skv 128 --b 2",
    "--init int --d 256 --sq 128 --skv 256",  "--init int --d 16 --sq 128 --skv 128",
    "--d 128 --sq 200 --skv 77 --seed 3",     "--d 64 --sq 1 --skv 1 --seed 4",
    "--d 64 --sq 129 --skv 257 --hq 3 --seed 5", "--init int --d 128 --sq 113 --skv 1023 --seed 6",
};

static int shapes(shape_suite suite, int i, char *args, size_t len)
{
    static const int ds[3] = {64, 128, 256};
    static const char *const quick_skip[] = {"4096", "1024", NULL};
    const int n = (int)(sizeof gpu_shapes / sizeof gpu_shapes[0]);
    switch (suite) {
    case SUITE_GPU: return shape_grid_row(ds, 3, gpu_shapes, n, NULL, 10, i, args, len);
    case SUITE_GPU_QUICK: return shape_grid_row(ds, 3, gpu_shapes, n, quick_skip, 10, i, args, len);
    case SUITE_EMU: return shape_list_row(emu_rows, (int)(sizeof emu_rows / sizeof emu_rows[0]), i, args, len);
    case SUITE_BENCH: return shape_bench_gemm_row(0, i, args, len);
    case SUITE_BENCH_QUICK: return shape_bench_gemm_row(1, i, args, len);
    default: return 0;
    }
}

static const stage_fault faults[] = {
    {"fill-full-d", "FG01", QK_FAULT_FILL_FULL_D, BACKEND_BIT(BACKEND_EMU),
     "Q and K in the seed's 16-column K slices, filled at the global column d, not the slice's d % 16",
     "--init int --sq 128 --skv 128 --d 64"},
    {"one-warp-epilogue", "FG02", QK_FAULT_ONE_WARP_EPILOGUE, BACKEND_BIT(BACKEND_EMU),
     "warp 0 alone reads all 128 TMEM lanes of S (the seed's T <= 32 kernel)", "--sq 128 --skv 128 --d 64"},
};

const stage_def stage_A = {
    .letter = "A",
    .name = "A_qk",
    .title = "S = scale * Q K^T on the tensor cores (tcgen05.mma / wgmma / host model)",
    .accepts = 0,
    .backends = BACKEND_BIT(BACKEND_SM100) | BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_EMU),
    .defaults = {.b = 1, .hq = 2, .hkv = 2, .sq = 256, .skv = 256, .d = 128, .backend = BACKEND_AUTO,
                 .init = INIT_RAND, .seed = 1, .check = 1, .iters = 20, .warmup = 3},
    .validate = validate,
    .run = run,
    .launch_sm100 = stage_a_sm100_launch,
    .launch_sm90 = stage_a_sm90_launch,
    .shapes = shapes,
    .faults = faults,
    .nfaults = (int)(sizeof faults / sizeof faults[0]),
};
