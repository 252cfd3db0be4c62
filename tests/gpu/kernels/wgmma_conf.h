/* Launcher of the wgmma conformance kernel (tests/gpu/test_wgmma_conformance.c). */
#ifndef FMHA_TEST_WGMMA_CONF_H
#define FMHA_TEST_WGMMA_CONF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One warpgroup copies the SMEM image (bytes, as laid out by the model, image offset 0 placed on a
 * 1024-byte boundary) into shared memory, then issues `ksteps` wgmma m64nNk16 (bf16) or m64nNk32
 * (e4m3, fp8 = 1) with the given descriptors (start addresses relative to the image; the kernel adds
 * the SMEM base), scale-d off for the first step, and writes every thread's raw accumulator
 * registers to out[thread * n/2 + reg]. n in {8, 16, 64, 128, 256}; trans_a/trans_b 0 or 1 (bf16
 * only). descs holds ksteps (A, B) pairs. Returns 0, 2 for an unsupported combination, or 1 after
 * printing a CUDA error. */
int wgmma_conf_launch(int n, int trans_a, int trans_b, int fp8, const uint8_t *img_host,
                      uint32_t img_bytes, const uint64_t *descs_host, int ksteps, float *out_host);

#ifdef __cplusplus
}
#endif

#endif
