/* TMEM model: allocation rules, the warp-quadrant rule for every shape, unallocated columns,
 * 32-bit-only moves, and store/load round trips. (Rules from the PTX ISA; see model/tmem_model.h.) */
#include <criterion/criterion.h>
#include <string.h>

#include "model/tmem_model.h"

Test(tmem_model, allocation_rules)
{
    tmem_model *t = tmem_model_new();
    uint32_t a, b, c;
    cr_expect_eq(tmem_alloc(t, 48, &a), TMEM_ERR_ALLOC_SIZE);
    cr_expect_eq(tmem_alloc(t, 16, &a), TMEM_ERR_ALLOC_SIZE);
    cr_expect_eq(tmem_alloc(t, 1024, &a), TMEM_ERR_ALLOC_SIZE);
    cr_expect_eq(tmem_alloc(t, 256, &a), TMEM_OK);
    cr_expect_eq(tmem_alloc(t, 128, &b), TMEM_OK);
    cr_expect_eq(tmem_addr_col(b), 256);
    cr_expect_eq(tmem_alloc(t, 256, &c), TMEM_ERR_ALLOC_EXHAUSTED, "only 128 columns left");
    cr_expect(strstr(t->msg, "block") != NULL, "%s", t->msg);
    cr_expect_eq(tmem_dealloc(t, b, 64), TMEM_ERR_DEALLOC, "size must match the allocation");
    cr_expect_eq(tmem_check_released(t), TMEM_ERR_LEAK);
    cr_expect_eq(tmem_dealloc(t, b, 128), TMEM_OK);
    cr_expect_eq(tmem_dealloc(t, a, 256), TMEM_OK);
    cr_expect_eq(tmem_check_released(t), TMEM_OK);
    tmem_relinquish(t);
    cr_expect_eq(tmem_alloc(t, 32, &a), TMEM_ERR_RELINQUISHED);
    tmem_model_free(t);
}

Test(tmem_model, quadrant_rule)
{
    tmem_model *t = tmem_model_new();
    uint32_t base;
    cr_assert_eq(tmem_alloc(t, 32, &base), TMEM_OK);
    uint32_t regs[32 * 32];
    /* warp 0 reading lanes 0-31: fine; warp 0 at lane 32: outside its quadrant */
    cr_expect_eq(tmem_ld(t, 0, TMEM_32x32b, 1, 0, tmem_addr(base, 0, 0), 32, regs), TMEM_OK);
    cr_expect_eq(tmem_ld(t, 0, TMEM_32x32b, 1, 0, tmem_addr(base, 32, 0), 32, regs), TMEM_ERR_QUADRANT);
    cr_expect(strstr(t->msg, "warp 0") && strstr(t->msg, "lanes 0-31"), "%s", t->msg);
    /* warp 5 is warp 1 of the second warpgroup: lanes 32-63 */
    cr_expect_eq(tmem_ld(t, 5, TMEM_32x32b, 1, 0, tmem_addr(base, 32, 0), 32, regs), TMEM_OK);
    /* a 16-lane shape inside the quadrant, and one straddling it */
    cr_expect_eq(tmem_ld(t, 1, TMEM_16x256b, 1, 0, tmem_addr(base, 48, 0), 32, regs), TMEM_OK);
    cr_expect_eq(tmem_ld(t, 1, TMEM_16x256b, 1, 0, tmem_addr(base, 56, 0), 32, regs), TMEM_ERR_QUADRANT);
    /* the seed's planned fix for FG02: 16x256b from warp 0 at lane 64 is still out of bounds */
    cr_expect_eq(tmem_ld(t, 0, TMEM_16x256b, 1, 0, tmem_addr(base, 64, 0), 32, regs), TMEM_ERR_QUADRANT);
    tmem_model_free(t);
}

Test(tmem_model, unallocated_columns_and_element_width)
{
    tmem_model *t = tmem_model_new();
    uint32_t base, regs[32 * 64] = {0};
    cr_assert_eq(tmem_alloc(t, 32, &base), TMEM_OK);
    cr_expect_eq(tmem_ld(t, 0, TMEM_32x32b, 64, 0, base, 32, regs), TMEM_ERR_UNALLOCATED, "x64 needs 64 columns");
    cr_expect_eq(tmem_st(t, 0, TMEM_32x32b, 8, 0, base, 16, 0, regs), TMEM_ERR_ELEM_WIDTH);
    cr_expect_eq(tmem_ld(t, 0, TMEM_32x32b, 3, 0, base, 32, regs), TMEM_ERR_SHAPE, ".num must be a power of two");
    tmem_model_free(t);
}

Test(tmem_model, store_load_round_trip_every_shape)
{
    tmem_model *t = tmem_model_new();
    uint32_t base;
    cr_assert_eq(tmem_alloc(t, 128, &base), TMEM_OK);
    tmem_shape shapes[5] = {TMEM_32x32b, TMEM_16x64b, TMEM_16x128b, TMEM_16x256b, TMEM_16x32bx2};
    static uint32_t in[32 * 128], out[32 * 128];
    for (int s = 0; s < 5; s++) {
        int num = 4, n = tmem_regs_per_thread(shapes[s], num);
        for (int i = 0; i < 32 * n; i++) in[i] = 0x1000u * (uint32_t)s + (uint32_t)i;
        uint32_t addr = tmem_addr(base, tmem_shape_lanes(shapes[s]) == 32 ? 0 : 16, 8);
        cr_assert_eq(tmem_st(t, 0, shapes[s], num, 32, addr, 32, 0, in), TMEM_OK, "%s", t->msg);
        cr_assert_eq(tmem_ld(t, 0, shapes[s], num, 32, addr, 32, out), TMEM_OK, "%s", t->msg);
        cr_expect(memcmp(in, out, sizeof(uint32_t) * 32 * (size_t)n) == 0, "shape %d", s);
    }
    /* 32x32b: thread t, register i is (lane t, column i) */
    uint32_t regs[32 * 2];
    for (int i = 0; i < 64; i++) regs[i] = (uint32_t)i;
    cr_assert_eq(tmem_st(t, 2, TMEM_32x32b, 2, 0, tmem_addr(base, 64, 0), 32, 0, regs), TMEM_OK);
    cr_expect_eq(t->cell[64 + 7][base + 1], 7u * 2u + 1u);
    /* .unpack::16b: each register's halves go to two columns, low 16 bits each */
    regs[0] = 0xBEEF1234u;
    cr_assert_eq(tmem_st(t, 3, TMEM_32x32b, 1, 0, tmem_addr(base, 96, 10), 32, 1, regs), TMEM_OK);
    cr_expect_eq(t->cell[96][base + 10], 0x1234u);
    cr_expect_eq(t->cell[96][base + 11], 0xBEEFu);
    tmem_model_free(t);
}
