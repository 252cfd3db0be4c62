/* Stage B on the host model (runs everywhere, CI included): the emu suite of stage B's shape table
 * (exact and random inputs, D = 64 (the seed's failing 128 x 64 P V) and 128, several KV tiles,
 * tails, batch > 1); the program contract, including the two rules found in review: an empty KV
 * sequence and a grid beyond CUDA's limits are refused before any launch. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "stage_run.h"

extern const stage_def stage_B;

Test(stage_b_emu, shape_table)
{
    cr_expect_eq(emu_table_failures(&stage_B, 7), 0, "stage B emu suite: see the FAILED lines");
}

Test(stage_b_emu, program_contract)
{
    cr_expect_eq(program_exit_code("stage_B", "--backend emu --sq 64 --skv 64 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_B", "--d 256 > /dev/null 2>&1"), 2, "stage B takes D = 64 or 128");
    cr_expect_eq(program_exit_code("stage_B", "--hkv 1 > /dev/null 2>&1"), 2, "no GQA in stage B");
}

Test(stage_b_emu, empty_kv_sequence_is_refused)
{
    /* every backend, sm90/sm100 included: the rule is checked before the backend could skip */
    const char *backends[] = {"emu", "sm90", "sm100", "auto"};
    for (int i = 0; i < 4; i++) {
        char args[160];
        snprintf(args, sizeof args, "--backend %s --skv 0 2>&1 | grep -q 'stage B needs at least one key'", backends[i]);
        cr_expect_eq(program_exit_code("stage_B", args), 0, "--skv 0 names the rule (%s)", backends[i]);
        snprintf(args, sizeof args, "--backend %s --skv 0 > /dev/null 2>&1", backends[i]);
        cr_expect_eq(program_exit_code("stage_B", args), 2, "--skv 0 is exit 2 (%s)", backends[i]);
    }
}

Test(stage_b_emu, grid_beyond_cuda_limits_is_refused)
{
    /* B x H = 70000 > 65535 blocks on the grid's y axis */
    cr_expect_eq(program_exit_code("stage_B", "--b 7000 --hq 10 --sq 1 --skv 1 2>&1 | grep -q \"grid's y dimension\""), 0,
                 "the message names the grid rule");
    cr_expect_eq(program_exit_code("stage_B", "--b 7000 --hq 10 --sq 1 --skv 1 > /dev/null 2>&1"), 2);
}
