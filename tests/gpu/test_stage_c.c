/* Stage C on the H200 (sm90): every row of stage C's shape table (stages/C_online_softmax/
 * stage_c.c: D {64, 128, 256} x T {1, 17, 32, 33, 64, 128} x Skv {1, 3, 113, 128, 1023, 1025, 4096}
 * x causal, MHA/MQA/GQA and both layouts rotating, plus long sequences), one test per head dim.
 * Every run is the stage program: FlashAttention-3 error rule against fp64, LSE, NaN positions,
 * poison. Under the sanitizers (FMHA_TEST_QUICK) the table's gpu-quick suite. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "stage_run.h"
#include "test_util.h"

extern const stage_def stage_C;

static void table(const char *backend, int d)
{
    const shape_suite suite = getenv("FMHA_TEST_QUICK") ? SUITE_GPU_QUICK : SUITE_GPU;
    char filter[32];
    snprintf(filter, sizeof filter, "--d %d ", d);
    int runs;
    const int failed = stage_table_run(&stage_C, suite, backend, filter, "--iters 0", &runs);
    cr_expect_gt(runs, 0, "the shape table has rows for D=%d", d);
    cr_expect_eq(failed, 0, "%d of %d stage C runs failed (%s, D=%d)", failed, runs, backend, d);
}

Test(stage_c_gpu, sm90_d64, .timeout = 600) { SKIP_WITHOUT_GPU(9); table("sm90", 64); }
Test(stage_c_gpu, sm90_d128, .timeout = 600) { SKIP_WITHOUT_GPU(9); table("sm90", 128); }
Test(stage_c_gpu, sm90_d256, .timeout = 600) { SKIP_WITHOUT_GPU(9); table("sm90", 256); }
Test(stage_c_gpu, sm100_d128, .timeout = 600) { SKIP_WITHOUT_GPU(10); table("sm100", 128); }
