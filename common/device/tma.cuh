// TMA (the Tensor Memory Accelerator) on sm_90a and sm_100a: bulk tensor copies from global
// memory into SMEM described by a CUtensorMap (host/tmap_encode.h builds it; pass it to the kernel
// as `const __grid_constant__ CUtensorMap`, and hand the copy its generic address).
//   loads  cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes: one thread
//          issues; the box lands in SMEM swizzled per the map (model/tma_model.h models the bytes)
//          and completes `box bytes` of transactions on the mbarrier, out-of-bounds elements
//          included; the waiter announced them with mbar_arrive_expect_tx (footgun FG15)
//   stores cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group: one thread issues; the box is
//          read from SMEM (swizzled as the map says) and written to global, elements outside the
//          tensor clipped. The SMEM must be made visible to the async proxy first
//          (fence_proxy_async after the generic stores, then the writers' barrier), and must not be
//          reused, nor the CTA exit, before tma_store_wait_read says the copy has read it
//          (footgun FG22; model/tma_model.h plays that ordering rule)
// PTX ISA 9.7.9.25.5.1 (cp.async.bulk.tensor), 9.7.9.25.6 (cp.async.bulk.commit_group,
// cp.async.bulk.wait_group);
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

__device__ __forceinline__ void tma_load_5d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2,
                                            int c3, int c4)
{
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, "
                 "%6}], [%7];\n" ::"r"(dst), "l"(tma_map_addr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2,
                                            int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
                 "[%6];\n" ::"r"(dst), "l"(tma_map_addr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void tma_store_4d(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 ::"l"(tma_map_addr(map)), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}

// Close the bulk group of the stores issued so far by this thread.
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Wait until at most N of this thread's bulk groups still have to read their SMEM.
template <int N>
__device__ __forceinline__ void tma_store_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
