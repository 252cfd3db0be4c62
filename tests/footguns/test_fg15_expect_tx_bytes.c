/* FG15: the mbarrier.expect_tx byte count differs from the bytes the copies deliver.
 *
 * Symptom: too many bytes expected: the consumer hangs on the first fill (the watchdog reports a
 *          deadlock at the full-barrier wait). Too few: the consumer starts on a tile whose last
 *          copy has not landed (wrong results, timing dependent), and from then on the ring is
 *          off by the difference: a later phase completes before any of its bytes arrived.
 * Cause:   a phase completes when its pending arrivals and its tx-count both reach zero. The
 *          producer's arrive.expect_tx adds the byte count; each TMA box subtracts what it
 *          delivers. If the counts disagree, zero is reached never (too many) or too early (too
 *          few), and the late complete_tx lands in the next phase, whose tx-count then starts
 *          below zero.
 * Fix:     compute the expected bytes from the same box dimensions the copies use, summed over
 *          every box that names this barrier (both K boxes, not one; K + V if they share it).
 * Stage:   E/F (TMA loads, then the K/V ring).
 * Levels:  emu here (the mbarrier model, common/model/mbar_model.c); sm90 hardware is covered by
 *          tests/gpu/test_mbar_conformance.c, whose scripts check on the H200 the tx arithmetic
 *          this test relies on (expect before and after complete, completion only at tx == 0);
 *          sm100 runs the same mbarrier PTX (common/device/mbarrier.cuh) and is compiled only.
 * Notes:   notes/footguns.md#fg15. The model cannot tell a late complete_tx from a legitimate
 *          early one (complete before expect is legal PTX), so it has no report for the short
 *          count: the test shows the consequence instead. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "model/mbar_model.h"

/* One tile = two TMA boxes, each delivering BOX_BYTES to the same full barrier. */
#define BOX_BYTES 4096
#define BOXES 2
#define TILE_BYTES (BOXES * BOX_BYTES)

static mbar_model full_barrier(void)
{
    mbar_model m;
    mbar_model_reset(&m);
    cr_assert_eq(mbar_model_init(&m, 1), MBAR_OK);
    return m;
}

Test(fg15_expect_tx_bytes, too_many_bytes_never_completes)
{
    mbar_model m = full_barrier();
    cr_assert_eq(mbar_model_arrive_expect_tx(&m, TILE_BYTES + BOX_BYTES), MBAR_OK); /* WRONG */
    int landed = 0;
    for (int b = 0; b < BOXES; b++) {
        cr_assert_eq(mbar_model_complete_tx(&m, BOX_BYTES), MBAR_OK);
        landed += BOX_BYTES;
    }
    const mbar_status w = mbar_model_wait(&m, 0);
    char d[256];
    mbar_model_diagnose(&m, d, sizeof d);
    fprintf(stderr, "FG15 broken (expect_tx %d for an %d-byte tile, emu): %d of %d bytes landed, wait %s; %s\n",
            TILE_BYTES + BOX_BYTES, TILE_BYTES, landed, TILE_BYTES, mbar_status_name(w), d);
    cr_expect_eq(w, MBAR_DEADLOCK, "every box landed, the phase is still open");
    cr_expect_str_eq(d, "phase 0: 0 of 1 arrivals and 4096 tx bytes outstanding");
}

Test(fg15_expect_tx_bytes, too_few_bytes_completes_early_and_corrupts_the_next_phase)
{
    mbar_model m = full_barrier();
    int landed = 0;
    /* round 0: WRONG, one box counted */
    cr_assert_eq(mbar_model_arrive_expect_tx(&m, BOX_BYTES), MBAR_OK);
    cr_assert_eq(mbar_model_complete_tx(&m, BOX_BYTES), MBAR_OK);
    landed += BOX_BYTES;
    const mbar_status w0 = mbar_model_wait(&m, 0);
    cr_expect_eq(w0, MBAR_OK, "the consumer is released...");
    cr_expect_eq(landed, TILE_BYTES / 2, "...with half of its tile still in flight");

    /* the second box lands late: in phase 1, before phase 1's expect */
    cr_assert_eq(mbar_model_complete_tx(&m, BOX_BYTES), MBAR_OK);
    const uint32_t late_phase = m.phase;
    const int32_t tx1 = m.tx;
    cr_expect_eq(late_phase, 1u);
    cr_expect_eq(tx1, -BOX_BYTES, "phase 1 starts %d bytes in credit", BOX_BYTES);

    /* round 1 (same wrong count): the producer's own arrive.expect_tx completes phase 1 before
     * any of round 1's bytes has landed */
    cr_assert_eq(mbar_model_arrive_expect_tx(&m, BOX_BYTES), MBAR_OK);
    const int early1 = mbar_model_try_wait_parity(&m, 1);
    cr_expect_eq(early1, 1, "phase 1 completed with none of its copies landed");
    for (int b = 0; b < BOXES; b++) cr_assert_eq(mbar_model_complete_tx(&m, BOX_BYTES), MBAR_OK);
    cr_expect_eq(m.phase, 2u);
    cr_expect_eq(m.tx, -TILE_BYTES, "round 1's bytes all fell into phase 2");
    char d[256];
    mbar_model_diagnose(&m, d, sizeof d);
    fprintf(stderr, "FG15 broken (expect_tx %d for an %d-byte tile, emu): wait %s with %d of %d bytes landed; late "
            "box in phase %u (tx %d); phase 1 released before its copies: %s; %s; first error %s\n",
            BOX_BYTES, TILE_BYTES, mbar_status_name(w0), landed, TILE_BYTES, late_phase, tx1,
            early1 ? "yes" : "no", d, mbar_status_name(m.first_error));
    cr_expect_str_eq(d, "phase 2: 1 of 1 arrivals and -8192 tx bytes outstanding (8192 more bytes "
                        "completed than this phase expects)");
    cr_expect_eq(m.first_error, MBAR_OK, "nothing here is illegal PTX: the hardware cannot object");
}

Test(fg15_expect_tx_bytes, fixed_completes_exactly_when_the_last_byte_lands)
{
    mbar_model m = full_barrier();
    int early = 0, completed = 0;
    for (int round = 0; round < 10; round++) {
        const int parity = round & 1;
        cr_assert_eq(m.tx, 0, "round %d starts with a clean tx-count", round);
        cr_assert_eq(mbar_model_arrive_expect_tx(&m, BOXES * BOX_BYTES), MBAR_OK); /* FIXED */
        for (int b = 0; b < BOXES; b++) {
            const int released = mbar_model_try_wait_parity(&m, parity);
            early += released;
            cr_assert_eq(released, 0, "round %d released with %d of %d boxes landed", round, b, BOXES);
            cr_assert_eq(mbar_model_complete_tx(&m, BOX_BYTES), MBAR_OK);
        }
        const mbar_status w = mbar_model_wait(&m, parity);
        completed += w == MBAR_OK;
        cr_assert_eq(w, MBAR_OK, "round %d", round);
    }
    fprintf(stderr, "FG15 fixed (expect_tx %d = %d boxes, emu): %d of 10 rounds complete at the last byte, %d early "
            "releases, phase %u, tx %d, first error %s, over-arrivals %d\n", BOXES * BOX_BYTES, BOXES, completed,
            early, m.phase, m.tx, mbar_status_name(m.first_error), m.over_arrivals);
    cr_expect_eq(m.phase, 10u);
    cr_expect_eq(m.first_error, MBAR_OK);
    cr_expect_eq(m.over_arrivals, 0);
}
