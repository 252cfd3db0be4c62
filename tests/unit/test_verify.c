/* verify.c: every field of the report on crafted arrays, and the pass rules. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "host/bf16.h"
#include "host/init.h"
#include "host/verify.h"

Test(verify, identical_arrays)
{
    float out[4] = {1, -2, 3, 0.5f};
    double ref[4] = {1, -2, 3, 0.5};
    verify_report r;
    verify_f32(out, ref, 4, &r);
    cr_expect_eq(r.max_abs, 0.0);
    cr_expect_eq(r.exact_mismatch, 0);
    cr_expect(fabs(r.cosine - 1.0) < 1e-15);
    cr_expect_eq(r.rel_l2, 0.0);
    cr_expect(verify_exact_ok(&r));
}

Test(verify, max_abs_worst_and_rel_l2)
{
    float out[4] = {1, 2, 3.5f, 4};
    double ref[4] = {1, 2, 3, 4};
    verify_report r;
    verify_f32(out, ref, 4, &r);
    cr_expect_eq(r.max_abs, 0.5);
    cr_expect_eq(r.worst, 2);
    cr_expect_eq(r.worst_out, 3.5);
    cr_expect_eq(r.worst_ref, 3.0);
    cr_expect(fabs(r.rel_l2 - 0.5 / sqrt(30.0)) < 1e-12);
    cr_expect_eq(r.exact_mismatch, 1);
    cr_expect(!verify_exact_ok(&r));
    char coord[64];
    int dims[2] = {2, 2};
    const char *names[2] = {"i", "j"};
    verify_format_coord(r.worst, dims, names, 2, coord, sizeof coord);
    cr_expect_str_eq(coord, "i=1,j=0");
}

Test(verify, poison_counts_as_unwritten)
{
    float out[5];
    double ref[5] = {1, 2, 3, 4, 5};
    poison_f32(out, 5);
    out[0] = 1; out[1] = 2; out[3] = 4;
    verify_report r;
    verify_f32(out, ref, 5, &r);
    cr_expect_eq(r.unwritten, 2);
    cr_expect_eq(r.worst, 2, "first unwritten element is reported");
    cr_expect(!verify_exact_ok(&r));
    verify_report emu = {.n = 5, .max_abs = 1.0};
    cr_expect(!verify_attention_ok(&r, &emu, 1.0), "unwritten output must fail the attention rule");

    uint16_t ob[3];
    poison_bf16(ob, 3);
    ob[1] = f32_to_bf16(2.0f);
    double rb[3] = {1, 2, 3};
    verify_bf16(ob, rb, 3, &r);
    cr_expect_eq(r.unwritten, 2);
}

Test(verify, nonfinite_positions_must_match)
{
    float out[4] = {NAN, INFINITY, 1.0f, -INFINITY};
    double ref[4] = {NAN, INFINITY, NAN, INFINITY};
    verify_report r;
    verify_f32(out, ref, 4, &r);
    /* index 0 and 1 match; 2 (finite vs NaN) and 3 (wrong-sign inf) do not */
    cr_expect_eq(r.nonfinite_mismatch, 2);
    cr_expect_eq(r.worst, 2);
    verify_report emu = {.n = 4};
    cr_expect(!verify_attention_ok(&r, &emu, 1e9));
}

Test(verify, all_zero_output_is_not_exact_pass)
{
    float out[3] = {0, 0, 0};
    double ref[3] = {0, 0, 0};
    verify_report r;
    verify_f32(out, ref, 3, &r);
    cr_expect_eq(r.zeros, 3);
    cr_expect(!verify_exact_ok(&r), "an all-zero result proves nothing");
}

Test(verify, attention_rule_is_2x_emulating_plus_floor)
{
    verify_report k = {.n = 10, .max_abs = 2.5e-3};
    verify_report e = {.n = 10, .max_abs = 1.0e-3};
    cr_expect(verify_attention_ok(&k, &e, 1e-3));   /* 2.5e-3 <= 2e-3 + 1e-3 */
    cr_expect(!verify_attention_ok(&k, &e, 1e-4));  /* 2.5e-3 >  2e-3 + 1e-4 */
}

Test(verify, cosine_of_opposite_vectors)
{
    float out[2] = {-1, -2};
    double ref[2] = {1, 2};
    verify_report r;
    verify_f32(out, ref, 2, &r);
    cr_expect(fabs(r.cosine + 1.0) < 1e-15);
    char line[512];
    int dims[1] = {2};
    const char *names[1] = {"i"};
    verify_summary(&r, dims, names, 1, line, sizeof line);
    cr_expect(strstr(line, "cos=-1.000000") != NULL, "%s", line);
}
