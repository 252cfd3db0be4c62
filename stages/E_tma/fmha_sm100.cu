// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage E, Blackwell (sm_100a).
//
// Key extensions over stage C:
//   1. TMA loads: one elected lane of the load warp issues cp.async.bulk.tensor box copies of Q,
//      K_j and V_j (D / 64 boxes of 64 columns x 128 rows per tile) from tensor maps built on the
//      host over the real strides (common/host/fmha_tmaps.c); the boxes land in the same SW128
//      tiles the thread copies filled
//   2. completion by transaction bytes: the load lane's arrive.expect_tx announces each tile's
//      bytes on its full barrier (rows past the end included: they arrive zero-filled and count,
//      footgun FG15); the MMA warp waits on its parity (FG16)
//   3. one barrier per operand: S = Q K_j^T starts while V_j is still in flight; k_empty is
//      committed by the S MMAs, so K_{j+1} is loaded under the softmax and P V of tile j, and
//      v_empty by the P V MMAs
//   4. zero fill is not a mask: keys past Skv arrive as zeros and the mask still sets their scores
//      to -inf (FG21)
//   5. O leaves through SMEM: each softmax warp writes its 32 rows into the Q tile (free once the
//      last S is in TMEM), fence.proxy.async, two 16-row TMA stores per 64 columns, then waits
//      until the stores have read the SMEM before the CTA may exit (FG22)
//
// Math: as in stage C (FlashAttention-2, log2 domain, m_i, l_i, alpha, O / l_i, LSE).
// Warp roles as stage C: warps 0-3 softmax, correction and epilogue (warp w owns TMEM lanes
// 32w..32w+31); warp 4 TMEM allocation and the MMAs; warp 5 the TMA loads (one lane).
//
// Operands and layouts (fmha.h): as stage C; O is staged in the Q tile's layout.
//
// Steps, with the mbarriers (count) that hand over between roles; parity = tile index & 1:
//   1   prologue: warp 4 allocates 512 TMEM columns; thread 0 initialises q_full, k_full, v_full
//       (1 arrive.expect_tx + bytes each), k_empty, v_empty, s_full, o_done (1 commit each), p_full
//       (128 softmax threads); warp 5 issues Q -> q_full
//   2a  warp 5: wait k_empty (j - 1), issue K_j -> k_full; wait v_empty (j - 1), issue V_j -> v_full
//   2b  warp 4: wait k_full; S = Q K_j^T (D/16 SS MMAs) -> commit s_full and, but for the last
//       tile, k_empty
//   2c  warps 0-3: wait s_full; read their row of S; mask, scale, m_new, alpha, P, l_i
//   2d  warps 0-3: wait o_done (j - 1); O *= alpha in TMEM; store P; wait::st; fence; arrive p_full
//   2e  warp 4: wait p_full and v_full; O += P V_j (8 TS MMAs) -> commit o_done and, but for the
//       last tile, v_empty
//   3   epilogue, warps 0-3: wait o_done (last tile); O / l_i -> bf16 -> SMEM -> TMA store; wait
//       for the store to read SMEM; LSE
//   4   teardown: warp 4 frees TMEM
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "device/launch.cuh"
#include "fmha.h"
#include "host/fmha_tmaps.h"
#include "model/frag_map.h"
#include "model/idesc.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
#include "device/bf16_pack.cuh"
#include "device/mbarrier.cuh"
#include "device/smem.cuh"
#include "device/tma.cuh"
#include "device/tma_tile.cuh"
#include "sm100/tcgen05.cuh"
#define FMHA_SM100_DEVICE 1
#else
#define FMHA_SM100_DEVICE 0
#endif

// Watchdog site ids of the waits: the barrier a deadlock report names.
enum { SITE_Q_FULL = 1, SITE_K_FULL, SITE_V_FULL, SITE_K_EMPTY, SITE_V_EMPTY, SITE_S_FULL, SITE_P_FULL, SITE_O_DONE };


static __global__ void __launch_bounds__(FMHA_SM100_THREADS, 1) fmha_kernel(const __grid_constant__ fmha_tma_args a)
{
#if FMHA_SM100_DEVICE
    // A copy in registers: the maps' addresses are taken (&a.k), which keeps `a` in parameter
    // memory, and every asm "memory" clobber would then reload each field of a.p (a load and a
    // branch per mask test: half the speed)
    const fmha_params p = a.p;
    const uint32_t probes = p.faults ? FMHA_FAULT_WAIT_PROBES : FMHA_MBAR_WAIT_PROBES; // a footgun run expects hangs
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const int d = p.d;
    const smem_layout L = fmha_smem_layout_make(d);
    const smem_tile tq = fmha_q_tile(d), tk = fmha_k_tile(d), tv = fmha_v_tile(d);
    uint8_t *smem_q = smem + L.tile[FMHA_SMEM_Q]; // [128 x D] K-major SW128: A of S = Q K^T
    uint8_t *smem_k = smem + L.tile[FMHA_SMEM_K]; // [128 x D] K-major SW128: B of S = Q K^T
    uint8_t *smem_v = smem + L.tile[FMHA_SMEM_V]; // [128 kv x D] MN-major SW128: B of O = P V
    uint64_t *bars = (uint64_t *)(smem + L.bars);
    const uint32_t q_full = smem_u32(&bars[FMHA_BAR_Q_FULL]), k_full = smem_u32(&bars[FMHA_BAR_K_FULL]);
    const uint32_t v_full = smem_u32(&bars[FMHA_BAR_V_FULL]), k_empty = smem_u32(&bars[FMHA_BAR_K_EMPTY]);
    const uint32_t v_empty = smem_u32(&bars[FMHA_BAR_V_EMPTY]), s_full = smem_u32(&bars[FMHA_BAR_S_FULL]);
    const uint32_t p_full = smem_u32(&bars[FMHA_BAR_P_FULL]), o_done = smem_u32(&bars[FMHA_BAR_O_DONE]);
    uint32_t *tmem_slot = (uint32_t *)(smem + L.tmem_slot);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * FMHA_BM, h = blockIdx.y, b = blockIdx.z;
    const int ntiles = fmha_kv_tiles(&p, q0);

    // Step 1: prologue: TMEM and barriers
    if (warp == FMHA_MMA_WARP) {
        tmem_alloc(smem_u32(tmem_slot), FMHA_TMEM_COLS);
        tmem_relinquish();
    }
    if (threadIdx.x == 0) {
        for (int i = 0; i < FMHA_NUM_BARS; i++) mbar_init(smem_u32(&bars[i]), fmha_bar_count(i, 0));
        mbar_fence_init();
    }
    tcgen05_fence_before();
    __syncthreads();
    tcgen05_fence_after();
    const uint32_t tmem = *tmem_slot;

    if (warp == FMHA_LOAD_WARP) {
        // One lane issues every copy (a TMA copy is a single-thread instruction)
        if (lane == 0) {
            const int hk_k = fmha_tma_kv_head(&p, h, 0), hk_v = fmha_tma_kv_head(&p, h, 1);
            // Step 1: prologue: the Q tile (query head h, batch b)
            mbar_arrive_expect_tx(q_full, fmha_tile_tx_bytes(d, FMHA_BM));
            tma_load_tile(smem_u32(smem_q), tq, d, &a.q, q_full, q0, h, b);
            for (int j = 0; j < ntiles; j++) {
                // Step 2a: K_j once S_{j-1} has read K; V_j once P V_{j-1} has read V
                if (j > 0) mbar_wait_budget(k_empty, (uint32_t)(j - 1) & 1u, p.wd, SITE_K_EMPTY, probes);
                mbar_arrive_expect_tx(k_full, fmha_k_expect_bytes(d, p.faults));
                tma_load_tile(smem_u32(smem_k), tk, d, &a.k, k_full, j * FMHA_BN, hk_k, b);
                if (j > 0) mbar_wait_budget(v_empty, (uint32_t)(j - 1) & 1u, p.wd, SITE_V_EMPTY, probes);
                mbar_arrive_expect_tx(v_full, fmha_tile_tx_bytes(d, FMHA_BN));
                tma_load_tile(smem_u32(smem_v), tv, d, &a.v, v_full, j * FMHA_BN, hk_v, b);
            }
        }
        __syncwarp();
    } else if (warp == FMHA_MMA_WARP) {
        // One thread issues every MMA and commit (tcgen05.mma is a single-thread instruction);
        // the warp converges again at the __syncwarp below.
        if (lane == 0) {
            const uint32_t idesc_qk = idesc_bf16_f32(FMHA_BM, FMHA_BN, 0, 0);
            const uint32_t idesc_pv = idesc_bf16_f32(FMHA_BM, (unsigned)d, 0, 1); // V MN-major
            mbar_wait_budget(q_full, 0, p.wd, SITE_Q_FULL, probes);
            for (int j = 0; j < ntiles; j++) {
                const uint32_t ph = (uint32_t)j & 1u;
                // Step 2b: S = Q K_j^T
                mbar_wait_budget(k_full, fmha_k_full_parity(j, p.faults), p.wd, SITE_K_FULL, probes);
                tcgen05_fence_after();
                for (int k = 0; k < d; k += 16)
                    tmem_mma_f16_ss(tmem + FMHA_TMEM_S, smem_tile_desc_sm100(&tq, smem_u32(smem_q), 0, k),
                                    smem_tile_desc_sm100(&tk, smem_u32(smem_k), 0, k), idesc_qk, k > 0);
                tmem_commit(s_full);
                if (j + 1 < ntiles) tmem_commit(k_empty); // the last one would have no waiter before exit
                // Step 2e: O += P V_j (A = P from TMEM, accumulate off only for the very first)
                mbar_wait_budget(p_full, ph, p.wd, SITE_P_FULL, probes);
                mbar_wait_budget(v_full, ph, p.wd, SITE_V_FULL, probes);
                tcgen05_fence_after();
                for (int k = 0; k < FMHA_BN; k += 16)
                    tmem_mma_f16_ts(tmem + FMHA_TMEM_O, tmem + FMHA_TMEM_P + k / 2,
                                    smem_tile_desc_sm100(&tv, smem_u32(smem_v), 0, k), idesc_pv, (j > 0 || k > 0));
                tmem_commit(o_done);
                if (j + 1 < ntiles) tmem_commit(v_empty);
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
            mbar_wait_budget(s_full, ph, p.wd, SITE_S_FULL, probes);
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
                mbar_wait_budget(o_done, (uint32_t)(j - 1) & 1u, p.wd, SITE_O_DONE, probes);
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
        // Step 3: epilogue: O / l_i -> bf16 -> SMEM (the Q tile, this warp's 32 rows) -> TMA store; LSE
        const float inv_l = l_i > 0.0f ? 1.0f / l_i : 0.0f; // no visible key: O = 0
        if (ntiles > 0) {
            mbar_wait_budget(o_done, (uint32_t)(ntiles - 1) & 1u, p.wd, SITE_O_DONE, probes);
            __syncwarp(); // converged before the .sync.aligned tcgen05.ld
            tcgen05_fence_after();
        } else {
            mbar_wait_budget(q_full, 0, p.wd, SITE_Q_FULL, probes); // no MMA waited for Q: it must land before O takes its place
            __syncwarp();
        }
        for (int c0 = 0; c0 < d; c0 += 32) {
            uint32_t u[32];
            if (ntiles > 0) {
                tmem_ld_32x32b_x32(tmem + lanes + FMHA_TMEM_O + c0, u);
                tmem_wait_ld();
            } else {
#pragma unroll
                for (int e = 0; e < 32; e++) u[e] = 0u;
            }
#pragma unroll
            for (int e = 0; e < 32; e += 8) { // rows past Sq too: the store clips them
                uint4 v;
                v.x = pack_bf16x2(__uint_as_float(u[e + 0]) * inv_l, __uint_as_float(u[e + 1]) * inv_l);
                v.y = pack_bf16x2(__uint_as_float(u[e + 2]) * inv_l, __uint_as_float(u[e + 3]) * inv_l);
                v.z = pack_bf16x2(__uint_as_float(u[e + 4]) * inv_l, __uint_as_float(u[e + 5]) * inv_l);
                v.w = pack_bf16x2(__uint_as_float(u[e + 6]) * inv_l, __uint_as_float(u[e + 7]) * inv_l);
                *(uint4 *)(smem_q + smem_tile_offset(&tq, r, c0 + e)) = v;
            }
        }
        if (!(p.faults & FMHA_FAULT_STORE_NO_FENCE)) fence_proxy_async(); // generic writes -> the async proxy
        __syncwarp();
        if (lane == 0) {
            for (int half = 0; half < 2; half++) {
                const int r0 = 32 * warp + FMHA_O_BOX_ROWS * half;
                if (q0 + r0 >= p.sq) break;
                for (int c = 0; c < d / FMHA_BOX_COLS; c++)
                    tma_store_4d(&a.o, smem_u32(smem_q) + smem_tile_offset(&tq, r0, FMHA_BOX_COLS * c), FMHA_BOX_COLS * c,
                                 q0 + r0, h, b);
            }
            tma_store_commit();
            if (!(p.faults & FMHA_FAULT_STORE_NO_WAIT)) tma_store_wait_read<0>(); // SMEM read: the CTA may exit
        }
        __syncwarp();
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
    (void)a;
#endif
}

extern "C" int stage_e_sm100_launch(const void *params)
{
    const fmha_params &p = *(const fmha_params *)params;
    fmha_tma_args a;
    char err[800];
    if (fmha_tmaps_encode(&p, 10, &a, err, sizeof err)) {
        fprintf(stderr, "stage E (sm100): %s\n", err);
        return 1;
    }
    return launch_kernel(fmha_kernel, fmha_grid(&p), FMHA_SM100_THREADS, fmha_smem_layout_make(p.d).bytes, a);
}
