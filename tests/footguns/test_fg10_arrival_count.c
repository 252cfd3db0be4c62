/* FG10 — mbarrier arrival count: warps vs threads.
 *
 * Symptom (seed 003 footgun 4: "consumer_group = Thread count, NOT warp count"): the barrier's
 *   count and the number of arrive operations disagree.
 *   - Count = warps (4) while all 128 threads arrive. What happens depends on how the arrivals come:
 *     one at a time, the phase completes after the 4th and the waiter runs before the other
 *     producers wrote (an early release), the rest roll into later phases; a warp's 32 arrivals in
 *     one instruction exceed the pending count of 4. The model answers the first with an early
 *     release plus MBAR_ERR_OVER_ARRIVAL and the second with MBAR_ERR_PENDING_UNDERFLOW. The H200
 *     (2026-11-29) does the second: the kernel's warp-wide `mbarrier.arrive` makes the launch fail
 *     (cudaErrorLaunchFailure), so the early release is never seen there. The PTX ISA leaves an
 *     arrive that takes the pending count below zero undefined; one hardware answer is a fault.
 *   - Count = threads (128) with one elected arrival per warp: the phase never completes, a hang
 *     (the model: a deadlock with "124 of 128 arrivals outstanding"; the H200: a watchdog report).
 * Cause: mbarrier.init's count is the number of arrive operations that complete a phase.
 * Fix: count = the number of arriving threads (stage C: p_full counts the 128 softmax threads, each
 *   arriving after its own tcgen05.st / wait::st / fence: stages/C_online_softmax/fmha_sm100.cu
 *   steps 1 and 2d), or count = warps with exactly one elected arrival per warp after __syncwarp.
 * Stage: C (and F).  Levels: emu (the mbarrier model); sm90 on the H200 (a real barrier: the
 *   launch failure, the watchdog report, the right sum); sm100 uses the same mbarrier PTX, compiled
 *   only. Every variant prints what it saw.
 * Notes: notes/footguns.md#fg10 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gpu/kernels/fg10_arrive.h"
#include "model/mbar_model.h"
#include "test_util.h"

Test(footgun, fg10_wrong_counts_then_fixed_emu)
{
    mbar_model m;
    char diag[256];
    /* broken: count = 4 warps, the 128 threads arrive one at a time: the wait passes after 4 */
    mbar_model_reset(&m);
    mbar_model_init(&m, 4);
    for (int t = 0; t < 4; t++) mbar_model_arrive(&m);
    const int released = mbar_model_try_wait_parity(&m, 0);
    for (int t = 4; t < 128; t++) mbar_model_arrive(&m);
    fprintf(stderr, "FG10 broken (count 4, 128 single arrivals): released after 4 arrivals: %s; %d arrivals "
            "rolled into later phases (%s)\n", released ? "yes" : "no", m.over_arrivals, mbar_status_name(m.first_error));
    cr_expect_eq(released, 1, "released after 4 of 128 producer threads: early release");
    cr_expect_gt(m.over_arrivals, 0, "the model reports the arrivals that landed in later phases");
    /* broken: count = 4 warps, each warp's 32 threads arrive in one instruction (what the kernel
     * issues): the first warp's 32 arrivals exceed the 4 pending, the model refuses as the H200 does */
    mbar_model_reset(&m);
    mbar_model_init(&m, 4);
    const mbar_status warp_arrive = mbar_model_arrive_n(&m, 32);
    fprintf(stderr, "FG10 broken (count 4, a warp's 32 arrivals at once): %s (the H200: the launch fails)\n",
            mbar_status_name(warp_arrive));
    cr_expect_eq(warp_arrive, MBAR_ERR_PENDING_UNDERFLOW, "32 arrivals against 4 pending are refused");
    /* broken: count = 128 threads, one elected lane per warp arrives: never completes */
    mbar_model_reset(&m);
    mbar_model_init(&m, 128);
    for (int w = 0; w < 4; w++) mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_wait(&m, 0), MBAR_DEADLOCK);
    mbar_model_diagnose(&m, diag, sizeof diag);
    fprintf(stderr, "FG10 broken (count 128, 4 elected arrivals): %s\n", diag);
    cr_expect(strstr(diag, "124 of 128 arrivals") != NULL, "%s", diag);
    /* fixed: count = 128, every thread arrives: completes exactly at the last arrival */
    mbar_model_reset(&m);
    mbar_model_init(&m, 128);
    for (int t = 0; t < 127; t++) mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0, "not before the last thread");
    mbar_model_arrive(&m);
    const int done = mbar_model_try_wait_parity(&m, 0);
    fprintf(stderr, "FG10 fixed (count 128, 128 arrivals): phase complete at the last arrival: %s, over-arrivals %d\n",
            done ? "yes" : "no", m.over_arrivals);
    cr_expect_eq(done, 1);
    cr_expect_eq(m.over_arrivals, 0);
}

/* On hardware each variant runs in its own test process: a failed launch or a watchdog trap ends
 * the process's CUDA context. */
#define EXPECT_SUM (127 * 128 / 2)

Test(footgun, fg10_fixed_count_threads_sm90, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    int sum = 0;
    cr_assert_eq(fg10_arrive_launch(128, 0, 1u << 26, &sum, NULL, NULL), 0);
    fprintf(stderr, "FG10 fixed (count 128, every thread arrives): sum %d (right: %d)\n", sum, EXPECT_SUM);
    cr_expect_eq(sum, EXPECT_SUM, "count 128, every thread arrives: sum %d", sum);
}

Test(footgun, fg10_wrong_count_warps_sm90, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    /* count 4 ("one per warp") while all 128 threads arrive. Either symptom is the broken protocol:
     * the consumer is released before warps 1-3 wrote (a wrong sum), or the hardware refuses a
     * warp's 32 simultaneous arrivals against a pending count of 4 (a failed launch). */
    int sum = 0;
    int rc = fg10_arrive_launch(4, 0, 1u << 26, &sum, NULL, NULL);
    fprintf(stderr, "FG10 broken (count 4, 128 arrivals): launch %s, sum %d (right: %d)\n",
            rc ? cudaGetErrorName((cudaError_t)rc) : "ok", sum, EXPECT_SUM);
    cr_expect(rc != 0 || sum != EXPECT_SUM, "the broken count went unnoticed: launch ok and sum right");
}

Test(footgun, fg10_wrong_count_threads_sm90, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    /* count 128 (threads) with one elected arrival per warp: the watchdog reports the hang */
    fmha_watchdog *wh, *wd;
    int sum = 0;
    cr_assert_eq(watchdog_alloc(&wh, &wd), 0);
    int rc = fg10_arrive_launch(128, 1, 1u << 16, &sum, wh, wd);
    cr_expect_neq(rc, 0, "the launch must fail, not hang");
    cr_expect(watchdog_fired(wh), "the watchdog fired");
    char why[256];
    watchdog_describe(wh, why, sizeof why);
    fprintf(stderr, "FG10 broken (count 128, 4 elected arrivals): %s\n", why);
    cr_expect(strstr(why, "site 10") != NULL, "%s", why);
}
