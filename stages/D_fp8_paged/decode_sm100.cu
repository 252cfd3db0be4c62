// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage D, Blackwell (sm_100a).
//
// Key extensions over stage C:
//   1. the KV cache is e4m3 in pages: the load warp finds each token's row through the block
//      table and gathers it with cp.async (16 bytes a copy); slots past the sequence's end are
//      zero-filled, never read (footgun FG18)
//   2. both MMAs in FP8: tcgen05.mma kind::f8f6f4, e4m3 x e4m3 -> f32, K = 32 per MMA, both SS:
//      P is no longer in TMEM but an e4m3 tile in SMEM written by the softmax warps; Q is
//      quantised per row on the way in, P per row and tile (dec_p_scale)
//   3. V transposed in SMEM by the load warp (Vs -> Vt, K-major), the layout the sm90 port needs
//      (FP8 wgmma reads K-major operands only, FG20) and sm100 shares
//   4. the scales never touch the cache's elements: K's on the columns of S, V's folded into P's
//      columns, Q's and P's as row factors (notes/fp8-scales.md; FG17)
//   5. decode packing: the Hq/Hkv query heads of a KV head times the Sq new rows form M, so one
//      CTA reads each K/V tile once for a whole GQA group; causal among the new rows
//   6. split-KV: a sequence's tiles are dealt to several CTAs (grid x = split * m_tiles +
//      m_tile), each writing O_part and LSE_part; merge.cu combines them
//
// Math (log2 domain, FlashAttention-2 names; packed row r, key j of tile t):
//   q8_r = e4m3(q_r / sq_r), sq_r = absmax(q_r) / 448
//   s_rj = scale log2(e) sq_r sk_j (q8_r . k8_j)                 K's scale on S's columns
//   m_new = max(m_i, max_j s_rj), alpha = exp2(m_i - m_new), P_rj = exp2(s_rj - m_new)
//   l_i = alpha l_i + sum_j P_rj
//   P'_rj = P_rj sv_j, sp = dec_p_scale(max_j P'_rj, max_j sv_j), p8_rj = e4m3(P'_rj / sp)
//   O_acc = (alpha u / sp) O_acc + p8 V8^T,  u = sp              O = u O_acc throughout
//   at the end: O = u O_acc / l_i, LSE = m_i ln 2 + ln l_i
// A thread holds a whole row of S (tcgen05.ld.32x32b: thread = lane = packed row), so the row
// max and row sums need no shuffles.
//
// Roles (192 threads; one CTA per (m-tile, split) x KV head x sequence, 128 packed rows):
//   warps 0-3  Q quantisation, softmax, P codes, correction and epilogue: warp w owns TMEM lanes
//              32w..32w+31, i.e. packed rows 32w..32w+31, one row per thread
//   warp 4     TMEM allocation and the MMAs (one elected thread issues them)
//   warp 5     the page gather (cp.async), the V transpose
//
// Operands and layouts (decode_core.h, decode.h): Q [B, Sq, Hq, D] bf16 -> SMEM Q [128 x D] e4m3
// K-major SW128; cache K, V [pages, page, Hkv, D] e4m3 -> SMEM K [128 x D] K-major SW128 and
// Vs [128 x D] (as stored) -> Vt [D x 128] K-major SW128; P [128 x 128] e4m3 K-major SW128;
// the tile's scales sk [128], sv [128] f32 after the (sm90-only) sq [128]. TMEM: S [0, 128) f32,
// O [256, 256 + D) f32. One buffer each, or (--ring R, template RING) R slots of K, Vs, scales and
// Vt (decode.h's ring layout): warp 5 then runs up to R tiles ahead, waiting each slot's empty[s]
// and arriving on its full[s] where the steps below say kv_empty and kv_full, and warp 4 commits a
// slot's empty[s] after the P V that read it, when a later tile refills it.
//
// Steps (the same labels in decode_sm90.cu and decode_emu.c), with the mbarriers (count) that hand
// over between roles; parity = (tile - first tile of the split) & 1:
//   1   prologue: an empty split (no tile) writes LSE_part = -inf and leaves; warp 4 allocates
//       512 TMEM columns; thread 0 initialises q_full (128 softmax threads), kv_full (32 load
//       threads), kv_empty (1 commit), s_full (1 commit), p_full (128), o_done (1 commit);
//       warps 0-3 quantise their row of Q into SMEM -> q_full
//   2a  warp 5: wait kv_empty (tile - 1); cp.async K_j and V_j through the block table, and the
//       tile's scales; zero fill past the sequence; wait; __syncwarp
//   2a' warp 5: V_j transposed into Vt (the FG20 variant skips it: V landed MN-major);
//       fence.proxy.async -> kv_full
//   2b  warp 4: wait kv_full; S = Q K_j^T (D/32 SS MMAs) -> commit s_full
//   2c  warps 0-3: wait s_full, then o_done (tile - 1: the last P V has read P and written O);
//       read their row of S; K's scale, the mask, m_new, alpha, P, l_i
//   2d  warps 0-3: V's scale into P, the row's P scale, P's codes into SMEM; O *= alpha u / sp in
//       TMEM (the correction, from the split's second tile on); wait::st; fence.proxy.async;
//       fence::before_thread_sync -> p_full
//   2e  warp 4: wait p_full; O += P V_j (4 SS MMAs, A = P, B = Vt) -> commit o_done and, but for
//       the split's last tile, kv_empty (K_j, Vt free)
//   3   epilogue, warps 0-3: wait o_done (last tile); O = u O_acc / l_i -> bf16 (or f32 O_part),
//       LSE (or LSE_part)
//   4   teardown: warp 4 frees TMEM
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "device/launch.cuh"
#include "decode.h"
#include "model/idesc.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
#include "device/bf16_pack.cuh"
#include "device/fast_exp2.cuh"
#include "device/cp_async.cuh"
#include "device/e4m3.cuh"
#include "device/e4m3_transpose.cuh"
#include "device/mbarrier.cuh"
#include "device/smem.cuh"
#include "attn/ring.h"
#include "sm100/tcgen05.cuh"
#define DEC_SM100_DEVICE 1
#else
#define DEC_SM100_DEVICE 0
#endif

// Watchdog site ids of the waits: the barrier a deadlock report names.
enum { SITE_Q_FULL = 1, SITE_KV_FULL, SITE_KV_EMPTY, SITE_S_FULL, SITE_P_FULL, SITE_O_DONE };

#if DEC_SM100_DEVICE
// No instruction: the compiler may not move memory accesses across it. The softmax puts one before
// each 32 columns' K or V scales: left free, the compiler loaded all 128 scales of a pass at once,
// next to the 128 live scores of the row, and the kernel spilled (255 registers); kept in their
// group it stays under the cap without spills.
static __device__ __forceinline__ void compiler_barrier() { asm volatile("" ::: "memory"); }

// Step 1: this thread's packed row of Q, quantised: the row's absmax, then e4m3 codes 16 at a time
// (one 16-byte chunk of the SW128 row). A row past the CTA's share is zeros with scale 1.
template <int D>
static __device__ __forceinline__ float quantise_q_row(const uint16_t *q, bool valid, uint8_t *smem_q, const smem_tile &tq,
                                                       int r)
{
    const uint4 *src = (const uint4 *)q;
    float amax = 0.0f;
    if (valid)
#pragma unroll 4
        for (int c = 0; c < D / 8; c++) {
            amax = bf16x8_absmax(src[c], amax);
        }
    const float sq = amax > 0.0f ? amax / DEC_E4M3_MAX : 1.0f;
#pragma unroll 2
    for (int c = 0; c < D / 16; c++) {
        uint4 codes = {0u, 0u, 0u, 0u};
        if (valid) {
            const uint4 x0 = src[2 * c], x1 = src[2 * c + 1];
            const uint32_t w[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
            float f[16];
#pragma unroll
            for (int k = 0; k < 8; k++) {
                f[2 * k] = __uint_as_float(w[k] << 16) / sq; // bf16 element 2k: the low half
                f[2 * k + 1] = __uint_as_float(w[k] & 0xFFFF0000u) / sq;
            }
            codes.x = pack_e4m3x4(f[0], f[1], f[2], f[3]);
            codes.y = pack_e4m3x4(f[4], f[5], f[6], f[7]);
            codes.z = pack_e4m3x4(f[8], f[9], f[10], f[11]);
            codes.w = pack_e4m3x4(f[12], f[13], f[14], f[15]);
        }
        *(uint4 *)(smem_q + smem_tile_offset(&tq, r, 16 * c)) = codes;
    }
    return sq;
}

// Step 2a (the load warp): tokens [kv0, kv0 + 128) of one sequence and KV head, in four groups of
// 32. For group g, lane l looks up the cache row of token kv0 + 32g + l (-1 at or past `end`, the
// sequence's last token + 1) and copies its two scales. The codes go chunk-wise: a warp-wide copy
// covers 32 / CH whole rows (CH = D / 16 chunks of 16 bytes each), lane l row l / CH, chunk l % CH,
// so the warp reads whole contiguous rows; the row index comes from its owner lane by a shuffle.
// A row past `end` is zero-filled without a read (src size 0). V lands as stored in Vs, or (FG20
// variant) straight into the MN-major layout the broken MMA reads.
template <int D>
static __device__ __forceinline__ void gather_tile(const dec_params &p, const int32_t *table, int hk, int kv0, int end,
                                                   int lane, bool v_as_stored, uint8_t *smem_k, uint8_t *smem_vs,
                                                   uint8_t *smem_vt, const smem_tile &tk, const smem_tile &tv_mn,
                                                   float *sm_sk, float *sm_sv)
{
    constexpr int CH = D / 16, RPI = 32 / CH; // chunks per row, rows per warp-wide copy
    const int ch = lane % CH;
#pragma unroll 1
    for (int g = 0; g < DEC_BN / 32; g++) {
        const int tok = kv0 + 32 * g + lane;
        const int64_t row = tok < end ? dec_token_row(&p, table, tok, hk) : -1;
        const int64_t srow = row < 0 ? 0 : row;
        cp_async_4(sm_sk + 32 * g + lane, p.k_scale + srow, row < 0 ? 0 : 4);
        cp_async_4(sm_sv + 32 * g + lane, p.v_scale + srow, row < 0 ? 0 : 4);
#pragma unroll
        for (int i = 0; i < CH; i++) {
            const int nl = RPI * i + lane / CH, n = 32 * g + nl; // row nl of the group, owned by lane nl
            const int64_t r = __shfl_sync(0xFFFFFFFFu, row, nl);
            const int bytes = r < 0 ? 0 : 16;
            const int64_t src = (r < 0 ? 0 : r) * D + 16 * ch;
            cp_async_16(smem_k + smem_tile_offset(&tk, n, 16 * ch), p.k + src, bytes);
            uint8_t *vdst = v_as_stored ? smem_vt + smem_tile_offset(&tv_mn, 16 * ch, n) : smem_vs + smem_tile_offset(&tk, n, 16 * ch);
            cp_async_16(vdst, p.v + src, bytes);
        }
    }
}

// Step 2a' (the load warp): Vs [128 kv x D] -> Vt [D x 128 kv] by one warp: lane a takes tokens
// 4a..4a+3 and every 16-byte d-chunk (device/e4m3_transpose.cuh: one 4 x 16 block each), starting
// at chunk a / 2 and wrapping: with every lane on the same chunk, the 8 lanes of a 16-byte read
// phase would hit 2 of the 8 swizzled chunk positions (4-way conflicts); rotated they hit all 8.
template <int D>
static __device__ __forceinline__ void transpose_v(const uint8_t *smem_vs, uint8_t *smem_vt, const smem_tile &tvs,
                                                   int lane)
{
    constexpr int CH = D / 16;
#pragma unroll 4
    for (int i = 0; i < CH; i++) e4m3_transpose_block(smem_vs, smem_vt, tvs, lane, (i + lane / 2) % CH);
}
#endif

// RING = 0: one K / Vs / Vt / scales buffer, kv_full / kv_empty. RING >= 2 (--ring): the load warp
// runs up to RING tiles ahead into the slots of decode.h's ring layout, on full[s] / empty[s].
template <int D, int RING>
static __global__ void __launch_bounds__(DEC_SM100_THREADS, 1) decode_kernel(const __grid_constant__ dec_params args)
{
#if DEC_SM100_DEVICE
    // A copy in registers: nothing below takes the address of the kernel argument itself, so no
    // asm "memory" clobber makes the compiler reload its fields (stage E's lesson)
    const dec_params p = args;
    const uint32_t probes = p.faults ? FMHA_FAULT_WAIT_PROBES : FMHA_MBAR_WAIT_PROBES; // a footgun run may hang
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    constexpr int BM = DEC_BM_SM100;
    const smem_layout L = dec_smem_layout_make_ring(BM, D, RING, 0);
    const smem_tile tq = dec_q_tile(BM, D), tk = dec_k_tile(D), tvt = dec_vt_tile(D), tp = dec_p_tile(BM);
    const smem_tile tv_mn = dec_v_mn_tile(D);
    uint8_t *smem_q = smem + L.tile[DEC_SMEM_Q];   // [128 x D] e4m3 K-major SW128: A of S = Q K^T
    uint8_t *smem_k = smem + L.tile[DEC_SMEM_K];   // [128 x D] e4m3 K-major SW128: B of S (RING: the slots)
    uint8_t *smem_vs = smem + L.tile[DEC_SMEM_VS]; // [128 kv x D] e4m3 as gathered (K-major layout)
    uint8_t *smem_vt = smem + L.tile[DEC_SMEM_VT]; // [D x 128 kv] e4m3 K-major SW128: B of O = P V
    uint8_t *smem_p = smem + L.tile[DEC_SMEM_P];   // [128 x 128 kv] e4m3 K-major SW128: A of O = P V
    float *sm_sk = (float *)(smem + L.tile[DEC_SMEM_SCALES]) + BM, *sm_sv = sm_sk + DEC_BN; // [128] each, after sq [128]
    uint64_t *bars = (uint64_t *)(smem + L.bars);
    const uint32_t q_full = smem_u32(&bars[DEC_BAR_Q_FULL]), kv_full = smem_u32(&bars[DEC_BAR_KV_FULL]);
    const uint32_t kv_empty = smem_u32(&bars[DEC_BAR_KV_EMPTY]), s_full = smem_u32(&bars[DEC_BAR_S_FULL]);
    const uint32_t p_full = smem_u32(&bars[DEC_BAR_P_FULL]), o_done = smem_u32(&bars[DEC_BAR_O_DONE]);
    uint32_t *tmem_slot = (uint32_t *)(smem + L.tmem_slot);
    // The tile's buffers and its two barriers: the one set, or (RING) slot s of the ring
    struct tile_bufs {
        uint8_t *k, *vs, *vt;
        float *sk, *sv;
        uint32_t full, empty;
    };
    auto bufs_of = [&](int s) {
        tile_bufs t;
        if constexpr (RING > 0) {
            const dec_ring_slot_offsets o = dec_ring_slot_at(D, s);
            t = {smem_k + o.k, smem_k + o.vs, smem_k + o.vt, (float *)(smem_k + o.sk), (float *)(smem_k + o.sv),
                 smem_u32(&bars[dec_ring_full_bar(s)]), smem_u32(&bars[dec_ring_empty_bar(RING, s)])};
        } else {
            (void)s;
            t = {smem_k, smem_vs, smem_vt, sm_sk, sm_sv, kv_full, kv_empty};
        }
        return t;
    };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int mtiles = dec_m_tiles(&p);
    const int mt = blockIdx.x % mtiles, split = blockIdx.x / mtiles, hk = blockIdx.y, b = blockIdx.z;
    const int len = p.seqlens[b], m0 = mt * BM, M = dec_rows(&p);
    int t0, t1;
    dec_split_tiles(&p, len, split, &t0, &t1);

    if (t0 >= t1) { // an empty split (a short sequence): it saw no key
        const int m = m0 + (int)threadIdx.x;
        if (threadIdx.x < BM && m < M) {
            int i, h;
            dec_unpack_row(&p, hk, m, &i, &h);
            p.lse_part[(((int64_t)split * p.b + b) * p.hq + h) * p.sq + i] = -INFINITY;
        }
        return;
    }

    // Step 1: prologue: TMEM and barriers
    if (warp == DEC_MMA_WARP) {
        tmem_alloc(smem_u32(tmem_slot), DEC_TMEM_COLS);
        tmem_relinquish();
    }
    if (threadIdx.x == 0) {
        for (int i = 0; i < DEC_NUM_BARS; i++) mbar_init(smem_u32(&bars[i]), dec_bar_count(i));
        for (int s = 0; s < RING; s++) { // the ring's: full[s] as kv_full, empty[s] as kv_empty
            mbar_init(smem_u32(&bars[dec_ring_full_bar(s)]), dec_bar_count(DEC_BAR_KV_FULL));
            mbar_init(smem_u32(&bars[dec_ring_empty_bar(RING, s)]), dec_bar_count(DEC_BAR_KV_EMPTY));
        }
        mbar_fence_init();
    }
    tcgen05_fence_before();
    __syncthreads();
    tcgen05_fence_after();
    const uint32_t tmem = *tmem_slot;
    const bool v_as_stored = p.faults & DEC_FAULT_V_NOT_TRANSPOSED; // FG20

    if (warp == DEC_LOAD_WARP) {
        const int32_t *table = p.block_table + (int64_t)b * p.max_pages;
        const int end = dec_gather_end(&p, len);
        ring_state ls = ring_make(RING > 0 ? RING : 1);
        for (int j = t0; j < t1; j++) {
            const int it = j - t0;
            const tile_bufs tb = bufs_of(ls.slot);
            // Step 2a: K_j, V_j and their scales, once the MMAs that read the buffers released them
            // (RING: the slot's previous tile, RING tiles back; the first pass passes at once)
            if constexpr (RING > 0) mbar_wait_budget(tb.empty, ring_empty_parity(&ls), p.wd, SITE_KV_EMPTY, probes);
            else if (it > 0) mbar_wait_budget(kv_empty, (uint32_t)(it - 1) & 1u, p.wd, SITE_KV_EMPTY, probes);
            gather_tile<D>(p, table, hk, j * DEC_BN, end, lane, v_as_stored, tb.k, tb.vs, tb.vt, tk, tv_mn, tb.sk, tb.sv);
            cp_async_wait_all();
            __syncwarp(); // every lane's copies landed: Vs is whole for the transpose
            // Step 2a': V_j transposed to K-major (the FG20 variant skips it: V stays as stored)
            if (!v_as_stored) transpose_v<D>(tb.vs, tb.vt, tk, lane);
            fence_proxy_async(); // cp.async and the transpose's stores -> the MMA's async proxy
            mbar_arrive(tb.full);
            ring_advance(&ls);
        }
    } else if (warp == DEC_MMA_WARP) {
        // One thread issues every MMA and commit (tcgen05.mma is a single-thread instruction);
        // the warp converges again at the __syncwarp below.
        if (lane == 0) {
            const uint32_t idesc_qk = idesc_e4m3_f32(BM, DEC_BN, 0, 0), idesc_pv = idesc_e4m3_f32(BM, D, 0, 0);
            const smem_tile tb = v_as_stored ? tv_mn : tvt; // FG20: an MN-major V read through a K-major idesc
            const bool early = p.faults & DEC_FAULT_RING_EARLY_RELEASE; // FG23
            mbar_wait_budget(q_full, 0, p.wd, SITE_Q_FULL, probes);
            ring_state ms = ring_make(RING > 0 ? RING : 1);
            for (int j = t0; j < t1; j++) {
                const int it = j - t0;
                const uint32_t ph = (uint32_t)it & 1u;
                const tile_bufs tbuf = bufs_of(ms.slot);
                // Step 2b: S = Q K_j^T
                mbar_wait_budget(tbuf.full, RING > 0 ? ring_full_parity(&ms) : ph, p.wd, SITE_KV_FULL, probes);
                tcgen05_fence_after();
#pragma unroll
                for (int k = 0; k < D; k += 32)
                    tmem_mma_f8f6f4_ss(tmem + DEC_TMEM_S, smem_tile_desc_sm100(&tq, smem_u32(smem_q), 0, k),
                                       smem_tile_desc_sm100(&tk, smem_u32(tbuf.k), 0, k), idesc_qk, k > 0);
                tmem_commit(s_full);
                // FG23 (--ring): the slot released with S, before the softmax's and P V's reads
                if (RING > 0 && early && j + RING < t1) tmem_commit(tbuf.empty);
                // Step 2e: O += P V_j (A = P's codes, B = Vt; accumulate off only for the split's first)
                mbar_wait_budget(p_full, ph, p.wd, SITE_P_FULL, probes);
                tcgen05_fence_after();
#pragma unroll
                for (int k = 0; k < DEC_BN; k += 32)
                    tmem_mma_f8f6f4_ss(tmem + DEC_TMEM_O, smem_tile_desc_sm100(&tp, smem_u32(smem_p), 0, k),
                                       smem_tile_desc_sm100(&tb, smem_u32(tbuf.vt), 0, k), idesc_pv, (it > 0 || k > 0));
                tmem_commit(o_done);
                // the buffers are free once these MMAs complete; a commit whose buffers are never
                // refilled would have no waiter before exit
                if (!(RING > 0 && early) && j + (RING > 0 ? RING : 1) < t1) tmem_commit(tbuf.empty);
                ring_advance(&ms);
            }
        }
        __syncwarp();
    } else {
        // Softmax warps; thread = packed row 32 * warp + lane of the tile = TMEM lane
        const int r = (int)threadIdx.x, m = m0 + r;
        const bool valid = m < M;
        int qi = 0, qh = 0;
        if (valid) dec_unpack_row(&p, hk, m, &qi, &qh);
        const int nvis = valid ? dec_visible_keys(&p, len, qi) : 0;
        const uint32_t lanes = (uint32_t)(32 * warp) << 16; // this warp's quadrant
        const bool k_on_rows = p.faults & DEC_FAULT_K_SCALE_ON_ROWS, k_dropped = p.faults & DEC_FAULT_K_SCALE_DROPPED;
        const bool v_on_rows = p.faults & DEC_FAULT_V_SCALE_ON_O_ROWS;

        // Step 1: this thread's row of Q quantised into SMEM
        const float sq = quantise_q_row<D>(p.q + (((int64_t)b * p.sq + qi) * p.hq + qh) * D, valid, smem_q, tq, r);
        fence_proxy_async(); // generic stores -> the MMA's async proxy
        mbar_arrive(q_full);
        const float scale_log2 = p.scale * DEC_LOG2E, rowfac = scale_log2 * sq;

        float m_i = -INFINITY, l_i = 0.0f, u_i = 1.0f;
        ring_state ss = ring_make(RING > 0 ? RING : 1);
        const float *sm_sv_last = sm_sv; // the last tile's V scales (the FG17 epilogue)
        for (int j = t0; j < t1; j++) {
            const int it = j - t0, kv0 = j * DEC_BN;
            const uint32_t ph = (uint32_t)it & 1u;
            const tile_bufs tbuf = bufs_of(ss.slot);
            const float *sm_sk = tbuf.sk, *sm_sv = tbuf.sv; // this tile's scales
            sm_sv_last = sm_sv;
            // Step 2c: the online softmax on this thread's row of S
            mbar_wait_budget(s_full, ph, p.wd, SITE_S_FULL, probes);
            // the tile's scales come from the load warp's cp.async: wait on its full phase too
            // (without arriving), so the acquire is ours and not only the MMA thread's
            mbar_wait_budget(tbuf.full, RING > 0 ? ring_full_parity(&ss) : ph, p.wd, SITE_KV_FULL, probes);
            ring_advance(&ss);
            // Step 2d needs the previous P V done: P's SMEM tile and O are rewritten
            if (it > 0) mbar_wait_budget(o_done, (uint32_t)(it - 1) & 1u, p.wd, SITE_O_DONE, probes);
            __syncwarp(); // converged before the .sync.aligned tcgen05.ld
            tcgen05_fence_after();
            uint32_t u[DEC_BN / 32][32];
#pragma unroll
            for (int c = 0; c < DEC_BN / 32; c++) tmem_ld_32x32b_x32(tmem + lanes + DEC_TMEM_S + 32 * c, u[c]);
            tmem_wait_ld();
            const float sk_row = sm_sk[r % DEC_BN]; // read by the FG17 variant only
            float x[DEC_BN], mx = m_i;
#pragma unroll
            for (int n4 = 0; n4 < DEC_BN; n4 += 4) {
                if (n4 % 32 == 0) compiler_barrier();
                const float4 sk4 = *(const float4 *)(sm_sk + n4);
                const float sk[4] = {sk4.x, sk4.y, sk4.z, sk4.w};
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int n = n4 + e;
                    float colscale = sk[e];
                    if (k_on_rows) colscale = sk_row; // FG17: key r's scale on row r
                    if (k_dropped) colscale = 1.0f;              // FG17
                    x[n] = kv0 + n < nvis ? __uint_as_float(u[n / 32][n % 32]) * rowfac * colscale : -INFINITY;
                    mx = fmaxf(mx, x[n]);
                }
            }
            const float base = fmha_exp_base(mx, 0), alpha = fast_exp2(m_i - base);
            m_i = mx;
            l_i *= alpha;
            float pmax = 0.0f, svmax = 0.0f;
#pragma unroll
            for (int n4 = 0; n4 < DEC_BN; n4 += 4) {
                if (n4 % 32 == 0) compiler_barrier();
                const float4 sv4 = *(const float4 *)(sm_sv + n4);
                const float sv[4] = {sv4.x, sv4.y, sv4.z, sv4.w};
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int n = n4 + e;
                    x[n] = fast_exp2(x[n] - base);
                    l_i += x[n];
                    // Step 2d: V's scale into P's columns (FG17 variant: left for O's rows), the
                    // row's P scale, P's codes
                    if (!v_on_rows) x[n] *= sv[e];
                    pmax = fmaxf(pmax, x[n]);
                    svmax = fmaxf(svmax, sv[e]);
                }
            }
            const float sp = dec_p_scale(pmax, svmax), inv = 1.0f / sp;
#pragma unroll
            for (int c = 0; c < DEC_BN / 16; c++) {
                const float *f = x + 16 * c;
                uint4 codes;
                codes.x = pack_e4m3x4(f[0] * inv, f[1] * inv, f[2] * inv, f[3] * inv);
                codes.y = pack_e4m3x4(f[4] * inv, f[5] * inv, f[6] * inv, f[7] * inv);
                codes.z = pack_e4m3x4(f[8] * inv, f[9] * inv, f[10] * inv, f[11] * inv);
                codes.w = pack_e4m3x4(f[12] * inv, f[13] * inv, f[14] * inv, f[15] * inv);
                *(uint4 *)(smem_p + smem_tile_offset(&tp, r, 16 * c)) = codes;
            }
            const float corr = alpha * (u_i / sp);
            u_i = sp;
            // the correction, in the new unit sp: O *= alpha u / sp (only once O holds something)
            if (it > 0) {
                __syncwarp(); // converged before the .sync.aligned tcgen05.ld / st
#pragma unroll 1
                for (int c0 = 0; c0 < D; c0 += 32) {
                    uint32_t o[32];
                    tmem_ld_32x32b_x32(tmem + lanes + DEC_TMEM_O + c0, o);
                    tmem_wait_ld();
#pragma unroll
                    for (int e = 0; e < 32; e++) o[e] = __float_as_uint(__uint_as_float(o[e]) * corr);
                    tmem_st_32x32b_x32(tmem + lanes + DEC_TMEM_O + c0, o);
                }
                tmem_wait_st();
            }
            fence_proxy_async();    // P's codes: generic stores read by the MMA's async proxy
            tcgen05_fence_before(); // the O stores before the arrive
            mbar_arrive(p_full);
        }

        // Step 3: epilogue: O = u O_acc / l_i -> bf16 (or f32 O_part), LSE (or LSE_part)
        mbar_wait_budget(o_done, (uint32_t)(t1 - t0 - 1) & 1u, p.wd, SITE_O_DONE, probes);
        __syncwarp(); // converged before the .sync.aligned tcgen05.ld
        tcgen05_fence_after();
        float fin = l_i > 0.0f ? u_i / l_i : 0.0f;      // a row that saw no key: O = 0
        if (v_on_rows) fin *= sm_sv_last[r % DEC_BN];   // FG17: a row factor of O (the last tile's sv)
        const bool split_out = p.splits > 1;
        const int64_t orow = (((int64_t)b * p.sq + qi) * p.hq + qh) * D;
#pragma unroll 1
        for (int c0 = 0; c0 < D; c0 += 32) {
            uint32_t o[32];
            __syncwarp(); // reconverge after the previous chunk's valid-row stores
            tmem_ld_32x32b_x32(tmem + lanes + DEC_TMEM_O + c0, o);
            tmem_wait_ld();
            if (!valid) continue;
            if (split_out) {
#pragma unroll
                for (int e = 0; e < 32; e += 4) {
                    const float4 v = {__uint_as_float(o[e]) * fin, __uint_as_float(o[e + 1]) * fin,
                                      __uint_as_float(o[e + 2]) * fin, __uint_as_float(o[e + 3]) * fin};
                    *(float4 *)(p.o_part + (int64_t)split * p.b * p.sq * p.hq * D + orow + c0 + e) = v;
                }
            } else {
#pragma unroll
                for (int e = 0; e < 32; e += 8) {
                    uint4 v;
                    v.x = pack_bf16x2(__uint_as_float(o[e + 0]) * fin, __uint_as_float(o[e + 1]) * fin);
                    v.y = pack_bf16x2(__uint_as_float(o[e + 2]) * fin, __uint_as_float(o[e + 3]) * fin);
                    v.z = pack_bf16x2(__uint_as_float(o[e + 4]) * fin, __uint_as_float(o[e + 5]) * fin);
                    v.w = pack_bf16x2(__uint_as_float(o[e + 6]) * fin, __uint_as_float(o[e + 7]) * fin);
                    *(uint4 *)(p.o + orow + c0 + e) = v;
                }
            }
        }
        if (valid) {
            const float lse = l_i > 0.0f ? m_i * DEC_LN2 + logf(l_i) : -INFINITY;
            const int64_t li = ((int64_t)b * p.hq + qh) * p.sq + qi;
            if (split_out) p.lse_part[(int64_t)split * p.b * p.hq * p.sq + li] = lse;
            else p.lse[li] = lse;
        }
    }

    // Step 4: teardown: every TMEM access is complete; free the columns
    tcgen05_fence_before();
    __syncthreads();
    if (warp == DEC_MMA_WARP) {
        tcgen05_fence_after();
        tmem_dealloc(tmem, DEC_TMEM_COLS);
    }
#else
    (void)args;
#endif
}

extern "C" int stage_d_sm100_launch(const void *params)
{
    const dec_params &p = *(const dec_params *)params;
    const uint32_t smem = dec_smem_layout_make_ring(DEC_BM_SM100, p.d, p.ring, 0).bytes;
    const int rc = dispatch_head_dim<64, 128, 256>(p.d, [&](auto D) {
        constexpr int d = decltype(D)::value;
        void (*k)(dec_params) = p.ring == 2 ? decode_kernel<d, 2> : p.ring == 3 ? decode_kernel<d, 3>
                              : p.ring == 4 ? decode_kernel<d, 4> : decode_kernel<d, 0>;
        return launch_kernel(k, dec_grid(&p), DEC_SM100_THREADS, smem, p);
    });
    return rc ? rc : (p.splits > 1 ? stage_d_merge_launch(&p) : 0);
}
