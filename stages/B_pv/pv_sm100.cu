// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage B, Blackwell (sm_100a).
//
// Key extensions over stage A:
//   1. a second MMA, O = P V, accumulated over every KV tile: the first P V with accumulate off
//      and every later one on (footgun FG05)
//   2. P = bf16(scale * S) packed two per 32-bit word (cvt operand order: FG07) and stored to
//      TMEM with tcgen05.st, where the TS form of tcgen05.mma reads it as its A operand; TMEM
//      column offsets counted in 32-bit columns (FG08)
//   3. V as stored (V[kv][d]) is MN-major for P V: idesc bit 16 and an MN-major descriptor (FG04);
//      the P V MMA is non-square for D = 64 (128 x 64: FG03, FG06)
//   4. a loop over KV tiles and three mbarriers handing over between the MMA thread and the
//      softmax warps (s_full, p_full, o_done)
//
// Math: for each KV tile j (128 keys):  S_j = Q K_j^T;  P_j = bf16(scale * S_j)  (identity
//       "softmax", so stage C only has to change what happens between the two MMAs);
//       O = sum_j P_j V_j.
// One CTA of 160 threads (warps 0-3: the "softmax" warps, one 32-lane TMEM quadrant each;
// warp 4: the MMA warp, which also owns the TMEM allocation) computes O for 128 query rows.
//
// Operands and layouts:
//   Q  [B, H, Sq, D]  bf16 -> SMEM [128 x D] K-major SW128   A of S = Q K^T
//   K  [B, H, Skv, D] bf16 -> SMEM [128 x D] K-major SW128   B of S = Q K^T
//   V  [B, H, Skv, D] bf16 -> SMEM [128 kv x D] MN-major SW128 (as stored: V[kv][d], N = d
//      contiguous): B of O = P V
//   S  TMEM lanes 0-127 x cols [0, 128)     f32
//   P  TMEM lanes 0-127 x cols [128, 192)   bf16, two per 32-bit column, even k in the low half
//   O  TMEM lanes 0-127 x cols [256, 256+D) f32, then [B, H, Sq, D] f32 in global
//
// Steps (per KV tile j, parity j & 1 on every barrier):
//   1   prologue: warp 4 allocates 512 TMEM columns (S + P + O, a power of two); thread 0
//       initialises s_full (1 commit), p_full (128 softmax threads), o_done (1 commit); all
//       threads copy the Q tile
//   2a  all threads copy K_j and V_j into SMEM; fence.proxy.async; CTA barrier
//   2b  MMA thread: S = Q K_j^T (D/16 MMAs), commit -> s_full
//   2c  softmax warps: wait s_full, read S from their quadrant, P = bf16(scale * S) packed in
//       pairs, tcgen05.st 32-bit words, wait::st, fence, arrive p_full (every thread: the count
//       is 128 threads, not 4 warps: FG10)
//   2d  MMA thread: wait p_full, O += P V_j: 8 TS MMAs (A = P from TMEM, +8 columns per k16 step,
//       B = V MN-major, +2048 B per k16 step), accumulate off only for the very first; commit ->
//       o_done
//   2e  everyone waits o_done: S, P and the K/V SMEM are free for tile j + 1
//   3   epilogue: the softmax warps read O from their quadrants and store it
//   4   teardown: warp 4 frees TMEM
#include <cuda_runtime.h>
#include <stdint.h>

#include "device/launch.cuh"
#include "model/frag_map.h"
#include "model/idesc.h"
#include "pv.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
#include "device/bf16_pack.cuh"
#include "device/canonical_copy.cuh"
#include "device/mbarrier.cuh"
#include "device/smem.cuh"
#include "sm100/tcgen05.cuh"
#define PV_SM100_DEVICE 1
#else
#define PV_SM100_DEVICE 0
#endif

enum { SITE_S_FULL = 1, SITE_P_FULL = 2, SITE_O_DONE = 3 };
enum { MMA_WARP = 4, SOFTMAX_THREADS = 128 };

static __global__ void __launch_bounds__(160, 1) pv_kernel(pv_params p)
{
#if PV_SM100_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const smem_layout L = pv_smem_layout_make(p.d);
    const smem_tile tq = pv_q_tile(p.d), tk = pv_k_tile(p.d), tv = pv_v_tile(p.d);
    uint8_t *smem_q = smem + L.tile[PV_SMEM_Q]; // [128 x D] K-major SW128
    uint8_t *smem_k = smem + L.tile[PV_SMEM_K]; // [128 x D] K-major SW128
    uint8_t *smem_v = smem + L.tile[PV_SMEM_V]; // [128 kv x D] MN-major SW128
    uint64_t *bars = (uint64_t *)(smem + L.bars);
    const uint32_t s_full = smem_u32(&bars[PV_BAR_S_FULL]), p_full = smem_u32(&bars[PV_BAR_P_FULL]);
    const uint32_t o_done = smem_u32(&bars[PV_BAR_O_DONE]);
    uint32_t *tmem_slot = (uint32_t *)(smem + L.tmem_slot);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * PV_BM, bh = blockIdx.y;
    const uint16_t *kbh = p.k + (size_t)bh * p.skv * p.d, *vbh = p.v + (size_t)bh * p.skv * p.d;

    // Step 1: prologue: TMEM, barriers, the Q tile
    if (warp == MMA_WARP) {
        tmem_alloc(smem_u32(tmem_slot), PV_TMEM_COLS);
        tmem_relinquish();
    }
    if (threadIdx.x == 0) {
        mbar_init(s_full, 1);
        mbar_init(p_full, SOFTMAX_THREADS);
        mbar_init(o_done, 1);
        mbar_fence_init();
    }
    copy_rows_to_kmajor_tile(smem_q, tq, p.q + (size_t)bh * p.sq * p.d, q0, p.sq, p.d, threadIdx.x, blockDim.x);

    const uint32_t idesc_qk = idesc_bf16_f32(PV_BM, PV_BN, 0, 0);
    const uint32_t idesc_pv = idesc_bf16_f32(PV_BM, (unsigned)p.d, 0, 1); // V MN-major: bit 16
    const int ntiles = (p.skv + PV_BN - 1) / PV_BN;
    uint32_t tmem = 0;
    for (int j = 0; j < ntiles; j++) {
        const uint32_t ph = (uint32_t)j & 1u;
        // Step 2a: K_j, V_j -> SMEM (rows past Skv are zeros: S = 0 there and V = 0, no effect)
        copy_rows_to_kmajor_tile(smem_k, tk, kbh, j * PV_BN, p.skv, p.d, threadIdx.x, blockDim.x);
        copy_rows_to_mnmajor_tile(smem_v, tv, vbh, j * PV_BN, p.skv, p.d, threadIdx.x, blockDim.x);
        fence_proxy_async();
        tcgen05_fence_before();
        __syncthreads();
        tcgen05_fence_after();
        tmem = *tmem_slot;

        // Step 2b: S = Q K_j^T
        if (warp == MMA_WARP && lane == 0) {
            for (int k = 0; k < p.d; k += 16)
                tmem_mma_f16_ss(tmem + PV_TMEM_S, smem_tile_desc_sm100(&tq, smem_u32(smem_q), 0, k),
                                smem_tile_desc_sm100(&tk, smem_u32(smem_k), 0, k), idesc_qk, k > 0);
            tmem_commit(s_full);
        }

        // Step 2c: P = bf16(scale * S), each softmax warp on its own 32 lanes
        if (warp < MMA_WARP) {
            mbar_wait(s_full, ph, p.wd, SITE_S_FULL);
            __syncwarp(); // converged before the .sync.aligned tcgen05.ld / st
            tcgen05_fence_after();
#pragma unroll 1
            for (int c0 = 0; c0 < PV_BN; c0 += 32) {
                uint32_t s[32], pk[16];
                tmem_ld_32x32b_x32(tmem_addr(tmem + PV_TMEM_S, 32 * warp, c0), s);
                tmem_wait_ld();
#pragma unroll
                for (int i = 0; i < 16; i++)
                    pk[i] = pack_bf16x2(__uint_as_float(s[2 * i]) * p.scale, __uint_as_float(s[2 * i + 1]) * p.scale);
                // f32 column units: keys c0 .. c0 + 31 as 16 packed columns at c0 / 2, PV_P_TMEM_LAYOUT
                // read as CuTe reads it (FG09: its nested mode read the other way swaps blocks 1 and 2)
                tmem_st_32x32b_x16(tmem_addr(tmem + PV_TMEM_P, 32 * warp, c0 / 2), pk);
            }
            tmem_wait_st();
            tcgen05_fence_before();
            mbar_arrive(p_full);
        }

        // Step 2d: O += P V_j (A = P from TMEM, B = V from SMEM, MN-major)
        if (warp == MMA_WARP && lane == 0) {
            mbar_wait(p_full, ph, p.wd, SITE_P_FULL);
            tcgen05_fence_after();
            for (int k = 0; k < PV_BN; k += 16)
                tmem_mma_f16_ts(tmem + PV_TMEM_O, tmem + PV_TMEM_P + k / 2, smem_tile_desc_sm100(&tv, smem_u32(smem_v), 0, k),
                                idesc_pv, (j > 0 || k > 0));
            tmem_commit(o_done);
        }
        __syncwarp();

        // Step 2e: the tile's MMAs are done: S, P, K_j, V_j may be overwritten
        mbar_wait(o_done, ph, p.wd, SITE_O_DONE);
        __syncwarp(); // converged before the next .sync.aligned tcgen05 instruction
        tcgen05_fence_after();
    }

    // Step 3: epilogue: O out of TMEM, each softmax warp its own quadrant
    if (warp < MMA_WARP) {
        const int row = q0 + 32 * warp + lane;
        for (int c0 = 0; c0 < p.d; c0 += 32) {
            uint32_t o[32];
            __syncwarp(); // reconverge after the previous chunk's row < Sq stores
            tmem_ld_32x32b_x32(tmem_addr(tmem + PV_TMEM_O, 32 * warp, c0), o);
            tmem_wait_ld();
            if (row < p.sq) {
                float *orow = p.o + ((size_t)bh * p.sq + row) * p.d + c0;
#pragma unroll
                for (int i = 0; i < 32; i += 4)
                    *(float4 *)(orow + i) = make_float4(__uint_as_float(o[i]), __uint_as_float(o[i + 1]),
                                                        __uint_as_float(o[i + 2]), __uint_as_float(o[i + 3]));
            }
        }
    }

    // Step 4: teardown: free TMEM
    tcgen05_fence_before();
    __syncthreads();
    if (warp == MMA_WARP) {
        tcgen05_fence_after();
        tmem_dealloc(tmem, PV_TMEM_COLS);
    }
#else
    (void)p;
#endif
}

extern "C" int stage_b_sm100_launch(const void *params)
{
    const pv_params &p = *(const pv_params *)params;
    return launch_kernel(pv_kernel, pv_grid(&p), 160, pv_smem_layout_make(p.d).bytes, p);
}
