/* Launchers of the GPU smoke test kernels (tests/gpu/test_smoke.c). */
#ifndef FMHA_TEST_SMOKE_H
#define FMHA_TEST_SMOKE_H

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = a * i + b for i < n, on the device buffer out, written by a grid-stride loop.
 * Returns 0, or 1 after printing the CUDA error. */
int smoke_affine_launch(float *out, int n, float a, float b);

/* Which SASS architecture the running kernel was built for (__CUDA_ARCH__, e.g. 900). */
int smoke_arch_launch(int *arch_host);

#ifdef __cplusplus
}
#endif

#endif
