// prefetch.global.L2 (PTX ISA 9.7.9.15, sm_20 and later): bring the line holding a global address
// into L2 without a register, an SMEM slot or a wait. Stage D's unpipelined kernels (--prefetch N)
// warm L2 for the KV tiles after the one they gather: the gather then waits on L2, not on HBM, and
// HBM sees the next tiles' requests while this tile is computed.
#pragma once

__device__ __forceinline__ void prefetch_l2(const void *gaddr)
{
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(__cvta_generic_to_global(gaddr)));
}
