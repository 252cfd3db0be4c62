/* The attention core's mask rules (common/attn/fmha_core.h): fmha_tile_unmasked, which lets a
 * kernel skip the per-element mask on a tile, agrees with fmha_visible element by element, on
 * shapes with tails on both sides, causal with Sq below, at and above Skv, and FG21's variant. */
#include <criterion/criterion.h>

#include "attn/fmha_core.h"

static int brute_unmasked(const fmha_params *p, int r0, int rows, int kv0)
{
    for (int i = r0; i < r0 + rows; i++)
        for (int j = kv0; j < kv0 + FMHA_BN; j++)
            if (!fmha_visible(p, i, j)) return 0;
    return 1;
}

Test(fmha_core, tile_unmasked_matches_the_element_mask)
{
    static const int sqs[] = {1, 64, 100, 128, 300, 1025}, skvs[] = {1, 127, 128, 129, 300, 1025, 4096};
    int checked = 0, unmasked = 0, masked = 0;
    for (unsigned si = 0; si < sizeof sqs / sizeof sqs[0]; si++)
        for (unsigned ki = 0; ki < sizeof skvs / sizeof skvs[0]; ki++)
            for (int causal = 0; causal < 2; causal++)
                for (int fault = 0; fault < 2; fault++) {
                    fmha_params p = {0};
                    p.sq = sqs[si];
                    p.skv = skvs[ki];
                    p.causal = causal;
                    p.faults = fault ? FMHA_FAULT_NO_TAIL_MASK : 0;
                    for (int r0 = 0; r0 < p.sq; r0 += 64)
                        for (int kv0 = 0; kv0 < p.skv + FMHA_BN; kv0 += FMHA_BN) {
                            const int want = brute_unmasked(&p, r0, 64, kv0), got = fmha_tile_unmasked(&p, r0, kv0);
                            cr_assert_eq(got, want, "sq %d skv %d causal %d fault %d: rows %d.., tile %d: %d, not %d", p.sq,
                                         p.skv, causal, fault, r0, kv0, got, want);
                            checked++;
                            unmasked += want;
                            masked += !want;
                        }
                }
    cr_expect_gt(unmasked, 100, "the rule skips the mask on many tiles (%d of %d)", unmasked, checked);
    cr_expect_gt(masked, 100, "and keeps it on many (%d of %d)", masked, checked);
}

Test(fmha_core, a_long_sequence_masks_only_its_last_tile)
{
    fmha_params p = {0};
    p.sq = p.skv = 8192 + 5;
    int masked = 0;
    for (int kv0 = 0; kv0 < p.skv; kv0 += FMHA_BN) masked += !fmha_tile_unmasked(&p, 0, kv0);
    cr_expect_eq(masked, 1, "non-causal: the tail tile only");
    p.causal = 1;
    masked = 0;
    for (int kv0 = 0; kv0 < p.skv; kv0 += FMHA_BN) masked += !fmha_tile_unmasked(&p, 4096, kv0);
    /* rows 4096..4159 see keys up to 4096..4159: tiles 0..31 whole, tile 32 [4096, 4224) cut, and
     * every later one */
    cr_expect_eq(masked, 65 - 32, "causal: the diagonal tile and the ones past it");
}
