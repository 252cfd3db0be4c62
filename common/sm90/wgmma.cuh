// wgmma on sm_90a: the fence / commit / wait protocol around the generated MMA wrappers.
// PTX ISA 9.7.15.7 (wgmma.fence, wgmma.commit_group, wgmma.wait_group), hw_reference.md 9.2:
//   1. wgmma_fence() by every warp before the first wgmma and whenever the accumulator or A
//      registers were written by other instructions (a rescale, a P conversion);
//   2. the wgmma_m64n*() calls (asynchronous);
//   3. wgmma_commit() batches them into a group;
//   4. wgmma_wait<N>() until at most N groups are pending; registers of an unfinished group must
//      not be touched.
// SMEM written by ordinary stores needs fence_proxy_async() in each writing thread before the
// barrier that hands it to wgmma (PTX 9.7.15.4).
#pragma once

#include <stdint.h>

#include "sm90/wgmma_gen.cuh"

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// Generic-proxy SMEM writes -> visible to the async proxy (wgmma, tcgen05.mma, TMA). PTX 9.7.13.4.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
