/* scripts/bench.sh with BENCH_DRY_RUN=1 (no GPU needed, nothing written): the baselines are asked
 * for as the README says, SDPA's cuDNN and flash backends in one process over every attention and
 * decode shape, FlashAttention-4 in another over the attention shapes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count_lines_with(const char *cmd, const char *needle)
{
    FILE *f = popen(cmd, "r");
    cr_assert(f != NULL, "could not run: %s", cmd);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) n++;
    pclose(f);
    return n;
}

Test(bench, dry_run_asks_for_every_baseline, .timeout = 120)
{
    if (access("scripts/bench.sh", R_OK) != 0) cr_skip_test("scripts/bench.sh not found: run from the repository root");
    const char *cmd = "BENCH_DRY_RUN=1 bash scripts/bench.sh 2>&1";
    cr_expect_eq(count_lines_with(cmd, "sdpa_baseline.py --shapes"), 2, "two baseline processes: SDPA and FA4");
    cr_expect_eq(count_lines_with(cmd, "--backends cudnn,flash"), 1);
    cr_expect_eq(count_lines_with(cmd, "--backends fa4"), 1);
}
