/* Launchers of the mbarrier conformance kernels (tests/gpu/test_mbar_conformance.c). */
#ifndef FMHA_TEST_MBAR_SCRIPT_H
#define FMHA_TEST_MBAR_SCRIPT_H

#include "host/watchdog.h"
#include "model/mbar_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the script (host array of n ops) on one real shared-memory mbarrier, one thread, every
 * TRY_WAIT a single non-waiting probe. Writes up to max_results answers (0/1) to the host array
 * results and their number to *n_results. The script must open with INIT. Returns 0, or 1 after
 * printing the CUDA error. */
int mbar_script_launch(const mbar_op *ops, int n, int *results, int max_results, int *n_results);

/* Grid (1,2,1) of 128 threads; every thread waits twice on its block's barrier (count 128) with
 * mbar_wait_budget(budget probes) at watchdog site `site`. Phase 0 completes in both blocks.
 * With stall != 0, thread 0 of block (0,1,0) skips its phase-1 arrival, so that block's
 * parity-1 wait can never complete and the watchdog must fire. Returns the cudaError_t of the
 * launch and synchronisation (0 = success) without printing it: the error is the expected
 * outcome here. */
int mbar_watchdog_launch(fmha_watchdog *wd_dev, unsigned site, unsigned budget, int stall);

#ifdef __cplusplus
}
#endif

#endif
