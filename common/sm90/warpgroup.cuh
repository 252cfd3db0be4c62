// Warpgroup-level controls of the warp-specialised sm90 kernels (stage F):
//   wg_setmaxnreg_dec<N>  this warpgroup gives registers back: at most N a thread from here on
//   wg_setmaxnreg_inc<N>  this warpgroup takes registers: up to N a thread (blocks until the
//                         pool has them, i.e. until the producer's dec has run)
//                         (PTX ISA 9.7.17.1 setmaxnreg: sm_90a; .sync.aligned, so every thread of
//                         the warpgroup executes the same one; N a multiple of 8 in 24..256)
// The named barriers (bar.sync / bar.arrive) these kernels use with it: device/named_bar.cuh.
#pragma once
#include <stdint.h>

#include "device/named_bar.cuh"

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
