/* Stage E glue: the stage's rules, its backends, its footgun variants. The attention host side
 * (inputs, the FlashAttention-3 check, LSE, poison, the GPU run, the dump) is common/host/
 * attention.c and the shape table stage C's (common/host/shape_table.c); the tensor maps are
 * common/host/fmha_tmaps.c. The kernels are fmha_sm100.cu / fmha_sm90.cu, the host-model flow
 * fmha_emu.c. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "host/attention.h"
#include "host/backend.h"
#include "host/fmha_tmaps.h"
#include "host/runner.h"
#include "host/shape_table.h"
#include "host/tmap_encode.h"
#include "fmha.h"

/* The compute capability the maps are checked for: the H200's 9, else Blackwell's 10 (emu models
 * the sm100 flow). */
static int map_cc(const fmha_opts *o) { return o->backend == BACKEND_SM90 ? 9 : 10; }

static int validate(const fmha_opts *o, char *err, size_t len)
{
    if (attn_validate(o, "E", fmha_smem_layout_make(o->d).bytes, err, len)) return 2;
    /* the maps the stage will encode (the right ones: a fault's broken map is its demonstration) */
    fmha_params p;
    attn_params_for(o, &p);
    char why[400];
    if (fmha_tmaps_check(&p, map_cc(o), why, sizeof why)) {
        snprintf(err, len, "the tensor maps of this shape break a cuTensorMapEncodeTiled rule: %s", why);
        return 2;
    }
    return 0;
}

extern const stage_def stage_E;

/* FG13: a map with one of the usual mistakes. The checker names the rule it breaks; on a GPU the
 * driver is asked too, past the checker, to show it refuses the same set. Returns 1 with the
 * symptom in r->model_msg when the checker refuses; 0 when it accepts (the mistake then runs, and
 * the check shows what the map read). */
static int tmap_mistake_refused(const fmha_opts *o, const fmha_params *p, stage_result *r)
{
    char why[400];
    if (!fmha_tmaps_check(p, map_cc(o), why, sizeof why)) return 0;
    int n = snprintf(r->model_msg, sizeof r->model_msg, "the checker refuses the %s", why);
    if (o->backend != BACKEND_EMU && n < (int)sizeof r->model_msg) {
        cudaFree(0); /* a current context: the driver checks parameters, not memory */
        for (int t = 0; t < FMHA_TENSOR_COUNT; t++) {
            tmap_params m;
            fmha_tmap_params(p, (fmha_tensor)t, 0, fmha_tmap_mistake_of(p->faults), &m);
            char derr[200];
            CUtensorMap map;
            const int cr = tmap_encode_unchecked(&m, (void *)(uintptr_t)0x100000u, &map, derr, sizeof derr);
            if (cr == -1) snprintf(r->model_msg + n, sizeof r->model_msg - (size_t)n, "; the driver: %s", derr);
            else if (cr != 0)
                snprintf(r->model_msg + n, sizeof r->model_msg - (size_t)n, "; the driver refuses it too: CUresult %d%s", cr,
                         cr == 1 ? " (CUDA_ERROR_INVALID_VALUE)" : "");
            if (cr) break;
        }
    }
    fprintf(stderr, "stage E: %s\n", r->model_msg);
    return 1;
}

static int run(const fmha_opts *o, stage_result *r)
{
    attn_problem ap;
    if (attn_problem_make(o, &ap)) return 1;
    ap.p.faults = o->fault_bits;
    int rc;
    if (fmha_tmap_mistake_of(ap.p.faults) != FMHA_TMAP_RIGHT && tmap_mistake_refused(o, &ap.p, r)) {
        attn_problem_free(&ap);
        return 1;
    }
    if (o->backend == BACKEND_EMU) {
        char err[320];
        rc = stage_e_emu_run(&ap.p, err, sizeof err);
        if (err[0]) snprintf(r->model_msg, sizeof r->model_msg, "%s", err);
        if (rc) fprintf(stderr, "stage E (emu): %s\n", err);
    } else {
        rc = attn_run_gpu(&stage_E, o, &ap, r);
    }
    attn_counts(o, &ap, r);
    if (attn_dump(o, "E", &ap)) rc = 1;
    if (rc == 0 && o->check) attn_check(o, &ap, r);
    attn_problem_free(&ap);
    return rc;
}

#define ALL_BACKENDS (BACKEND_BIT(BACKEND_EMU) | BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_SM100))
static const stage_fault faults[] = {
    {"tmap-rank-strides", "FG13", FMHA_FAULT_TMAP_RANK_STRIDES, ALL_BACKENDS,
     "globalStrides with rank entries, the element size first (dim 0's stride is implied)",
     "--d 128 --sq 128 --skv 128 --hq 1 --hkv 1"},
    {"tmap-element-strides", "FG13", FMHA_FAULT_TMAP_ELEMENT_STRIDES, ALL_BACKENDS,
     "strides in elements: still multiples of 16, so the maps encode and read rows at half the pitch",
     "--d 64 --sq 128 --skv 256 --hq 1 --hkv 1"},
    {"tmap-stride-not-16", "FG13", FMHA_FAULT_TMAP_STRIDE_NOT_16, ALL_BACKENDS,
     "a row stride 8 bytes past a multiple of 16 (a padded row)", "--d 128 --sq 128 --skv 128 --hq 1 --hkv 1"},
    {"tmap-wide-inner-box", "FG13", FMHA_FAULT_TMAP_WIDE_INNER_BOX, ALL_BACKENDS,
     "one box the whole head dim wide: 256 bytes, over the 128-byte swizzle span",
     "--d 128 --sq 128 --skv 128 --hq 1 --hkv 1"},
    {"expect-tx-short", "FG15", FMHA_FAULT_EXPECT_TX_SHORT, ALL_BACKENDS,
     "K's arrive.expect_tx one 16 KB box short: the barrier releases before K_j has landed",
     "--d 128 --sq 128 --skv 512 --hq 1 --hkv 1"},
    {"expect-tx-long", "FG15", FMHA_FAULT_EXPECT_TX_LONG, ALL_BACKENDS,
     "K's arrive.expect_tx one box too many: the phase never completes (the watchdog names it)",
     "--d 64 --sq 128 --skv 128 --hq 1 --hkv 1"},
    {"first-wait-parity", "FG16", FMHA_FAULT_FIRST_WAIT_PARITY, ALL_BACKENDS,
     "k_full waited on parity 1 first: a fresh barrier passes at once, before K_0 has landed",
     "--d 64 --sq 128 --skv 384 --hq 1 --hkv 1"},
    {"no-tail-mask", "FG21", FMHA_FAULT_NO_TAIL_MASK, ALL_BACKENDS,
     "keys past Skv left unmasked: TMA's zero-filled rows score 0 and join the softmax",
     "--d 64 --sq 128 --skv 200 --hq 1 --hkv 1"},
    {"store-no-fence", "FG22", FMHA_FAULT_STORE_NO_FENCE, ALL_BACKENDS,
     "O's TMA store without fence.proxy.async after the SMEM writes",
     "--d 64 --sq 256 --skv 128 --hq 2 --hkv 1"},
    {"store-no-wait", "FG22", FMHA_FAULT_STORE_NO_WAIT, ALL_BACKENDS,
     "the CTA exits before O's TMA store has read SMEM (no cp.async.bulk.wait_group.read)",
     "--d 64 --sq 256 --skv 128 --hq 2 --hkv 1"},
};

const stage_def stage_E = {
    .letter = "E",
    .name = "E_tma",
    .title = "attention forward with TMA loads and stores, expect_tx completion (one buffer per operand)",
    .accepts = OPT_HKV | OPT_CAUSAL | OPT_LAYOUT,
    .backends = ALL_BACKENDS,
    .defaults = {.b = 1, .hq = 4, .hkv = 2, .sq = 256, .skv = 256, .d = 64, .backend = BACKEND_AUTO,
                 .init = INIT_RAND, .seed = 1, .check = 1, .iters = 20, .warmup = 3},
    .validate = validate,
    .run = run,
    .launch_sm100 = stage_e_sm100_launch,
    .launch_sm90 = stage_e_sm90_launch,
    .shapes = shape_attn_row,
    .faults = faults,
    .nfaults = (int)(sizeof faults / sizeof faults[0]),
};
