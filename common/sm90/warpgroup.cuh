// Warpgroup-level controls of the warp-specialised sm90 kernels (stage F):
//   wg_setmaxnreg_dec<N>  this warpgroup gives registers back: at most N a thread from here on
//   wg_setmaxnreg_inc<N>  this warpgroup takes registers: up to N a thread (blocks until the
//                         pool has them, i.e. until the producer's dec has run)
//                         (PTX ISA 9.7.17.1 setmaxnreg: sm_90a; .sync.aligned, so every thread of
//                         the warpgroup executes the same one; N a multiple of 8 in 24..256)
//   named_bar_sync<id>(n)   wait at hardware barrier `id` (1..15; 0 is __syncthreads) until n
//                         threads have arrived or synced there (bar.sync; warp-wide)
//   named_bar_arrive<id>(n) count this warp's arrival at barrier `id` without waiting (bar.arrive)
// A named barrier has no timeout: a wrong count hangs it (footgun FG12), so every use names its
// count where it is defined.
#pragma once
#include <stdint.h>

template <int N> __device__ __forceinline__ void wg_setmaxnreg_dec()
{
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: a multiple of 8 in 24..256");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N> __device__ __forceinline__ void wg_setmaxnreg_inc()
{
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: a multiple of 8 in 24..256");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

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
