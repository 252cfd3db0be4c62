// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage C, Blackwell (sm_100a).
//
// Key extensions over stage B:
//   1. the online softmax between the two MMAs (m_i, l_i, alpha) instead of P = bf16(scale S),
//      with O rescaled in TMEM by the softmax warps (the correction) before the next P V
//   2. masks: KV tails and causal (bottom-right aligned), and the guard that keeps a fully masked
//      row at O = 0 (footgun FG14)
//   3. LSE per row, for a later split-KV merge
//   4. the grid over (query tiles, heads, batch) with GQA/MQA and strided BHSD/BSHD tensors
//   5. the seed's 6-warp roles, handing over by mbarriers instead of CTA barriers:
//        warps 0-3  softmax, correction and epilogue: warp w owns TMEM lanes 32w..32w+31, i.e.
//                   query rows 32w..32w+31, one row per thread (all four are needed as soon as
//                   the tile has more than 32 rows: footgun FG02)
//        warp 4     TMEM allocation and the MMAs (one elected thread issues them)
//        warp 5     loads Q, K, V into SMEM
//
// Math (FlashAttention-2 with the FlashAttention symbols; log2 domain: s2 = scale log2(e) q.k):
//   per KV tile j:  m_new = max(m_i, rowmax(s2_j));  P_j = exp2(s2_j - m_new)
//                   alpha = exp2(m_i - m_new);  l_i = alpha l_i + rowsum(P_j)
//                   O_i = alpha O_i + bf16(P_j) V_j;  m_i = m_new
//   end:            O = O_i / l_i;  LSE = m_i ln 2 + ln l_i  (natural log, for a split-KV merge)
//   masked scores are -inf; a row with no visible key keeps m_i = -inf: exp2 is taken against 0
//   then (fmha_exp_base), so P = 0, alpha = 1, and the row ends with O = 0, LSE = -inf (FG14).
// A thread holds a whole row of S (tcgen05.ld.32x32b: thread = lane = row), so row max and row
// sum need no shuffles.
//
// Operands and layouts (fmha.h): Q [128 x D] K-major SW128, K [128 x D] K-major SW128, V [128 x D]
// MN-major SW128 in SMEM (one buffer each: no overlap yet); TMEM: S [0, 128) f32, P [128, 192)
// bf16 pairs, O [256, 256 + D) f32.
//
// Steps, with the mbarriers (count) that hand over between roles; parity = tile index & 1:
//   1   prologue: warp 4 allocates 512 TMEM columns; thread 0 initialises q_full (32 loader
//       threads), kv_full (32), kv_empty (1 commit), s_full (1 commit), p_full (128 softmax
//       threads), o_done (1 commit); warp 5 loads Q -> q_full
//   2a  warp 5: wait kv_empty (j - 1), load K_j, V_j of KV head h / (Hq / Hkv) -> kv_full
//   2b  warp 4: wait kv_full; S = Q K_j^T (D/16 SS MMAs) -> commit s_full
//   2c  warps 0-3: wait s_full; read their row of S; mask, scale, m_new, alpha, P, l_i
//   2d  warps 0-3: wait o_done (j - 1: the last P V has read P and written O); O *= alpha in TMEM
//       (the correction); store P; wait::st; fence; arrive p_full
//   2e  warp 4: wait p_full; O += P V_j (8 TS MMAs) -> commit o_done and, but for the last tile,
//       kv_empty (K_j, V_j free)
//   3   epilogue, warps 0-3: wait o_done (last tile); O / l_i -> bf16 -> global; LSE
//   4   teardown: warp 4 frees TMEM
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "device/launch.cuh"
#include "fmha.h"
#include "model/frag_map.h"
#include "model/idesc.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
#include "device/bf16_pack.cuh"
#include "device/canonical_copy.cuh"
#include "device/mbarrier.cuh"
#include "device/smem.cuh"
#include "sm100/tcgen05.cuh"
#define FMHA_SM100_DEVICE 1
#else
#define FMHA_SM100_DEVICE 0
#endif

// Watchdog site ids of the waits: the barrier a deadlock report names.
enum { SITE_Q_FULL = 1, SITE_KV_FULL, SITE_KV_EMPTY, SITE_S_FULL, SITE_P_FULL, SITE_O_DONE };

static __global__ void __launch_bounds__(FMHA_SM100_THREADS, 1) fmha_kernel(fmha_params p)
{
#if FMHA_SM100_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const int d = p.d;
    const smem_layout L = fmha_smem_layout_make(d);
    const smem_tile tq = fmha_q_tile(d), tk = fmha_k_tile(d), tv = fmha_v_tile(d);
    uint8_t *smem_q = smem + L.tile[FMHA_SMEM_Q]; // [128 x D] K-major SW128: A of S = Q K^T
    uint8_t *smem_k = smem + L.tile[FMHA_SMEM_K]; // [128 x D] K-major SW128: B of S = Q K^T
    uint8_t *smem_v = smem + L.tile[FMHA_SMEM_V]; // [128 kv x D] MN-major SW128: B of O = P V
    uint64_t *bars = (uint64_t *)(smem + L.bars);
    const uint32_t q_full = smem_u32(&bars[FMHA_BAR_Q_FULL]), kv_full = smem_u32(&bars[FMHA_BAR_KV_FULL]);
    const uint32_t kv_empty = smem_u32(&bars[FMHA_BAR_KV_EMPTY]), s_full = smem_u32(&bars[FMHA_BAR_S_FULL]);
    const uint32_t p_full = smem_u32(&bars[FMHA_BAR_P_FULL]), o_done = smem_u32(&bars[FMHA_BAR_O_DONE]);
    uint32_t *tmem_slot = (uint32_t *)(smem + L.tmem_slot);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * FMHA_BM, h = blockIdx.y, b = blockIdx.z, hk = fmha_kv_head(&p, h);
    const int ntiles = fmha_kv_tiles(&p, q0);

    // Step 1: prologue: TMEM and barriers
    if (warp == FMHA_MMA_WARP) {
        tmem_alloc(smem_u32(tmem_slot), FMHA_TMEM_COLS);
        tmem_relinquish();
    }
    if (threadIdx.x == 0) {
        for (int i = 0; i < FMHA_NUM_BARS; i++) mbar_init(smem_u32(&bars[i]), fmha_bar_count(i, p.faults));
        mbar_fence_init();
    }
    tcgen05_fence_before();
    __syncthreads();
    tcgen05_fence_after();
    const uint32_t tmem = *tmem_slot;

    if (warp == FMHA_LOAD_WARP) {
        // Step 1: prologue: the Q tile (query head h, batch b)
        copy_rows_to_kmajor_tile(smem_q, tq, p.q + b * p.q_sb + h * p.q_sh, q0, p.sq, p.q_ss, lane, 32);
        fence_proxy_async();
        mbar_arrive(q_full);
        const uint16_t *kh = p.k + b * p.k_sb + hk * p.k_sh, *vh = p.v + b * p.v_sb + hk * p.v_sh;
        for (int j = 0; j < ntiles; j++) {
            // Step 2a: K_j, V_j once the previous tile's MMAs have released the buffers
            if (j > 0) mbar_wait(kv_empty, (uint32_t)(j - 1) & 1u, p.wd, SITE_KV_EMPTY);
            copy_rows_to_kmajor_tile(smem_k, tk, kh, j * FMHA_BN, p.skv, p.k_ss, lane, 32);
            copy_rows_to_mnmajor_tile(smem_v, tv, vh, j * FMHA_BN, p.skv, p.v_ss, lane, 32);
            fence_proxy_async();
            mbar_arrive(kv_full);
        }
    } else if (warp == FMHA_MMA_WARP) {
        // One thread issues every MMA and commit (tcgen05.mma is a single-thread instruction);
        // the warp converges again at the __syncwarp below.
        if (lane == 0) {
            const uint32_t idesc_qk = idesc_bf16_f32(FMHA_BM, FMHA_BN, 0, 0);
            const uint32_t idesc_pv = idesc_bf16_f32(FMHA_BM, (unsigned)d, 0, 1); // V MN-major
            mbar_wait(q_full, 0, p.wd, SITE_Q_FULL);
            for (int j = 0; j < ntiles; j++) {
                const uint32_t ph = (uint32_t)j & 1u;
                // Step 2b: S = Q K_j^T
                mbar_wait(kv_full, ph, p.wd, SITE_KV_FULL);
                tcgen05_fence_after();
                for (int k = 0; k < d; k += 16)
                    tmem_mma_f16_ss(tmem + FMHA_TMEM_S, smem_tile_desc_sm100(&tq, smem_u32(smem_q), 0, k),
                                    smem_tile_desc_sm100(&tk, smem_u32(smem_k), 0, k), idesc_qk, k > 0);
                tmem_commit(s_full);
                // Step 2e: O += P V_j (A = P from TMEM, accumulate off only for the very first)
                mbar_wait(p_full, ph, p.wd, SITE_P_FULL);
                tcgen05_fence_after();
                for (int k = 0; k < FMHA_BN; k += 16)
                    tmem_mma_f16_ts(tmem + FMHA_TMEM_O, tmem + FMHA_TMEM_P + k / 2,
                                    smem_tile_desc_sm100(&tv, smem_u32(smem_v), 0, k), idesc_pv, (j > 0 || k > 0));
                tmem_commit(o_done);
                if (j + 1 < ntiles) tmem_commit(kv_empty); // the last one would have no waiter before exit
            }
        }
        __syncwarp();
    } else {
        // Softmax warps; thread = row 32 * warp + lane of the tile
        const int r = 32 * warp + lane, row = q0 + r;
        const uint32_t lanes = (uint32_t)(32 * warp) << 16; // this warp's quadrant
        const float scale_log2 = p.scale * FMHA_LOG2E;
        float m_i = -INFINITY, l_i = 0.0f;
        for (int j = 0; j < ntiles; j++) {
            const uint32_t ph = (uint32_t)j & 1u;
            const int kv0 = j * FMHA_BN;
            // Step 2c: online softmax on this thread's row of S
            mbar_wait(s_full, ph, p.wd, SITE_S_FULL);
            __syncwarp(); // converged before the .sync.aligned tcgen05.ld
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

            // Step 2d: once the previous P V has finished (it read P and wrote O): the
            // correction O *= alpha, then P into TMEM, then hand both to the MMA warp
            if (j > 0) {
                mbar_wait(o_done, (uint32_t)(j - 1) & 1u, p.wd, SITE_O_DONE);
                __syncwarp(); // converged before the .sync.aligned tcgen05.ld / st
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
        // Step 3: epilogue: O / l_i -> bf16 -> global, LSE
        const float inv_l = l_i > 0.0f ? 1.0f / l_i : 0.0f; // no visible key: O = 0
        if (ntiles > 0) {
            mbar_wait(o_done, (uint32_t)(ntiles - 1) & 1u, p.wd, SITE_O_DONE);
            __syncwarp(); // converged before the .sync.aligned tcgen05.ld
            tcgen05_fence_after();
        }
        uint16_t *orow = p.o + b * p.o_sb + h * p.o_sh + (int64_t)row * p.o_ss;
        for (int c0 = 0; c0 < d; c0 += 32) {
            uint32_t u[32];
            __syncwarp(); // reconverge after the previous chunk's row < Sq stores
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

    // Step 4: teardown: every TMEM access is complete; free the columns
    tcgen05_fence_before();
    __syncthreads();
    if (warp == FMHA_MMA_WARP) {
        tcgen05_fence_after();
        tmem_dealloc(tmem, FMHA_TMEM_COLS);
    }
#else
    (void)p;
#endif
}

extern "C" int stage_c_sm100_launch(const void *params)
{
    const fmha_params &p = *(const fmha_params *)params;
    return launch_kernel(fmha_kernel, fmha_grid(&p), FMHA_SM100_THREADS, fmha_smem_layout_make(p.d).bytes, p);
}
