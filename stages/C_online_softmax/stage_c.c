/* Stage C glue: the stage's rules, its backends and its shape table. Everything an attention
 * stage shares (inputs in BHSD or BSHD by strides, the FlashAttention-3 check, LSE, poison, the
 * GPU run, the dump) is common/host/attention.c; the kernels are fmha_sm100.cu / fmha_sm90.cu, the
 * host-model flow fmha_emu.c. */
#include <stdio.h>
#include <string.h>

#include "host/attention.h"
#include "host/backend.h"
#include "host/cli.h"
#include "host/runner.h"
#include "host/shape_table.h"
#include "fmha.h"

#define EMU_MAX_MACS (1L << 28)

static int validate(const fmha_opts *o, char *err, size_t len)
{
    if (o->d != 64 && o->d != 128 && o->d != 256) {
        snprintf(err, len, "--d=%d: stage C supports D = 64, 128 and 256", o->d);
        return 2;
    }
    if (o->skv < 1) {
        snprintf(err, len, "--skv=%d: stage C needs at least one key (an empty KV sequence has no softmax)", o->skv);
        return 2;
    }
    const uint32_t smem = fmha_smem_layout_make(o->d).bytes;
    if (smem > SMEM_OPTIN_MAX_BYTES) {
        snprintf(err, len, "--d=%d: the CTA's SMEM (%u bytes) exceeds the %u-byte opt-in limit", o->d, smem,
                 SMEM_OPTIN_MAX_BYTES);
        return 2;
    }
    if (cli_check_grid((o->sq + FMHA_BM - 1.0) / FMHA_BM, o->hq, o->b, "--sq", "--hq", "--b", err, len)) return 2;
    return cli_check_emu_budget(o, 2.0 * o->b * o->hq * o->sq * (double)o->skv * o->d, (double)EMU_MAX_MACS, err, len);
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

/* The shape table. gpu: D {64, 128, 256} x T (query rows) {1, 17, 32, 33, 64, 128} x Skv {1, 3,
 * 113, 128, 1023, 1025, 4096} x causal, the head configuration and layout rotating over MHA (B = 2),
 * MQA (Hkv = 1, BSHD), GQA (Hq/Hkv = 8) and BSHD MHA so every combination appears; then four long
 * sequences. gpu-quick (the sanitizers): T {1, 33, 128} x Skv {3, 128, 1025}, no long ones.
 * emu: small shapes over D, tails, decode, GQA/MQA, both layouts and both causal alignments.
 * bench: the prefill protocol (host/shape_table.h). */
static const char *const heads[4] = {"--b 2 --hq 4 --hkv 4", "--b 1 --hq 4 --hkv 1 --layout bshd",
                                     "--b 1 --hq 16 --hkv 2", "--b 2 --hq 2 --hkv 2 --layout bshd"};
static const char *const long_rows[] = {
    "--d 128 --sq 4096 --skv 4096 --b 1 --hq 4 --hkv 4",
    "--d 128 --sq 4096 --skv 4096 --b 1 --hq 4 --hkv 1 --causal",
    "--d 64 --sq 2000 --skv 3000 --b 2 --hq 8 --hkv 2 --causal --layout bshd",
    "--d 256 --sq 1000 --skv 700 --b 1 --hq 2 --hkv 1 --causal",
};
static const char *const emu_rows[] = {
    "--d 64 --sq 128 --skv 256 --hq 2 --hkv 2",
    "--d 128 --sq 64 --skv 200 --hq 2 --hkv 1 --layout bshd",
    "--d 256 --sq 33 --skv 129 --hq 2 --hkv 2 --b 2",
    "--d 64 --sq 1 --skv 1023 --hq 8 --hkv 1",
    "--d 64 --sq 17 --skv 3 --hq 2 --hkv 2",
    "--d 64 --sq 32 --skv 1 --hq 2 --hkv 1 --causal",
    "--d 64 --sq 256 --skv 256 --causal --hq 2 --hkv 2",
    "--d 64 --sq 100 --skv 300 --causal --hq 2 --hkv 2 --layout bshd",
    "--d 64 --sq 300 --skv 100 --causal --hq 2 --hkv 2",
};

static int shapes(shape_suite suite, int i, char *args, size_t len)
{
    static const int ds[3] = {64, 128, 256}, ts[6] = {1, 17, 32, 33, 64, 128};
    static const int skvs[7] = {1, 3, 113, 128, 1023, 1025, 4096};
    enum { PER_D = 6 * 7 * 2 };
    switch (suite) {
    case SUITE_GPU:
    case SUITE_GPU_QUICK:
        for (int idx = 0; idx < 3 * PER_D; idx++) {
            const int d = ds[idx / PER_D], k = idx % PER_D, ti = k / 14, si = k / 2 % 7, causal = k % 2;
            if (suite == SUITE_GPU_QUICK && !((ti == 0 || ti == 3 || ti == 5) && (si == 1 || si == 3 || si == 5)))
                continue;
            if (i-- > 0) continue;
            snprintf(args, len, "--d %d --sq %d --skv %d%s %s --seed %d", d, ts[ti], skvs[si],
                     causal ? " --causal" : "", heads[k % 4], k);
            return 1;
        }
        return suite == SUITE_GPU ? shape_list_row(long_rows, 4, i, args, len) : 0;
    case SUITE_EMU: return shape_list_row(emu_rows, (int)(sizeof emu_rows / sizeof emu_rows[0]), i, args, len);
    case SUITE_BENCH: return shape_bench_attn_row(0, i, args, len);
    case SUITE_BENCH_QUICK: return shape_bench_attn_row(1, i, args, len);
    default: return 0;
    }
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
    .shapes = shapes,
    .faults = faults,
    .nfaults = (int)(sizeof faults / sizeof faults[0]),
};
