/* SMEM descriptors (sm100 and sm90): known answers from notes/hardware.md sections 1.4 and 1.2, round trips
 * of every field, the K advance. */
#include <criterion/criterion.h>

#include "host/rng.h"
#include "model/canonical.h"
#include "model/smem_desc.h"

Test(smem_desc, known_answers_sm100)
{
    cr_expect_eq(sm100_desc_encode(0, 16, 1024, SWZ_128B), 0x4000404000010000ull, "K-major bf16 128B");
    cr_expect_eq(sm100_desc_encode(0, 16384, 1024, SWZ_128B), 0x4000404004000000ull, "MN-major V tile");
    cr_expect_eq(sm100_desc_encode(0, 2048, 128, SWZ_NONE), 0x0000400800800000ull, "K-major no swizzle");
}

Test(smem_desc, known_answers_sm90)
{
    cr_expect_eq(sm90_desc_encode(0, 16, 1024, SWZ_128B), 0x4000004000010000ull);
    /* section 9.4: (A>>4) | 1<<16 | 64<<32 | 1<<62 for a tile at A */
    uint32_t a = 0x6400;
    cr_expect_eq(sm90_desc_encode(a, 16, 1024, SWZ_128B),
                 (uint64_t)(a >> 4) | 1ull << 16 | 64ull << 32 | 1ull << 62);
}

Test(smem_desc, swizzle_codes_agree_across_generations)
{
    /* the common modes are bit-identical: 2<<61 == 1<<62, 4<<61 == 2<<62, 6<<61 == 3<<62 */
    swizzle_mode m[3] = {SWZ_128B, SWZ_64B, SWZ_32B};
    for (int i = 0; i < 3; i++)
        cr_expect_eq(sm100_swizzle_code(m[i]) << 61, sm90_swizzle_code(m[i]) << 62);
    cr_expect_eq(sm100_swizzle_code(SWZ_128B_BASE32B), 1);
    cr_expect_eq(sm100_swizzle_from_code(3), SWZ_INVALID);
}

Test(smem_desc, round_trips)
{
    rng_t r;
    rng_seed(&r, 5);
    swizzle_mode modes[4] = {SWZ_NONE, SWZ_32B, SWZ_64B, SWZ_128B};
    for (int i = 0; i < 2000; i++) {
        uint32_t start = 16u * (uint32_t)rng_int(&r, 0, 0x3FFF), lbo = 16u * (uint32_t)rng_int(&r, 0, 0x3FFF);
        uint32_t sbo = 16u * (uint32_t)rng_int(&r, 0, 0x3FFF);
        swizzle_mode s = modes[rng_int(&r, 0, 3)];
        smem_desc_fields f;
        sm100_desc_decode(sm100_desc_encode(start, lbo, sbo, s), &f);
        cr_assert(f.start == start && f.lbo == lbo && f.sbo == sbo && f.swz == s && f.version == 1 &&
                  f.base_offset == 0 && f.lbo_mode == 0 && !f.reserved);
        sm90_desc_decode(sm90_desc_encode(start, lbo, sbo, s), &f);
        cr_assert(f.start == start && f.lbo == lbo && f.sbo == sbo && f.swz == s && f.base_offset == 0 && !f.reserved);
    }
}

Test(smem_desc, sm90_descriptor_lacks_the_sm100_fixed_bit)
{
    smem_desc_fields f;
    sm100_desc_decode(sm90_desc_encode(0, 16, 1024, SWZ_128B), &f);
    cr_expect_eq(f.version, 0, "bits 46-48 are 0 in an sm90 descriptor");
}

Test(smem_desc, advance_moves_only_the_start_field)
{
    uint64_t d = sm100_desc_encode(1024, 16, 1024, SWZ_128B);
    uint64_t e = smem_desc_advance(d, 32);
    smem_desc_fields f;
    sm100_desc_decode(e, &f);
    cr_expect_eq(f.start, 1056);
    cr_expect_eq(e - d, 2, "+32 B is +2 in the encoded low word");
    cr_expect_eq(f.sbo, 1024);
}

/* The one-add K step (smem_desc_add via smem_tile_desc_sm90_k) equals re-encoding the descriptor
 * at every K step, for every canonical tile kind, element size, operand row start and K step,
 * with the tile anywhere in a 228 KB SMEM: what lets a kernel encode its descriptors once. */
Test(smem_desc, k_step_by_one_add_equals_reencoding)
{
    const swizzle_mode modes[] = {SWZ_NONE, SWZ_32B, SWZ_64B, SWZ_128B};
    rng_t r;
    rng_seed(&r, 7);
    int checked = 0;
    for (int major = 0; major < 2; major++)
        for (int m = 0; m < 4; m++)
            for (int eb = 1; eb <= 2; eb++)
                for (int mn = 64; mn <= 256; mn *= 2)
                    for (int kk = 64; kk <= 256; kk *= 2) {
                        const operand_major om = major ? MAJOR_MN : MAJOR_K;
                        const smem_tile t = smem_tile_make(om, modes[m], eb, mn, kk);
                        const int kstep = 32 / eb; /* one MMA K step: 32 bytes of K */
                        /* rows an operand may start at: 8 (K-major), one swizzle atom's width (MN-major) */
                        const int mstep = om == MAJOR_K ? 8 : (modes[m] == SWZ_NONE ? 16 : swizzle_span(modes[m])) / eb;
                        if (t.bytes > 228u * 1024u) continue;
                        const uint32_t base = 1024u * (uint32_t)rng_int(&r, 0, (int)((228u * 1024u - t.bytes) / 1024u));
                        for (int mn0 = 0; mn0 < mn; mn0 += mstep) {
                            const uint64_t d0 = smem_tile_desc_sm90(&t, base, mn0, 0);
                            for (int k = 0; k < kk; k += kstep) {
                                cr_assert_eq(smem_tile_desc_sm90_k(&t, d0, k), smem_tile_desc_sm90(&t, base, mn0, k),
                                             "major %d swz %d eb %d %dx%d row %d k %d", major, m, eb, mn, kk, mn0, k);
                                checked++;
                            }
                        }
                    }
    cr_expect_gt(checked, 1000);
}
