// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage B, Hopper port (sm_90a).
//
// Key extensions over stage A:
//   1. a second MMA, O = P V, accumulated over every KV tile: scale-d off only for the very
//      first wgmma (footgun FG05)
//   2. P never leaves the registers: the S accumulator's registers 8kk..8kk+7 are exactly the
//      A-operand values of P's k16 step kk (model/frag_map.h), so P is "re-viewed" as the register
//      A operand of wgmma (RS form) after packing to bf16 pairs (cvt operand order: FG07)
//   3. V as stored (V[kv][d]) is MN-major for P V: the transpose-B immediate = 1 (FG04); the
//      P V wgmma is m64n64 for D = 64 (the seed's non-square 128 x 64 P V: FG06)
//   4. a loop over KV tiles with CTA barriers handing the SMEM tiles over
//
// Math: per KV tile j: S_j = Q K_j^T; P_j = bf16(scale * S_j); O = sum_j P_j V_j.
// One CTA of 256 threads (two warpgroups, 64 query rows each). Hopper has no TMEM: S and O live in
// registers.
//
// Operands and layouts:
//   Q  -> SMEM [128 x D] K-major SW128 (warpgroup g reads rows 64g..)   A of S = Q K^T
//   K  -> SMEM [128 x D] K-major SW128                                   B of S = Q K^T
//   V  -> SMEM [128 kv x D] MN-major SW128: B of O = P V with the transpose-B immediate = 1
//   S  64 f32 registers per thread (m64n128); P 4 b32 registers per k16 step (bf16 pairs)
//   O  D/2 f32 registers per thread (m64nD), then [B, H, Sq, D] f32 in global
//
// Steps (the same labels as pv_sm100.cu; wgmma completion is tracked per warpgroup with
// wait_group, so no mbarriers):
//   1   prologue: all threads copy the Q tile
//   2a  all threads copy K_j, V_j into SMEM; fence.proxy.async; CTA barrier
//   2b  S = Q K_j^T: D/16 wgmma m64n128k16 (SS), commit, wait
//   2c  P = bf16(scale * S) packed in pairs, even k in the low half
//   2d  wgmma.fence (P's registers were written by ordinary instructions), then O += P V_j: 8
//       wgmma m64nDk16 (RS), scale-d off only for the very first, commit, wait
//   2e  CTA barrier: K_j, V_j may be overwritten
//   3   epilogue: each thread stores its O registers at the fragment map's (row, col)
//   4   teardown: nothing to free
#include <cuda_runtime.h>
#include <stdint.h>

#include "device/launch.cuh"
#include "model/frag_map.h"
#include "pv.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900)
#include "device/bf16_pack.cuh"
#include "device/canonical_copy.cuh"
#include "device/smem.cuh"
#include "sm90/wgmma.cuh"
#define PV_SM90_DEVICE 1
#else
#define PV_SM90_DEVICE 0
#endif

template <int D>
static __global__ void __launch_bounds__(256, 1) pv_kernel(pv_params p)
{
#if PV_SM90_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const smem_layout L = pv_smem_layout_make(D);
    const smem_tile tq = pv_q_tile(D), tk = pv_k_tile(D), tv = pv_v_tile(D);
    uint8_t *smem_q = smem + L.tile[PV_SMEM_Q]; // [128 x D] K-major SW128
    uint8_t *smem_k = smem + L.tile[PV_SMEM_K]; // [128 x D] K-major SW128
    uint8_t *smem_v = smem + L.tile[PV_SMEM_V]; // [128 kv x D] MN-major SW128
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    const int q0 = blockIdx.x * PV_BM, bh = blockIdx.y;
    const uint16_t *kbh = p.k + (size_t)bh * p.skv * D, *vbh = p.v + (size_t)bh * p.skv * D;

    // Step 1: prologue: the Q tile
    copy_rows_to_kmajor_tile(smem_q, tq, p.q + (size_t)bh * p.sq * D, q0, p.sq, D, threadIdx.x, blockDim.x);
    float o[D / 2]; // O: m64nD accumulator, D/2 registers per thread
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] = 0.0f;

    const int ntiles = (p.skv + PV_BN - 1) / PV_BN;
    for (int j = 0; j < ntiles; j++) {
        // Step 2a: K_j, V_j -> SMEM
        copy_rows_to_kmajor_tile(smem_k, tk, kbh, j * PV_BN, p.skv, D, threadIdx.x, blockDim.x);
        copy_rows_to_mnmajor_tile(smem_v, tv, vbh, j * PV_BN, p.skv, D, threadIdx.x, blockDim.x);
        fence_proxy_async();
        __syncthreads();

        // Step 2b: S = Q[64wg.., :] K_j^T
        float s[PV_BN / 2];
#pragma unroll
        for (int i = 0; i < PV_BN / 2; i++) s[i] = 0.0f;
        wgmma_fence();
        wgmma_m64n128_ss_bf16_over_k<D>(s, tq, smem_u32(smem_q), 64 * wg, tk, smem_u32(smem_k));
        wgmma_commit();
        wgmma_wait<0>();

        // Step 2c: P = bf16(scale * S): accumulator registers 8kk..8kk+7 -> A registers of step kk
        uint32_t pa[PV_BN / 16][4];
#pragma unroll
        for (int kk = 0; kk < PV_BN / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++)
                pa[kk][r] = pack_bf16x2(s[8 * kk + 2 * r] * p.scale, s[8 * kk + 2 * r + 1] * p.scale);

        // Step 2d: O += P V_j, V MN-major (transpose-B = 1)
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < PV_BN / 16; kk++)
            wgmma_m64nNk16_rs_bf16<D, 1>(o, pa[kk], smem_tile_desc_sm90(&tv, smem_u32(smem_v), 0, 16 * kk),
                                         (j > 0 || kk > 0));
        wgmma_commit();
        wgmma_wait<0>();

        // Step 2e: the SMEM tiles are free
        __syncthreads();
    }

    // Step 3: epilogue: registers -> O through the accumulator fragment map
#pragma unroll
    for (int i = 0; i < D / 2; i++) {
        int r, c;
        wgmma_acc_map(t, i, &r, &c);
        const int row = q0 + 64 * wg + r;
        if (row < p.sq) p.o[((size_t)bh * p.sq + row) * D + c] = o[i];
    }

    // Step 4: teardown: nothing to free
#else
    (void)p;
#endif
}

extern "C" int stage_b_sm90_launch(const void *params)
{
    const pv_params &p = *(const pv_params *)params;
    const uint32_t smem = pv_smem_layout_make(p.d).bytes;
    return dispatch_head_dim<64, 128>(
        p.d, [&](auto D) { return launch_kernel(pv_kernel<decltype(D)::value>, pv_grid(&p), 256, smem, p); });
}
