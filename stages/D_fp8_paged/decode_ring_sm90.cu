// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage D, Hopper port (sm_90a): the pipelined decode past 32 packed rows (--ring R with MQA's
// 128 packed rows a KV head, or any 33..128 a CTA).
//
// Key extensions over stage C:
//   1. everything of decode_sm90.cu's list: the paged e4m3 cache and its gather, the FP8 MMAs,
//      the scales on S's columns and in P, the decode packing, split-KV
//   2. a ring of R slots (K, V as gathered, V^T and the tile's scales each) that a load warpgroup
//      (warps 8-11: stage D's cp.async gather and V's transpose, the swapped ring kernel's
//      load_role; with --kv-tma 1 a TMA box a page onto the slot's landed barrier)
//      keeps full, and two consumer warpgroups of 64 rows (warps 0-7) that read every
//      slot, so a tile is gathered and transposed once for 128 rows and neither group waits for
//      it while the ring runs ahead
//   3. the groups never meet inside the loop: each waits for a slot's full barrier, and every
//      consumer thread arrives on the slot's empty barrier after its P V (256 arrivals a phase;
//      FG23's variant after S), then waits for the next slot (the next tile's S issued right
//      behind that P V, from three slots on, is a build switch: DEC_RING_S_AHEAD, measured slower)
//   4. P stays in registers: FP8 wgmma takes A from registers, and the load warps' transpose puts
//      V's keys in the order a thread's S accumulator holds them (dec_pv_key_of_pos), so S's
//      values pack straight into A's registers; no P tile, no proxy fence, no group barrier
//   5. registers by role: 384 threads get 168 each at launch; setmaxnreg gives the consumers
//      216 (S and O: two x D / 2 floats) and leaves the load warps 56. setmaxnreg allows no calls
//      in the kernel, so this file is a translation unit of its own, with the watchdog's cold
//      path inline (FMHA_WD_FIRE_INLINE); decode_sm90.cu's kernels keep theirs out of line
//
// Steps (decode_sm90.cu's labels):
//   1   prologue: the 256 consumer threads quantise Q (the CTA's 128 rows); named barrier 1
//   2a  load warps, per tile: wait for the slot's empty barrier, gather K_j, V_j and the scales
//       into it; then publish the tile before (2a'): the tile's largest V scale (one a warp),
//       V transposed, fence, arrive on its full
//   2b  consumer group g (warps 4g..4g+3, rows 64g..64g+63): wait for the slot's full barrier;
//       S = Q K_j^T, D / 32 wgmma m64n128k32 e4m3; commit; wait
//   2c  the slot's scales (K's on S's columns), the mask, the row max over the quad
//   2d  the row's P scale (from its largest P and the load warps' largest V scale, a power of
//       two), P / sp by the exponentials (1 / sp in their FFMA), V's scale into P, P's codes
//       into A's registers; O rescaled
//   2e  O += P V_j (P from registers, V^T with permuted keys from the slot), 4 wgmma; wait for
//       it; every consumer thread arrives on the slot's empty barrier
//   3   epilogue: l_i over the quad; O = u O_acc / l_i -> bf16 (or f32 O_part), LSE
//   4   teardown: nothing to free
#define FMHA_WD_FIRE_INLINE 1
#include "decode_sm90_steps.cuh"
#include "sm90/warpgroup.cuh"

// The pipelined decode past 32 packed rows (--ring R with MQA's 128 rows; from 33 rows on, 128 a CTA): two
// consumer warpgroups of 64 rows (warps 0-7) share every slot of a ring of R that the load
// warpgroup (warps 8-11) keeps full with stage D's cp.async gather and V's transpose (load_role,
// the swapped ring kernel's; KT: its TMA gather); a tile is gathered and transposed once for 128 rows, and neither
// group waits for it while the ring runs ahead. The groups never meet inside the loop: each waits
// for a slot's full barrier, computes S and the softmax as the m64 kernel does and P V with P's codes
// in registers, and every consumer thread arrives on the slot's empty barrier once its P V has
// completed (256 arrivals a phase). FG23's variant arrives right
// after S, before the softmax reads the slot's scales and P V its V^T.
// The same split serves the overlap (OV below): with 224 / 48 or 232 / 40 ptxas spilled more than
// at 216 / 56, where only the epilogue's pointers spill at D 128 (68 bytes with the overlap, none
// without; 36 with DEC_RING_S_AHEAD=1: stored in the prologue, reloaded once a CTA after the loop)
// 1: from three slots on, the next tile's S is issued right behind P V; 0 (the default): every depth
// runs the release-first loop of two slots. A build switch: S ahead measured 1-3% slower at MQA
// (notes/fp8-decode-pipeline.md, "The next tile's S behind P V")
#ifndef DEC_RING_S_AHEAD
#define DEC_RING_S_AHEAD 0
#endif
enum { DEC_M64_RING_CONS = 2 * DEC_SM90_THREADS, DEC_M64_RING_LOAD_REGS = 56, DEC_M64_RING_CONS_REGS = 216 };
// What setmaxnreg redistributes is what the launch allocated: 384 threads x 168 registers (65536 /
// 384, a multiple of 8), not the whole register file; a split above it would block setmaxnreg.inc
static_assert(DEC_SM90_LOAD_THREADS * DEC_M64_RING_LOAD_REGS + DEC_M64_RING_CONS * DEC_M64_RING_CONS_REGS <=
                  (DEC_M64_RING_CONS + DEC_SM90_LOAD_THREADS) * ((65536 / (DEC_M64_RING_CONS + DEC_SM90_LOAD_THREADS)) & ~7),
              "the registers the load warps give back cover what the consumers take");
#if DEC_SM90_DEVICE
// Steps 2c-2d for a consumer warp, by the rows it holds: both of a thread's rows, the first only, or
// none (a warp past the packed rows: P's codes are zeros)
template <int D>
static __device__ __forceinline__ void m64_ring_softmax(const dec_params &p, float (&s)[DEC_BN / 2], float (&o)[D / 2],
                                                        float (&m_i)[2], float (&l_i)[2], float (&u_i)[2], const int (&rloc)[2],
                                                        const int (&nvis)[2], const float (&rowfac)[2], int kv0,
                                                        const ring_slot &sl, const float *svm, uint32_t (&pa)[DEC_BN / 8],
                                                        int t, int prow0, int w0, int M)
{
    if (w0 + 8 < M) softmax_tile_regs<D, 2>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, sl.sk, sl.sv, svm, pa, t, prow0);
    else if (w0 < M) softmax_tile_regs<D, 1>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, sl.sk, sl.sv, svm, pa, t, prow0);
    else
#pragma unroll
        for (int i = 0; i < DEC_BN / 8; i++) pa[i] = 0u;
}

// The same with the previous tile's P V in flight (--overlap 1): the first half of step 2d by the
// warp's rows, then pv_done (the wait for that P V and its slot's release) where all four warps of
// the group meet, outside any branch that differs between them (wgmma.wait_group is .aligned over
// the warpgroup), then P's codes and O's correction by the warp's rows again
template <int D, class PvDone>
static __device__ __forceinline__ void m64_ring_softmax_under_pv(const dec_params &p, float (&s)[DEC_BN / 2], float (&o)[D / 2],
                                                                 float (&m_i)[2], float (&l_i)[2], float (&u_i)[2],
                                                                 const int (&rloc)[2], const int (&nvis)[2],
                                                                 const float (&rowfac)[2], int kv0, const ring_slot &sl,
                                                                 const float *svm, uint32_t (&pa)[DEC_BN / 8], int t, int prow0,
                                                                 int w0, int M, const PvDone &pv_done)
{
    dec_p_scales ps;
    if (w0 + 8 < M) softmax_tile_regs<D, 2, true>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, sl.sk, sl.sv, svm, pa, t, prow0, &ps);
    else if (w0 < M) softmax_tile_regs<D, 1, true>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, sl.sk, sl.sv, svm, pa, t, prow0, &ps);
    pv_done();
    // P's codes as the exponentials left them (with the bound: in units of sp already, softmax_tile_as's EARLY)
    if (w0 + 8 < M) p_codes_and_o<D, 2, true, dec_p_scale_bound<D>>(s, o, u_i, ps, nullptr, pa, t, prow0);
    else if (w0 < M) p_codes_and_o<D, 1, true, dec_p_scale_bound<D>>(s, o, u_i, ps, nullptr, pa, t, prow0);
    else
#pragma unroll
        for (int i = 0; i < DEC_BN / 8; i++) pa[i] = 0u;
}

// Keeps P's registers of a P V in flight live until its wait: the compiler does not know that the
// wgmma reads them after its issue, and would otherwise give the next tile's codes the same ones
template <int N> static __device__ __forceinline__ void keep_operand(uint32_t (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+r"(r[i])::"memory");
}

// O += P V for one tile: P's codes from registers, V^T (keys in P's order) at the slot's offset
template <int D>
static __device__ __forceinline__ void issue_pv(float (&o)[D / 2], const uint32_t (&pa)[DEC_BN / 8], uint64_t dvt0, uint32_t off,
                                                const smem_tile &tvt, const smem_tile &tv_mn)
{
#pragma unroll
    for (int kk = 0; kk < DEC_BN / 32; kk++) {
        const uint32_t a4[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
        wgmma_m64nNk32_rs_e4m3<D>(o, a4, smem_desc_add(dvt0, off + dec_vt_step_offset(&tvt, &tv_mn, false, 0, 32 * kk)), 1);
    }
    wgmma_commit();
}
#endif

// OV (--overlap 1): P_{j-1} V_{j-1} is issued with S_j and runs under tile j's softmax; its slot is
// released once it completed, a tile later than without the overlap (hence RING >= 3: at two slots
// the load role, which publishes a tile only after issuing the next, would wait for a slot the
// consumers release only after that publication)
// KT (--kv-tma 1): the load warps gather by TMA, a box a page (load_role's KT), not by cp.async
template <int D, int RING, bool OV, bool KT = false>
static __global__ void __launch_bounds__(DEC_M64_RING_CONS + DEC_SM90_LOAD_THREADS, 1)
    decode_kernel_m64_ring(const __grid_constant__ dec_sm90_args a)
{
    static_assert(RING >= 2, "a ring of at least two slots");
    static_assert(!OV || RING >= 3, "the overlap holds a slot a tile longer: three slots at least");
    static_assert(!(OV && KT), "the overlap's kernels keep the cp.async gather (stage_d.c refuses the pair)");
#if DEC_SM90_DEVICE
    const dec_params &p = a.p;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    constexpr int BM = 2 * DEC_BM_SM90; // the CTA's packed rows
    const smem_layout L = dec_smem_layout_make_ring(BM, D, RING, dec_ring_p_in_regs(1, BM)); // P's codes in registers: no P tile
    const smem_tile tq = dec_q_tile(BM, D), tk = dec_k_tile(D), tvt = dec_vt_tile(D);
    const smem_tile tv_mn = dec_v_mn_tile(D);
    uint8_t *smem_q = smem + L.tile[DEC_SMEM_Q];    // [BM x D] e4m3 K-major SW128: A of S = Q K^T
    uint8_t *ring_base = smem + L.tile[DEC_SMEM_K]; // the ring's slots (ring_slot_at)
    float *sm_sq = (float *)(smem + L.tile[DEC_SMEM_SCALES]); // [BM] Q's row scales
    // [RING][4] the load warps' V-scale maxima a slot (publish), where the unpipelined layout keeps
    // its tile's sk and sv (a ring's are in its slots)
    float *sm_svm = sm_sq + BM;
    static_assert(4 * DEC_MAX_RING <= 2 * DEC_BN && BM % 4 == 0, "the maxima fit where sk and sv would be, 16-byte aligned");
    const int t = (int)(threadIdx.x % DEC_SM90_THREADS), g = (int)(threadIdx.x / DEC_SM90_THREADS); // g 2: the load warps
    const int mtiles = dec_m_tiles(&p);
    const int mt = blockIdx.x % mtiles, split = blockIdx.x / mtiles, hk = blockIdx.y, b = blockIdx.z;
    const int len = p.seqlens[b], m0 = mt * BM + DEC_BM_SM90 * g, M = dec_rows(&p); // m0: a group's first row
    const int32_t *table = p.block_table + (int64_t)b * p.max_pages;
    const float scale_log2 = p.scale * DEC_LOG2E;
    int t0, t1;
    dec_split_tiles(&p, len, split, &t0, &t1);

    int rloc[2], nvis[2], qi[2], qh[2]; // a consumer thread's two packed rows (the load warps' unused)
    m64_rows_of(p, t, m0, M, hk, len, rloc, nvis, qi, qh);
    if (t0 >= t1) { // an empty split (a short sequence): it saw no key
        if (g < 2) m64_empty_split(p, t, m0, M, rloc, qi, qh, split, b);
        return;
    }
    const int end = dec_gather_end(&p, len);
    const uint32_t bars = smem_u32(smem + L.bars);
    if (threadIdx.x == 0) {
        for (int sl = 0; sl < RING; sl++) {
            mbar_init(bars + 8u * dec_ring_full_bar(sl), DEC_RING_FULL_COUNT);
            mbar_init(bars + 8u * dec_ring_empty_bar(RING, sl), DEC_M64_RING_CONS);
            if constexpr (KT) mbar_init(bars + 8u * dec_ring_land_bar(RING, sl), 1); // the load warp's expect_tx
        }
        mbar_fence_init();
    }
    __syncthreads(); // the last barrier the load warps and the consumers meet at
    // Registers by role: 384 threads get 168 each at launch; the consumers' S and O fragments (two
    // x D / 2 floats) want more, the gather and the transpose far fewer
    if (g == 2) {
        wg_setmaxnreg_dec<DEC_M64_RING_LOAD_REGS>();
        load_role<D, RING, DEC_M64_RING_CONS, true, true, KT>(a, table, hk, t0, t1, end, ring_base, bars, tk, tv_mn, sm_svm);
        return;
    }
    wg_setmaxnreg_inc<DEC_M64_RING_CONS_REGS>();

    // Step 1: prologue: Q quantised per row, the CTA's 128 rows by the 256 consumer threads
    quantise_q_rows<D, BM>(p, b, hk, mt * BM, smem_q, tq, sm_sq);
    fence_proxy_async(); // Q's generic stores, read by S's MMAs (the async proxy)
    named_bar_sync<1>(DEC_M64_RING_CONS);
    float rowfac[2];
    for (int hi = 0; hi < 2; hi++) rowfac[hi] = scale_log2 * sm_sq[DEC_BM_SM90 * g + rloc[hi]];
    float m_i[2] = {-INFINITY, -INFINITY}, l_i[2] = {0.0f, 0.0f}, u_i[2] = {1.0f, 1.0f};
    float o[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] = 0.0f;
    // FG23; the other footgun variants are refused with the ring (stage_d.c), so none is handled here
    const bool early = p.faults & DEC_FAULT_RING_EARLY_RELEASE;
    // The MMAs' descriptors at K step 0, encoded once: this group's Q rows, K and Vt in slot 0
    // (a slot's offset added per tile)
    const ring_slot sl0 = ring_slot_at<D>(ring_base, 0);
    const uint64_t dq = smem_tile_desc_sm90(&tq, smem_u32(smem_q), DEC_BM_SM90 * g, 0);
    const uint64_t dk0 = smem_tile_desc_sm90(&tk, smem_u32(sl0.k), 0, 0);
    const uint64_t dvt0 = smem_tile_desc_sm90(&tvt, smem_u32(sl0.vt), 0, 0);
    const int w0 = m0 + 16 * (t / 32); // the warp's first row: warps past the rows skip the softmax
    ring_state rs = ring_make(RING);
    // Step 2b: S = Q K_j^T (D / 32 wgmma), issued and committed; the caller waits
    auto s_issue = [&](float (&s)[DEC_BN / 2], uint32_t off) {
#pragma unroll
        for (int i = 0; i < DEC_BN / 2; i++) s[i] = 0.0f;
        wgmma_fence(); // O's correction and P's registers were written by ordinary instructions
#pragma unroll
        for (int k = 0; k < D; k += 32)
            wgmma_m64n128k32_ss_e4m3(s, smem_tile_desc_sm90_k(&tq, dq, k), smem_tile_desc_sm90_k(&tk, smem_desc_add(dk0, off), k), k > 0);
        wgmma_commit();
    };
    // Step 2a: done by the load warps (load_role; 2a', V's transpose, too): wait for the current slot
    // and name its parts, its MMA offset and its empty barrier
    struct slot_in {
        ring_slot sl;
        const float *svm; // the slot's V-scale maxima (load_role)
        uint32_t off, empty;
    };
    auto wait_slot = [&]() {
        const slot_in in = {ring_slot_at<D>(ring_base, rs.slot), sm_svm + 4 * rs.slot, (uint32_t)rs.slot * dec_ring_slot_bytes(D),
                            bars + 8u * dec_ring_empty_bar(RING, rs.slot)};
        mbar_wait(bars + 8u * dec_ring_full_bar(rs.slot), ring_full_parity(&rs), p.wd, DEC_SITE_RING_FULL);
        __syncwarp(); // the lanes left the wait one by one: converged before the .sync.aligned wgmma
        return in;
    };
    if constexpr (OV) {
        // Tile j: S_j issued, then P_{j-1} V_{j-1}; the wait for S_j only; the softmax of tile j runs
        // while that P V does, up to P's codes: there (pv_done) the wait for the P V, then its slot
        // released, then P_j's codes into the same registers and O corrected. The first tile has no
        // P V before it; the last one's follows the loop. (No FG23 variant: stage_d.c refuses
        // --fault with the overlap.)
        uint32_t pa[DEC_BN / 8];
        slot_in prev = wait_slot();
        {
            float s[DEC_BN / 2];
            s_issue(s, prev.off);
            wgmma_wait<0>();
            m64_ring_softmax<D>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, t0 * DEC_BN, prev.sl, prev.svm, pa, t, DEC_BM_SM90 * g, w0,
                                M);
            ring_advance(&rs);
        }
        for (int j = t0 + 1; j < t1; j++) {
            const slot_in in = wait_slot();
            float s[DEC_BN / 2];
            s_issue(s, in.off);
            issue_pv<D>(o, pa, dvt0, prev.off, tvt, tv_mn);
            wgmma_wait<1>(); // S_j done; P_{j-1} V_{j-1} may still run
            wgmma_fence_operand(s);
            const auto pv_done = [&]() { // P_{j-1} V_{j-1} has completed: its slot is free, O and P's registers too
                wgmma_wait<0>();
                wgmma_fence_operand(o);
                keep_operand(pa);
                mbar_arrive(prev.empty);
            };
            m64_ring_softmax_under_pv<D>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, j * DEC_BN, in.sl, in.svm, pa, t,
                                         DEC_BM_SM90 * g, w0, M, pv_done);
            prev = in;
            ring_advance(&rs);
        }
        wgmma_fence();
        issue_pv<D>(o, pa, dvt0, prev.off, tvt, tv_mn); // the last tile's P V
        wgmma_wait<0>();
        wgmma_fence_operand(o);
        mbar_arrive(prev.empty);
    } else if constexpr (RING >= 3 && DEC_RING_S_AHEAD) {
        // Tile j's S is issued right behind P_{j-1} V_{j-1}, so the tensor cores run the two back to
        // back and the group waits once for both, not for each in turn with the loop, the slot's wait
        // and S's issue between them; tile j - 1's slot is released as soon as its P V completed
        // (wait_group 1: the groups complete in order), before S_j's wait. S's registers are free
        // by then (P's codes are in pa, which stays live until that P V completed). The group waits
        // for slot j while it still holds slot j - 1, as the overlap does: three slots at least (the
        // host model, tests/unit/test_role_sim.c, deadlocks at two)
        slot_in cur = wait_slot();
        float s[DEC_BN / 2];
        s_issue(s, cur.off); // Step 2b: S = Q K_j^T
        wgmma_wait<0>();
        wgmma_fence_operand(s);
        if (early) mbar_arrive(cur.empty); // FG23: released before the softmax reads its scales and P V its V^T
        for (int j = t0; j < t1; j++) {
            // Step 2c: the slot's scales, the mask, the row max; Step 2d: P, its scale, its codes into
            // A's registers (zeros for rows past the packed rows), O rescaled (the m64 kernel's softmax)
            uint32_t pa[DEC_BN / 8];
            m64_ring_softmax<D>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, j * DEC_BN, cur.sl, cur.svm, pa, t, DEC_BM_SM90 * g, w0, M);

            // Step 2e: O += P V_j, P from registers, V^T (keys in P's order) from the slot
            wgmma_fence(); // P's registers and O's rescale were written by ordinary instructions
            issue_pv<D>(o, pa, dvt0, cur.off, tvt, tv_mn);
            ring_advance(&rs);
            if (j + 1 < t1) {
                const slot_in nx = wait_slot();
                s_issue(s, nx.off); // Step 2b of tile j + 1, behind the P V
                wgmma_wait<1>();    // P V_j completed: its slot is released (every consumer thread)
                wgmma_fence_operand(o);
                keep_operand(pa);
                if (!early) mbar_arrive(cur.empty);
                wgmma_wait<0>();
                wgmma_fence_operand(s);
                if (early) mbar_arrive(nx.empty);
                cur = nx;
            } else {
                wgmma_wait<0>();
                wgmma_fence_operand(o);
                if (!early) mbar_arrive(cur.empty);
            }
        }
    } else {
        // Release first (the default; at two slots the only order): the load role publishes tile
        // j + 1 only after issuing tile j + 2 into the slot tile j holds, so at two slots the group
        // must release that slot before it waits for the next one
        for (int j = t0; j < t1; j++) {
            const slot_in in = wait_slot();
            float s[DEC_BN / 2];
            s_issue(s, in.off); // Step 2b
            wgmma_wait<0>();
            if (early) mbar_arrive(in.empty); // FG23
            uint32_t pa[DEC_BN / 8];          // Steps 2c-2d
            m64_ring_softmax<D>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, j * DEC_BN, in.sl, in.svm, pa, t, DEC_BM_SM90 * g, w0, M);
            wgmma_fence(); // Step 2e
            issue_pv<D>(o, pa, dvt0, in.off, tvt, tv_mn);
            wgmma_wait<0>();
            if (!early) mbar_arrive(in.empty);
            ring_advance(&rs);
        }
    }

    // Step 3: epilogue: finish the row sums over the quad, O = u O_acc / l, LSE (no FG17 variant here)
    m64_epilogue<D, false>(p, o, m_i, l_i, u_i, rloc, qi, qh, t, m0, M, split, b, nullptr);
    // Step 4: teardown: nothing to free
#else
    (void)a;
#endif
}

// The instantiations decode_sm90.cu's dispatch takes (D 64 and 128, 2..4 slots; D = 256's two slots
// and Q exceed the SMEM, and stage_d.c refuses them); nullptr elsewhere. Without a P tile (P's codes
// in registers) D = 128 holds four slots: 4 x 49 KB, Q 16 KB. kv_tma 1: the TMA gather (no overlap).
template <bool OV, bool KT> static dec_sm90_kernel m64_ring_of(int d, int ring)
{
    if constexpr (!OV) // the overlap needs three slots
        if (ring == 2) return d == 64 ? decode_kernel_m64_ring<64, 2, OV, KT> : d == 128 ? decode_kernel_m64_ring<128, 2, OV, KT> : nullptr;
    if (ring == 3) return d == 64 ? decode_kernel_m64_ring<64, 3, OV, KT> : d == 128 ? decode_kernel_m64_ring<128, 3, OV, KT> : nullptr;
    if (ring == 4) return d == 64 ? decode_kernel_m64_ring<64, 4, OV, KT> : d == 128 ? decode_kernel_m64_ring<128, 4, OV, KT> : nullptr;
    return nullptr;
}
dec_sm90_kernel dec_m64_ring_kernel(int d, int ring, int overlap, int kv_tma)
{
    if (overlap) return kv_tma ? nullptr : m64_ring_of<true, false>(d, ring);
    return kv_tma ? m64_ring_of<false, true>(d, ring) : m64_ring_of<false, false>(d, ring);
}
