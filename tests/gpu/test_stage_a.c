/* Stage A on the H200 (sm90 backend) over stage A's shape table (stages/A_qk/stage_a.c): D in
 * {64, 128, 256}, Sq/Skv in {128, 256, 1024, 4096} and tails, exact (integer) and random inputs. Each run is the full stage
 * program (stage_main): poisoned output, fp64 reference, exit code 0 only when verified.
 * The sm100 backend is checked the same way on a B200 and skips elsewhere. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage_run.h"
#include "test_util.h"

extern const stage_def stage_A;

static void table(const char *backend, int d)
{
    const shape_suite suite = getenv("FMHA_TEST_QUICK") ? SUITE_GPU_QUICK : SUITE_GPU;
    char filter[32];
    snprintf(filter, sizeof filter, "--d %d ", d);
    int runs;
    const int failed = stage_table_run(&stage_A, suite, backend, filter, "--iters 0", &runs);
    cr_expect_gt(runs, 0, "the shape table has rows for D=%d", d);
    cr_expect_eq(failed, 0, "%d of %d stage A runs failed on %s, D=%d", failed, runs, backend, d);
}

Test(stage_a_gpu, sm90_d64, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 64); }
Test(stage_a_gpu, sm90_d128, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 128); }
Test(stage_a_gpu, sm90_d256, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 256); }
Test(stage_a_gpu, sm100_d128, .timeout = 300) { SKIP_WITHOUT_GPU(10); table("sm100", 128); }
