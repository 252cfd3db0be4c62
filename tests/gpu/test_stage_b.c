/* Stage B on the H200 (sm90 backend): D in {64, 128}, Skv in {128, 256, 4096} and tails, exact
 * (integer) and random inputs, each run the full stage program (poisoned output, fp64 references,
 * exit code 0 only when verified). sm100 runs the same table on a B200 and skips elsewhere. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage_run.h"
#include "test_util.h"

extern const stage_def stage_B;

static const char *const shapes[] = {
    "--sq 128 --skv 128", "--sq 128 --skv 256", "--sq 512 --skv 4096", "--sq 200 --skv 333",
    "--sq 1 --skv 1", "--sq 300 --skv 4097 --b 2 --hq 3",
};

static void table(const char *backend, int d)
{
    int n = (int)(sizeof shapes / sizeof shapes[0]), failed = 0;
    const int quick = getenv("FMHA_TEST_QUICK") != NULL; /* under the sanitizers: small shapes only */
    for (int i = 0; i < n; i++)
        for (int exact = 0; exact < 2; exact++) {
            if (quick && strstr(shapes[i], "409")) continue;
            char args[256];
            snprintf(args, sizeof args, "--backend %s --d %d %s --init %s --iters 0 --seed %d", backend, d, shapes[i],
                     exact ? "int" : "rand", 20 + i);
            failed += stage_run_counted(&stage_B, args);
        }
    cr_expect_eq(failed, 0, "%d of %d stage B runs failed on %s, D=%d", failed, 2 * n, backend, d);
}

Test(stage_b_gpu, sm90_d64_non_square_pv, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 64); }
Test(stage_b_gpu, sm90_d128, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 128); }
Test(stage_b_gpu, sm100_d64, .timeout = 300) { SKIP_WITHOUT_GPU(10); table("sm100", 64); }
