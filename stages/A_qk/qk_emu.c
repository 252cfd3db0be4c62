/* Stage A on the host model ("emu"): the data flow of qk_sm100.cu, step for step (the same step
 * labels), with the same encoders and the same SMEM layout, executed by the MMA emulator into the
 * TMEM model and read back by four modelled warps. Steps: 1 prologue, 2a load Q and K, 2b S = Q K^T,
 * 3 epilogue, 4 teardown.
 *
 * The `faults` switches run the broken variants the footgun tests assert on; each one changes
 * exactly the lines it names (search for the QK_FAULT_ name). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/canonical_fill.h"
#include "model/emu_flow.h"
#include "model/frag_map.h"
#include "model/idesc.h"
#include "model/mbar_model.h"
#include "model/mma_emu.h"
#include "model/tmem_model.h"
#include "qk.h"

/* QK_FAULT_FILL_FULL_D's image holds Q's slices, then K's, each operand's with room for the global
 * column's overshoot (on a GPU it would land in whatever SMEM follows): this many bytes each. */
static uint32_t fg01_operand_bytes(int d)
{
    const smem_tile slice = qk_fg01_slice_tile();
    return smem_kslices_bytes(&slice, d);
}

/* One CTA: tile (q tile qt, kv tile kt) of head bh. Returns 0 or 1 (err set). */
static int emu_cta(const qk_params *p, unsigned faults, int bh, int qt, int kt, uint8_t *img, char *err, int errlen)
{
    const smem_tile tq = qk_q_tile(p->d), tk = qk_k_tile(p->d);
    const smem_layout L = qk_smem_layout_make(p->d);
    const int q0 = qt * QK_BM, kv0 = kt * QK_BN;
    /* QK_FAULT_FILL_FULL_D (FG01): the seed's K slices, Q's then K's */
    const int fill_full_d = (faults & QK_FAULT_FILL_FULL_D) != 0;
    const smem_tile slice = qk_fg01_slice_tile();
    const uint32_t fg01_k = fill_full_d ? fg01_operand_bytes(p->d) : 0u;
    const uint32_t smem_q = fill_full_d ? 0u : L.tile[QK_SMEM_Q]; /* the tiles' SMEM addresses in the image */
    const uint32_t smem_k = fill_full_d ? fg01_k : L.tile[QK_SMEM_K];
    emu_flow f = {tmem_model_new(), err, errlen};
    tmem_model *tm = f.tm;
    int rc = 0;

    /* Step 1: prologue: TMEM for the 128 x 128 f32 accumulator; the MMA-done mbarrier (one commit) */
    uint32_t tmem_s;
    if (tmem_alloc(tm, QK_BN, &tmem_s) != TMEM_OK) { rc = emu_fail_tmem(&f); goto out; }
    tmem_relinquish(tm);
    mbar_model bar;
    mbar_model_reset(&bar);
    mbar_model_init(&bar, 1);

    /* Step 2a: global -> SMEM image, canonical K-major 128B-swizzled tiles. QK_FAULT_FILL_FULL_D:
     * the seed's slices, each column at its GLOBAL column's offset inside its slice's tile */
    const uint16_t *qsrc = p->q + (size_t)bh * p->sq * p->d, *ksrc = p->k + (size_t)bh * p->skv * p->d;
    if (fill_full_d) {
        smem_fill_rows_kslices(img + smem_q, &slice, qsrc, q0, p->sq, p->d, p->d, 1);
        smem_fill_rows_kslices(img + smem_k, &slice, ksrc, kv0, p->skv, p->d, p->d, 1);
    } else {
        smem_fill_rows_kmajor(img + smem_q, &tq, qsrc, q0, p->sq, p->d);
        smem_fill_rows_kmajor(img + smem_k, &tk, ksrc, kv0, p->skv, p->d);
    }

    /* Step 2b: D/16 MMAs, accumulate off for the first; the commit arrives on the barrier.
     * QK_FAULT_FILL_FULL_D: K step k's descriptors at the base of slice k / 16 (the seed's) */
    smem_image im = {img, 0, fill_full_d ? 2u * fg01_k : L.used};
    const uint32_t idesc = idesc_bf16_f32(QK_BM, QK_BN, 0, 0);
    for (int k = 0; k < p->d; k += 16) {
        emu_status st = {0};
        const uint32_t sb = (uint32_t)(k / 16) * slice.bytes;
        const uint64_t da = fill_full_d ? smem_tile_desc_sm100(&slice, smem_q + sb, 0, 0) : smem_tile_desc_sm100(&tq, smem_q, 0, k);
        const uint64_t db = fill_full_d ? smem_tile_desc_sm100(&slice, smem_k + sb, 0, 0) : smem_tile_desc_sm100(&tk, smem_k, 0, k);
        if (emu_tcgen05_mma(tm, &im, tmem_s, 0, 0, da, db, idesc, MMA_KIND_F16, k > 0, &st)) {
            rc = emu_fail(&f, st.msg);
            goto out;
        }
    }
    mbar_model_arrive(&bar);

    /* Step 3: epilogue: the wait must find the phase complete; then the four warps read TMEM */
    if (emu_wait(&f, &bar, 0, "mma_done (epilogue warps)")) {
        rc = 1;
        goto out;
    }
    const int one_warp = (faults & QK_FAULT_ONE_WARP_EPILOGUE) != 0;
    const int nwarps = one_warp ? 1 : 4;
    for (int w = 0; w < nwarps; w++) {
        /* four warps: warp w reads lanes 32w..32w+31; one warp: warp 0 tries all four quadrants */
        for (int quad = 0; quad < 4; quad++) {
            if (!one_warp && quad != w) continue;
            for (int c0 = 0; c0 < QK_BN; c0 += 32) {
                uint32_t regs[32 * 32];
                if (tmem_ld(tm, w, TMEM_32x32b, 32, 0, tmem_addr(tmem_s, 32 * quad, c0), 32, regs) != TMEM_OK) {
                    emu_fail_tmem(&f); /* recorded; these rows stay unwritten */
                    continue;
                }
                for (int lane = 0; lane < 32; lane++) {
                    const int row = q0 + 32 * quad + lane;
                    if (row >= p->sq) continue;
                    float *srow = p->s + ((size_t)bh * p->sq + row) * p->skv;
                    for (int j = 0; j < 32; j++) {
                        float v;
                        memcpy(&v, &regs[lane * 32 + j], 4);
                        if (kv0 + c0 + j < p->skv) srow[kv0 + c0 + j] = v * p->scale;
                    }
                }
            }
        }
    }

    /* Step 4: teardown: free TMEM; nothing may stay allocated */
    if (tmem_dealloc(tm, tmem_s, QK_BN) != TMEM_OK || tmem_check_released(tm) != TMEM_OK) rc = emu_fail_tmem(&f);
out:
    tmem_model_free(tm);
    return rc;
}

int qk_emu_run(const qk_params *p, unsigned faults, char *err, int errlen)
{
    const uint32_t used = qk_smem_layout_make(p->d).used;
    const uint32_t fg01 = (faults & QK_FAULT_FILL_FULL_D) ? 2u * fg01_operand_bytes(p->d) : 0u;
    uint8_t *img = calloc(fg01 > used ? fg01 : used, 1);
    if (!img) return 1;
    err[0] = '\0';
    int rc = 0;
    const grid3 g = qk_grid(p);
    for (unsigned bh = 0; bh < g.z && !rc; bh++)
        for (unsigned qt = 0; qt < g.y && !rc; qt++)
            for (unsigned kt = 0; kt < g.x && !rc; kt++) rc = emu_cta(p, faults, (int)bh, (int)qt, (int)kt, img, err, errlen);
    free(img);
    return rc;
}
