/* Stage B on the host model (runs everywhere, CI included): exact and random inputs, D = 64 (the
 * seed's failing 128 x 64 P V) and 128, several KV tiles, tails, batch > 1; the program contract. */
#include <criterion/criterion.h>

#include "stage_run.h"

extern const stage_def stage_B;

Test(stage_b_emu, exact_integer_inputs)
{
    const char *args[] = {"--backend emu --init int --d 64 --sq 128 --skv 128",
                          "--backend emu --init int --d 64 --sq 128 --skv 512 --b 2",
                          "--backend emu --init int --d 128 --sq 256 --skv 256",
                          "--backend emu --init int --d 128 --sq 113 --skv 1023"};
    for (int i = 0; i < 4; i++) cr_expect_eq(stage_run(&stage_B, args[i]), 0, "%s", args[i]);
}

Test(stage_b_emu, random_inputs_fa3_rule)
{
    const char *args[] = {"--backend emu --d 64 --sq 128 --skv 384 --seed 7",
                          "--backend emu --d 128 --sq 200 --skv 129 --hq 3 --seed 8",
                          "--backend emu --d 64 --sq 1 --skv 3 --seed 9"};
    for (int i = 0; i < 3; i++) cr_expect_eq(stage_run(&stage_B, args[i]), 0, "%s", args[i]);
}

Test(stage_b_emu, program_contract)
{
    cr_expect_eq(program_exit_code("stage_B", "--backend emu --sq 64 --skv 64 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_B", "--d 256 > /dev/null 2>&1"), 2, "stage B takes D = 64 or 128");
    cr_expect_eq(program_exit_code("stage_B", "--hkv 1 > /dev/null 2>&1"), 2, "no GQA in stage B");
}
