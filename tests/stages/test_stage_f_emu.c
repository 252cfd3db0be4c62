/* Stage F on the host model (runs everywhere, CI included): its emu suite as an event simulation
 * of the warp-specialised pipeline (model/role_sim.h: each role runs until it waits; every ring
 * depth), over several interleavings, and the program contract: the pipeline switches' rules. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "stage_run.h"

extern const stage_def stage_F;

Test(stage_f_emu, shape_table)
{
    cr_expect_eq(emu_table_failures(&stage_F, 5), 0, "stage F emu suite: see the FAILED lines");
}

/* One shape through many schedules: a seed picks the order in which runnable roles go. */
Test(stage_f_emu, interleavings)
{
    char args[160];
    int failed = 0;
    for (int seed = 1; seed <= 12; seed++) {
        snprintf(args, sizeof args, "--backend emu --d 64 --sq 130 --skv 600 --hq 2 --hkv 1 --causal --ring %d --seed %d",
                 1 + seed % 3, seed);
        failed += stage_run_counted(&stage_F, args);
    }
    cr_expect_eq(failed, 0, "%d of 12 interleavings failed", failed);
}

Test(stage_f_emu, program_contract)
{
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --sq 64 --skv 200 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --sq 64 --skv 300 --overlap 1 --d 128 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_F", "--ring 4 > /dev/null 2>&1"), 2, "the ring has 1 to 3 slots");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --ring 2 --d 256 2>&1 | tail -n 1 | grep -q 'opt-in limit'"),
                 0, "two K/V slot pairs at D = 256 are over the SMEM limit");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --ws 0 2>&1 | tail -n 1 | grep -q 'warp-specialised by design'"),
                 0, "--ws 0 is sm90's variant");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --pingpong 1 2>&1 | tail -n 1 | grep -q 'sm90'"), 0,
                 "the ping-pong is sm90's");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --overlap 1 --d 256 --ring 1 2>&1 | tail -n 1 | grep -q 'TMEM'"),
                 0, "two S and two P buffers leave D <= 128 of TMEM for O");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --pingpong 1 --ws 0 2>&1 | tail -n 1 | grep -q 'needs --ws 1'"),
                 0, "sm90's ping-pong needs its producer warpgroup");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --overlap 1 --d 256 --kv-tile 128 --ring 1 2>&1 | tail -n 1 | "
                                              "grep -q '232 registers'"),
                 0, "sm90's overlap with 128-key tiles stops at D = 128 (registers)");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --consumers 3 2>&1 | tail -n 1 | grep -q 'sm90'"), 0,
                 "three consumer warpgroups are sm90's");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --consumers 3 --d 128 2>&1 | tail -n 1 | grep -q "
                                              "'160 registers'"),
                 0, "three consumer groups stop at D = 64 (registers)");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --consumers 3 --ws 0 2>&1 | tail -n 1 | grep -q "
                                              "'needs --ws 1'"),
                 0, "the third consumer group comes with the producer warpgroup");
    cr_expect_eq(program_exit_code("stage_F", "--consumers 4 2>&1 | tail -n 1 | grep -q '2 (128 query rows a CTA) or 3'"),
                 0);
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --persistent 1 2>&1 | tail -n 1 | grep -q 'sm90'"), 0,
                 "the persistent kernel is sm90's");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --persistent 1 --pingpong 1 2>&1 | tail -n 1 | grep -q "
                                              "'pingpong 0'"), 0, "the persistent kernel runs without the ping-pong");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --persistent 1 --ws 0 2>&1 | tail -n 1 | grep -q 'ws 1'"), 0,
                 "the persistent kernel walks the tiles with the producer warpgroup");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --persistent 1 --d 256 --kv-tile 128 --ring 1 2>&1 | tail -n 1 | "
                                              "grep -q 'two Q buffers'"),
                 0, "two Q buffers and a slot pair of 128 keys at D = 256 are over the SMEM limit");
    /* the key tile's rules: 64, 128 or 176 keys, 64 on sm90 at D = 256 only, 176 at D = 128 only;
     * what fits with each */
    cr_expect_eq(program_exit_code("stage_F", "--kv-tile 96 2>&1 | tail -n 1 | grep -q '64, 128 or 176 keys'"), 0);
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --d 256 --kv-tile 176 2>&1 | tail -n 1 | grep -q 'D = 128 only'"),
                 0, "176-key tiles are built for D = 128");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --d 128 --kv-tile 176 2>&1 | tail -n 1 | grep -q \"sm90's\""), 0,
                 "176-key tiles are sm90's");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --d 256 --kv-tile 64 2>&1 | tail -n 1 | grep -q \"sm90's\""), 0,
                 "64-key tiles are sm90's");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --d 128 --kv-tile 64 2>&1 | tail -n 1 | grep -q 'D = 256 only'"),
                 0, "64-key tiles are built for D = 256");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --d 256 --kv-tile 128 --ring 2 2>&1 | tail -n 1 | grep -q "
                                              "'or --kv-tile 64'"),
                 0, "two slot pairs of 128 keys at D = 256 are over the SMEM limit");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --d 256 --kv-tile 64 --ring 3 2>&1 | tail -n 1 | grep -q "
                                              "'3 K/V slot pairs of 64 keys'"),
                 0, "three slot pairs of 64 keys at D = 256 are over the SMEM limit");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --d 256 --kv-tile 128 --overlap 1 2>&1 | tail -n 1 | grep -q "
                                              "'with --kv-tile 64 they do'"),
                 0, "the message names the key tile with which the overlap's registers fit");
    cr_expect_eq(program_exit_code("stage_F", "--shapes bench > /dev/null"), 0, "the table lists its bench rows");
    /* the ablation rows make bench runs: the reference shape, non-causal and causal, 7 switch steps
     * each, its causal row in the old order (head by head), both with 176-key tiles, one K/V box
     * a tile against auto's D / 64, K/V multicast in clusters of two, and the row max lagging by 1
     * (auto's 0 at D = 128) */
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -c -- '--sq 8192 --skv 8192 --d 128' | grep -qx 20"),
                 0);
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -c -- '--d 128 --rescale-th 1$' | grep -qx 1"), 0);
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -c -- '--d 256 --causal --kv-tile 128 --rescale-th 0$' | "
                                              "grep -qx 1"),
                 0, "D = 256's lag of 1 against O rescaled whenever the max grows");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm100 --rescale-th 8 > build/rescale_refusal.txt 2>&1; test $? -eq 2 "
                                              "&& tail -n 1 build/rescale_refusal.txt | grep -q 'lagging row max is sm90'"),
                 0, "--rescale-th past 0 is refused on sm100, naming the rule (exit 2)");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --rescale-th 8 --init int --d 128 --sq 130 --skv 700 --hq 2 "
                                              "--hkv 1 --causal"),
                 0, "emu lags the row max as sm90 does: the most it may, with integer inputs");
    /* and the lag is real: with scores of tens (integer inputs) the max moves on fewer tiles at 8
     * than at 0, on the same count of tiles; at 0 it moves on some */
    cr_expect_eq(program_exit_code("stage_F",
                                   "--backend emu --init int --d 64 --sq 130 --skv 1300 --hq 2 --hkv 1 --rescale-th 0 > "
                                   "build/lag_0.txt && build/bin/stage_F --backend emu --init int --d 64 --sq 130 --skv 1300 "
                                   "--hq 2 --hkv 1 --rescale-th 8 > build/lag_8.txt && "
                                   "a=$(sed -n 's/.*the row max moved on \\([0-9]*\\) of \\([0-9]*\\) .*/\\1 \\2/p' build/lag_0.txt) && "
                                   "b=$(sed -n 's/.*the row max moved on \\([0-9]*\\) of \\([0-9]*\\) .*/\\1 \\2/p' build/lag_8.txt) && "
                                   "echo \"moves/tiles at 0: $a, at 8: $b\" && set -- $a $b && test $1 -gt 0 && test $3 -lt $1 && "
                                   "test $2 -eq $4"),
                 0, "--rescale-th 8 moves the row max on fewer tiles than 0");
    cr_expect_eq(program_exit_code("stage_F", "--backend sm90 --rescale-th 9 2>&1 | tail -n 1 | grep -q 'at most 8'"), 0,
                 "--rescale-th is bounded: P below 2^8");
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --rescale-th 0 --d 64 --sq 130 --skv 300 --hq 2 --hkv 1"), 0,
                 "--rescale-th 0 is every flow's rule");
    /* a lagging max rounds a tile's largest P too (O's error up to twice the reference's rounded at
     * the max, at this seed): the check's yardstick then also rounds P off the max (host/attention.c) */
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --b 2 --hq 9 --hkv 3 --sq 171 --skv 305 --d 64 --ring 2 "
                                              "--rescale-th 3 --layout bshd --seed 29754 > build/lag_3.txt && grep -q 'at 7 scales off it' build/lag_3.txt"),
                 0, "a shape whose error passed twice the at-the-max yardstick under a lag of 3");
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -c -- '--d 128 --cluster 2$' | grep -qx 1"), 0);
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -c -- '--d 128 --kv-box 1$' | grep -qx 1"), 0);
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --kv-box 1 2>&1 | tail -n 1 | grep -q 'the one-box K/V copy is sm90'"),
                 0, "--kv-box 1 is refused off sm90");
    /* --cluster 2: each rule it needs, named before any launch (exit 2) */
    static const char *const cluster_refusals[][2] = {
        {"--backend emu --cluster 2", "the multicast K/V copy is sm90"},
        {"--backend sm90 --cluster 2 --ws 0", "(--ws 1)"},
        {"--backend sm90 --cluster 2 --persistent 1", "draw their query tiles one by one"},
        {"--backend sm90 --d 128 --sq 512 --skv 4096 --cluster 2 --causal", "different numbers of KV tiles"},
        {"--backend sm90 --d 128 --sq 512 --skv 4096 --cluster 2 --kv-box 1", "(--kv-box 0)"},
        {"--backend sm90 --d 128 --sq 300 --skv 4096 --cluster 2", "makes 3 tiles of 128 rows, an odd number"},
        {"--backend sm90 --cluster 3", "1 or 2 CTAs a cluster"},
    };
    for (size_t k = 0; k < sizeof cluster_refusals / sizeof cluster_refusals[0]; k++) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "%s > build/cluster_refusal_%zu.txt 2>&1; test $? -eq 2 && tail -n 1 "
                                  "build/cluster_refusal_%zu.txt | grep -qF -- '%s'",
                 cluster_refusals[k][0], k, k, cluster_refusals[k][1]);
        cr_expect_eq(program_exit_code("stage_F", cmd), 0, "stage_F %s: exit 2 naming '%s'", cluster_refusals[k][0],
                     cluster_refusals[k][1]);
    }
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -c -- '--d 128 .*--kv-tile 176' | grep -qx 2"), 0);
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -- '--causal' | grep -c -- '--lpt-heads 1' | grep -qx 2"),
                 0, "the causal order head by head: at the reference shape and at D = 256");
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -c -- '--ring 2 --ws 1 --pingpong 1 --overlap 1' | "
                                              "grep -qx 2"),
                 0);
    /* then the short causal rows: three groups and two on the one-tile kernel, two on the persistent one */
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -- '--sq 2048 --skv 2048 --d 64 --causal' | "
                                              "grep -c -- '--persistent' | grep -qx 3"),
                 0);
    cr_expect_eq(program_exit_code("stage_F", "--shapes ablation | grep -c -- '--consumers 2 --persistent 1' | grep -qx 1"),
                 0);
    cr_expect_eq(program_exit_code("stage_E", "--shapes ablation | wc -l | grep -qx 0"), 0, "stage E has no switches");
    /* --lpt-heads: auto, or N >= 1; the run's detail names the heads of a section */
    cr_expect_eq(program_exit_code("stage_F", "--lpt-heads 0 2>&1 | tail -n 1 | grep -q 'must be >= 1'"), 0);
    cr_expect_eq(program_exit_code("stage_F", "--backend emu --causal --hq 3 --hkv 1 --b 2 --lpt-heads 4 2>&1 | "
                                              "grep -q 'longest first across 4 heads'"),
                 0);
}
