/* Inputs made on the device, for timing runs: a benchmark that does not check its result needs
 * fresh random inputs of the right distribution, not the host's copies of them, and generating
 * hundreds of MB on the host and uploading them was most of a benchmark run's time. The values
 * follow --init's modes (rand: N(0,1) rounded to bf16, from a counter-based hash of the seed and
 * the index; int, ramp, ones as on the host) but are not the host RNG's values: a checked run
 * always uses the host inputs. All return 0, or 1 after printing the CUDA error. */
#ifndef FMHA_DEVFILL_H
#define FMHA_DEVFILL_H

#include <stddef.h>
#include <stdint.h>

#include "host/options.h"

#ifdef __cplusplus
extern "C" {
#endif
int dev_alloc(void **dev, size_t bytes);
int dev_fill_bf16(void *dev, size_t n, init_t mode, uint64_t seed, int int_lo, int int_hi);
int dev_fill_u16(void *dev, size_t n, uint16_t value);
int dev_fill_u32(void *dev, size_t n, uint32_t value);
/* The FP8 cache's device quantiser (benchmark data): rows x d e4m3 codes and one f32 scale per row
 * (absmax / 448, saturating), from values with a magnitude that differs per row. d % 4 == 0. */
int dev_fill_e4m3_rows(void *codes, void *scales, size_t rows, int d, uint64_t seed);
/* The read-only bandwidth ceiling: one kernel reads all `bytes` (a multiple of 16) of buf once;
 * sink is a device word it almost never writes. Enqueued on the default stream. */
int dev_read_all(const void *buf, size_t bytes, void *sink);
#ifdef __cplusplus
}
#endif

#endif
