/* Stage C on the host model ("emu"): the 6-warp data flow of fmha_sm100.cu step for step (same
 * encoders, tiles, TMEM map, barriers and counts), one modelled warp at a time:
 *   warp 5 loads, warp 4 issues the MMAs, warps 0-3 run the online softmax on their quadrants.
 * The mbarrier model checks the protocol: a wait whose phase cannot have completed at that point
 * is reported as the deadlock it would be on the GPU. One TMEM model serves all CTAs in turn. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "model/canonical_fill.h"
#include "model/frag_map.h"
#include "model/idesc.h"
#include "model/mbar_model.h"
#include "model/mma_emu.h"
#include "model/tmem_model.h"
#include "fmha.h"

typedef struct {
    const fmha_params *p;
    tmem_model *tm;
    uint8_t *img;
    uint32_t img_bytes, sq, sk, sv;
    smem_tile tq, tk, tv;
    uint16_t *rowbuf; /* one gathered row of 16-bit elements (strided inputs -> contiguous) */
    char *err;
    int errlen;
} emu_ctx;

static int fail_tmem(emu_ctx *c) { snprintf(c->err, (size_t)c->errlen, "%s", c->tm->msg); return 1; }

static int wait_ok(emu_ctx *c, mbar_model *m, int parity, const char *what)
{
    if (mbar_model_wait(m, parity) == MBAR_OK) return 0;
    int n = snprintf(c->err, (size_t)c->errlen, "deadlock at %s: ", what);
    mbar_model_diagnose(m, c->err + n, (size_t)(c->errlen - n));
    return 1;
}

/* Warp 5's copies: rows [row0, row0 + 128) of a strided [S x D] head into a tile, through the
 * same fill as the GPU copy. The global tensors are strided (BHSD or BSHD): rows are gathered into
 * a contiguous block first; rows past the end become zeros. */
static void load_rows(emu_ctx *c, uint8_t *dst, const smem_tile *t, const uint16_t *head, int64_t row_stride,
                      int row0, int rows, int mn_major)
{
    const int d = c->p->d;
    int valid = rows - row0 < FMHA_BN ? rows - row0 : FMHA_BN;
    if (valid < 0) valid = 0;
    for (int r = 0; r < valid; r++) memcpy(c->rowbuf + (size_t)r * d, head + (int64_t)(row0 + r) * row_stride, (size_t)d * 2);
    if (mn_major) smem_fill_rows_mnmajor(dst, t, c->rowbuf, 0, valid, d);
    else smem_fill_rows_kmajor(dst, t, c->rowbuf, 0, valid, d);
}

static int emu_cta(emu_ctx *c, int b, int h, int qt)
{
    const fmha_params *p = c->p;
    const int d = p->d, q0 = qt * FMHA_BM, hk = fmha_kv_head(p, h);
    const uint16_t *qh = p->q + b * p->q_sb + h * p->q_sh;
    const uint16_t *kh = p->k + b * p->k_sb + hk * p->k_sh, *vh = p->v + b * p->v_sb + hk * p->v_sh;
    smem_image im = {c->img, 0, c->img_bytes};
    const float scale_log2 = p->scale * FMHA_LOG2E;

    /* Step 1 (warp 4): TMEM; (thread 0): the barriers */
    uint32_t tmem;
    if (tmem_alloc(c->tm, FMHA_TMEM_COLS, &tmem)) return fail_tmem(c);
    tmem_relinquish(c->tm);
    /* the one-softmax-warp variant (the seed's T <= 32 kernel) counts its own 32 threads */
    const int softmax_warps = (p->faults & FMHA_FAULT_ONE_SOFTMAX_WARP) ? 1 : 4;
    mbar_model q_full, kv_full, kv_empty, s_full, p_full, o_done;
    mbar_model *all[6] = {&q_full, &kv_full, &kv_empty, &s_full, &p_full, &o_done};
    const int counts[6] = {32, 32, 1, 1, 32 * softmax_warps, 1};
    for (int i = 0; i < 6; i++) { mbar_model_reset(all[i]); mbar_model_init(all[i], counts[i]); }

    /* Step 2 (warp 5): Q once; every load-warp thread arrives */
    load_rows(c, c->img + c->sq, &c->tq, qh, p->q_ss, q0, p->sq, 0);
    mbar_model_arrive_n(&q_full, 32);

    float m_i[FMHA_BM], l_i[FMHA_BM];
    for (int r = 0; r < FMHA_BM; r++) { m_i[r] = -INFINITY; l_i[r] = 0.0f; }
    const uint32_t idesc_qk = idesc_bf16_f32(FMHA_BM, FMHA_BN, 0, 0), idesc_pv = idesc_bf16_f32(FMHA_BM, (unsigned)d, 0, 1);
    const int ntiles = fmha_kv_tiles(p, q0);
    for (int j = 0; j < ntiles; j++) {
        const int ph = j & 1, kv0 = j * FMHA_BN;
        emu_status st = {0};
        /* Step 3 (warp 5): wait until the last tile's MMAs released K/V, load K_j, V_j */
        if (j > 0 && wait_ok(c, &kv_empty, (j - 1) & 1, "kv_empty (load warp)")) return 1;
        load_rows(c, c->img + c->sk, &c->tk, kh, p->k_ss, kv0, p->skv, 0);
        load_rows(c, c->img + c->sv, &c->tv, vh, p->v_ss, kv0, p->skv, 1);
        mbar_model_arrive_n(&kv_full, 32);

        /* Step 4 (warp 4): S = Q K_j^T -> s_full */
        if ((j == 0 && wait_ok(c, &q_full, 0, "q_full (MMA warp)")) || wait_ok(c, &kv_full, ph, "kv_full (MMA warp)"))
            return 1;
        for (int k = 0; k < d; k += 16)
            if (emu_tcgen05_mma(c->tm, &im, tmem + FMHA_TMEM_S, 0, 0, smem_tile_desc_sm100(&c->tq, c->sq, 0, k),
                                smem_tile_desc_sm100(&c->tk, c->sk, 0, k), idesc_qk, MMA_KIND_F16, k > 0, &st)) {
                snprintf(c->err, (size_t)c->errlen, "%s", st.msg);
                return 1;
            }
        mbar_model_arrive(&s_full);

        /* Step 5 (warps 0-3): online softmax on each warp's 32 rows */
        if (wait_ok(c, &s_full, ph, "s_full (softmax warps)")) return 1;
        if (j > 0 && wait_ok(c, &o_done, (j - 1) & 1, "o_done (softmax warps, before the O rescale)")) return 1;
        for (int w = 0; w < softmax_warps; w++)
            for (int quad = 0; quad < 4; quad++) {
                if (softmax_warps == 4 && quad != w) continue;
                uint32_t s[32 * 128];
                int refused = 0;
                for (int c0 = 0; c0 < FMHA_BN && !refused; c0 += 32) {
                    uint32_t chunk[32 * 32];
                    if (tmem_ld(c->tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + FMHA_TMEM_S, 32 * quad, c0), 32, chunk)) {
                        refused = 1; /* the quadrant rule: these rows are never processed */
                        if (!c->err[0]) snprintf(c->err, (size_t)c->errlen, "%s", c->tm->msg);
                        break;
                    }
                    for (int t = 0; t < 32; t++) memcpy(&s[t * 128 + c0], &chunk[t * 32], 32 * 4);
                }
                if (refused) continue;
                uint32_t pk[32 * 64], alpha_bits[32];
                for (int t = 0; t < 32; t++) {
                    const int r = 32 * quad + t, row = q0 + r;
                    float sv[FMHA_BN], m_new = m_i[r];
                    for (int n = 0; n < FMHA_BN; n++) {
                        memcpy(&sv[n], &s[t * 128 + n], 4);
                        sv[n] = fmha_visible(p, row, kv0 + n) ? sv[n] * scale_log2 : -INFINITY;
                        m_new = fmaxf(m_new, sv[n]);
                    }
                    const float base = fmha_exp_base(m_new, p->faults);
                    const float alpha = exp2f(m_i[r] - base);
                    float rowsum = 0;
                    for (int n = 0; n < FMHA_BN; n += 2) {
                        float pe = exp2f(sv[n] - base), po = exp2f(sv[n + 1] - base);
                        rowsum += pe + po;
                        pk[t * 64 + n / 2] = pack_bf16x2_cvt_order(f32_to_bf16(po), f32_to_bf16(pe));
                    }
                    l_i[r] = l_i[r] * alpha + rowsum;
                    m_i[r] = m_new;
                    memcpy(&alpha_bits[t], &alpha, 4);
                }
                /* correction: O *= alpha (only once O holds something: after the first P V) */
                if (j > 0)
                    for (int c0 = 0; c0 < d; c0 += 32) {
                        uint32_t o[32 * 32];
                        uint32_t oaddr = tmem_addr(tmem + FMHA_TMEM_O, 32 * quad, c0);
                        if (tmem_ld(c->tm, w, TMEM_32x32b, 32, 0, oaddr, 32, o)) return fail_tmem(c);
                        for (int t = 0; t < 32; t++) {
                            float a;
                            memcpy(&a, &alpha_bits[t], 4);
                            for (int e = 0; e < 32; e++) {
                                float x;
                                memcpy(&x, &o[t * 32 + e], 4);
                                x *= a;
                                memcpy(&o[t * 32 + e], &x, 4);
                            }
                        }
                        if (tmem_st(c->tm, w, TMEM_32x32b, 32, 0, oaddr, 32, 0, o)) return fail_tmem(c);
                    }
                for (int c0 = 0; c0 < 64; c0 += 32) {
                    uint32_t chunk[32 * 32];
                    for (int t = 0; t < 32; t++) memcpy(&chunk[t * 32], &pk[t * 64 + c0], 32 * 4);
                    if (tmem_st(c->tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + FMHA_TMEM_P, 32 * quad, c0), 32, 0, chunk))
                        return fail_tmem(c);
                }
            }
        mbar_model_arrive_n(&p_full, 32 * softmax_warps);

        /* Step 6 (warp 4): O += P V_j -> o_done, kv_empty */
        if (wait_ok(c, &p_full, ph, "p_full (MMA warp)")) return 1;
        for (int k = 0; k < FMHA_BN; k += 16)
            if (emu_tcgen05_mma(c->tm, &im, tmem + FMHA_TMEM_O, 1, tmem + FMHA_TMEM_P + (uint32_t)(k / 2), 0,
                                smem_tile_desc_sm100(&c->tv, c->sv, 0, k), idesc_pv, MMA_KIND_F16, j > 0 || k > 0, &st)) {
                snprintf(c->err, (size_t)c->errlen, "%s", st.msg);
                return 1;
            }
        mbar_model_arrive(&o_done);
        mbar_model_arrive(&kv_empty);
    }

    /* Step 7 (warps 0-3): O / l_i -> bf16, LSE = m_i ln 2 + ln l_i */
    if (ntiles > 0 && wait_ok(c, &o_done, (ntiles - 1) & 1, "o_done (epilogue)")) return 1;
    for (int w = 0; w < softmax_warps; w++)
        for (int quad = 0; quad < 4; quad++) {
            if (softmax_warps == 4 && quad != w) continue;
            for (int c0 = 0; c0 < d; c0 += 32) {
                uint32_t o[32 * 32];
                if (ntiles > 0 && tmem_ld(c->tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + FMHA_TMEM_O, 32 * quad, c0), 32, o)) {
                    if (!c->err[0]) snprintf(c->err, (size_t)c->errlen, "%s", c->tm->msg);
                    break;
                }
                for (int t = 0; t < 32; t++) {
                    const int r = 32 * quad + t, row = q0 + r;
                    if (row >= p->sq) continue;
                    const float inv_l = l_i[r] > 0.0f ? 1.0f / l_i[r] : 0.0f; /* a row that saw no key: O = 0 */
                    uint16_t *orow = p->o + b * p->o_sb + h * p->o_sh + (int64_t)row * p->o_ss;
                    for (int e = 0; e < 32; e++) {
                        float x = 0.0f;
                        if (ntiles > 0) memcpy(&x, &o[t * 32 + e], 4);
                        orow[c0 + e] = f32_to_bf16(x * inv_l);
                    }
                    if (c0 == 0)
                        p->lse[((int64_t)b * p->hq + h) * p->sq + row] =
                            l_i[r] > 0.0f ? m_i[r] * FMHA_LN2 + logf(l_i[r]) : -INFINITY;
                }
            }
        }

    /* Step 8 (warp 4): free TMEM */
    if (tmem_dealloc(c->tm, tmem, FMHA_TMEM_COLS) || tmem_next_cta(c->tm)) return fail_tmem(c);
    return 0;
}

int fmha_emu_run(const fmha_params *p, char *err, int errlen)
{
    emu_ctx c = {p, tmem_model_new(), NULL, 0, 0, 0, 0, fmha_q_tile(p->d), fmha_k_tile(p->d), fmha_v_tile(p->d), NULL, err, errlen};
    c.sk = c.tq.bytes;
    c.sv = c.sk + c.tk.bytes;
    c.img_bytes = c.sv + c.tv.bytes;
    c.img = calloc(c.img_bytes, 1);
    c.rowbuf = calloc((size_t)FMHA_BN * p->d, 2);
    err[0] = '\0';
    int rc = (c.img && c.rowbuf) ? 0 : 1;
    for (int b = 0; b < p->b && !rc; b++)
        for (int h = 0; h < p->hq && !rc; h++)
            for (int qt = 0; qt * FMHA_BM < p->sq && !rc; qt++) rc = emu_cta(&c, b, h, qt);
    free(c.img);
    free(c.rowbuf);
    tmem_model_free(c.tm);
    return rc;
}
