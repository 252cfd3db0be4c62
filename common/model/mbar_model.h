/* Host model of one mbarrier (PTX ISA 9.7.13.15), and the op script shared with the hardware
 * conformance kernel (tests/gpu/kernels/mbar_script.cu).
 *
 * Semantics (PTX 9.7.13.15.4-9.7.13.15.7):
 *   - init(count): phase 0, pending = count, tx-count = 0; count in [1, 2^20-1].
 *   - arrive(n): pending -= n; expect_tx(b): tx += b; complete_tx(b): tx -= b;
 *     arrive_expect_tx(b) = expect_tx(b) then arrive(1), as one operation.
 *   - The current phase completes when pending == 0 and tx == 0, checked after an arrive-on or a
 *     complete-tx (the PTX text gives expect-tx no "potentially completing" step). Completion
 *     increments the phase and resets pending to the init count; tx is already 0.
 *   - tx may go negative (a complete_tx before its expect_tx is legal); range +-(2^20-1).
 *   - try_wait_parity(P) is true iff the phase with parity P has completed, i.e. the current
 *     phase's parity differs from P. A fresh barrier answers true for 1 and false for 0.
 *
 * Beyond the hardware, the model reports what the hardware would silently do:
 *   - use before init;
 *   - over-arrival: PTX requires, for every phase, a try_wait that returns true before any
 *     arrive-on of the next phase. An arrive that lands in phase k+1 while no try_wait has yet
 *     observed phase k's completion means more arrivals per round than the init count (FG10).
 *     The arrive is still applied, as on hardware; the model counts it;
 *   - a phase that cannot complete: mbar_model_diagnose says what is outstanding, and
 *     mbar_model_wait (for single-threaded scripts, where nothing else will arrive) returns
 *     MBAR_DEADLOCK instead of spinning. */
#ifndef FMHA_MBAR_MODEL_H
#define FMHA_MBAR_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MBAR_COUNT_MAX ((1 << 20) - 1) /* expected / pending arrival count and |tx-count| */
#define MBAR_TX_MAX ((1 << 20) - 1)

typedef enum {
    MBAR_OK = 0,
    MBAR_ERR_UNINIT,            /* an operation on a barrier that was never initialised */
    MBAR_ERR_REINIT,            /* init on a live barrier: undefined in PTX (inval first) */
    MBAR_ERR_COUNT_RANGE,       /* init / arrive count outside [1, 2^20-1] */
    MBAR_ERR_PENDING_UNDERFLOW, /* one arrive with a count larger than the pending arrivals */
    MBAR_ERR_TX_RANGE,          /* tx argument or resulting tx-count outside +-(2^20-1) */
    MBAR_ERR_PARITY,            /* a parity other than 0 or 1 */
    MBAR_ERR_OVER_ARRIVAL,      /* arrive in phase k+1 before phase k's completion was observed */
    MBAR_DEADLOCK,              /* mbar_model_wait: phase incomplete, nothing else will arrive */
    MBAR_ERR_BAD_OP,            /* an unknown script op */
    MBAR_ERR_RESULTS_FULL,      /* more TRY_WAIT ops than result slots */
    MBAR_STATUS_COUNT
} mbar_status;

/* Name of a status ("MBAR_DEADLOCK"), or "MBAR_?" for an unknown value. */
const char *mbar_status_name(int status);

typedef struct {
    int initialized;
    int32_t expected;  /* init count: arrivals per phase */
    int32_t pending;   /* arrivals still missing in the current phase */
    int32_t tx;        /* tx-count of the current phase (bytes in this project) */
    uint32_t phase;    /* current phase number; its parity is phase & 1 */
    int observed;      /* a try_wait answered true since the last phase completion */
    /* reports */
    int uninit_uses;
    int over_arrivals;            /* arrivals (in count units) that landed early */
    uint32_t over_arrival_phase;  /* the phase the first one landed in */
    mbar_status first_error;      /* the first non-OK status any operation returned */
} mbar_model;

/* Zeroes the model: not initialised, no reports. */
void mbar_model_reset(mbar_model *m);

mbar_status mbar_model_init(mbar_model *m, int count);
mbar_status mbar_model_arrive(mbar_model *m);
mbar_status mbar_model_arrive_n(mbar_model *m, int count);
mbar_status mbar_model_expect_tx(mbar_model *m, int bytes);
mbar_status mbar_model_complete_tx(mbar_model *m, int bytes);
mbar_status mbar_model_arrive_expect_tx(mbar_model *m, int bytes);

/* One probe, as mbarrier.try_wait.parity: 1 if the phase with this parity has completed, else 0.
 * A bad parity or an uninitialised barrier answers 0 and is recorded in first_error. */
int mbar_model_try_wait_parity(mbar_model *m, int parity);

/* A wait at this point of a single-threaded script: MBAR_OK if the phase has completed, else
 * MBAR_DEADLOCK (no other thread exists to complete it), or the error of the probe. */
mbar_status mbar_model_wait(mbar_model *m, int parity);

/* What the current phase still waits for, e.g. "phase 0: 124 of 128 arrivals and 0 tx bytes
 * outstanding", followed by any reports ("; 3 over-arrivals, the first in phase 1"). */
void mbar_model_diagnose(const mbar_model *m, char *buf, size_t len);

/* ---- scripts ------------------------------------------------------------------------------ */

enum {
    MBAR_OP_INIT = 1,         /* arg: arrival count */
    MBAR_OP_ARRIVE,           /* arg unused */
    MBAR_OP_ARRIVE_N,         /* arg: count */
    MBAR_OP_EXPECT_TX,        /* arg: bytes */
    MBAR_OP_COMPLETE_TX,      /* arg: bytes */
    MBAR_OP_ARRIVE_EXPECT_TX, /* arg: bytes */
    MBAR_OP_TRY_WAIT,         /* arg: parity; one probe, its 0/1 answer goes to the results */
};

typedef struct {
    int op;
    int arg;
} mbar_op;

/* Name of an op ("ARRIVE_N"), or "?" . */
const char *mbar_op_name(int op);

/* Runs a script on m (which carries state between calls; reset it first for a fresh barrier).
 * Over-arrivals are applied and counted, as the hardware would apply them; any other error stops
 * the script. Returns the number of TRY_WAIT answers written to results, or -(mbar_status) of the
 * error that stopped it. */
int mbar_model_exec(mbar_model *m, const mbar_op *ops, int n, int *results, int max_results);

/* mbar_model_exec on a fresh model. */
int mbar_model_run(const mbar_op *ops, int n, int *results, int max_results);

#ifdef __cplusplus
}
#endif

#endif
