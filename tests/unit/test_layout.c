/* The shape:stride layout evaluator (nested modes flatten left to right, leftmost fastest). */
#include <criterion/criterion.h>
#include <string.h>

#include "model/layout.h"

Test(layout, simple_layouts)
{
    layout_t l;
    char err[200];
    cr_assert_eq(layout_parse("(4,2):(1,4)", &l, err, sizeof err), 0, "%s", err);
    for (long i = 0; i < 8; i++) cr_expect_eq(layout_eval(&l, i), i, "column-major is the identity");
    cr_assert_eq(layout_parse("(4,2):(2,1)", &l, err, sizeof err), 0);
    cr_expect_eq(layout_eval(&l, 1), 2);
    cr_expect_eq(layout_eval(&l, 4), 1);
    cr_assert_eq(layout_parse("8:2", &l, err, sizeof err), 0);
    cr_expect_eq(layout_eval(&l, 3), 6);
    cr_expect_eq(layout_cosize(&l), 15);
}

Test(layout, seed_tmem_layout_is_sequential)
{
    layout_t l;
    char err[200], flat[200];
    cr_assert_eq(layout_parse("((128,16),1,(4,2)):((65536,1),0,(16,64))", &l, err, sizeof err), 0, "%s", err);
    cr_expect_eq(l.nleaves, 5);
    cr_expect_eq(l.ntop, 3);
    cr_expect_eq(layout_size(&l), 128 * 128);
    layout_flat_string(&l, flat, sizeof flat);
    cr_expect_str_eq(flat, "(128,16,1,4,2):(65536,1,0,16,64)");
    /* index = m + 128 k (m fastest) with k = k0 + 16 k1 + 64 k2  ->  m * 65536 + k */
    for (long m = 0; m < 128; m++)
        for (long k = 0; k < 128; k++) cr_assert_eq(layout_eval(&l, m + 128 * k), m * 65536 + k);
    long coord[3] = {5 + 128 * 3, 0, 2 + 4 * 1}; /* m=5 k0=3 | - | k1=2 k2=1 */
    cr_expect_eq(layout_eval_top(&l, coord), 5 * 65536 + 3 + 16 * 2 + 64 * 1);
}

Test(layout, parse_errors_name_the_problem)
{
    layout_t l;
    char err[200];
    cr_expect_eq(layout_parse("(4,2)", &l, err, sizeof err), 2);
    cr_expect(strstr(err, "no ':'") != NULL, "%s", err);
    cr_expect_eq(layout_parse("(4,2):((1,2),4)", &l, err, sizeof err), 2);
    cr_expect(strstr(err, "same nesting") != NULL, "%s", err);
    cr_expect_eq(layout_parse("(4,0):(1,4)", &l, err, sizeof err), 2);
    cr_expect(strstr(err, ">= 1") != NULL, "%s", err);
    cr_expect_eq(layout_parse("(4;2):(1,4)", &l, err, sizeof err), 2);
}
