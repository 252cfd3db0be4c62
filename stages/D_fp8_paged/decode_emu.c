/* Stage D on the host model ("emu"): the 6-warp data flow of decode_sm100.cu step for step (same
 * decode core, tiles, SMEM layout, TMEM map, barriers and counts, same step labels), one modelled
 * warp at a time:
 *   warp 5 gathers the pages (K_j, V_j transposed, the scales), warp 4 issues the e4m3 MMAs
 *   (tcgen05.mma kind::f8f6f4, both SS), warps 0-3 quantise Q and run the online softmax, one
 *   packed row per thread (TMEM lane).
 * Steps: 1 prologue, 2a gather K_j V_j, 2a' transpose V_j, 2b S = Q K_j^T, 2c softmax, 2d P codes
 * and the correction, 2e O += P V_j, 3 epilogue, 4 teardown; then the split-KV merge by the rule of
 * common/attn/split_merge.h, as merge.cu runs it.
 * The mbarrier model checks the protocol (a wait that cannot complete is the deadlock it would be
 * on the GPU); the gather checks every page index it follows against the cache. With --ring R the
 * load warp runs ahead: after every release it fills each tile whose slot's empty barrier lets it
 * (decode.h's ring layout and barriers, the kernel's parities), so a release that came too early
 * has its slot refilled before the reads it should have waited for, and the check fails. At the
 * end every barrier must be quiet: no phase left unobserved, none half-arrived, no early arrival
 * (a release nobody waits for is an error too). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/ring.h"
#include "attn/split_merge.h"
#include "host/bf16.h"
#include "host/fp8.h"
#include "model/emu_flow.h"
#include "model/idesc.h"
#include "model/mbar_model.h"
#include "model/mma_emu.h"
#include "model/tmem_model.h"
#include "decode.h"

typedef struct {
    emu_flow f;
    const dec_params *p;
    uint8_t *img; /* the CTA's SMEM image, laid out by dec_smem_layout_make_ring */
    smem_layout L;
    smem_tile tq, tk, tvt, tp, tv_mn;
} emu_ctx;

/* A tile's buffers in the image: the one set, or (ring) slot s. Offsets from the image's start. */
typedef struct {
    uint32_t k, vs, vt, sk, sv;
} tile_bufs;
static tile_bufs bufs_of(const emu_ctx *c, int s)
{
    tile_bufs t;
    if (c->p->ring > 0) {
        const dec_ring_slot_offsets o = dec_ring_slot_at(c->p->d, s);
        const uint32_t base = c->L.tile[DEC_SMEM_K];
        t.k = base + o.k; t.vs = base + o.vs; t.vt = base + o.vt; t.sk = base + o.sk; t.sv = base + o.sv;
    } else {
        t.k = c->L.tile[DEC_SMEM_K]; t.vs = c->L.tile[DEC_SMEM_VS]; t.vt = c->L.tile[DEC_SMEM_VT];
        t.sk = c->L.tile[DEC_SMEM_SCALES] + 4u * (uint32_t)c->p->bm;
        t.sv = t.sk + 4u * DEC_BN;
    }
    return t;
}

static float *img_f32(emu_ctx *c, int which) { return (float *)(c->img + c->L.tile[DEC_SMEM_SCALES]) + which; }

/* Step 2a (warp 5): tokens [kv0, kv0 + Bc) of sequence b, KV head hk: codes into K and Vs (or, the
 * FG20 variant, V straight into the MN-major layout), scales into sk / sv; past `end` zeros. */
static int gather(emu_ctx *c, int b, int hk, int kv0, int end, const tile_bufs *tb)
{
    const dec_params *p = c->p;
    const int d = p->d;
    const int32_t *table = p->block_table + (int64_t)b * p->max_pages;
    float *sk = (float *)(c->img + tb->sk), *sv = (float *)(c->img + tb->sv);
    uint8_t *k = c->img + tb->k, *vs = c->img + tb->vs, *vt = c->img + tb->vt;
    for (int n = 0; n < DEC_BN; n++) {
        const int tok = kv0 + n, valid = tok < end;
        int64_t row = 0;
        if (valid) {
            const int32_t page = table[tok / p->page];
            if (page < 0 || page >= p->num_pages) {
                char msg[200];
                snprintf(msg, sizeof msg, "the gather followed block_table[%d][%d] = %d, outside the cache of %d pages", b,
                         tok / p->page, page, p->num_pages);
                return emu_fail(&c->f, msg);
            }
            row = dec_token_row(p, table, tok, hk);
        }
        sk[n] = valid ? p->k_scale[row] : 0.0f;
        sv[n] = valid ? p->v_scale[row] : 0.0f;
        for (int e = 0; e < d; e++) {
            const uint8_t kc = valid ? p->k[row * d + e] : 0, vc = valid ? p->v[row * d + e] : 0;
            k[smem_tile_offset(&c->tk, n, e)] = kc;
            if (p->faults & DEC_FAULT_V_NOT_TRANSPOSED) vt[smem_tile_offset(&c->tv_mn, e, n)] = vc;
            else vs[smem_tile_offset(&c->tk, n, e)] = vc;
        }
    }
    /* Step 2a' (warp 5): V_j transposed into Vt */
    if (!(p->faults & DEC_FAULT_V_NOT_TRANSPOSED))
        for (int n = 0; n < DEC_BN; n++)
            for (int e = 0; e < d; e++) vt[smem_tile_offset(&c->tvt, e, n)] = vs[smem_tile_offset(&c->tk, n, e)];
    return 0;
}

static float f32_of(uint32_t u) { return bits_f32(u); }

/* The ring's load warp (warp 5) in the flow: its next tile and its place in the ring. */
typedef struct {
    int next, t1, b, hk, end;
    ring_state ls;
} loader;

/* Step 2a with the ring: gather every next tile whose slot is free now (a try_wait on its empty
 * barrier), each announced on the slot's full barrier with the load warp's 32 arrivals. `done` is
 * the last tile whose reads have all completed: refilling the slot of a later one is FG23. */
static int load_ring_ahead(emu_ctx *c, mbar_model *bars, loader *ld, int done)
{
    const int R = c->p->ring;
    while (ld->next < ld->t1 &&
           mbar_model_try_wait_parity(&bars[dec_ring_empty_bar(R, ld->ls.slot)], (int)ring_empty_parity(&ld->ls))) {
        if (ld->next - R > done) {
            char msg[240];
            snprintf(msg, sizeof msg, "the load warp refills slot %d with tile %d while tile %d still reads it: its "
                     "empty barrier arrived before the MMA that reads it completed (FG23)", ld->ls.slot, ld->next,
                     ld->next - R);
            return emu_fail(&c->f, msg);
        }
        const tile_bufs lb = bufs_of(c, ld->ls.slot);
        if (gather(c, ld->b, ld->hk, ld->next * DEC_BN, ld->end, &lb)) return 1;
        mbar_model_arrive_n(&bars[dec_ring_full_bar(ld->ls.slot)], 32);
        ring_advance(&ld->ls);
        ld->next++;
    }
    return 0;
}

/* The end of a CTA: every barrier quiet (every completed phase observed by a waiter, none
 * half-arrived, no arrival that landed before its phase opened). */
static int bars_quiet(emu_ctx *c, const mbar_model *bars, int n)
{
    for (int i = 0; i < n; i++) {
        const mbar_model *m = &bars[i];
        if (m->over_arrivals || m->pending != m->expected || (m->phase > 0 && !m->observed)) {
            char diag[200], msg[320];
            mbar_model_diagnose(m, diag, sizeof diag);
            snprintf(msg, sizeof msg, "barrier %d at the CTA's end: %s%s%s", i, diag,
                     m->phase > 0 && !m->observed ? "; its last phase completed with no waiter" : "",
                     m->over_arrivals ? "; arrivals before their phase" : "");
            return emu_fail(&c->f, msg);
        }
    }
    return 0;
}

static int emu_cta(emu_ctx *c, int b, int hk, int mt, int split)
{
    const dec_params *p = c->p;
    const int d = p->d, bm = p->bm, len = p->seqlens[b], m0 = mt * bm, M = dec_rows(p);
    emu_flow *f = &c->f;
    tmem_model *tm = f->tm;
    const uint32_t smem_q = c->L.tile[DEC_SMEM_Q], smem_p = c->L.tile[DEC_SMEM_P];
    smem_image im = {c->img, 0, c->L.used};
    const float scale_log2 = p->scale * DEC_LOG2E;
    const int R = p->ring > 0 ? p->ring : 0; /* ring slots (0: the one set of buffers) */
    if (R > DEC_MAX_RING) return emu_fail(f, "more ring slots than DEC_MAX_RING");
    int t0, t1;
    dec_split_tiles(p, len, split, &t0, &t1);
    int qi[DEC_BM_SM100], qh[DEC_BM_SM100], nvis[DEC_BM_SM100];
    for (int r = 0; r < bm; r++) {
        qi[r] = qh[r] = 0;
        if (m0 + r < M) dec_unpack_row(p, hk, m0 + r, &qi[r], &qh[r]);
        nvis[r] = m0 + r < M ? dec_visible_keys(p, len, qi[r]) : 0;
    }
    if (t0 >= t1) { /* an empty split: it saw no key */
        for (int r = 0; r < bm && m0 + r < M; r++)
            p->lse_part[(((int64_t)split * p->b + b) * p->hq + qh[r]) * p->sq + qi[r]] = -INFINITY;
        return 0;
    }

    /* Step 1: prologue (warp 4): TMEM; (thread 0): the barriers with the kernel's counts */
    uint32_t tmem;
    if (tmem_alloc(tm, DEC_TMEM_COLS, &tmem)) return emu_fail_tmem(f);
    tmem_relinquish(tm);
    mbar_model bars[DEC_NUM_BARS + 2 * DEC_MAX_RING];
    for (int i = 0; i < DEC_NUM_BARS + 2 * R; i++) { /* the ring's: full[s] as kv_full, empty[s] as kv_empty */
        mbar_model_reset(&bars[i]);
        const int as = i < DEC_NUM_BARS ? i : i < DEC_NUM_BARS + R ? DEC_BAR_KV_FULL : DEC_BAR_KV_EMPTY;
        mbar_model_init(&bars[i], (int)dec_bar_count(as));
    }
    mbar_model *q_full = &bars[DEC_BAR_Q_FULL], *kv_full = &bars[DEC_BAR_KV_FULL], *kv_empty = &bars[DEC_BAR_KV_EMPTY];
    mbar_model *s_full = &bars[DEC_BAR_S_FULL], *p_full = &bars[DEC_BAR_P_FULL], *o_done = &bars[DEC_BAR_O_DONE];

    /* Step 1 (warps 0-3): each thread quantises its packed row of Q into SMEM */
    float sq[DEC_BM_SM100];
    for (int r = 0; r < bm; r++) {
        float x[256], amax = 0.0f;
        const int valid = m0 + r < M;
        const uint16_t *q = p->q + (((int64_t)b * p->sq + qi[r]) * p->hq + qh[r]) * d;
        for (int e = 0; e < d; e++) {
            x[e] = valid ? bf16_to_f32(q[e]) : 0.0f;
            amax = fmaxf(amax, fabsf(x[e]));
        }
        sq[r] = amax > 0.0f ? amax / DEC_E4M3_MAX : 1.0f;
        for (int e = 0; e < d; e++) c->img[smem_q + smem_tile_offset(&c->tq, r, e)] = e4m3_encode(x[e] / sq[r], 1);
    }
    mbar_model_arrive_n(q_full, 32 * DEC_SOFTMAX_WARPS);

    float m_i[DEC_BM_SM100], l_i[DEC_BM_SM100], u_i[DEC_BM_SM100];
    for (int r = 0; r < bm; r++) { m_i[r] = -INFINITY; l_i[r] = 0.0f; u_i[r] = 1.0f; }
    const uint32_t idesc_qk = idesc_e4m3_f32((unsigned)bm, DEC_BN, 0, 0), idesc_pv = idesc_e4m3_f32((unsigned)bm, (unsigned)d, 0, 0);
    const smem_tile *tb = (p->faults & DEC_FAULT_V_NOT_TRANSPOSED) ? &c->tv_mn : &c->tvt;
    const int end = dec_gather_end(p, len);
    ring_state ms = ring_make(R ? R : 1);                              /* the MMA / softmax warps' place */
    loader ld = {t0, t1, b, hk, end, ring_make(R ? R : 1)};            /* the load warp (ring) */
    if (R && load_ring_ahead(c, bars, &ld, t0 - 1)) return 1;          /* the first R tiles */
    const int early = R && (p->faults & DEC_FAULT_RING_EARLY_RELEASE);  /* FG23 */
    const float *sv = img_f32(c, bm + DEC_BN);                         /* the latest tile's V scales */
    for (int j = t0; j < t1; j++) {
        const int it = j - t0, ph = it & 1, kv0 = j * DEC_BN;
        emu_status st = {0};
        /* Step 2a (warp 5), without the ring: wait until the last tile's MMAs released K/V, gather
         * K_j, V_j (with it, the load warp ran ahead: load_ring_ahead after each release) */
        if (!R) {
            const tile_bufs lb = bufs_of(c, 0);
            if (it > 0 && emu_wait(f, kv_empty, (it - 1) & 1, "kv_empty (load warp)")) return 1;
            if (gather(c, b, hk, kv0, end, &lb)) return 1;
            mbar_model_arrive_n(kv_full, 32);
        }
        const tile_bufs tb_j = bufs_of(c, R ? ms.slot : 0);
        mbar_model *full_j = R ? &bars[dec_ring_full_bar(ms.slot)] : kv_full;
        const int full_ph = R ? (int)ring_full_parity(&ms) : ph;
        const float *sk = (const float *)(c->img + tb_j.sk);
        sv = (const float *)(c->img + tb_j.sv);

        /* Step 2b (warp 4): S = Q K_j^T -> s_full */
        if ((it == 0 && emu_wait(f, q_full, 0, "q_full (MMA warp)")) || emu_wait(f, full_j, full_ph, "kv_full (MMA warp)"))
            return 1;
        for (int k = 0; k < d; k += 32)
            if (emu_tcgen05_mma(tm, &im, tmem + DEC_TMEM_S, 0, 0, smem_tile_desc_sm100(&c->tq, smem_q, 0, k),
                                smem_tile_desc_sm100(&c->tk, tb_j.k, 0, k), idesc_qk, MMA_KIND_F8F6F4, k > 0, &st))
                return emu_fail(f, st.msg);
        mbar_model_arrive(s_full);
        if (early && j + R < t1) { /* FG23: the slot released with S's commit, before its other reads */
            mbar_model_arrive(&bars[dec_ring_empty_bar(R, ms.slot)]);
            if (load_ring_ahead(c, bars, &ld, j - 1)) return 1;
        }

        /* Step 2c (warps 0-3): the online softmax, one row per thread */
        if (emu_wait(f, s_full, ph, "s_full (softmax warps)")) return 1;
        /* the tile's scales come from the load warp: the softmax warps wait on kv_full too */
        if (emu_wait(f, full_j, full_ph, "kv_full (softmax warps, before the tile's scales)")) return 1;
        /* Step 2d needs the previous P V done: P's SMEM tile and O are rewritten */
        if (it > 0 && emu_wait(f, o_done, (it - 1) & 1, "o_done (softmax warps, before P and the O rescale)")) return 1;
        for (int w = 0; w < DEC_SOFTMAX_WARPS; w++) {
            uint32_t s[32 * DEC_BN];
            for (int c0 = 0; c0 < DEC_BN; c0 += 32) {
                uint32_t chunk[32 * 32];
                if (tmem_ld(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + DEC_TMEM_S, 32 * w, c0), 32, chunk))
                    return emu_fail_tmem(f);
                for (int t = 0; t < 32; t++) memcpy(&s[t * DEC_BN + c0], &chunk[t * 32], 32 * 4);
            }
            float corr[32];
            for (int t = 0; t < 32; t++) {
                const int r = 32 * w + t;
                float x[DEC_BN], mx = m_i[r];
                for (int n = 0; n < DEC_BN; n++) {
                    float colscale = sk[n];
                    if (p->faults & DEC_FAULT_K_SCALE_ON_ROWS) colscale = sk[r % DEC_BN]; /* FG17 */
                    if (p->faults & DEC_FAULT_K_SCALE_DROPPED) colscale = 1.0f;           /* FG17 */
                    x[n] = kv0 + n < nvis[r] ? f32_of(s[t * DEC_BN + n]) * (scale_log2 * sq[r]) * colscale : -INFINITY;
                    mx = fmaxf(mx, x[n]);
                }
                const float base = fmha_exp_base(mx, 0), alpha = exp2f(m_i[r] - base);
                m_i[r] = mx;
                l_i[r] *= alpha;
                float pmax = 0.0f, svmax = 0.0f;
                for (int n = 0; n < DEC_BN; n++) {
                    x[n] = exp2f(x[n] - base);
                    l_i[r] += x[n];
                    /* Step 2d: V's scale into P's columns, the row's P scale, P's codes */
                    if (!(p->faults & DEC_FAULT_V_SCALE_ON_O_ROWS)) x[n] *= sv[n];
                    pmax = fmaxf(pmax, x[n]);
                    svmax = fmaxf(svmax, sv[n]);
                }
                const float sp = dec_p_scale(pmax, svmax), inv = 1.0f / sp;
                for (int n = 0; n < DEC_BN; n++) c->img[smem_p + smem_tile_offset(&c->tp, r, n)] = e4m3_encode(x[n] * inv, 1);
                corr[t] = alpha * (u_i[r] / sp);
                u_i[r] = sp;
            }
            /* the correction: O *= alpha u / sp (only once O holds something) */
            if (it > 0)
                for (int c0 = 0; c0 < d; c0 += 32) {
                    uint32_t o[32 * 32];
                    const uint32_t oaddr = tmem_addr(tmem + DEC_TMEM_O, 32 * w, c0);
                    if (tmem_ld(tm, w, TMEM_32x32b, 32, 0, oaddr, 32, o)) return emu_fail_tmem(f);
                    for (int t = 0; t < 32; t++)
                        for (int e = 0; e < 32; e++) o[t * 32 + e] = f32_bits(f32_of(o[t * 32 + e]) * corr[t]);
                    if (tmem_st(tm, w, TMEM_32x32b, 32, 0, oaddr, 32, 0, o)) return emu_fail_tmem(f);
                }
            mbar_model_arrive_n(p_full, 32);
        }

        /* Step 2e (warp 4): O += P V_j -> o_done, kv_empty */
        if (emu_wait(f, p_full, ph, "p_full (MMA warp)")) return 1;
        for (int k = 0; k < DEC_BN; k += 32)
            if (emu_tcgen05_mma(tm, &im, tmem + DEC_TMEM_O, 0, 0, smem_tile_desc_sm100(&c->tp, smem_p, 0, k),
                                smem_tile_desc_sm100(tb, tb_j.vt, 0, k), idesc_pv, MMA_KIND_F8F6F4, it > 0 || k > 0, &st))
                return emu_fail(f, st.msg);
        mbar_model_arrive(o_done);
        /* as the kernel: a release whose buffers are never refilled has no waiter */
        if (!early && j + (R ? R : 1) < t1) mbar_model_arrive(R ? &bars[dec_ring_empty_bar(R, ms.slot)] : kv_empty);
        if (R) {
            ring_advance(&ms);
            if (load_ring_ahead(c, bars, &ld, j)) return 1; /* the load warp takes the freed slot */
        }
    }

    /* Step 3: epilogue (warps 0-3): O = u O_acc / l_i -> bf16 (or f32 O_part), LSE */
    if (emu_wait(f, o_done, (t1 - t0 - 1) & 1, "o_done (epilogue)")) return 1;
    if (bars_quiet(c, bars, DEC_NUM_BARS + 2 * R)) return 1;
    for (int w = 0; w < DEC_SOFTMAX_WARPS; w++)
        for (int c0 = 0; c0 < d; c0 += 32) {
            uint32_t o[32 * 32];
            if (tmem_ld(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + DEC_TMEM_O, 32 * w, c0), 32, o)) return emu_fail_tmem(f);
            for (int t = 0; t < 32; t++) {
                const int r = 32 * w + t;
                if (m0 + r >= M) continue;
                float fin = l_i[r] > 0.0f ? u_i[r] / l_i[r] : 0.0f; /* a row that saw no key: O = 0 */
                if (p->faults & DEC_FAULT_V_SCALE_ON_O_ROWS) fin *= sv[r % DEC_BN]; /* FG17: a row factor of O */
                const int64_t orow = (((int64_t)b * p->sq + qi[r]) * p->hq + qh[r]) * d;
                for (int e = 0; e < 32; e++) {
                    const float x = f32_of(o[t * 32 + e]) * fin;
                    if (p->splits > 1) p->o_part[(int64_t)split * p->b * p->sq * p->hq * d + orow + c0 + e] = x;
                    else p->o[orow + c0 + e] = f32_to_bf16(x);
                }
                if (c0 == 0) {
                    const float lse = l_i[r] > 0.0f ? m_i[r] * DEC_LN2 + logf(l_i[r]) : -INFINITY;
                    const int64_t li = ((int64_t)b * p->hq + qh[r]) * p->sq + qi[r];
                    if (p->splits > 1) p->lse_part[(int64_t)split * p->b * p->hq * p->sq + li] = lse;
                    else p->lse[li] = lse;
                }
            }
        }

    /* Step 4: teardown (warp 4): free TMEM */
    if (tmem_dealloc(tm, tmem, DEC_TMEM_COLS) || tmem_next_cta(tm)) return emu_fail_tmem(f);
    return 0;
}

/* merge.cu's kernel, row by row, with the same rule functions. */
static void merge(const dec_params *p)
{
    const int64_t rows = (int64_t)p->b * p->sq * p->hq, lse_stride = rows, o_stride = rows * p->d;
    for (int64_t row = 0; row < rows; row++) {
        const int b = (int)(row / ((int64_t)p->sq * p->hq)), i = (int)(row / p->hq % p->sq), h = (int)(row % p->hq);
        const int64_t li = ((int64_t)b * p->hq + h) * p->sq + i;
        const float *ls = p->lse_part + li;
        const float m = merge_max_lse(ls, p->splits, lse_stride);
        float wsum = 0.0f;
        for (int s = 0; s < p->splits; s++) wsum += merge_weight(ls[s * lse_stride], m);
        const float inv = wsum > 0.0f ? 1.0f / wsum : 0.0f;
        for (int e = 0; e < p->d; e++)
            p->o[row * p->d + e] = f32_to_bf16(merge_elem(p->o_part + row * p->d + e, o_stride, ls, lse_stride, p->splits, m, inv));
        p->lse[li] = merge_lse(m, wsum);
    }
}

int stage_d_emu_run(const dec_params *p, char *err, int errlen)
{
    emu_ctx c;
    memset(&c, 0, sizeof c);
    c.f = (emu_flow){tmem_model_new(), err, errlen};
    c.p = p;
    c.L = dec_smem_layout_make_ring(p->bm, p->d, p->ring, 0);
    c.tq = dec_q_tile(p->bm, p->d);
    c.tk = dec_k_tile(p->d);
    c.tvt = dec_vt_tile(p->d);
    c.tp = dec_p_tile(p->bm);
    c.tv_mn = dec_v_mn_tile(p->d);
    c.img = calloc(c.L.used, 1);
    err[0] = '\0';
    int rc = (c.f.tm && c.img && p->bm == DEC_BM_SM100) ? 0 : 1;
    if (rc) snprintf(err, (size_t)errlen, "emu: out of host memory, or bm %d is not the modelled %d", p->bm, DEC_BM_SM100);
    const grid3 g = dec_grid(p);
    const int mtiles = dec_m_tiles(p);
    for (unsigned b = 0; b < g.z && !rc; b++)
        for (unsigned hk = 0; hk < g.y && !rc; hk++)
            for (unsigned x = 0; x < g.x && !rc; x++) rc = emu_cta(&c, (int)b, (int)hk, (int)x % mtiles, (int)x / mtiles);
    if (!rc && p->splits > 1) merge(p);
    free(c.img);
    tmem_model_free(c.f.tm);
    return rc;
}
