/* Stage C on the H200 (sm90): the shape table of the stage C issue: D in {64, 128, 256} x T (query
 * rows) in {1, 17, 32, 33, 64, 128} x Skv in {1, 3, 113, 128, 1023, 1025, 4096} x causal on/off,
 * with the head configuration and layout rotating over MHA (B = 2), MQA (Hkv = 1, BSHD), GQA
 * (Hq/Hkv = 8) and BSHD MHA so every combination appears; plus long sequences. Every run is the
 * stage program: FlashAttention-3 error rule against fp64, LSE, NaN positions, poison. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "stage_run.h"
#include "test_util.h"

extern const stage_def stage_C;

static const char *const heads[4] = {"--b 2 --hq 4 --hkv 4", "--b 1 --hq 4 --hkv 1 --layout bshd",
                                     "--b 1 --hq 16 --hkv 2", "--b 2 --hq 2 --hkv 2 --layout bshd"};

static int quick(void) { return getenv("FMHA_TEST_QUICK") != NULL; }

static void table(const char *backend, int d)
{
    const int ts[6] = {1, 17, 32, 33, 64, 128};
    const int skvs[7] = {1, 3, 113, 128, 1023, 1025, 4096};
    int runs = 0, failed = 0, idx = 0;
    for (int ti = 0; ti < 6; ti++)
        for (int si = 0; si < 7; si++)
            for (int causal = 0; causal < 2; causal++, idx++) {
                /* under the sanitizers: T in {1, 33, 128}, Skv in {3, 128, 1025} */
                if (quick() && !((ti == 0 || ti == 3 || ti == 5) && (si == 1 || si == 3 || si == 5))) continue;
                char args[256];
                snprintf(args, sizeof args, "--backend %s --d %d --sq %d --skv %d %s %s --iters 0 --seed %d", backend, d,
                         ts[ti], skvs[si], causal ? "--causal" : "", heads[idx % 4], idx);
                runs++;
                failed += stage_run_counted(&stage_C, args);
            }
    cr_expect_eq(failed, 0, "%d of %d stage C runs failed (%s, D=%d)", failed, runs, backend, d);
}

Test(stage_c_gpu, sm90_d64, .timeout = 600) { SKIP_WITHOUT_GPU(9); table("sm90", 64); }
Test(stage_c_gpu, sm90_d128, .timeout = 600) { SKIP_WITHOUT_GPU(9); table("sm90", 128); }
Test(stage_c_gpu, sm90_d256, .timeout = 600) { SKIP_WITHOUT_GPU(9); table("sm90", 256); }

Test(stage_c_gpu, sm90_long_sequences, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    if (quick()) cr_skip_test("FMHA_TEST_QUICK: long sequences skipped");
    const char *args[] = {"--backend sm90 --d 128 --sq 4096 --skv 4096 --b 1 --hq 4 --hkv 4 --iters 0",
                          "--backend sm90 --d 128 --sq 4096 --skv 4096 --b 1 --hq 4 --hkv 1 --causal --iters 0",
                          "--backend sm90 --d 64 --sq 2000 --skv 3000 --b 2 --hq 8 --hkv 2 --causal --layout bshd --iters 0",
                          "--backend sm90 --d 256 --sq 1000 --skv 700 --b 1 --hq 2 --hkv 1 --causal --iters 0"};
    for (int i = 0; i < 4; i++) cr_expect_eq(stage_run(&stage_C, args[i]), 0, "%s", args[i]);
}

Test(stage_c_gpu, sm100_d128, .timeout = 600) { SKIP_WITHOUT_GPU(10); table("sm100", 128); }
