// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage C, Blackwell (sm_100a). Stage C extends stage B by the online softmax between the two
// MMAs (with O rescaled in TMEM), the causal mask and tails, LSE, the grid over (q tiles, heads,
// batch) with GQA/MQA, and the seed's 6-warp roles, synchronised by mbarriers:
//   warps 0-3  softmax, correction and epilogue: warp w owns TMEM lanes 32w..32w+31, i.e. query
//              rows 32w..32w+31 of the tile, one row per thread (footgun FG02: all four are needed
//              as soon as the tile has more than 32 rows)
//   warp 4     TMEM allocation and the MMAs (one elected thread issues them)
//   warp 5     loads Q, K, V into SMEM
//
// Math: as in fmha_sm90.cu (FlashAttention-2, log2 domain, m_i, l_i, alpha, O / l_i, LSE), with
// one difference: a thread holds a whole row of S (tcgen05.ld.32x32b: thread = lane = row), so
// row max and row sum need no shuffles.
//
// Operands and layouts: Q [128 x D] K-major SW128, K [128 x D] K-major SW128, V [128 x D]
// MN-major SW128 in SMEM (one buffer each: no overlap yet); TMEM (fmha.h): S [0, 128) f32,
// P [128, 192) bf16 pairs, O [256, 256 + D) f32.
//
// Steps, with the mbarriers (count) that hand over between roles; parity = tile index & 1:
//   1. warp 4 allocates 512 TMEM columns; thread 0 initialises q_full (32 loader threads),
//      kv_full (32), kv_empty (1 commit), s_full (1 commit), p_full (128 softmax threads),
//      o_done (1 commit)
//   2. warp 5: Q once -> q_full; per tile j: wait kv_empty (j - 1), load K_j, V_j -> kv_full
//   3. warp 4: wait kv_full; S = Q K_j^T -> commit s_full
//   4. warps 0-3: wait s_full; read their row of S; mask, scale, m_new, alpha, P, l_i;
//      wait o_done (j - 1) and rescale O in TMEM (the correction); store P; wait::st; fence;
//      arrive p_full
//   5. warp 4: wait p_full; O += P V_j (TS MMAs); commit o_done and kv_empty
//   6. warps 0-3 after the last tile: wait o_done; O / l_i -> bf16 -> global; LSE
//   7. warp 4 frees TMEM
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "fmha.h"
#include "host/cuda_check.h"
#include "model/frag_map.h"
#include "model/idesc.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
#include "device/bf16_pack.cuh"
#include "device/canonical_copy.cuh"
#include "sm100/tcgen05.cuh"
#include "sm90/mbarrier.cuh"
#include "sm90/wgmma.cuh" // fence_proxy_async, smem_u32
#define FMHA_SM100_DEVICE 1
#else
#define FMHA_SM100_DEVICE 0
#endif

enum { SITE_Q_FULL = 1, SITE_KV_FULL, SITE_KV_EMPTY, SITE_S_FULL, SITE_P_FULL, SITE_O_DONE };
enum { MMA_WARP = 4, LOAD_WARP = 5, SOFTMAX_THREADS = 128, THREADS = 192 };

__global__ void __launch_bounds__(THREADS, 1) fmha_sm100_kernel(fmha_params p)
{
#if FMHA_SM100_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    const int d = p.d;
    const smem_tile tq = fmha_q_tile(d), tk = fmha_k_tile(d), tv = fmha_v_tile(d);
    uint8_t *sq = smem, *sk = sq + tq.bytes, *sv = sk + tk.bytes;
    uint64_t *bars = (uint64_t *)(sv + tv.bytes);
    const uint32_t q_full = smem_u32(&bars[0]), kv_full = smem_u32(&bars[1]), kv_empty = smem_u32(&bars[2]);
    const uint32_t s_full = smem_u32(&bars[3]), p_full = smem_u32(&bars[4]), o_done = smem_u32(&bars[5]);
    uint32_t *tmem_slot = (uint32_t *)(&bars[6]);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * FMHA_BM, h = blockIdx.y, b = blockIdx.z, hk = fmha_kv_head(&p, h);
    const int ntiles = fmha_kv_tiles(&p, q0);

    // Step 1: TMEM and barriers
    if (warp == MMA_WARP) {
        tmem_alloc(smem_u32(tmem_slot), FMHA_TMEM_COLS);
        tmem_relinquish();
    }
    if (threadIdx.x == 0) {
        mbar_init(q_full, 32);
        mbar_init(kv_full, 32);
        mbar_init(kv_empty, 1);
        mbar_init(s_full, 1);
        mbar_init(p_full, SOFTMAX_THREADS);
        mbar_init(o_done, 1);
        mbar_fence_init();
    }
    tcgen05_fence_before();
    __syncthreads();
    tcgen05_fence_after();
    const uint32_t tmem = *tmem_slot;

    if (warp == LOAD_WARP) {
        // Step 2: the load warp
        copy_rows_to_kmajor_tile(sq, tq, p.q + b * p.q_sb + h * p.q_sh, q0, p.sq, p.q_ss, lane, 32);
        fence_proxy_async();
        mbar_arrive(q_full);
        const uint16_t *kh = p.k + b * p.k_sb + hk * p.k_sh, *vh = p.v + b * p.v_sb + hk * p.v_sh;
        for (int j = 0; j < ntiles; j++) {
            if (j > 0) mbar_wait(kv_empty, (uint32_t)(j - 1) & 1u, p.wd, SITE_KV_EMPTY);
            copy_rows_to_kmajor_tile(sk, tk, kh, j * FMHA_BN, p.skv, p.k_ss, lane, 32);
            copy_rows_to_mnmajor_tile(sv, tv, vh, j * FMHA_BN, p.skv, p.v_ss, lane, 32);
            fence_proxy_async();
            mbar_arrive(kv_full);
        }
    } else if (warp == MMA_WARP) {
        // Steps 3 and 5: the MMA warp (one thread issues; the warp stays converged around it)
        if (lane == 0) {
            const uint32_t idesc_qk = idesc_bf16_f32(FMHA_BM, FMHA_BN, 0, 0);
            const uint32_t idesc_pv = idesc_bf16_f32(FMHA_BM, (unsigned)d, 0, 1); // V MN-major
            mbar_wait(q_full, 0, p.wd, SITE_Q_FULL);
            for (int j = 0; j < ntiles; j++) {
                const uint32_t ph = (uint32_t)j & 1u;
                mbar_wait(kv_full, ph, p.wd, SITE_KV_FULL);
                tcgen05_fence_after();
                for (int k = 0; k < d; k += 16)
                    tmem_mma_f16_ss(tmem + FMHA_TMEM_S, smem_tile_desc_sm100(&tq, smem_u32(sq), 0, k),
                                    smem_tile_desc_sm100(&tk, smem_u32(sk), 0, k), idesc_qk, k > 0);
                tmem_commit(s_full);
                mbar_wait(p_full, ph, p.wd, SITE_P_FULL);
                tcgen05_fence_after();
                for (int k = 0; k < FMHA_BN; k += 16)
                    tmem_mma_f16_ts(tmem + FMHA_TMEM_O, tmem + FMHA_TMEM_P + k / 2,
                                    smem_tile_desc_sm100(&tv, smem_u32(sv), 0, k), idesc_pv, (j > 0 || k > 0));
                tmem_commit(o_done);
                tmem_commit(kv_empty);
            }
        }
        __syncwarp();
    } else {
        // Steps 4 and 6: softmax warps; thread = row 32 * warp + lane of the tile
        const int r = 32 * warp + lane, row = q0 + r;
        const uint32_t lanes = (uint32_t)(32 * warp) << 16; // this warp's quadrant
        const float scale_log2 = p.scale * FMHA_LOG2E;
        float m_i = -INFINITY, l_i = 0.0f;
        for (int j = 0; j < ntiles; j++) {
            const uint32_t ph = (uint32_t)j & 1u;
            const int kv0 = j * FMHA_BN;
            mbar_wait(s_full, ph, p.wd, SITE_S_FULL);
            tcgen05_fence_after();
            float s[FMHA_BN];
#pragma unroll
            for (int c0 = 0; c0 < FMHA_BN; c0 += 32) {
                uint32_t u[32];
                tmem_ld_32x32b_x32(tmem + lanes + FMHA_TMEM_S + c0, u);
                tmem_wait_ld();
#pragma unroll
                for (int e = 0; e < 32; e++) s[c0 + e] = __uint_as_float(u[e]);
            }
            float m_new = m_i;
#pragma unroll
            for (int n = 0; n < FMHA_BN; n++) {
                s[n] = fmha_visible(&p, row, kv0 + n) ? s[n] * scale_log2 : -INFINITY;
                m_new = fmaxf(m_new, s[n]);
            }
            const float base = fmha_exp_base(m_new, p.faults);
            const float alpha = exp2f(m_i - base);
            float rowsum = 0.0f;
            uint32_t pk[FMHA_BN / 2];
#pragma unroll
            for (int n = 0; n < FMHA_BN; n += 2) {
                const float pe = exp2f(s[n] - base), po = exp2f(s[n + 1] - base);
                rowsum += pe + po;
                pk[n / 2] = pack_bf16x2(pe, po);
            }
            l_i = l_i * alpha + rowsum;
            m_i = m_new;
            // correction: O *= alpha once the previous P V has landed in O
            if (j > 0) {
                mbar_wait(o_done, (uint32_t)(j - 1) & 1u, p.wd, SITE_O_DONE);
                tcgen05_fence_after();
                for (int c0 = 0; c0 < d; c0 += 32) {
                    uint32_t u[32];
                    tmem_ld_32x32b_x32(tmem + lanes + FMHA_TMEM_O + c0, u);
                    tmem_wait_ld();
#pragma unroll
                    for (int e = 0; e < 32; e++) u[e] = __float_as_uint(__uint_as_float(u[e]) * alpha);
                    tmem_st_32x32b_x32(tmem + lanes + FMHA_TMEM_O + c0, u);
                }
            }
            uint32_t half[32];
#pragma unroll
            for (int e = 0; e < 32; e++) half[e] = pk[e];
            tmem_st_32x32b_x32(tmem + lanes + FMHA_TMEM_P, half);
#pragma unroll
            for (int e = 0; e < 32; e++) half[e] = pk[32 + e];
            tmem_st_32x32b_x32(tmem + lanes + FMHA_TMEM_P + 32, half);
            tmem_wait_st();
            tcgen05_fence_before();
            mbar_arrive(p_full);
        }
        // Step 6: epilogue
        const float inv_l = l_i > 0.0f ? 1.0f / l_i : 0.0f; // no visible key: O = 0
        if (ntiles > 0) {
            mbar_wait(o_done, (uint32_t)(ntiles - 1) & 1u, p.wd, SITE_O_DONE);
            tcgen05_fence_after();
        }
        uint16_t *orow = p.o + b * p.o_sb + h * p.o_sh + (int64_t)row * p.o_ss;
        for (int c0 = 0; c0 < d; c0 += 32) {
            uint32_t u[32];
            if (ntiles > 0) {
                tmem_ld_32x32b_x32(tmem + lanes + FMHA_TMEM_O + c0, u);
                tmem_wait_ld();
            } else {
#pragma unroll
                for (int e = 0; e < 32; e++) u[e] = 0u;
            }
            if (row < p.sq) {
#pragma unroll
                for (int e = 0; e < 32; e += 8) {
                    uint4 v;
                    v.x = pack_bf16x2(__uint_as_float(u[e + 0]) * inv_l, __uint_as_float(u[e + 1]) * inv_l);
                    v.y = pack_bf16x2(__uint_as_float(u[e + 2]) * inv_l, __uint_as_float(u[e + 3]) * inv_l);
                    v.z = pack_bf16x2(__uint_as_float(u[e + 4]) * inv_l, __uint_as_float(u[e + 5]) * inv_l);
                    v.w = pack_bf16x2(__uint_as_float(u[e + 6]) * inv_l, __uint_as_float(u[e + 7]) * inv_l);
                    *(uint4 *)(orow + c0 + e) = v;
                }
            }
        }
        if (row < p.sq)
            p.lse[((int64_t)b * p.hq + h) * p.sq + row] = l_i > 0.0f ? m_i * FMHA_LN2 + logf(l_i) : -INFINITY;
    }

    // Step 7: free TMEM
    tcgen05_fence_before();
    __syncthreads();
    if (warp == MMA_WARP) {
        tcgen05_fence_after();
        tmem_dealloc(tmem, FMHA_TMEM_COLS);
    }
#else
    (void)p;
#endif
}

extern "C" int fmha_sm100_launch(const fmha_params *p)
{
    const int smem = (int)fmha_smem_bytes(p->d);
    CUDA_CHECK(cudaFuncSetAttribute(fmha_sm100_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    dim3 grid((p->sq + FMHA_BM - 1) / FMHA_BM, p->hq, p->b);
    fmha_sm100_kernel<<<grid, THREADS, smem>>>(*p);
    CUDA_CHECK_LAUNCH();
    return 0;
}
