// FG10 on hardware: an mbarrier whose arrival count does not match the arrivals.
#include <cuda_runtime.h>

#include "fg10_arrive.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
#include "device/mbarrier.cuh"
#define FG10_DEVICE 1
#else
#define FG10_DEVICE 0
#endif

__global__ void fg10_kernel(int init_count, int elected_only, unsigned probes, int *sum, fmha_watchdog *wd)
{
#if FG10_DEVICE
    __shared__ int slot[128];
    __shared__ __align__(8) uint64_t bar;
    const uint32_t b = mbar_smem_addr(&bar);
    if (threadIdx.x < 128) slot[threadIdx.x] = -1000000; // "never written"
    if (threadIdx.x == 0) {
        mbar_init(b, (uint32_t)init_count);
        mbar_fence_init();
    }
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp < 4) {
        if (warp > 0) { // a slow producer: plenty of time for an early release to show
            long long t0 = clock64();
            while (clock64() - t0 < 2000000) {
            }
        }
        slot[threadIdx.x] = threadIdx.x;
        __syncwarp();
        if (!elected_only || lane == 0) mbar_arrive(b); // release: the slot write is ordered before
    } else if (lane == 0) {
        mbar_wait_budget(b, 0, wd, 10, probes);
        int s = 0;
        for (int i = 0; i < 128; i++) s += ((volatile int *)slot)[i];
        *sum = s;
    }
#else
    (void)init_count; (void)elected_only; (void)probes; (void)sum; (void)wd;
#endif
}

extern "C" int fg10_arrive_launch(int init_count, int elected_only, unsigned probes, int *sum, fmha_watchdog *wd_host,
                                  fmha_watchdog *wd_dev)
{
    (void)wd_host;
    int *d = nullptr;
    cudaError_t e = cudaMalloc(&d, sizeof(int));
    if (e != cudaSuccess) return (int)e;
    cudaMemset(d, 0x7F, sizeof(int));
    fg10_kernel<<<1, 160>>>(init_count, elected_only, probes, d, wd_dev);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(sum, d, sizeof(int), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) cudaFree(d);
    return (int)e;
}
