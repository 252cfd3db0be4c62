#include "host/device.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

void gpu_query(gpu_info *g)
{
    memset(g, 0, sizeof *g);
    cudaDriverGetVersion(&g->driver_version);
    cudaRuntimeGetVersion(&g->runtime_version);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        snprintf(g->why_absent, sizeof g->why_absent, "cudaGetDeviceCount: %s",
                 e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
        cudaGetLastError(); /* clear the sticky-free error so later calls start clean */
        return;
    }
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        snprintf(g->why_absent, sizeof g->why_absent, "cudaGetDeviceProperties failed");
        return;
    }
    g->present = 1;
    g->cc_major = p.major;
    g->cc_minor = p.minor;
    snprintf(g->name, sizeof g->name, "%s", p.name);
    g->sm_count = p.multiProcessorCount;
    g->l2_bytes = p.l2CacheSize;
    g->smem_optin = p.sharedMemPerBlockOptin;
    cudaDeviceGetAttribute(&g->sm_clock_khz, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&g->mem_clock_khz, cudaDevAttrMemoryClockRate, 0);
}
