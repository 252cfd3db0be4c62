// wgmma on sm_90a: the fence / commit / wait protocol around the generated MMA wrappers.
// PTX ISA 9.7.15.7 (wgmma.fence, wgmma.commit_group, wgmma.wait_group), notes/hardware.md section 6.4:
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

#include "device/smem.cuh" // fence_proxy_async, smem_u32: the SMEM side of every wgmma
#include "model/canonical.h"
#include "sm90/wgmma_gen.cuh"

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

// Pins the accumulator registers in place: the compiler may not move any access to them across
// this point. Around a wgmma whose accumulators other code also touches (O rescaled between two
// in-flight groups: stage F's overlap), it keeps those accesses outside the MMA's pipeline stage;
// without it ptxas serialises the wgmmas (C7514). CUTLASS's warpgroup_fence_operand does the same.
template <int N> __device__ __forceinline__ void wgmma_fence_operand(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(r[i])::"memory");
}

__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

// The m64nNk16 forms by N as a compile-time number (N = the head dim D for O += P V), so a kernel
// templated on D names one call instead of an if-constexpr chain per stage. N must be one of the
// generated widths; anything else fails to compile.
template <int N, int TB>
__device__ __forceinline__ void wgmma_m64nNk16_rs_bf16(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b_desc,
                                                       int scale_d)
{
    static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64nNk16_rs_bf16: N in {64, 128, 256}");
    if constexpr (N == 64) wgmma_m64n64k16_rs_bf16<TB>(d, a, b_desc, scale_d);
    else if constexpr (N == 128) wgmma_m64n128k16_rs_bf16<TB>(d, a, b_desc, scale_d);
    else wgmma_m64n256k16_rs_bf16<TB>(d, a, b_desc, scale_d);
}

// The e4m3 m64nNk32 SS forms by N as a compile-time number (stage D: N = the packed query rows of
// a CTA, 8..64). Both operands K-major: FP8 wgmma has no transpose (footgun FG20).
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_ss_e4m3(float (&d)[N / 2], uint64_t a_desc, uint64_t b_desc, int scale_d)
{
    static_assert(N == 8 || N == 16 || N == 32 || N == 64 || N == 128 || N == 256,
                  "wgmma_m64nNk32_ss_e4m3: N in {8, 16, 32, 64, 128, 256}");
    if constexpr (N == 8) wgmma_m64n8k32_ss_e4m3(d, a_desc, b_desc, scale_d);
    else if constexpr (N == 16) wgmma_m64n16k32_ss_e4m3(d, a_desc, b_desc, scale_d);
    else if constexpr (N == 32) wgmma_m64n32k32_ss_e4m3(d, a_desc, b_desc, scale_d);
    else if constexpr (N == 64) wgmma_m64n64k32_ss_e4m3(d, a_desc, b_desc, scale_d);
    else if constexpr (N == 128) wgmma_m64n128k32_ss_e4m3(d, a_desc, b_desc, scale_d);
    else wgmma_m64n256k32_ss_e4m3(d, a_desc, b_desc, scale_d);
}

// The e4m3 m64nNk32 RS forms by N (stage D's O += P V with P's codes in registers, N = D): A's
// four registers in wgmma_a8_map's layout, B K-major.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_rs_e4m3(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b_desc, int scale_d)
{
    static_assert(N == 64 || N == 128 || N == 256, "wgmma_m64nNk32_rs_e4m3: N in {64, 128, 256}");
    if constexpr (N == 64) wgmma_m64n64k32_rs_e4m3(d, a, b_desc, scale_d);
    else if constexpr (N == 128) wgmma_m64n128k32_rs_e4m3(d, a, b_desc, scale_d);
    else wgmma_m64n256k32_rs_e4m3(d, a, b_desc, scale_d);
}

// acc = A[a_row0 .. a_row0 + 63, 0 .. K) x B[0 .. N - 1, 0 .. K)^T, both operands K-major SMEM
// tiles whose step-0 descriptors are da and db: K/16 wgmma m64nNk16 SS (N = 128; stage F's 64-key
// tile at D = 256 and 176-key tile at D = 128), the first with scale-d 0 (it overwrites acc), each descriptor moved to
// its K step by one add (smem_tile_desc_sm90_k). This is S = Q K^T for one warpgroup's 64 query
// rows. Issues only: the caller fences before and commits and waits after, so a pipelined stage
// can overlap the wait.
template <int N, int K>
__device__ __forceinline__ void wgmma_m64nN_ss_bf16_over_k_desc(float (&acc)[N / 2], const smem_tile &ta, uint64_t da,
                                                                 const smem_tile &tb, uint64_t db)
{
    static_assert(N == 64 || N == 128 || N == 176, "wgmma_m64nN_ss_bf16_over_k_desc: N in {64, 128, 176}");
#pragma unroll
    for (int k = 0; k < K; k += 16) {
        const uint64_t a = smem_tile_desc_sm90_k(&ta, da, k), b = smem_tile_desc_sm90_k(&tb, db, k);
        if constexpr (N == 64) wgmma_m64n64k16_ss_bf16<0, 0>(acc, a, b, k > 0);
        else if constexpr (N == 128) wgmma_m64n128k16_ss_bf16<0, 0>(acc, a, b, k > 0);
        else wgmma_m64n176k16_ss_bf16<0, 0>(acc, a, b, k > 0);
    }
}

// N = 128 with the tiles named by SMEM address (ta at a, its rows from a_row0; tb at b).
template <int K>
__device__ __forceinline__ void wgmma_m64n128_ss_bf16_over_k(float (&acc)[64], const smem_tile &ta, uint32_t a, int a_row0,
                                                              const smem_tile &tb, uint32_t b)
{
    wgmma_m64nN_ss_bf16_over_k_desc<128, K>(acc, ta, smem_tile_desc_sm90(&ta, a, a_row0, 0), tb,
                                            smem_tile_desc_sm90(&tb, b, 0, 0));
}
