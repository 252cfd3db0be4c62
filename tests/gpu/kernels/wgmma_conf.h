/* Launchers of the wgmma conformance kernels (tests/gpu/test_wgmma_conformance.c, footgun tests). */
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

/* The most K steps wgmma_conf_launch_opts takes (its A registers are all loaded before the first
 * wgmma, so they are held in a fixed-size register array). */
#define WGMMA_CONF_MAX_KSTEPS 8

/* What wgmma_conf_launch_opts changes against wgmma_conf_launch (bf16 only):
 *   a_regs         NULL: A from SMEM (SS form, descs[2s]); otherwise the RS form: A from registers,
 *                  a_regs[(s * 128 + thread) * 4 + r] is b32 register r of `thread` for K step s
 *                  (the fragment of model/frag_map.h wgmma_a_map); descs[2s] is then ignored.
 *   init_value     every accumulator register starts at this value (0 in wgmma_conf_launch): what
 *                  "registers not zeroed" looks like, made deterministic.
 *   scale_d_first  scale-d of the first wgmma (0 in wgmma_conf_launch; later steps always 1). */
typedef struct {
    int n, trans_a, trans_b;
    const uint32_t *a_regs;
    float init_value;
    int scale_d_first;
} wgmma_conf_opts;

/* Same contract as wgmma_conf_launch. Instantiated only for what the footgun tests use: n = 64,
 * trans_a = 0, trans_b = 1 (P K-major or in registers, V MN-major), ksteps <= WGMMA_CONF_MAX_KSTEPS;
 * anything else returns 2. */
int wgmma_conf_launch_opts(const wgmma_conf_opts *o, const uint8_t *img_host, uint32_t img_bytes,
                           const uint64_t *descs_host, int ksteps, float *out_host);

#ifdef __cplusplus
}
#endif

#endif
