/* Stage D glue: the stage's rules, its backends, its shape table and its footgun variants. The
 * decode host side (lengths, the paged cache, the FA3-rule check against fp64 over the
 * dequantised cache, the GPU run, the dump) is common/host/decode.c; the kernels are
 * decode_sm100.cu / decode_sm90.cu and the merge merge.cu, the host-model flow decode_emu.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "host/backend.h"
#include "host/decode.h"
#include "host/runner.h"
#include "host/shape_table.h"
#include "decode.h"
#include "ring_auto.h"

/* Packed rows per CTA: sm90's MMA N (8..64, by the shape), or sm100's M = 128 (emu models sm100). */
static int bm_of(const fmha_opts *o)
{
    if (o->backend != BACKEND_SM90) return DEC_BM_SM100;
    const int bm = dec_sm90_bm(o->hq / o->hkv * o->sq);
    /* --m64-groups 2, and the ring past 32 rows (its two consumer groups): 128 rows a CTA */
    return bm == DEC_BM_SM90 && (o->m64_groups == 2 || o->ring) ? 2 * DEC_BM_SM90 : bm;
}

/* The shape the grid is sized by, before any buffer exists (--ring auto, --fair's one-wave rule):
 * the dimensions, `bm` packed rows a CTA, the longest sequence. 1 where the options break a rule
 * dec_validate names (lengths, heads). */
static int shape_of(const fmha_opts *o, int bm, dec_params *shape)
{
    if (o->hkv < 1 || o->hq % o->hkv || o->b < 1) return 1;
    int32_t *lens = malloc(sizeof(int32_t) * (size_t)o->b);
    char err[200];
    if (!lens || dec_lengths(o, lens, err, sizeof err)) {
        free(lens);
        return 1;
    }
    memset(shape, 0, sizeof *shape);
    shape->b = o->b; shape->hq = o->hq; shape->hkv = o->hkv; shape->sq = o->sq; shape->d = o->d; shape->bm = bm;
    for (int b = 0; b < o->b; b++) shape->max_len = lens[b] > shape->max_len ? lens[b] : shape->max_len;
    free(lens);
    return 0;
}

/* --ring auto: ring_auto.h says the rule and what it rests on. */
int stage_d_ring_auto(const fmha_opts *o, int slots, int *tiles_per_split)
{
    *tiles_per_split = 0;
    dec_params shape;
    if (o->ring || o->backend != BACKEND_SM90 || o->d > 128 || o->hkv < 1 || o->hq % o->hkv ||
        dec_sm90_bm(o->hq / o->hkv * o->sq) != DEC_BM_SM90 || o->fault_bits || o->prefetch || o->kv_tma >= 0 ||
        o->m64_groups || o->timeline[0] || o->b < 1 || shape_of(o, 2 * DEC_BM_SM90, &shape))
        return 0;
    const int splits = dec_splits_for(o, &shape, slots);
    const int nt = dec_kv_tiles(shape.max_len);
    *tiles_per_split = (nt + splits - 1) / splits;
    return *tiles_per_split >= DEC_RING_AUTO_MIN_TILES ? DEC_RING_AUTO_SLOTS : 0;
}
/* ring_auto on this GPU: its SMs times the ring's CTAs an SM (the occupancy API); none without one. */
static int ring_auto(const fmha_opts *o, int *tiles_per_split)
{
    *tiles_per_split = 0;
    if (o->ring || o->backend != BACKEND_SM90) return 0; /* the rule's own first test, before any CUDA query */
    int sms = 0, dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return 0;
    const int per_sm = stage_d_sm90_ctas_per_sm(o->d, 2 * DEC_BM_SM90, DEC_RING_AUTO_SLOTS, 0, 0);
    return stage_d_ring_auto(o, sms * (per_sm > 0 ? per_sm : 1), tiles_per_split);
}
/* The options a run uses: --ring auto resolved (ring_auto), --ring 1 (one slot: the unpipelined
 * kernel, which waits for its own gather) as no ring. */
static fmha_opts with_ring(const fmha_opts *o, int *auto_tiles)
{
    fmha_opts r = *o;
    *auto_tiles = 0;
    if (!r.ring) r.ring = ring_auto(o, auto_tiles);
    else if (r.ring == 1) r.ring = 0;
    return r;
}

/* --ring: the pipelined decode (sm90: a load warpgroup and a ring, with the swapped kernel up to 32
 * packed rows and two 64-row consumer groups past them; sm100 and emu: the load warp runs ahead
 * into the ring's slots). Of the footgun variants only FG23's runs with it. */
static int validate_ring(const fmha_opts *o, char *err, size_t len)
{
    if (o->ring < 2 || o->ring > DEC_MAX_RING) {
        snprintf(err, len, "--ring=%d: the pipelined decode takes 2 to %d slots; 1 is the unpipelined kernel (its "
                 "single buffer: on sm90 the ring's load role publishes a tile only after issuing the next, so one slot "
                 "would wait for itself) and auto picks (3 past 32 packed rows where a split holds %d tiles or more)",
                 o->ring, DEC_MAX_RING, DEC_RING_AUTO_MIN_TILES);
        return 2;
    }
    if (o->backend == BACKEND_SM90 && o->m64_groups == 1 && dec_sm90_bm(o->hq / o->hkv * o->sq) == DEC_BM_SM90) {
        snprintf(err, len, "--ring=%d --m64-groups 1: past 32 packed rows the pipelined decode runs two consumer "
                 "warpgroups of 64 rows on each slot (--m64-groups 2, implied by --ring)", o->ring);
        return 2;
    }
    if (o->fault_bits & ~(unsigned)DEC_FAULT_RING_EARLY_RELEASE) {
        snprintf(err, len, "--ring=%d with --fault: the footgun variants but ring-early-release run stage D's "
                 "unpipelined kernel (the FG20 variant's MN-major V is larger than a ring slot's V at D = 64)", o->ring);
        return 2;
    }
    return 0;
}

static int wave_slots(const fmha_opts *o, char *how, size_t len);

/* --fair and --persistent change what the kernel up to 32 packed rows does with the next tile's
 * boxes, which it issues ahead with --kv-tma 2 (auto) and no ring: `what` says what the switch does
 * with them. */
static int validate_boxes_ahead(const fmha_opts *o, const char *flag, const char *what, char *err, size_t len)
{
    if (o->backend != BACKEND_SM90 || o->ring || bm_of(o) >= DEC_BM_SM90 || dec_kv_tma_of(o) != 2) {
        snprintf(err, len, "%s: %s, which sm90's kernel up to 32 packed rows issues ahead with --kv-tma 2 (auto) and "
                 "no --ring: here --backend %s, %d packed rows a CTA, --ring %d, --kv-tma %d", flag, what,
                 backend_name(o->backend), bm_of(o), o->ring, dec_kv_tma_of(o));
        return 2;
    }
    return 0;
}

/* --fair N: (decode_sm90_steps.cuh, fair_hold) on a grid whose CTAs are all resident at once: a CTA
 * ahead of the grid's mean waits for CTAs that must be running (a later wave could only start once
 * it exits; the wait is bounded either way). */
static int validate_fair(const fmha_opts *o, char *err, size_t len)
{
    char flag[32];
    snprintf(flag, sizeof flag, "--fair=%d", o->fair);
    if (validate_boxes_ahead(o, flag, "the CTAs hold back the next tile's boxes", err, len)) return 2;
    if (o->persistent > 0) { /* run 110: with the grid's mean as each CTA's share, 2.2x slower at Llama */
        snprintf(err, len, "%s with --persistent 1: the walk hands each item to whichever CTA claims it, so no CTA's "
                 "share of the tiles is known ahead to hold it to", flag);
        return 2;
    }
    dec_params shape;
    if (shape_of(o, bm_of(o), &shape)) return 0; /* dec_validate names the rule */
    char how[80];
    const int slots = wave_slots(o, how, sizeof how);
    shape.splits = dec_splits_for(o, &shape, slots);
    const long long ctas = (long long)dec_m_tiles(&shape) * shape.splits * o->hkv * o->b;
    if (ctas > slots) {
        snprintf(err, len, "--fair=%d: a CTA ahead of the grid's mean waits for the others, so all of them must be "
                 "resident at once: %lld CTAs (%d splits%s) over %d resident (%s)", o->fair, ctas, shape.splits,
                 o->splits ? "" : ", by --splits auto: --splits N picks another count", slots, how);
        return 2;
    }
    return 0;
}

/* --persistent 1: the swapped kernel with the next tile's boxes ahead walks the grid's items, one
 * CTA a resident slot claiming each next item from a counter (dec_walk_item), carrying the claimed
 * item's first boxes under this item's last tile. */
static int validate_persistent(const fmha_opts *o, char *err, size_t len)
{
    if (validate_boxes_ahead(o, "--persistent=1", "the walk carries the next tile's boxes across items", err, len))
        return 2;
    if (o->fault_bits || o->timeline[0] || o->prefetch) {
        snprintf(err, len, "--persistent=1 with %s: the walking kernel has no footgun variants, no CTA stamps and no "
                 "L2 prefetch", o->fault_bits ? "--fault" : o->timeline[0] ? "--timeline" : "--prefetch");
        return 2;
    }
    return 0;
}

static int validate(const fmha_opts *o_in, char *err, size_t len)
{
    int auto_tiles;
    const fmha_opts ro = with_ring(o_in, &auto_tiles);
    const fmha_opts *o = &ro;
    if (o->timeline[0] && o->backend != BACKEND_SM90) {
        snprintf(err, len, "--timeline: the CTA stamps are written by the sm90 kernels (the GPU's clock); emu has "
                 "no clock and the sm100 kernel writes none (--backend %s)", backend_name(o->backend));
        return 2;
    }
    if (o->timeline[0] && (o->ring || o->m64_groups == 2 || dec_kv_tma_of(o) != 2)) {
        snprintf(err, len, "--timeline: the stamping kernels are the default gathers' (no --ring, --m64-groups 1, "
                 "--kv-tma auto: 2); here --ring %d --m64-groups %d --kv-tma %d",
                 o->ring, o->m64_groups ? o->m64_groups : 1, dec_kv_tma_of(o));
        return 2;
    }
    if ((o->fault_bits & DEC_FAULT_RING_EARLY_RELEASE) && !o->ring) {
        snprintf(err, len, "--fault ring-early-release (FG23) releases a ring slot early: it needs --ring 2..%d", DEC_MAX_RING);
        return 2;
    }
    if (o->ring && validate_ring(o, err, len)) return 2;
    /* the host model of both rings (tests/unit/test_role_sim.c) deadlocks at two slots with the
     * overlap's later release, as run 98 did on the GPU, and runs at three */
    if (o->overlap > 0 && (o->backend != BACKEND_SM90 || o->ring < 3 || bm_of(o) != 2 * DEC_BM_SM90)) {
        snprintf(err, len, "--overlap=1: P V of tile j-1 under the softmax of tile j is the sm90 ring's past 32 packed "
                 "rows, with 3 or more slots (it holds a slot a tile longer; at 2 the load role, which publishes a tile "
                 "only after issuing the next, would wait for the slot the consumers hold): here --backend %s, --ring %d, "
                 "%d packed rows a CTA", backend_name(o->backend), o->ring, bm_of(o));
        return 2;
    }
    if (o->overlap > 0 && o->fault_bits) {
        snprintf(err, len, "--overlap=1 with --fault: FG23's variant (ring-early-release) releases a slot with S's MMA, "
                 "which the overlap's P V reads a tile later, a wider race than FG23's; it runs on the ring without "
                 "the overlap (--overlap 0)");
        return 2;
    }
    if (o->prefetch < 0 || o->prefetch > DEC_MAX_PREFETCH) {
        snprintf(err, len, "--prefetch=%d: the L2 prefetch reaches 0 to %d KV tiles ahead of the gather", o->prefetch,
                 DEC_MAX_PREFETCH);
        return 2;
    }
    if (o->prefetch && (o->backend != BACKEND_SM90 || o->ring)) {
        snprintf(err, len, "--prefetch=%d: the L2 prefetch is sm90's unpipelined kernels' (--backend sm90, no --ring): "
                 "there a CTA gathers each tile itself, and the prefetch warms L2 for the tiles after it", o->prefetch);
        return 2;
    }
    if (o->m64_groups < 0 || o->m64_groups > 2) {
        snprintf(err, len, "--m64-groups=%d: one or two warpgroups of 64 packed rows share a K/V tile", o->m64_groups);
        return 2;
    }
    if (o->m64_groups == 2 && (o->backend != BACKEND_SM90 || dec_sm90_bm(o->hq / o->hkv * o->sq) != DEC_BM_SM90)) {
        snprintf(err, len, "--m64-groups=2: two warpgroups share the tiles of sm90's unswapped kernel (--backend sm90, "
                 "more than 32 packed rows a KV head: Hq/Hkv x Sq = %d here)", o->hq / o->hkv * o->sq);
        return 2;
    }
    if (o->kv_tma > 2) {
        snprintf(err, len, "--kv-tma=%d: 0 (cp.async), 1 (TMA, a tile's boxes issued when it is needed) or 2 (TMA, the "
                 "next tile's boxes issued during this one)", o->kv_tma);
        return 2;
    }
    if (o->kv_tma >= 1 && o->backend != BACKEND_SM90) {
        snprintf(err, len, "--kv-tma=%d: the TMA gather is sm90's (--backend sm90): there one thread issues a tile's "
                 "page boxes and the CTA waits for them on one mbarrier", o->kv_tma);
        return 2;
    }
    /* with the ring: the 64-row groups' load warps issue a slot's boxes (load_role with KT) */
    if (o->kv_tma >= 1 && o->ring && (bm_of(o) != 2 * DEC_BM_SM90 || o->kv_tma != 1 || o->overlap > 0)) {
        snprintf(err, len, "--kv-tma=%d --ring %d: on the ring the TMA gather is the load warps' of the ring past 32 "
                 "packed rows (%d here), at 1 (they already run tiles ahead: 2 has no meaning there), without "
                 "--overlap (its kernels keep the cp.async gather)", o->kv_tma, o->ring, bm_of(o));
        return 2;
    }
    if (o->kv_tma >= 1 && !dec_kv_tma_fits(o->page)) {
        snprintf(err, len, "--kv-tma=%d --page=%d: a TMA box holds one page's rows of a KV head, and a tile's %d tokens "
                 "must be whole boxes: the page a multiple of %d or a divisor of it of 8 tokens or more", o->kv_tma,
                 o->page, DEC_BN, DEC_BN);
        return 2;
    }
    if (o->kv_tma >= 1 && (o->fault_bits & DEC_FAULT_V_NOT_TRANSPOSED)) {
        snprintf(err, len, "--kv-tma=%d --fault v-not-transposed: the FG20 variant gathers V as stored (MN-major) with "
                 "cp.async; the TMA gather lands V in K's layout only", o->kv_tma);
        return 2;
    }
    if (o->persistent > 0 && validate_persistent(o, err, len)) return 2;
    if (o->fair && validate_fair(o, err, len)) return 2;
    const int sm90 = o->backend == BACKEND_SM90;
    const uint32_t ring_bytes = dec_smem_layout_make_ring(bm_of(o), o->d, o->ring, dec_ring_p_in_regs(sm90, bm_of(o))).bytes;
    if (o->ring && ring_bytes > SMEM_OPTIN_MAX_BYTES) {
        snprintf(err, len, "--ring=%d --d=%d: %d slots of %u bytes (K, V, the scales, V transposed) need %u bytes of SMEM, "
                 "over the %u-byte opt-in limit: fewer slots", o->ring, o->d, o->ring, dec_ring_slot_bytes(o->d), ring_bytes,
                 SMEM_OPTIN_MAX_BYTES);
        return 2;
    }
    const uint32_t smem = o->ring ? ring_bytes : dec_smem_layout_of(bm_of(o), o->d, 0, dec_kv_tma_of(o)).bytes;
    return dec_validate(o, "D", bm_of(o), smem, err, len);
}

/* Resident CTAs the GPU holds at once, for --splits auto: its SMs times the kernel's occupancy
 * (sm90), one per SM on sm100 (its 512 TMEM columns). emu models a B200's 148 SMs. */
static int wave_slots(const fmha_opts *o, char *how, size_t len)
{
    int sms = 148, per_sm = 1, dev = 0;
    const int gpu = o->backend != BACKEND_EMU && cudaGetDevice(&dev) == cudaSuccess;
    if (gpu) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    /* without a GPU (--fair's rule is checked before the run skips): one CTA an SM, no query */
    if (o->backend == BACKEND_SM90 && gpu)
        per_sm = stage_d_sm90_ctas_per_sm(o->d, bm_of(o), o->ring, dec_kv_tma_of(o), o->fair > 0);
    if (per_sm < 1) per_sm = 1;
    snprintf(how, len, "%d SMs x %d CTAs%s", sms, per_sm, o->backend == BACKEND_EMU ? " (a B200, modelled)" : "");
    return sms * per_sm;
}

extern const stage_def stage_D;

static int run(const fmha_opts *o_in, stage_result *r)
{
    int auto_tiles;
    const fmha_opts ro = with_ring(o_in, &auto_tiles);
    const fmha_opts *o = &ro;
    char how[80] = "";
    const int slots = o->splits ? 0 : wave_slots(o, how, sizeof how);
    dec_problem dp;
    if (dec_problem_make(o, bm_of(o), slots, &dp)) return 1;
    int rc;
    if (o->backend == BACKEND_EMU) {
        char err[320];
        rc = stage_d_emu_run(&dp.p, err, sizeof err);
        if (err[0]) snprintf(r->model_msg, sizeof r->model_msg, "%s", err);
        if (rc) fprintf(stderr, "stage D (emu): %s\n", err);
    } else {
        rc = dec_run_gpu(&stage_D, o, &dp, r);
    }
    dec_counts(o, &dp, r);
    if (dec_dump(o, "D", &dp)) rc = 1;
    if (rc == 0 && o->check) dec_check(o, &dp, r);
    const size_t n = strlen(r->detail);
    const dec_params *p = &dp.p;
    if (dp.splits_auto)
        snprintf(r->detail + n, sizeof r->detail - n, "%ssplits %d (auto: %d CTAs unsplit, %d resident: %s)", n ? "; " : "",
                 p->splits, dec_m_tiles(p) * p->hkv * p->b, slots, how);
    else
        snprintf(r->detail + n, sizeof r->detail - n, "%ssplits %d", n ? "; " : "", p->splits);
    const size_t n2 = strlen(r->detail);
    if (o->backend == BACKEND_SM90 && !o->ring) /* which gather ran: --kv-tma auto picks it */
        snprintf(r->detail + n2, sizeof r->detail - n2, "; gather: %s%s", p->kv_tma == 2 ? "TMA, a box a page, the next tile's during this one"
                                                                  : p->kv_tma ? "TMA, a box a page" : "cp.async",
                 o->kv_tma < 0 ? " (auto)" : "");
    else if (o->backend == BACKEND_SM90) /* the ring's load warps */
        snprintf(r->detail + n2, sizeof r->detail - n2, "; gather: %s", p->kv_tma ? "TMA by the load warps, a box a page"
                                                                                : "cp.async by the load warps");
    const size_t n3 = strlen(r->detail);
    if (o->ring && !o_in->ring) /* --ring auto picked the pipelined decode */
        snprintf(r->detail + n3, sizeof r->detail - n3, "; ring %d (auto: %d tiles a split, >= %d)", o->ring, auto_tiles,
                 DEC_RING_AUTO_MIN_TILES);
    dec_problem_free(&dp);
    return rc;
}

/* The shape table. gpu: page sizes 16, 64, 256; ragged lengths (1 and --skv included, around
 * page and tile multiples); Sq 1 and 4; GQA 8 and MQA 128; D 64, 128, 256; split-KV off and on. */
static const char *const gpu_rows[] = {
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 1 --seed 1",
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 4 --seed 1",
    "--b 6 --hq 64 --hkv 8 --sq 4 --skv 2100 --ragged --d 128 --page 16 --seed 2",
    "--b 3 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 256 --seed 3",
    "--b 3 --hq 128 --hkv 1 --sq 4 --skv 700 --ragged --d 128 --page 32 --splits 1 --seed 4",
    "--b 5 --hq 64 --hkv 8 --sq 1 --seqlens 1,127,128,129,257 --d 64 --page 64 --seed 5",
    "--b 5 --hq 64 --hkv 8 --sq 4 --seqlens 3,63,64,65,1023 --d 64 --page 16 --splits 3 --seed 6",
    "--b 4 --hq 16 --hkv 2 --sq 2 --seqlens 255,256,257,600 --d 256 --page 128 --seed 7",
    "--b 4 --hq 128 --hkv 1 --sq 8 --skv 1500 --ragged --d 64 --page 256 --splits 5 --seed 8",
    "--b 2 --hq 32 --hkv 4 --sq 3 --skv 4097 --d 128 --page 128 --seed 9",
    "--b 1 --hq 8 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --seed 10",
    "--b 8 --hq 16 --hkv 16 --sq 1 --skv 900 --ragged --d 256 --page 32 --splits 2 --seed 11",
};
static const char *const gpu_quick_rows[] = {
    "--b 3 --hq 64 --hkv 8 --sq 4 --skv 700 --ragged --d 128 --page 16 --splits 3 --seed 2",
    "--b 2 --hq 128 --hkv 1 --sq 1 --skv 600 --ragged --d 64 --page 256 --seed 3",
    "--b 2 --hq 16 --hkv 2 --sq 2 --seqlens 255,300 --d 256 --page 64 --splits 1 --seed 7",
};
static const char *const emu_rows[] = {
    /* the ring (--ring): slots reused (more tiles than slots), a split with one tile, D 64 / 128 */
    "--b 2 --hq 8 --hkv 1 --sq 2 --seqlens 700,130 --d 64 --page 16 --splits 1 --ring 2 --seed 21",
    "--b 2 --hq 16 --hkv 2 --sq 1 --seqlens 1000,129 --d 128 --page 64 --splits 2 --ring 3 --seed 22",
    "--b 3 --hq 8 --hkv 1 --sq 2 --seqlens 1300,200,10 --d 64 --page 16 --splits 3 --ring 4 --seed 23",
    /* and page 32..256, ragged, Sq 3 and 8, MQA's 128 packed rows (sm100 and emu have no row limit) */
    "--b 3 --hq 16 --hkv 2 --sq 1 --skv 700 --ragged --d 128 --page 32 --splits 2 --ring 2 --seed 24",
    "--b 2 --hq 8 --hkv 1 --sq 8 --seqlens 400,1100 --d 64 --page 256 --splits 1 --ring 4 --seed 25",
    "--b 4 --hq 8 --hkv 2 --sq 3 --skv 600 --ragged --d 64 --page 128 --ring 3 --seed 26",
    "--b 2 --hq 128 --hkv 1 --sq 1 --seqlens 300,129 --d 64 --page 16 --splits 2 --ring 2 --seed 27",
    "--b 3 --hq 8 --hkv 1 --sq 2 --skv 300 --ragged --d 64 --page 16 --splits 1 --seed 1",
    "--b 3 --hq 8 --hkv 1 --sq 2 --skv 300 --ragged --d 64 --page 16 --splits 2 --seed 1",
    "--b 2 --hq 16 --hkv 2 --sq 1 --seqlens 129,64 --d 128 --page 64 --seed 2",
    "--b 2 --hq 4 --hkv 4 --sq 3 --seqlens 2,200 --d 256 --page 32 --splits 3 --seed 3",
    "--b 1 --hq 32 --hkv 1 --sq 4 --skv 140 --d 64 --page 256 --seed 4",
};
/* bench: the decode shapes the targets name, then Skv sweeps for the GB/s plot. */
static const char *const bench_rows[] = {
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64",
    "--b 128 --hq 32 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 1024 --d 128 --page 64",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 2048 --d 128 --page 64",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 128 --page 64",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 32768 --d 128 --page 64",
};

/* ablation: the pipelined decode (--ring, sm90: its own cp.async gather; MQA's rows with two
 * consumer groups on each slot; --ring 1: MQA's unpipelined kernel where auto picks the ring; --overlap 1: P V
 * under the next tile's softmax there; --ring 3 --kv-tma 1: its load warps gather by TMA), the L2 prefetch
 * (--prefetch, on the default TMA gather), the TMA gather without the next tile's boxes ahead
 * (--kv-tma 1, GQA and MQA), the cp.async gather in place of the TMA one (--kv-tma 0)
 * and two warpgroups on one K/V tile (--m64-groups, MQA), the CTAs held to the grid's mean progress
 * (--fair, GQA's one wave), the persistent walk (--persistent 1, Llama's two waves as one) at the
 * target shapes and across the GQA
 * Skv sweep, beside the unpipelined rows of the bench suite (make bench: kind "ablation", the
 * switch in the note; the decode plot draws each switch as its own line). */
static const char *const ablation_rows[] = {
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --ring 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --ring 3",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --ring 4",
    "--b 128 --hq 32 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --ring 2",
    "--b 128 --hq 32 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --ring 3",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 1024 --d 128 --page 64 --ring 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 2048 --d 128 --page 64 --ring 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --ring 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --ring 2",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --ring 2",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --ring 3",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 128 --page 64 --ring 2",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 32768 --d 128 --page 64 --ring 2",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --ring 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --ring 4 --overlap 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 128 --page 64 --ring 4 --overlap 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 32768 --d 128 --page 64 --ring 4 --overlap 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --ring 3 --kv-tma 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 128 --page 64 --ring 3 --kv-tma 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 32768 --d 128 --page 64 --ring 3 --kv-tma 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 32768 --d 128 --page 64 --ring 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --prefetch 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --prefetch 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --prefetch 4",
    "--b 128 --hq 32 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --prefetch 2",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --prefetch 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 1024 --d 128 --page 64 --prefetch 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 2048 --d 128 --page 64 --prefetch 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --prefetch 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --prefetch 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --kv-tma 1",
    "--b 128 --hq 32 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --kv-tma 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 1024 --d 128 --page 64 --kv-tma 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 2048 --d 128 --page 64 --kv-tma 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --kv-tma 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --kv-tma 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --kv-tma 0",
    "--b 128 --hq 32 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --kv-tma 0",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --kv-tma 0",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 1024 --d 128 --page 64 --kv-tma 0",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 2048 --d 128 --page 64 --kv-tma 0",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --kv-tma 0",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --kv-tma 0",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --kv-tma 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 128 --page 64 --kv-tma 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 32768 --d 128 --page 64 --kv-tma 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --m64-groups 2 --kv-tma 1",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --m64-groups 2",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --m64-groups 2 --kv-tma 0",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 128 --page 64 --m64-groups 2",
    "--b 32 --hq 128 --hkv 1 --sq 1 --skv 32768 --d 128 --page 64 --m64-groups 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --fair 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --fair 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --fair 2",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --fair 2",
    "--b 128 --hq 32 --hkv 8 --sq 1 --skv 4096 --d 128 --page 64 --persistent 1",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --persistent 1",
};

static int shapes(shape_suite suite, int i, char *args, size_t len)
{
#define ROWS(a) shape_list_row(a, (int)(sizeof a / sizeof a[0]), i, args, len)
    switch (suite) {
    case SUITE_GPU: return ROWS(gpu_rows);
    case SUITE_GPU_QUICK: return ROWS(gpu_quick_rows);
    case SUITE_EMU: return ROWS(emu_rows);
    case SUITE_BENCH: return ROWS(bench_rows);
    case SUITE_BENCH_QUICK: return i < 3 ? ROWS(bench_rows) : 0;
    case SUITE_ABLATION: return ROWS(ablation_rows);
    default: return 0;
    }
#undef ROWS
}

#define ALL_BACKENDS (BACKEND_BIT(BACKEND_EMU) | BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_SM100))
static const stage_fault faults[] = {
    {"k-scale-on-rows", "FG17", DEC_FAULT_K_SCALE_ON_ROWS, ALL_BACKENDS,
     "K's per-token scale applied to S's rows (row r scaled by key r's scale) instead of its columns",
     "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1"},
    {"v-scale-on-o-rows", "FG17", DEC_FAULT_V_SCALE_ON_O_ROWS, ALL_BACKENDS,
     "V's per-token scale left out of P and applied to O's rows instead",
     "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1"},
    {"k-scale-dropped", "FG17", DEC_FAULT_K_SCALE_DROPPED, ALL_BACKENDS, "K's per-token scale left out of S",
     "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1"},
    {"read-whole-page", "FG18", DEC_FAULT_READ_WHOLE_PAGE, ALL_BACKENDS,
     "the gather reads the last page to its end, past the sequence's last token (poisoned slots)",
     "--b 2 --hq 8 --hkv 1 --sq 1 --seqlens 100,37 --d 64 --page 64 --splits 1"},
    {"table-out-of-range", "FG18", DEC_FAULT_TABLE_OUT_OF_RANGE, BACKEND_BIT(BACKEND_EMU),
     "a block-table entry past the end of the cache, the host's check skipped: the gather reads outside it",
     "--b 2 --hq 8 --hkv 1 --sq 1 --seqlens 100,37 --d 64 --page 16"},
    {"no-saturation", "FG19", DEC_FAULT_NO_SATURATION, ALL_BACKENDS,
     "the cache quantised with one per-tensor scale and no saturation: values past 448 become NaN",
     "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1"},
    {"v-not-transposed", "FG20", DEC_FAULT_V_NOT_TRANSPOSED, ALL_BACKENDS,
     "V left MN-major (as stored) for the FP8 P V, which reads K-major operands only",
     "--b 2 --hq 8 --hkv 1 --sq 1 --skv 300 --d 64 --page 16 --splits 1"},
    {"ring-early-release", "FG23", DEC_FAULT_RING_EARLY_RELEASE, ALL_BACKENDS,
     "--ring: a slot's empty barrier arrives with S's MMA, before the softmax read its scales and P V its V: the load "
     "role refills it under those reads",
     "--b 2 --hq 8 --hkv 1 --sq 2 --seqlens 700,130 --d 64 --page 16 --splits 1 --ring 2"},
};

const stage_def stage_D = {
    .letter = "D",
    .name = "D_fp8_paged",
    .title = "FP8 (e4m3) paged-KV decode with per-token scales, GQA/MQA row packing, split-KV + LSE merge",
    .accepts = OPT_HKV | OPT_PAGE | OPT_DECODE | OPT_RING | OPT_OVERLAP | OPT_PERSIST,
    .backends = ALL_BACKENDS,
    .defaults = {.b = 4, .hq = 16, .hkv = 2, .sq = 1, .skv = 1000, .d = 128, .page = 64, .ragged = 0, .splits = 0,
                 .kv_tma = -1, .backend = BACKEND_AUTO, .init = INIT_RAND, .seed = 1, .check = 1, .iters = 20, .warmup = 3},
    .validate = validate,
    .run = run,
    .launch_sm100 = stage_d_sm100_launch,
    .launch_sm90 = stage_d_sm90_launch,
    .shapes = shapes,
    .faults = faults,
    .nfaults = (int)(sizeof faults / sizeof faults[0]),
};
