/* Stage C glue: the stage's rules, its backends and its shape table. Everything an attention
 * stage shares (inputs in BHSD or BSHD by strides, the FlashAttention-3 check, LSE, poison, the
 * GPU run, the dump) is common/host/attention.c; the kernels are fmha_sm100.cu / fmha_sm90.cu, the
 * host-model flow fmha_emu.c. */
#include <stdio.h>
#include <string.h>

#include "host/attention.h"
#include "host/backend.h"
#include "host/runner.h"
#include "host/shape_table.h"
#include "fmha.h"

static int validate(const fmha_opts *o, char *err, size_t len)
{
    return attn_validate(o, "C", fmha_smem_layout_make(o->d).bytes, err, len);
}

extern const stage_def stage_C;

static int run(const fmha_opts *o, stage_result *r)
{
    attn_problem ap;
    if (attn_problem_make(o, &ap)) return 1;
    ap.p.faults = o->fault_bits;
    int rc;
    if (o->backend == BACKEND_EMU) {
        char err[320];
        rc = stage_c_emu_run(&ap.p, err, sizeof err);
        if (err[0]) snprintf(r->model_msg, sizeof r->model_msg, "%s", err);
        if (rc) fprintf(stderr, "stage C (emu): %s\n", err);
    } else {
        rc = attn_run_gpu(&stage_C, o, &ap, r);
    }
    attn_counts(o, &ap, r);
    if (attn_dump(o, "C", &ap)) rc = 1;
    if (rc == 0 && o->check) attn_check(o, &ap, r);
    attn_problem_free(&ap);
    return rc;
}

static const stage_fault faults[] = {
    {"no-mask-guard", "FG14", FMHA_FAULT_NO_MASK_GUARD,
     BACKEND_BIT(BACKEND_EMU) | BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_SM100),
     "exp2(s - m) against m = -inf on a row that sees no key", "--sq 300 --skv 100 --causal --hq 2 --hkv 2"},
    {"p-full-counts-warps", "FG10", FMHA_FAULT_P_FULL_COUNTS_WARPS, BACKEND_BIT(BACKEND_EMU) | BACKEND_BIT(BACKEND_SM100),
     "p_full initialised with 4 (warps) while all 128 softmax threads arrive", "--sq 128 --skv 128 --hq 1 --hkv 1"},
    {"one-softmax-warp", "FG02", FMHA_FAULT_ONE_SOFTMAX_WARP, BACKEND_BIT(BACKEND_EMU),
     "softmax warp 0 alone reads all 128 TMEM lanes of S", "--sq 128 --skv 128 --hq 1 --hkv 1"},
};

const stage_def stage_C = {
    .letter = "C",
    .name = "C_online_softmax",
    .title = "attention forward with online softmax, causal mask, GQA/MQA, LSE (one synchronous pipeline)",
    .accepts = OPT_HKV | OPT_CAUSAL | OPT_LAYOUT,
    .backends = BACKEND_BIT(BACKEND_SM100) | BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_EMU),
    .defaults = {.b = 1, .hq = 4, .hkv = 2, .sq = 256, .skv = 256, .d = 64, .backend = BACKEND_AUTO,
                 .init = INIT_RAND, .seed = 1, .check = 1, .iters = 20, .warmup = 3},
    .validate = validate,
    .run = run,
    .launch_sm100 = stage_c_sm100_launch,
    .launch_sm90 = stage_c_sm90_launch,
    .shapes = shape_attn_row,
    .faults = faults,
    .nfaults = (int)(sizeof faults / sizeof faults[0]),
};
