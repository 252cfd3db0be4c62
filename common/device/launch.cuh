// Host-side launch helpers shared by every stage kernel (both architectures):
//   launch_kernel      raises the kernel's dynamic-SMEM limit to what it asks for (past 48 KiB a
//                      kernel must opt in), launches, and checks the launch;
//   launch_kernel_cluster  the same with a cluster size along x (a launch attribute)
//   dispatch_head_dim  turns the runtime head dim into the compile-time D a kernel is templated on
//                      (register arrays and unrolled MMA loops need it), over the list of head dims
//                      the stage supports; a D outside the list is an error, never a silent default.
// Both return 0, or 1 after printing what went wrong (the stage contract's "CUDA error").
#pragma once

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdint.h>

#include <type_traits>

#include "host/cuda_check.h"
#include "model/grid.h"

template <typename Params>
static int launch_kernel(void (*kernel)(Params), grid3 g, unsigned threads, uint32_t smem_bytes, const Params &p)
{
    const dim3 grid(g.x, g.y, g.z), block(threads);
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes));
    kernel<<<grid, block, smem_bytes>>>(p);
    CUDA_CHECK_LAUNCH();
    return 0;
}

// The same for a grid of clusters of `cluster_x` CTAs along x (g.x a multiple of it): the launch
// attribute, since the cluster size is a run-time choice (stage F's --cluster).
template <typename Params>
static int launch_kernel_cluster(void (*kernel)(Params), grid3 g, unsigned threads, uint32_t smem_bytes, const Params &p,
                                 unsigned cluster_x)
{
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(g.x, g.y, g.z);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem_bytes;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = cluster_x;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, p));
    CUDA_CHECK_LAUNCH();
    return 0;
}

// dispatch_head_dim<64, 128, 256>(d, [&](auto D) { return launch_kernel(kern<decltype(D)::value>, ...); })
// calls the functor with std::integral_constant<int, D> for the D equal to d.
template <int... Ds, typename F>
static int dispatch_head_dim(int d, F &&f)
{
    int rc = -1;
    ((d == Ds ? (rc = f(std::integral_constant<int, Ds>{}), true) : false) || ...);
    if (rc == -1) {
        fprintf(stderr, "dispatch_head_dim: D = %d has no compiled kernel (the stage's validate() should have refused it)\n", d);
        return 1;
    }
    return rc;
}
