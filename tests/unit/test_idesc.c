/* Instruction descriptor (sm100): known answers from notes/hardware.md section 2.3 (computed there from the
 * PTX table, cross-checked against CUTLASS/FA4), decoding, round trips, and the mis-encodings of
 * section 1.4. */
#include <criterion/criterion.h>
#include <string.h>

#include "host/rng.h"
#include "model/idesc.h"

Test(idesc, known_answers)
{
    cr_expect_eq(idesc_bf16_f32(128, 128, 0, 0), 0x08200490u);
    cr_expect_eq(idesc_bf16_f32(128, 64, 0, 1), 0x08110490u, "PV with V MN-major");
    cr_expect_eq(idesc_bf16_f32(128, 64, 0, 0), 0x08100490u);
    cr_expect_eq(idesc_bf16_f32(64, 64, 0, 0), 0x04100490u);
    cr_expect_eq(idesc_e4m3_f32(128, 128, 0, 0), 0x08200010u);
}

Test(idesc, decode_known_value)
{
    idesc_fields f;
    idesc_decode(0x08110490u, &f);
    cr_expect_eq(f.m, 128);
    cr_expect_eq(f.n, 64);
    cr_expect_eq(f.d_fmt, DFMT_F32);
    cr_expect_eq(f.a_fmt, FMT_BF16);
    cr_expect_eq(f.b_fmt, FMT_BF16);
    cr_expect_eq(f.a_mn, 0);
    cr_expect_eq(f.b_mn, 1);
    cr_expect_eq(f.reserved, 0);
}

Test(idesc, round_trip_every_field)
{
    rng_t r;
    rng_seed(&r, 99);
    for (int i = 0; i < 5000; i++) {
        idesc_fields f = {
            .sparse_sel = (unsigned)rng_int(&r, 0, 3), .sparse = (unsigned)rng_int(&r, 0, 1),
            .saturate = (unsigned)rng_int(&r, 0, 1), .d_fmt = (unsigned)rng_int(&r, 0, 3),
            .a_fmt = (unsigned)rng_int(&r, 0, 7), .b_fmt = (unsigned)rng_int(&r, 0, 7),
            .neg_a = (unsigned)rng_int(&r, 0, 1), .neg_b = (unsigned)rng_int(&r, 0, 1),
            .a_mn = (unsigned)rng_int(&r, 0, 1), .b_mn = (unsigned)rng_int(&r, 0, 1),
            .n = 8u * (unsigned)rng_int(&r, 0, 63), .m = 16u * (unsigned)rng_int(&r, 0, 31),
            .max_shift = (unsigned)rng_int(&r, 0, 3)};
        idesc_fields g;
        idesc_decode(idesc_encode(&f), &g);
        cr_assert(memcmp(&f, &g, sizeof f) == 0, "round trip %d", i);
    }
}

Test(idesc, m_at_bit_23_becomes_the_m64_descriptor)
{
    /* (M>>4) << 23 for M=128, N=64: exactly the valid M=64, N=64 descriptor (section 1.4) */
    uint32_t wrong = (1u << 4) | (1u << 7) | (1u << 10) | ((64u >> 3) << 17) | ((128u >> 4) << 23);
    cr_expect_eq(wrong, 0x04100490u);
    idesc_fields f;
    idesc_decode(wrong, &f);
    cr_expect_eq(f.m, 64, "the hardware reads M=%u", f.m);
    /* M=64 at bit 23 sets only bit 23's neighbourhood: M decodes to 32 with bit 23 set -> illegal */
    uint32_t wrong64 = (1u << 4) | (1u << 7) | (1u << 10) | ((64u >> 3) << 17) | ((64u >> 4) << 23);
    idesc_decode(wrong64, &f);
    char err[200];
    cr_expect_neq(idesc_check(&f, MMA_KIND_F16, err, sizeof err, NULL, 0), 0);
}

Test(idesc, n_off_by_one_bit_halves_n)
{
    uint32_t n_at_16 = (1u << 4) | (1u << 7) | (1u << 10) | ((128u >> 3) << 16) | (8u << 24);
    idesc_fields f;
    idesc_decode(n_at_16, &f);
    cr_expect_eq(f.n, 64, "(N>>3)<<16 reads as N=%u", f.n);
    uint32_t n_shift4 = (1u << 4) | (1u << 7) | (1u << 10) | ((128u >> 4) << 17) | (8u << 24);
    idesc_decode(n_shift4, &f);
    cr_expect_eq(f.n, 64);
}

Test(idesc, legality_rules)
{
    char err[200], warn[200];
    idesc_fields f;
    idesc_decode(idesc_bf16_f32(128, 64, 0, 1), &f);
    cr_expect_eq(idesc_check(&f, MMA_KIND_F16, err, sizeof err, warn, sizeof warn), 0, "%s", err);
    cr_expect_str_eq(warn, "");
    idesc_decode(idesc_bf16_f32(128, 72, 0, 0), &f);
    cr_expect_eq(idesc_check(&f, MMA_KIND_F16, err, sizeof err, warn, sizeof warn), 0);
    cr_expect(strstr(warn, "N%16") != NULL, "N=72 with M=128 draws the N%%16 warning: %s", warn);
    idesc_decode(idesc_bf16_f32(96, 64, 0, 0), &f);
    cr_expect_neq(idesc_check(&f, MMA_KIND_F16, err, sizeof err, NULL, 0), 0);
    cr_expect(strstr(err, "M=96") != NULL, "%s", err);
    f.m = 128; f.d_fmt = DFMT_F16;
    cr_expect_neq(idesc_check(&f, MMA_KIND_F16, err, sizeof err, NULL, 0), 0, "bf16 needs an f32 accumulator");
    idesc_decode(idesc_e4m3_f32(128, 72, 0, 1), &f);
    cr_expect_neq(idesc_check(&f, MMA_KIND_F8F6F4, err, sizeof err, NULL, 0), 0, "8-bit MN-major B needs N%%16");
}
