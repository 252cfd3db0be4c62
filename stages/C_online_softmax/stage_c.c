/* Stage C glue: flags and rules, inputs in the chosen layout (BHSD or BSHD, by strides), backend
 * dispatch, verification, timing. Kernels in fmha_sm100.cu / fmha_sm90.cu, the host-model flow in
 * fmha_emu.c.
 *
 * Verification (DESIGN.md 5, the FlashAttention-3 rule): on every checked row, the kernel's max abs
 * error against the exact fp64 attention must be at most twice the error of a reference that
 * rounds where the kernel rounds (P to bf16 before P V, O to bf16 at the end) plus a floor of 1e-5.
 * NaN/Inf positions must match (a fully masked row is O = 0, never NaN). LSE is checked on its own:
 * within 2e-4 * max(1, |LSE|), and -inf exactly where a row sees no key. Every element of O and LSE
 * must have been written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/backend.h"
#include "host/bf16.h"
#include "host/check_rows.h"
#include "host/cli.h"
#include "host/init.h"
#include "host/reference.h"
#include "host/rng.h"
#include "host/runner.h"
#include "host/stage_gpu.h"
#include "fmha.h"

#define EMU_MAX_MACS (1L << 28)

static int validate(const fmha_opts *o, char *err, size_t len)
{
    if (o->d != 64 && o->d != 128 && o->d != 256) {
        snprintf(err, len, "--d=%d: stage C supports D = 64, 128 and 256", o->d);
        return 2;
    }
    if (o->skv < 1) {
        snprintf(err, len, "--skv=%d: stage C needs at least one key (an empty KV sequence has no softmax)", o->skv);
        return 2;
    }
    return cli_check_emu_budget(o, 2.0 * o->b * o->hq * o->sq * (double)o->skv * o->d, (double)EMU_MAX_MACS, err, len);
}

typedef struct {
    fmha_params p;
    backend_t backend;
} launch_ctx;

static int launch(void *ctx)
{
    launch_ctx *c = ctx;
    return c->backend == BACKEND_SM100 ? fmha_sm100_launch(&c->p) : fmha_sm90_launch(&c->p);
}

/* Element strides of a [B, H, S, D] tensor stored BHSD or BSHD. */
static void strides(int bshd, int h, int s, int d, int64_t *sb, int64_t *sh, int64_t *ss)
{
    if (bshd) { *sb = (int64_t)s * h * d; *sh = d; *ss = (int64_t)h * d; }
    else { *sb = (int64_t)h * s * d; *sh = (int64_t)s * d; *ss = d; }
}

/* Logical [B, H, S, D] f32 values of a strided bf16 tensor (what the reference reads). */
static float *logical(const uint16_t *x, int b, int h, int s, int d, int64_t sb, int64_t sh, int64_t ss)
{
    float *out = malloc(sizeof(float) * (size_t)b * h * s * d);
    size_t i = 0;
    for (int bi = 0; bi < b; bi++)
        for (int hi = 0; hi < h; hi++)
            for (int si = 0; si < s; si++)
                for (int di = 0; di < d; di++) out[i++] = bf16_to_f32(x[bi * sb + hi * sh + si * ss + di]);
    return out;
}

static void check(const fmha_opts *o, const fmha_params *p, const float *qv, const float *kv, const float *vv,
                  stage_result *r)
{
    const int d = o->d;
    const attn_shape sh = {o->b, o->hq, o->hkv, o->sq, o->skv, d, p->scale, o->causal};
    const size_t nrows_all = (size_t)o->b * o->hq * o->sq;
    size_t unwritten = 0;
    for (int b = 0; b < o->b; b++)
        for (int h = 0; h < o->hq; h++)
            for (int i = 0; i < o->sq; i++) {
                const uint16_t *orow = p->o + b * p->o_sb + h * p->o_sh + (int64_t)i * p->o_ss;
                for (int e = 0; e < d; e++) unwritten += orow[e] == POISON_BF16;
                unwritten += f32_bits(p->lse[((size_t)b * o->hq + h) * o->sq + i]) == POISON_F32;
            }
    size_t *rows;
    const size_t nrows = check_rows_select(nrows_all, 4.0 * o->skv * d, o->seed, &rows);
    const size_t n = nrows * (size_t)d;
    float *got = malloc(n * 4), *emu_f = malloc(n * 4);
    double *exact = malloc(n * 8), *emu = malloc(n * 8), *scores = malloc(sizeof(double) * (size_t)o->skv);
    size_t lse_bad = 0;
    double lse_worst = 0;
    for (size_t k = 0; k < nrows; k++) {
        const int b = (int)(rows[k] / ((size_t)o->hq * o->sq)), h = (int)(rows[k] / o->sq % o->hq), i = (int)(rows[k] % o->sq);
        double lse_ref, lse_emu;
        ref_attention_row(&sh, qv, kv, vv, b, h, i, 0, scores, exact + k * d, &lse_ref);
        ref_attention_row(&sh, qv, kv, vv, b, h, i, 1, scores, emu + k * d, &lse_emu);
        const uint16_t *orow = p->o + b * p->o_sb + h * p->o_sh + (int64_t)i * p->o_ss;
        for (int e = 0; e < d; e++) {
            got[k * d + e] = orow[e] == POISON_BF16 ? bits_f32(POISON_F32) : bf16_to_f32(orow[e]);
            emu_f[k * d + e] = bf16_round((float)emu[k * d + e]); /* the kernel's output rounding */
        }
        const float lse_k = p->lse[((size_t)b * o->hq + h) * o->sq + i];
        const double tol = 2e-4 * fmax(1.0, fabs(lse_ref));
        const int ok = isinf(lse_ref) ? (isinf(lse_k) && lse_k < 0) : fabs(lse_k - lse_ref) <= tol;
        if (!ok) {
            if (lse_bad++ == 0 || fabs(lse_k - lse_ref) > lse_worst) lse_worst = fabs(lse_k - lse_ref);
        }
    }
    verify_report kern, emul;
    verify_f32(got, exact, n, &kern);
    verify_f32(emu_f, exact, n, &emul);
    const double floor = 1e-5;
    r->checked = 1;
    r->rep = kern;
    r->err = kern.max_abs;
    r->passed = verify_attention_ok(&kern, &emul, floor) && unwritten == 0 && lse_bad == 0;
    int dims[2] = {(int)nrows, d};
    const char *names[2] = {"checked_row", "c"};
    char summary[400];
    verify_summary(&kern, dims, names, 2, summary, sizeof summary);
    snprintf(r->detail, sizeof r->detail,
             "check: rows %zu of %zu vs exact fp64, %s; rounding reference max_abs=%.3e (rule: <= 2x + %.0e); "
             "LSE mismatches %zu (worst %.3e); unwritten O/LSE elements %zu",
             nrows, nrows_all, summary, emul.max_abs, floor, lse_bad, lse_worst, unwritten);
    free(rows); free(got); free(emu_f); free(exact); free(emu); free(scores);
}

/* Multiply-adds of the unmasked score pairs, exactly (causal with Sq != Skv included). */
static double visible_pairs(const fmha_opts *o)
{
    double pairs = 0;
    for (int i = 0; i < o->sq; i++) {
        long last = o->causal ? (long)i + (o->skv - o->sq) : o->skv - 1;
        if (last > o->skv - 1) last = o->skv - 1;
        if (last >= 0) pairs += (double)(last + 1);
    }
    return pairs;
}

static int run(const fmha_opts *o, stage_result *r)
{
    const int d = o->d;
    const size_t nq = (size_t)o->b * o->hq * o->sq * d, nkv = (size_t)o->b * o->hkv * o->skv * d;
    const size_t nlse = (size_t)o->b * o->hq * o->sq;
    fmha_params p;
    memset(&p, 0, sizeof p);
    strides(o->layout_bshd, o->hq, o->sq, d, &p.q_sb, &p.q_sh, &p.q_ss);
    strides(o->layout_bshd, o->hkv, o->skv, d, &p.k_sb, &p.k_sh, &p.k_ss);
    p.v_sb = p.k_sb; p.v_sh = p.k_sh; p.v_ss = p.k_ss;
    p.o_sb = p.q_sb; p.o_sh = p.q_sh; p.o_ss = p.q_ss;
    p.b = o->b; p.hq = o->hq; p.hkv = o->hkv; p.sq = o->sq; p.skv = o->skv; p.d = d;
    p.scale = 1.0f / sqrtf((float)d);
    p.causal = o->causal;
    uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2), *out = malloc(nq * 2);
    float *lse = malloc(nlse * 4);
    if (!q || !k || !v || !out || !lse) { fprintf(stderr, "stage C: out of host memory\n"); return 1; }
    rng_t rng;
    rng_seed(&rng, o->seed);
    init_bf16(q, NULL, nq, o->init, &rng, -2, 2);
    init_bf16(k, NULL, nkv, o->init, &rng, -2, 2);
    init_bf16(v, NULL, nkv, o->init, &rng, -2, 2);
    poison_bf16(out, nq);
    poison_f32(lse, nlse);
    p.q = q; p.k = k; p.v = v; p.o = out; p.lse = lse;

    int rc;
    if (o->backend == BACKEND_EMU) {
        char err[320];
        rc = fmha_emu_run(&p, err, sizeof err);
        if (rc) fprintf(stderr, "stage C (emu): %s\n", err);
    } else {
        launch_ctx c = {p, o->backend};
        stage_buf bufs[] = {{q, nq * 2, 0, (void **)&c.p.q}, {k, nkv * 2, 0, (void **)&c.p.k},
                            {v, nkv * 2, 0, (void **)&c.p.v}, {out, nq * 2, 1, (void **)&c.p.o},
                            {lse, nlse * 4, 1, (void **)&c.p.lse}};
        rc = stage_gpu_run("C", bufs, 5, &c.p.wd, launch, &c, o, r);
    }
    r->flops = 4.0 * o->b * o->hq * visible_pairs(o) * d;
    r->bytes = 2.0 * (double)(2 * nq + 2 * nkv) + 4.0 * (double)nlse;

    int qs[4] = {o->b, o->hq, o->sq, d}, ls[3] = {o->b, o->hq, o->sq};
    if (runner_dump(o, "C", "o_bf16bits_in_layout", "<u2", qs, 4, out, 2) || runner_dump(o, "C", "lse", "<f4", ls, 3, lse, 4))
        rc = 1;
    if (rc == 0 && o->check) {
        float *qv = logical(q, o->b, o->hq, o->sq, d, p.q_sb, p.q_sh, p.q_ss);
        float *kv = logical(k, o->b, o->hkv, o->skv, d, p.k_sb, p.k_sh, p.k_ss);
        float *vv = logical(v, o->b, o->hkv, o->skv, d, p.v_sb, p.v_sh, p.v_ss);
        check(o, &p, qv, kv, vv, r);
        free(qv); free(kv); free(vv);
    }
    free(q); free(k); free(v); free(out); free(lse);
    return rc;
}

const stage_def stage_C = {
    .letter = "C",
    .name = "C_online_softmax",
    .title = "attention forward with online softmax, causal mask, GQA/MQA, LSE (one synchronous pipeline)",
    .accepts = OPT_HKV | OPT_CAUSAL | OPT_LAYOUT,
    .backends = BACKEND_BIT(BACKEND_SM100) | BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_EMU),
    .defaults = {.b = 1, .hq = 4, .hkv = 2, .sq = 256, .skv = 256, .d = 64, .backend = BACKEND_AUTO,
                 .init = INIT_RAND, .seed = 1, .check = 1, .iters = 20, .warmup = 3},
    .validate = validate,
    .run = run,
};
