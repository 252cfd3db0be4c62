/* FG16: waiting on the wrong mbarrier phase parity.
 *
 * Symptom: a K/V ring hangs on its very first fill (producer), or the consumer runs ahead and
 *          computes on a slot the copy has not filled yet (stale or garbage K/V, no error).
 * Cause:   try_wait.parity(P) answers "the phase with parity P has completed", i.e. true iff the
 *          barrier's current phase parity differs from P. A fresh barrier is in phase 0, so a
 *          wait on parity 1 passes at once and a wait on parity 0 blocks until phase 0 completes.
 *          A producer that first waits on an empty slot with parity 0 waits for a release that
 *          can only come after it has filled the slot: deadlock. A consumer that first waits on
 *          a full slot with parity 1 passes before any data arrived: early release.
 * Fix:     one (slot, phase) state per role with a single advance (slot += 1; on wrap phase ^= 1);
 *          the producer starts at phase 1 (every slot starts empty), the consumer at phase 0.
 * Stage:   E/F (the TMA ring and the warp-specialised pipeline).
 * Levels:  emu here (the mbarrier model, common/model/mbar_model.c); sm90 hardware is covered by
 *          tests/gpu/test_mbar_conformance.c, whose scripts check on the H200 the very try_wait
 *          answers this test relies on (fresh barrier: parity 0 false, parity 1 true; parity flips
 *          per phase); sm100 runs the same mbarrier PTX (common/device/mbarrier.cuh) and is
 *          compiled only.
 * Notes:   notes/footguns.md#fg16 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "model/mbar_model.h"
#include "stage_run.h"
#include "test_util.h"

#define SLOTS 2
#define TILE_BYTES 8192
#define ROUNDS 10

typedef struct {
    mbar_model full[SLOTS];  /* producer -> consumer: count 1 (the arrive.expect_tx) + tx bytes */
    mbar_model empty[SLOTS]; /* consumer -> producer: count 1 (one release per drain) */
    int data[SLOTS];         /* which round's tile has landed in the slot; -1: none yet */
} ring;

typedef struct {
    int slot, phase;
} ring_state;

static void ring_init(ring *r)
{
    for (int s = 0; s < SLOTS; s++) {
        mbar_model_reset(&r->full[s]);
        mbar_model_reset(&r->empty[s]);
        cr_assert_eq(mbar_model_init(&r->full[s], 1), MBAR_OK);
        cr_assert_eq(mbar_model_init(&r->empty[s], 1), MBAR_OK);
        r->data[s] = -1;
    }
}

static void advance(ring_state *st)
{
    if (++st->slot == SLOTS) {
        st->slot = 0;
        st->phase ^= 1;
    }
}

/* The producer's work once its wait on empty[s] has passed: announce the bytes, the copy lands. */
static void fill(ring *r, int s, int round)
{
    cr_assert_eq(mbar_model_arrive_expect_tx(&r->full[s], TILE_BYTES), MBAR_OK);
    r->data[s] = round;
    cr_assert_eq(mbar_model_complete_tx(&r->full[s], TILE_BYTES), MBAR_OK);
}

Test(fg16_phase_parity, wrong_producer_first_wait_parity_0_deadlocks)
{
    ring r;
    ring_init(&r);
    ring_state prod = {0, 0}; /* WRONG: the producer starts at phase 0 */
    const mbar_status wp = mbar_model_wait(&r.empty[prod.slot], prod.phase);
    cr_expect_eq(wp, MBAR_DEADLOCK, "the producer waits for a release of a slot nobody has filled");
    char d[256], dc[256];
    mbar_model_diagnose(&r.empty[0], d, sizeof d);
    cr_expect_str_eq(d, "phase 0: 1 of 1 arrivals and 0 tx bytes outstanding");
    /* and the consumer, correctly waiting for data, waits for the stuck producer: both hang */
    const mbar_status wc = mbar_model_wait(&r.full[0], 0);
    cr_expect_eq(wc, MBAR_DEADLOCK);
    mbar_model_diagnose(&r.full[0], dc, sizeof dc);
    fprintf(stderr, "FG16 broken (producer starts at phase 0, emu): producer on empty[0] %s (%s); consumer on full[0] "
            "%s (%s)\n", mbar_status_name(wp), d, mbar_status_name(wc), dc);
    cr_expect_str_eq(dc, "phase 0: 1 of 1 arrivals and 0 tx bytes outstanding");
}

Test(fg16_phase_parity, wrong_consumer_first_wait_parity_1_passes_before_data)
{
    ring r;
    ring_init(&r);
    ring_state cons = {0, 1}; /* WRONG: the consumer starts at phase 1 */
    int early = 0, unfilled = 0;
    for (int k = 0; k < SLOTS; k++) {
        const int s = cons.slot;
        cr_expect_eq(r.full[s].pending, 1, "nothing has arrived on full[%d]", s);
        const int passed = mbar_model_try_wait_parity(&r.full[s], cons.phase);
        early += passed && r.full[s].pending == 1;
        unfilled += passed && r.data[s] == -1;
        cr_expect_eq(passed, 1, "early release: the wait on full[%d] passes with no arrival", s);
        cr_expect_eq(r.data[s], -1, "and the consumer would read slot %d before any copy", s);
        advance(&cons);
    }
    fprintf(stderr, "FG16 broken (consumer starts at phase 1, emu): %d of %d first waits on full[] passed with no "
            "arrival, %d on a slot no copy had filled; full[0] still in phase %u\n", early, SLOTS, unfilled,
            r.full[0].phase);
    cr_expect_eq(r.full[0].phase, 0u, "no phase of full[] ever completed");
}

Test(fg16_phase_parity, fixed_protocol_runs_ten_rounds)
{
    ring r;
    ring_init(&r);
    ring_state prod = {0, 1}, cons = {0, 0}; /* FIXED */
    int produced = 0, consumed = 0, producer_held_back = 0, in_order = 0;
    /* A greedy schedule: the producer fills whenever its slot is free, the consumer drains
     * otherwise. The producer must run exactly SLOTS ahead and then be held back by empty[]. */
    while (consumed < ROUNDS) {
        if (produced < ROUNDS && mbar_model_try_wait_parity(&r.empty[prod.slot], prod.phase)) {
            cr_assert(produced - consumed < SLOTS, "round %d: the producer overran the ring",
                      produced);
            fill(&r, prod.slot, produced++);
            advance(&prod);
            continue;
        }
        if (produced < ROUNDS) {
            cr_assert_eq(produced - consumed, SLOTS, "the producer stalled with a free slot");
            producer_held_back++;
        }
        const int s = cons.slot;
        mbar_status w = mbar_model_wait(&r.full[s], cons.phase);
        char d[256];
        mbar_model_diagnose(&r.full[s], d, sizeof d);
        cr_assert_eq(w, MBAR_OK, "round %d: consumer wait on full[%d]: %s (%s)", consumed, s,
                     mbar_status_name(w), d);
        in_order += r.data[s] == consumed;
        cr_assert_eq(r.data[s], consumed, "round %d read the tile of round %d", consumed,
                     r.data[s]);
        cr_assert_eq(mbar_model_arrive(&r.empty[s]), MBAR_OK);
        consumed++;
        advance(&cons);
    }
    int errors = 0, over = 0;
    for (int s = 0; s < SLOTS; s++) {
        errors += (r.full[s].first_error != MBAR_OK) + (r.empty[s].first_error != MBAR_OK);
        over += r.full[s].over_arrivals + r.empty[s].over_arrivals;
    }
    fprintf(stderr, "FG16 fixed (producer at phase 1, consumer at phase 0, emu): %d of %d rounds read their own tile, "
            "producer held back %d times, full[0]/empty[0] phases %u/%u, %d barrier errors, %d over-arrivals\n",
            in_order, ROUNDS, producer_held_back, r.full[0].phase, r.empty[0].phase, errors, over);
    cr_expect_eq(producer_held_back, ROUNDS - SLOTS);
    for (int s = 0; s < SLOTS; s++) {
        cr_expect_eq(r.full[s].phase, (unsigned)(ROUNDS / SLOTS), "full[%d] phases", s);
        cr_expect_eq(r.empty[s].phase, (unsigned)(ROUNDS / SLOTS), "empty[%d] phases", s);
        cr_expect_eq(r.full[s].first_error, MBAR_OK, "full[%d]: %s", s,
                     mbar_status_name(r.full[s].first_error));
        cr_expect_eq(r.empty[s].first_error, MBAR_OK, "empty[%d]: %s", s,
                     mbar_status_name(r.empty[s].first_error));
        cr_expect_eq(r.full[s].over_arrivals + r.empty[s].over_arrivals, 0);
    }
}

/* Stage level, at the ring: the producer waiting a slot's empty barrier with the full parity
 * (phase 0 on a fresh barrier) never passes its first wait: emu names the deadlock; on the H200 the
 * watchdog does (site 4: k_empty). */
Test(fg16_phase_parity, stage_f_ring_same_parity_emu)
{
    cr_expect_eq(fault_demo_pair("stage_F", "emu", "ring-same-parity", "--d 64 --sq 128 --skv 512 --hq 1 --hkv 1 --ring 2",
                                 "deadlock: no role can run; load warp waits on k_empty\\[0\\], parity 0"),
                 0);
    cr_expect_eq(fault_demo_pair("stage_F", "emu", "ring-no-flip", "--d 64 --sq 128 --skv 1024 --hq 1 --hkv 1 --ring 2",
                                 "stale phase"),
                 0);
}

Test(fg16_phase_parity, stage_f_ring_same_parity_h200, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    cr_expect_eq(fault_demo_pair("stage_F", "sm90", "ring-same-parity", "--d 64 --sq 128 --skv 512 --hq 1 --hkv 1 --ring 2",
                                 "deadlock: mbarrier wait at site 4"),
                 0);
}
