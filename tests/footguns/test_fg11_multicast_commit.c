/* FG11 — an MMA-completion commit with a cluster multicast mask in a launch without cluster peers.
 *
 * Symptom (seed 003's `cta_layout_vmnk` on the S pipeline): tcgen05.commit.multicast::cluster
 *   arrives on the mbarrier at the same SMEM offset in every CTA of the mask. With a mask that
 *   names a peer (a 2-CTA layout) in a launch of single-CTA clusters, the arrive goes to a CTA that
 *   does not exist, and, unless the mask also names the issuing CTA, its own barrier never
 *   completes: the consumer waits forever.
 * Cause: the mask is cluster ranks; a launch without clusters has one rank, 0.
 * Fix: the plain commit (its own CTA's barrier), or a mask built from the launch's real cluster
 *   shape (1 << rank for each peer that exists).
 * Stage: F. Level: host model (one mbarrier model per CTA of the cluster, the commit delivering an
 *   arrive to each rank of the mask); the sm100 kernel variant is compiled-only (no B200 here), and
 *   Hopper has no tcgen05 commit: there is no sm90 analogue.
 * Notes: notes/footguns.md#fg11 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "model/mbar_model.h"
#include "stage_run.h"
#include "test_util.h"

enum { MAX_RANKS = 16 };

/* A commit from `rank` with `mask` in a cluster of `size` CTAs: an arrive on each existing rank
 * in the mask; returns how many arrives went to ranks that do not exist. */
static int commit_multicast(mbar_model *bars, int size, unsigned mask)
{
    int lost = 0;
    for (int r = 0; r < MAX_RANKS; r++)
        if (mask & (1u << r)) {
            if (r < size) mbar_model_arrive(&bars[r]);
            else lost++;
        }
    return lost;
}

static void one(int size, unsigned mask, int *lost, mbar_status *own, char *diag, size_t len)
{
    mbar_model bars[MAX_RANKS];
    for (int r = 0; r < size; r++) {
        mbar_model_reset(&bars[r]);
        mbar_model_init(&bars[r], 1); /* s_full: one commit */
    }
    *lost = commit_multicast(bars, size, mask);
    *own = mbar_model_wait(&bars[0], 0); /* rank 0's consumer */
    diag[0] = '\0';
    if (*own != MBAR_OK) mbar_model_diagnose(&bars[0], diag, len);
}

Test(footgun, fg11_multicast_mask_without_peers_then_plain_commit)
{
    int lost;
    mbar_status own;
    char diag[256];
    one(1, 0x2u, &lost, &own, diag, sizeof diag);
    fprintf(stderr, "FG11 broken (mask 0b10 in a 1-CTA cluster, model): %d arrive(s) to a CTA that does not exist; rank 0's "
            "wait: %s (%s)\n", lost, mbar_status_name(own), diag);
    cr_expect_eq(lost, 1);
    cr_expect_eq(own, MBAR_DEADLOCK, "the issuing CTA's barrier never completes");
    one(1, 0x3u, &lost, &own, diag, sizeof diag);
    fprintf(stderr, "FG11 broken (mask 0b11 in a 1-CTA cluster, model): %d arrive(s) lost; rank 0's wait: %s\n", lost,
            mbar_status_name(own));
    cr_expect_eq(lost, 1, "the peer's arrive still goes nowhere (undefined on hardware)");
    one(1, 0x1u, &lost, &own, diag, sizeof diag);
    fprintf(stderr, "FG11 fixed (the CTA's own barrier: mask 1 << rank, model): %d lost; rank 0's wait: %s\n", lost,
            mbar_status_name(own));
    cr_expect_eq(lost, 0);
    cr_expect_eq(own, MBAR_OK);
    one(2, 0x3u, &lost, &own, diag, sizeof diag);
    fprintf(stderr, "FG11 fixed (mask 0b11 in a real 2-CTA cluster, model): %d lost; rank 0's wait: %s\n", lost,
            mbar_status_name(own));
    cr_expect_eq(lost, 0);
    cr_expect_eq(own, MBAR_OK);
}

/* Stage level: stage F's MMA warp sends s_full's commit with ctaMask 0x2 in a launch without
 * cluster peers (`stage_F --fault commit-multicast`, the sm100 flow on the host model). */
Test(footgun, fg11_stage_f_emu)
{
    cr_expect_eq(fault_demo_pair("stage_F", "emu", "commit-multicast", "--d 64 --sq 128 --skv 256 --hq 1 --hkv 1",
                                 "to CTA rank 1, absent without clusters; deadlock"),
                 0);
}
