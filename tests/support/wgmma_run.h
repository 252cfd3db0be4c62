/* One wgmma sequence on either side of the model/hardware comparison: the host emulator
 * (model/mma_emu.h) or the H200 through the conformance kernels (tests/gpu/kernels/wgmma_conf.h),
 * with the same inputs and the same output format. The footgun tests run their sm90 logic with
 * on_gpu = 0 everywhere (what the emulator predicts) and with on_gpu = 1 where an sm_90 GPU is. */
#ifndef FMHA_TEST_WGMMA_RUN_H
#define FMHA_TEST_WGMMA_RUN_H

#include <stdint.h>

#include "tests/gpu/kernels/wgmma_conf.h"

/* bf16 wgmma m64nNk16, `ksteps` steps, descs as in wgmma_conf_launch (start addresses relative to
 * the image), options as in wgmma_conf_opts; out [128 threads][n/2]. The plain SS case (no A
 * registers, accumulators 0, scale-d off first) goes through wgmma_conf_launch, which is already
 * confirmed bit-exact on the H200; the others through wgmma_conf_launch_opts. Returns 0, the
 * launcher's code, or 3 with the emulator's message printed. */
int wgmma_run(int on_gpu, const wgmma_conf_opts *o, const uint8_t *img, uint32_t bytes,
              const uint64_t *descs, int ksteps, float *out);

/* Registers [128][n/2] -> D [64][n] row-major through the accumulator fragment map. */
void wgmma_acc_to_matrix(const float *regs, int n, double *d);

/* RS A fragments of a [64 x k] matrix a (row-major values, exact in bf16) for every K step:
 * out[(s * 128 + thread) * 4 + r]. swap_pairs = 0 packs the even-k element in the low half (the
 * right order); 1 packs the pair the other way round (cvt.rn.bf16x2.f32 called as cvt(even, odd)). */
void wgmma_a_fragments(const double *a, int k, int swap_pairs, uint32_t *out);

#endif
