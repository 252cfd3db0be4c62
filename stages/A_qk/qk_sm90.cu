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
// Math: S[b, h, i, j] = scale * sum_d Q[b, h, i, d] * K[b, h, j, d]   (scale = 1/sqrt(D))
// One CTA of 256 threads (two warpgroups) computes one 128 x 128 tile of S; warpgroup g owns Q
// rows 64g..64g+63 and issues wgmma m64n128k16 over K = D in steps of 16. Hopper has no TMEM: the
// 64 x 128 f32 accumulator of a warpgroup lives in registers, 64 per thread.
//
// Operands and layouts (the same SMEM tiles as sm100, descriptors in the sm90 format):
//   Q  [B, H, Sq, D]  bf16 row-major -> SMEM [128 x D] K-major, 128B swizzle (A: rows 64g..)
//   K  [B, H, Skv, D] bf16 row-major -> SMEM [128 x D] K-major, 128B swizzle (B)
//   S  accumulator: registers, thread t reg i = (row, col) of model/frag_map.h wgmma_acc_map
//   S  [B, H, Sq, Skv] f32 row-major in global
//
// Steps:
//   1. (no TMEM, no mbarrier: wgmma completion is tracked per warpgroup by wait_group)
//   2. all threads copy Q and K into the canonical SMEM layout
//   3. fence.proxy.async, CTA barrier
//   4. each warpgroup: wgmma.fence, D/16 wgmmas (scale-d off for the first), commit, wait_group 0
//   5. each thread scales and stores its 64 accumulator registers at the fragment map's (row, col)
#include <cuda_runtime.h>
#include <stdint.h>

#include "device/canonical_copy.cuh"
#include "host/cuda_check.h"
#include "model/frag_map.h"
#include "qk.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900)
#include "sm90/wgmma.cuh"
#define QK_SM90_DEVICE 1
#else
#define QK_SM90_DEVICE 0
#endif


__global__ void __launch_bounds__(256, 1) qk_sm90_kernel(qk_params p)
{
#if QK_SM90_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    const smem_tile tq = qk_q_tile(p.d), tk = qk_k_tile(p.d);
    uint8_t *sq = smem;            // Q tile [128 x D] K-major SW128
    uint8_t *sk = smem + tq.bytes; // K tile [128 x D] K-major SW128
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    const int kv0 = blockIdx.x * QK_BN, q0 = blockIdx.y * QK_BM, bh = blockIdx.z;

    // Step 2: global -> SMEM
    copy_rows_to_kmajor_tile(sq, tq, p.q + (size_t)bh * p.sq * p.d, q0, p.sq, p.d, threadIdx.x, blockDim.x);
    copy_rows_to_kmajor_tile(sk, tk, p.k + (size_t)bh * p.skv * p.d, kv0, p.skv, p.d, threadIdx.x, blockDim.x);

    // Step 3: generic-proxy stores -> visible to wgmma
    fence_proxy_async();
    __syncthreads();

    // Step 4: warpgroup wg computes rows 64wg..64wg+63: S_wg = Q[64wg.., :] K^T
    float acc[QK_BN / 2]; // m64n128 f32 accumulator: 64 registers per thread
#pragma unroll
    for (int i = 0; i < QK_BN / 2; i++) acc[i] = 0.0f;
    wgmma_fence();
    for (int k = 0; k < p.d; k += 16)
        wgmma_m64n128k16_ss_bf16<0, 0>(acc, smem_tile_desc_sm90(&tq, smem_u32(sq), 64 * wg, k),
                                       smem_tile_desc_sm90(&tk, smem_u32(sk), 0, k), k > 0);
    wgmma_commit();
    wgmma_wait<0>();

    // Step 5: registers -> S through the accumulator fragment map
#pragma unroll
    for (int i = 0; i < QK_BN / 2; i++) {
        int r, c;
        wgmma_acc_map(t, i, &r, &c);
        const int row = q0 + 64 * wg + r, col = kv0 + c;
        if (row < p.sq && col < p.skv) p.s[((size_t)bh * p.sq + row) * p.skv + col] = acc[i] * p.scale;
    }
#else
    (void)p;
#endif
}

extern "C" int qk_sm90_launch(const qk_params *p)
{
    const int smem = (int)qk_smem_bytes(p->d);
    CUDA_CHECK(cudaFuncSetAttribute(qk_sm90_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    dim3 grid((p->skv + QK_BN - 1) / QK_BN, (p->sq + QK_BM - 1) / QK_BM, p->b * p->h);
    qk_sm90_kernel<<<grid, 256, smem>>>(*p);
    CUDA_CHECK_LAUNCH();
    return 0;
}
