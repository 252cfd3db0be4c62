/* FG23 — a ring slot released before the MMA that reads it has completed (and FG16 at ring
 * wrap-around).
 *
 * Symptom: the producer overwrites K/V while an MMA still reads them: the tile's result mixes two
 *   tiles' data (wrong, timing-dependent). Releasing at the MMA's issue (before wgmma.wait_group /
 *   instead of through the tcgen05 commit) is the mistake.
 * Cause: an issued MMA reads its SMEM operands asynchronously until it completes.
 * Fix: arrive on empty[slot] only after the MMA completed (sm90: after wgmma.wait_group; sm100:
 *   tcgen05.commit onto empty[slot]).
 * And FG16 at pipeline level: a consumer that waits full[slot] with parity (tile & 1) instead of
 *   the ring's phase is right for a ring of depth 1 only; with depth 2 or 3 its waits pass on
 *   stale phases or never.
 * Stage: F. Level: host model: an event simulation over the mbarrier model with the ring helper of
 *   common/attn/ring.h (one producer, one consumer, MMAs that read their slot for several steps);
 *   the stage-level variant comes with stage F.
 * Notes: notes/footguns.md#fg23 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "attn/ring.h"
#include "model/mbar_model.h"

enum { TILES = 12, MMA_STEPS = 3, MAXD = 3 };

typedef struct {
    int depth, early_release, tile_parity; /* the two broken variants */
    mbar_model full[MAXD], empty[MAXD];
    int slot_data[MAXD];   /* which tile the slot holds (the "SMEM") */
    int torn, done, deadlock, stale_reads;
} sim;

/* One run: the producer loads tiles 0..TILES-1 into the ring, the consumer runs one MMA per tile
 * that reads its slot for MMA_STEPS steps; a step scheduler alternates producer and consumer so
 * the producer runs whenever its wait passes. */
static void run(sim *s)
{
    for (int i = 0; i < s->depth; i++) {
        mbar_model_reset(&s->full[i]); mbar_model_init(&s->full[i], 1);
        mbar_model_reset(&s->empty[i]); mbar_model_init(&s->empty[i], 1);
        s->slot_data[i] = -1;
    }
    ring_state prod = ring_make(s->depth), cons = ring_make(s->depth);
    int next_load = 0, tile = 0, reading = -1, steps_left = 0, read_slot = 0, first_seen = 0, idle = 0;
    s->torn = s->done = s->deadlock = s->stale_reads = 0;
    while (tile < TILES && idle < 100) {
        int progressed = 0;
        /* producer: the next load as soon as its slot is free */
        if (next_load < TILES && mbar_model_try_wait_parity(&s->empty[prod.slot], (int)ring_empty_parity(&prod))) {
            s->slot_data[prod.slot] = next_load++; /* the copy lands */
            mbar_model_arrive(&s->full[prod.slot]);
            ring_advance(&prod);
            progressed = 1;
        }
        /* consumer: one MMA per tile, reading its slot for MMA_STEPS steps */
        if (reading < 0) {
            const unsigned par = s->tile_parity ? (unsigned)(tile & 1) : ring_full_parity(&cons);
            if (mbar_model_try_wait_parity(&s->full[cons.slot], (int)par)) {
                reading = tile;
                read_slot = cons.slot;
                steps_left = MMA_STEPS;
                first_seen = s->slot_data[read_slot];
                s->stale_reads += first_seen != tile; /* the wait passed on data that is not this tile's */
                if (s->early_release) mbar_model_arrive(&s->empty[read_slot]); /* FG23: released at issue */
                progressed = 1;
            }
        } else {
            s->torn += s->slot_data[read_slot] != first_seen; /* the operand changed under the MMA */
            if (--steps_left == 0) {
                if (!s->early_release) mbar_model_arrive(&s->empty[read_slot]); /* released at completion */
                reading = -1;
                tile++;
                ring_advance(&cons);
                s->done++;
            }
            progressed = 1;
        }
        idle = progressed ? 0 : idle + 1;
    }
    s->deadlock = tile < TILES;
}

Test(footgun, fg23_early_release_and_fg16_tile_parity_then_right)
{
    for (int depth = 1; depth <= 3; depth++) {
        sim right = {.depth = depth}, early = {.depth = depth, .early_release = 1}, par = {.depth = depth, .tile_parity = 1};
        run(&right);
        run(&early);
        run(&par);
        fprintf(stderr, "FG23 fixed (depth %d, release after the MMA completed, model): %d of %d tiles, %d torn, %d stale\n",
                depth, right.done, TILES, right.torn, right.stale_reads);
        fprintf(stderr, "FG23 broken (depth %d, release at the MMA's issue, model): %d tiles, %d torn reads\n", depth,
                early.done, early.torn);
        fprintf(stderr, "FG16 %s (depth %d, full waits with parity tile & 1, model): %d tiles, %d stale, %s\n",
                depth == 1 ? "fixed" : "broken", depth, par.done, par.stale_reads, par.deadlock ? "deadlock" : "no deadlock");
        cr_expect(right.done == TILES && right.torn == 0 && right.stale_reads == 0, "depth %d: the ring protocol", depth);
        cr_expect_gt(early.torn, 0, "depth %d: the producer overwrote a slot under its MMA", depth);
        if (depth == 1) cr_expect(par.done == TILES && par.stale_reads == 0, "tile & 1 is the phase when depth is 1");
        else cr_expect(par.stale_reads > 0 || par.deadlock, "depth %d: tile & 1 is not the phase", depth);
    }
}
