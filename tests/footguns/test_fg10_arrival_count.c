/* FG10 — mbarrier arrival count: warps vs threads.
 *
 * Symptom: a barrier initialised with the number of warps while every thread arrives completes
 *   its phase after the first few arrivals: the consumer runs before the slow producers have
 *   written (a wrong, timing-dependent result). The reverse, a count of threads with one elected
 *   arrival per warp, never completes: a hang. (Seed 003 footgun 4: "consumer_group = Thread
 *   count, NOT warp count".)
 * Cause: mbarrier.init's count is the number of arrive operations that complete a phase; arrivals
 *   beyond it roll into the next phase.
 * Fix: count = the number of arriving threads (stage C: p_full counts the 128 softmax threads, each
 *   arriving after its own tcgen05.st / wait::st / fence: stages/C_online_softmax/fmha_sm100.cu
 *   steps 1 and 4), or count = warps with exactly one elected arrival per warp after __syncwarp.
 * Stage: C (and F).  Levels: emu (the mbarrier model reports the over-arrival and the phase that
 *   can never complete); sm90 on the H200 (a real barrier: the early release is observed as unwritten
 *   data, the hang as a watchdog report); sm100 uses the same mbarrier PTX, compiled only.
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
    /* wrong: count = 4 warps, 128 threads arrive; the consumer's wait passes after 4 arrivals */
    mbar_model_reset(&m);
    mbar_model_init(&m, 4);
    for (int t = 0; t < 4; t++) mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 1, "released after 4 of 128 producer threads: early release");
    for (int t = 4; t < 128; t++) mbar_model_arrive(&m);
    cr_expect_gt(m.over_arrivals, 0, "the model reports the arrivals that landed in later phases");
    /* wrong: count = 128 threads, one elected lane per warp arrives: never completes */
    mbar_model_reset(&m);
    mbar_model_init(&m, 128);
    for (int w = 0; w < 4; w++) mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_wait(&m, 0), MBAR_DEADLOCK);
    mbar_model_diagnose(&m, diag, sizeof diag);
    cr_expect(strstr(diag, "124 of 128 arrivals") != NULL, "%s", diag);
    /* fixed: count = 128, every thread arrives: completes exactly at the last arrival */
    mbar_model_reset(&m);
    mbar_model_init(&m, 128);
    for (int t = 0; t < 127; t++) mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0, "not before the last thread");
    mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 1);
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
    fprintf(stderr, "fg10 count=4 with 128 arrivals: launch %s, sum %d (right: %d)\n",
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
    fprintf(stderr, "fg10 count=128 with 4 arrivals: %s\n", why);
    cr_expect(strstr(why, "site 10") != NULL, "%s", why);
}
