/* FG14 — fully masked rows give NaN; causal alignment when Sq != Skv.
 *
 * Symptom: with a causal mask and more query rows than keys (Sq > Skv, bottom-right aligned), the
 *   first Sq - Skv rows see no key; a naive online softmax returns NaN for them (O and LSE).
 * Cause: the running max of such a row stays -inf, and exp2(s - m) = exp2(-inf - (-inf)) = NaN.
 * Fix: exponentiate against 0 when the max is -inf (fmha_exp_base in
 *   stages/C_online_softmax/fmha.h): P = 0, l = 0, and the epilogue writes O = 0, LSE = -inf for a
 *   row with l = 0. The mask is bottom-right aligned: row i sees keys j <= i + (Skv - Sq).
 * Stage: C.  Levels: emu (the stage's host-model flow) and sm90 (the stage's Hopper kernel on the
 *   H200), each run with the guard removed (FMHA_FAULT_NO_MASK_GUARD), then as shipped; sm100 has
 *   the same guard in its kernel, compiled only.
 * Notes: notes/footguns.md#fg14 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "host/init.h"
#include "host/reference.h"
#include "host/rng.h"
#include "stages/C_online_softmax/fmha.h"
#include "test_util.h"

/* Sq - Skv = 100 fully masked rows share the first q tile (rows 0-127) with rows that see keys, so
 * the tile runs the softmax for them (a tile whose rows all see nothing is skipped outright). */
enum { B = 1, H = 2, SQ = 200, SKV = 100, D = 64 };

typedef struct {
    uint16_t q[B * H * SQ * D], k[B * H * SKV * D], v[B * H * SKV * D], o[B * H * SQ * D];
    float qv[B * H * SQ * D], kv[B * H * SKV * D], vv[B * H * SKV * D], lse[B * H * SQ];
} problem;

static fmha_params make(problem *pr, unsigned faults)
{
    rng_t r;
    rng_seed(&r, 14);
    init_bf16(pr->q, pr->qv, B * H * SQ * D, INIT_RAND, &r, 0, 0);
    init_bf16(pr->k, pr->kv, B * H * SKV * D, INIT_RAND, &r, 0, 0);
    init_bf16(pr->v, pr->vv, B * H * SKV * D, INIT_RAND, &r, 0, 0);
    poison_bf16(pr->o, B * H * SQ * D);
    poison_f32(pr->lse, B * H * SQ);
    fmha_params p;
    memset(&p, 0, sizeof p);
    p.q = pr->q; p.k = pr->k; p.v = pr->v; p.o = pr->o; p.lse = pr->lse;
    p.q_sb = H * SQ * D; p.q_sh = SQ * D; p.q_ss = D;
    p.k_sb = p.v_sb = H * SKV * D; p.k_sh = p.v_sh = SKV * D; p.k_ss = p.v_ss = D;
    p.o_sb = p.q_sb; p.o_sh = p.q_sh; p.o_ss = p.q_ss;
    p.b = B; p.hq = H; p.hkv = H; p.sq = SQ; p.skv = SKV; p.d = D;
    p.scale = 1.0f / sqrtf((float)D);
    p.causal = 1;
    p.faults = faults;
    return p;
}

/* Rows 0 .. SQ-SKV-1 see no key. Counts NaN rows among them, and checks the rest against fp64. */
static void inspect(problem *pr, int *nan_rows, int *zero_rows, int *visible_ok)
{
    attn_shape s = {B, H, H, SQ, SKV, D, 1.0 / sqrt((double)D), 1};
    static double ref[B * H * SQ * D], lse[B * H * SQ];
    ref_attention(&s, pr->qv, pr->kv, pr->vv, ref, lse);
    *nan_rows = *zero_rows = 0;
    *visible_ok = 1;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < SQ; i++) {
            const uint16_t *o = pr->o + (h * SQ + i) * D;
            const float l = pr->lse[h * SQ + i];
            int has_nan = isnan(l), all_zero = isinf(l) && l < 0;
            for (int c = 0; c < D; c++) {
                float x = bf16_to_f32(o[c]);
                has_nan |= isnan(x);
                all_zero &= x == 0.0f;
            }
            if (i < SQ - SKV) {
                *nan_rows += has_nan;
                *zero_rows += all_zero;
            } else {
                for (int c = 0; c < D; c++)
                    if (!(fabs(bf16_to_f32(o[c]) - ref[(h * SQ + i) * D + c]) <= 0.05)) *visible_ok = 0; /* NaN fails */
                if (!(fabs(l - lse[h * SQ + i]) <= 1e-3)) *visible_ok = 0;
            }
        }
}

/* One line per variant: "FG14 broken (no mask guard, emu): ..." with what inspect() measured. */
static void report(const char *kind, const char *variant, const char *level, int nan_rows, int zero_rows,
                   int visible_ok)
{
    fprintf(stderr, "FG14 %s (%s, %s): %d of %d fully masked rows NaN, %d with O = 0 and LSE = -inf; the %d rows that "
            "see keys %s fp64\n", kind, variant, level, nan_rows, H * (SQ - SKV), zero_rows, H * SKV,
            visible_ok ? "match" : "do not match");
}

Test(footgun, fg14_wrong_no_guard_then_fixed_emu)
{
    static problem pr;
    char err[320];
    int nan_rows, zero_rows, ok;
    fmha_params p = make(&pr, FMHA_FAULT_NO_MASK_GUARD);
    cr_assert_eq(stage_c_emu_run(&p, err, sizeof err), 0, "%s", err);
    inspect(&pr, &nan_rows, &zero_rows, &ok);
    report("broken", "no mask guard", "emu", nan_rows, zero_rows, ok);
    cr_expect_eq(nan_rows, H * (SQ - SKV), "without the guard every fully masked row is NaN (%d)", nan_rows);
    p = make(&pr, 0);
    cr_assert_eq(stage_c_emu_run(&p, err, sizeof err), 0, "%s", err);
    inspect(&pr, &nan_rows, &zero_rows, &ok);
    report("fixed", "guard", "emu", nan_rows, zero_rows, ok);
    cr_expect_eq(nan_rows, 0);
    cr_expect_eq(zero_rows, H * (SQ - SKV), "fixed: O = 0 and LSE = -inf on every fully masked row");
    cr_expect(ok, "the rows that see keys match the fp64 reference (bottom-right alignment)");
}

static void run_sm90(problem *pr, unsigned faults)
{
    fmha_params p = make(pr, faults);
    void *dq, *dk, *dv, *dob, *dl;
    CUDA_ASSERT(cudaMalloc(&dq, sizeof pr->q)); CUDA_ASSERT(cudaMalloc(&dk, sizeof pr->k));
    CUDA_ASSERT(cudaMalloc(&dv, sizeof pr->v)); CUDA_ASSERT(cudaMalloc(&dob, sizeof pr->o));
    CUDA_ASSERT(cudaMalloc(&dl, sizeof pr->lse));
    CUDA_ASSERT(cudaMemcpy(dq, pr->q, sizeof pr->q, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(dk, pr->k, sizeof pr->k, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(dv, pr->v, sizeof pr->v, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(dob, pr->o, sizeof pr->o, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(dl, pr->lse, sizeof pr->lse, cudaMemcpyHostToDevice));
    p.q = dq; p.k = dk; p.v = dv; p.o = dob; p.lse = dl;
    cr_assert_eq(stage_c_sm90_launch(&p), 0);
    CUDA_ASSERT(cudaDeviceSynchronize());
    CUDA_ASSERT(cudaMemcpy(pr->o, dob, sizeof pr->o, cudaMemcpyDeviceToHost));
    CUDA_ASSERT(cudaMemcpy(pr->lse, dl, sizeof pr->lse, cudaMemcpyDeviceToHost));
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(dob); cudaFree(dl);
}

Test(footgun, fg14_wrong_no_guard_then_fixed_sm90, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    static problem pr;
    int nan_rows, zero_rows, ok;
    run_sm90(&pr, FMHA_FAULT_NO_MASK_GUARD);
    inspect(&pr, &nan_rows, &zero_rows, &ok);
    report("broken", "no mask guard", "sm90", nan_rows, zero_rows, ok);
    cr_expect_eq(nan_rows, H * (SQ - SKV), "without the guard every fully masked row is NaN (%d)", nan_rows);
    run_sm90(&pr, 0);
    inspect(&pr, &nan_rows, &zero_rows, &ok);
    report("fixed", "guard", "sm90", nan_rows, zero_rows, ok);
    cr_expect_eq(nan_rows, 0);
    cr_expect_eq(zero_rows, H * (SQ - SKV));
    cr_expect(ok);
}
