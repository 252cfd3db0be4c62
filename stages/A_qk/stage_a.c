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
#include "host/stage_gpu.h"
#include "qk.h"

#define EMU_MAX_MACS (1L << 29) /* the host model does about 10^8 multiply-adds per second */

static int validate(const fmha_opts *o, char *err, size_t len)
{
    if (o->d < 16 || o->d > 256 || o->d % 16) {
        snprintf(err, len, "--d=%d: stage A needs a multiple of 16 in [16, 256] (one MMA consumes K = 16)", o->d);
        return 2;
    }
    if (cli_check_emu_budget(o, (double)o->b * o->hq * o->sq * o->skv * o->d, (double)EMU_MAX_MACS, err, len)) return 2;
    if ((double)o->b * o->hq * o->sq * o->skv > (double)(1L << 32)) {
        snprintf(err, len, "--b/--hq/--sq/--skv: S would hold more than 2^32 elements");
        return 2;
    }
    return 0;
}

typedef struct {
    qk_params p;
    backend_t backend;
} launch_ctx;

static int launch(void *ctx)
{
    launch_ctx *c = ctx;
    return c->backend == BACKEND_SM100 ? qk_sm100_launch(&c->p) : qk_sm90_launch(&c->p);
}

static int run_gpu(const fmha_opts *o, qk_params *hp, size_t nq, size_t nk, size_t ns, stage_result *r)
{
    launch_ctx c = {*hp, o->backend};
    stage_buf bufs[] = {{(void *)hp->q, nq * 2, 0, (void **)&c.p.q},
                        {(void *)hp->k, nk * 2, 0, (void **)&c.p.k},
                        {hp->s, ns * 4, 1, (void **)&c.p.s}};
    return stage_gpu_run("A", bufs, 3, &c.p.wd, launch, &c, o, r);
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
    rng_t rng;
    rng_seed(&rng, o->seed);
    /* int mode: values in [-2, 2], |S| <= 4 D <= 1024: exact in f32 */
    init_bf16(q, qv, nq, o->init, &rng, -2, 2);
    init_bf16(k, kv, nk, o->init, &rng, -2, 2);
    poison_f32(s, ns);
    const float scale = 1.0f / sqrtf((float)o->d);
    qk_params p = {q, k, s, o->b, o->hq, o->sq, o->skv, o->d, scale, NULL};

    int rc = 0;
    if (o->backend == BACKEND_EMU) {
        char err[320];
        rc = qk_emu_run(&p, QK_EPILOGUE_FOUR_WARPS, err, sizeof err);
        if (rc) fprintf(stderr, "stage A (emu): %s\n", err);
    } else {
        rc = run_gpu(o, &p, nq, nk, ns, r);
    }
    r->flops = 2.0 * (double)ns * o->d;
    r->bytes = 2.0 * (double)(nq + nk) + 4.0 * (double)ns;

    int qshape[4] = {o->b, o->hq, o->sq, o->d}, kshape[4] = {o->b, o->hq, o->skv, o->d}, sshape[4] = {o->b, o->hq, o->sq, o->skv};
    if (runner_dump(o, "A", "q_bf16bits", "<u2", qshape, 4, q, 2) || runner_dump(o, "A", "k_bf16bits", "<u2", kshape, 4, k, 2) ||
        runner_dump(o, "A", "s", "<f4", sshape, 4, s, 4))
        rc = 1;

    if (rc == 0 && o->check) {
        /* every element written? (all of S, cheap) */
        size_t unwritten = 0;
        for (size_t i = 0; i < ns; i++) unwritten += f32_bits(s[i]) == POISON_F32;
        size_t *rows;
        size_t nrows = check_rows_select(nrows_all, (double)o->skv * o->d, o->seed, &rows);
        check_rows(o, qv, kv, s, scale, rows, nrows, o->init == INIT_INT, r);
        if (unwritten) {
            r->passed = 0;
            size_t l = strlen(r->detail);
            snprintf(r->detail + l, sizeof r->detail - l, "; %zu of %zu elements of S never written", unwritten, ns);
        }
        free(rows);
    }
    free(q); free(k); free(qv); free(kv); free(s);
    return rc;
}

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
};
