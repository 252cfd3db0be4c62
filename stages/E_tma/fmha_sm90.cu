// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage E, Hopper port (sm_90a).
//
// Key extensions over stage C:
//   1. TMA loads: one producer thread issues cp.async.bulk.tensor box copies of Q, K_j and V_j
//      (D / 64 boxes of 64 columns x 128 rows per tile) from tensor maps built on the host over
//      the real strides (common/host/fmha_tmaps.c); the boxes land in the same SW128 tiles the
//      thread copies filled, and no other thread spends a cycle on loads
//   2. completion by transaction bytes: each tile has a full mbarrier on which the producer's
//      arrive.expect_tx announces the tile's bytes (rows past the end included: they arrive
//      zero-filled and count, footgun FG15); the consumers wait on its parity (FG16)
//   3. one barrier per operand, so S = Q K_j^T starts while V_j is still in flight, and empty
//      barriers (8 consumer warps each) so the producer issues K_{j+1} as soon as S_j has read
//      K_j, under the softmax and P V of tile j; V_{j+1} goes once P V_j has read V_j
//   4. zero fill is not a mask: keys past Skv arrive as zeros and the mask still sets their scores
//      to -inf (FG21)
//   5. O leaves through SMEM: each warp writes its 16 rows into the Q tile (free after the last
//      S), fence.proxy.async, one TMA store per 64 columns, then waits until the store has read
//      the SMEM before the CTA may exit (FG22)
//
// Math: as in stage C (FlashAttention-2, log2 domain, m_i, l_i, alpha, O / l_i, LSE).
// One CTA of 256 threads (two consumer warpgroups, 64 query rows each, Br = 128, Bc = 128);
// thread 0 is also the producer: it issues every TMA copy and waits on the empty barriers.
//
// Operands and layouts: as stage C (fmha.h): Q, K K-major SW128, V MN-major SW128 in SMEM; S and
// O in registers; P re-viewed in registers as the wgmma A operand.
//
// Steps (the same labels as fmha_sm100.cu):
//   1   prologue: thread 0 initialises q_full, k_full, v_full (1 arrive.expect_tx each), k_empty,
//       v_empty (8 warps); CTA barrier; thread 0 issues Q, K_0, V_0; all wait q_full
//   2a  per KV tile j: wait k_full (K_j landed)
//   2b  S = Q K_j^T: D/16 wgmma m64n128k16 SS; commit; wait; each warp arrives on k_empty; thread 0
//       waits for all 8 and issues K_{j+1}
//   2c  mask (tails, causal bottom-right) and scale; row max over the quad; m_new, alpha, P, l_i
//   2d  the correction: O *= alpha in registers
//   2e  wait v_full; O += P V_j: 8 wgmma m64nDk16 RS (transpose-B); commit; wait; each warp
//       arrives on v_empty; thread 0 waits for all 8 and issues V_{j+1}
//   3   epilogue: l_i summed over the quad; O / l_i -> bf16 -> SMEM (the Q tile) -> TMA store of
//       each warp's 16 rows; wait for the store to read SMEM; LSE by one thread per row
//   4   teardown: nothing to free (no TMEM on Hopper)
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "device/launch.cuh"
#include "fmha.h"
#include "host/fmha_tmaps.h"
#include "model/frag_map.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900)
#include "device/bf16_pack.cuh"
#include "device/mbarrier.cuh"
#include "device/smem.cuh"
#include "device/tma.cuh"
#include "device/tma_tile.cuh"
#include "sm90/wgmma.cuh"
#define FMHA_SM90_DEVICE 1
#else
#define FMHA_SM90_DEVICE 0
#endif

// Watchdog site ids of the waits: the barrier a deadlock report names.
enum { SITE_Q_FULL = 1, SITE_K_FULL, SITE_V_FULL, SITE_K_EMPTY, SITE_V_EMPTY };


template <int D>
static __global__ void __launch_bounds__(FMHA_SM90_THREADS, 1) fmha_kernel(const __grid_constant__ fmha_tma_args a)
{
#if FMHA_SM90_DEVICE
    // A copy in registers: the maps' addresses are taken (&a.k), which keeps `a` in parameter
    // memory, and every asm "memory" clobber would then reload each field of a.p (a load and a
    // branch per mask test: half the speed)
    const fmha_params p = a.p;
    const uint32_t probes = p.faults ? FMHA_FAULT_WAIT_PROBES : FMHA_MBAR_WAIT_PROBES; // a footgun run expects hangs
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const smem_layout L = fmha_smem_layout_make(D);
    const smem_tile tq = fmha_q_tile(D), tk = fmha_k_tile(D), tv = fmha_v_tile(D);
    uint8_t *smem_q = smem + L.tile[FMHA_SMEM_Q]; // [128 x D] K-major SW128: A of S = Q K^T
    uint8_t *smem_k = smem + L.tile[FMHA_SMEM_K]; // [128 x D] K-major SW128: B of S = Q K^T
    uint8_t *smem_v = smem + L.tile[FMHA_SMEM_V]; // [128 kv x D] MN-major SW128: B of O = P V
    uint64_t *bars = (uint64_t *)(smem + L.bars);
    const uint32_t q_full = smem_u32(&bars[FMHA_BAR_Q_FULL]), k_full = smem_u32(&bars[FMHA_BAR_K_FULL]);
    const uint32_t v_full = smem_u32(&bars[FMHA_BAR_V_FULL]), k_empty = smem_u32(&bars[FMHA_BAR_K_EMPTY]);
    const uint32_t v_empty = smem_u32(&bars[FMHA_BAR_V_EMPTY]);
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * FMHA_BM, h = blockIdx.y, b = blockIdx.z;
    const int hk_k = fmha_tma_kv_head(&p, h, 0), hk_v = fmha_tma_kv_head(&p, h, 1);
    const bool producer = threadIdx.x == 0;
    const float scale_log2 = p.scale * FMHA_LOG2E;
    const int ntiles = fmha_kv_tiles(&p, q0);

    // Step 1: prologue: the barriers, then the producer issues Q, K_0, V_0
    if (producer) {
        for (int i = 0; i < FMHA_NUM_BARS; i++) mbar_init(smem_u32(&bars[i]), fmha_bar_count(i, 1));
        mbar_fence_init();
    }
    __syncthreads();
    if (producer) {
        mbar_arrive_expect_tx(q_full, fmha_tile_tx_bytes(D, FMHA_BM));
        tma_load_tile<D>(smem_u32(smem_q), tq, &a.q, q_full, q0, h, b);
        if (ntiles > 0) {
            mbar_arrive_expect_tx(k_full, fmha_k_expect_bytes(D, p.faults));
            tma_load_tile<D>(smem_u32(smem_k), tk, &a.k, k_full, 0, hk_k, b);
            mbar_arrive_expect_tx(v_full, fmha_tile_tx_bytes(D, FMHA_BN));
            tma_load_tile<D>(smem_u32(smem_v), tv, &a.v, v_full, 0, hk_v, b);
        }
    }
    mbar_wait_budget(q_full, 0, p.wd, SITE_Q_FULL, probes); // also before the epilogue reuses smem_q for O
    __syncwarp();                            // converged before the .sync.aligned wgmma

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

    for (int j = 0; j < ntiles; j++) {
        const int kv0 = j * FMHA_BN;
        const bool more = j + 1 < ntiles;
        // Step 2a: K_j has landed (the producer issued it a tile ahead)
        mbar_wait_budget(k_full, fmha_k_full_parity(j, p.faults), p.wd, SITE_K_FULL, probes);

        // Step 2b: S = Q K_j^T (rows 64wg.. of the tile)
        float s[FMHA_BN / 2];
#pragma unroll
        for (int i = 0; i < FMHA_BN / 2; i++) s[i] = 0.0f;
        wgmma_fence();
        wgmma_m64n128_ss_bf16_over_k<D>(s, tq, smem_u32(smem_q), 64 * wg, tk, smem_u32(smem_k));
        wgmma_commit();
        wgmma_wait<0>();
        // K_j has been read: once all 8 warps say so, the producer issues K_{j+1}
        __syncwarp();
        if (more && lane == 0) mbar_arrive(k_empty);
        if (more && producer) {
            mbar_wait_budget(k_empty, (uint32_t)j & 1u, p.wd, SITE_K_EMPTY, probes);
            mbar_arrive_expect_tx(k_full, fmha_k_expect_bytes(D, p.faults));
            tma_load_tile<D>(smem_u32(smem_k), tk, &a.k, k_full, kv0 + FMHA_BN, hk_k, b);
        }

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

        // Step 2e: V_j has landed; O += P V_j with P re-viewed as the register A operand
        uint32_t pa[FMHA_BN / 16][4];
#pragma unroll
        for (int kk = 0; kk < FMHA_BN / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++) pa[kk][r] = pack_bf16x2(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
        mbar_wait_budget(v_full, (uint32_t)j & 1u, p.wd, SITE_V_FULL, probes);
        __syncwarp(); // converged (the producer lane took its own path) before the .sync.aligned wgmma
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < FMHA_BN / 16; kk++)
            wgmma_m64nNk16_rs_bf16<D, 1>(o, pa[kk], smem_tile_desc_sm90(&tv, smem_u32(smem_v), 0, 16 * kk), 1);
        wgmma_commit();
        wgmma_wait<0>();
        // V_j has been read: the producer issues V_{j+1}
        __syncwarp();
        if (more && lane == 0) mbar_arrive(v_empty);
        if (more && producer) {
            mbar_wait_budget(v_empty, (uint32_t)j & 1u, p.wd, SITE_V_EMPTY, probes);
            mbar_arrive_expect_tx(v_full, fmha_tile_tx_bytes(D, FMHA_BN));
            tma_load_tile<D>(smem_u32(smem_v), tv, &a.v, v_full, kv0 + FMHA_BN, hk_v, b);
        }
        __syncwarp();
    }

    // Step 3: epilogue: finish the row sums over the quad, normalise; O -> SMEM -> TMA store; LSE
    float inv_l[2];
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        l_i[hi] += __shfl_xor_sync(0xFFFFFFFFu, l_i[hi], 1);
        l_i[hi] += __shfl_xor_sync(0xFFFFFFFFu, l_i[hi], 2);
        inv_l[hi] = l_i[hi] > 0.0f ? 1.0f / l_i[hi] : 0.0f; // no visible key: O = 0
    }
    // This warp's 16 rows of O into the Q tile (its own rows of Q, read by the last S), in Q's layout
#pragma unroll
    for (int i = 0; i < D / 2; i += 2) {
        int r, c;
        wgmma_acc_map(t, i, &r, &c); // registers i, i+1: columns c, c+1 of one row
        const int hi = (i >> 1) & 1;
        *(uint32_t *)(smem_q + smem_tile_offset(&tq, 64 * wg + r, c)) =
            pack_bf16x2(o[i] * inv_l[hi], o[i + 1] * inv_l[hi]);
    }
    if (!(p.faults & FMHA_FAULT_STORE_NO_FENCE)) fence_proxy_async(); // generic writes -> the async proxy
    __syncwarp();
    const int r0 = 64 * wg + 16 * (warp % 4); // this warp's first row in the tile
    if (lane == 0 && q0 + r0 < p.sq) {        // rows past Sq: the store clips them
#pragma unroll
        for (int c = 0; c < D / FMHA_BOX_COLS; c++)
            tma_store_4d(&a.o, smem_u32(smem_q) + smem_tile_offset(&tq, r0, FMHA_BOX_COLS * c), FMHA_BOX_COLS * c, q0 + r0, h, b);
        tma_store_commit();
        if (!(p.faults & FMHA_FAULT_STORE_NO_WAIT)) tma_store_wait_read<0>(); // SMEM read: the CTA may exit
    }
    __syncwarp();
    if (lane % 4 == 0) {
#pragma unroll
        for (int hi = 0; hi < 2; hi++)
            if (row[hi] < p.sq)
                p.lse[((int64_t)b * p.hq + h) * p.sq + row[hi]] = l_i[hi] > 0.0f ? m_i[hi] * FMHA_LN2 + logf(l_i[hi]) : -INFINITY;
    }
    // Step 4: teardown: nothing to free (no TMEM on Hopper)
#else
    (void)a;
#endif
}

extern "C" int stage_e_sm90_launch(const void *params)
{
    const fmha_params &p = *(const fmha_params *)params;
    fmha_tma_args a;
    char err[800];
    if (fmha_tmaps_encode(&p, 9, &a, err, sizeof err)) {
        fprintf(stderr, "stage E (sm90): %s\n", err);
        return 1;
    }
    const uint32_t smem = fmha_smem_layout_make(p.d).bytes;
    return dispatch_head_dim<64, 128, 256>(p.d, [&](auto D) {
        return launch_kernel(fmha_kernel<decltype(D)::value>, fmha_grid(&p), FMHA_SM90_THREADS, smem, a);
    });
}
