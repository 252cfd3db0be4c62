/* FG12 — a warp that is not part of a named barrier joins it.
 *
 * Symptom (seed 003: the TMA warp waiting on the TMEM-allocation barrier): a named barrier counts
 *   threads; a warp that should not be there adds 32 of them, so the barrier releases as soon as
 *   `count` threads arrived, possibly before the warp it exists to wait for (an early release: here
 *   the softmax warps would read the TMEM address before the MMA warp allocated it), and the last
 *   member's arrival starts a generation that nobody completes (a hang).
 * Cause: bar.sync's count is threads, not a list of members.
 * Fix: only the members execute the barrier (the load warp does not wait on the TMEM allocation;
 *   if it must, the count includes it).
 * Stage: F (and the 6-warp stage C layout). Level: host model (model/nbar_model.h) over every
 *   arrival order of the warps; the H200 analogue (bar.sync with a wrong count) comes with stage F.
 * Notes: notes/footguns.md#fg12 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "model/nbar_model.h"
#include "stage_run.h"

/* Warps 0-3 softmax, 4 the MMA warp (allocates TMEM, then arrives), 5 the load warp. The
 * "TMEM ready" barrier has count 160 (warps 0-4). For one arrival order (a permutation of the
 * warps that execute the barrier): did any warp pass before warp 4 arrived, and is any warp left
 * waiting forever? */
static void run(const int *order, int n, int *early, int *stuck)
{
    nbar_model b;
    nbar_init(&b, 160);
    int gen[6] = {0}, mma_arrived = 0;
    *early = 0;
    for (int i = 0; i < n; i++) {
        const int w = order[i];
        gen[w] = nbar_arrive_warp(&b);
        if (w == 4) mma_arrived = 1;
        if (!mma_arrived && nbar_released(&b, 0)) *early = 1; /* released before the allocation */
    }
    *stuck = 0;
    for (int i = 0; i < n; i++) *stuck += !nbar_released(&b, gen[order[i]]);
}

static int next_perm(int *a, int n) /* lexicographic */
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1]) i--;
    if (i < 0) return 0;
    int j = n - 1;
    while (a[j] <= a[i]) j--;
    int t = a[i]; a[i] = a[j]; a[j] = t;
    for (int l = i + 1, r = n - 1; l < r; l++, r--) { t = a[l]; a[l] = a[r]; a[r] = t; }
    return 1;
}

/* Every arrival order of the n warps in order[]: how many there are, how many release early,
 * how many leave a warp waiting forever. */
static void tally(int *order, int n, int *orders, int *early_orders, int *hang_orders)
{
    *orders = *early_orders = *hang_orders = 0;
    do {
        int early, stuck;
        run(order, n, &early, &stuck);
        (*orders)++;
        *early_orders += early;
        *hang_orders += stuck > 0;
    } while (next_perm(order, n));
}

Test(footgun, fg12_outsider_warp_joins_then_members_only)
{
    /* broken: the load warp (5) joins the 160-thread barrier */
    int ord[6] = {0, 1, 2, 3, 4, 5}, orders, early_orders, hang_orders;
    tally(ord, 6, &orders, &early_orders, &hang_orders);
    fprintf(stderr, "FG12 broken (the load warp joins the 160-thread TMEM barrier, model): of %d arrival orders, %d release "
            "before the MMA warp allocated, %d leave a warp waiting forever\n", orders, early_orders, hang_orders);
    cr_expect_eq(orders, 720);
    cr_expect_gt(early_orders, 0, "some orders release before the allocation");
    cr_expect_eq(hang_orders, orders, "every order leaves the sixth warp's arrival in a generation nobody completes");
    /* fixed: members only */
    int mem[5] = {0, 1, 2, 3, 4};
    tally(mem, 5, &orders, &early_orders, &hang_orders);
    fprintf(stderr, "FG12 fixed (members only, model): of %d arrival orders, %d early, %d hang\n", orders, early_orders,
            hang_orders);
    cr_expect_eq(early_orders, 0);
    cr_expect_eq(hang_orders, 0);
}

/* Stage level: stage F's sm100 flow (on the host model) hands the TMEM address to warps 0-4 at
 * named barrier 1 (160 threads); `stage_F --fault named-bar-join` has the load warp join it too,
 * the seed's bug. Six warps at a barrier counted for five: in round-robin order (seed 0) the
 * barrier releases before the MMA warp wrote the address, and a softmax warp reads it early; in
 * other orders the sixth warp waits for a generation nobody completes and the pipeline deadlocks
 * behind it. Both are named; without the fault every order passes. */
Test(footgun, fg12_stage_f_emu)
{
    cr_expect_eq(fault_demo_pair("stage_F", "emu", "named-bar-join", "--d 64 --sq 128 --skv 256 --hq 1 --hkv 1 --seed 0",
                                 "read the TMEM address before the MMA warp had written it"),
                 0, "early release (seed 0)");
    cr_expect_eq(fault_demo_pair("stage_F", "emu", "named-bar-join", "--d 64 --sq 128 --skv 256 --hq 1 --hkv 1 --seed 2",
                                 "waits on the TMEM address barrier \\(bar.sync 1, 160 threads\\), parity 1"),
                 0, "the leftover arrival hangs (seed 2)");
}
