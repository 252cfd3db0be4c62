/* Stage A on the host model (runs everywhere, CI included): exact and random inputs, every head
 * dimension, tails, batch > 1; and the program contract of build/bin/stage_A. */
#include <criterion/criterion.h>

#include "stage_run.h"

extern const stage_def stage_A;

Test(stage_a_emu, exact_integer_inputs_every_head_dim)
{
    const char *args[] = {"--backend emu --init int --d 64 --sq 128 --skv 128",
                          "--backend emu --init int --d 128 --sq 256 --skv 128 --b 2",
                          "--backend emu --init int --d 256 --sq 128 --skv 256",
                          "--backend emu --init int --d 16 --sq 128 --skv 128"};
    for (int i = 0; i < 4; i++) cr_expect_eq(stage_run(&stage_A, args[i]), 0, "%s", args[i]);
}

Test(stage_a_emu, random_inputs_and_tails)
{
    const char *args[] = {"--backend emu --d 128 --sq 200 --skv 77 --seed 3",
                          "--backend emu --d 64 --sq 1 --skv 1 --seed 4",
                          "--backend emu --d 64 --sq 129 --skv 257 --hq 3 --seed 5",
                          "--backend emu --init int --d 128 --sq 113 --skv 1023 --seed 6"};
    for (int i = 0; i < 4; i++) cr_expect_eq(stage_run(&stage_A, args[i]), 0, "%s", args[i]);
}

Test(stage_a_emu, program_contract)
{
    cr_expect_eq(program_exit_code("stage_A", "--backend emu --sq 64 --skv 64 --d 64 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_A", "--d 24 > /dev/null 2>&1"), 2, "D not a multiple of 16");
    cr_expect_eq(program_exit_code("stage_A", "--causal > /dev/null 2>&1"), 2, "stage A takes no --causal");
    cr_expect_eq(program_exit_code("stage_A", "--backend emu --sq 8192 --skv 8192 > /dev/null 2>&1"), 2,
                 "too large for the host model");
}
