#include "host/attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "host/cli.h"
#include "host/check_rows.h"
#include "host/init.h"
#include "host/reference.h"
#include "host/rng.h"
#include "model/smem_layout.h"
#include "host/stage_gpu.h"
#include "host/verify.h"

/* Element strides of a [B, H, S, D] tensor stored BHSD or BSHD. */
static void strides(int bshd, int h, int s, int d, int64_t *sb, int64_t *sh, int64_t *ss)
{
    if (bshd) { *sb = (int64_t)s * h * d; *sh = d; *ss = (int64_t)h * d; }
    else { *sb = (int64_t)h * s * d; *sh = (int64_t)s * d; *ss = d; }
}

void attn_params_for(const fmha_opts *o, fmha_params *p)
{
    memset(p, 0, sizeof *p);
    const int d = o->d;
    strides(o->layout_bshd, o->hq, o->sq, d, &p->q_sb, &p->q_sh, &p->q_ss);
    strides(o->layout_bshd, o->hkv, o->skv, d, &p->k_sb, &p->k_sh, &p->k_ss);
    p->v_sb = p->k_sb; p->v_sh = p->k_sh; p->v_ss = p->k_ss;
    p->o_sb = p->q_sb; p->o_sh = p->q_sh; p->o_ss = p->q_ss;
    p->b = o->b; p->hq = o->hq; p->hkv = o->hkv; p->sq = o->sq; p->skv = o->skv; p->d = d;
    p->scale = 1.0f / sqrtf((float)d);
    p->causal = o->causal;
}

int attn_problem_make(const fmha_opts *o, attn_problem *ap)
{
    memset(ap, 0, sizeof *ap);
    const int d = o->d;
    fmha_params *p = &ap->p;
    attn_params_for(o, p);
    ap->nq = (size_t)o->b * o->hq * o->sq * d;
    ap->nkv = (size_t)o->b * o->hkv * o->skv * d;
    ap->nlse = (size_t)o->b * o->hq * o->sq;
    ap->q = malloc(ap->nq * 2); ap->k = malloc(ap->nkv * 2); ap->v = malloc(ap->nkv * 2);
    ap->o = malloc(ap->nq * 2); ap->lse = malloc(ap->nlse * 4);
    if (!ap->q || !ap->k || !ap->v || !ap->o || !ap->lse) {
        fprintf(stderr, "attention inputs: out of host memory\n");
        attn_problem_free(ap);
        return 1;
    }
    ap->on_device = stage_inputs_on_device(o);
    if (!ap->on_device) { /* a timing run makes them on the device instead (attn_run_gpu) */
        rng_t rng;
        rng_seed(&rng, o->seed);
        init_bf16(ap->q, NULL, ap->nq, o->init, &rng, -2, 2);
        init_bf16(ap->k, NULL, ap->nkv, o->init, &rng, -2, 2);
        init_bf16(ap->v, NULL, ap->nkv, o->init, &rng, -2, 2);
        poison_bf16(ap->o, ap->nq);
        poison_f32(ap->lse, ap->nlse);
    }
    p->q = ap->q; p->k = ap->k; p->v = ap->v; p->o = ap->o; p->lse = ap->lse;
    return 0;
}

void attn_problem_free(attn_problem *ap)
{
    free(ap->q); free(ap->k); free(ap->v); free(ap->o); free(ap->lse);
    ap->q = ap->k = ap->v = ap->o = NULL;
    ap->lse = NULL;
}

int attn_run_gpu(const stage_def *st, const fmha_opts *o, attn_problem *ap, stage_result *r)
{
    fmha_params dp = ap->p; /* its pointers become device pointers */
    stage_buf bufs[] = {{ap->q, ap->nq * 2, 0, (void **)&dp.q, 0, 0, 0, 0, 0}, {ap->k, ap->nkv * 2, 0, (void **)&dp.k, 0, 0, 0, 0, 0},
                        {ap->v, ap->nkv * 2, 0, (void **)&dp.v, 0, 0, 0, 0, 0}, {ap->o, ap->nq * 2, 1, (void **)&dp.o, 0, 0, 0, 0, 0},
                        {ap->lse, ap->nlse * 4, 1, (void **)&dp.lse, 0, 0, 0, 0, 0}};
    if (ap->on_device) {
        const buf_source src[5] = {BUF_DEVICE_BF16, BUF_DEVICE_BF16, BUF_DEVICE_BF16, BUF_DEVICE_POISON16, BUF_DEVICE_POISON32};
        for (int i = 0; i < 5; i++) {
            bufs[i].src = src[i];
            bufs[i].int_lo = -2; /* the host's --init int range */
            bufs[i].int_hi = 2;
        }
    }
    return stage_gpu_run(st, &dp, &dp.wd, bufs, 5, o, r);
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

void attn_check(const fmha_opts *o, const attn_problem *ap, stage_result *r)
{
    const fmha_params *p = &ap->p;
    const int d = o->d;
    float *qv = logical(ap->q, o->b, o->hq, o->sq, d, p->q_sb, p->q_sh, p->q_ss);
    float *kv = logical(ap->k, o->b, o->hkv, o->skv, d, p->k_sb, p->k_sh, p->k_ss);
    float *vv = logical(ap->v, o->b, o->hkv, o->skv, d, p->v_sb, p->v_sh, p->v_ss);
    const attn_shape sh = {o->b, o->hq, o->hkv, o->sq, o->skv, d, p->scale, o->causal};
    const size_t nrows_all = ap->nlse;
    const size_t unwritten = poison_count_bf16(ap->o, ap->nq) + poison_count_f32(ap->lse, ap->nlse);
    size_t *rows;
    const size_t nrows = check_rows_select(nrows_all, 4.0 * o->skv * d, o->seed, &rows);
    const size_t n = nrows * (size_t)d;
    /* A row max that lags (stage F's --rescale-th N > 0) rounds P at scales where its largest value
     * is not 1 as well as where it is (a tile that moves the max), and which scales is the kernel's
     * business: the yardstick is then the worst of the rounding references at the max and at seven
     * scales off it (reference.h, REF_P_BF16_OFF_MAX). */
    const int lag = p->pipe.rescale_th > 0.0f;
    float *got = malloc(n * 4), *emu_f = malloc(n * 4), *off_f = lag ? malloc(REF_P_OFF_SCALES * n * 4) : NULL;
    double *exact = malloc(n * 8), *emu = malloc(n * 8), *scores = malloc(sizeof(double) * (size_t)o->skv);
    double *off = lag ? malloc(sizeof(double) * (size_t)d) : NULL;
    size_t lse_bad = 0;
    double lse_worst = 0;
    for (size_t k = 0; k < nrows; k++) {
        const int b = (int)(rows[k] / ((size_t)o->hq * o->sq)), h = (int)(rows[k] / o->sq % o->hq), i = (int)(rows[k] % o->sq);
        double lse_ref, lse_emu;
        ref_attention_row(&sh, qv, kv, vv, b, h, i, REF_P_EXACT, scores, exact + k * d, &lse_ref);
        ref_attention_row(&sh, qv, kv, vv, b, h, i, REF_P_BF16, scores, emu + k * d, &lse_emu);
        for (int v = 0; lag && v < REF_P_OFF_SCALES; v++) { /* P rounded off the max: O rounded as the kernel's */
            ref_attention_row(&sh, qv, kv, vv, b, h, i, REF_P_BF16_OFF_MAX + v, scores, off, NULL);
            for (int e = 0; e < d; e++) off_f[v * n + k * d + e] = bf16_round((float)off[e]);
        }
        const uint16_t *orow = ap->o + b * p->o_sb + h * p->o_sh + (int64_t)i * p->o_ss;
        for (int e = 0; e < d; e++) {
            got[k * d + e] = orow[e] == POISON_BF16 ? bits_f32(POISON_F32) : bf16_to_f32(orow[e]);
            emu_f[k * d + e] = bf16_round((float)emu[k * d + e]); /* the kernel's output rounding */
        }
        const float lse_k = ap->lse[((size_t)b * o->hq + h) * o->sq + i];
        const double tol = 2e-4 * fmax(1.0, fabs(lse_ref));
        const int ok = isinf(lse_ref) ? (isinf(lse_k) && lse_k < 0) : fabs(lse_k - lse_ref) <= tol;
        if (!ok) {
            if (lse_bad++ == 0 || fabs(lse_k - lse_ref) > lse_worst) lse_worst = fabs(lse_k - lse_ref);
        }
    }
    verify_report kern, emul;
    verify_f32(got, exact, n, &kern);
    verify_f32(emu_f, exact, n, &emul);
    for (int v = 0; lag && v < REF_P_OFF_SCALES; v++) {
        verify_report offr;
        verify_f32(off_f + v * n, exact, n, &offr);
        if (offr.max_abs > emul.max_abs) emul = offr;
    }
    const double floor = 1e-5;
    r->checked = 1;
    r->rep = kern;
    r->err = kern.max_abs;
    r->passed = verify_attention_ok(&kern, &emul, floor) && lse_bad == 0;
    int dims[2] = {(int)nrows, d};
    const char *names[2] = {"checked_row", "c"};
    char summary[400];
    verify_summary(&kern, dims, names, 2, summary, sizeof summary);
    snprintf(r->detail, sizeof r->detail,
             "check: rows %zu of %zu vs exact fp64, %s; rounding reference max_abs=%.3e%s (rule: <= 2x + %.0e); "
             "LSE mismatches %zu (worst %.3e)",
             nrows, nrows_all, summary, emul.max_abs, lag ? " (the worst of P rounded at the max and at 7 scales off it: the max lags)" : "",
             floor, lse_bad, lse_worst);
    result_note_unwritten(r, unwritten, ap->nq + ap->nlse, "O and LSE");
    free(rows); free(got); free(emu_f); free(off_f); free(exact); free(emu); free(off); free(scores);
    free(qv); free(kv); free(vv);
}

void attn_counts(const fmha_opts *o, const attn_problem *ap, stage_result *r)
{
    double pairs = 0;
    for (int i = 0; i < o->sq; i++) {
        long last = o->causal ? (long)i + (o->skv - o->sq) : o->skv - 1;
        if (last > o->skv - 1) last = o->skv - 1;
        if (last >= 0) pairs += (double)(last + 1);
    }
    r->flops = 4.0 * o->b * o->hq * pairs * o->d;
    r->bytes = 2.0 * (double)(2 * ap->nq + 2 * ap->nkv) + 4.0 * (double)ap->nlse;
}

int attn_dump(const fmha_opts *o, const char *stage, const attn_problem *ap)
{
    const int lay = o->layout_bshd;
    const dump_item items[] = {
        {"q_bf16bits_in_layout", "<u2", 4, {o->b, lay ? o->sq : o->hq, lay ? o->hq : o->sq, o->d}, ap->q, 2},
        {"k_bf16bits_in_layout", "<u2", 4, {o->b, lay ? o->skv : o->hkv, lay ? o->hkv : o->skv, o->d}, ap->k, 2},
        {"v_bf16bits_in_layout", "<u2", 4, {o->b, lay ? o->skv : o->hkv, lay ? o->hkv : o->skv, o->d}, ap->v, 2},
        {"o_bf16bits_in_layout", "<u2", 4, {o->b, lay ? o->sq : o->hq, lay ? o->hq : o->sq, o->d}, ap->o, 2},
        {"lse", "<f4", 3, {o->b, o->hq, o->sq, 0}, ap->lse, 4},
    };
    return runner_dump_list(o, stage, items, (int)(sizeof items / sizeof items[0]));
}

#define ATTN_EMU_MAX_MACS (1L << 28)

int attn_validate(const fmha_opts *o, const char *stage, uint32_t smem_bytes, char *err, size_t len)
{
    if (o->d != 64 && o->d != 128 && o->d != 256) {
        snprintf(err, len, "--d=%d: stage %s supports D = 64, 128 and 256", o->d, stage);
        return 2;
    }
    if (o->skv < 1) {
        snprintf(err, len, "--skv=%d: stage %s needs at least one key (an empty KV sequence has no softmax)", o->skv, stage);
        return 2;
    }
    if (smem_bytes > SMEM_OPTIN_MAX_BYTES) {
        snprintf(err, len, "--d=%d: the CTA's SMEM (%u bytes) exceeds the %u-byte opt-in limit", o->d, smem_bytes,
                 SMEM_OPTIN_MAX_BYTES);
        return 2;
    }
    if (cli_check_grid((o->sq + FMHA_BM - 1.0) / FMHA_BM, o->hq, o->b, "--sq", "--hq", "--b", err, len)) return 2;
    return cli_check_emu_budget(o, 2.0 * o->b * o->hq * o->sq * (double)o->skv * o->d, (double)ATTN_EMU_MAX_MACS, err, len);
}
