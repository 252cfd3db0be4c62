/* Stage A on the H200 (sm90 backend) over the shape table: D in {64, 128, 256}, Sq/Skv in
 * {128, 256, 1024, 4096} and tails, exact (integer) and random inputs. Each run is the full stage
 * program (stage_main): poisoned output, fp64 reference, exit code 0 only when verified.
 * The sm100 backend is checked the same way on a B200 and skips elsewhere. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage_run.h"
#include "test_util.h"

extern const stage_def stage_A;

static const char *const shapes[] = {
    "--sq 128 --skv 128", "--sq 256 --skv 1024", "--sq 1024 --skv 256", "--sq 4096 --skv 4096 --hq 1",
    "--sq 200 --skv 333", /* tails in both directions */
    "--sq 1 --skv 4097 --b 2",
};

static void table(const char *backend, int d)
{
    int n = (int)(sizeof shapes / sizeof shapes[0]), failed = 0;
    const int quick = getenv("FMHA_TEST_QUICK") != NULL; /* under the sanitizers: small shapes only */
    for (int i = 0; i < n; i++)
        for (int exact = 0; exact < 2; exact++) {
            if (quick && (strstr(shapes[i], "4096") || strstr(shapes[i], "1024"))) continue;
            char args[256];
            snprintf(args, sizeof args, "--backend %s --d %d %s --init %s --iters 0 --seed %d", backend, d, shapes[i],
                     exact ? "int" : "rand", 10 + i);
            failed += stage_run_counted(&stage_A, args);
        }
    cr_expect_eq(failed, 0, "%d of %d stage A runs failed on %s, D=%d", failed, 2 * n, backend, d);
}

Test(stage_a_gpu, sm90_d64, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 64); }
Test(stage_a_gpu, sm90_d128, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 128); }
Test(stage_a_gpu, sm90_d256, .timeout = 300) { SKIP_WITHOUT_GPU(9); table("sm90", 256); }
Test(stage_a_gpu, sm100_d128, .timeout = 300) { SKIP_WITHOUT_GPU(10); table("sm100", 128); }
