// wgmma conformance kernels: a real wgmma reads an SMEM image laid out by the host model, so the
// hardware result can be compared bit for bit with the emulator (model/mma_emu.c).
//   wgmma_conf_kernel      SS form, accumulators zeroed, scale-d off for the first step
//   wgmma_conf_opt_kernel  SS or RS form (A from registers), accumulators set to a given value,
//                          scale-d of the first step chosen by the caller (footguns FG05, FG07)
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "host/cuda_check.h"
#include "wgmma_conf.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900)
#include "sm90/wgmma.cuh"
#define HAVE_WGMMA 1
#else
#define HAVE_WGMMA 0
#endif

template <int N, int TA, int TB, int FP8>
__global__ void __launch_bounds__(128) wgmma_conf_kernel(const uint8_t *img, uint32_t img_bytes,
                                                         const uint64_t *descs, int ksteps, float *out)
{
#if HAVE_WGMMA
    extern __shared__ uint8_t smem_raw[];
    // The image must start on a 1024-byte boundary so the swizzle pattern is anchored where the
    // model anchored it (descriptors carry base offset 0).
    uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    for (uint32_t i = threadIdx.x; i < img_bytes; i += blockDim.x) smem[i] = img[i];
    fence_proxy_async(); // generic-proxy stores -> visible to the wgmma (async proxy)
    __syncthreads();
    const uint64_t base = smem_u32(smem) >> 4;
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; i++) d[i] = 0.0f;
    wgmma_fence();
    for (int s = 0; s < ksteps; s++) {
        uint64_t a = descs[2 * s] + base, b = descs[2 * s + 1] + base;
        if constexpr (FP8) {
            if constexpr (N == 8) wgmma_m64n8k32_ss_e4m3(d, a, b, s > 0);
            else if constexpr (N == 16) wgmma_m64n16k32_ss_e4m3(d, a, b, s > 0);
            else if constexpr (N == 64) wgmma_m64n64k32_ss_e4m3(d, a, b, s > 0);
            else if constexpr (N == 128) wgmma_m64n128k32_ss_e4m3(d, a, b, s > 0);
            else wgmma_m64n256k32_ss_e4m3(d, a, b, s > 0);
        } else {
            if constexpr (N == 8) wgmma_m64n8k16_ss_bf16<TA, TB>(d, a, b, s > 0);
            else if constexpr (N == 16) wgmma_m64n16k16_ss_bf16<TA, TB>(d, a, b, s > 0);
            else if constexpr (N == 64) wgmma_m64n64k16_ss_bf16<TA, TB>(d, a, b, s > 0);
            else if constexpr (N == 128) wgmma_m64n128k16_ss_bf16<TA, TB>(d, a, b, s > 0);
            else wgmma_m64n256k16_ss_bf16<TA, TB>(d, a, b, s > 0);
        }
    }
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < N / 2; i++) out[threadIdx.x * (N / 2) + i] = d[i];
#else
    (void)img; (void)img_bytes; (void)descs; (void)ksteps; (void)out;
#endif
}

template <int N, int TA, int TB, int FP8>
static int launch(const uint8_t *img, uint32_t bytes, const uint64_t *descs, int ksteps, float *out)
{
    const size_t smem = bytes + 1024;
    CUDA_CHECK(cudaFuncSetAttribute(wgmma_conf_kernel<N, TA, TB, FP8>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    wgmma_conf_kernel<N, TA, TB, FP8><<<1, 128, smem>>>(img, bytes, descs, ksteps, out);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return 0;
}

template <int N>
static int launch_n(int ta, int tb, int fp8, const uint8_t *img, uint32_t bytes, const uint64_t *descs,
                    int ksteps, float *out)
{
    if (fp8) return (ta || tb) ? 2 : launch<N, 0, 0, 1>(img, bytes, descs, ksteps, out);
    if (!ta && !tb) return launch<N, 0, 0, 0>(img, bytes, descs, ksteps, out);
    if (!ta && tb) return launch<N, 0, 1, 0>(img, bytes, descs, ksteps, out);
    if (ta && !tb) return launch<N, 1, 0, 0>(img, bytes, descs, ksteps, out);
    return launch<N, 1, 1, 0>(img, bytes, descs, ksteps, out);
}

extern "C" int wgmma_conf_launch(int n, int trans_a, int trans_b, int fp8, const uint8_t *img_host,
                                 uint32_t img_bytes, const uint64_t *descs_host, int ksteps, float *out_host)
{
    uint8_t *img = nullptr;
    uint64_t *descs = nullptr;
    float *out = nullptr;
    const size_t out_bytes = sizeof(float) * 128 * (size_t)(n / 2);
    CUDA_CHECK(cudaMalloc(&img, img_bytes));
    CUDA_CHECK(cudaMalloc(&descs, sizeof(uint64_t) * 2 * (size_t)ksteps));
    CUDA_CHECK(cudaMalloc(&out, out_bytes));
    CUDA_CHECK(cudaMemcpy(img, img_host, img_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(descs, descs_host, sizeof(uint64_t) * 2 * (size_t)ksteps, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(out, 0xFF, out_bytes)); // poison: NaN in every register slot
    int rc;
    switch (n) {
    case 8: rc = launch_n<8>(trans_a, trans_b, fp8, img, img_bytes, descs, ksteps, out); break;
    case 16: rc = launch_n<16>(trans_a, trans_b, fp8, img, img_bytes, descs, ksteps, out); break;
    case 64: rc = launch_n<64>(trans_a, trans_b, fp8, img, img_bytes, descs, ksteps, out); break;
    case 128: rc = launch_n<128>(trans_a, trans_b, fp8, img, img_bytes, descs, ksteps, out); break;
    case 256: rc = launch_n<256>(trans_a, trans_b, fp8, img, img_bytes, descs, ksteps, out); break;
    default: rc = 2;
    }
    if (rc == 0) CUDA_CHECK(cudaMemcpy(out_host, out, out_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(img));
    CUDA_CHECK(cudaFree(descs));
    CUDA_CHECK(cudaFree(out));
    return rc;
}

// ---------------------------------------------------------------------------------------------
// The options kernel. RS: every A fragment is loaded before the first wgmma_fence, so no A
// register is written while a wgmma that reads it may be in flight (PTX 9.7.15.7.1); the K-step
// loop is unrolled to WGMMA_CONF_MAX_KSTEPS so the fragments stay in registers.
template <int N, int TB, int RS>
__global__ void __launch_bounds__(128) wgmma_conf_opt_kernel(const uint8_t *img, uint32_t img_bytes,
                                                             const uint64_t *descs, const uint32_t *a_regs,
                                                             int ksteps, float init_value, int scale_d_first,
                                                             float *out)
{
#if HAVE_WGMMA
    static_assert(N == 64, "instantiated for N = 64 only");
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    for (uint32_t i = threadIdx.x; i < img_bytes; i += blockDim.x) smem[i] = img[i];
    fence_proxy_async();
    __syncthreads();
    const uint64_t base = smem_u32(smem) >> 4;
    uint32_t a[WGMMA_CONF_MAX_KSTEPS][4];
#pragma unroll
    for (int s = 0; s < WGMMA_CONF_MAX_KSTEPS; s++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            a[s][r] = (RS && s < ksteps) ? a_regs[((size_t)s * 128 + threadIdx.x) * 4 + r] : 0u;
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; i++) d[i] = init_value;
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < WGMMA_CONF_MAX_KSTEPS; s++) {
        if (s < ksteps) {
            const int scale_d = (s > 0 || scale_d_first) ? 1 : 0;
            const uint64_t b = descs[2 * s + 1] + base;
            if constexpr (RS) wgmma_m64n64k16_rs_bf16<TB>(d, a[s], b, scale_d);
            else wgmma_m64n64k16_ss_bf16<0, TB>(d, descs[2 * s] + base, b, scale_d);
        }
    }
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < N / 2; i++) out[threadIdx.x * (N / 2) + i] = d[i];
#else
    (void)img; (void)img_bytes; (void)descs; (void)a_regs; (void)ksteps; (void)init_value;
    (void)scale_d_first; (void)out;
#endif
}

template <int N, int TB, int RS>
static int launch_opt(const uint8_t *img, uint32_t bytes, const uint64_t *descs, const uint32_t *a_regs,
                      int ksteps, float init_value, int scale_d_first, float *out)
{
    const size_t smem = bytes + 1024;
    CUDA_CHECK(cudaFuncSetAttribute(wgmma_conf_opt_kernel<N, TB, RS>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    wgmma_conf_opt_kernel<N, TB, RS><<<1, 128, smem>>>(img, bytes, descs, a_regs, ksteps, init_value,
                                                       scale_d_first, out);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return 0;
}

extern "C" int wgmma_conf_launch_opts(const wgmma_conf_opts *o, const uint8_t *img_host, uint32_t img_bytes,
                                      const uint64_t *descs_host, int ksteps, float *out_host)
{
    if (o->n != 64 || o->trans_a != 0 || o->trans_b != 1 || ksteps < 1 || ksteps > WGMMA_CONF_MAX_KSTEPS)
        return 2;
    uint8_t *img = nullptr;
    uint64_t *descs = nullptr;
    uint32_t *a_regs = nullptr;
    float *out = nullptr;
    const size_t out_bytes = sizeof(float) * 128 * (size_t)(o->n / 2);
    const size_t a_bytes = sizeof(uint32_t) * 4 * 128 * (size_t)ksteps;
    CUDA_CHECK(cudaMalloc(&img, img_bytes));
    CUDA_CHECK(cudaMalloc(&descs, sizeof(uint64_t) * 2 * (size_t)ksteps));
    CUDA_CHECK(cudaMalloc(&out, out_bytes));
    CUDA_CHECK(cudaMemcpy(img, img_host, img_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(descs, descs_host, sizeof(uint64_t) * 2 * (size_t)ksteps, cudaMemcpyHostToDevice));
    if (o->a_regs) {
        CUDA_CHECK(cudaMalloc(&a_regs, a_bytes));
        CUDA_CHECK(cudaMemcpy(a_regs, o->a_regs, a_bytes, cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMemset(out, 0xFF, out_bytes)); // poison: NaN in every register slot
    const int rc = o->a_regs
        ? launch_opt<64, 1, 1>(img, img_bytes, descs, a_regs, ksteps, o->init_value, o->scale_d_first, out)
        : launch_opt<64, 1, 0>(img, img_bytes, descs, a_regs, ksteps, o->init_value, o->scale_d_first, out);
    if (rc == 0) CUDA_CHECK(cudaMemcpy(out_host, out, out_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(img));
    CUDA_CHECK(cudaFree(descs));
    CUDA_CHECK(cudaFree(out));
    if (a_regs) CUDA_CHECK(cudaFree(a_regs));
    return rc;
}
