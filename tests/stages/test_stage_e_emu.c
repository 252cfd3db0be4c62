/* Stage E on the host model (runs everywhere, CI included): stage C's emu suite with every copy on
 * the TMA model (model/tma_flight.h: boxes land when a waiter needs them, transaction bytes on the
 * mbarrier model; O through the modelled TMA store), and the program contract. */
#include <criterion/criterion.h>

#include "stage_run.h"

extern const stage_def stage_E;

Test(stage_e_emu, shape_table)
{
    cr_expect_eq(emu_table_failures(&stage_E, 9), 0, "stage E emu suite: see the FAILED lines");
}

Test(stage_e_emu, program_contract)
{
    cr_expect_eq(program_exit_code("stage_E", "--backend emu --sq 64 --skv 64 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_E", "--skv 0 > /dev/null 2>&1"), 2, "Skv = 0 is rejected");
    cr_expect_eq(program_exit_code("stage_E", "--d 96 > /dev/null 2>&1"), 2, "D = 96 is not supported");
    cr_expect_eq(program_exit_code("stage_E", "--hq 6 --hkv 4 > /dev/null 2>&1"), 2, "Hq must be a multiple of Hkv");
    cr_expect_eq(program_exit_code("stage_E", "--b 70000 --hq 1 --hkv 1 --sq 1 --skv 1 > /dev/null 2>&1"), 2,
                 "B beyond the grid's z limit");
    cr_expect_eq(program_exit_code("stage_E", "--shapes bench > /dev/null"), 0, "the table lists its bench rows");
    /* a ragged tail on both sides, GQA, BSHD: zero-filled boxes past Sq and Skv, clipped stores */
    cr_expect_eq(program_exit_code("stage_E", "--backend emu --sq 130 --skv 257 --hq 4 --hkv 2 --layout bshd --d 128 > /dev/null"),
                 0);
    /* FG13 through the program: the checker names the broken rule; an accepted mistake reads wrong */
    cr_expect_eq(program_exit_code("stage_E", "--backend emu --d 128 --fault tmap-wide-inner-box 2>&1 | tail -n 1 | "
                                              "grep -q 'box_inner_bytes_within_swizzle_span'"), 0);
    cr_expect_eq(program_exit_code("stage_E", "--backend emu --fault tmap-rank-strides 2>&1 | tail -n 1 | "
                                              "grep -q 'stride_multiple_16: globalStrides\\[0\\]=2'"), 0);
}
