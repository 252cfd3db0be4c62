// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage A, Blackwell (sm_100a).
//
// Key ideas (the first stage: it builds on nothing but common/):
//   1. operand tiles in the canonical SMEM layout (K-major, 128-byte swizzle) filled by threads
//      through the same address map the descriptors are built from (footgun FG01)
//   2. SMEM matrix descriptors and the instruction descriptor from the shared encoders
//   3. one tcgen05.mma M=128, N=128, K=16 per 16 columns of D, issued by one thread, completing
//      on an mbarrier through tcgen05.commit
//   4. the accumulator in Tensor Memory, read back by the four warps of the warpgroup, each from
//      its own 32-lane quadrant (footgun FG02)
//
// Math: S[b, h, i, j] = scale * sum_d Q[b, h, i, d] * K[b, h, j, d]   (scale = 1/sqrt(D))
// One CTA of 128 threads (one warpgroup) computes one 128 x 128 tile of S for one (batch, head):
// Q rows q0..q0+127 against keys kv0..kv0+127.
//
// Operands and layouts:
//   Q  [B, H, Sq, D]  bf16 row-major in global -> SMEM [128 x D] K-major, 128B swizzle (A operand)
//   K  [B, H, Skv, D] bf16 row-major in global -> SMEM [128 x D] K-major, 128B swizzle (B operand)
//   S  accumulator in TMEM: lanes 0-127 (row i -> lane i) x columns [0, 128) f32
//   S  [B, H, Sq, Skv] f32 row-major in global (the output)
// Rows beyond Sq and keys beyond Skv are loaded as zeros and never stored (tails are masked).
//
// Steps:
//   1   prologue: warp 0 allocates 128 TMEM columns and relinquishes the allocation permit;
//       thread 0 initialises the MMA-done mbarrier (count 1: one commit arrives)
//   2a  all threads copy the Q and K tiles from global memory into the canonical SMEM layout
//       (16 bytes per copy; the address of each 16-byte chunk comes from model/canonical.h);
//       fence.proxy.async (generic stores -> visible to the tensor core), then a CTA barrier that
//       also publishes the TMEM address
//   2b  thread 0 issues D/16 MMAs (accumulate off for the first) and commits them to the mbarrier
//   3   epilogue: all four warps wait on the mbarrier (bounded: a deadlock is reported, not hung),
//       then each reads ITS OWN 32-lane quadrant of TMEM (warp w: lanes 32w..32w+31) with
//       tcgen05.ld.32x32b, scales and stores its 32 rows of S
//   4   teardown: everyone is done with TMEM: warp 0 frees the columns
#include <cuda_runtime.h>
#include <stdint.h>

#include "device/launch.cuh"
#include "model/frag_map.h"
#include "model/idesc.h"
#include "qk.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
#include "device/canonical_copy.cuh"
#include "device/mbarrier.cuh"
#include "device/smem.cuh"
#include "sm100/tcgen05.cuh"
#define QK_SM100_DEVICE 1
#else
#define QK_SM100_DEVICE 0
#endif

enum { SITE_MMA_DONE = 1 }; // watchdog site ids of this kernel's waits


static __global__ void __launch_bounds__(128, 1) qk_kernel(qk_params p)
{
#if QK_SM100_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const smem_layout L = qk_smem_layout_make(p.d);
    const smem_tile tq = qk_q_tile(p.d), tk = qk_k_tile(p.d);
    uint8_t *smem_q = smem + L.tile[QK_SMEM_Q];             // Q tile [128 x D] K-major SW128
    uint8_t *smem_k = smem + L.tile[QK_SMEM_K];             // K tile [128 x D] K-major SW128
    uint64_t *mma_done = (uint64_t *)(smem + L.bars);       // mbarrier: MMAs complete
    uint32_t *tmem_slot = (uint32_t *)(smem + L.tmem_slot); // TMEM base address written by alloc
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int kv0 = blockIdx.x * QK_BN, q0 = blockIdx.y * QK_BM, bh = blockIdx.z;

    // Step 1: prologue: TMEM (128 columns = one f32 128 x 128 accumulator) and the mbarrier
    if (warp == 0) {
        tmem_alloc(smem_u32(tmem_slot), QK_BN);
        tmem_relinquish();
    }
    if (threadIdx.x == 0) {
        mbar_init(smem_u32(mma_done), 1);
        mbar_fence_init();
    }

    // Step 2a: global -> SMEM, canonical K-major 128B-swizzled tiles
    copy_rows_to_kmajor_tile(smem_q, tq, p.q + (size_t)bh * p.sq * p.d, q0, p.sq, p.d, threadIdx.x, blockDim.x);
    copy_rows_to_kmajor_tile(smem_k, tk, p.k + (size_t)bh * p.skv * p.d, kv0, p.skv, p.d, threadIdx.x, blockDim.x);

    // make the tiles visible to the async proxy, then publish them and the TMEM address
    fence_proxy_async();
    tcgen05_fence_before();
    __syncthreads();
    tcgen05_fence_after();
    const uint32_t tmem_s = *tmem_slot; // TMEM lanes 0-127 x cols [base, base+128) f32: S

    // Step 2b: one thread issues the MMAs: S = Q K^T over K = D in steps of 16
    if (threadIdx.x == 0) {
        const uint32_t idesc = idesc_bf16_f32(QK_BM, QK_BN, 0, 0); // 0x08200490
        for (int k = 0; k < p.d; k += 16)
            tmem_mma_f16_ss(tmem_s, smem_tile_desc_sm100(&tq, smem_u32(smem_q), 0, k),
                            smem_tile_desc_sm100(&tk, smem_u32(smem_k), 0, k), idesc, k > 0);
        tmem_commit(smem_u32(mma_done));
    }
    __syncwarp();

    // Step 3: epilogue: wait for the MMAs, then each warp reads its own quadrant: lanes 32w..32w+31
    mbar_wait(smem_u32(mma_done), 0, p.wd, SITE_MMA_DONE);
    __syncwarp(); // converged before the .sync.aligned tcgen05.ld
    tcgen05_fence_after();
    const int row = q0 + 32 * warp + lane;
    float *srow = p.s + ((size_t)bh * p.sq + row) * p.skv;
#pragma unroll 1
    for (int c0 = 0; c0 < QK_BN; c0 += 32) {
        uint32_t r[32];
        __syncwarp(); // reconverge after the previous chunk's row < Sq stores
        tmem_ld_32x32b_x32(tmem_addr(tmem_s, 32 * warp, c0), r);
        tmem_wait_ld();
        if (row < p.sq) {
#pragma unroll
            for (int j = 0; j < 32; j++)
                if (kv0 + c0 + j < p.skv) srow[kv0 + c0 + j] = __uint_as_float(r[j]) * p.scale;
        }
    }

    // Step 4: teardown: all TMEM reads are complete (wait::ld above); free the columns
    tcgen05_fence_before();
    __syncthreads();
    if (warp == 0) {
        tcgen05_fence_after();
        tmem_dealloc(tmem_s, QK_BN);
    }
#else
    (void)p;
#endif
}

extern "C" int stage_a_sm100_launch(const void *params)
{
    const qk_params &p = *(const qk_params *)params;
    return launch_kernel(qk_kernel, qk_grid(&p), 128, qk_smem_layout_make(p.d).bytes, p);
}
