#include "host/decode.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "host/check_rows.h"
#include "host/cta_timeline.h"
#include "host/cli.h"
#include "host/fp8.h"
#include "host/fp8_attention.h"
#include "host/init.h"
#include "host/rng.h"
#include "host/stage_gpu.h"
#include "host/verify.h"
#include "model/smem_layout.h"

#define DEC_SPARE_PAGES 3          /* unused, poisoned pages in every cache: a stray page index reads NaN */
#define DEC_EMU_MAX_MACS (1L << 28) /* the host model's budget (cli_check_emu_budget) */
/* FG19's per-tensor scale: calibrated on data with |x| <= 2, so larger values overflow e4m3 */
#define DEC_FG19_TENSOR_SCALE (2.0f / 448.0f)

/* The block table's shuffle: the same seed in validate and make, so validate checks the table the
 * run builds. */
static uint64_t table_seed(const fmha_opts *o) { return o->seed * 0x9E3779B97F4A7C15ull + 0x7AB1Eull; }

int dec_lengths(const fmha_opts *o, int32_t *lens, char *err, size_t len)
{
    if (o->seqlens[0]) {
        const char *s = o->seqlens;
        int n = 0;
        while (*s) {
            char *end;
            errno = 0;
            const long x = strtol(s, &end, 10);
            if (end == s || errno || (*end && *end != ',')) {
                snprintf(err, len, "--seqlens=%s: not a comma-separated list of integers", o->seqlens);
                return 2;
            }
            if (x < 1) {
                snprintf(err, len, "--seqlens: length %ld of sequence %d: every sequence needs at least one token", x, n);
                return 2;
            }
            if (x > (1L << 24)) {
                snprintf(err, len, "--seqlens: length %ld of sequence %d: must be <= %d", x, n, 1 << 24);
                return 2;
            }
            if (n < o->b) lens[n] = (int32_t)x;
            n++;
            s = *end ? end + 1 : end;
        }
        if (n != o->b) {
            snprintf(err, len, "--seqlens: %d lengths for --b=%d: give one length per sequence", n, o->b);
            return 2;
        }
        return 0;
    }
    if (o->skv < 1) {
        snprintf(err, len, "--skv=%d: every sequence needs at least one token", o->skv);
        return 2;
    }
    rng_t r;
    rng_seed(&r, o->seed ^ 0x5E91E75ull);
    for (int b = 0; b < o->b; b++) lens[b] = o->ragged ? rng_int(&r, 1, o->skv) : o->skv;
    if (o->ragged && o->b > 1) { /* the extremes are always there */
        lens[0] = 1;
        lens[o->b - 1] = o->skv;
    }
    return 0;
}

static int max_of(const int32_t *x, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

int dec_kv_tma_of(const fmha_opts *o)
{
    return dec_kv_tma_resolve(o->kv_tma, o->backend == BACKEND_SM90, o->ring, o->page, o->fault_bits);
}

/* The shape part of the parameters (no buffers, splits not chosen yet). */
static void shape_params(const fmha_opts *o, int bm, const paged_kv *c, dec_params *p)
{
    memset(p, 0, sizeof *p);
    p->b = o->b; p->hq = o->hq; p->hkv = o->hkv; p->sq = o->sq; p->d = o->d;
    p->page = o->page; p->num_pages = c->num_pages; p->max_pages = c->max_pages;
    p->max_len = max_of(c->seqlens, o->b);
    p->splits = 1;
    p->bm = bm;
    p->ring = o->ring;
    p->overlap = o->overlap > 0 && o->ring > 0;
    p->prefetch = o->prefetch;
    p->fair = o->fair;
    p->persistent = o->persistent > 0;
    p->kv_tma = dec_kv_tma_of(o);
    p->scale = 1.0f / sqrtf((float)o->d);
    p->faults = o->fault_bits;
}

/* The FG18 variant's table: one entry of the last sequence past the end of the cache. */
static void corrupt_table(paged_kv *c)
{
    const int b = c->b - 1, pages = (c->seqlens[b] + c->page_size - 1) / c->page_size;
    c->block_table[(size_t)b * c->max_pages + pages - 1] = c->num_pages + 2;
}

int dec_validate(const fmha_opts *o, const char *stage, int bm, uint32_t smem_bytes, char *err, size_t len)
{
    if (o->d != 64 && o->d != 128 && o->d != 256) {
        snprintf(err, len, "--d=%d: stage %s supports D = 64, 128 and 256", o->d, stage);
        return 2;
    }
    if (o->page != 16 && o->page != 32 && o->page != 64 && o->page != 128 && o->page != 256) {
        snprintf(err, len, "--page=%d: the page size must be 16, 32, 64, 128 or 256 tokens", o->page);
        return 2;
    }
    if (o->splits > DEC_MAX_SPLITS) {
        snprintf(err, len, "--splits=%d: at most %d CTAs share one sequence's keys", o->splits, DEC_MAX_SPLITS);
        return 2;
    }
    int32_t *lens = malloc(sizeof(int32_t) * (size_t)o->b);
    if (!lens) { snprintf(err, len, "out of host memory"); return 2; }
    int rc = dec_lengths(o, lens, err, len);
    paged_kv c;
    memset(&c, 0, sizeof c);
    if (rc == 0) {
        rng_t r;
        rng_seed(&r, table_seed(o));
        if (paged_kv_layout(&c, o->b, o->hkv, o->d, o->page, lens, DEC_SPARE_PAGES, &r)) {
            snprintf(err, len, "out of host memory");
            rc = 2;
        } else {
            rc = paged_kv_validate(&c, err, len) ? 2 : 0;
        }
    }
    if (rc == 0 && smem_bytes > SMEM_OPTIN_MAX_BYTES) {
        snprintf(err, len, "--d=%d: the CTA's SMEM (%u bytes) exceeds the %u-byte opt-in limit", o->d, smem_bytes,
                 SMEM_OPTIN_MAX_BYTES);
        rc = 2;
    }
    if (rc == 0) {
        dec_params p;
        shape_params(o, bm, &c, &p);
        const int splits = o->splits ? o->splits : DEC_MAX_SPLITS; /* auto's worst case */
        rc = cli_check_grid((double)dec_m_tiles(&p) * splits, o->hkv, o->b, "--hq/--sq/--splits", "--hkv", "--b", err, len);
        double macs = 0; /* what the host model multiplies: padded rows x keys x D, both MMAs */
        for (int b = 0; rc == 0 && b < o->b; b++) macs += 2.0 * dec_m_tiles(&p) * bm * (double)lens[b] * o->d * o->hkv;
        if (rc == 0) rc = cli_check_emu_budget(o, macs, (double)DEC_EMU_MAX_MACS, err, len);
    }
    paged_kv_free(&c);
    free(lens);
    return rc;
}

int dec_splits_for(const fmha_opts *o, const dec_params *shape, int slots)
{
    return o->splits ? o->splits : dec_auto_splits(shape, slots);
}

/* Token t's D values of one KV head before quantisation, by --init mode. rand: N(0, 1) times a
 * magnitude 2^u per token and head (u uniform in [-2, 2]), so the per-token scales differ. */
static void token_values(init_t mode, rng_t *r, int t, int d, float *x)
{
    const double mag = exp2(4.0 * rng_uniform(r) - 2.0);
    for (int e = 0; e < d; e++) {
        switch (mode) {
        case INIT_INT: x[e] = (float)rng_int(r, -3, 3); break;
        case INIT_RAMP: x[e] = (float)((t * 7 + e) % 17 - 8) / 8.0f; break;
        case INIT_ONES: x[e] = 1.0f; break;
        default: x[e] = (float)(mag * rng_normal(r)); break;
        }
    }
}

/* Every token in use, quantised into its slot: per-token absmax scales with saturation, or (FG19)
 * one per-tensor scale without. */
static void fill_cache(const fmha_opts *o, paged_kv *c, rng_t *r)
{
    const int d = c->d, nosat = (o->fault_bits & DEC_FAULT_NO_SATURATION) != 0;
    float *x = malloc(sizeof(float) * (size_t)d);
    for (int b = 0; b < c->b; b++)
        for (int t = 0; t < c->seqlens[b]; t++)
            for (int h = 0; h < c->hkv; h++)
                for (int which = 0; which < 2; which++) {
                    token_values(o->init, r, t, d, x);
                    const size_t row = paged_kv_row(c, b, t, h);
                    e4m3_quantise_rows(x, 1, (size_t)d, nosat ? DEC_FG19_TENSOR_SCALE : 0.0f, !nosat,
                                       (which ? c->v : c->k) + row * d, (which ? c->v_scale : c->k_scale) + row, NULL);
                }
    free(x);
}

int dec_problem_make(const fmha_opts *o, int bm, int slots, dec_problem *dp)
{
    memset(dp, 0, sizeof *dp);
    int32_t *lens = malloc(sizeof(int32_t) * (size_t)o->b);
    char err[200];
    rng_t tr;
    rng_seed(&tr, table_seed(o));
    if (!lens || dec_lengths(o, lens, err, sizeof err) ||
        paged_kv_layout(&dp->c, o->b, o->hkv, o->d, o->page, lens, DEC_SPARE_PAGES, &tr)) {
        fprintf(stderr, "decode inputs: out of host memory\n");
        free(lens);
        return 1;
    }
    free(lens);
    /* the FG18 variant: the table the run uses differs from the one checked, and nothing checks it again */
    if (o->fault_bits & DEC_FAULT_TABLE_OUT_OF_RANGE) corrupt_table(&dp->c);
    dec_params *p = &dp->p;
    shape_params(o, bm, &dp->c, p);
    p->splits = dec_splits_for(o, p, slots);
    if (p->fair) p->fair_total = dec_grid_tiles(p, dp->c.seqlens);
    dp->splits_auto = o->splits == 0;
    dp->nq = (size_t)o->b * o->sq * o->hq * o->d;
    dp->nlse = (size_t)o->b * o->hq * o->sq;
    dp->npart = p->splits > 1 ? (size_t)p->splits * dp->nq : 0;
    dp->on_device = stage_inputs_on_device(o);
    dp->q = malloc(dp->nq * 2);
    dp->o = malloc(dp->nq * 2);
    dp->lse = malloc(dp->nlse * 4);
    int oom = !dp->q || !dp->o || !dp->lse;
    if (!oom && !dp->on_device) {
        oom = paged_kv_alloc(&dp->c);
        if (!oom && o->backend == BACKEND_EMU && dp->npart) {
            dp->o_part = malloc(dp->npart * 4);
            dp->lse_part = malloc((size_t)p->splits * dp->nlse * 4);
            oom = !dp->o_part || !dp->lse_part;
        }
    }
    if (oom) {
        fprintf(stderr, "decode inputs: out of host memory\n");
        dec_problem_free(dp);
        return 1;
    }
    if (!dp->on_device) {
        rng_t r;
        rng_seed(&r, o->seed);
        init_bf16(dp->q, NULL, dp->nq, o->init, &r, -2, 2);
        fill_cache(o, &dp->c, &r);
        poison_bf16(dp->o, dp->nq);
        poison_f32(dp->lse, dp->nlse);
    }
    p->q = dp->q; p->o = dp->o; p->lse = dp->lse;
    p->k = dp->c.k; p->v = dp->c.v; p->k_scale = dp->c.k_scale; p->v_scale = dp->c.v_scale;
    p->block_table = dp->c.block_table; p->seqlens = dp->c.seqlens;
    p->o_part = dp->o_part; p->lse_part = dp->lse_part;
    return 0;
}

void dec_problem_free(dec_problem *dp)
{
    paged_kv_free(&dp->c);
    free(dp->q); free(dp->o); free(dp->lse); free(dp->o_part); free(dp->lse_part);
    memset(dp, 0, sizeof *dp);
}

/* --timeline: one more buffer, DEC_TL_WORDS a CTA of zeros, that the sm90 kernels stamp
 * (attn/decode_core.h) and stage_gpu_run downloads after the last timed launch; then the CSV, the
 * summary line, and a refusal when a CTA left its words unwritten. */
static int run_with_timeline(const stage_def *st, const fmha_opts *o, dec_params *p, stage_buf *bufs, int nbufs,
                             stage_result *r)
{
    const grid3 g = dec_grid(p);
    const int ctas = (int)(g.x * g.y * g.z);
    uint64_t *words = calloc((size_t)ctas * DEC_TL_WORDS, sizeof(uint64_t));
    stage_buf all[16];
    if (!words || nbufs + 1 > (int)(sizeof all / sizeof all[0])) {
        free(words);
        return 1;
    }
    memcpy(all, bufs, sizeof(stage_buf) * (size_t)nbufs);
    all[nbufs] = (stage_buf){words, sizeof(uint64_t) * (size_t)ctas * DEC_TL_WORDS, 2, (void **)&p->timeline,
                             BUF_UPLOAD, 0, 0, 0, 0};
    int rc = stage_gpu_run(st, p, &p->wd, all, nbufs + 1, o, r);
    if (rc == 0) {
        cta_timeline_summary s;
        char why[160], line[320];
        if (cta_timeline_summarise(words, ctas, &s, why, sizeof why)) {
            fprintf(stderr, "stage %s: --timeline: %s\n", st->letter, why);
            rc = 1;
        } else if (cta_timeline_write_csv(o->timeline, words, ctas)) {
            fprintf(stderr, "stage %s: --timeline: cannot write %s\n", st->letter, o->timeline);
            rc = 1;
        } else {
            cta_timeline_describe(&s, line, sizeof line);
            printf("%s (%s)\n", line, o->timeline);
        }
    }
    free(words);
    return rc;
}

int dec_run_gpu(const stage_def *st, const fmha_opts *o, dec_problem *dp, stage_result *r)
{
    dec_params p = dp->p; /* its pointers become device pointers */
    const paged_kv *c = &dp->c;
    const size_t rows = paged_kv_rows(c), d = (size_t)o->d, dev = dp->on_device;
    stage_buf bufs[] = {
        {dp->q, dp->nq * 2, 0, (void **)&p.q, dev ? BUF_DEVICE_BF16 : BUF_UPLOAD, -2, 2, 0, 0},
        {c->k_scale, rows * 4, 0, (void **)&p.k_scale, dev ? BUF_DEVICE_ALLOC : BUF_UPLOAD, 0, 0, 0, 0},
        {c->v_scale, rows * 4, 0, (void **)&p.v_scale, dev ? BUF_DEVICE_ALLOC : BUF_UPLOAD, 0, 0, 0, 0},
        {c->k, rows * d, 0, (void **)&p.k, dev ? BUF_DEVICE_E4M3 : BUF_UPLOAD, 0, 0, (int)d, 1},
        {c->v, rows * d, 0, (void **)&p.v, dev ? BUF_DEVICE_E4M3 : BUF_UPLOAD, 0, 0, (int)d, 2},
        {c->block_table, sizeof(int32_t) * (size_t)o->b * c->max_pages, 0, (void **)&p.block_table, BUF_UPLOAD, 0, 0, 0, 0},
        {c->seqlens, sizeof(int32_t) * (size_t)o->b, 0, (void **)&p.seqlens, BUF_UPLOAD, 0, 0, 0, 0},
        {dp->o, dp->nq * 2, 1, (void **)&p.o, dev ? BUF_DEVICE_POISON16 : BUF_UPLOAD, 0, 0, 0, 0},
        {dp->lse, dp->nlse * 4, 1, (void **)&p.lse, dev ? BUF_DEVICE_POISON32 : BUF_UPLOAD, 0, 0, 0, 0},
        {NULL, dp->npart * 4, 0, (void **)&p.o_part, BUF_DEVICE_ALLOC, 0, 0, 0, 0},
        {NULL, (size_t)p.splits * dp->nlse * 4, 0, (void **)&p.lse_part, BUF_DEVICE_ALLOC, 0, 0, 0, 0},
    };
    const int nbufs = p.splits > 1 ? 11 : 9; /* the partials only where a merge needs them */
    if (!o->timeline[0]) return stage_gpu_run(st, &p, &p.wd, bufs, nbufs, o, r);
    return run_with_timeline(st, o, &p, bufs, nbufs, r);
}

/* The exact fp64 attention of one decode row over the dequantised cache: keys 0..n-1. */
static void exact_row(const paged_kv *c, int b, int hk, const float *q, int n, double scale, double *o, double *lse,
                      float *kv, double *s)
{
    const int d = c->d;
    for (int e = 0; e < d; e++) o[e] = 0.0;
    if (n <= 0) {
        *lse = -INFINITY;
        return;
    }
    double m = -INFINITY;
    for (int j = 0; j < n; j++) {
        paged_kv_token(c, 0, b, j, hk, kv);
        double dot = 0.0;
        for (int e = 0; e < d; e++) dot += (double)q[e] * kv[e];
        s[j] = scale * dot;
        m = s[j] > m ? s[j] : m;
    }
    double l = 0.0;
    for (int j = 0; j < n; j++) {
        const double w = exp(s[j] - m);
        l += w;
        paged_kv_token(c, 1, b, j, hk, kv);
        for (int e = 0; e < d; e++) o[e] += w * kv[e];
    }
    for (int e = 0; e < d; e++) o[e] /= l;
    *lse = m + log(l);
}

void dec_check(const fmha_opts *o, const dec_problem *dp, stage_result *r)
{
    const dec_params *p = &dp->p;
    const paged_kv *c = &dp->c;
    const int d = o->d, g = dec_group(p);
    const size_t nrows_all = dp->nlse; /* rows (b, i, h) of O [B, Sq, Hq, D] */
    const size_t unwritten = poison_count_bf16(dp->o, dp->nq) + poison_count_f32(dp->lse, dp->nlse);
    size_t *rows;
    const size_t nrows = check_rows_select(nrows_all, 8.0 * p->max_len * d, o->seed, &rows);
    const size_t n = nrows * (size_t)d;
    float *got = malloc(n * 4), *emu_f = malloc(n * 4), *qf = malloc(sizeof(float) * (size_t)d);
    float *kv = malloc(sizeof(float) * (size_t)d), *lse_got = malloc(nrows * 4);
    double *exact = malloc(n * 8), *emu = malloc(n * 8), *s = malloc(sizeof(double) * (size_t)(p->max_len + 1));
    double *lse_ref = malloc(nrows * 8), *lse_emu = malloc(nrows * 8);
    size_t ref_nonfinite = 0, out_nonfinite = 0;
    for (size_t k = 0; k < nrows; k++) {
        const int b = (int)(rows[k] / ((size_t)o->sq * o->hq)), i = (int)(rows[k] / o->hq % o->sq), h = (int)(rows[k] % o->hq);
        const int hk = h / g, nvis = dec_visible_keys(p, c->seqlens[b], i);
        const uint16_t *qrow = dp->q + rows[k] * d, *orow = dp->o + rows[k] * d;
        for (int e = 0; e < d; e++) qf[e] = bf16_to_f32(qrow[e]);
        exact_row(c, b, hk, qf, nvis, p->scale, exact + k * d, &lse_ref[k], kv, s);
        fp8_attention_row(c, b, hk, qf, nvis, p->scale, 0, i, DEC_BN, emu + k * d, &lse_emu[k]);
        for (int e = 0; e < d; e++) {
            got[k * d + e] = orow[e] == POISON_BF16 ? bits_f32(POISON_F32) : bf16_to_f32(orow[e]);
            emu_f[k * d + e] = bf16_round((float)emu[k * d + e]); /* the kernel's output rounding */
            ref_nonfinite += !isfinite(exact[k * d + e]);
            out_nonfinite += !isfinite(got[k * d + e]) && orow[e] != POISON_BF16;
        }
        lse_got[k] = dp->lse[((size_t)b * o->hq + h) * o->sq + i];
    }
    double lse_yard = 0.0; /* the rounding reference's worst LSE error */
    for (size_t k = 0; k < nrows; k++)
        if (isfinite(lse_ref[k]) && isfinite(lse_emu[k])) lse_yard = fmax(lse_yard, fabs(lse_emu[k] - lse_ref[k]));
    size_t lse_bad = 0;
    double lse_worst = 0.0;
    for (size_t k = 0; k < nrows; k++) {
        const double tol = 2.0 * lse_yard + 2e-4 * fmax(1.0, fabs(lse_ref[k]));
        const int ok = isinf(lse_ref[k]) && lse_ref[k] < 0 ? (isinf(lse_got[k]) && lse_got[k] < 0)
                                                          : fabs(lse_got[k] - lse_ref[k]) <= tol;
        if (!ok) {
            const double e = isfinite(lse_got[k]) && isfinite(lse_ref[k]) ? fabs(lse_got[k] - lse_ref[k]) : INFINITY;
            lse_bad++;
            lse_worst = fmax(lse_worst, e);
        }
    }
    verify_report kern, emul;
    verify_f32(got, exact, n, &kern);
    verify_f32(emu_f, exact, n, &emul);
    const double floor = 1e-5;
    r->checked = 1;
    r->rep = kern;
    r->err = kern.max_abs;
    r->passed = verify_attention_ok(&kern, &emul, floor) && lse_bad == 0 && ref_nonfinite == 0;
    int dims[2] = {(int)nrows, d};
    const char *names[2] = {"checked_row", "c"};
    char summary[400];
    verify_summary(&kern, dims, names, 2, summary, sizeof summary);
    int w = snprintf(r->detail, sizeof r->detail,
                     "check: rows %zu of %zu vs fp64 over the dequantised cache, %s; e4m3 rounding reference "
                     "max_abs=%.3e (rule: <= 2x + %.0e); LSE mismatches %zu (worst %.3e, rule 2 x %.2e + 2e-4)",
                     nrows, nrows_all, summary, emul.max_abs, floor, lse_bad, lse_worst, lse_yard);
    if (ref_nonfinite && w > 0 && (size_t)w < sizeof r->detail)
        snprintf(r->detail + w, sizeof r->detail - (size_t)w,
                 "; the reference itself has %zu non-finite values: the cache holds NaN codes", ref_nonfinite);
    if (ref_nonfinite)
        snprintf(r->symptom, sizeof r->symptom,
                 "the cache holds NaN codes: %zu of %zu checked O elements are NaN (so is the reference over that cache)",
                 out_nonfinite, n);
    result_note_unwritten(r, unwritten, dp->nq + dp->nlse, "O and LSE");
    free(rows); free(got); free(emu_f); free(qf); free(kv); free(lse_got);
    free(exact); free(emu); free(s); free(lse_ref); free(lse_emu);
}

void dec_counts(const fmha_opts *o, const dec_problem *dp, stage_result *r)
{
    const dec_params *p = &dp->p;
    double pairs = 0, tokens = 0, pages = 0;
    for (int b = 0; b < o->b; b++) {
        const int len = dp->c.seqlens[b];
        for (int i = 0; i < o->sq; i++) pairs += dec_visible_keys(p, len, i);
        tokens += len;
        pages += (len + o->page - 1) / o->page;
    }
    r->flops = 4.0 * o->d * o->hq * pairs;
    r->bytes = tokens * o->hkv * (2.0 * o->d + 8.0) + 4.0 * pages + 4.0 * o->b + 2.0 * 2.0 * (double)dp->nq + 4.0 * dp->nlse;
}

int dec_dump(const fmha_opts *o, const char *stage, const dec_problem *dp)
{
    const paged_kv *c = &dp->c;
    const dump_item items[] = {
        {"q_bf16bits_bshd", "<u2", 4, {o->b, o->sq, o->hq, o->d}, dp->q, 2},
        {"k_e4m3_pages", "|u1", 4, {c->num_pages, c->page_size, c->hkv, c->d}, c->k, 1},
        {"v_e4m3_pages", "|u1", 4, {c->num_pages, c->page_size, c->hkv, c->d}, c->v, 1},
        {"k_scale", "<f4", 3, {c->num_pages, c->page_size, c->hkv, 0}, c->k_scale, 4},
        {"v_scale", "<f4", 3, {c->num_pages, c->page_size, c->hkv, 0}, c->v_scale, 4},
        {"block_table", "<i4", 2, {c->b, c->max_pages, 0, 0}, c->block_table, 4},
        {"seqlens", "<i4", 1, {c->b, 0, 0, 0}, c->seqlens, 4},
        {"o_bf16bits_bshd", "<u2", 4, {o->b, o->sq, o->hq, o->d}, dp->o, 2},
        {"lse", "<f4", 3, {o->b, o->hq, o->sq, 0}, dp->lse, 4},
    };
    return runner_dump_list(o, stage, items, (int)(sizeof items / sizeof items[0]));
}
