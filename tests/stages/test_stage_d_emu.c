/* Stage D on the host model (runs everywhere, CI included): the sm100 data flow of the FP8 paged
 * decode (decode_emu.c: the paged gather, e4m3 tcgen05 MMAs on the modelled TMEM, the scales, the
 * split-KV merge) over the stage's emu table, and the program contract: every rule a bad input
 * breaks is named before any launch, with exit 2. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "stage_run.h"
#include "stages/D_fp8_paged/ring_auto.h"

extern const stage_def stage_D;

Test(stage_d_emu, shape_table, .timeout = 300)
{
    cr_expect_eq(emu_table_failures(&stage_D, 5), 0, "stage D emu suite: see the FAILED lines");
}

static void refused(const char *args, const char *rule)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s 2>&1 | tail -n 1 | grep -q '%s'", args, rule);
    cr_expect_eq(program_exit_code("stage_D", cmd), 0, "stage_D %s: the message names '%s'", args, rule);
    snprintf(cmd, sizeof cmd, "%s > /dev/null 2>&1", args);
    cr_expect_eq(program_exit_code("stage_D", cmd), 2, "stage_D %s: exit 2", args);
}

Test(stage_d_emu, program_contract)
{
    cr_expect_eq(program_exit_code("stage_D", "--backend emu --b 2 --hq 8 --hkv 2 --skv 200 --d 64 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_D", "--shapes bench > /dev/null"), 0, "the table lists its bench rows");
    refused("--page 48", "the page size must be 16, 32, 64, 128 or 256");
    refused("--b 2 --seqlens 5,0", "at least one token");
    refused("--b 3 --seqlens 5,6", "2 lengths for --b=3");
    refused("--b 2 --seqlens 5,x", "comma-separated");
    refused("--skv 0", "at least one token");
    refused("--hq 6 --hkv 4", "multiple of --hkv");
    refused("--splits 65", "at most 64");
    refused("--d 96", "D = 64, 128 and 256");
    refused("--b 70000 --hq 1 --hkv 1 --skv 1", "grid");
    /* the pipelined decode's rules: 2..4 slots within the SMEM (1: none); past 32 rows two consumer groups */
    /* --timeline: the sm90 default gathers' stamping twins only */
    refused("--backend emu --timeline /tmp/stage_d_timeline.csv", "emu has no clock");
    refused("--backend sm90 --ring 2 --timeline /tmp/stage_d_timeline.csv", "the stamping kernels are the default gathers");
    refused("--backend sm90 --kv-tma 1 --timeline /tmp/stage_d_timeline.csv", "the stamping kernels are the default gathers");
    refused("--backend sm90 --hq 128 --hkv 1 --m64-groups 2 --timeline /tmp/stage_d_timeline.csv",
            "the stamping kernels are the default gathers");
    refused("--backend emu --ring 2 --d 256", "fewer slots");
    refused("--backend sm90 --ring 0", "must be >= 1");
    cr_expect_eq(stage_run(&stage_D, "--backend emu --b 1 --hq 8 --hkv 1 --skv 200 --d 64 --page 16 --ring 1"), 0,
                 "--ring 1 (one slot) is the unpipelined kernel");
    refused("--backend sm90 --ring 5", "2 to 4 slots");
    refused("--backend sm90 --ring 2 --hq 128 --hkv 1 --m64-groups 1", "two consumer warpgroups of 64 rows");
    refused("--backend sm90 --ring 2 --hq 128 --hkv 1 --d 256", "fewer slots");
    /* past 32 rows sm90's ring keeps P's codes in registers, so D = 128 holds four slots; the sm100
     * flow (emu) keeps P in SMEM and holds three */
    refused("--backend emu --ring 4 --hq 128 --hkv 1 --d 128", "fewer slots");
    cr_expect_neq(program_exit_code("stage_D", "--backend sm90 --ring 4 --hq 128 --hkv 1 --d 128 > /dev/null 2>&1"), 2,
                  "sm90's ring past 32 rows has no P tile: four slots fit at D = 128");
    refused("--backend sm90 --ring 4 --hq 16 --hkv 2 --d 256", "fewer slots");
    /* the overlap (P V of tile j-1 under tile j's softmax): sm90's ring past 32 rows, 3 slots or more */
    refused("--backend sm90 --ring 2 --hq 128 --hkv 1 --overlap 1", "past 32 packed rows, with 3 or more slots");
    refused("--backend emu --ring 3 --hq 128 --hkv 1 --overlap 1", "P V of tile j-1 under the softmax of tile j is the sm90 ring");
    refused("--backend sm90 --ring 3 --hq 16 --hkv 2 --overlap 1", "P V of tile j-1 under the softmax of tile j is the sm90 ring");
    refused("--backend sm90 --ring 1 --hq 128 --hkv 1 --overlap 1", "P V of tile j-1 under the softmax of tile j is the sm90 ring");
    refused("--backend sm90 --ring 3 --hq 128 --hkv 1 --overlap 2", "0 or 1");
    refused("--backend sm90 --ring 3 --hq 128 --hkv 1 --overlap 1 --fault ring-early-release", "a wider race than FG23");
    refused("--backend sm90 --ring 2 --fault k-scale-dropped", "the footgun variants but ring-early-release");
    refused("--backend emu --fault ring-early-release --b 2 --hq 8 --hkv 1 --skv 300 --d 64", "it needs --ring");
    /* the L2 prefetch: 0..4 tiles ahead, sm90's unpipelined kernels only */
    refused("--backend sm90 --prefetch 5", "0 to 4 KV tiles ahead");
    refused("--backend sm90 --prefetch -1", "must be >= 0");
    refused("--backend emu --prefetch 1", "unpipelined kernels");
    refused("--backend sm90 --ring 2 --prefetch 1", "unpipelined kernels");
    /* the TMA gather: sm90's unpipelined kernels, a page holding whole tiles or a tile whole pages,
     * V landing in K's layout (not the FG20 variant's) */
    refused("--backend emu --kv-tma 1", "the TMA gather is sm90");
    /* on the ring: the load warps of the ring past 32 rows, at 1, without the overlap */
    refused("--backend sm90 --ring 2 --kv-tma 1", "of the ring past 32 packed rows");
    refused("--backend sm90 --ring 3 --hq 128 --hkv 1 --kv-tma 2", "2 has no meaning there");
    refused("--backend sm90 --ring 3 --hq 128 --hkv 1 --kv-tma 1 --overlap 1", "without --overlap");
    refused("--backend sm90 --ring 3 --hq 128 --hkv 1 --kv-tma 1 --page 48", "a multiple of 128 or a divisor of it");
    refused("--backend sm90 --kv-tma 1 --page 48", "a multiple of 128 or a divisor of it");
    refused("--backend sm90 --kv-tma 1 --fault v-not-transposed --b 2 --hq 8 --hkv 1 --skv 300 --d 64",
            "the TMA gather lands V in K");
    refused("--backend sm90 --kv-tma 3", "0 (cp.async), 1 (TMA");
    refused("--backend emu --kv-tma 2", "the TMA gather is sm90");
    refused("--backend sm90 --kv-tma 2 --page 48", "a multiple of 128 or a divisor of it");
    /* two warpgroups on one K/V tile: sm90's unswapped kernel (more than 32 packed rows) */
    refused("--backend sm90 --m64-groups 3 --hq 128 --hkv 1", "one or two warpgroups");
    refused("--backend emu --m64-groups 2 --hq 128 --hkv 1", "two warpgroups share the tiles");
    refused("--backend sm90 --m64-groups 2 --hq 16 --hkv 2", "more than 32 packed rows");
    /* --fair: sm90's kernel up to 32 packed rows with the next tile's boxes ahead, on one wave */
    refused("--backend emu --fair 1", "fair=1: the CTAs hold back the next tile");
    refused("--backend sm100 --fair 1", "fair=1: the CTAs hold back the next tile");
    refused("--backend sm90 --fair 1 --hq 128 --hkv 1", "kernel up to 32 packed rows issues ahead");
    refused("--backend sm90 --fair 1 --kv-tma 1", "2 (auto) and no --ring: here --backend sm90, 8 packed rows a CTA, --ring 0, --kv-tma 1");
    refused("--backend sm90 --fair 1 --ring 2", "2 (auto) and no --ring: here --backend sm90, 8 packed rows a CTA, --ring 2");
    refused("--backend sm90 --fair -1", "must be >= 0");
    refused("--backend sm90 --fair 1 --b 64 --hq 64 --hkv 8 --skv 8192 --page 64 --splits 3",
            "all of them must be resident at once: 1536 CTAs (3 splits)");
    refused("--backend sm90 --fair 1 --b 128 --hq 32 --hkv 8 --skv 4096 --page 64 --splits 1",
            "all of them must be resident at once: 1024 CTAs"); /* more than an H100 or H200 holds (528) */
    refused("--backend sm90 --fair 1 --persistent 1 --b 16 --hq 64 --hkv 8 --skv 2048 --page 64 --splits 8",
            "share of the tiles is known ahead");
    /* --persistent 1: the same kernel walking the grid's items, one CTA a resident slot */
    refused("--backend emu --persistent 1", "the walk carries the next tile");
    refused("--backend sm90 --persistent 1 --hq 128 --hkv 1", "kernel up to 32 packed rows issues ahead");
    refused("--backend sm90 --persistent 1 --kv-tma 0", "2 (auto) and no --ring: here --backend sm90, 8 packed rows a CTA, --ring 0, --kv-tma 0");
    refused("--backend sm90 --persistent 1 --fault k-scale-dropped", "no footgun variants");
    refused("--backend sm90 --persistent 1 --prefetch 1", "no L2 prefetch");
    refused("--backend sm90 --persistent 1 --timeline /tmp/stage_d_timeline.csv", "no CTA stamps");
    /* ragged lengths with Sq rows past the start of a short sequence: rows with no key */
    cr_expect_eq(program_exit_code("stage_D", "--backend emu --b 3 --hq 4 --hkv 1 --sq 5 --seqlens 2,1,40 --d 64 "
                                              "--page 16 --splits 2 > /dev/null"), 0);
    /* --splits auto says what it chose */
    cr_expect_eq(program_exit_code("stage_D", "--backend emu --b 1 --hq 8 --hkv 1 --skv 600 --d 64 2>&1 | "
                                              "grep -q 'splits 5 (auto: 1 CTAs unsplit, 148 resident'"), 0);
}

/* --ring auto's rule (stages/D_fp8_paged/ring_auto.h) without a GPU: the ring past 32 packed rows
 * at D <= 128 where each split of the longest sequence holds 8 tiles or more, with the split the
 * ring's resident CTAs give (here an H200's or H100's 132 SMs x 1), nothing elsewhere. */
static fmha_opts mqa(int b, int skv, int d, int splits)
{
    fmha_opts o = stage_D.defaults;
    o.backend = BACKEND_SM90;
    o.b = b; o.hq = 128; o.hkv = 1; o.sq = 1; o.skv = skv; o.d = d; o.splits = splits; o.ragged = 0;
    return o;
}
Test(stage_d_emu, ring_auto_rule)
{
    int tiles;
    fmha_opts o = mqa(32, 16384, 128, 0); /* the bench's MQA row: split 4, 32 tiles a split */
    cr_expect_eq(stage_d_ring_auto(&o, 132, &tiles), DEC_RING_AUTO_SLOTS);
    cr_expect_eq(tiles, 32, "MQA B32 Skv 16k on 132 slots: %d tiles a split", tiles);
    o = mqa(32, 4096, 64, 0); /* split 4: 8 tiles */
    cr_expect_eq(stage_d_ring_auto(&o, 132, &tiles), DEC_RING_AUTO_SLOTS, "8 tiles a split: %d", tiles);
    o = mqa(2, 1024, 128, 1);
    cr_expect_eq(stage_d_ring_auto(&o, 132, &tiles), DEC_RING_AUTO_SLOTS, "one split of 8 tiles: %d", tiles);
    o = mqa(2, 896, 128, 1);
    cr_expect_eq(stage_d_ring_auto(&o, 132, &tiles), 0, "7 tiles a split");
    cr_expect_eq(tiles, 7);
    o = mqa(1, 8192, 128, 0); /* one sequence: auto splits it into 1-tile pieces */
    cr_expect_eq(stage_d_ring_auto(&o, 132, &tiles), 0, "B1: %d tiles a split", tiles);
    o = mqa(32, 16384, 256, 0);
    cr_expect_eq(stage_d_ring_auto(&o, 132, &tiles), 0, "D 256: the ring's two slots do not fit");
    o = mqa(32, 16384, 128, 0);
    o.hq = 64; o.hkv = 8; /* 8 packed rows: the swapped kernel, whose ring is slower */
    cr_expect_eq(stage_d_ring_auto(&o, 132, &tiles), 0, "GQA");
    static const char *const why[] = {"--ring 2", "--kv-tma 2", "--prefetch 1", "--m64-groups 1", "a fault", "emu", "sm100"};
    for (int k = 0; k < 7; k++) {
        o = mqa(32, 16384, 128, 0);
        if (k == 0) o.ring = 2;
        if (k == 1) o.kv_tma = 2;
        if (k == 2) o.prefetch = 1;
        if (k == 3) o.m64_groups = 1;
        if (k == 4) o.fault_bits = 1;
        if (k == 5) o.backend = BACKEND_EMU;
        if (k == 6) o.backend = BACKEND_SM100;
        cr_expect_eq(stage_d_ring_auto(&o, 132, &tiles), 0, "%s: no auto ring", why[k]);
    }
}
