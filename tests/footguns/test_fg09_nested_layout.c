/* FG09 — a nested layout that looks non-sequential but flattens sequentially.
 *
 * Symptom: a developer reading the TMEM layout ((128,16),1,(4,2)):((65536,1),0,(16,64)) of the
 *   seed's P store expects its columns to come in a scrambled order and "fixes" the addressing;
 *   P then lands in different TMEM columns than the ones the MMA's A operand reads, and O is
 *   wrong without any error (seed 003 footgun 3).
 * Cause: CuTe splits an index over the modes of a layout colexicographically (leftmost fastest),
 *   inside nested modes too; nesting groups modes, it never reorders them. So index m + 128 k with
 *   k = k0 + 16 k1 + 64 k2 maps to m*65536 + k0 + 16 k1 + 64 k2 = m*65536 + k: TMEM lane m, column
 *   k, exactly sequential. The wrong reading (model/layout.h layout_eval_mode_last_fastest, kept
 *   there for this test and stage B's variant) takes the nested column mode (4,2)
 *   the other way round, last sub-mode fastest (as a C array [4][2] would be): column block b then
 *   goes to 16 (b/2) + 64 (b%2), which moves 6 of the 8 blocks of 16 columns.
 * Fix: evaluate layouts with the colexicographic rule (common/model/layout.h; `build/bin/explain
 *   layout ...`); in raw PTX, P's packed word k of row m goes to lane m, column P + k
 *   (stages/B_pv/pv_sm100.cu step 4).
 * Stage: B. Levels: emu only — the layout evaluator and the TMEM model with the TS MMA emulator;
 *   a reproduction of the model. There is no sm90 analogue (no TMEM, no CuTe layouts in the C
 *   kernels) and no B200 here.
 * Notes: notes/footguns.md#fg09 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "model/frag_map.h"
#include "model/layout.h"
#include "model/mma_emu.h"
#include "mma_fixture.h"
#include "pv_fixture.h"

static const char *SEED_LAYOUT = "((128,16),1,(4,2)):((65536,1),0,(16,64))";

/* TMEM offset (lane << 16 | column) of packed word k (0..127) of lane m, right or wrong. Mode 0
 * gets its coordinate (m, k % 16) the same way in both; only the nested mode (4,2) differs. */
static long word_offset(const layout_t *l, int m, int k, int wrong)
{
    long coord[3] = {m + 128L * (k % 16), 0, k / 16};
    if (!wrong) return layout_eval_top(l, coord);
    coord[2] = 0;
    return layout_eval_top(l, coord) + layout_eval_mode_last_fastest(l, 2, k / 16);
}

Test(footgun, fg09_wrong_reading_moves_columns_fixed_reading_is_sequential)
{
    layout_t l;
    char err[200], flat[200];
    cr_assert_eq(layout_parse(SEED_LAYOUT, &l, err, sizeof err), 0, "%s", err);
    layout_flat_string(&l, flat, sizeof flat);
    cr_expect_str_eq(flat, "(128,16,1,4,2):(65536,1,0,16,64)");
    for (long m = 0; m < 128; m++)
        for (long k = 0; k < 128; k++) {
            cr_assert_eq(layout_eval(&l, m + 128 * k), m * 65536 + k, "index m + 128 k -> lane m, column k");
            cr_assert_eq(word_offset(&l, (int)m, (int)k, 0), m * 65536 + k);
        }
    int moved = 0;
    const long lands[8] = {0, 4, 1, 5, 2, 6, 3, 7}; /* block b at 16 (b / 2) + 64 (b % 2), in blocks of 16 */
    for (int k = 0; k < 128; k++) {
        moved += word_offset(&l, 0, k, 1) != k;
        cr_expect_eq(word_offset(&l, 0, k, 1), 16 * lands[k / 16] + k % 16, "the wrong reading's column of word %d", k);
    }
    fprintf(stderr, "FG09 the last-sub-mode-fastest reading moves %d of 128 columns (blocks of 16: 0 1 2 3 4 5 6 7 -> "
            "%ld %ld %ld %ld %ld %ld %ld %ld)\n", moved, word_offset(&l, 0, 0, 1) / 16, word_offset(&l, 0, 16, 1) / 16,
            word_offset(&l, 0, 32, 1) / 16, word_offset(&l, 0, 48, 1) / 16, word_offset(&l, 0, 64, 1) / 16,
            word_offset(&l, 0, 80, 1) / 16, word_offset(&l, 0, 96, 1) / 16, word_offset(&l, 0, 112, 1) / 16);
    cr_expect_eq(moved, 96, "the wrong reading moves blocks 1-6");
}

/* P [128 x 256] bf16 stored packed (word k = keys 2k, 2k+1) into 128 TMEM columns through the
 * layout, right or wrong; then O = P V with sixteen TS MMAs reading P at +8 columns per k16, V [256
 * x 64] MN-major SW128. Checks O against the plain loop (right) or against the loop with the keys
 * the wrong map delivers (wrong); returns the cosine with the plain loop. */
static double store_and_multiply(int wrong)
{
    const int d = 64, kv = 256;
    layout_t l;
    char err[200];
    cr_assert_eq(layout_parse(SEED_LAYOUT, &l, err, sizeof err), 0, "%s", err);
    mma_case c; /* A = P [128 x 256] (its SMEM copy is not used: P comes from TMEM), B = V */
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 128, d, kv, MAJOR_K, MAJOR_MN, SWZ_128B, 90);
    tmem_model *t = tmem_model_new();
    uint32_t base;
    cr_assert_eq(tmem_alloc(t, 256, &base), TMEM_OK);
    const uint32_t p_tmem = base, o_tmem = base + 128; /* P columns 0-127, O columns 128-191 */
    for (int w = 0; w < 4; w++)
        for (int k = 0; k < 128; k++) {
            uint32_t regs[32];
            for (int th = 0; th < 32; th++) {
                const int row = 32 * w + th;
                regs[th] = pack_bf16_pair(f32_to_bf16((float)c.a[row * kv + 2 * k]), f32_to_bf16((float)c.a[row * kv + 2 * k + 1]));
            }
            const uint32_t addr = p_tmem + (uint32_t)word_offset(&l, 32 * w, k, wrong);
            cr_assert_eq(tmem_st(t, w, TMEM_32x32b, 1, 0, addr, 32, 0, regs), TMEM_OK, "%s", t->msg);
        }
    smem_image im = {c.img, 0, c.bytes};
    for (int k = 0; k < kv; k += 16) {
        emu_status st = {0};
        cr_assert_eq(emu_tcgen05_mma(t, &im, o_tmem, 1, p_tmem + (uint32_t)(k / 2), 0, mma_case_desc_sm100(&c, 1, k),
                                     idesc_bf16_f32(128, (unsigned)d, 0, 1), MMA_KIND_F16, k > 0, &st), EMU_OK, "%s", st.msg);
    }
    /* what the MMA computes from the words where they landed: the word of keys (2k, 2k+1) sits in
     * column col(k) and meets V rows 2 col(k) and 2 col(k) + 1 */
    double *expect = calloc(128 * (size_t)d, sizeof(double)), *got = malloc(sizeof(double) * 128 * (size_t)d);
    for (int i = 0; i < 128; i++)
        for (int k = 0; k < 128; k++) {
            const int col = (int)(word_offset(&l, 0, k, wrong) & 0xFFFF);
            for (int e = 0; e < 2; e++)
                for (int j = 0; j < d; j++) expect[i * d + j] += c.a[i * kv + 2 * k + e] * c.b[j * kv + 2 * col + e];
        }
    size_t bad_loop = 0, bad_expect = 0;
    for (int i = 0; i < 128; i++)
        for (int j = 0; j < d; j++) {
            float v;
            memcpy(&v, &t->cell[i][tmem_addr_col(o_tmem) + j], 4);
            got[i * d + j] = v;
            bad_loop += (double)v != c.ref[i * d + j];
            bad_expect += (double)v != expect[i * d + j];
        }
    const double cs = cosine_f64(got, c.ref, 128 * (size_t)d);
    fprintf(stderr, "FG09 emu TS MMA, P stored through the %s reading: cosine %.4f, %zu of %d elements differ from P V\n",
            wrong ? "WRONG (last sub-mode fastest)" : "right (colexicographic)", cs, bad_loop, 128 * d);
    cr_expect_eq(bad_expect, 0, "O is exactly what the columns P landed in deliver");
    if (wrong) cr_expect_gt(bad_loop, 128 * d / 2, "the wrong map must show in O");
    else cr_expect_eq(bad_loop, 0, "the right map must give P V exactly");
    free(expect); free(got);
    tmem_model_free(t);
    mma_case_free(&c);
    return cs;
}

Test(footgun, fg09_wrong_nested_mode_order_then_fixed_emu)
{
    const double cw = store_and_multiply(1);
    cr_expect(cw < 0.9, "wrong column map: cosine %.4f should be well below 1", cw);
    store_and_multiply(0);
}

/* The same misreading in stage B's own flow (`stage_B --fault nested-last-fastest`): its P tile
 * (128 keys, 64 columns) written as PV_P_TMEM_LAYOUT, ((128,16),1,(2,2)):((65536,1),0,(16,32)).
 * Colexicographically that is lane m, column k; read last sub-mode fastest, store block b (32 keys,
 * 16 columns) goes to column 16 (b / 2) + 32 (b % 2), block 0 1 2 3 -> 0 2 1 3: blocks 1 and 2
 * trade places, so V's rows of column block c meet the keys of block {0, 2, 1, 3}[c]. */
Test(footgun, fg09_stage_b_fault_nested_last_fastest_then_fixed_emu)
{
    layout_t l;
    char err[320];
    cr_assert_eq(layout_parse(PV_P_TMEM_LAYOUT, &l, err, sizeof err), 0, "%s", err);
    for (long m = 0; m < 128; m++)
        for (long k = 0; k < 64; k++) cr_assert_eq(layout_eval(&l, m + 128 * k), m * 65536 + k, "stage B's P layout is sequential");
    const int d = 64, skv = 256, landed[4] = {0, 2, 1, 3};
    pv_problem pp;
    pv_problem_make(&pp, 1, 1, 128, skv, d, 91);
    double *ref = malloc(sizeof(double) * pp.nq), *moved = malloc(sizeof(double) * pp.nq);
    int key_of[256];
    for (int j = 0; j < skv; j++) key_of[j] = j / 128 * 128 + 32 * landed[j % 128 / 32] + j % 32;
    pv_problem_reference(&pp, NULL, ref);
    pv_problem_reference(&pp, key_of, moved);

    cr_assert_eq(pv_problem_run(&pp, PV_FAULT_P_NESTED_LAST_FASTEST, err, sizeof err), 0, "%s", err);
    const double c = cosine_f32(pp.p.o, ref, pp.nq);
    const size_t bad = count_mismatch(pp.p.o, ref, pp.nq), as_moved = pp.nq - count_mismatch(pp.p.o, moved, pp.nq);
    fprintf(stderr, "FG09 broken (stage B --fault nested-last-fastest, emu): cosine %.4f, %zu of %zu elements differ "
            "from P V, %zu equal P V with key blocks 1 and 2 traded\n", c, bad, pp.nq, as_moved);
    cr_expect(c < 0.9 && bad > pp.nq / 2, "the misread layout must show in O (cosine %.4f, %zu wrong)", c, bad);
    cr_expect_eq(as_moved, pp.nq, "the wrong O is exactly P V with blocks 1 and 2 of every tile traded");

    cr_assert_eq(pv_problem_run(&pp, 0u, err, sizeof err), 0, "%s", err);
    const size_t bad_fixed = count_mismatch(pp.p.o, ref, pp.nq);
    fprintf(stderr, "FG09 fixed (stage B, colexicographic reading, emu): %zu of %zu elements differ from P V\n", bad_fixed,
            pp.nq);
    cr_expect_eq(bad_fixed, 0, "the right reading gives P V exactly");
    free(ref); free(moved);
    pv_problem_free(&pp);
}
