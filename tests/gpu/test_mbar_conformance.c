/* mbarrier conformance: the same op scripts on a real shared-memory mbarrier (one thread, every
 * try_wait a single probe) and on the host model; the try_wait answers must agree with each other
 * and with the answers worked out by hand from the PTX semantics. Then the bounded wait: a wait
 * that can never complete must come back as a watchdog report and a failed launch, not a hang.
 * Runs on the Hopper machine (sm_90a code; the mbarrier PTX is the same on sm_100a). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "host/watchdog.h"
#include "kernels/mbar_script.h"
#include "model/mbar_model.h"
#include "test_util.h"

#define INIT(c) {MBAR_OP_INIT, (c)}
#define ARRIVE {MBAR_OP_ARRIVE, 0}
#define ARRIVE_N(c) {MBAR_OP_ARRIVE_N, (c)}
#define EXPECT_TX(b) {MBAR_OP_EXPECT_TX, (b)}
#define COMPLETE_TX(b) {MBAR_OP_COMPLETE_TX, (b)}
#define ARRIVE_EXPECT_TX(b) {MBAR_OP_ARRIVE_EXPECT_TX, (b)}
#define TW(p) {MBAR_OP_TRY_WAIT, (p)}

#define MAX_OPS 64
#define MAX_RES 32

typedef struct {
    const char *name;
    mbar_op ops[MAX_OPS];
    int want[MAX_RES]; /* by hand from the PTX rules; n_want of them */
    int n_want;
    int over; /* arrivals the model must report as over-arrivals */
} script;

static int count_ops(const script *s)
{
    int n = 0;
    while (n < MAX_OPS && s->ops[n].op != 0) n++;
    return n;
}

/* Hand answers, hardware and model must all agree, answer by answer. The model half runs before
 * the GPU check, so the hand answers are checked on every machine. */
static void run_script(const script *s)
{
    const int n = count_ops(s);
    int model[MAX_RES], hw[MAX_RES], n_hw = -1;
    mbar_model m;
    mbar_model_reset(&m);
    const int n_model = mbar_model_exec(&m, s->ops, n, model, MAX_RES);
    cr_assert_eq(n_model, s->n_want, "%s: the model gave %d answers (%s), the script has %d",
                 s->name, n_model, n_model < 0 ? mbar_status_name(-n_model) : "ok", s->n_want);
    for (int i = 0; i < s->n_want; i++)
        cr_expect_eq(model[i], s->want[i], "%s: answer %d: model %d, by hand %d", s->name, i,
                     model[i], s->want[i]);
    cr_expect_eq(m.over_arrivals, s->over, "%s: %d over-arrivals reported, %d expected", s->name,
                 m.over_arrivals, s->over);
    SKIP_WITHOUT_GPU(9);
    cr_assert_eq(mbar_script_launch(s->ops, n, hw, MAX_RES, &n_hw), 0, "%s: launch failed",
                 s->name);
    cr_assert_eq(n_hw, s->n_want, "%s: the kernel gave %d answers", s->name, n_hw);
    /* Both rows in every message: one differing answer is easier to place in the whole sequence. */
    char row_m[MAX_RES * 2 + 1], row_h[MAX_RES * 2 + 1];
    for (int i = 0; i < s->n_want; i++) {
        row_m[i * 2] = (char)('0' + model[i]);
        row_h[i * 2] = hw[i] == 0 || hw[i] == 1 ? (char)('0' + hw[i]) : '?';
        row_m[i * 2 + 1] = row_h[i * 2 + 1] = ' ';
    }
    row_m[s->n_want * 2] = row_h[s->n_want * 2] = '\0';
    for (int i = 0; i < s->n_want; i++)
        cr_expect_eq(hw[i], model[i],
                     "%s: answer %d: hardware %d, model %d\n  model    %s\n  hardware %s", s->name,
                     i, hw[i], model[i], row_m, row_h);
}

/* 1. A fresh barrier is in phase 0: parity 0 incomplete, parity 1 ("the phase before") complete. */
static const script fresh_parities = {
    "fresh_parities", {INIT(1), TW(0), TW(1), TW(0), TW(1)}, {0, 1, 0, 1}, 4, 0};

/* 2. Count 2: one arrival is not enough; the second completes phase 0 and pending resets, so
 *    phase 1 needs two more. */
static const script count_two = {
    "count_two",
    {INIT(2), TW(0), ARRIVE, TW(0), TW(1), ARRIVE, TW(0), TW(1), ARRIVE, TW(1), ARRIVE, TW(1),
     TW(0)},
    {0, 0, 1, 1, 0, 0, 1, 0},
    8,
    0};

/* 3. Parity flips over six phases of a count-1 barrier. */
static const script parity_flips = {
    "parity_flips",
    {INIT(1), ARRIVE, TW(0), TW(1), ARRIVE, TW(0), TW(1), ARRIVE, TW(0), TW(1), ARRIVE, TW(0),
     TW(1), ARRIVE, TW(0), TW(1), ARRIVE, TW(0), TW(1)},
    {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1},
    12,
    0};

/* 4. expect_tx first: all arrivals in, the phase stays open until the last byte is completed. */
static const script expect_then_complete = {
    "expect_then_complete",
    {INIT(1), EXPECT_TX(128), ARRIVE, TW(0), COMPLETE_TX(64), TW(0), COMPLETE_TX(64), TW(0),
     TW(1)},
    {0, 0, 1, 0},
    4,
    0};

/* 5. complete_tx first (the copy lands before the expect): tx goes negative, the later
 *    arrive.expect_tx brings it back to zero and completes the phase in one operation. */
static const script complete_then_expect = {
    "complete_then_expect",
    {INIT(1), COMPLETE_TX(256), TW(0), ARRIVE_EXPECT_TX(256), TW(0), TW(1)},
    {0, 1, 0},
    3,
    0};

/* 6. complete_tx first with a separate expect_tx: count 2, the first arrival goes in with tx at
 *    -64, the expect zeroes tx while an arrival is still missing, the second arrival completes. */
static const script complete_then_expect_split = {
    "complete_then_expect_split",
    {INIT(2), COMPLETE_TX(64), ARRIVE, TW(0), EXPECT_TX(64), TW(0), ARRIVE, TW(0)},
    {0, 0, 1},
    3,
    0};

/* 7. arrive.expect_tx over three phases, the bytes completed in pieces; the next phase's expect
 *    comes only after the previous completion was observed (the ring protocol's order). */
static const script arrive_expect_tx_phases = {
    "arrive_expect_tx_phases",
    {INIT(1), ARRIVE_EXPECT_TX(1024), TW(0), COMPLETE_TX(512), TW(0), COMPLETE_TX(512), TW(0),
     ARRIVE_EXPECT_TX(16), TW(1), COMPLETE_TX(16), TW(1), TW(0), ARRIVE_EXPECT_TX(65536),
     COMPLETE_TX(32768), COMPLETE_TX(16384), COMPLETE_TX(16384), TW(0), TW(1)},
    {0, 0, 1, 0, 1, 0, 1, 0},
    8,
    0};

/* 8. Over-arrival rolling into the next phase (FG10): count 2, three arrivals complete phase 0
 *    and leave phase 1 one arrival short; 18 arrivals on a count-4 barrier complete four phases
 *    and leave the fifth two short, so a parity-0 waiter sees "incomplete" although far more
 *    arrivals than the count came in. */
static const script over_arrival = {
    "over_arrival",
    {INIT(2), ARRIVE, ARRIVE, ARRIVE, TW(0), TW(1), ARRIVE, TW(1), TW(0)},
    {1, 0, 1, 0},
    4,
    1};
static const script over_arrival_many = {
    "over_arrival_many",
    {INIT(4), ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE,
     ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, ARRIVE, TW(0), TW(1), ARRIVE, ARRIVE,
     TW(0), TW(1)},
    {0, 1, 1, 0},
    4,
    14};

/* 9. arrive with a count (one elected lane per warp arriving for 32 threads): 128 in pieces,
 *    then one arrive of the whole count completes phase 1. */
static const script arrive_with_count = {
    "arrive_with_count",
    {INIT(128), ARRIVE_N(32), ARRIVE_N(32), ARRIVE_N(32), TW(0), ARRIVE_N(31), TW(0), ARRIVE,
     TW(0), ARRIVE_N(128), TW(1), TW(0)},
    {0, 0, 1, 1, 0},
    5,
    0};

/* 10. The count range edge: init with 2^20-1 and a tx-count of 2^20-1. */
static const script range_edges = {
    "range_edges",
    {INIT((1 << 20) - 1), ARRIVE_N((1 << 20) - 2), TW(0), ARRIVE_EXPECT_TX((1 << 20) - 1), TW(0),
     COMPLETE_TX((1 << 20) - 1), TW(0), TW(1)},
    {0, 0, 1, 0},
    4,
    0};

/* 11. tx with several arrivals: the bytes finish first, then the last arrival completes. */
static const script tx_then_last_arrival = {
    "tx_then_last_arrival",
    {INIT(3), ARRIVE_EXPECT_TX(64), ARRIVE, COMPLETE_TX(64), TW(0), ARRIVE, TW(0)},
    {0, 1},
    2,
    0};

Test(mbar_conformance, fresh_parities) { run_script(&fresh_parities); }
Test(mbar_conformance, count_two) { run_script(&count_two); }
Test(mbar_conformance, parity_flips) { run_script(&parity_flips); }
Test(mbar_conformance, expect_then_complete) { run_script(&expect_then_complete); }
Test(mbar_conformance, complete_then_expect) { run_script(&complete_then_expect); }
Test(mbar_conformance, complete_then_expect_split) { run_script(&complete_then_expect_split); }
Test(mbar_conformance, arrive_expect_tx_phases) { run_script(&arrive_expect_tx_phases); }
Test(mbar_conformance, over_arrival) { run_script(&over_arrival); }
Test(mbar_conformance, over_arrival_many) { run_script(&over_arrival_many); }
Test(mbar_conformance, arrive_with_count) { run_script(&arrive_with_count); }
Test(mbar_conformance, range_edges) { run_script(&range_edges); }
Test(mbar_conformance, tx_then_last_arrival) { run_script(&tx_then_last_arrival); }

#define WD_SITE 5u
#define WD_BUDGET (1u << 14)

Test(mbar_watchdog, completing_waits_do_not_fire, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    fmha_watchdog *h = NULL, *d = NULL;
    cr_assert_eq(watchdog_alloc(&h, &d), 0);
    int e = mbar_watchdog_launch(d, WD_SITE, WD_BUDGET, 0);
    cr_expect_eq(e, 0, "launch failed: %s", cudaGetErrorString((cudaError_t)e));
    char why[256];
    watchdog_describe(h, why, sizeof why);
    cr_expect(!watchdog_fired(h), "%s", why);
    watchdog_free(h);
}

Test(mbar_watchdog, wait_that_never_completes_is_reported, .timeout = 60)
{
    SKIP_WITHOUT_GPU(9);
    fmha_watchdog *h = NULL, *d = NULL;
    cr_assert_eq(watchdog_alloc(&h, &d), 0);
    int e = mbar_watchdog_launch(d, WD_SITE, WD_BUDGET, 1);
    cr_expect_neq(e, 0, "the stuck wait returned without an error");
    char why[256];
    watchdog_describe(h, why, sizeof why);
    cr_log_info("launch: %s; watchdog: %s", cudaGetErrorName((cudaError_t)e), why);
    cr_assert(watchdog_fired(h), "no report: %s", why);
    cr_expect_eq(h->code, (uint32_t)FMHA_WD_MBAR_WAIT);
    cr_expect_eq(h->complete, 1u, "%s", why);
    cr_expect_eq(h->site, WD_SITE, "%s", why);
    cr_expect_eq(h->parity, 1u, "%s", why);
    cr_expect(h->block_x == 0 && h->block_y == 1 && h->block_z == 0,
              "only block (0,1,0) has a missing arrival: %s", why);
    cr_expect_lt(h->thread, 128u, "%s", why);
    cr_expect_eq(h->probes, (uint64_t)WD_BUDGET, "%s", why);
    cr_expect(strstr(why, "deadlock: mbarrier wait at site 5 (parity 1) in block (0,1,0)") != NULL,
              "%s", why);
    /* No watchdog_free: the trap destroyed the context, and the process exit releases the
     * pinned page. */
}
