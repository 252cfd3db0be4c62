/* Host side of the deadlock watchdog: allocation in mapped pinned memory and the report text. */
#include "host/watchdog.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "host/cuda_check.h"

int watchdog_alloc(fmha_watchdog **host, fmha_watchdog **dev)
{
    *host = NULL;
    *dev = NULL;
    void *h = NULL, *d = NULL;
    /* Mapped: the kernel writes straight into host memory, so the report survives the trap that
     * destroys the context (device memory could no longer be copied out). */
    CUDA_CHECK(cudaHostAlloc(&h, sizeof(fmha_watchdog), cudaHostAllocMapped));
    memset(h, 0, sizeof(fmha_watchdog));
    cudaError_t e = cudaHostGetDevicePointer(&d, h, 0);
    if (e != cudaSuccess) {
        cudaFreeHost(h);
        CUDA_CHECK(e);
    }
    *host = h;
    *dev = d;
    return 0;
}

static int free_checked(fmha_watchdog *host)
{
    CUDA_CHECK(cudaFreeHost(host));
    return 0;
}

void watchdog_free(fmha_watchdog *host)
{
    if (host) (void)free_checked(host); /* CUDA_CHECK has printed any error */
}

int watchdog_fired(const fmha_watchdog *w)
{
    /* volatile: the device wrote this memory behind the compiler's back */
    return ((const volatile fmha_watchdog *)w)->code != FMHA_WD_QUIET;
}

void watchdog_describe(const fmha_watchdog *w, char *buf, size_t len)
{
    if (len == 0) return;
    fmha_watchdog r;
    memcpy(&r, (const void *)w, sizeof r);
    const char *partial = r.complete ? "" : " (report incomplete: the trap came first)";
    if (r.code == FMHA_WD_QUIET) {
        snprintf(buf, len, "watchdog quiet: no wait gave up");
    } else if (r.code == FMHA_WD_MBAR_WAIT) {
        snprintf(buf, len,
                 "deadlock: mbarrier wait at site %u (parity %u) in block (%u,%u,%u) thread %u "
                 "gave up after %llu probes%s",
                 r.site, r.parity, r.block_x, r.block_y, r.block_z, r.thread,
                 (unsigned long long)r.probes, partial);
    } else {
        snprintf(buf, len,
                 "watchdog code %u at site %u (parity %u) in block (%u,%u,%u) thread %u after "
                 "%llu probes%s",
                 r.code, r.site, r.parity, r.block_x, r.block_y, r.block_z, r.thread,
                 (unsigned long long)r.probes, partial);
    }
}
