/* Stage E on the host model ("emu"): the 6-warp data flow of fmha_sm100.cu step for step (same
 * encoders, tiles, SMEM layout, TMEM map, barriers and counts, same step labels), one modelled
 * warp at a time, with every copy on the TMA model:
 *   warp 5 issues the TMA loads, warp 4 the MMAs, warps 0-3 run the online softmax and store O.
 * Steps: 1 prologue, 2a load K_j V_j, 2b S = Q K_j^T, 2c online softmax, 2d correction and P,
 * 2e O += P V_j, 3 epilogue, 4 teardown.
 * The loads are the same tensor maps the GPU launchers encode (host/fmha_tmaps.c): each box is
 * issued onto its full barrier and lands - the model's bytes in the SMEM image, its transaction
 * bytes on the barrier - only when a waiter needs it (model/tma_flight.h), so a wrong expect_tx or
 * parity shows as the early release or the deadlock it is (FG15, FG16). O goes through the Q tile
 * and a modelled TMA store that reads SMEM as the async proxy sees it, at the latest moment the
 * PTX ISA allows (model/tma_model.h's store queue): without the fence it reads stale bytes, and
 * without the wait it reads them after the next CTA's Q has landed there (FG22).
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
#include "host/fmha_tmaps.h"
#include "model/mma_emu.h"
#include "model/tma_flight.h"
#include "model/tma_model.h"
#include "model/tmem_model.h"
#include "fmha.h"

typedef struct {
    emu_flow f;
    const fmha_params *p;
    uint8_t *img;      /* the CTA's SMEM image, laid out by fmha_smem_layout_make */
    smem_layout L;
    smem_tile tq, tk, tv;
    tmap_params map[FMHA_TENSOR_COUNT]; /* the launchers' maps, global address 0 = the tensor's start */
    uint8_t *view;             /* the CTA's SMEM as the async proxy sees it */
    tma_flight fl;             /* TMA loads in flight */
    tma_store_queue st;        /* O's TMA stores not yet read (across CTAs: FG22's missing wait) */
} emu_ctx;

/* Warp 5's copies: tile rows [row0, row0 + 128) of tensor t as D / 64 boxes onto bar, after the
 * arrive.expect_tx of `bytes` (K-major tiles take box c at the K offset 64c, V at the MN offset). */
static int load_tile(emu_ctx *c, fmha_tensor t, const void *global, uint32_t tile, const smem_tile *st, int row0, int head,
                     int batch, mbar_model *bar, uint32_t bytes, const char *what)
{
    const mbar_status ms = mbar_model_arrive_expect_tx(bar, (int)bytes);
    if (ms != MBAR_OK) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s: arrive.expect_tx: %s%s", what, mbar_status_name(ms),
                 ms == MBAR_ERR_PENDING_UNDERFLOW ? " (the next tile's arrive found the phase still open: a waiter had "
                                                    "passed it before its bytes landed)" : "");
        return emu_fail(&c->f, msg);
    }
    for (int k = 0; k < c->p->d / FMHA_BOX_COLS; k++) {
        const uint32_t slab = st->major == MAJOR_K ? smem_tile_offset(st, 0, FMHA_BOX_COLS * k) : smem_tile_offset(st, FMHA_BOX_COLS * k, 0);
        const int32_t coords[4] = {FMHA_BOX_COLS * k, row0, head, batch};
        if (tma_flight_issue(&c->fl, &c->map[t], global, coords, tile + slab, bar)) return emu_fail(&c->f, c->fl.msg);
    }
    return 0;
}

/* A wait on a full barrier: the boxes it needs land (or the deadlock / early release shows). */
static int wait_full(emu_ctx *c, mbar_model *bar, int parity, const char *waiter)
{
    const int rc = tma_flight_wait(&c->fl, bar, parity);
    if (rc == 0) return 0;
    char msg[420];
    snprintf(msg, sizeof msg, "%s at %s: %s", rc == 1 ? "deadlock" : "TMA", waiter, c->fl.msg);
    return emu_fail(&c->f, msg);
}

/* The stores the previous CTA left unread (FG22's missing wait) read SMEM now. */
static int read_pending_stores(emu_ctx *c)
{
    char err[256];
    if (tma_queue_wait_read(&c->st, 10, c->p->o, err, sizeof err)) return emu_fail(&c->f, err);
    return 0;
}

static int emu_cta(emu_ctx *c, int b, int h, int qt)
{
    const fmha_params *p = c->p;
    const int d = p->d, q0 = qt * FMHA_BM, hk_k = fmha_tma_kv_head(p, h, 0), hk_v = fmha_tma_kv_head(p, h, 1);
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
    mbar_model bars[FMHA_NUM_BARS];
    for (int i = 0; i < FMHA_NUM_BARS; i++) {
        mbar_model_reset(&bars[i]);
        mbar_model_init(&bars[i], (int)fmha_bar_count(i, 0));
    }
    mbar_model *q_full = &bars[FMHA_BAR_Q_FULL], *k_full = &bars[FMHA_BAR_K_FULL], *v_full = &bars[FMHA_BAR_V_FULL];
    mbar_model *k_empty = &bars[FMHA_BAR_K_EMPTY], *v_empty = &bars[FMHA_BAR_V_EMPTY];
    mbar_model *s_full = &bars[FMHA_BAR_S_FULL], *p_full = &bars[FMHA_BAR_P_FULL], *o_done = &bars[FMHA_BAR_O_DONE];
    tma_flight_init(&c->fl, c->img, c->view, 10);

    /* Step 1: prologue (warp 5): Q once */
    if (load_tile(c, FMHA_TENSOR_Q, p->q, smem_q, &c->tq, q0, h, b, q_full, fmha_tile_tx_bytes(d, FMHA_BM), "q_full"))
        return 1;

    float m_i[FMHA_BM], l_i[FMHA_BM];
    for (int r = 0; r < FMHA_BM; r++) { m_i[r] = -INFINITY; l_i[r] = 0.0f; }
    const uint32_t idesc_qk = idesc_bf16_f32(FMHA_BM, FMHA_BN, 0, 0), idesc_pv = idesc_bf16_f32(FMHA_BM, (unsigned)d, 0, 1);
    const int ntiles = fmha_kv_tiles(p, q0);
    for (int j = 0; j < ntiles; j++) {
        const int ph = j & 1, kv0 = j * FMHA_BN;
        emu_status st = {0};
        /* Step 2a (warp 5): K_j once S_{j-1} has read K, V_j once P V_{j-1} has read V */
        if (j > 0 && emu_wait(f, k_empty, (j - 1) & 1, "k_empty (load warp)")) return 1;
        if (load_tile(c, FMHA_TENSOR_K, p->k, smem_k, &c->tk, kv0, hk_k, b, k_full, fmha_k_expect_bytes(d, p->faults), "k_full"))
            return 1;
        if (j > 0 && emu_wait(f, v_empty, (j - 1) & 1, "v_empty (load warp)")) return 1;
        if (load_tile(c, FMHA_TENSOR_V, p->v, smem_v, &c->tv, kv0, hk_v, b, v_full, fmha_tile_tx_bytes(d, FMHA_BN), "v_full"))
            return 1;

        /* Step 2b (warp 4): S = Q K_j^T -> s_full, k_empty */
        if ((j == 0 && wait_full(c, q_full, 0, "q_full (MMA warp)")) ||
            wait_full(c, k_full, (int)fmha_k_full_parity(j, p->faults), "k_full (MMA warp)"))
            return 1;
        for (int k = 0; k < d; k += 16)
            if (emu_tcgen05_mma(tm, &im, tmem + FMHA_TMEM_S, 0, 0, smem_tile_desc_sm100(&c->tq, smem_q, 0, k),
                                smem_tile_desc_sm100(&c->tk, smem_k, 0, k), idesc_qk, MMA_KIND_F16, k > 0, &st))
                return emu_fail(f, st.msg);
        mbar_model_arrive(s_full);
        if (j + 1 < ntiles) mbar_model_arrive(k_empty);

        /* Step 2c (warps 0-3): online softmax on each warp's 32 rows */
        if (emu_wait(f, s_full, ph, "s_full (softmax warps)")) return 1;
        for (int w = 0; w < FMHA_SOFTMAX_WARPS; w++) {
            const int quad = w; /* warp w owns TMEM lanes 32w..32w+31 */
            uint32_t s[32 * 128];
            for (int c0 = 0; c0 < FMHA_BN; c0 += 32) {
                uint32_t chunk[32 * 32];
                if (tmem_ld(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + FMHA_TMEM_S, 32 * quad, c0), 32, chunk))
                    return emu_fail_tmem(f);
                for (int t = 0; t < 32; t++) memcpy(&s[t * 128 + c0], &chunk[t * 32], 32 * 4);
            }
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
        for (int w = 0; w < FMHA_SOFTMAX_WARPS; w++) /* each warp's 32 threads arrive in one instruction */
            mbar_model_arrive_n(p_full, 32);

        /* Step 2e (warp 4): O += P V_j -> o_done, v_empty */
        if (emu_wait(f, p_full, ph, "p_full (MMA warp)") || wait_full(c, v_full, ph, "v_full (MMA warp)")) return 1;
        for (int k = 0; k < FMHA_BN; k += 16)
            if (emu_tcgen05_mma(tm, &im, tmem + FMHA_TMEM_O, 1, tmem + FMHA_TMEM_P + (uint32_t)(k / 2), 0,
                                smem_tile_desc_sm100(&c->tv, smem_v, 0, k), idesc_pv, MMA_KIND_F16, j > 0 || k > 0, &st))
                return emu_fail(f, st.msg);
        mbar_model_arrive(o_done);
        if (j + 1 < ntiles) mbar_model_arrive(v_empty); /* as the kernel: the last tile's has no waiter */
    }

    /* Step 3: epilogue (warps 0-3): O / l_i -> bf16 -> SMEM (the Q tile) -> TMA store; LSE */
    if (ntiles > 0 && emu_wait(f, o_done, (ntiles - 1) & 1, "o_done (epilogue)")) return 1;
    if (ntiles == 0 && wait_full(c, q_full, 0, "q_full (epilogue: O takes Q's place)")) return 1;
    if (read_pending_stores(c)) return 1; /* FG22 without the wait: the last CTA's stores read SMEM only now */
    for (int w = 0; w < FMHA_SOFTMAX_WARPS; w++) {
        const int quad = w;
        for (int c0 = 0; c0 < d; c0 += 32) {
            uint32_t o[32 * 32];
            if (ntiles > 0 && tmem_ld(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + FMHA_TMEM_O, 32 * quad, c0), 32, o))
                return emu_fail_tmem(f);
            for (int t = 0; t < 32; t++) {
                const int r = 32 * quad + t, row = q0 + r;
                const float inv_l = l_i[r] > 0.0f ? 1.0f / l_i[r] : 0.0f; /* a row that saw no key: O = 0 */
                for (int e = 0; e < 32; e++) { /* rows past Sq too: the store clips them */
                    float x = 0.0f;
                    if (ntiles > 0) memcpy(&x, &o[t * 32 + e], 4);
                    const uint16_t v = f32_to_bf16(x * inv_l);
                    memcpy(c->img + smem_q + smem_tile_offset(&c->tq, r, c0 + e), &v, 2);
                }
                if (c0 == 0 && row < p->sq)
                    p->lse[((int64_t)b * p->hq + h) * p->sq + row] =
                        l_i[r] > 0.0f ? m_i[r] * FMHA_LN2 + logf(l_i[r]) : -INFINITY;
            }
        }
        /* fence.proxy.async: the async proxy now sees the warp's rows (all of SMEM, here) */
        if (!(p->faults & FMHA_FAULT_STORE_NO_FENCE)) tma_queue_fence(&c->st, c->img);
        for (int half = 0; half < 2; half++) {
            const int r0 = 32 * quad + FMHA_O_BOX_ROWS * half;
            if (q0 + r0 >= p->sq) break;
            for (int k = 0; k < d / FMHA_BOX_COLS; k++) {
                const int32_t coords[4] = {FMHA_BOX_COLS * k, q0 + r0, h, b};
                if (tma_queue_store(&c->st, &c->map[FMHA_TENSOR_O], coords, smem_q + smem_tile_offset(&c->tq, r0, FMHA_BOX_COLS * k)))
                    return emu_fail(f, "more TMA stores pending than the model holds");
            }
        }
        /* wait_group.read: the stores have read SMEM (without it they read it when the next CTA runs) */
        if (!(p->faults & FMHA_FAULT_STORE_NO_WAIT) && read_pending_stores(c)) return 1;
    }

    /* Step 4: teardown (warp 4): free TMEM; loads still in flight land (a broken expect_tx leaves some) */
    if (tma_flight_drain(&c->fl)) return emu_fail(f, c->fl.msg);
    if (tmem_dealloc(tm, tmem, FMHA_TMEM_COLS) || tmem_next_cta(tm)) return emu_fail_tmem(f);
    return 0;
}

int stage_e_emu_run(const fmha_params *p, char *err, int errlen)
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
    c.view = calloc(c.L.used, 1);
    err[0] = '\0';
    for (int t = 0; t < FMHA_TENSOR_COUNT; t++)
        fmha_tmap_params(p, (fmha_tensor)t, 0, fmha_tmap_mistake_of(p->faults), &c.map[t]);
    int rc = (c.f.tm && c.img && c.view) ? 0 : 1;
    if (!rc) tma_queue_init(&c.st, c.view, c.L.used);
    const grid3 g = fmha_grid(p);
    for (unsigned b = 0; b < g.z && !rc; b++)
        for (unsigned h = 0; h < g.y && !rc; h++)
            for (unsigned qt = 0; qt < g.x && !rc; qt++) rc = emu_cta(&c, (int)b, (int)h, (int)qt);
    if (!rc) rc = read_pending_stores(&c); /* the last CTA's, if it did not wait */
    free(c.img);
    free(c.view);
    tmem_model_free(c.f.tm);
    return rc;
}
