// tcgen05 on sm_100a: Tensor Memory allocation, the MMA, its commit, TMEM loads/stores and the
// ordering fences. One inline function per PTX instruction, each citing its PTX ISA 9.0 section
// (9.7.16.*; the same sections are 9.7.17.* in ISA 9.1+). notes/hardware.md sections 1-5 and 7.
//
// Issue granularity (PTX 9.7.16.5): alloc / dealloc / relinquish / ld / st / wait are warp-wide
// (.sync.aligned: every lane of the warp executes them, converged); mma and commit are issued by
// ONE thread: a whole warp executing tmem_mma would launch 32 MMAs and 32 commits.
// Completion (notes/hardware.md section 5.2): an MMA's result is visible after the mbarrier its commit arrives
// on completes and the waiter executes tcgen05_fence_after(); tcgen05.ld results after
// tmem_wait_ld(); tcgen05.st data after tmem_wait_st().
#pragma once

#include <stdint.h>

#include "sm100/tcgen05_ldst_gen.cuh"

// PTX 9.7.16.7.1 tcgen05.alloc: the whole warp allocates ncols columns (a power of two in
// [32, 512]) x all 128 lanes and the hardware writes the TMEM base address to SMEM at dst (a weak
// store: other warps read it only after a barrier).
__device__ __forceinline__ void tmem_alloc(uint32_t dst_smem, uint32_t ncols)
{
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(dst_smem), "r"(ncols)
                 : "memory");
}

// PTX 9.7.16.7.1 tcgen05.relinquish_alloc_permit: this CTA will not allocate again, so a CTA waiting
// on the same SM may proceed once we free.
__device__ __forceinline__ void tmem_relinquish()
{
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}

// PTX 9.7.16.7.1 tcgen05.dealloc: every allocated column must be freed before the kernel exits.
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr, uint32_t ncols)
{
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(ncols) : "memory");
}

// PTX 9.7.16.10.9.1 tcgen05.mma, kind::f16, A and B from SMEM descriptors ("SS").
// accumulate = enable-input-d: 0 -> D = A.B, 1 -> D += A.B (PTX 9.7.16.10.9.1; footgun FG05).
__device__ __forceinline__ void tmem_mma_f16_ss(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                uint32_t accumulate)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                 "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),
                 "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
                 : "memory");
}

// PTX 9.7.16.10.9.1 tcgen05.mma, kind::f8f6f4, A and B from SMEM descriptors ("SS"): the same
// operand form as kind::f16 above (`[d-tmem], a-desc, b-desc, idesc, enable-input-d`, the
// optional disable-output-lane vector left out); only the K of one MMA changes, 32 elements (32
// bytes of each 8-bit row) instead of 16, and the idesc's A/B format codes mean E4M3 0, E5M2 1,
// ... (PTX 9.7.16.4.2, Table 42; model/idesc.h idesc_e4m3_f32). Checked against CUTLASS
// include/cute/arch/mma_sm100_umma.hpp (SM100_MMA_F8F6F4_SS, which passes an all-zero
// disable-output-lane vector). accumulate = enable-input-d, as for kind::f16 (footgun FG05).
__device__ __forceinline__ void tmem_mma_f8f6f4_ss(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                                   uint32_t accumulate)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                 "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),
                 "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate)
                 : "memory");
}

// PTX 9.7.16.10.9.1 tcgen05.mma, kind::f16, A from TMEM ("TS"): A is always K-major there, packed
// two 16-bit values per 32-bit column (notes/hardware.md section 4.4).
__device__ __forceinline__ void tmem_mma_f16_ts(uint32_t d_tmem, uint32_t a_tmem, uint64_t b_desc, uint32_t idesc,
                                                uint32_t accumulate)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                 "tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n}\n" ::"r"(d_tmem),
                 "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate)
                 : "memory");
}

// PTX 9.7.16.12.1 tcgen05.commit: the mbarrier at bar_smem receives one arrive when every
// tcgen05.mma this thread issued before has completed. No multicast: a CTA without cluster peers
// must not pass a ctaMask (footgun FG11).
__device__ __forceinline__ void tmem_commit(uint32_t bar_smem)
{
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar_smem)
                 : "memory");
}

// PTX 9.7.16.8.5 tcgen05.wait::ld / wait::st: this thread's earlier loads / stores are complete.
__device__ __forceinline__ void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tmem_wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory"); }

// PTX 9.7.16.11.1 tcgen05.fence: order this thread's tcgen05 operations against the thread
// synchronisation (mbarrier, bar.sync) that follows (before_thread_sync) or precedes
// (after_thread_sync) it. A thread fences its own TMEM accesses.
__device__ __forceinline__ void tcgen05_fence_before() { asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory"); }
__device__ __forceinline__ void tcgen05_fence_after() { asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory"); }
