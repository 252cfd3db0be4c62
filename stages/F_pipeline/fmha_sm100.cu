// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage F, Blackwell (sm_100a).
//
// Key extensions over stage E:
//   1. the K/V ring (p.pipe.ring = R, 1..3): R SMEM slots for K and R for V, each with a full and
//      an empty mbarrier (fmha.h); the load lane, the MMA lane and the softmax warps each walk it
//      with one {slot, phase} state (attn/ring.h), so the load lane runs up to R tiles ahead: the
//      loads of K_{j+1} .. K_{j+R-1} are in flight while tile j is computed
//   2. a slot is released by the tcgen05.commit that follows the MMAs reading it (k_empty[slot]
//      after the S MMAs, v_empty[slot] after the P V MMAs): the arrive comes only once those MMAs
//      have completed, i.e. read the slot (FG23: a plain arrive at their issue lets the load lane
//      refill the slot under the MMA)
//   3. overlap (p.pipe.overlap = 1, D <= 128): two S buffers and two P buffers in TMEM; the MMA
//      lane issues S_{j+1} = Q K_{j+1}^T into the other S buffer as soon as K_{j+1} has landed,
//      so the tensor core computes tile j+1's scores while the softmax warps work on tile j
//   4. the warp roles are stage E's (load, MMA, softmax): stage F only deepens what they hand over
//
// What orders each TMEM buffer's reuse (PTX ISA 9.7.16.6.2 "Pipelined tcgen05 Instructions":
// asynchronous tcgen05 operations of one thread may execute and complete out of issue order; only
// tcgen05.mma -> tcgen05.mma with the same cta_group, accumulator and shape is ordered, so the S
// and P V MMAs are not ordered with each other; 9.7.16.6.2.1 "Implicitly pipelined tcgen05
// Instructions" and 9.7.16.12.1 tcgen05.commit: a commit's arrive comes once every earlier
// asynchronous tcgen05 operation of the thread has completed):
//   S buffer b    rewritten by S_{j+B} (B = buffers) only after the softmax warps have read S_j:
//                 p_full of tile j (the softmax arrives after tcgen05.wait::ld and
//                 fence::before_thread_sync), which the MMA lane waits before that issue
//   P buffer b    rewritten with P_{j+B} only after P V_j, which read it, has completed: o_done of
//                 tile j (overlap 1: waited by the softmax at tile j+1 before its O rescale, so
//                 before it writes P_{j+2}; overlap 0: waited at tile j+1 before it writes P_{j+1})
//   O             rescaled at tile j only after P V_{j-1} has completed: o_done of tile j-1; the
//                 next accumulation P V_j is ordered after the rescale by p_full
//   K/V slot s    refilled only after the MMAs that read it have completed: k_empty[s], v_empty[s]
//
// Math: as in stage C (FlashAttention-2, log2 domain, m_i, l_i, alpha, O / l_i, LSE).
// Warp roles (flow_sm100.h): warps 0-3 softmax, correction and epilogue (warp w owns TMEM lanes
// 32w..32w+31); warp 4 TMEM allocation and the MMAs; warp 5 the TMA loads (one lane).
//
// Operands and layouts (fmha.h): as stage E; K and V slots are stage E's K and V tiles.
// TMEM map (flow_sm100.h): overlap 0: S [0,128) P [128,192) O [256,256+D); overlap 1: S0 [0,128)
// S1 [128,256) O [256,256+D) P0 [384,448) P1 [448,512).
//
// Steps, with the mbarriers (count) that hand over between roles. Ring parities come from each
// role's ring state (full: the phase; empty: fmha_f_empty_parity), S/P buffer parities from a
// ring state of B buffers, p_full / o_done parities from a ring state of depth 1 (tile & 1):
//   1   prologue: thread 0 initialises q_full, k_full[s], v_full[s] (1 arrive.expect_tx + bytes
//       each), k_empty[s], v_empty[s], s_full[b], o_done (1 commit each), p_full (128 softmax
//       threads); CTA barrier; warp 5 issues Q -> q_full at once; warp 4 allocates 512 TMEM
//       columns and warps 0-4 meet at named barrier 1 (160 threads) to read the address (FG12:
//       the load warp joining it)
//   2a  warp 5, per tile j, slot s = j % R: wait k_empty[s], issue K_j -> k_full[s]; wait
//       v_empty[s], issue V_j -> v_full[s]
//   2b  warp 4: wait k_full[s]; S_j = Q K_j^T (D/16 SS MMAs) into S buffer j % B -> commit
//       s_full[b] and, if tile j + R exists, k_empty[s]. Overlap 0: S_{j+1} after 2e of tile j
//   2b' warp 4, overlap 1: S_{j+1} into the other buffer right after S_j's commits (before 2e of
//       tile j): its buffer was last read by the softmax of tile j-1, whose p_full 2e of tile j-1
//       waited
//   2c  warps 0-3: wait s_full[b]; read their row of S; mask, scale, m_new, alpha, P, l_i
//   2d  warps 0-3: overlap 1: P_j into P buffer j % 2; then wait o_done (j - 1); O *= alpha;
//       overlap 0: P_j into P; wait::st; fence; arrive p_full
//   2e  warp 4: wait p_full and v_full[s]; O += P_j V_j (8 TS MMAs, P from buffer j % B) ->
//       commit o_done and, if tile j + R exists, v_empty[s]
//   3   epilogue, warps 0-3: wait o_done (last tile); O / l_i -> bf16 -> SMEM (the Q tile) -> TMA
//       store; wait for the store to read SMEM; LSE
//   4   teardown: warp 4 frees TMEM
//
// FG11 variant (FMHA_FAULT_COMMIT_MULTICAST): the commit onto s_full[b] uses the
// .multicast::cluster form with ctaMask 0b10 (cluster rank 1) in a launch without clusters: the
// arrive never reaches this CTA's s_full and the softmax warps wait until the watchdog reports
// site S_FULL. FG16 (RING_SAME_PARITY), FG15/16 (RING_NO_FLIP): fmha.h's ring helpers.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "device/launch.cuh"
#include "flow_sm100.h"
#include "fmha.h"
#include "host/fmha_tmaps.h"
#include "model/frag_map.h"
#include "model/idesc.h"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)
#include "device/bf16_pack.cuh"
#include "device/fast_exp2.cuh"
#include "device/mbarrier.cuh"
#include "device/named_bar.cuh"
#include "device/smem.cuh"
#include "device/tma.cuh"
#include "device/tma_tile.cuh"
#include "sm100/tcgen05.cuh"
#define FMHA_SM100_DEVICE 1
#else
#define FMHA_SM100_DEVICE 0
#endif

// Watchdog site ids of the waits: the barrier a deadlock report names (stage E's numbers; the
// parity in the report tells the phase, the ring slot is not encoded).
enum { SITE_Q_FULL = 1, SITE_K_FULL, SITE_V_FULL, SITE_K_EMPTY, SITE_V_EMPTY, SITE_S_FULL, SITE_P_FULL, SITE_O_DONE };

#if FMHA_SM100_DEVICE
// PTX ISA 9.7.16.12.1 tcgen05.commit, the .multicast::cluster form: the arrive goes to the
// mbarrier at the same SMEM offset in every CTA of the cluster whose rank is set in the 16-bit
// ctaMask. A launch without clusters makes each CTA a cluster of one (rank 0), so mask 0b10 names
// no CTA and this CTA's own barrier gets nothing. common/sm100/tcgen05.cuh has only the plain form
// (the CTA's own barrier); this one exists for footgun FG11 alone.
__device__ __forceinline__ void tmem_commit_multicast(uint32_t bar_smem, uint16_t cta_mask)
{
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n" ::"r"(
                     bar_smem),
                 "h"(cta_mask)
                 : "memory");
}

// What every role of one CTA needs: the parameters (a register copy, as stage E), the tiles, the
// SMEM addresses of Q, of the ring's slots and of the barriers, the TMEM base.
struct cta_flow {
    fmha_params p;
    uint32_t probes;            // the bounded waits' budget (a footgun run expects hangs)
    smem_tile tq, tk, tv;
    uint8_t *smem_q;            // [128 x D] K-major SW128: A of S = Q K^T; O's staging at the end
    uint32_t k0, k1, k2;        // K slots [128 x D] K-major SW128: B of S = Q K^T
    uint32_t v0, v1, v2;        // V slots [128 kv x D] MN-major SW128: B of O = P V
    uint32_t bars;              // SMEM address of mbarrier 0 (flow_sm100.h's indices)
    uint32_t tmem;
    int ring, nbuf, ntiles, q0, h, b;
};

// A slot's SMEM address by selects, not by indexing an array (that would go to local memory).
__device__ __forceinline__ uint32_t slot_addr(uint32_t a0, uint32_t a1, uint32_t a2, int s)
{
    return s == 0 ? a0 : s == 1 ? a1 : a2;
}
__device__ __forceinline__ uint32_t bar(const cta_flow &f, int i) { return f.bars + 8u * (uint32_t)i; }

// The wait every role uses: bounded, the site named in the watchdog report.
__device__ __forceinline__ void bar_wait(const cta_flow &f, uint32_t b, uint32_t parity, uint32_t site)
{
    mbar_wait_budget(b, parity, f.p.wd, site, f.probes);
}

// Warp 5, one lane: Q, then K_j and V_j into slot j % R as soon as the slot is empty.
__device__ __forceinline__ void load_role(const cta_flow &f, const fmha_tma_args &a)
{
    const fmha_params &p = f.p;
    const int d = p.d, hk_k = fmha_tma_kv_head(&p, f.h, 0), hk_v = fmha_tma_kv_head(&p, f.h, 1);
    // Step 1: prologue: the Q tile (query head h, batch b)
    mbar_arrive_expect_tx(bar(f, FMHA_F_BAR_Q_FULL), fmha_tile_tx_bytes(d, FMHA_BM));
    tma_load_tile(smem_u32(f.smem_q), f.tq, d, &a.q, bar(f, FMHA_F_BAR_Q_FULL), f.q0, f.h, f.b);
    ring_state s = ring_make(f.ring);
    for (int j = 0; j < f.ntiles; j++) {
        // Step 2a: the slot's empty barrier passes at once on the first pass (FG16), later once the
        // MMAs of tile j - R have read it
        const int kv0 = j * FMHA_BN;
        bar_wait(f, bar(f, FMHA_F_BAR_K_EMPTY + s.slot), fmha_f_empty_parity(&s, p.faults), SITE_K_EMPTY);
        mbar_arrive_expect_tx(bar(f, FMHA_F_BAR_K_FULL + s.slot), fmha_tile_tx_bytes(d, FMHA_BN));
        tma_load_tile(slot_addr(f.k0, f.k1, f.k2, s.slot), f.tk, d, &a.k, bar(f, FMHA_F_BAR_K_FULL + s.slot), kv0, hk_k, f.b);
        bar_wait(f, bar(f, FMHA_F_BAR_V_EMPTY + s.slot), fmha_f_empty_parity(&s, p.faults), SITE_V_EMPTY);
        mbar_arrive_expect_tx(bar(f, FMHA_F_BAR_V_FULL + s.slot), fmha_tile_tx_bytes(d, FMHA_BN));
        tma_load_tile(slot_addr(f.v0, f.v1, f.v2, s.slot), f.tv, d, &a.v, bar(f, FMHA_F_BAR_V_FULL + s.slot), kv0, hk_v, f.b);
        fmha_f_ring_advance(&s, p.faults);
    }
}

// A ring slot handed back to the load lane after the MMAs just issued: by the commit, whose arrive
// comes when they have completed, or (FG23) by a plain arrive now, while they may still read it.
__device__ __forceinline__ void release_slot(const cta_flow &f, uint32_t empty)
{
    if (f.p.faults & FMHA_FAULT_EARLY_RELEASE) mbar_arrive(empty);
    else tmem_commit(empty);
}

// S is ready for the softmax: the plain commit, or (FG11) the multicast one to a CTA that is not
// there.
__device__ __forceinline__ void commit_s_full(const cta_flow &f, int sbuf)
{
    if (f.p.faults & FMHA_FAULT_COMMIT_MULTICAST) tmem_commit_multicast(bar(f, FMHA_F_BAR_S_FULL + sbuf), FMHA_F_FG11_CTA_MASK);
    else tmem_commit(bar(f, FMHA_F_BAR_S_FULL + sbuf));
}

// Steps 2b / 2b': S_j = Q K_j^T from K slot ks.slot into S buffer sb.slot; both states advance.
__device__ __forceinline__ void s_step(const cta_flow &f, ring_state &ks, ring_state &sb, int j, uint32_t idesc)
{
    bar_wait(f, bar(f, FMHA_F_BAR_K_FULL + ks.slot), ring_full_parity(&ks), SITE_K_FULL);
    tcgen05_fence_after();
    const uint32_t k_tile = slot_addr(f.k0, f.k1, f.k2, ks.slot), q_tile = smem_u32(f.smem_q);
    for (int k = 0; k < f.p.d; k += 16)
        tmem_mma_f16_ss(f.tmem + fmha_f_tmem_s(sb.slot), smem_tile_desc_sm100(&f.tq, q_tile, 0, k),
                        smem_tile_desc_sm100(&f.tk, k_tile, 0, k), idesc, k > 0);
    commit_s_full(f, sb.slot);
    if (fmha_f_release_slot(j, f.ring, f.ntiles)) release_slot(f, bar(f, FMHA_F_BAR_K_EMPTY + ks.slot));
    fmha_f_ring_advance(&ks, f.p.faults);
    ring_advance(&sb);
}

// Step 2e: O += P_j V_j once the softmax has handed P_j over (p_full) and V_j has landed.
__device__ __forceinline__ void pv_step(const cta_flow &f, ring_state &vs, ring_state &pb, ring_state &pf, int j, uint32_t idesc)
{
    bar_wait(f, bar(f, FMHA_F_BAR_P_FULL), ring_full_parity(&pf), SITE_P_FULL);
    ring_advance(&pf);
    bar_wait(f, bar(f, FMHA_F_BAR_V_FULL + vs.slot), ring_full_parity(&vs), SITE_V_FULL);
    tcgen05_fence_after();
    const uint32_t v_tile = slot_addr(f.v0, f.v1, f.v2, vs.slot), p_cols = f.tmem + fmha_f_tmem_p(f.p.pipe.overlap, pb.slot);
    for (int k = 0; k < FMHA_BN; k += 16) // A = P from TMEM; accumulate off only for the very first
        tmem_mma_f16_ts(f.tmem + FMHA_F_TMEM_O, p_cols + k / 2, smem_tile_desc_sm100(&f.tv, v_tile, 0, k), idesc, (j > 0 || k > 0));
    tmem_commit(bar(f, FMHA_F_BAR_O_DONE));
    if (fmha_f_release_slot(j, f.ring, f.ntiles)) release_slot(f, bar(f, FMHA_F_BAR_V_EMPTY + vs.slot));
    fmha_f_ring_advance(&vs, f.p.faults);
    ring_advance(&pb);
}

// Warp 4, one lane: every MMA and commit (tcgen05.mma is a single-thread instruction).
__device__ __forceinline__ void mma_role(const cta_flow &f)
{
    const int overlap = f.p.pipe.overlap;
    const uint32_t idesc_qk = idesc_bf16_f32(FMHA_BM, FMHA_BN, 0, 0);
    const uint32_t idesc_pv = idesc_bf16_f32(FMHA_BM, (unsigned)f.p.d, 0, 1); // V MN-major
    ring_state ks = ring_make(f.ring), vs = ring_make(f.ring); // K is consumed ahead of V under overlap
    ring_state sb = ring_make(f.nbuf), pb = ring_make(f.nbuf), pf = ring_make(1);
    bar_wait(f, bar(f, FMHA_F_BAR_Q_FULL), 0, SITE_Q_FULL);
    if (f.ntiles > 0) s_step(f, ks, sb, 0, idesc_qk); // Step 2b: S_0
    for (int j = 0; j < f.ntiles; j++) {
        if (overlap && j + 1 < f.ntiles) s_step(f, ks, sb, j + 1, idesc_qk); // Step 2b': S_{j+1} under softmax j
        pv_step(f, vs, pb, pf, j, idesc_pv);                                   // Step 2e
        if (!overlap && j + 1 < f.ntiles) s_step(f, ks, sb, j + 1, idesc_qk); // Step 2b: S_{j+1}
    }
}

// P_j (64 columns of bf16 pairs) into this warp's lanes at TMEM address `cols`.
__device__ __forceinline__ void store_p(uint32_t cols, const uint32_t (&pk)[FMHA_BN / 2])
{
    uint32_t half[32];
#pragma unroll
    for (int e = 0; e < 32; e++) half[e] = pk[e];
    tmem_st_32x32b_x32(cols, half);
#pragma unroll
    for (int e = 0; e < 32; e++) half[e] = pk[32 + e];
    tmem_st_32x32b_x32(cols + 32, half);
}

// O *= alpha over this warp's lanes (the correction of step 2d).
__device__ __forceinline__ void rescale_o(uint32_t o_cols, int d, float alpha)
{
    for (int c0 = 0; c0 < d; c0 += 32) {
        uint32_t u[32];
        tmem_ld_32x32b_x32(o_cols + c0, u);
        tmem_wait_ld();
#pragma unroll
        for (int e = 0; e < 32; e++) u[e] = __float_as_uint(__uint_as_float(u[e]) * alpha);
        tmem_st_32x32b_x32(o_cols + c0, u);
    }
}

// Step 3: O / l_i -> bf16 -> SMEM (the Q tile, this warp's 32 rows) -> TMA store. Q is free: every
// MMA has completed (o_done of the last tile), or none ran and Q has landed (q_full).
__device__ __forceinline__ void epilogue(const cta_flow &f, const fmha_tma_args &a, uint32_t lanes, int warp, int lane, float inv_l)
{
    const int d = f.p.d, r = 32 * warp + lane;
    for (int c0 = 0; c0 < d; c0 += 32) {
        uint32_t u[32];
        if (f.ntiles > 0) {
            tmem_ld_32x32b_x32(f.tmem + lanes + FMHA_F_TMEM_O + c0, u);
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
            *(uint4 *)(f.smem_q + smem_tile_offset(&f.tq, r, c0 + e)) = v;
        }
    }
    if (!(f.p.faults & FMHA_FAULT_STORE_NO_FENCE)) fence_proxy_async(); // generic writes -> the async proxy
    __syncwarp();
    if (lane == 0) {
        for (int half = 0; half < 2; half++) {
            const int r0 = 32 * warp + FMHA_O_BOX_ROWS * half;
            if (f.q0 + r0 >= f.p.sq) break;
            for (int c = 0; c < d / FMHA_BOX_COLS; c++)
                tma_store_4d(&a.o, smem_u32(f.smem_q) + smem_tile_offset(&f.tq, r0, FMHA_BOX_COLS * c), FMHA_BOX_COLS * c,
                             f.q0 + r0, f.h, f.b);
        }
        tma_store_commit();
        if (!(f.p.faults & FMHA_FAULT_STORE_NO_WAIT)) tma_store_wait_read<0>(); // SMEM read: the CTA may exit
    }
    __syncwarp();
}

// Warps 0-3: thread = row 32 * warp + lane of the tile.
__device__ __forceinline__ void softmax_role(const cta_flow &f, const fmha_tma_args &a, int warp, int lane)
{
    const fmha_params &p = f.p;
    const int overlap = p.pipe.overlap, row = f.q0 + 32 * warp + lane;
    const uint32_t lanes = (uint32_t)(32 * warp) << 16; // this warp's quadrant
    const float scale_log2 = p.scale * FMHA_LOG2E;
    float m_i = -INFINITY, l_i = 0.0f;
    ring_state sb = ring_make(f.nbuf), od = ring_make(1);
    for (int j = 0; j < f.ntiles; j++) {
        const int kv0 = j * FMHA_BN;
        // Step 2c: online softmax on this thread's row of S_j (S buffer sb.slot)
        bar_wait(f, bar(f, FMHA_F_BAR_S_FULL + sb.slot), ring_full_parity(&sb), SITE_S_FULL);
        __syncwarp(); // converged before the .sync.aligned tcgen05.ld
        tcgen05_fence_after();
        float s[FMHA_BN];
#pragma unroll
        for (int c0 = 0; c0 < FMHA_BN; c0 += 32) {
            uint32_t u[32];
            tmem_ld_32x32b_x32(f.tmem + lanes + fmha_f_tmem_s(sb.slot) + c0, u);
            tmem_wait_ld();
#pragma unroll
            for (int e = 0; e < 32; e++) s[c0 + e] = __uint_as_float(u[e]);
        }
        // The max on the raw scores, scaled once (the scale is positive); each score then costs
        // one FFMA and one MUFU.EX2 (fast_exp2) on its way to P
        if (!fmha_tile_unmasked(&p, f.q0 + 32 * warp, kv0)) { // some row of the warp is cut in this tile
#pragma unroll
            for (int n = 0; n < FMHA_BN; n++)
                if (!fmha_visible(&p, row, kv0 + n)) s[n] = -INFINITY;
        }
        float mx = -INFINITY;
#pragma unroll
        for (int n = 0; n < FMHA_BN; n++) mx = fmaxf(mx, s[n]);
        const float m_new = fmaxf(m_i, mx * scale_log2);
        const float base = fmha_exp_base(m_new, p.faults);
        const float alpha = fast_exp2(m_i - base);
        float rowsum = 0.0f;
        uint32_t pk[FMHA_BN / 2];
#pragma unroll
        for (int n = 0; n < FMHA_BN; n += 2) {
            const float pe = fast_exp2(fmaf(s[n], scale_log2, -base)), po = fast_exp2(fmaf(s[n + 1], scale_log2, -base));
            rowsum += pe + po;
            pk[n / 2] = pack_bf16x2(pe, po);
        }
        l_i = l_i * alpha + rowsum;
        m_i = m_new;

        // Step 2d: P_j and the correction O *= alpha, then hand both to the MMA lane. Overlap: P
        // buffer j % 2 was last read by P V_{j-2}, complete since the o_done wait of tile j - 1,
        // so P_j goes in before this tile's wait; overlap 0: one P, read by P V_{j-1}: after it
        const uint32_t p_cols = f.tmem + lanes + fmha_f_tmem_p(overlap, sb.slot);
        if (overlap) {
            __syncwarp(); // converged before the .sync.aligned tcgen05.st, as everywhere else
            store_p(p_cols, pk);
        }
        if (j > 0) {
            bar_wait(f, bar(f, FMHA_F_BAR_O_DONE), ring_full_parity(&od), SITE_O_DONE);
            ring_advance(&od);
            __syncwarp(); // converged before the .sync.aligned tcgen05.ld / st
            tcgen05_fence_after();
            rescale_o(f.tmem + lanes + FMHA_F_TMEM_O, p.d, alpha);
        }
        if (!overlap) store_p(p_cols, pk);
        tmem_wait_st();
        tcgen05_fence_before();
        mbar_arrive(bar(f, FMHA_F_BAR_P_FULL));
        ring_advance(&sb);
    }
    // Step 3: epilogue; LSE
    const float inv_l = l_i > 0.0f ? 1.0f / l_i : 0.0f; // no visible key: O = 0
    if (f.ntiles > 0) {
        bar_wait(f, bar(f, FMHA_F_BAR_O_DONE), ring_full_parity(&od), SITE_O_DONE); // the last tile's P V
        __syncwarp(); // converged before the .sync.aligned tcgen05.ld
        tcgen05_fence_after();
    } else {
        bar_wait(f, bar(f, FMHA_F_BAR_Q_FULL), 0, SITE_Q_FULL); // no MMA waited for Q: it must land before O takes its place
        __syncwarp();
    }
    epilogue(f, a, lanes, warp, lane, inv_l);
    if (row < p.sq) p.lse[((int64_t)f.b * p.hq + f.h) * p.sq + row] = l_i > 0.0f ? m_i * FMHA_LN2 + logf(l_i) : -INFINITY;
}
#endif

static __global__ void __launch_bounds__(FMHA_F_SM100_THREADS, 1) fmha_kernel(const __grid_constant__ fmha_tma_args a)
{
#if FMHA_SM100_DEVICE
    // A copy in registers: the maps' addresses are taken (&a.k), which keeps `a` in parameter
    // memory, and every asm "memory" clobber would then reload each field of a.p (stage E)
    cta_flow f;
    f.p = a.p;
    f.probes = f.p.faults ? FMHA_FAULT_WAIT_PROBES : FMHA_MBAR_WAIT_PROBES; // a footgun run expects hangs
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const int d = f.p.d;
    f.ring = f.p.pipe.ring;
    f.nbuf = fmha_f_s_buffers(f.p.pipe.overlap);
    const smem_layout L = fmha_f_smem_layout_make(d, f.ring);
    f.tq = fmha_q_tile(d);
    f.tk = fmha_k_tile(d);
    f.tv = fmha_v_tile(d);
    f.smem_q = smem + L.tile[FMHA_F_SMEM_Q];
    const uint32_t base = smem_u32(smem);
    f.k0 = base + L.tile[FMHA_F_SMEM_K + 0];
    f.k1 = base + L.tile[FMHA_F_SMEM_K + 1];
    f.k2 = base + L.tile[FMHA_F_SMEM_K + 2];
    f.v0 = base + L.tile[FMHA_F_SMEM_V + 0];
    f.v1 = base + L.tile[FMHA_F_SMEM_V + 1];
    f.v2 = base + L.tile[FMHA_F_SMEM_V + 2];
    f.bars = base + L.bars;
    uint32_t *tmem_slot = (uint32_t *)(smem + L.tmem_slot);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    { // the query tile: the linear block index's place in fmha_tile_of's list (causal: longest first)
        const fmha_tile tl = fmha_tile_of(&f.p, (int)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)));
        f.q0 = tl.q0;
        f.h = tl.h;
        f.b = tl.b;
    }
    f.ntiles = fmha_kv_tiles(&f.p, f.q0);

    // Step 1: prologue: the barriers for every role; then TMEM for the warps that use it (warp 4
    // allocates, warps 0-4 meet at a named barrier), while the load warp starts at once
    if (threadIdx.x == 0) {
        for (int i = 0; i < FMHA_F_SM100_BARS; i++) mbar_init(bar(f, i), fmha_f_bar_count(i));
        mbar_fence_init();
    }
    __syncthreads();
    if (warp == FMHA_F_LOAD_WARP) {
        if (f.p.faults & FMHA_FAULT_NAMED_BAR_JOIN) // FG12: a warp outside the barrier joins it
            named_bar_sync<FMHA_F_TMEM_BAR_ID>(FMHA_F_TMEM_BAR_THREADS);
    } else {
        if (warp == FMHA_F_MMA_WARP) {
            tmem_alloc(smem_u32(tmem_slot), FMHA_F_TMEM_COLS);
            tmem_relinquish();
        }
        tcgen05_fence_before();
        named_bar_sync<FMHA_F_TMEM_BAR_ID>(FMHA_F_TMEM_BAR_THREADS);
        tcgen05_fence_after();
        f.tmem = *tmem_slot;
    }

    if (warp == FMHA_F_LOAD_WARP) {
        if (lane == 0) load_role(f, a); // a TMA copy is a single-thread instruction
        __syncwarp();
    } else if (warp == FMHA_F_MMA_WARP) {
        if (lane == 0) mma_role(f); // the warp converges again at the __syncwarp below
        __syncwarp();
    } else {
        softmax_role(f, a, warp, lane);
    }

    // Step 4: teardown: every TMEM access is complete; free the columns
    tcgen05_fence_before();
    __syncthreads();
    if (warp == FMHA_F_MMA_WARP) {
        tcgen05_fence_after();
        tmem_dealloc(f.tmem, FMHA_F_TMEM_COLS);
    }
#else
    (void)a;
#endif
}

extern "C" int stage_f_sm100_launch(const void *params)
{
    const fmha_params &p = *(const fmha_params *)params;
    // stage_f.c's validate() guarantees these; a launch that breaks them would read past the SMEM
    // or the TMEM map, so the launcher refuses it rather than trusting every caller
    if (p.pipe.ring < 1 || p.pipe.ring > FMHA_RING_MAX || (p.pipe.overlap && p.d > 128) ||
        fmha_f_smem_layout_make(p.d, p.pipe.ring).bytes > SMEM_OPTIN_MAX_BYTES) {
        fprintf(stderr, "stage F (sm100): ring %d, overlap %d at D = %d is not a pipeline this kernel has\n", p.pipe.ring,
                p.pipe.overlap, p.d);
        return 1;
    }
    fmha_tma_args a;
    char err[800];
    if (fmha_tmaps_encode(&p, 10, &a, err, sizeof err)) {
        fprintf(stderr, "stage F (sm100): %s\n", err);
        return 1;
    }
    return launch_kernel(fmha_kernel, fmha_grid(&p), FMHA_F_SM100_THREADS, fmha_f_smem_layout_make(p.d, p.pipe.ring).bytes, a);
}
