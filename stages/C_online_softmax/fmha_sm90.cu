// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage C, Hopper port (sm_90a).
//
// Key extensions over stage B:
//   1. the online softmax between the two MMAs (m_i, l_i, alpha) instead of P = bf16(scale S),
//      with O rescaled in registers before the next P V
//   2. masks: KV tails and causal (bottom-right aligned), and the guard that keeps a fully masked
//      row at O = 0 (footgun FG14)
//   3. LSE per row, for a later split-KV merge
//   4. the grid over (query tiles, heads, batch) with GQA/MQA and strided BHSD/BSHD tensors
//   5. row max and row sum reduced over the quad of threads that share a row (two __shfl_xor)
//
// Math: as in fmha_sm100.cu (FlashAttention-2, log2 domain, m_i, l_i, alpha, O / l_i, LSE).
// One CTA of 256 threads (two consumer warpgroups, 64 query rows each, Br = 128, Bc = 128);
// loads, MMAs and softmax take turns (no overlap yet: stages E and F add it).
//
// Operands and layouts: Q, K, V, O in global by element strides (BHSD or BSHD); Q [128 x D]
// K-major SW128, K [128 x D] K-major SW128, V [128 x D] MN-major SW128 in SMEM (the same tiles as
// sm100, fmha.h); S in 64 f32 registers per thread (m64n128); P re-viewed in registers as the
// wgmma A operand; O in D/2 f32 registers (m64nD). A row lives in the 4 threads of a quad: thread
// l holds rows l/4 and l/4 + 8 of its warp's 16 rows (model/frag_map.h).
//
// Steps (the same labels as fmha_sm100.cu; Hopper has no TMEM and needs no mbarrier here: wgmma
// completion is tracked per warpgroup by wait_group, and CTA barriers hand the SMEM over):
//   1   prologue: all threads copy the Q tile (query head h, batch b) into SMEM
//   2a  per KV tile j (only as many as the causal mask lets this tile see): all threads copy
//       K_j, V_j of KV head h / (Hq / Hkv); fence.proxy.async; CTA barrier
//   2b  S = Q K_j^T: D/16 wgmma m64n128k16 SS (scale-d off for the first k step); commit; wait
//   2c  mask (tails, causal bottom-right) and scale; row max over the quad; m_new, alpha, P, l_i
//   2d  the correction: O *= alpha in registers
//   2e  P packed to bf16 pairs; wgmma.fence; O += P V_j: 8 wgmma m64nDk16 RS (transpose-B: V is
//       MN-major; scale-d on: O holds the rescaled sum, zero before the first tile); commit; wait;
//       CTA barrier (K_j, V_j free)
//   3   epilogue: l_i summed over the quad; O / l_i -> bf16 -> global; LSE by one thread per row
//   4   teardown: nothing to free (no TMEM on Hopper)
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "device/launch.cuh"
#include "fmha.h"
#include "model/frag_map.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900)
#include "device/bf16_pack.cuh"
#include "device/canonical_copy.cuh"
#include "device/smem.cuh"
#include "sm90/wgmma.cuh"
#define FMHA_SM90_DEVICE 1
#else
#define FMHA_SM90_DEVICE 0
#endif

template <int D>
static __global__ void __launch_bounds__(FMHA_SM90_THREADS, 1) fmha_kernel(fmha_params p)
{
#if FMHA_SM90_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const smem_layout L = fmha_smem_layout_make(D);
    const smem_tile tq = fmha_q_tile(D), tk = fmha_k_tile(D), tv = fmha_v_tile(D);
    uint8_t *smem_q = smem + L.tile[FMHA_SMEM_Q]; // [128 x D] K-major SW128: A of S = Q K^T
    uint8_t *smem_k = smem + L.tile[FMHA_SMEM_K]; // [128 x D] K-major SW128: B of S = Q K^T
    uint8_t *smem_v = smem + L.tile[FMHA_SMEM_V]; // [128 kv x D] MN-major SW128: B of O = P V
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128, lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * FMHA_BM, h = blockIdx.y, b = blockIdx.z, hk = fmha_kv_head(&p, h);
    const uint16_t *kh = p.k + b * p.k_sb + hk * p.k_sh, *vh = p.v + b * p.v_sb + hk * p.v_sh;
    const float scale_log2 = p.scale * FMHA_LOG2E;

    // Step 1: prologue: the Q tile
    copy_rows_to_kmajor_tile(smem_q, tq, p.q + b * p.q_sb + h * p.q_sh, q0, p.sq, p.q_ss, threadIdx.x, blockDim.x);

    // The two rows this thread holds (acc registers with bit 1 of the index = 0 / 1)
    int row[2];
    {
        int r, c;
        wgmma_acc_map(t, 0, &r, &c);
        row[0] = q0 + 64 * wg + r;
        row[1] = row[0] + 8;
    }
    float m_i[2] = {-INFINITY, -INFINITY}, l_i[2] = {0.0f, 0.0f};
    float o[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] = 0.0f;

    const int ntiles = fmha_kv_tiles(&p, q0);
    for (int j = 0; j < ntiles; j++) {
        const int kv0 = j * FMHA_BN;
        // Step 2a: K_j, V_j of this query head's KV head
        copy_rows_to_kmajor_tile(smem_k, tk, kh, kv0, p.skv, p.k_ss, threadIdx.x, blockDim.x);
        copy_rows_to_mnmajor_tile(smem_v, tv, vh, kv0, p.skv, p.v_ss, threadIdx.x, blockDim.x);
        fence_proxy_async();
        __syncthreads();

        // Step 2b: S = Q K_j^T (rows 64wg.. of the tile)
        float s[FMHA_BN / 2];
#pragma unroll
        for (int i = 0; i < FMHA_BN / 2; i++) s[i] = 0.0f;
        wgmma_fence();
        wgmma_m64n128_ss_bf16_over_k<D>(s, tq, smem_u32(smem_q), 64 * wg, tk, smem_u32(smem_k));
        wgmma_commit();
        wgmma_wait<0>();

        // Step 2c: mask and scale, row max over the quad, m_new, alpha, P, row sum
        float mx[2] = {m_i[0], m_i[1]};
#pragma unroll
        for (int i = 0; i < FMHA_BN / 2; i++) {
            int r, c;
            wgmma_acc_map(t, i, &r, &c);
            const int hi = (i >> 1) & 1;
            s[i] = fmha_visible(&p, row[hi], kv0 + c) ? s[i] * scale_log2 : -INFINITY;
            mx[hi] = fmaxf(mx[hi], s[i]);
        }
        float alpha[2], base[2];
#pragma unroll
        for (int hi = 0; hi < 2; hi++) {
            mx[hi] = fmaxf(mx[hi], __shfl_xor_sync(0xFFFFFFFFu, mx[hi], 1));
            mx[hi] = fmaxf(mx[hi], __shfl_xor_sync(0xFFFFFFFFu, mx[hi], 2));
            base[hi] = fmha_exp_base(mx[hi], p.faults);
            alpha[hi] = exp2f(m_i[hi] - base[hi]);
            m_i[hi] = mx[hi];
            l_i[hi] *= alpha[hi];
        }
#pragma unroll
        for (int i = 0; i < FMHA_BN / 2; i++) {
            const int hi = (i >> 1) & 1;
            s[i] = exp2f(s[i] - base[hi]);
            l_i[hi] += s[i]; // this thread's part of the row sum (the quad is summed at the end)
        }

        // Step 2d: the correction, O *= alpha
#pragma unroll
        for (int i = 0; i < D / 2; i++) o[i] *= alpha[(i >> 1) & 1];

        // Step 2e: O += P V_j with P re-viewed as the register A operand; then K_j, V_j are free
        uint32_t pa[FMHA_BN / 16][4];
#pragma unroll
        for (int kk = 0; kk < FMHA_BN / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++) pa[kk][r] = pack_bf16x2(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < FMHA_BN / 16; kk++)
            wgmma_m64nNk16_rs_bf16<D, 1>(o, pa[kk], smem_tile_desc_sm90(&tv, smem_u32(smem_v), 0, 16 * kk), 1);
        wgmma_commit();
        wgmma_wait<0>();
        __syncthreads();
    }

    // Step 3: epilogue: finish the row sums over the quad, normalise, store O and LSE
    float inv_l[2];
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        l_i[hi] += __shfl_xor_sync(0xFFFFFFFFu, l_i[hi], 1);
        l_i[hi] += __shfl_xor_sync(0xFFFFFFFFu, l_i[hi], 2);
        inv_l[hi] = l_i[hi] > 0.0f ? 1.0f / l_i[hi] : 0.0f; // no visible key: O = 0
    }
#pragma unroll
    for (int i = 0; i < D / 2; i += 2) {
        int r, c;
        wgmma_acc_map(t, i, &r, &c); // registers i, i+1: columns c, c+1 of one row
        const int hi = (i >> 1) & 1;
        if (row[hi] < p.sq) {
            uint16_t *orow = p.o + b * p.o_sb + h * p.o_sh + (int64_t)row[hi] * p.o_ss;
            *(uint32_t *)(orow + c) = pack_bf16x2(o[i] * inv_l[hi], o[i + 1] * inv_l[hi]);
        }
    }
    if (lane % 4 == 0) {
#pragma unroll
        for (int hi = 0; hi < 2; hi++)
            if (row[hi] < p.sq)
                p.lse[((int64_t)b * p.hq + h) * p.sq + row[hi]] = l_i[hi] > 0.0f ? m_i[hi] * FMHA_LN2 + logf(l_i[hi]) : -INFINITY;
    }
    // Step 4: teardown: nothing to free (no TMEM, no mbarriers on this path)
#else
    (void)p;
#endif
}

extern "C" int stage_c_sm90_launch(const void *params)
{
    const fmha_params &p = *(const fmha_params *)params;
    const uint32_t smem = fmha_smem_layout_make(p.d).bytes;
    return dispatch_head_dim<64, 128, 256>(p.d, [&](auto D) {
        return launch_kernel(fmha_kernel<decltype(D)::value>, fmha_grid(&p), FMHA_SM90_THREADS, smem, p);
    });
}
