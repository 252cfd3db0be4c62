/* Input tensors for the stages: bf16 data on the host plus the f32 value of every element (what the
 * references read). Modes (--init):
 *   rand  N(0,1) rounded to bf16: the default; fresh per seed.
 *   int   integers in [lo, hi]: sums stay exact in f32, so layout work can demand zero difference.
 *   ramp  a short periodic ramp (-1 .. +1 in steps of 1/8): easy to read in a dump.
 *   ones  all 1: the degenerate case, for eyeballing only. */
#ifndef FMHA_INIT_H
#define FMHA_INIT_H

#include <stddef.h>
#include <stdint.h>

#include "host/options.h"
#include "host/rng.h"

void init_bf16(uint16_t *dst, float *val, size_t n, init_t mode, rng_t *r, int int_lo, int int_hi);

/* Poison patterns: NaNs with a payload no arithmetic produces, so "still poison" means "never
 * written". */
#define POISON_F32  0x7FBADBADu
#define POISON_BF16 0x7FBBu

void poison_f32(float *p, size_t n);
void poison_bf16(uint16_t *p, size_t n);

/* How many elements still hold the poison (were never written). */
size_t poison_count_f32(const float *p, size_t n);
size_t poison_count_bf16(const uint16_t *p, size_t n);

#endif
