/* FG23 — a ring slot released before the MMA that reads it has completed (and FG16 at ring
 * wrap-around).
 *
 * Symptom: the producer overwrites K/V while an MMA still reads them: the tile's result mixes two
 *   tiles' data (wrong, timing-dependent). Releasing at the MMA's issue (before wgmma.wait_group /
 *   instead of through the tcgen05 commit) is the mistake.
 * Cause: an issued MMA reads its SMEM operands asynchronously until it completes.
 * Fix: arrive on empty[slot] only after the MMA completed (sm90: after wgmma.wait_group; sm100:
 *   tcgen05.commit onto empty[slot]).
 * And FG16 at pipeline level: a consumer that waits full[slot] with parity (tile & 1) instead of
 *   the ring's phase is right for a ring of depth 1 only; with depth 2 or 3 its waits pass on
 *   stale phases or never.
 * Stage: F (and D's ring). Level: host model: the role scheduler of the pipelined stage's emu flow
 *   (common/model/role_sim.h) running one producer and one consumer over the ring helper of
 *   common/attn/ring.h (tests/support/ring_sim.c: MMAs that read their slot for several steps), over
 *   many interleavings; at stage level, stage F's `--fault early-release` and stage D's
 *   `--fault ring-early-release` (--ring), each on emu and on the H200.
 * Notes: notes/footguns.md#fg23 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ring_sim.h"
#include "stage_run.h"
#include "test_util.h"

enum { SEEDS = 40 };

/* Interleavings (seeds 1..SEEDS) of one configuration: how many passed, tore a slot under its
 * read, read a slot holding another tile, or deadlocked; the last report in `last`. */
typedef struct {
    int ok, torn, stale, deadlock;
    char last[400];
} tally;

static tally run_all(const ring_sim_cfg *cfg)
{
    tally t;
    memset(&t, 0, sizeof t);
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        char report[400];
        if (!ring_sim_run(cfg, seed, report, sizeof report, NULL)) { t.ok++; continue; }
        if (strstr(report, "overwritten")) t.torn++;
        else if (strstr(report, "holds tile")) t.stale++;
        else if (strstr(report, "deadlock")) t.deadlock++;
        snprintf(t.last, sizeof t.last, "%s", report);
    }
    return t;
}

Test(footgun, fg23_early_release_and_fg16_tile_parity_then_right)
{
    for (int depth = 1; depth <= RING_SIM_MAX_DEPTH; depth++) {
        const ring_sim_cfg right = {.depth = depth}, early = {.depth = depth, .release_early = 1},
                           par = {.depth = depth, .tile_parity = 1};
        const tally r = run_all(&right), e = run_all(&early), p = run_all(&par);
        fprintf(stderr, "FG23 fixed (depth %d, release after the MMA completed, model): %d of %d interleavings intact\n",
                depth, r.ok, SEEDS);
        fprintf(stderr, "FG23 broken (depth %d, release at the MMA's issue, model): %d of %d tore a slot under its read (%s)\n",
                depth, e.torn, SEEDS, e.last);
        fprintf(stderr, "FG16 %s (depth %d, full waits with parity tile & 1, model): %d intact, %d stale reads, %d deadlocks\n",
                depth == 1 ? "fixed" : "broken", depth, p.ok, p.stale, p.deadlock);
        cr_expect_eq(r.ok, SEEDS, "depth %d: the ring protocol (%s)", depth, r.last);
        cr_expect_gt(e.torn, 0, "depth %d: the producer overwrote a slot under its MMA", depth);
        if (depth == 1) cr_expect_eq(p.ok, SEEDS, "tile & 1 is the phase when depth is 1");
        else cr_expect_gt(p.stale + p.deadlock, 0, "depth %d: tile & 1 is not the phase", depth);
    }
}

/* Stage level: the same mistake in stage F's pipelines, through `stage_F --fault early-release`
 * (broken, then the same shape fixed). On the host model the tensor core reads a slot when its
 * MMA executes, and the load refilling it is caught; on the H200 the torn tiles show in O. */
Test(footgun, fg23_stage_f_emu)
{
    cr_expect_eq(fault_demo_pair("stage_F", "emu", "early-release", "--d 128 --sq 256 --skv 512 --hq 2 --hkv 1 --ring 1",
                                 "released before the MMA that reads it completed"),
                 0);
}

/* The same bug in stage D's ring (--ring): the slot released with S's MMA, before the softmax
 * reads the tile's scales and P V its transposed V. The emu flow's load warp refills a slot as
 * soon as its empty barrier lets it, and names the tile still reading it. */
Test(footgun, fg23_stage_d_emu)
{
    cr_expect_eq(fault_demo_pair("stage_D", "emu", "ring-early-release",
                                 "--b 2 --hq 8 --hkv 1 --sq 2 --seqlens 700,130 --d 64 --page 16 --splits 1 --ring 2",
                                 "refills slot [0-9]+ with tile [0-9]+ while tile [0-9]+ still reads it"),
                 0);
}

Test(footgun, fg23_stage_f_h200, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    /* one slot and D = 256 with 128-key tiles: K_{j+1}'s 64 KB land while the S wgmmas of tile j
     * still read the slot */
    cr_expect_eq(fault_demo_pair("stage_F", "sm90", "early-release",
                                 "--d 256 --sq 512 --skv 4096 --hq 4 --hkv 1 --ring 1 --kv-tile 128",
                                 "symptom: cosine"),
                 0);
}

Test(footgun, fg23_stage_d_h200, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    /* stage D's own demo row: the load warpgroup refills the slot while the consumers' softmax reads
     * its scales and their P V its transposed V (on the H200: cosine 0.93 against the reference) */
    cr_expect_eq(fault_demo_pair("stage_D", "sm90", "ring-early-release",
                                 "--b 2 --hq 8 --hkv 1 --sq 2 --seqlens 700,130 --d 64 --page 16 --splits 1 --ring 2",
                                 "symptom: cosine"),
                 0);
}
