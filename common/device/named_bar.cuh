// Named barriers (PTX ISA 9.7.13.1 bar / barrier; sm_90a and sm_100a alike): a subset of a CTA's
// warps meets at hardware barrier `id` (1..15; 0 is __syncthreads).
//   named_bar_sync<id>(n)   wait until n threads have arrived or synced at `id` (bar.sync; warp-wide:
//                           a warp counts 32)
//   named_bar_arrive<id>(n) count this warp's arrival at `id` without waiting (bar.arrive)
// Arrivals past n start the next generation. A named barrier has no timeout: a warp that joins a
// barrier it is not part of releases it early and leaves an arrival nobody completes (footgun
// FG12), so every use names its count where it is defined.
#pragma once

// The id is a template argument: an immediate, so ptxas knows which barriers the kernel uses.
template <int ID> __device__ __forceinline__ void named_bar_sync(int threads)
{
    static_assert(ID >= 1 && ID <= 15, "named barrier ids 1..15 (0 is __syncthreads)");
    asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "r"(threads) : "memory");
}

template <int ID> __device__ __forceinline__ void named_bar_arrive(int threads)
{
    static_assert(ID >= 1 && ID <= 15, "named barrier ids 1..15 (0 is __syncthreads)");
    asm volatile("bar.arrive %0, %1;\n" ::"n"(ID), "r"(threads) : "memory");
}
