/* FG08 — TMEM offsets counted in the wrong unit.
 *
 * Symptom: O = P V wrong with no error at all, or, with a tighter allocation, an access past the
 *   allocated columns (seed 003 footgun 8: the P offset had to be scaled by 2 when moving from
 *   the f32 view used by the softmax store to the bf16 view used by the MMA's A fragment).
 * Cause: raw PTX TMEM addresses count 32-bit columns. CuTe's tmem_ptr<bf16> counts bf16 elements
 *   and halves its offsets, which is why the seed (and FA4) multiply an f32 column offset by 2
 *   before adding it to a bf16 tensor. Copying that factor into raw-address arithmetic puts P's
 *   base at 2 x its column and steps 16 columns per k16 instead of 8 (notes/hardware.md section 4.4): the MMA
 *   reads other columns (here O's own accumulator and never-written cells) as P.
 * Fix: raw addresses stay in 32-bit columns: P at PV_TMEM_P, +k/2 columns per k16 step
 *   (stages/B_pv/pv_sm100.cu step 5, `tmem + PV_TMEM_P + k / 2`); divide bf16 element offsets by
 *   2, never multiply column offsets by 2.
 * Stage: B. Levels:
 *   emu   stage B's emu flow with PV_FAULT_P_OFFSET_X2 (the doubled reads stay inside its 512
 *         columns: wrong O, no error); the same TS MMA with a 256-column allocation, where the
 *         doubled base is past the allocation and the model names the error. Reproductions of the
 *         model.
 *   sm90  no analogue: Hopper has no TMEM (P stays in registers).
 *   sm100 no B200 here: the stage B kernel is compiled only.
 * Notes: notes/footguns.md#fg08 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "model/frag_map.h"
#include "model/mma_emu.h"
#include "pv_fixture.h"

Test(footgun, fg08_wrong_p_offset_x2_then_fixed_emu_stage)
{
    const int d = 64;
    pv_problem pp;
    pv_problem_make(&pp, 1, 1, 128, 256, d, 80);
    double *ref = malloc(sizeof(double) * pp.nq);
    pv_problem_reference(&pp, NULL, ref);
    char err[320];

    /* Where the doubled A reads land: base 2 * PV_TMEM_P, then +16 columns per k16 step, 8
     * columns each. Inside the stage's allocation -> no error is expected, only a wrong O. */
    const int last_col = 2 * PV_TMEM_P + (PV_BN - 16) + 7; /* last k16 step: base + k, 8 columns */
    const int expect_error = last_col >= PV_TMEM_COLS;
    const int rc = pv_problem_run(&pp, PV_FAULT_P_OFFSET_X2, err, sizeof err);
    fprintf(stderr, "FG08 emu stage B, P offset doubled: A reads columns %d-%d (P is at %d-%d, O at %d-%d, %d "
            "allocated): rc %d%s%s\n", 2 * PV_TMEM_P, last_col, PV_TMEM_P, PV_TMEM_P + PV_BN / 2 - 1, PV_TMEM_O,
            PV_TMEM_O + d - 1, PV_TMEM_COLS, rc, rc ? ", " : "", err);
    cr_assert_eq(rc, expect_error, "the run %s past the allocation", expect_error ? "must stop" : "must not stop");
    if (rc) {
        cr_expect(strstr(err, "not allocated") != NULL, "the model names the error: %s", err);
    } else {
        const size_t nan = count_nan(pp.p.o, pp.nq), bad = count_mismatch(pp.p.o, ref, pp.nq);
        fprintf(stderr, "FG08 emu stage B, P offset doubled: %zu of %zu elements wrong, %zu NaN (the A reads include "
                "never-written TMEM)\n", bad, pp.nq, nan);
        cr_expect_eq(bad, pp.nq, "every element of O is wrong");
    }

    /* fixed: P at PV_TMEM_P, +8 columns per k16 */
    cr_assert_eq(pv_problem_run(&pp, 0, err, sizeof err), 0, "%s", err);
    cr_expect_eq(count_mismatch(pp.p.o, ref, pp.nq), 0, "fixed flow must be exact");
    free(ref);
    pv_problem_free(&pp);
}

/* The same TS MMA with a tight allocation: 256 columns, P [128 x 128] bf16 packed at column 128
 * (64 columns), O [128 x 64] at column 0, V MN-major SW128. x2 = 1 doubles P's base and step. */
static emu_err ts_pv(int x2, char *msg, size_t len)
{
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 128, 64, 128, MAJOR_K, MAJOR_MN, SWZ_128B, 81);
    tmem_model *t = tmem_model_new();
    uint32_t base;
    cr_assert_eq(tmem_alloc(t, 256, &base), TMEM_OK);
    const uint32_t p_col = 128;
    for (int w = 0; w < 4; w++) {
        uint32_t regs[32 * 64];
        for (int th = 0; th < 32; th++)
            for (int j = 0; j < 64; j++) {
                const int row = 32 * w + th;
                regs[th * 64 + j] = pack_bf16_pair(f32_to_bf16((float)c.a[row * 128 + 2 * j]),
                                                   f32_to_bf16((float)c.a[row * 128 + 2 * j + 1]));
            }
        cr_assert_eq(tmem_st(t, w, TMEM_32x32b, 64, 0, tmem_addr(base + p_col, 32 * w, 0), 32, 0, regs), TMEM_OK, "%s", t->msg);
    }
    smem_image im = {c.img, 0, c.bytes};
    emu_err e = EMU_OK;
    emu_status st = {0};
    for (int k = 0; k < 128 && !e; k += 16) {
        const uint32_t a = x2 ? base + 2 * p_col + (uint32_t)k : base + p_col + (uint32_t)(k / 2);
        e = emu_tcgen05_mma(t, &im, base, 1, a, 0, mma_case_desc_sm100(&c, 1, k), idesc_bf16_f32(128, 64, 0, 1),
                            MMA_KIND_F16, k > 0, &st);
    }
    snprintf(msg, len, "%s", e ? st.msg : "");
    size_t bad = 0;
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < 64; j++) {
            float v;
            memcpy(&v, &t->cell[i][tmem_addr_col(base) + j], 4);
            bad += (double)v != c.ref[i * 64 + j];
        }
    if (!e && !x2) cr_expect_eq(bad, 0, "fixed TS MMA must be exact");
    tmem_model_free(t);
    mma_case_free(&c);
    return e;
}

Test(footgun, fg08_wrong_p_offset_x2_past_allocation_then_fixed_emu)
{
    char msg[320];
    /* wrong: P's base doubled to column 256 of a 256-column allocation */
    const emu_err e = ts_pv(1, msg, sizeof msg);
    fprintf(stderr, "FG08 emu TS MMA, 256 columns allocated, P at 128 doubled to 256: %s\n", msg);
    cr_expect_eq(e, EMU_ERR_TMEM, "the model refuses the read");
    cr_expect(strstr(msg, "column 256") && strstr(msg, "not allocated"), "and names the column: %s", msg);
    /* fixed */
    cr_expect_eq(ts_pv(0, msg, sizeof msg), EMU_OK, "%s", msg);
}
