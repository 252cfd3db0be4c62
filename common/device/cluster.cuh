// Thread-block clusters on sm_90a: two CTAs that share the copies of one K/V tile.
//   cluster_ctarank        %cluster_ctarank, this CTA's place in its cluster
//   cluster_sync           barrier.cluster arrive + wait, every thread of every CTA of the cluster
//   mbar_arrive_cluster    mbarrier.arrive on the barrier at the same SMEM offset in a peer CTA
//                          (mapa turns this CTA's shared address into the peer's window)
//   tma_load_4d_multicast  one 4-D box read once and written at the same SMEM offset of every CTA
//                          in a mask, each CTA's barrier at that offset completing the box's bytes
// The rules the callers keep (stage F's --cluster 2, stages/F_pipeline/fmha_sm90.cu):
//   - a peer's barriers must be initialised before anyone arrives on them or multicasts into that
//     CTA: mbarrier.init, fence.mbarrier_init.release.cluster, then cluster_sync;
//   - a CTA must not exit while a peer may still arrive on its barriers: cluster_sync at the end;
//   - a slot both CTAs read is refilled only after both CTAs' readers released it (each reader
//     arrives on its own CTA's empty barrier and on the peer's): the cross-CTA form of FG23.
// PTX ISA 9.7.9.25.5.1 (cp.async.bulk.tensor, .multicast::cluster), 9.7.13.15.13 (mbarrier.arrive,
// .shared::cluster), 9.7.9.21 (mapa), 9.7.13.2 (barrier.cluster), 10 (%cluster_ctarank).
#pragma once

#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "thread-block clusters need sm_90 or newer"
#endif

#include "device/tma.cuh"

__device__ __forceinline__ uint32_t cluster_ctarank(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// .release / .acquire: each CTA's mbarrier inits (and anything else before it) are visible to its
// peers after the wait. Every thread of the cluster must arrive (the .aligned form: convergent warps).
__device__ __forceinline__ void cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// The default .release.cta arrive, on a peer's barrier: it orders nothing but this thread's own
// earlier accesses, which is all a slot release needs (the MMAs that read the slot have completed
// before it; the peer's producer only overwrites the slot after it).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank)
{
    asm volatile("{\n\t.reg .b32 ra;\n\t"
                 "mapa.shared::cluster.u32 ra, %0, %1;\n\t"
                 "mbarrier.arrive.shared::cluster.b64 _, [ra];\n\t}" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}

__device__ __forceinline__ void tma_load_4d_multicast(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1,
                                                      int c2, int c3, uint16_t mask)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(dst),
                 "l"(tma_map_addr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "h"(mask)
                 : "memory");
}
