/* FG22 — the TMA store of O: the proxy fence and the bulk wait.
 *
 * Symptom: O written registers/TMEM -> SMEM -> cp.async.bulk.tensor store. (a) Without
 *   fence.proxy.async after the SMEM writes, the store may read what the async proxy saw before
 *   them: stale rows. (b) Reusing the SMEM (the next tile's O) before cp.async.bulk.wait_group.read
 *   lets the earlier store read the new data: the first tile's rows hold the second's.
 * Cause: the store runs in the async proxy, asynchronously, until the bulk group is waited for.
 * Fix: fence.proxy.async after the writes, then the store, commit_group, and wait_group.read before
 *   the SMEM is written again or the CTA exits (stage E's store path).
 * Stage: E. Level: host model, by the ordering rule of model/tma_model.h (the latest read the PTX
 *   ISA allows); on the hardware the race may hide, which stage E's run will say.
 * Notes: notes/footguns.md#fg22 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "model/canonical.h"
#include "model/tma_model.h"
#include "tma_grid.h"

enum { D = 64, ROWS = 64, TILES = 2 };

static tmap_params map(void) { return tma_bf16_map_2d(D, ROWS * TILES, D, ROWS); }

/* The epilogue of two tiles through one SMEM buffer; returns how many global rows are wrong.
 * fence: the proxy fence after the SMEM writes; wait_between: the bulk wait before the reuse. */
static int epilogue(int fence, int wait_between)
{
    static uint16_t out[ROWS * TILES * D], want[ROWS * TILES * D];
    static uint8_t smem[ROWS * D * 2], view[ROWS * D * 2];
    const smem_tile t = smem_tile_make(MAJOR_K, SWZ_128B, 2, ROWS, D);
    const tmap_params p = map();
    memset(out, 0, sizeof out);
    memset(view, 0xEE, sizeof view); /* what the async proxy saw before: not O */
    tma_store_queue q;
    tma_queue_init(&q, view, sizeof view);
    char err[256];
    for (int tile = 0; tile < TILES; tile++) {
        for (int r = 0; r < ROWS; r++) /* the tile's O rows, written by ordinary stores */
            for (int e = 0; e < D; e++) {
                const uint16_t v = (uint16_t)(0x3C00 + tile * 0x100 + r * 2 + (e & 1));
                memcpy(smem + smem_tile_offset(&t, r, e), &v, 2);
                want[(tile * ROWS + r) * D + e] = v;
            }
        if (fence) tma_queue_fence(&q, smem);
        const int32_t c[2] = {0, tile * ROWS};
        cr_assert_eq(tma_queue_store(&q, &p, c, 0), 0);
        if (wait_between) cr_assert_eq(tma_queue_wait_read(&q, 9, out, err, sizeof err), 0, "%s", err);
    }
    cr_assert_eq(tma_queue_wait_read(&q, 9, out, err, sizeof err), 0, "%s", err); /* before the CTA exits */
    int wrong = 0;
    for (int r = 0; r < ROWS * TILES; r++) wrong += memcmp(out + r * D, want + r * D, D * 2) != 0;
    return wrong;
}

Test(footgun, fg22_store_without_fence_or_wait_then_right)
{
    const int no_fence = epilogue(0, 1), no_wait = epilogue(1, 0), right = epilogue(1, 1);
    fprintf(stderr, "FG22 broken (no fence.proxy.async before the store, model): %d of %d O rows stale\n", no_fence,
            ROWS * TILES);
    fprintf(stderr, "FG22 broken (SMEM reused before wait_group.read, model): %d of %d O rows hold the next tile's data\n",
            no_wait, ROWS * TILES);
    fprintf(stderr, "FG22 fixed (fence, store, commit, wait_group.read before reuse, model): %d of %d O rows wrong\n", right,
            ROWS * TILES);
    cr_expect_eq(no_fence, ROWS * TILES, "every tile's rows are what the proxy saw before the writes");
    cr_expect_eq(no_wait, ROWS, "the first tile's rows are torn (the second tile's data)");
    cr_expect_eq(right, 0);
}
