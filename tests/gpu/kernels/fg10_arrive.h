/* Launcher of the FG10 hardware kernel (tests/footguns/test_fg10_arrival_count.c). */
#ifndef FMHA_TEST_FG10_ARRIVE_H
#define FMHA_TEST_FG10_ARRIVE_H

#include "host/watchdog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Four producer warps (128 threads) each write their slot of a 128-int SMEM array and then arrive
 * on one mbarrier; warps 1-3 first spin for a while, so a consumer released early sees their
 * slots still unwritten. One consumer warp waits on the barrier (bounded: `probes`) and sums the
 * slots (an unwritten slot holds -1000000).
 *   init_count:   the barrier's arrival count (128 right; 4 = "one per warp", wrong)
 *   elected_only: 1 = only lane 0 of each producer warp arrives (4 arrivals), 0 = every thread
 * *sum gets the consumer's total (expected 0+1+...+127 = 8128). Returns the CUDA error code of the
 * launch (0 = success; a watchdog trap returns nonzero and fills *wd_host). */
int fg10_arrive_launch(int init_count, int elected_only, unsigned probes, int *sum, fmha_watchdog *wd_host,
                       fmha_watchdog *wd_dev);

#ifdef __cplusplus
}
#endif

#endif
