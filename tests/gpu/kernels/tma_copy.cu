#include "tma_copy.h"

#include <cuda_runtime.h>

#include "device/mbarrier.cuh"
#include "device/smem.cuh"
#include "device/tma.cuh"

static __global__ void tma_copy_kernel(const __grid_constant__ CUtensorMap map, int rank, int c0, int c1, int c2, int c3,
                                       uint32_t box_bytes, uint32_t span, uint32_t owned, uint8_t *out, unsigned probes,
                                       fmha_watchdog *wd)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ uint64_t bar;
    extern __shared__ uint8_t raw[];
    uint8_t *buf = smem_align_base(raw, 1024);
    for (uint32_t i = threadIdx.x; i < owned; i += blockDim.x) buf[i] = 0xEE; // what the copy must leave alone
    fence_proxy_async(); // the poison (generic proxy) before the copy's writes (async proxy)
    if (threadIdx.x == 0) {
        mbar_init(smem_u32(&bar), 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(smem_u32(&bar), box_bytes);
        const uint32_t dst = smem_u32(buf), b = smem_u32(&bar);
        if (rank == 2) tma_load_2d(dst, &map, b, c0, c1);
        else if (rank == 3) tma_load_3d(dst, &map, b, c0, c1, c2);
        else tma_load_4d(dst, &map, b, c0, c1, c2, c3);
    }
    mbar_wait_budget(smem_u32(&bar), 0, wd, 1, probes);
    for (uint32_t i = threadIdx.x; i < span; i += blockDim.x) out[i] = buf[i];
#else
    (void)map; (void)rank; (void)c0; (void)c1; (void)c2; (void)c3; (void)box_bytes; (void)span; (void)out;
    (void)owned; (void)probes; (void)wd;
#endif
}

extern "C" int tma_copy_launch(const CUtensorMap *map, int rank, const int32_t *coords, uint32_t box_bytes, uint32_t span,
                               uint32_t owned, uint8_t *out, unsigned probes, fmha_watchdog *wd_dev)
{
    uint8_t *d_out = NULL;
    cudaError_t e = cudaMalloc((void **)&d_out, span);
    if (e != cudaSuccess) return (int)e;
    const unsigned smem = owned + 1024;
    e = cudaFuncSetAttribute(tma_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) {
        tma_copy_kernel<<<1, 128, smem>>>(*map, rank, coords[0], coords[1], rank > 2 ? coords[2] : 0,
                                          rank > 3 ? coords[3] : 0, box_bytes, span, owned, d_out, probes, wd_dev);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(out, d_out, span, cudaMemcpyDeviceToHost);
    cudaFree(d_out);
    return (int)e;
}
