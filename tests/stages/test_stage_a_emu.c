/* Stage A on the host model (runs everywhere, CI included): the emu suite of stage A's shape table
 * (exact and random inputs, every head dimension, tails, batch > 1); the program contract of
 * build/bin/stage_A, including the grid-limit rule. */
#include <criterion/criterion.h>

#include "stage_run.h"

extern const stage_def stage_A;

Test(stage_a_emu, shape_table)
{
    cr_expect_eq(emu_table_failures(&stage_A, 8), 0, "stage A emu suite: see the FAILED lines");
}

Test(stage_a_emu, program_contract)
{
    /* --help shows the defaults of the flags stage A takes, and no others */
    cr_expect_eq(program_exit_code("stage_A", "--help | grep -q 'defaults: b=1 hq=2 sq='"), 0, "defaults listed");
    cr_expect_neq(program_exit_code("stage_A", "--help | grep -qE 'hkv=|causal='"), 0, "no hkv/causal defaults");
    /* output paths are checked before any work: exit 2 naming the flag */
    cr_expect_eq(program_exit_code("stage_A", "--backend emu --csv /nonexistent-dir/x.csv 2>&1 | grep -q 'bad arguments: --csv'"), 0);
    cr_expect_eq(program_exit_code("stage_A", "--backend emu --csv /nonexistent-dir/x.csv > /dev/null 2>&1"), 2);
    cr_expect_eq(program_exit_code("stage_A", "--backend emu --dump /proc/no-such-dir > /dev/null 2>&1"), 2);
    cr_expect_eq(program_exit_code("stage_A", "--backend emu --sq 64 --skv 64 --d 64 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_A", "--d 24 > /dev/null 2>&1"), 2, "D not a multiple of 16");
    cr_expect_eq(program_exit_code("stage_A", "--causal > /dev/null 2>&1"), 2, "stage A takes no --causal");
    cr_expect_eq(program_exit_code("stage_A", "--backend emu --sq 8192 --skv 8192 > /dev/null 2>&1"), 2,
                 "too large for the host model");
    /* B x H = 70000 > 65535 blocks on the grid's z axis: refused before any launch, naming the rule */
    cr_expect_eq(program_exit_code("stage_A", "--b 7000 --hq 10 --sq 1 --skv 1 --d 16 2>&1 | grep -q \"grid's z dimension\""), 0,
                 "B x H beyond the grid's z limit is named");
    cr_expect_eq(program_exit_code("stage_A", "--b 7000 --hq 10 --sq 1 --skv 1 --d 16 > /dev/null 2>&1"), 2,
                 "B x H beyond the grid's z limit is exit 2");
    /* no keys: an empty S and a grid of no CTAs, refused by name (as stages B-F refuse it) */
    cr_expect_eq(program_exit_code("stage_A", "--skv 0 > build/skv0.txt 2>&1; test $? -eq 2 && "
                                              "grep -q 'needs at least one key' build/skv0.txt"),
                 0, "--skv 0 is exit 2, naming the rule");
}
