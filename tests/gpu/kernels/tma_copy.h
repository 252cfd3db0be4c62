/* One real TMA tile load for the TMA model's conformance test (tests/gpu/test_tma_conformance.c):
 * the box of `map` at `coords` lands in a 1024-byte aligned SMEM buffer that was first filled with
 * 0xEE, and the whole buffer (`span` bytes) comes back to the host, so both what the copy wrote
 * and what it left alone can be compared with common/model/tma_model.c. */
#ifndef FMHA_TEST_TMA_COPY_H
#define FMHA_TEST_TMA_COPY_H

#include <stdint.h>

#include <cuda.h>

#include "host/watchdog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rank 2..4; box_bytes: what the copy must complete on its mbarrier (the expect_tx); span: the
 * SMEM bytes returned in out (>= box_bytes, a multiple of 1024); owned (>= span): the SMEM the
 * kernel allocates and poisons, so a copy that writes past span stays inside the CTA's SMEM. The
 * wait is bounded (probes) and a timeout is reported through wd. Returns the CUDA error of the
 * launch (0 = success). */
int tma_copy_launch(const CUtensorMap *map, int rank, const int32_t *coords, uint32_t box_bytes, uint32_t span,
                    uint32_t owned, uint8_t *out, unsigned probes, fmha_watchdog *wd_dev);

#ifdef __cplusplus
}
#endif

#endif
