// cp.async: a thread's asynchronous 16-byte copy from global into SMEM (PTX ISA 9.7.9.25.3,
// sm_80 and later; same on sm_90a and sm_100a). Stage D gathers the pages of its FP8 cache with
// it: each chunk lands without passing through registers, and many are in flight per thread.
//   cp_async_16     copy 16 bytes, or fewer: src_bytes < 16 reads that many and zero-fills the
//                   rest, so src_bytes = 0 writes 16 zeros and reads nothing (the tail past a
//                   sequence's last token is never read: footgun FG18)
//   cp_async_wait_all  every cp.async of this thread has landed and is visible to it; other
//                   threads need a barrier after it, the async proxy (wgmma, tcgen05.mma) a
//                   fence.proxy.async too (device/smem.cuh)
//   cp_async_commit    close this thread's open copies into one group
//   cp_async_wait_group<N>  all but the N most recent groups have landed (the pipelined decode's
//                   load warp keeps the next tile in flight while it publishes the previous one)
#pragma once
#include <stdint.h>

#include "device/smem.cuh"

__device__ __forceinline__ void cp_async_16(void *smem_dst, const void *gsrc, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem_dst)), "l"(gsrc), "r"(src_bytes)
                 : "memory");
}

// 4 bytes (a scale), with the same zero fill.
__device__ __forceinline__ void cp_async_4(void *smem_dst, const void *gsrc, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(smem_dst)), "l"(gsrc), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N> __device__ __forceinline__ void cp_async_wait_group()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
