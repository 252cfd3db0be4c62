/* The mbarrier model against known answers derived from the PTX semantics (PTX ISA 9.7.13.15):
 * parities of a fresh barrier, arrival counts, tx-count in both orders, parity flips over phases,
 * and the reports (over-arrival, deadlock diagnosis, range errors, use before init). */
#include <criterion/criterion.h>
#include <string.h>

#include "model/mbar_model.h"

static mbar_model fresh(int count)
{
    mbar_model m;
    mbar_model_reset(&m);
    cr_assert_eq(mbar_model_init(&m, count), MBAR_OK);
    return m;
}

Test(mbar_model, fresh_barrier_parities)
{
    /* Phase 0 is current and incomplete; "the phase before it" (parity 1) counts as complete,
     * which is why a producer's first wait on an empty slot uses parity 1. */
    mbar_model m = fresh(1);
    cr_expect_eq(m.phase, 0u);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 1), 1);
    cr_expect_eq(m.first_error, MBAR_OK);
}

Test(mbar_model, count_two_completes_after_two_arrivals)
{
    mbar_model m = fresh(2);
    cr_expect_eq(mbar_model_arrive(&m), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0, "one of two arrivals must not complete");
    cr_expect_eq(m.pending, 1);
    cr_expect_eq(mbar_model_arrive(&m), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 1);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 1), 0);
    cr_expect_eq(m.phase, 1u);
    cr_expect_eq(m.pending, 2, "pending resets to the init count");
}

Test(mbar_model, arrive_with_count)
{
    mbar_model m = fresh(128);
    cr_expect_eq(mbar_model_arrive_n(&m, 96), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0);
    cr_expect_eq(mbar_model_arrive_n(&m, 32), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 1);
}

Test(mbar_model, expect_tx_holds_phase_open_until_complete_tx)
{
    mbar_model m = fresh(1);
    cr_expect_eq(mbar_model_arrive_expect_tx(&m, 8192), MBAR_OK);
    cr_expect_eq(m.pending, 0);
    cr_expect_eq(m.tx, 8192);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0,
                 "all arrivals are in but 8192 bytes are not");
    cr_expect_eq(mbar_model_complete_tx(&m, 4096), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0);
    cr_expect_eq(mbar_model_complete_tx(&m, 4096), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 1);
    cr_expect_eq(m.tx, 0);
}

Test(mbar_model, separate_expect_tx_then_arrive)
{
    mbar_model m = fresh(1);
    cr_expect_eq(mbar_model_expect_tx(&m, 64), MBAR_OK);
    cr_expect_eq(mbar_model_complete_tx(&m, 64), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0,
                 "tx is back to 0 but the arrival is missing");
    cr_expect_eq(mbar_model_arrive(&m), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 1);
}

Test(mbar_model, complete_tx_before_expect_tx)
{
    /* The copy may land before the producer's arrive.expect_tx is processed: tx goes negative
     * and the expect brings it back to zero. */
    mbar_model m = fresh(1);
    cr_expect_eq(mbar_model_complete_tx(&m, 256), MBAR_OK);
    cr_expect_eq(m.tx, -256);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0);
    cr_expect_eq(mbar_model_arrive_expect_tx(&m, 256), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 1);
    cr_expect_eq(m.tx, 0);
    cr_expect_eq(m.first_error, MBAR_OK);
}

Test(mbar_model, expect_tx_has_no_completion_step)
{
    /* Arrivals done with tx at -64; an expect_tx of 64 zeroes both counts but, per the PTX text,
     * expect-tx does not complete a phase. The diagnosis says so. */
    mbar_model m = fresh(1);
    mbar_model_complete_tx(&m, 64);
    mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0);
    cr_expect_eq(mbar_model_expect_tx(&m, 64), MBAR_OK);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0);
    char d[256];
    mbar_model_diagnose(&m, d, sizeof d);
    cr_expect(strstr(d, "expect-tx has no completion step") != NULL, "%s", d);
}

Test(mbar_model, parity_flips_over_phases)
{
    mbar_model m = fresh(3);
    for (int k = 0; k < 9; k++) {
        int parity = k & 1;
        cr_expect_eq(mbar_model_try_wait_parity(&m, parity), 0, "phase %d before its arrivals", k);
        for (int a = 0; a < 3; a++) cr_assert_eq(mbar_model_arrive(&m), MBAR_OK);
        cr_expect_eq(mbar_model_try_wait_parity(&m, parity), 1, "phase %d after its arrivals", k);
        cr_expect_eq(mbar_model_try_wait_parity(&m, parity ^ 1), 0, "phase %d + 1 is current", k);
    }
    cr_expect_eq(m.phase, 9u);
    cr_expect_eq(m.over_arrivals, 0);
}

Test(mbar_model, over_arrival_is_reported)
{
    /* FG10: count set to the number of warps (4) while 8 threads arrive. The first 4 complete
     * phase 0; the next 4 land in phase 1 before any waiter saw phase 0 complete, and complete
     * phase 1 too: a waiter on parity 0 now sees "not complete" (phase 2 is current). */
    mbar_model m = fresh(4);
    for (int t = 0; t < 4; t++) cr_expect_eq(mbar_model_arrive(&m), MBAR_OK);
    for (int t = 4; t < 8; t++) cr_expect_eq(mbar_model_arrive(&m), MBAR_ERR_OVER_ARRIVAL);
    cr_expect_eq(m.over_arrivals, 4);
    cr_expect_eq(m.over_arrival_phase, 1u);
    cr_expect_eq(m.phase, 2u, "the extra arrivals were applied, as on hardware");
    cr_expect_eq(mbar_model_try_wait_parity(&m, 0), 0);
    cr_expect_eq(m.first_error, MBAR_ERR_OVER_ARRIVAL);
    char d[256];
    mbar_model_diagnose(&m, d, sizeof d);
    cr_expect(strstr(d, "4 over-arrivals, the first in phase 1") != NULL, "%s", d);
}

Test(mbar_model, arrival_after_observed_completion_is_not_over_arrival)
{
    mbar_model m = fresh(1);
    mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_wait(&m, 0), MBAR_OK);
    cr_expect_eq(mbar_model_arrive(&m), MBAR_OK, "phase 0 was observed before this arrive");
    cr_expect_eq(m.over_arrivals, 0);
    cr_expect_eq(mbar_model_arrive(&m), MBAR_ERR_OVER_ARRIVAL, "phase 1 was not observed");
}

Test(mbar_model, deadlock_diagnosis_text)
{
    /* FG10 the other way round: count = 128 threads, but only 4 warps' elected lanes arrive. */
    mbar_model m = fresh(128);
    for (int w = 0; w < 4; w++) mbar_model_arrive(&m);
    cr_expect_eq(mbar_model_wait(&m, 0), MBAR_DEADLOCK);
    char d[256];
    mbar_model_diagnose(&m, d, sizeof d);
    cr_expect_str_eq(d, "phase 0: 124 of 128 arrivals and 0 tx bytes outstanding");

    mbar_model t = fresh(1);
    mbar_model_arrive_expect_tx(&t, 1000);
    mbar_model_complete_tx(&t, 600);
    cr_expect_eq(mbar_model_wait(&t, 0), MBAR_DEADLOCK);
    mbar_model_diagnose(&t, d, sizeof d);
    cr_expect_str_eq(d, "phase 0: 0 of 1 arrivals and 400 tx bytes outstanding");
}

Test(mbar_model, init_range_errors)
{
    mbar_model m;
    mbar_model_reset(&m);
    cr_expect_eq(mbar_model_init(&m, 0), MBAR_ERR_COUNT_RANGE);
    cr_expect_eq(mbar_model_init(&m, -1), MBAR_ERR_COUNT_RANGE);
    cr_expect_eq(mbar_model_init(&m, 1 << 20), MBAR_ERR_COUNT_RANGE);
    cr_expect(!m.initialized);
    cr_expect_eq(mbar_model_init(&m, (1 << 20) - 1), MBAR_OK);
    cr_expect_eq(mbar_model_init(&m, 1), MBAR_ERR_REINIT);
    cr_expect_eq(m.expected, (1 << 20) - 1, "a rejected re-init leaves the barrier alone");
}

Test(mbar_model, tx_and_arrive_range_errors)
{
    mbar_model m = fresh(2);
    cr_expect_eq(mbar_model_expect_tx(&m, (1 << 20) - 1), MBAR_OK);
    cr_expect_eq(mbar_model_expect_tx(&m, 1), MBAR_ERR_TX_RANGE, "tx-count above 2^20-1");
    cr_expect_eq(mbar_model_arrive_expect_tx(&m, 1), MBAR_ERR_TX_RANGE);
    cr_expect_eq(m.pending, 2, "a rejected arrive.expect_tx does not arrive either");
    cr_expect_eq(mbar_model_expect_tx(&m, -5), MBAR_ERR_TX_RANGE);
    mbar_model n = fresh(1);
    cr_expect_eq(mbar_model_complete_tx(&n, (1 << 20) - 1), MBAR_OK);
    cr_expect_eq(mbar_model_complete_tx(&n, 1), MBAR_ERR_TX_RANGE, "tx-count below -(2^20-1)");
    mbar_model a = fresh(4);
    cr_expect_eq(mbar_model_arrive_n(&a, 0), MBAR_ERR_COUNT_RANGE);
    cr_expect_eq(mbar_model_arrive_n(&a, 5), MBAR_ERR_PENDING_UNDERFLOW);
    cr_expect_eq(a.pending, 4);
    cr_expect_eq(mbar_model_try_wait_parity(&a, 2), 0);
    cr_expect_eq(a.first_error, MBAR_ERR_COUNT_RANGE);
    cr_expect_eq(mbar_model_wait(&a, 2), MBAR_ERR_PARITY);
}

Test(mbar_model, use_before_init)
{
    mbar_model m;
    mbar_model_reset(&m);
    cr_expect_eq(mbar_model_arrive(&m), MBAR_ERR_UNINIT);
    cr_expect_eq(mbar_model_complete_tx(&m, 16), MBAR_ERR_UNINIT);
    cr_expect_eq(mbar_model_try_wait_parity(&m, 1), 0,
                 "no answer from a barrier that is not there");
    cr_expect_eq(mbar_model_wait(&m, 1), MBAR_ERR_UNINIT);
    cr_expect_eq(m.uninit_uses, 4);
    char d[128];
    mbar_model_diagnose(&m, d, sizeof d);
    cr_expect_str_eq(d, "barrier not initialised (4 operations before init)");
}

Test(mbar_model, script_run)
{
    const mbar_op s[] = {
        {MBAR_OP_INIT, 2},        {MBAR_OP_TRY_WAIT, 0}, {MBAR_OP_TRY_WAIT, 1},
        {MBAR_OP_ARRIVE, 0},      {MBAR_OP_TRY_WAIT, 0}, {MBAR_OP_ARRIVE_EXPECT_TX, 32},
        {MBAR_OP_TRY_WAIT, 0},    {MBAR_OP_COMPLETE_TX, 32}, {MBAR_OP_TRY_WAIT, 0},
        {MBAR_OP_TRY_WAIT, 1},
    };
    int r[8], want[] = {0, 1, 0, 0, 1, 0};
    cr_assert_eq(mbar_model_run(s, 10, r, 8), 6);
    for (int i = 0; i < 6; i++) cr_expect_eq(r[i], want[i], "answer %d", i);
}

Test(mbar_model, script_errors_stop_the_run)
{
    const mbar_op no_init[] = {{MBAR_OP_ARRIVE, 0}, {MBAR_OP_TRY_WAIT, 0}};
    int r[4];
    cr_expect_eq(mbar_model_run(no_init, 2, r, 4), -MBAR_ERR_UNINIT);
    const mbar_op bad[] = {{MBAR_OP_INIT, 1}, {42, 0}};
    cr_expect_eq(mbar_model_run(bad, 2, r, 4), -MBAR_ERR_BAD_OP);
    const mbar_op full[] = {{MBAR_OP_INIT, 1}, {MBAR_OP_TRY_WAIT, 0}, {MBAR_OP_TRY_WAIT, 1}};
    cr_expect_eq(mbar_model_run(full, 3, r, 1), -MBAR_ERR_RESULTS_FULL);
    /* over-arrival is reported but the script goes on, as the hardware would */
    const mbar_op over[] = {{MBAR_OP_INIT, 1}, {MBAR_OP_ARRIVE, 0}, {MBAR_OP_ARRIVE, 0},
                            {MBAR_OP_TRY_WAIT, 0}};
    mbar_model m;
    mbar_model_reset(&m);
    cr_expect_eq(mbar_model_exec(&m, over, 4, r, 4), 1);
    cr_expect_eq(r[0], 0, "two phases completed: phase 2 (parity 0) is current");
    cr_expect_eq(m.over_arrivals, 1);
}

Test(mbar_model, names)
{
    cr_expect_str_eq(mbar_status_name(MBAR_DEADLOCK), "MBAR_DEADLOCK");
    cr_expect_str_eq(mbar_status_name(MBAR_OK), "MBAR_OK");
    cr_expect_str_eq(mbar_status_name(-3), "MBAR_?");
    cr_expect_str_eq(mbar_status_name(MBAR_STATUS_COUNT), "MBAR_?");
    for (int s = 0; s < MBAR_STATUS_COUNT; s++)
        cr_expect(strcmp(mbar_status_name(s), "MBAR_?") != 0, "status %d has no name", s);
    cr_expect_str_eq(mbar_op_name(MBAR_OP_ARRIVE_EXPECT_TX), "ARRIVE_EXPECT_TX");
    cr_expect_str_eq(mbar_op_name(99), "?");
}
