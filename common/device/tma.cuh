// TMA (the Tensor Memory Accelerator) on sm_90a and sm_100a: bulk tensor copies from global
// memory into SMEM described by a CUtensorMap (host/tmap_encode.h builds it; pass it to the kernel
// as `const __grid_constant__ CUtensorMap`, and hand the copy its generic address).
//   loads  cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes: one thread
//          issues; the box lands in SMEM swizzled per the map (model/tma_model.h models the bytes)
//          and completes `box bytes` of transactions on the mbarrier, out-of-bounds elements
//          included; the waiter announced them with mbar_arrive_expect_tx (footgun FG15)
// The store direction (cp.async.bulk.tensor global.shared::cta, commit_group, wait_group.read:
// footgun FG22) joins this header with the stage that uses it and its hardware test.
// PTX ISA 9.7.9.25.5.1 (cp.async.bulk.tensor);
// notes/hardware.md section 10. Coordinates are in elements, innermost first, and may be negative
// or past the end (those elements are filled, not read).
#pragma once

#include <cuda.h>
#include <stdint.h>

__device__ __forceinline__ uint64_t tma_map_addr(const CUtensorMap *map) { return (uint64_t)(uintptr_t)map; }

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"(tma_map_addr(map)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
                 ::"r"(dst), "l"(tma_map_addr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2,
                                            int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
                 "[%6];\n" ::"r"(dst), "l"(tma_map_addr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
}
