/* The TMA conformance grid on the CPU (the hardware half is tests/gpu/test_tma_conformance.c):
 * every case is a map the checker accepts for CC 9 and 10, whose box the model copies without
 * complaint and whose transaction bytes are the whole box, with the bytes the box covers written
 * (no 0xEE left inside the box's dense span) and nothing written past it. And the grid covers
 * what the hardware run must settle: every swizzle, inner boxes of half the swizzle span, both
 * element sizes, out-of-bounds and negative coordinates, a rank-4 map. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "model/tma_model.h"
#include "tma_grid.h"

Test(tma_grid, every_case_is_valid_and_fully_modelled)
{
    tma_case *c = calloc(TMA_GRID_MAX, sizeof *c);
    const int n = tma_grid_cases(c, TMA_GRID_MAX);
    cr_assert(n > 300 && n < TMA_GRID_MAX, "the grid has %d cases", n);
    uint8_t *t = tma_grid_tensor();
    int swz_seen[4] = {0}, half_span = 0, rank4 = 0, negative = 0, out = 0;
    for (int i = 0; i < n; i++) {
        const tmap_params *p = &c[i].p;
        char msg[256] = "";
        cr_expect_eq(tmap_check(p, 9, msg, sizeof msg), 0, "%s: %s", c[i].label, msg);
        cr_expect_eq(tmap_check(p, 10, msg, sizeof msg), 0, "%s (CC 10): %s", c[i].label, msg);
        const uint32_t box = tma_box_bytes(p), smem = tma_smem_bytes(p), span = tma_grid_region(p);
        uint8_t *img = malloc(span);
        uint32_t tx = 0;
        cr_assert_eq(tma_grid_model_image(&c[i], t, img, &tx, msg, sizeof msg), 0, "%s: %s", c[i].label, msg);
        cr_expect_eq(tx, box, "%s: tx %u, box %u", c[i].label, tx, box);
        /* written bytes: exactly the box's (the padding of a row narrower than the span is left alone) */
        size_t written = 0, written_outside = 0;
        for (uint32_t b = 0; b < smem; b++) written += img[b] != 0xEE;
        for (uint32_t b = (smem + 127u) / 128u * 128u; b < span; b++) written_outside += img[b] != 0xEE;
        cr_expect_eq(written, box, "%s: %zu bytes written, the box has %u", c[i].label, written, box);
        cr_expect_eq(written_outside, 0, "%s: %zu bytes written past the box's SMEM span", c[i].label, written_outside);
        if (p->swizzle <= CU_TENSOR_MAP_SWIZZLE_128B) swz_seen[p->swizzle] = 1;
        const uint32_t inner = p->box_dim[0] * (uint32_t)(tmap_elem_bits(p->data_type) / 8);
        half_span += p->swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && inner * 2 == 16u << p->swizzle;
        rank4 += p->rank == 4;
        negative += c[i].coords[0] < 0 || c[i].coords[1] < 0;
        out += (uint64_t)(c[i].coords[1] > 0 ? c[i].coords[1] : 0) + p->box_dim[1] > p->global_dim[1];
        free(img);
    }
    cr_expect(swz_seen[0] && swz_seen[1] && swz_seen[2] && swz_seen[3], "every swizzle");
    cr_expect_gt(half_span, 0, "inner boxes of half the swizzle span");
    cr_expect_gt(rank4, 0, "a rank-4 attention map");
    cr_expect_gt(negative, 0, "negative coordinates");
    cr_expect_gt(out, 0, "boxes past the end");
    free(t); free(c);
}
