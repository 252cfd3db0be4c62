// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage A, Hopper port (sm_90a): the same tile as qk_sm100.cu with wgmma instead of tcgen05.
//
// Key ideas (the first stage: it builds on nothing but common/):
//   1. operand tiles in the canonical SMEM layout (K-major, 128-byte swizzle), the same as sm100,
//      with descriptors in the sm90 format
//   2. wgmma m64n128k16 issued by a whole warpgroup, completion tracked by commit/wait_group
//   3. the accumulator in registers (Hopper has no TMEM), stored through the fragment map
//   4. the kernel templated on D so the wgmma loop unrolls and no ordinary instruction touches
//      the accumulators inside the pipeline (ptxas would serialise the wgmmas: warning C7515)
//
// Math: S[b, h, i, j] = scale * sum_d Q[b, h, i, d] * K[b, h, j, d]   (scale = 1/sqrt(D))
// One CTA of 256 threads (two warpgroups) computes one 128 x 128 tile of S; warpgroup g owns Q
// rows 64g..64g+63 and issues wgmma m64n128k16 over K = D in steps of 16: the 64 x 128 f32
// accumulator of a warpgroup lives in registers, 64 per thread.
//
// Operands and layouts (the same SMEM tiles as sm100, descriptors in the sm90 format):
//   Q  [B, H, Sq, D]  bf16 row-major -> SMEM [128 x D] K-major, 128B swizzle (A: rows 64g..)
//   K  [B, H, Skv, D] bf16 row-major -> SMEM [128 x D] K-major, 128B swizzle (B)
//   S  accumulator: registers, thread t reg i = (row, col) of model/frag_map.h wgmma_acc_map
//   S  [B, H, Sq, Skv] f32 row-major in global
//
// Steps (the same labels as qk_sm100.cu):
//   1   prologue: nothing to set up (no TMEM, no mbarrier: wgmma completion is tracked per
//       warpgroup by wait_group)
//   2a  all threads copy Q and K into the canonical SMEM layout; fence.proxy.async; CTA barrier
//   2b  each warpgroup: wgmma.fence, D/16 wgmmas (scale-d off for the first), commit, wait_group 0
//   3   epilogue: each thread scales and stores its 64 accumulator registers at the fragment
//       map's (row, col)
//   4   teardown: nothing to free
#include <cuda_runtime.h>
#include <stdint.h>

#include "device/launch.cuh"
#include "model/frag_map.h"
#include "qk.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900)
#include "device/canonical_copy.cuh"
#include "device/smem.cuh"
#include "sm90/wgmma.cuh"
#define QK_SM90_DEVICE 1
#else
#define QK_SM90_DEVICE 0
#endif

// CTAs per SM the register budget must allow (__launch_bounds__' second argument).
#ifndef QK_SM90_MIN_CTAS
#define QK_SM90_MIN_CTAS 1
#endif

template <int D>
static __global__ void __launch_bounds__(256, QK_SM90_MIN_CTAS) qk_kernel(qk_params p)
{
#if QK_SM90_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const smem_layout L = qk_smem_layout_make(D);
    const smem_tile tq = qk_q_tile(D), tk = qk_k_tile(D);
    uint8_t *smem_q = smem + L.tile[QK_SMEM_Q]; // Q tile [128 x D] K-major SW128
    uint8_t *smem_k = smem + L.tile[QK_SMEM_K]; // K tile [128 x D] K-major SW128
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    const int kv0 = blockIdx.x * QK_BN, q0 = blockIdx.y * QK_BM, bh = blockIdx.z;

    // Step 1: prologue: nothing to allocate or initialise on Hopper

    // Step 2a: global -> SMEM, then generic-proxy stores -> visible to wgmma
    copy_rows_to_kmajor_tile(smem_q, tq, p.q + (size_t)bh * p.sq * D, q0, p.sq, D, threadIdx.x, blockDim.x);
    copy_rows_to_kmajor_tile(smem_k, tk, p.k + (size_t)bh * p.skv * D, kv0, p.skv, D, threadIdx.x, blockDim.x);
    fence_proxy_async();
    __syncthreads();

    // Step 2b: warpgroup wg computes rows 64wg..64wg+63: S_wg = Q[64wg.., :] K^T
    float acc[QK_BN / 2]; // m64n128 f32 accumulator: 64 registers per thread
#pragma unroll
    for (int i = 0; i < QK_BN / 2; i++) acc[i] = 0.0f; // defined values; the first wgmma ignores them (scale-d 0)
    wgmma_fence();
    wgmma_m64n128_ss_bf16_over_k<D>(acc, tq, smem_u32(smem_q), 64 * wg, tk, smem_u32(smem_k));
    wgmma_commit();
    wgmma_wait<0>();

    // Step 3: epilogue: registers -> S through the accumulator fragment map
#pragma unroll
    for (int i = 0; i < QK_BN / 2; i++) {
        int r, c;
        wgmma_acc_map(t, i, &r, &c);
        const int row = q0 + 64 * wg + r, col = kv0 + c;
        if (row < p.sq && col < p.skv) p.s[((size_t)bh * p.sq + row) * p.skv + col] = acc[i] * p.scale;
    }

    // Step 4: teardown: nothing to free
#else
    (void)p;
#endif
}

extern "C" int stage_a_sm90_launch(const void *params)
{
    const qk_params &p = *(const qk_params *)params;
    const uint32_t smem = qk_smem_layout_make(p.d).bytes;
    return dispatch_head_dim<16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256>(
        p.d, [&](auto D) { return launch_kernel(qk_kernel<decltype(D)::value>, qk_grid(&p), 256, smem, p); });
}
