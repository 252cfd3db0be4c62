/* Stage C on the host model (runs everywhere, CI included): the emu suite of stage C's shape table
 * (small shapes over D, T, KV tails, causal masks with Sq < Skv and Sq > Skv (fully masked rows),
 * GQA, MQA, batch, both layouts); the program contract. */
#include <criterion/criterion.h>

#include "stage_run.h"

extern const stage_def stage_C;

Test(stage_c_emu, shape_table)
{
    cr_expect_eq(emu_table_failures(&stage_C, 9), 0, "stage C emu suite: see the FAILED lines");
}

Test(stage_c_emu, program_contract)
{
    cr_expect_eq(program_exit_code("stage_C", "--backend emu --sq 64 --skv 64 > /dev/null"), 0);
    cr_expect_eq(program_exit_code("stage_C", "--skv 0 > /dev/null 2>&1"), 2, "Skv = 0 is rejected");
    cr_expect_eq(program_exit_code("stage_C", "--d 96 > /dev/null 2>&1"), 2, "D = 96 is not supported");
    cr_expect_eq(program_exit_code("stage_C", "--hq 6 --hkv 4 > /dev/null 2>&1"), 2, "Hq must be a multiple of Hkv");
    cr_expect_eq(program_exit_code("stage_C", "--layout bsdh > /dev/null 2>&1"), 2, "unknown layout");
    cr_expect_eq(program_exit_code("stage_C", "--b 70000 --hq 1 --hkv 1 --sq 1 --skv 1 > /dev/null 2>&1"), 2,
                 "B beyond the grid's z limit");
    cr_expect_eq(program_exit_code("stage_C", "--shapes bench > /dev/null"), 0, "the table lists its bench rows");
    /* --csv rows carry the layout and every shape flag */
    cr_expect_eq(program_exit_code("stage_C", "--backend emu --sq 64 --skv 64 --layout bshd --causal --csv build/test_c.csv "
                                              "> /dev/null && tail -n 1 build/test_c.csv | grep -q ',1,4,2,64,64,64,1,0,bshd,' "
                                              "&& head -n 1 build/test_c.csv | grep -q ',causal,page,layout,'; r=$?; "
                                              "rm -f build/test_c.csv; exit $r"), 0, "layout and shape columns in the CSV row");
    /* --dump writes the inputs too */
    cr_expect_eq(program_exit_code("stage_C", "--backend emu --sq 16 --skv 16 --dump build/test_c_dump > /dev/null && "
                                              "ls build/test_c_dump/C_q_bf16bits_in_layout.npy build/test_c_dump/C_k_bf16bits_in_layout.npy "
                                              "build/test_c_dump/C_v_bf16bits_in_layout.npy build/test_c_dump/C_lse.npy > /dev/null; "
                                              "r=$?; rm -rf build/test_c_dump; exit $r"), 0, "Q, K, V, O and LSE dumped");
    cr_expect_eq(program_exit_code("stage_C", "--shapes nosuch > /dev/null 2>&1"), 2, "unknown suite");
}
