/* FG02 — one warp reads all 128 TMEM lanes.
 *
 * Symptom: the seed's multi-row softmax worked for T <= 32 query rows and was "BLOCKED" for
 *   T > 32: warp 0 read rows 0-31 only. (Seed 000, Milestone 4.)
 * Cause: a warp may access only the 32-lane quadrant 32*(warp%4) .. +31 of TMEM (PTX 9.7.16.8.1).
 *   The seed's planned fix, a 16x256b load, does not lift this: every tcgen05.ld shape touches
 *   lanes of the issuing warp's quadrant only.
 * Fix: all four warps of the warpgroup read, each its own quadrant, with the lane field of the
 *   address set to 32*(warp%4) (stages/A_qk/qk_sm100.cu step 5; stage C's softmax warps).
 * Stage: A (and C, at stage level). Levels: emu (the TMEM model refuses the access and the stage's
 *   one-warp epilogue leaves rows 32-127 unwritten); sm100: the four-warp kernel is compiled and its
 *   SASS checked (make sass), not run: no B200 here. The rule is from the PTX ISA only.
 * Notes: notes/footguns.md#fg02 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "host/init.h"
#include "host/rng.h"
#include "model/tmem_model.h"
#include "stages/A_qk/qk.h"

Test(footgun, fg02_wrong_shapes_outside_the_quadrant_are_refused)
{
    tmem_model *t = tmem_model_new();
    uint32_t base, regs[32 * 32];
    cr_assert_eq(tmem_alloc(t, 32, &base), TMEM_OK);
    /* wrong: warp 0 reading lanes 32-63 with 32x32b */
    const tmem_err e32 = tmem_ld(t, 0, TMEM_32x32b, 8, 0, tmem_addr(base, 32, 0), 32, regs);
    fprintf(stderr, "FG02 broken (warp 0 reads lanes 32-63 with 32x32b, emu): %s\n", tmem_err_name(e32));
    cr_expect_eq(e32, TMEM_ERR_QUADRANT);
    /* wrong: the seed's planned 16x256b read of rows 64-79 from warp 0 */
    const tmem_err e256 = tmem_ld(t, 0, TMEM_16x256b, 1, 0, tmem_addr(base, 64, 0), 32, regs);
    fprintf(stderr, "FG02 broken (warp 0 reads lanes 64-79 with 16x256b, emu): %s\n", tmem_err_name(e256));
    cr_expect_eq(e256, TMEM_ERR_QUADRANT);
    /* fixed: warp w at lane 32w */
    tmem_err ew[4];
    for (int w = 0; w < 4; w++) ew[w] = tmem_ld(t, w, TMEM_32x32b, 8, 0, tmem_addr(base, 32 * w, 0), 32, regs);
    fprintf(stderr, "FG02 fixed (warp w reads lanes 32w.. with 32x32b, emu): warp 0 %s, 1 %s, 2 %s, 3 %s\n",
            tmem_err_name(ew[0]), tmem_err_name(ew[1]), tmem_err_name(ew[2]), tmem_err_name(ew[3]));
    for (int w = 0; w < 4; w++) cr_expect_eq(ew[w], TMEM_OK);
    tmem_model_free(t);
}

static void run_stage_a(unsigned faults, float *s, char *err)
{
    static uint16_t q[128 * 64], k[128 * 64];
    rng_t r;
    rng_seed(&r, 2);
    init_bf16(q, NULL, 128 * 64, INIT_INT, &r, -2, 2);
    init_bf16(k, NULL, 128 * 64, INIT_INT, &r, -2, 2);
    poison_f32(s, 128 * 128);
    qk_params p = {q, k, s, 1, 1, 128, 128, 64, 1.0f, NULL};
    cr_assert_eq(qk_emu_run(&p, faults, err, 320), 0);
}

Test(footgun, fg02_wrong_one_warp_epilogue_then_fixed_four_warps)
{
    static float one[128 * 128], four[128 * 128];
    char err[320];
    /* wrong: warp 0 alone reads the accumulator */
    run_stage_a(QK_FAULT_ONE_WARP_EPILOGUE, one, err);
    cr_expect(strstr(err, "TMEM_ERR_QUADRANT") && strstr(err, "lanes 0-31"), "the model names the rule: %s", err);
    size_t poison_rows = 0, written_rows = 0;
    for (int i = 0; i < 128; i++) {
        int all_poison = 1, none_poison = 1;
        for (int j = 0; j < 128; j++) {
            int p = f32_bits(one[i * 128 + j]) == POISON_F32;
            all_poison &= p;
            none_poison &= !p;
        }
        if (i < 32) written_rows += none_poison;
        else poison_rows += all_poison;
    }
    fprintf(stderr, "FG02 broken (one-warp epilogue, stage A, emu): rows 0-31 written %zu of 32, rows 32-127 "
            "unwritten %zu of 96; %s\n", written_rows, poison_rows, err);
    cr_expect_eq(written_rows, 32, "rows 0-31 (warp 0's quadrant) are written");
    cr_expect_eq(poison_rows, 96, "rows 32-127 are never written: the poison survives");
    /* fixed: four warps, each its own quadrant; rows 0-31 agree with the one-warp run */
    err[0] = '\0';
    run_stage_a(0u, four, err);
    size_t unwritten = 0;
    for (int i = 0; i < 128 * 128; i++) unwritten += f32_bits(four[i]) == POISON_F32;
    const int same_rows = memcmp(one, four, sizeof(float) * 32 * 128) == 0;
    fprintf(stderr, "FG02 fixed (four-warp epilogue, stage A, emu): %zu of %d elements unwritten, rows 0-31 %s the "
            "one-warp run, model: %s\n", unwritten, 128 * 128, same_rows ? "equal" : "differ from",
            err[0] ? err : "no error");
    cr_expect_str_eq(err, "");
    for (int i = 0; i < 128 * 128; i++) cr_assert(f32_bits(four[i]) != POISON_F32, "element %d unwritten", i);
    cr_expect(same_rows);
}

/* Stage level (stage C): the seed's multi-row softmax with warp 0 alone worked for T <= 32 query
 * rows and not beyond; with all four softmax warps every T from 1 to 128 works. */
#include "host/reference.h"
#include "stages/C_online_softmax/fmha.h"

static size_t stage_c_unwritten_rows(int t, unsigned faults, char *err)
{
    enum { D = 64, SKV = 96 };
    static uint16_t q[128 * D], k[SKV * D], v[SKV * D], o[128 * D];
    static float lse[128];
    rng_t r;
    rng_seed(&r, 33);
    init_bf16(q, NULL, (size_t)t * D, INIT_RAND, &r, 0, 0);
    init_bf16(k, NULL, SKV * D, INIT_RAND, &r, 0, 0);
    init_bf16(v, NULL, SKV * D, INIT_RAND, &r, 0, 0);
    poison_bf16(o, (size_t)t * D);
    poison_f32(lse, (size_t)t);
    fmha_params p;
    memset(&p, 0, sizeof p);
    p.q = q; p.k = k; p.v = v; p.o = o; p.lse = lse;
    p.q_sb = p.o_sb = (int64_t)t * D; p.q_ss = p.o_ss = D;
    p.k_sb = p.v_sb = SKV * D; p.k_ss = p.v_ss = D;
    p.b = 1; p.hq = 1; p.hkv = 1; p.sq = t; p.skv = SKV; p.d = D; p.scale = 0.125f; p.faults = faults;
    err[0] = '\0';
    cr_assert_eq(stage_c_emu_run(&p, err, 320), 0, "%s", err);
    size_t unwritten = 0;
    for (int i = 0; i < t; i++) unwritten += o[i * D] == POISON_BF16;
    return unwritten;
}

Test(footgun, fg02_stage_c_wrong_one_softmax_warp_then_fixed_four)
{
    char err[320];
    /* wrong variant: fine up to T = 32 (the seed's passing tests) ... */
    const size_t u32 = stage_c_unwritten_rows(32, FMHA_FAULT_ONE_SOFTMAX_WARP, err);
    fprintf(stderr, "FG02 broken (one softmax warp, stage C, emu) T=32: %zu of 32 rows unwritten, model: %s\n", u32,
            err[0] ? err : "no error");
    cr_expect_eq(u32, 0);
    /* ... and from T = 33 on, rows 32.. are never produced; the model names the rule */
    const size_t u33 = stage_c_unwritten_rows(33, FMHA_FAULT_ONE_SOFTMAX_WARP, err);
    fprintf(stderr, "FG02 broken (one softmax warp, stage C, emu) T=33: %zu of 33 rows unwritten, model: %s\n", u33,
            err[0] ? err : "no error");
    cr_expect_eq(u33, 1);
    cr_expect(strstr(err, "TMEM_ERR_QUADRANT") != NULL, "%s", err);
    const size_t u128 = stage_c_unwritten_rows(128, FMHA_FAULT_ONE_SOFTMAX_WARP, err);
    fprintf(stderr, "FG02 broken (one softmax warp, stage C, emu) T=128: %zu of 128 rows unwritten\n", u128);
    cr_expect_eq(u128, 96);
    /* fixed: four softmax warps, every T */
    const int ts[5] = {1, 32, 33, 64, 128};
    for (int i = 0; i < 5; i++) {
        const size_t u = stage_c_unwritten_rows(ts[i], 0, err);
        fprintf(stderr, "FG02 fixed (four softmax warps, stage C, emu) T=%d: %zu of %d rows unwritten, model: %s\n",
                ts[i], u, ts[i], err[0] ? err : "no error");
        cr_expect_eq(u, 0, "T=%d", ts[i]);
        cr_expect_str_eq(err, "");
    }
}
