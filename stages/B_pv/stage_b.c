/* Stage B glue: flags and rules, inputs, backend dispatch, verification, timing. Kernels in
 * pv_sm100.cu / pv_sm90.cu, the host-model flow in pv_emu.c.
 *
 * The scale is a power of two near 1/sqrt(D) (1/8 for D = 64, 1/16 for D = 128) so that with
 * --init int (inputs in [-1, 1]) S, P = bf16(scale S) and every partial sum of P V are exact in
 * f32: zero difference is then required against the reference that rounds P to bf16. With random
 * inputs the FlashAttention-3 rule applies (README, "How results are checked"): the kernel's max error against the exact
 * fp64 O = sum (scale S) V must be at most twice that of the reference that rounds P to bf16 the
 * way the kernel does, plus a small floor. */
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
#include "pv.h"

#define EMU_MAX_MACS (1L << 28)

static float stage_b_scale(int d) { return d == 64 ? 0.125f : 0.0625f; }

static int validate(const fmha_opts *o, char *err, size_t len)
{
    if (o->d != 64 && o->d != 128) {
        snprintf(err, len, "--d=%d: stage B supports D = 64 and 128 (the P V MMA's N is D)", o->d);
        return 2;
    }
    if (o->skv < 1) {
        /* with no KV tile the sm100 kernel would read O from TMEM it never wrote */
        snprintf(err, len, "--skv=%d: stage B needs at least one key (O = P V over an empty KV sequence has no MMA)",
                 o->skv);
        return 2;
    }
    if (cli_check_grid((o->sq + PV_BM - 1.0) / PV_BM, (double)o->b * o->hq, 1, "--sq", "--b x --hq", "-", err, len))
        return 2;
    return cli_check_emu_budget(o, 2.0 * o->b * o->hq * o->sq * (double)o->skv * o->d, (double)EMU_MAX_MACS, err, len);
}

extern const stage_def stage_B;

/* Reference rows: the exact O (P unrounded) and the one with P rounded to bf16 as the kernel does. */
static void reference_row(const fmha_opts *o, const float *qv, const float *kv, const float *vv, float scale,
                          size_t row, double *exact, double *rounded, double *srow)
{
    const int d = o->d, skv = o->skv;
    const size_t bh = row / (size_t)o->sq;
    const float *qr = qv + row * (size_t)d;
    for (int j = 0; j < skv; j++) {
        const float *kr = kv + (bh * (size_t)skv + (size_t)j) * d;
        double s = 0;
        for (int c = 0; c < d; c++) s += (double)qr[c] * kr[c];
        srow[j] = s;
    }
    for (int c = 0; c < d; c++) exact[c] = rounded[c] = 0;
    for (int j = 0; j < skv; j++) {
        const float *vr = vv + (bh * (size_t)skv + (size_t)j) * d;
        const double pe = srow[j] * (double)scale;
        const double pr = (double)bf16_round((float)srow[j] * scale);
        for (int c = 0; c < d; c++) {
            exact[c] += pe * vr[c];
            rounded[c] += pr * vr[c];
        }
    }
}

static void check(const fmha_opts *o, const float *qv, const float *kv, const float *vv, const float *out,
                  float scale, stage_result *r)
{
    const int d = o->d;
    const size_t nrows_all = (size_t)o->b * o->hq * o->sq, no = nrows_all * (size_t)d;
    size_t *rows;
    size_t nrows = check_rows_select(nrows_all, 2.0 * o->skv * d, o->seed, &rows);
    size_t n = nrows * (size_t)d;
    float *got = malloc(n * 4);
    double *exact = malloc(n * 8), *rounded = malloc(n * 8), *srow = malloc(sizeof(double) * (size_t)o->skv);
    float *rounded_f = malloc(n * 4);
    for (size_t i = 0; i < nrows; i++) {
        reference_row(o, qv, kv, vv, scale, rows[i], exact + i * d, rounded + i * d, srow);
        memcpy(got + i * d, out + rows[i] * (size_t)d, (size_t)d * 4);
    }
    for (size_t i = 0; i < n; i++) rounded_f[i] = (float)rounded[i];
    verify_report kern, emul;
    int dims[2] = {(int)nrows, d};
    const char *names[2] = {"checked_row", "c"};
    char summary[400];
    r->checked = 1;
    if (o->init == INIT_INT) {
        verify_f32(got, rounded, n, &kern); /* exact: P rounding reproduced, sums exact */
        r->passed = verify_exact_ok(&kern);
        verify_summary(&kern, dims, names, 2, summary, sizeof summary);
        snprintf(r->detail, sizeof r->detail, "check: exact rows %zu of %zu, %s; zero difference required", nrows,
                 nrows_all, summary);
    } else {
        double maxref = 0;
        for (size_t i = 0; i < n; i++) maxref = fmax(maxref, fabs(exact[i]));
        const double floor = 1e-6 + 1e-5 * maxref;
        verify_f32(got, exact, n, &kern);
        verify_f32(rounded_f, exact, n, &emul);
        r->passed = verify_attention_ok(&kern, &emul, floor);
        verify_summary(&kern, dims, names, 2, summary, sizeof summary);
        snprintf(r->detail, sizeof r->detail,
                 "check: rows %zu of %zu vs exact fp64, %s; bf16-P reference max_abs=%.3e; rule: kernel <= 2 x that + %.2e",
                 nrows, nrows_all, summary, emul.max_abs, floor);
    }
    r->rep = kern;
    r->err = kern.max_abs;
    result_note_unwritten(r, poison_count_f32(out, no), no, "O");
    free(rows); free(got); free(exact); free(rounded); free(rounded_f); free(srow);
}

static int run(const fmha_opts *o, stage_result *r)
{
    const size_t nq = (size_t)o->b * o->hq * o->sq * o->d, nkv = (size_t)o->b * o->hq * o->skv * o->d;
    uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2);
    float *qv = malloc(nq * 4), *kv = malloc(nkv * 4), *vv = malloc(nkv * 4), *out = malloc(nq * 4);
    if (!q || !k || !v || !qv || !kv || !vv || !out) { fprintf(stderr, "stage B: out of host memory\n"); return 1; }
    const int dev = stage_inputs_on_device(o); /* a timing run: inputs made on the GPU */
    if (!dev) {
        rng_t rng;
        rng_seed(&rng, o->seed);
        init_bf16(q, qv, nq, o->init, &rng, -1, 1);
        init_bf16(k, kv, nkv, o->init, &rng, -1, 1);
        init_bf16(v, vv, nkv, o->init, &rng, -1, 1);
        poison_f32(out, nq);
    }
    const float scale = stage_b_scale(o->d);
    pv_params p = {q, k, v, out, o->b, o->hq, o->sq, o->skv, o->d, scale, NULL};

    int rc;
    if (o->backend == BACKEND_EMU) {
        char err[320];
        rc = pv_emu_run(&p, o->fault_bits, err, sizeof err);
        if (err[0]) snprintf(r->model_msg, sizeof r->model_msg, "%s", err);
        if (rc) fprintf(stderr, "stage B (emu): %s\n", err);
    } else {
        pv_params dp = p; /* its pointers become device pointers */
        const buf_source in = dev ? BUF_DEVICE_BF16 : BUF_UPLOAD;
        stage_buf bufs[] = {{q, nq * 2, 0, (void **)&dp.q, in, -1, 1, 0, 0}, {k, nkv * 2, 0, (void **)&dp.k, in, -1, 1, 0, 0},
                            {v, nkv * 2, 0, (void **)&dp.v, in, -1, 1, 0, 0},
                            {out, nq * 4, 1, (void **)&dp.o, dev ? BUF_DEVICE_POISON32 : BUF_UPLOAD, 0, 0, 0, 0}};
        rc = stage_gpu_run(&stage_B, &dp, &dp.wd, bufs, 4, o, r);
    }
    r->flops = 4.0 * o->b * o->hq * (double)o->sq * o->skv * o->d; /* two GEMMs */
    r->bytes = 2.0 * (double)(nq + 2 * nkv) + 4.0 * (double)nq;

    const dump_item dumps[] = {{"q_bf16bits", "<u2", 4, {o->b, o->hq, o->sq, o->d}, q, 2},
                               {"k_bf16bits", "<u2", 4, {o->b, o->hq, o->skv, o->d}, k, 2},
                               {"v_bf16bits", "<u2", 4, {o->b, o->hq, o->skv, o->d}, v, 2},
                               {"o", "<f4", 4, {o->b, o->hq, o->sq, o->d}, out, 4}};
    if (runner_dump_list(o, "B", dumps, 4)) rc = 1;
    if (rc == 0 && o->check) check(o, qv, kv, vv, out, scale, r);
    free(q); free(k); free(v); free(qv); free(kv); free(vv); free(out);
    return rc;
}

/* The shape table. gpu: D {64, 128} (the tests pick one) x six shapes (one and two KV tiles,
 * Skv 4096 and 4097, tails, one query row, batch and heads) x exact and random inputs; gpu-quick
 * (the sanitizers) without the 4096-key rows. emu: D 64 and 128, exact and random, tails, batch.
 * bench: the two GEMMs of each non-causal prefill protocol shape (host/shape_table.h). */
static const char *const gpu_shapes[] = {
    "--sq 128 --skv 128", "--sq 128 --skv 256", "--sq 512 --skv 4096", "--sq 200 --skv 333",
    "--sq 1 --skv 1", "--sq 300 --skv 4097 --b 2 --hq 3",
};
static const char *const emu_rows[] = {
    "--init int --d 64 --sq 128 --skv 128",  "--init int --d 64 --sq 128 --skv 512 --b 2",
    "--init int --d 128 --sq 256 --skv 256", "--init int --d 128 --sq 113 --skv 1023",
    "--d 64 --sq 128 --skv 384 --seed 7",    "--d 128 --sq 200 --skv 129 --hq 3 --seed 8",
    "--d 64 --sq 1 --skv 3 --seed 9",
};

static int shapes(shape_suite suite, int i, char *args, size_t len)
{
    static const int ds[2] = {64, 128};
    static const char *const quick_skip[] = {"409", NULL};
    const int n = (int)(sizeof gpu_shapes / sizeof gpu_shapes[0]);
    switch (suite) {
    case SUITE_GPU: return shape_grid_row(ds, 2, gpu_shapes, n, NULL, 20, i, args, len);
    case SUITE_GPU_QUICK: return shape_grid_row(ds, 2, gpu_shapes, n, quick_skip, 20, i, args, len);
    case SUITE_EMU: return shape_list_row(emu_rows, (int)(sizeof emu_rows / sizeof emu_rows[0]), i, args, len);
    case SUITE_BENCH: return shape_bench_gemm_row(0, i, args, len);
    case SUITE_BENCH_QUICK: return shape_bench_gemm_row(1, i, args, len);
    default: return 0;
    }
}

/* The emu flow's switches (pv.h PV_FAULT_*), each the broken line of one footgun. */
static const stage_fault faults[] = {
    {"v-kmajor", "FG04", PV_FAULT_V_KMAJOR, BACKEND_BIT(BACKEND_EMU), "V described as K-major (idesc bit 16 = 0)",
     "--init int --sq 128 --skv 128"},
    {"accumulate-first", "FG05", PV_FAULT_ACCUMULATE_FIRST, BACKEND_BIT(BACKEND_EMU),
     "the first P V MMA accumulates onto stale TMEM", "--init int --sq 128 --skv 128"},
    {"v-advance-32b", "FG06", PV_FAULT_V_ADVANCE_32B, BACKEND_BIT(BACKEND_EMU),
     "MN-major V advanced +32 B per k16 step (the K-major rule)", "--init int --sq 128 --skv 128"},
    {"pack-swapped", "FG07", PV_FAULT_PACK_SWAPPED, BACKEND_BIT(BACKEND_EMU),
     "cvt.rn.bf16x2.f32 operands (even, odd): P pairs swapped", "--init int --sq 128 --skv 128"},
    {"store-16bit", "FG07", PV_FAULT_STORE_16BIT, BACKEND_BIT(BACKEND_EMU), "tcgen05.st asked to move 16-bit elements",
     "--init int --sq 128 --skv 128"},
    {"idesc-m-bit23", "FG03", PV_FAULT_IDESC_M_BIT23, BACKEND_BIT(BACKEND_EMU),
     "the P V instruction descriptor with M>>4 at bit 23: M = 128 reads back as 64", "--init int --sq 128 --skv 128"},
    {"idesc-n-bit-low", "FG03", PV_FAULT_IDESC_N_BIT_LOW, BACKEND_BIT(BACKEND_EMU),
     "the P V instruction descriptor with N>>3 one bit low: N = 64 reads back as 32", "--init int --sq 128 --skv 128"},
    {"p-offset-x2", "FG08", PV_FAULT_P_OFFSET_X2, BACKEND_BIT(BACKEND_EMU),
     "P's TMEM column offset counted in bf16 elements, not 32-bit columns", "--init int --sq 128 --skv 128"},
    {"nested-last-fastest", "FG09", PV_FAULT_P_NESTED_LAST_FASTEST, BACKEND_BIT(BACKEND_EMU),
     "P stored through its TMEM layout's nested mode read last sub-mode fastest, not colexicographically",
     "--init int --sq 128 --skv 128"},
};

const stage_def stage_B = {
    .letter = "B",
    .name = "B_pv",
    .title = "O = P V with identity softmax P = bf16(scale * Q K^T) (TS tcgen05.mma / RS wgmma / host model)",
    .accepts = 0,
    .backends = BACKEND_BIT(BACKEND_SM100) | BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_EMU),
    .defaults = {.b = 1, .hq = 2, .hkv = 2, .sq = 256, .skv = 512, .d = 64, .backend = BACKEND_AUTO,
                 .init = INIT_RAND, .seed = 1, .check = 1, .iters = 20, .warmup = 3},
    .validate = validate,
    .run = run,
    .launch_sm100 = stage_b_sm100_launch,
    .launch_sm90 = stage_b_sm90_launch,
    .shapes = shapes,
    .faults = faults,
    .nfaults = (int)(sizeof faults / sizeof faults[0]),
};
