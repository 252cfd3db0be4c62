/* Stage B on the host model ("emu"): the data flow of pv_sm100.cu step for step (same encoders,
 * same SMEM layout, same TMEM column map, same step labels: 1 prologue, 2a load K_j V_j,
 * 2b S = Q K_j^T, 2c P, 2d O += P V_j, 2e tile released, 3 epilogue, 4 teardown), executed by the
 * MMA emulator, the TMEM model and the mbarrier model. One TMEM model serves all CTAs in turn, as one SM's TMEM does: it is not cleared
 * between CTAs.
 *
 * The `faults` switches run the broken variants the footgun tests assert on; each one changes
 * exactly the line it names (search for the PV_FAULT_ name). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "model/canonical_fill.h"
#include "model/emu_flow.h"
#include "model/frag_map.h"
#include "model/idesc.h"
#include "model/layout.h"
#include "model/mbar_model.h"
#include "model/mma_emu.h"
#include "model/tmem_model.h"
#include "pv.h"

typedef struct {
    emu_flow f;
    const pv_params *p;
    unsigned faults;
    uint8_t *img;      /* the CTA's SMEM image, laid out by pv_smem_layout_make (+ padding) */
    smem_layout L;
    uint32_t img_bytes;
    smem_tile tq, tk, tv, tv_kmajor;
    layout_t p_layout; /* PV_P_TMEM_LAYOUT */
} emu_ctx;

/* The column (from PV_TMEM_P) of P's store block b, keys 32b .. 32b + 31: PV_P_TMEM_LAYOUT at
 * word 16b of lane 0, column 16b. PV_FAULT_P_NESTED_LAST_FASTEST reads the nested mode the other
 * way round (FG09): block b at 16 (b / 2) + 32 (b % 2). */
static uint32_t p_block_col(const emu_ctx *c, int b)
{
    const long coord[3] = {0, 0, b}; /* lane 0, word 0 of the block: modes 0 and 1 add nothing */
    const long off = (c->faults & PV_FAULT_P_NESTED_LAST_FASTEST) ? layout_eval_mode_last_fastest(&c->p_layout, 2, b)
                                                                  : layout_eval_top(&c->p_layout, coord);
    return (uint32_t)(off & 0xFFFF); /* the offset is lane << 16 | column: the column */
}

/* Step 2c for one softmax warp: S (its 32 lanes) -> P = bf16(scale * S) packed -> TMEM. */
static int softmax_warp(emu_ctx *c, int w, uint32_t tmem)
{
    for (int c0 = 0; c0 < PV_BN; c0 += 32) {
        uint32_t s[32 * 32], pk[32 * 16];
        if (tmem_ld(c->f.tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + PV_TMEM_S, 32 * w, c0), 32, s)) return emu_fail_tmem(&c->f);
        for (int lane = 0; lane < 32; lane++)
            for (int i = 0; i < 16; i++) {
                float e, o;
                memcpy(&e, &s[lane * 32 + 2 * i], 4);
                memcpy(&o, &s[lane * 32 + 2 * i + 1], 4);
                uint16_t he = f32_to_bf16(e * c->p->scale), ho = f32_to_bf16(o * c->p->scale);
                /* cvt.rn.bf16x2.f32 d, a, b puts a in the upper half: the right call is cvt(odd, even) */
                pk[lane * 16 + i] = (c->faults & PV_FAULT_PACK_SWAPPED) ? pack_bf16x2_cvt_order(he, ho)
                                                                        : pack_bf16x2_cvt_order(ho, he);
            }
        const int bits = (c->faults & PV_FAULT_STORE_16BIT) ? 16 : 32;
        if (tmem_st(c->f.tm, w, TMEM_32x32b, 16, 0, tmem_addr(tmem + PV_TMEM_P, 32 * w, p_block_col(c, c0 / 32)), bits, 0, pk))
            return emu_fail_tmem(&c->f);
    }
    return 0;
}

static int emu_cta(emu_ctx *c, int bh, int qt)
{
    const pv_params *p = c->p;
    const int d = p->d, q0 = qt * PV_BM;
    const uint16_t *kbh = p->k + (size_t)bh * p->skv * d, *vbh = p->v + (size_t)bh * p->skv * d;
    emu_flow *f = &c->f;
    tmem_model *tm = f->tm;
    /* SMEM addresses of the tiles in the image */
    const uint32_t smem_q = c->L.tile[PV_SMEM_Q], smem_k = c->L.tile[PV_SMEM_K], smem_v = c->L.tile[PV_SMEM_V];
    smem_image im = {c->img, 0, c->img_bytes};

    /* Step 1: prologue: TMEM, barriers, the Q tile */
    uint32_t tmem;
    if (tmem_alloc(tm, PV_TMEM_COLS, &tmem)) return emu_fail_tmem(f);
    tmem_relinquish(tm);
    mbar_model s_full, p_full, o_done;
    mbar_model_reset(&s_full); mbar_model_reset(&p_full); mbar_model_reset(&o_done);
    mbar_model_init(&s_full, 1);
    mbar_model_init(&p_full, 128);
    mbar_model_init(&o_done, 1);
    smem_fill_rows_kmajor(c->img + smem_q, &c->tq, p->q + (size_t)bh * p->sq * d, q0, p->sq, d);

    const uint32_t idesc_qk = idesc_bf16_f32(PV_BM, PV_BN, 0, 0);
    /* PV_FAULT_V_KMAJOR: B described as K-major, idesc bit 16 = 0 */
    const int v_kmajor = (c->faults & PV_FAULT_V_KMAJOR) != 0;
    uint32_t idesc_pv = idesc_bf16_f32(PV_BM, (unsigned)d, 0, v_kmajor ? 0 : 1);
    /* PV_FAULT_IDESC_*: the same descriptor with its M or N field written one bit low (FG03) */
    if (c->faults & PV_FAULT_IDESC_M_BIT23) idesc_pv = idesc_miscoded(idesc_pv, IDESC_MISCODE_M_AT_BIT23);
    if (c->faults & PV_FAULT_IDESC_N_BIT_LOW) idesc_pv = idesc_miscoded(idesc_pv, IDESC_MISCODE_N_BIT_LOW);
    const int ntiles = (p->skv + PV_BN - 1) / PV_BN;
    for (int j = 0; j < ntiles; j++) {
        const int ph = j & 1;
        emu_status st = {0};
        /* Step 2a: K_j, V_j -> SMEM. The K-major fault fills V the way K is filled ([keys x D],
         * K-major); its K steps past D then read whatever SMEM follows the tile. */
        smem_fill_rows_kmajor(c->img + smem_k, &c->tk, kbh, j * PV_BN, p->skv, d);
        if (v_kmajor) smem_fill_rows_kmajor(c->img + smem_v, &c->tv_kmajor, vbh, j * PV_BN, p->skv, d);
        else smem_fill_rows_mnmajor(c->img + smem_v, &c->tv, vbh, j * PV_BN, p->skv, d);

        /* Step 2b: S = Q K_j^T, commit -> s_full */
        for (int k = 0; k < d; k += 16)
            if (emu_tcgen05_mma(tm, &im, tmem + PV_TMEM_S, 0, 0, smem_tile_desc_sm100(&c->tq, smem_q, 0, k),
                                smem_tile_desc_sm100(&c->tk, smem_k, 0, k), idesc_qk, MMA_KIND_F16, k > 0, &st))
                return emu_fail(f, st.msg);
        mbar_model_arrive(&s_full);

        /* Step 2c: softmax warps: wait s_full, S -> P, every thread arrives on p_full */
        if (emu_wait(f, &s_full, ph, "s_full (softmax warps)")) return 1;
        for (int w = 0; w < 4; w++) {
            if (softmax_warp(c, w, tmem)) return 1;
            mbar_model_arrive_n(&p_full, 32);
        }

        /* Step 2d: O += P V_j, commit -> o_done */
        if (emu_wait(f, &p_full, ph, "p_full (MMA warp)")) return 1;
        for (int k = 0; k < PV_BN; k += 16) {
            /* P's columns in f32 units: +8 per k16 step. PV_FAULT_P_OFFSET_X2 counts them in bf16
             * elements instead: base and step both doubled. */
            uint32_t a = (c->faults & PV_FAULT_P_OFFSET_X2) ? tmem + 2 * PV_TMEM_P + (uint32_t)k
                                                             : tmem + PV_TMEM_P + (uint32_t)(k / 2);
            uint64_t vdesc;
            if (v_kmajor) vdesc = smem_tile_desc_sm100(&c->tv_kmajor, smem_v, 0, k);
            else if (c->faults & PV_FAULT_V_ADVANCE_32B) /* the K-major rule on an MN-major tile */
                vdesc = smem_desc_advance(smem_tile_desc_sm100(&c->tv, smem_v, 0, 0), 32u * (uint32_t)(k / 16));
            else vdesc = smem_tile_desc_sm100(&c->tv, smem_v, 0, k);
            int acc = (c->faults & PV_FAULT_ACCUMULATE_FIRST) ? 1 : (j > 0 || k > 0);
            if (emu_tcgen05_mma(tm, &im, tmem + PV_TMEM_O, 1, a, 0, vdesc, idesc_pv, MMA_KIND_F16, acc, &st))
                return emu_fail(f, st.msg);
        }
        mbar_model_arrive(&o_done);

        /* Step 2e: everyone waits o_done: the tile's buffers are free */
        if (emu_wait(f, &o_done, ph, "o_done (all warps)")) return 1;
    }

    /* Step 3: epilogue: O out of TMEM, each warp its own quadrant */
    for (int w = 0; w < 4; w++)
        for (int c0 = 0; c0 < d; c0 += 32) {
            uint32_t o[32 * 32];
            if (tmem_ld(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem + PV_TMEM_O, 32 * w, c0), 32, o)) return emu_fail_tmem(f);
            for (int lane = 0; lane < 32; lane++) {
                const int row = q0 + 32 * w + lane;
                if (row < p->sq) memcpy(p->o + ((size_t)bh * p->sq + row) * d + c0, &o[lane * 32], 32 * 4);
            }
        }

    /* Step 4: teardown: free TMEM */
    if (tmem_dealloc(tm, tmem, PV_TMEM_COLS) || tmem_next_cta(tm)) return emu_fail_tmem(f);
    return 0;
}

int pv_emu_run(const pv_params *p, unsigned faults, char *err, int errlen)
{
    emu_ctx c;
    memset(&c, 0, sizeof c);
    char lerr[160];
    if (layout_parse(PV_P_TMEM_LAYOUT, &c.p_layout, lerr, sizeof lerr)) { /* a constant: never, but say so */
        snprintf(err, (size_t)errlen, "PV_P_TMEM_LAYOUT: %s", lerr);
        return 1;
    }
    c.f = (emu_flow){tmem_model_new(), err, errlen};
    c.p = p;
    c.faults = faults;
    c.L = pv_smem_layout_make(p->d);
    c.tq = pv_q_tile(p->d);
    c.tk = pv_k_tile(p->d);
    c.tv = pv_v_tile(p->d);
    c.tv_kmajor = smem_tile_make(MAJOR_K, SWZ_128B, 2, PV_BN, p->d);
    /* room for the K-major fault's reads past the V tile (on a GPU: whatever SMEM follows) */
    c.img_bytes = c.L.tile[PV_SMEM_V] + 2 * (c.tv_kmajor.bytes > c.tv.bytes ? c.tv_kmajor.bytes : c.tv.bytes);
    if (c.img_bytes < c.L.used) c.img_bytes = c.L.used;
    c.img = calloc(c.img_bytes, 1);
    err[0] = '\0';
    int rc = (c.f.tm && c.img) ? 0 : 1;
    const grid3 g = pv_grid(p);
    for (unsigned bh = 0; bh < g.y && !rc; bh++)
        for (unsigned qt = 0; qt < g.x && !rc; qt++) rc = emu_cta(&c, (int)bh, (int)qt);
    free(c.img);
    tmem_model_free(c.f.tm);
    return rc;
}
