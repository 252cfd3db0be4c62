/* Stage C on the host model ("emu"): the 6-warp data flow of fmha_sm100.cu step for step (same
 * encoders, tiles, SMEM layout, TMEM map, barriers and counts, same step labels), one modelled
 * warp at a time:
 *   warp 5 loads, warp 4 issues the MMAs, warps 0-3 run the online softmax on their quadrants.
 * Steps: 1 prologue, 2a load K_j V_j, 2b S = Q K_j^T, 2c online softmax, 2d correction and P,
 * 2e O += P V_j, 3 epilogue, 4 teardown.
 * The mbarrier model checks the protocol: a wait whose phase cannot have completed at that point
 * is reported as the deadlock it would be on the GPU. One TMEM model serves all CTAs in turn. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "model/canonical_fill.h"
#include "model/emu_flow.h"
#include "model/frag_map.h"
#include "model/idesc.h"
#include "model/mbar_model.h"
#include "model/mma_emu.h"
#include "model/tmem_model.h"
#include "fmha.h"

typedef struct {
    emu_flow f;
    const fmha_params *p;
    uint8_t *img;      /* the CTA's SMEM image, laid out by fmha_smem_layout_make */
    smem_layout L;
    smem_tile tq, tk, tv;
    uint16_t *rowbuf;          /* one gathered tile of 16-bit rows (strided inputs -> contiguous) */
} emu_ctx;

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
    emu_flow *f = &c->f;
    tmem_model *tm = f->tm;
    /* SMEM addresses of the tiles in the image */
    const uint32_t smem_q = c->L.tile[FMHA_SMEM_Q], smem_k = c->L.tile[FMHA_SMEM_K], smem_v = c->L.tile[FMHA_SMEM_V];
    smem_image im = {c->img, 0, c->L.used};
    const float scale_log2 = p->scale * FMHA_LOG2E;

    /* Step 1: prologue (warp 4): TMEM; (thread 0): the barriers with the kernel's counts */
    uint32_t tmem;
    if (tmem_alloc(tm, FMHA_TMEM_COLS, &tmem)) return emu_fail_tmem(f);
    tmem_relinquish(tm);
    /* the one-softmax-warp variant (the seed's T <= 32 kernel) counts its own 32 threads */
    const int softmax_warps = (p->faults & FMHA_FAULT_ONE_SOFTMAX_WARP) ? 1 : FMHA_SOFTMAX_WARPS;
    mbar_model bars[FMHA_NUM_BARS];
    for (int i = 0; i < FMHA_NUM_BARS; i++) {
        mbar_model_reset(&bars[i]);
        const int faulted = p->faults & FMHA_FAULT_P_FULL_COUNTS_WARPS;
        mbar_model_init(&bars[i], i == FMHA_BAR_P_FULL && !faulted ? 32 * softmax_warps : (int)fmha_bar_count(i, p->faults));
    }
    mbar_model *q_full = &bars[FMHA_BAR_Q_FULL], *kv_full = &bars[FMHA_BAR_KV_FULL], *kv_empty = &bars[FMHA_BAR_KV_EMPTY];
    mbar_model *s_full = &bars[FMHA_BAR_S_FULL], *p_full = &bars[FMHA_BAR_P_FULL], *o_done = &bars[FMHA_BAR_O_DONE];

    /* Step 1: prologue (warp 5): Q once; every load-warp thread arrives */
    load_rows(c, c->img + smem_q, &c->tq, qh, p->q_ss, q0, p->sq, 0);
    mbar_model_arrive_n(q_full, 32);

    float m_i[FMHA_BM], l_i[FMHA_BM];
    for (int r = 0; r < FMHA_BM; r++) { m_i[r] = -INFINITY; l_i[r] = 0.0f; }
    const uint32_t idesc_qk = idesc_bf16_f32(FMHA_BM, FMHA_BN, 0, 0), idesc_pv = idesc_bf16_f32(FMHA_BM, (unsigned)d, 0, 1);
    const int ntiles = fmha_kv_tiles(p, q0);
    for (int j = 0; j < ntiles; j++) {
        const int ph = j & 1, kv0 = j * FMHA_BN;
        emu_status st = {0};
        /* Step 2a (warp 5): wait until the last tile's MMAs released K/V, load K_j, V_j */
        if (j > 0 && emu_wait(f, kv_empty, (j - 1) & 1, "kv_empty (load warp)")) return 1;
        load_rows(c, c->img + smem_k, &c->tk, kh, p->k_ss, kv0, p->skv, 0);
        load_rows(c, c->img + smem_v, &c->tv, vh, p->v_ss, kv0, p->skv, 1);
        mbar_model_arrive_n(kv_full, 32);

        /* Step 2b (warp 4): S = Q K_j^T -> s_full */
        if ((j == 0 && emu_wait(f, q_full, 0, "q_full (MMA warp)")) || emu_wait(f, kv_full, ph, "kv_full (MMA warp)"))
            return 1;
        for (int k = 0; k < d; k += 16)
            if (emu_tcgen05_mma(tm, &im, tmem + FMHA_TMEM_S, 0, 0, smem_tile_desc_sm100(&c->tq, smem_q, 0, k),
                                smem_tile_desc_sm100(&c->tk, smem_k, 0, k), idesc_qk, MMA_KIND_F16, k > 0, &st))
                return emu_fail(f, st.msg);
        mbar_model_arrive(s_full);

        /* Step 2c (warps 0-3): online softmax on each warp's 32 rows */
        if (emu_wait(f, s_full, ph, "s_full (softmax warps)")) return 1;
        for (int w = 0; w < softmax_warps; w++)
            for (int quad = 0; quad < 4; quad++) {
                if (softmax_warps == 4 && quad != w) continue;
                uint32_t s[32 * 128];
                int refused = 0;
                for (int c0 = 0; c0 < FMHA_BN && !refused; c0 += 32) {
                    uint32_t chunk[32 * 32];
                    if (tmem_ld(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + FMHA_TMEM_S, 32 * quad, c0), 32, chunk)) {
                        refused = 1; /* the quadrant rule: these rows are never processed */
                        emu_fail_tmem(f);
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
                /* Step 2d: once the previous P V is done: O *= alpha (only once O holds something),
                 * then P into TMEM */
                if (j > 0 && emu_wait(f, o_done, (j - 1) & 1, "o_done (softmax warps, before the O rescale)")) return 1;
                if (j > 0)
                    for (int c0 = 0; c0 < d; c0 += 32) {
                        uint32_t o[32 * 32];
                        uint32_t oaddr = tmem_addr(tmem + FMHA_TMEM_O, 32 * quad, c0);
                        if (tmem_ld(tm, w, TMEM_32x32b, 32, 0, oaddr, 32, o)) return emu_fail_tmem(f);
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
                        if (tmem_st(tm, w, TMEM_32x32b, 32, 0, oaddr, 32, 0, o)) return emu_fail_tmem(f);
                    }
                for (int c0 = 0; c0 < 64; c0 += 32) {
                    uint32_t chunk[32 * 32];
                    for (int t = 0; t < 32; t++) memcpy(&chunk[t * 32], &pk[t * 64 + c0], 32 * 4);
                    if (tmem_st(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + FMHA_TMEM_P, 32 * quad, c0), 32, 0, chunk))
                        return emu_fail_tmem(f);
                }
            }
        for (int w = 0; w < softmax_warps; w++) { /* each warp's 32 threads arrive in one instruction */
            const mbar_status ms = mbar_model_arrive_n(p_full, 32);
            if (ms != MBAR_OK && ms != MBAR_ERR_OVER_ARRIVAL) {
                char msg[200];
                snprintf(msg, sizeof msg, "p_full: warp %d's 32 arrivals: %s (the barrier counts %d)", w,
                         mbar_status_name(ms), (int)fmha_bar_count(FMHA_BAR_P_FULL, p->faults));
                return emu_fail(f, msg);
            }
        }

        /* Step 2e (warp 4): O += P V_j -> o_done, kv_empty */
        if (emu_wait(f, p_full, ph, "p_full (MMA warp)")) return 1;
        for (int k = 0; k < FMHA_BN; k += 16)
            if (emu_tcgen05_mma(tm, &im, tmem + FMHA_TMEM_O, 1, tmem + FMHA_TMEM_P + (uint32_t)(k / 2), 0,
                                smem_tile_desc_sm100(&c->tv, smem_v, 0, k), idesc_pv, MMA_KIND_F16, j > 0 || k > 0, &st))
                return emu_fail(f, st.msg);
        mbar_model_arrive(o_done);
        if (j + 1 < ntiles) mbar_model_arrive(kv_empty); /* as the kernel: the last tile's has no waiter */
    }

    /* Step 3: epilogue (warps 0-3): O / l_i -> bf16, LSE = m_i ln 2 + ln l_i */
    if (ntiles > 0 && emu_wait(f, o_done, (ntiles - 1) & 1, "o_done (epilogue)")) return 1;
    for (int w = 0; w < softmax_warps; w++)
        for (int quad = 0; quad < 4; quad++) {
            if (softmax_warps == 4 && quad != w) continue;
            for (int c0 = 0; c0 < d; c0 += 32) {
                uint32_t o[32 * 32];
                if (ntiles > 0 && tmem_ld(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + FMHA_TMEM_O, 32 * quad, c0), 32, o)) {
                    emu_fail_tmem(f);
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

    /* Step 4: teardown (warp 4): free TMEM */
    if (tmem_dealloc(tm, tmem, FMHA_TMEM_COLS) || tmem_next_cta(tm)) return emu_fail_tmem(f);
    return 0;
}

int stage_c_emu_run(const fmha_params *p, char *err, int errlen)
{
    emu_ctx c;
    memset(&c, 0, sizeof c);
    c.f = (emu_flow){tmem_model_new(), err, errlen};
    c.p = p;
    c.L = fmha_smem_layout_make(p->d);
    c.tq = fmha_q_tile(p->d);
    c.tk = fmha_k_tile(p->d);
    c.tv = fmha_v_tile(p->d);
    c.img = calloc(c.L.used, 1);
    c.rowbuf = calloc((size_t)FMHA_BN * p->d, 2);
    err[0] = '\0';
    int rc = (c.f.tm && c.img && c.rowbuf) ? 0 : 1;
    const grid3 g = fmha_grid(p);
    for (unsigned b = 0; b < g.z && !rc; b++)
        for (unsigned h = 0; h < g.y && !rc; h++)
            for (unsigned qt = 0; qt < g.x && !rc; qt++) rc = emu_cta(&c, (int)b, (int)h, (int)qt);
    free(c.img);
    free(c.rowbuf);
    tmem_model_free(c.f.tm);
    return rc;
}
