/* Stage B on the H200 (sm90 backend) over stage B's shape table (stages/B_pv/stage_b.c): D in
 * {64, 128}, Skv in {128, 256, 4096} and tails, exact (integer) and random inputs, each run the full stage program (poisoned output, fp64 references,
 * exit code 0 only when verified). sm100 runs the same table on a B200 and skips elsewhere. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage_run.h"
#include "test_util.h"

extern const stage_def stage_B;

static void table(const char *backend, int d)
{
    const shape_suite suite = getenv("FMHA_TEST_QUICK") ? SUITE_GPU_QUICK : SUITE_GPU;
    char filter[32];
    snprintf(filter, sizeof filter, "--d %d ", d);
    int runs;
    const int failed = stage_table_run(&stage_B, suite, backend, filter, "--iters 0", &runs);
    cr_expect_gt(runs, 0, "the shape table has rows for D=%d", d);
    cr_expect_eq(failed, 0, "%d of %d stage B runs failed on %s, D=%d", failed, runs, backend, d);
}

Test(stage_b_gpu, sm90_d64_non_square_pv, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 64); }
Test(stage_b_gpu, sm90_d128, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 128); }
Test(stage_b_gpu, sm100_d64, .timeout = 300) { SKIP_WITHOUT_GPU(10); table("sm100", 64); }
