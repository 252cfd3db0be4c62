/* Stage C on the host model (runs everywhere, CI included): small shapes over D, T (query rows per
 * CTA), KV tails, causal masks with Sq < Skv and Sq > Skv (fully masked rows), GQA, MQA, batch,
 * both layouts; the program contract. */
#include <criterion/criterion.h>

#include "stage_run.h"

extern const stage_def stage_C;

Test(stage_c_emu, head_dims_and_layouts)
{
    const char *args[] = {"--backend emu --d 64 --sq 128 --skv 256 --hq 2 --hkv 2",
                          "--backend emu --d 128 --sq 64 --skv 200 --hq 2 --hkv 1 --layout bshd",
                          "--backend emu --d 256 --sq 33 --skv 129 --hq 2 --hkv 2 --b 2"};
    for (int i = 0; i < 3; i++) cr_expect_eq(stage_run(&stage_C, args[i]), 0, "%s", args[i]);
}

Test(stage_c_emu, decode_and_small_t)
{
    const char *args[] = {"--backend emu --d 64 --sq 1 --skv 1023 --hq 8 --hkv 1",
                          "--backend emu --d 64 --sq 17 --skv 3 --hq 2 --hkv 2",
                          "--backend emu --d 64 --sq 32 --skv 1 --hq 2 --hkv 1 --causal"};
    for (int i = 0; i < 3; i++) cr_expect_eq(stage_run(&stage_C, args[i]), 0, "%s", args[i]);
}

Test(stage_c_emu, causal_both_alignments)
{
    const char *args[] = {"--backend emu --d 64 --sq 256 --skv 256 --causal --hq 2 --hkv 2",
                          "--backend emu --d 64 --sq 100 --skv 300 --causal --hq 2 --hkv 2 --layout bshd",
                          "--backend emu --d 64 --sq 300 --skv 100 --causal --hq 2 --hkv 2"};
    for (int i = 0; i < 3; i++) cr_expect_eq(stage_run(&stage_C, args[i]), 0, "%s", args[i]);
}

Test(stage_c_emu, program_contract)
{
    cr_expect_eq(program_exit_code("stage_C", "--backend emu --sq 64 --skv 64 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_C", "--skv 0 > /dev/null 2>&1"), 2, "Skv = 0 is rejected");
    cr_expect_eq(program_exit_code("stage_C", "--d 96 > /dev/null 2>&1"), 2, "D = 96 is not supported");
    cr_expect_eq(program_exit_code("stage_C", "--hq 6 --hkv 4 > /dev/null 2>&1"), 2, "Hq must be a multiple of Hkv");
    cr_expect_eq(program_exit_code("stage_C", "--layout bsdh > /dev/null 2>&1"), 2, "unknown layout");
}
