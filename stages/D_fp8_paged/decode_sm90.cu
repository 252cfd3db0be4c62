// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage D, Hopper port (sm_90a).
//
// Key extensions over stage C:
//   1. the KV cache is e4m3 in pages: each token's row is found through the block table, gathered
//      with cp.async (16 bytes a copy), slots past the sequence's end zero-filled, never read
//   2. both MMAs in FP8: wgmma m64nNk32 e4m3 x e4m3 -> f32; Q quantised per row on the way in,
//      P per row and tile; FP8 wgmma reads K-major operands only, so V is transposed in SMEM
//   3. the scales never touch the cache's elements: K's on the columns of S, V's folded into P's
//      columns, Q's and P's as row factors (notes/fp8-scales.md)
//   4. decode packing: the Hq/Hkv query heads of a KV head times the Sq new rows are one dimension
//      of the MMAs, so one CTA reads each K/V tile once for a whole GQA group; causal among the
//      new rows
//   5. the MMAs swapped for few rows: S^T = K Q^T and O^T = V^T P^T put the keys (and D) on the
//      m64 side and the NR = 8..64 packed rows on N, so every warp holds keys and a thread only
//      NR / 2 scores per 64 keys; the row max, the P scale and the row sum cross the warps
//   6. split-KV: a sequence's tiles are dealt to several CTAs, each writing O_part and LSE_part;
//      merge.cu combines them
//
// Math (log2 domain, FlashAttention-2 names; packed row r, key j of tile t):
//   q8_r = e4m3(q_r / sq_r), sq_r = absmax(q_r) / 448
//   s_rj = scale log2(e) sq_r sk_j (q8_r . k8_j)                 K's scale on S's columns
//   m_new = max(m_i, max_j s_rj), alpha = exp2(m_i - m_new), P_rj = exp2(s_rj - m_new)
//   l_i = alpha l_i + sum_j P_rj
//   P'_rj = P_rj sv_j, sp = dec_p_scale(max_j P'_rj, max_j sv_j), p8_rj = e4m3(P'_rj / sp)
//   O_acc = (alpha u / sp) O_acc + p8 V8^T,  u = sp              O = u O_acc throughout
//   at the end: O = u O_acc / l_i, LSE = m_i ln 2 + ln l_i
//
// One CTA of 128 threads (one warpgroup, NR packed rows, Bc = 128 keys per tile; past 32 rows
// --m64-groups 2 runs two warpgroups of 64 rows on each tile); the gather, the
// MMAs and the softmax take turns. --ring R (the swapped kernel, RING = R): 128 more threads, a
// load warpgroup, fill a ring of R slots ahead of the consumers (stage F's ring on this cache;
// steps 2a and 2a' split between the roles, the math unchanged).
//
// Operands and layouts (decode_core.h, decode.h): Q [B, Sq, Hq, D] bf16 -> SMEM Q [NR x D] e4m3
// K-major SW128 (B of S^T); cache K, V [pages, page, Hkv, D] e4m3 -> SMEM K [128 x D] K-major
// SW128 (A of S^T, two m64 halves) and Vs [128 x D] (as stored) -> Vt [D x 128] K-major SW128
// (A of O^T, D / 64 m64 blocks); P [NR x 128] e4m3 K-major SW128 (B of O^T) written by the
// softmax; S^T in 2 x NR / 2 f32 registers per thread, O^T in D / 64 x NR / 2. A packed row lives
// in the 8 lanes of each warp with the same lane % 4, in all 4 warps (model/frag_map.h).
//
// Steps (the same labels in decode_sm100.cu and decode_emu.c):
//   1   prologue: two threads per packed row quantise Q into SMEM (row absmax over the pair)
//   2a  per KV tile of this split: cp.async K_j and V_j (as stored) and the tile's scales,
//       through the block table; zero fill past the sequence; wait; barrier (--kv-tma 1: one
//       thread issues a TMA box a page for K and V on the CTA's kv barrier, the threads copy
//       the scales; V's rows past the sequence are zeroed by the transpose)
//   2a' V_j transposed into Vt (4 tokens x 16 d per block, byte permutes); fence.proxy.async;
//       barrier
//   2b  S^T = K_j Q^T: 2 x D/32 wgmma m64nNRk32 e4m3; commit; wait
//   2c  scales and mask; the row max over the lanes, then the warps (SMEM, barrier); m_new,
//       alpha, l_i
//   2d  P, V's scale into P, the row's P scale (lanes, warps, barrier), P's codes into SMEM;
//       O *= alpha u / sp
//   2e  fence.proxy.async; barrier; O^T += V_j^T P^T: D/64 x 4 wgmma m64nNRk32 e4m3; commit;
//       wait; barrier
//   3   epilogue: l_i over every thread (SMEM); O = u O_acc / l_i -> bf16 (or f32 O_part), LSE
//   4   teardown: nothing to free
#include "decode_sm90_steps.cuh"

// RING = 0: one warpgroup gathers, waits, transposes and computes in turn (KT 1: K and V by TMA;
// KT 2: the same TMA gather, tile j+1's copies issued during tile j as soon as its buffers are
// free: the boxes once S_j's MMAs are waited for (K read) and V_j is transposed (Vs read), the
// scales once the softmax has read them; their rows made at tile j's start from block-table
// entries loaded during tile j-1 (dec_table_ahead), so each CTA keeps a tile in flight while it
// computes instead of waiting for every tile's bytes, and no lookup's load is waited for).
// RING >= 2: the pipelined decode, the same math on a ring of RING slots that the load warps (4..)
// keep full.
template <int D, int NR, int RING, int KT, bool TL = false, bool FR = false, bool PS = false>
static __global__ void __launch_bounds__(dec_sm90_threads(RING), swapped_min_ctas<D, NR, RING>::value)
    decode_kernel_swapped(const __grid_constant__ dec_sm90_args a)
{
    static_assert(!(KT && RING > 0), "the TMA gather is the unpipelined kernel's");
    static_assert(!FR || KT == 2, "--fair holds back the next tile's boxes, which only --kv-tma 2 issues ahead");
    static_assert(!PS || (KT == 2 && !TL && !FR), "--persistent carries the next tile's boxes across items: --kv-tma 2, no stamps, no --fair");
    constexpr bool AHEAD = KT == 2;
#if DEC_SM90_DEVICE
    const dec_params &p = a.p;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    constexpr int RPT = NR / 4; // packed rows a thread holds
    const smem_layout L = dec_smem_layout_make_ring(NR, D, RING, dec_ring_p_in_regs(1, NR)); // up to 32 rows: P^T in SMEM, where the swapped P V reads it
    const smem_tile tq = dec_q_tile(NR, D), tk = dec_k_tile(D), tvt = dec_vt_tile(D), tp = dec_p_tile(NR);
    const smem_tile tv_mn = dec_v_mn_tile(D);
    uint8_t *smem_q = smem + L.tile[DEC_SMEM_Q];   // [NR x D] e4m3 K-major SW128: B of S^T = K Q^T
    uint8_t *smem_k = smem + L.tile[DEC_SMEM_K];   // [128 x D] e4m3 K-major SW128: A of S^T (two m64 halves)
                                                   // (RING: the ring's slots, ring_slot_at)
    uint8_t *smem_vs = smem + L.tile[DEC_SMEM_VS]; // [128 kv x D] e4m3, V as gathered (RING: in the slot)
    uint8_t *smem_vt = smem + L.tile[DEC_SMEM_VT]; // [D x 128 kv] e4m3 K-major SW128: A of O^T = V^T P^T
    uint8_t *smem_p = smem + L.tile[DEC_SMEM_P];   // [NR x 128 kv] e4m3 K-major SW128: B of O^T
    float *sm_sq = (float *)(smem + L.tile[DEC_SMEM_SCALES]); // [NR] Q's row scales
    float *sk = sm_sq + NR, *sv = sk + DEC_BN;                // [128] each: the tile's K, V scales (RING: the slot's)
    float *red_max = sv + DEC_BN, *red_p = red_max + 4 * NR;  // [4 warps][NR] each: row reductions
    float *red_sv = red_p + 4 * NR;                           // [4 warps]: the tile's largest V scale
    if constexpr (TL) {
        timeline_stamp(p, DEC_TL_ENTRY);
        timeline_stamp(p, DEC_TL_SM);
    }
    const int t = threadIdx.x, lane = t % 32, w = t / 32;
    // PS (--persistent 1): this CTA walks items, its block's first, then each one it claims
    // (walk_claim, dec_walk_item) one tile before its item's last; the one-item kernel's item is its
    // block. What lives across the walk is declared here.
    const int nitems = PS ? dec_items(&p) : 1;
    int walk_next = nitems;        // PS: the item claimed next (nitems: none, the walk ends)
    unsigned long long claimed = 0; // PS: the counter as thread 0's claim read it (its add's result)
    bool kv_bar_ready = false;     // KT: the kv barrier initialised (once a CTA)
    uint32_t landed = 0;           // PS: the tiles landed on the kv barrier before this item (its parity)
    int ahead_item = -1;           // PS: the item whose first tile the last tile of the item before issued
    unsigned long long fair_v = 0; // FR: the grid's issued tiles as thread 0 last read them
    int fair_done = 0, fair_n = 0; // FR: the tiles this CTA issued, of fair_n (thread 0)
    dec_table_ahead la; // AHEAD: the entries of tile j+1, loaded during tile j-1 (PS: across items)
    for (int item = PS ? (int)blockIdx.x : 0; item < nitems; item = PS ? walk_next : item + 1) {
    const dec_item itm = PS ? dec_item_flat(&p, p.seqlens, item) : dec_item_at(&p, p.seqlens, blockIdx.x, blockIdx.y, blockIdx.z);
    const int mt = itm.mt, split = itm.split, hk = itm.hk, b = itm.b;
    const int len = itm.len, m0 = mt * NR, M = dec_rows(&p);
    const int32_t *table = p.block_table + (int64_t)b * p.max_pages;
    const float scale_log2 = p.scale * DEC_LOG2E;
    int t0, t1;
    dec_split_tiles(&p, len, split, &t0, &t1);

    int nvis[RPT], qi[RPT], qh[RPT];
#pragma unroll
    for (int jr = 0; jr < RPT; jr++) {
        const int m = m0 + row_of(jr);
        qi[jr] = qh[jr] = 0;
        if (m < M) dec_unpack_row(&p, hk, m, &qi[jr], &qh[jr]);
        nvis[jr] = m < M ? dec_visible_keys(&p, len, qi[jr]) : 0;
    }
    const bool row_writer = lane < 4 && w == 0; // one thread per (jr, lane % 4): the rows' owner
    if (t0 >= t1) { // an empty split (a short sequence): it saw no key
        if (row_writer)
#pragma unroll
            for (int jr = 0; jr < RPT; jr++)
                if (m0 + row_of(jr) < M) p.lse_part[(((int64_t)split * p.b + b) * p.hq + qh[jr]) * p.sq + qi[jr]] = -INFINITY;
        if constexpr (PS) { // the walk's next item, claimed now
            if (t == 0) claimed = walk_claim(p);
            walk_next = walk_publish(p, claimed, nitems);
            continue;
        }
        if constexpr (TL) timeline_stamp(p, DEC_TL_EXIT);
        return;
    }
    const int end = dec_gather_end(&p, len);
    const uint32_t bars = smem_u32(smem + L.bars);
    if constexpr (RING > 0) { // the ring's barriers, then the load role goes its own way
        if (t == 0) {
            for (int s = 0; s < RING; s++) {
                mbar_init(bars + 8u * dec_ring_full_bar(s), DEC_RING_FULL_COUNT);
                mbar_init(bars + 8u * dec_ring_empty_bar(RING, s), DEC_RING_EMPTY_COUNT);
            }
            mbar_fence_init();
        }
        __syncthreads(); // the last barrier the load role and the consumers meet at
        if (w >= DEC_SM90_THREADS / 32) {
            load_role<D, RING>(a, table, hk, t0, t1, end, smem_k, bars, tk, tv_mn);
            return;
        }
    }
    const uint32_t kv_bar = bars + 8u * DEC_BAR_KV_FULL; // KT: the TMA gather's barrier (one arrival, the tx)
    if constexpr (KT) {
        if (t == 0 && !kv_bar_ready) {
            mbar_init(kv_bar, 1);
            mbar_fence_init();
        } // the barrier after the prologue orders the init before any use
    }
    if constexpr (AHEAD) {
        if (!PS || ahead_item != item) { // the first tile's copies go out before Q's quantisation
            if (!kv_bar_ready) __syncthreads(); // the barrier's init before warp 0's boxes complete on it
            tma_gather_tile<D>(a, table, hk, t0 * DEC_BN, end, smem_k, smem_vs, tk, sk, sv, kv_bar);
            if constexpr (FR) {
                if (t == 0) {
                    fair_n = t1 - t0;
                    fair_count(p);
                    fair_done++;
                    fair_v = fair_seen(p);
                }
            }
        } // (PS: else the last tile of the item before issued it)
    }
    kv_bar_ready = true;

    // Step 1: prologue: Q quantised per row
    quantise_q_rows<D, NR>(p, b, hk, m0, smem_q, tq, sm_sq);
    // The ring's consumers reach S's MMA from a slot's barrier, with no kv_tile_land (whose proxy
    // fence covers Q in the other kernels): Q's generic stores fenced for the async proxy here
    if constexpr (RING > 0) fence_proxy_async();
    consumers_sync<RING>();
    float rowfac[RPT], m_i[RPT], l_i[RPT], u_i[RPT];
#pragma unroll
    for (int jr = 0; jr < RPT; jr++) {
        rowfac[jr] = scale_log2 * sm_sq[row_of(jr)];
        m_i[jr] = -INFINITY;
        l_i[jr] = 0.0f; // this thread's part of the row sum (summed over threads at the end)
        u_i[jr] = 1.0f;
    }
    float o[D / 64][NR / 2]; // O^T: D rows (64 per MMA) x the NR packed rows
#pragma unroll
    for (int dm = 0; dm < D / 64; dm++)
#pragma unroll
        for (int i = 0; i < NR / 2; i++) o[dm][i] = 0.0f;
    const bool v_mn = p.faults & DEC_FAULT_V_NOT_TRANSPOSED; // FG20: an MN-major V read as K-major
    const bool early = p.faults & DEC_FAULT_RING_EARLY_RELEASE; // FG23 (--ring)
    ring_state rs = ring_make(RING > 0 ? RING : 1);
    // The MMAs' descriptors at K step 0, encoded once: Q's, P's, and K's and Vt's in the one buffer
    // (the ring: in slot 0, a slot's offset added per tile); each K step is then one add
    // (smem_tile_desc_sm90_k). Re-encoded at every step they took about 130 of a warp's 1290
    // instructions a tile (ncu).
    const ring_slot sl0 = ring_slot_at<D>(smem_k, 0);
    uint64_t dq = smem_tile_desc_sm90(&tq, smem_u32(smem_q), 0, 0), dp = smem_tile_desc_sm90(&tp, smem_u32(smem_p), 0, 0);
    uint64_t dk0 = smem_tile_desc_sm90(&tk, smem_u32(RING > 0 ? sl0.k : smem_k), 0, 0);
    const uint32_t vt_base = smem_u32(RING > 0 ? sl0.vt : smem_vt);
    uint64_t dvt0 = v_mn ? smem_tile_desc_sm90(&tv_mn, vt_base, 0, 0) : smem_tile_desc_sm90(&tvt, vt_base, 0, 0);
    // (no register pin: at 128 registers a thread the pinned descriptors pushed values to local memory)

    int64_t next_box = -1, next_row = -1; // AHEAD: tile j+1's box (warp 0's lanes) and scale row, made at j's start
    dec_table_pos cur = dec_tile_cursor(&p, (t0 + 1) * DEC_BN); // and the cursor of tile j+1
    if constexpr (AHEAD) { // (PS: tile t0+1's entries were loaded under the item before's last tile, with t0's boxes)
        la.fb = dec_tok_part(&p, t * dec_kv_tma_box_rows(p.page) % DEC_BN); // the fixed parts: the same every item
        la.ft = dec_tok_part(&p, t);
        if (t0 + 1 < t1 && (!PS || ahead_item != item)) table_entries_load(p, table, cur, (t0 + 1) * DEC_BN, end, la);
    }
    dec_item nxt;      // PS: the claimed item, if it has tiles (its first boxes go out under this item's last tile)
    int nxt_item = -1; // (-1: none)
    for (int j = t0; j < t1; j++) {
        const int kv0 = j * DEC_BN;
        const bool more = AHEAD && j + 1 < t1; // AHEAD: tile j+1's copies are issued during this tile
        uint64_t dk = dk0, dvt = dvt0;
        if constexpr (PS) { // the claim goes out a tile before it is needed: its add's round trip under a tile
            if (t == 0 && j == max(t0, t1 - 2)) claimed = walk_claim(p);
        }
        if constexpr (AHEAD) { // tile j+1's rows from its entries; tile j+2's entries in flight from here
            if (more) {
                rows_of_entries(p, cur, la, hk, next_box, next_row);
                cur = dec_tile_cursor_next(&p, cur);
                if (j + 2 < t1) table_entries_load(p, table, cur, kv0 + 2 * DEC_BN, end, la);
            } else if constexpr (PS) { // the last tile: the claimed item's first tile's entries, used after S
                walk_next = walk_publish(p, claimed, nitems);
                if (walk_next < nitems) {
                    nxt = dec_item_tiles(&p, dec_item_flat(&p, p.seqlens, walk_next));
                    if (nxt.t0 < nxt.t1) nxt_item = walk_next; // (an empty split: its -inf, then the next claim)
                }
                if (nxt_item >= 0)
                    table_entries_load(p, p.block_table + (int64_t)nxt.b * p.max_pages, dec_tile_cursor(&p, nxt.t0 * DEC_BN),
                                       nxt.t0 * DEC_BN, dec_gather_end(&p, nxt.len), la);
            }
            kv_tile_land<D, true>(p, kv0, end, smem_vs, smem_vt, tk, tv_mn, v_mn, kv_bar, (landed + (uint32_t)(j - t0)) & 1u);
        } else if constexpr (RING > 0) { // Steps 2a, 2a' done by the load role: wait for its slot
            const ring_slot sl = ring_slot_at<D>(smem_k, rs.slot);
            dk = smem_desc_add(dk0, (uint32_t)rs.slot * dec_ring_slot_bytes(D));
            dvt = smem_desc_add(dvt0, (uint32_t)rs.slot * dec_ring_slot_bytes(D));
            sk = sl.sk, sv = sl.sv;
            mbar_wait(bars + 8u * dec_ring_full_bar(rs.slot), ring_full_parity(&rs), p.wd, DEC_SITE_RING_FULL);
        } else { // Step 2a: K_j, V_j and their scales through the block table; 2a': V_j transposed
            int pf_lo, pf_hi;
            dec_prefetch_range(&p, j, t0, t1, &pf_lo, &pf_hi);
            kv_tile_in<D, (KT > 0)>(a, table, hk, kv0, end, smem_k, smem_vs, smem_vt, tk, tv_mn, tvt, sk, sv, v_mn, pf_lo,
                                    pf_hi, kv_bar, (uint32_t)(j - t0) & 1u);
        }

        if constexpr (TL) {
            if (j == t0) timeline_stamp(p, DEC_TL_FIRST_TILE);
        }

        // Step 2b: S^T = K_j Q^T: keys as M (two m64 halves), the packed rows as N
        float s[2][NR / 2];
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int i = 0; i < NR / 2; i++) s[h][i] = 0.0f;
        wgmma_fence();
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int k = 0; k < D; k += 32)
                wgmma_m64nNk32_ss_e4m3<NR>(s[h], smem_tile_desc_sm90_k(&tk, smem_desc_add(dk, smem_tile_offset_raw(&tk, 64 * h, 0)), k),
                                           smem_tile_desc_sm90_k(&tq, dq, k), k > 0);
        wgmma_commit();
        wgmma_wait<0>();

        if constexpr (RING > 0) { // FG23: the slot released with S, before the scales' and Vt's reads
            if (early && j + RING < t1) mbar_arrive(bars + 8u * dec_ring_empty_bar(RING, rs.slot));
        }

        // Step 2c: the scales (K's on S's columns: here S^T's rows, the keys), the mask, the row max
        float mx[RPT];
#pragma unroll
        for (int jr = 0; jr < RPT; jr++) mx[jr] = -INFINITY;
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int i = 0; i < NR / 2; i++) {
                int r, c;
                wgmma_acc_map(t, i, &r, &c);
                const int key = 64 * h + r, jr = jr_of(i);
                float colscale = sk[key];
                if (p.faults & DEC_FAULT_K_SCALE_ON_ROWS) colscale = sk[c]; // FG17: key c's scale on row c
                if (p.faults & DEC_FAULT_K_SCALE_DROPPED) colscale = 1.0f;  // FG17
                s[h][i] = kv0 + key < nvis[jr] ? s[h][i] * rowfac[jr] * colscale : -INFINITY;
                mx[jr] = fmaxf(mx[jr], s[h][i]);
            }
#pragma unroll
        for (int jr = 0; jr < RPT; jr++) {
            mx[jr] = warp_max_over_keys(mx[jr]);
            if (lane < 4) red_max[w * NR + row_of(jr)] = mx[jr];
        }
        consumers_sync<RING>();
        // AHEAD: every thread's S MMAs are waited for and V_j was transposed before them: K and Vs
        // are free, tile j+1's boxes go out
        const bool cross = PS && !more && nxt_item >= 0; // PS: the next item's first tile, under this item's last
        if (cross) rows_of_entries(p, dec_tile_cursor(&p, nxt.t0 * DEC_BN), la, nxt.hk, next_box, next_row);
        if ((more || cross) && t < 32) {
            if constexpr (FR) { // --fair: held back while this CTA runs ahead of the grid
                if (t == 0) fair_v = fair_hold(p, fair_v, fair_done + 1, fair_n);
                __syncwarp();
            }
            tma_issue_boxes<D>(a, next_box, cross ? nxt.hk : hk, smem_k, smem_vs, tk, kv_bar, threadIdx.x);
            if constexpr (FR) {
                if (t == 0) {
                    fair_count(p);
                    fair_done++;
                    fair_v = fair_seen(p); // lands under this tile's softmax and P V
                }
            }
        }
        float alpha[RPT], base[RPT];
#pragma unroll
        for (int jr = 0; jr < RPT; jr++) {
            const int c = row_of(jr);
            const float mt_ = fmaxf(fmaxf(red_max[c], red_max[NR + c]), fmaxf(red_max[2 * NR + c], red_max[3 * NR + c]));
            const float m_new = fmaxf(m_i[jr], mt_);
            base[jr] = fmha_exp_base(m_new, 0);
            alpha[jr] = fast_exp2(m_i[jr] - base[jr]);
            m_i[jr] = m_new;
            l_i[jr] *= alpha[jr];
        }
        // Step 2d: P, the row sums, V's scale folded into P's columns, the row's P scale
        float pmax[RPT], svmax = 0.0f;
#pragma unroll
        for (int jr = 0; jr < RPT; jr++) pmax[jr] = 0.0f;
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int i = 0; i < NR / 2; i++) {
                int r, c;
                wgmma_acc_map(t, i, &r, &c);
                const int key = 64 * h + r, jr = jr_of(i);
                s[h][i] = fast_exp2(s[h][i] - base[jr]);
                l_i[jr] += s[h][i];
                const float v_scale = sv[key];
                if (!(p.faults & DEC_FAULT_V_SCALE_ON_O_ROWS)) s[h][i] *= v_scale; // FG17 variant: left for O
                pmax[jr] = fmaxf(pmax[jr], s[h][i]);
                svmax = fmaxf(svmax, v_scale);
            }
        svmax = warp_max_over_keys(quad_max(svmax));
        if (lane == 0) red_sv[w] = svmax;
#pragma unroll
        for (int jr = 0; jr < RPT; jr++) {
            pmax[jr] = warp_max_over_keys(pmax[jr]);
            if (lane < 4) red_p[w * NR + row_of(jr)] = pmax[jr];
        }
        consumers_sync<RING>();
        if (more) { // AHEAD: the tile's scales are read: tile j+1's (and the L2 prefetch ahead of it, --prefetch)
            scales_issue(p, next_row, sk, sv, threadIdx.x);
            int pf_lo, pf_hi;
            dec_prefetch_range(&p, j + 1, t0, t1, &pf_lo, &pf_hi);
            for (int q = pf_lo; q <= pf_hi; q++) prefetch_tile<D, DEC_SM90_THREADS>(p, table, hk, q * DEC_BN, end, t);
        } else if (cross) { // PS: the next item's first scales, and its second tile's entries (la was read above)
            scales_issue(p, next_row, sk, sv, threadIdx.x);
            if (nxt.t0 + 1 < nxt.t1)
                table_entries_load(p, p.block_table + (int64_t)nxt.b * p.max_pages,
                                   dec_tile_cursor(&p, (nxt.t0 + 1) * DEC_BN), (nxt.t0 + 1) * DEC_BN,
                                   dec_gather_end(&p, nxt.len), la);
            ahead_item = nxt_item;
        }
        svmax = fmaxf(fmaxf(red_sv[0], red_sv[1]), fmaxf(red_sv[2], red_sv[3]));
        float sp[RPT], inv_sp[RPT];
#pragma unroll
        for (int jr = 0; jr < RPT; jr++) {
            const int c = row_of(jr);
            const float pm = fmaxf(fmaxf(red_p[c], red_p[NR + c]), fmaxf(red_p[2 * NR + c], red_p[3 * NR + c]));
            sp[jr] = dec_p_scale(pm, svmax);
            inv_sp[jr] = __fdividef(1.0f, sp[jr]); // one reciprocal a row: no division's slow path per value
        }
        // P's codes, P [NR rows x 128 keys] K-major: one byte per value
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int i = 0; i < NR / 2; i++) {
                int r, c;
                wgmma_acc_map(t, i, &r, &c);
                const int jr = jr_of(i);
                smem_p[smem_tile_offset(&tp, c, 64 * h + r)] = (uint8_t)pack_e4m3x2(s[h][i] * inv_sp[jr], 0.0f);
            }
        // the correction, in the new unit sp: O *= alpha u / sp
#pragma unroll
        for (int jr = 0; jr < RPT; jr++) {
            alpha[jr] *= u_i[jr] * inv_sp[jr];
            u_i[jr] = sp[jr];
        }
#pragma unroll
        for (int dm = 0; dm < D / 64; dm++)
#pragma unroll
            for (int i = 0; i < NR / 2; i++) o[dm][i] *= alpha[jr_of(i)];

        // Step 2e: O^T += V_j^T P^T (both K-major e4m3); then K_j, Vs, Vt and P are free
        fence_proxy_async();
        consumers_sync<RING>();
        wgmma_fence();
#pragma unroll
        for (int dm = 0; dm < D / 64; dm++)
#pragma unroll
            for (int k = 0; k < DEC_BN; k += 32) {
                const uint64_t vdesc = smem_desc_add(dvt, dec_vt_step_offset(&tvt, &tv_mn, v_mn, 64 * dm, k));
                wgmma_m64nNk32_ss_e4m3<NR>(o[dm], vdesc, smem_tile_desc_sm90_k(&tp, dp, k), 1);
            }
        wgmma_commit();
        wgmma_wait<0>();
        if constexpr (RING > 0) { // K_j, the scales and Vt_j are read (their MMAs waited for): the slot is free.
            // Every consumer thread arrives (racecheck does not carry the other threads' reads
            // through one thread's arrive after a barrier, and reported the refill as a race).
            if (!early) mbar_arrive(bars + 8u * dec_ring_empty_bar(RING, rs.slot));
            ring_advance(&rs);
        }
        consumers_sync<RING>();
    }

    // Step 3: epilogue: the row sums over every thread, O = u O_acc / l, LSE
#pragma unroll
    for (int jr = 0; jr < RPT; jr++) {
        const float part = warp_sum_over_keys(l_i[jr]);
        if (lane < 4) red_max[w * NR + row_of(jr)] = part;
    }
    consumers_sync<RING>();
    float fin[RPT];
#pragma unroll
    for (int jr = 0; jr < RPT; jr++) {
        const int c = row_of(jr);
        l_i[jr] = red_max[c] + red_max[NR + c] + red_max[2 * NR + c] + red_max[3 * NR + c];
        fin[jr] = l_i[jr] > 0.0f ? u_i[jr] / l_i[jr] : 0.0f; // no visible key: O = 0
        // FG17: a row factor of O (the last tile's scales; with the ring its slot is released but
        // never refilled: the load role has no tile left)
        if (p.faults & DEC_FAULT_V_SCALE_ON_O_ROWS) fin[jr] *= sv[c];
    }
    const bool split_out = p.splits > 1;
#pragma unroll
    for (int dm = 0; dm < D / 64; dm++)
#pragma unroll
        for (int i = 0; i < NR / 2; i++) {
            int r, c;
            wgmma_acc_map(t, i, &r, &c);
            const int jr = jr_of(i);
            if (m0 + c >= M) continue;
            const int64_t orow = (((int64_t)b * p.sq + qi[jr]) * p.hq + qh[jr]) * D + 64 * dm + r;
            const float x = o[dm][i] * fin[jr];
            if (split_out) p.o_part[(int64_t)split * p.b * p.sq * p.hq * D + orow] = x;
            else p.o[orow] = (uint16_t)(pack_bf16x2(x, 0.0f) & 0xFFFFu); // x in the low half
        }
    if (row_writer) {
#pragma unroll
        for (int jr = 0; jr < RPT; jr++) {
            if (m0 + row_of(jr) < M) store_lse(p, split_out, split, b, qh[jr], qi[jr], m_i[jr], l_i[jr]);
        }
    }
    landed += (uint32_t)(t1 - t0);
    if constexpr (TL) timeline_stamp(p, DEC_TL_EXIT);
    } // the walk's next item (PS)
    // Step 4: teardown: nothing to free (no TMEM; the barriers are not reused after the kernel)
#else
    (void)a;
#endif
}

// Many packed rows (more than 32: MQA, or GQA with a long Sq): the unswapped kernel, S = Q K^T with
// 64 packed rows as M in one warpgroup, the rows in the quads of a warp (steps as above, with the
// row reductions inside a quad). NG = 2 (--m64-groups 2): two warpgroups of 64 rows each share
// every K/V tile the first gathers (all 8 warps transpose it), so a tile is read once for 128
// packed rows instead of once per 64; each group has its own Q and P rows and its own softmax.
// KT: 0 the cp.async gather, 1 the TMA gather, 2 (AHEAD) the TMA gather with tile j+1's boxes and
// scales issued as soon as tile j has landed and V_j is transposed, into a second K buffer and
// scales (DEC_SMEM_K_NEXT; Vs is free by then), so they load under tile j's MMAs and softmax. The
// swapped kernel's AHEAD waits for its S MMAs to free the one K buffer; this kernel's S and P V
// take most of a tile, so it gives K a second buffer instead. With NG = 2 the first warpgroup issues
// the copies, as it gathers with KT = 1.
template <int D, int KT, int NG, bool TL = false>
static __global__ void __launch_bounds__(DEC_SM90_THREADS * NG, NG == 1 ? DEC_SM90_MIN_CTAS : 1)
    decode_kernel_m64(const __grid_constant__ dec_sm90_args a)
{
    constexpr bool AHEAD = KT == 2;
#if DEC_SM90_DEVICE
    const dec_params &p = a.p;
    if constexpr (TL) {
        timeline_stamp(p, DEC_TL_ENTRY);
        timeline_stamp(p, DEC_TL_SM);
    }
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    constexpr int BM = DEC_BM_SM90 * NG, NTH = DEC_SM90_THREADS * NG; // the CTA's packed rows, threads
    const smem_layout L = dec_smem_layout_make_k(BM, D, AHEAD);
    const smem_tile tq = dec_q_tile(BM, D), tk = dec_k_tile(D), tvt = dec_vt_tile(D), tp = dec_p_tile(BM);
    const smem_tile tv_mn = dec_v_mn_tile(D);
    uint8_t *smem_q = smem + L.tile[DEC_SMEM_Q];   // [BM x D] e4m3 K-major SW128: A of S = Q K^T (a group's 64 rows)
    uint8_t *smem_k = smem + L.tile[DEC_SMEM_K];   // [128 x D] e4m3 K-major SW128: B of S
    uint8_t *smem_vs = smem + L.tile[DEC_SMEM_VS]; // [128 kv x D] e4m3, V as gathered
    uint8_t *smem_vt = smem + L.tile[DEC_SMEM_VT]; // [D x 128 kv] e4m3 K-major SW128: B of O = P V
    uint8_t *smem_p = smem + L.tile[DEC_SMEM_P];   // [BM x 128 kv] e4m3 K-major SW128: A of O = P V (a group's 64 rows)
    float *sm_sq = (float *)(smem + L.tile[DEC_SMEM_SCALES]); // [BM] Q's row scales
    float *sk = sm_sq + BM, *sv = sk + DEC_BN;                // [128] each: the tile's K, V scales
    // AHEAD: the second K buffer and scales; tile t0 + q uses buffer q % 2
    uint8_t *smem_kn = smem + L.tile[DEC_SMEM_K_NEXT];
    float *skn = (float *)(smem_kn + tk.bytes), *svn = skn + DEC_BN;
    // the thread in its warpgroup, and the group (NG = 1: the CTA's thread, group 0, folded at compile time)
    const int t = NG == 1 ? (int)threadIdx.x : (int)(threadIdx.x % DEC_SM90_THREADS);
    const int g = NG == 1 ? 0 : (int)(threadIdx.x / DEC_SM90_THREADS);
    const int mtiles = dec_m_tiles(&p);
    const int mt = blockIdx.x % mtiles, split = blockIdx.x / mtiles, hk = blockIdx.y, b = blockIdx.z;
    const int len = p.seqlens[b], m0 = mt * BM + DEC_BM_SM90 * g, M = dec_rows(&p); // m0: this group's first row
    const int32_t *table = p.block_table + (int64_t)b * p.max_pages;
    const float scale_log2 = p.scale * DEC_LOG2E;
    int t0, t1;
    dec_split_tiles(&p, len, split, &t0, &t1);

    // The two packed rows this thread holds (acc registers with bit 1 of the index = 0 / 1)
    int rloc[2], nvis[2], qi[2], qh[2];
    m64_rows_of(p, t, m0, M, hk, len, rloc, nvis, qi, qh);
    if (t0 >= t1) { // an empty split (a short sequence): it saw no key
        m64_empty_split(p, t, m0, M, rloc, qi, qh, split, b);
        if constexpr (TL) timeline_stamp(p, DEC_TL_EXIT);
        return;
    }

    const int end = dec_gather_end(&p, len);
    const uint32_t kv_bar = smem_u32(smem + L.bars) + 8u * DEC_BAR_KV_FULL; // KT: the TMA gather's barrier
    if constexpr (KT > 0) {
        if (threadIdx.x == 0) {
            mbar_init(kv_bar, 1);
            mbar_fence_init();
        }
    }
    const bool issuer = NG == 1 || threadIdx.x < DEC_SM90_THREADS; // the warpgroup that issues the copies
    if constexpr (AHEAD) { // the first tile's copies go out before Q's quantisation
        __syncthreads();   // the barrier's init before warp 0's boxes complete on it
        if (issuer) tma_gather_tile<D>(a, table, hk, t0 * DEC_BN, end, smem_k, smem_vs, tk, sk, sv, kv_bar);
    }
    // Step 1: prologue: Q quantised per row, the CTA's BM rows by its 2 BM threads (its barrier also
    // orders the init before any use)
    quantise_q_rows<D, BM>(p, b, hk, mt * BM, smem_q, tq, sm_sq);
    __syncthreads();
    float rowfac[2];
    for (int hi = 0; hi < 2; hi++) rowfac[hi] = scale_log2 * sm_sq[DEC_BM_SM90 * g + rloc[hi]];

    float m_i[2] = {-INFINITY, -INFINITY}, l_i[2] = {0.0f, 0.0f}, u_i[2] = {1.0f, 1.0f};
    float o[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] = 0.0f;
    const bool v_mn = p.faults & DEC_FAULT_V_NOT_TRANSPOSED; // FG20: an MN-major V read as K-major
    // The MMAs' descriptors at K step 0, encoded once (as in the swapped kernel); AHEAD: K's in both buffers
    const uint64_t dq = smem_tile_desc_sm90(&tq, smem_u32(smem_q), DEC_BM_SM90 * g, 0); // this group's Q rows
    const uint64_t dk0 = smem_tile_desc_sm90(&tk, smem_u32(smem_k), 0, 0);
    const uint64_t dkn = AHEAD ? smem_tile_desc_sm90(&tk, smem_u32(smem_kn), 0, 0) : dk0;
    const uint64_t dp = smem_tile_desc_sm90(&tp, smem_u32(smem_p), DEC_BM_SM90 * g, 0); // and P rows
    const uint64_t dvt = v_mn ? smem_tile_desc_sm90(&tv_mn, smem_u32(smem_vt), 0, 0) : smem_tile_desc_sm90(&tvt, smem_u32(smem_vt), 0, 0);

    int64_t next_box = -1, next_row = -1; // AHEAD: tile j+1's box (warp 0's lanes) and scale row
    dec_table_ahead la;                   // AHEAD: the entries of tile j+1, loaded during tile j-1
    dec_table_pos cur = dec_tile_cursor(&p, (t0 + 1) * DEC_BN); // and the cursor of tile j+1
    if constexpr (AHEAD) {
        la.fb = dec_tok_part(&p, t * dec_kv_tma_box_rows(p.page) % DEC_BN);
        la.ft = dec_tok_part(&p, t);
        if (issuer && t0 + 1 < t1) table_entries_load(p, table, cur, (t0 + 1) * DEC_BN, end, la);
    }
    for (int j = t0; j < t1; j++) {
        const int kv0 = j * DEC_BN;
        const bool odd = AHEAD && ((j - t0) & 1); // AHEAD: this tile's K and scales in the second buffer
        const uint64_t dk = odd ? dkn : dk0;
        const float *skj = odd ? skn : sk, *svj = odd ? svn : sv;
        if constexpr (AHEAD) {
            // Steps 2a, 2a' of tile j+1 overlap tile j: its rows from the entries loaded a tile
            // before; tile j lands and V_j is transposed (Vs then free: every thread's proxy fence
            // and the barrier in kv_tile_land); then the boxes go into the other K buffer and Vs,
            // the scales into the other scale buffer. That K buffer and those scales were last read
            // by tile j-1's S MMAs (waited for) and softmax, both before tile j-1's last barrier.
            const bool more = issuer && j + 1 < t1;
            if (more) {
                rows_of_entries(p, cur, la, hk, next_box, next_row);
                cur = dec_tile_cursor_next(&p, cur);
                if (j + 2 < t1) table_entries_load(p, table, cur, kv0 + 2 * DEC_BN, end, la);
            }
            kv_tile_land<D, true, NTH>(p, kv0, end, smem_vs, smem_vt, tk, tv_mn, v_mn, kv_bar, (uint32_t)(j - t0) & 1u);
            if (more) {
                if (threadIdx.x < 32) tma_issue_boxes<D>(a, next_box, hk, odd ? smem_k : smem_kn, smem_vs, tk, kv_bar, threadIdx.x);
                scales_issue(p, next_row, odd ? sk : skn, odd ? sv : svn, threadIdx.x);
                int pf_lo, pf_hi;
                dec_prefetch_range(&p, j + 1, t0, t1, &pf_lo, &pf_hi);
                for (int q = pf_lo; q <= pf_hi; q++) prefetch_tile<D, DEC_SM90_THREADS>(p, table, hk, q * DEC_BN, end, t);
            }
        } else {
            // Steps 2a, 2a': K_j, V_j and their scales through the block table (tiles ahead
            // prefetched into L2 with --prefetch); V_j transposed
            int pf_lo, pf_hi;
            dec_prefetch_range(&p, j, t0, t1, &pf_lo, &pf_hi);
            kv_tile_in<D, (KT > 0), NTH>(a, table, hk, kv0, end, smem_k, smem_vs, smem_vt, tk, tv_mn, tvt, sk, sv, v_mn,
                                         pf_lo, pf_hi, kv_bar, (uint32_t)(j - t0) & 1u);
        }
        if constexpr (TL) {
            if (j == t0) timeline_stamp(p, DEC_TL_FIRST_TILE);
        }

        // Step 2b: S = Q K_j^T
        float s[DEC_BN / 2];
#pragma unroll
        for (int i = 0; i < DEC_BN / 2; i++) s[i] = 0.0f;
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < D; k += 32)
            wgmma_m64n128k32_ss_e4m3(s, smem_tile_desc_sm90_k(&tq, dq, k), smem_tile_desc_sm90_k(&tk, dk, k), k > 0);
        wgmma_commit();
        wgmma_wait<0>();

        // Steps 2c-2d, in the warps that hold a packed row (warp w holds rows 16w..16w+15, a thread
        // rows r and r + 8 of them): with GQA 8 x Sq 1 that is warp 0 alone, and only its first 8
        // rows, so the second half of its registers is skipped too. The other warps leave stale P
        // rows in SMEM; their O rows are never stored.
        const int w0 = m0 + 16 * (t / 32);
        if (w0 + 8 < M) softmax_tile<D, 2>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, skj, svj, smem_p, t, DEC_BM_SM90 * g);
        else if (w0 < M) softmax_tile<D, 1>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, skj, svj, smem_p, t, DEC_BM_SM90 * g);

        // Step 2e: O += P V_j (both K-major e4m3); then K_j, Vs, Vt and P are free
        fence_proxy_async();
        __syncthreads();
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < DEC_BN; k += 32) {
            wgmma_m64nNk32_ss_e4m3<D>(o, smem_tile_desc_sm90_k(&tp, dp, k), smem_desc_add(dvt, dec_vt_step_offset(&tvt, &tv_mn, v_mn, 0, k)), 1);
        }
        wgmma_commit();
        wgmma_wait<0>();
        __syncthreads();
    }

    // Step 3: epilogue: finish the row sums over the quad, O = u O_acc / l, LSE (FG17: the last
    // tile's V scales as row factors of O)
    m64_epilogue<D, true>(p, o, m_i, l_i, u_i, rloc, qi, qh, t, m0, M, split, b,
                    (AHEAD && ((t1 - 1 - t0) & 1) ? svn : sv) + DEC_BM_SM90 * g);
    if constexpr (TL) timeline_stamp(p, DEC_TL_EXIT);
    // Step 4: teardown: nothing to free (no TMEM; the barriers are not reused after the kernel)
#else
    (void)a;
#endif
}

// The packed rows a CTA takes: the swapped kernel's N, the smallest of 8, 16, 32 that holds the
// Hq/Hkv x Sq rows of one KV head; past 32, 64 rows of the unswapped kernel (the swapped one at
// N = 64 would hold 16 rows of state a thread and spill, and every m-tile re-reads K and V). The
// ring picks the pipelined instantiation (the swapped kernel's up to 32 rows, past them the two
// 64-row groups' decode_kernel_m64_ring: stage_d.c makes the ring take 128 rows a CTA there), kt
// the TMA gather's (stage_d.c allows it without the ring, and with the ring past 32 rows at 1: its
// load warps issue the boxes; 2, the next tile's boxes during this one: the swapped kernel's single
// buffer after S, the m64 kernels' second K buffer).
// tl (--timeline): the stamping twins of the default gathers only, the swapped and the one-group
// m64 kernels with the next tile's boxes ahead (kt 2); stage_d.c refuses the others.
template <int D, int NR>
static dec_sm90_kernel kernel_of(int ring, int kt, bool tl, int ov = 0, bool fr = false, bool ps = false)
{
    if (fr || ps) { // --fair, --persistent: the swapped kernel with the next tile's boxes ahead (stage_d.c's rules)
        if constexpr (NR < DEC_BM_SM90) {
            if (ps) return fr ? nullptr : decode_kernel_swapped<D, NR, 0, 2, false, false, true>; // (no --fair over the walk)
            return tl ? decode_kernel_swapped<D, NR, 0, 2, true, true> : decode_kernel_swapped<D, NR, 0, 2, false, true>;
        } else {
            return nullptr;
        }
    }
    if (tl) {
        if constexpr (NR == DEC_BM_SM90) return decode_kernel_m64<D, 2, 1, true>;
        else if constexpr (NR < DEC_BM_SM90) return decode_kernel_swapped<D, NR, 0, 2, true>;
        else return nullptr;
    }
    if constexpr (NR == 2 * DEC_BM_SM90) { // --m64-groups 2: two warpgroups of 64 rows on one K/V tile
        if (ring) return dec_m64_ring_kernel(D, ring, ov, kt); // past 32 rows: the two groups on a ring (decode_ring_sm90.cu)
        return kt == 2 ? decode_kernel_m64<D, 2, 2> : kt ? decode_kernel_m64<D, 1, 2> : decode_kernel_m64<D, 0, 2>;
    } else if constexpr (NR == DEC_BM_SM90) {
        (void)ring;
        return kt == 2 ? decode_kernel_m64<D, 2, 1> : kt ? decode_kernel_m64<D, 1, 1> : decode_kernel_m64<D, 0, 1>;
    } else {
        switch (ring) {
        case 2: return decode_kernel_swapped<D, NR, 2, 0>;
        case 3: return decode_kernel_swapped<D, NR, 3, 0>;
        case 4: return decode_kernel_swapped<D, NR, 4, 0>;
        default:
            return kt == 2 ? decode_kernel_swapped<D, NR, 0, 2>
                   : kt    ? decode_kernel_swapped<D, NR, 0, 1>
                           : decode_kernel_swapped<D, NR, 0, 0>;
        }
    }
}

// --kv-tma 1: K's and V's tensor maps (dec_kv_tma_box's view), through the project's checker and
// the driver. Encoded once per cache (the last one is kept, for the one host thread that launches):
// the timed launches then pay nothing. The kernels pass a box's first token as a 32-bit coordinate.
static int kv_tensor_maps(const dec_params &p, dec_sm90_args *a)
{
    static struct {
        const void *k, *v;
        int d, hkv, page, num_pages;
        CUtensorMap tk, tv;
    } last = {};
    if (last.k == p.k && last.v == p.v && last.d == p.d && last.hkv == p.hkv && last.page == p.page &&
        last.num_pages == p.num_pages) {
        a->tk = last.tk, a->tv = last.tv;
        return 0;
    }
    if ((int64_t)p.num_pages * p.page >= ((int64_t)1 << 31)) {
        fprintf(stderr, "stage D: the TMA gather addresses tokens with 32-bit coordinates: %d pages of %d tokens are "
                "too many\n", p.num_pages, p.page);
        return 1;
    }
    tmap_params m;
    memset(&m, 0, sizeof m);
    m.data_type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    m.rank = 3;
    m.global_dim[0] = (uint64_t)p.d;                        /* bytes of a token's row */
    m.global_dim[1] = (uint64_t)p.hkv;                      /* KV heads */
    m.global_dim[2] = (uint64_t)p.num_pages * (uint64_t)p.page; /* tokens of the whole cache */
    m.global_strides[0] = (uint64_t)p.d;                    /* the next head's row */
    m.global_strides[1] = (uint64_t)p.hkv * (uint64_t)p.d;  /* the next token's */
    m.box_dim[0] = (uint32_t)(p.d > 128 ? 128 : p.d);      /* one 128-byte K block (the SW128 span) */
    m.box_dim[1] = 1;
    m.box_dim[2] = (uint32_t)dec_kv_tma_box_rows(p.page);
    for (int i = 0; i < 5; i++) m.element_strides[i] = 1;
    m.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
    m.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    m.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    m.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    char err[320];
    if (tmap_encode(&m, (void *)p.k, 9, &a->tk, err, sizeof err) ||
        tmap_encode(&m, (void *)p.v, 9, &a->tv, err, sizeof err)) {
        fprintf(stderr, "stage D: the TMA gather's tensor map: %s\n", err);
        return 1;
    }
    last.k = p.k, last.v = p.v, last.d = p.d, last.hkv = p.hkv, last.page = p.page, last.num_pages = p.num_pages;
    last.tk = a->tk, last.tv = a->tv;
    return 0;
}

template <int NR> static int occupancy_rows(int d, int ring, int kt, bool fr, bool ps = false);

// A device counter for the life of the process, zeroed once and never reset: launches run one after
// another on one device, each to its end, and each reads the counter from the base the launches
// before it left (--fair's issued tiles, --persistent's claims).
static int process_counter(unsigned long long **ctr)
{
    if (!*ctr) {
        CUDA_CHECK(cudaMalloc(ctr, sizeof **ctr));
        CUDA_CHECK(cudaMemset(*ctr, 0, sizeof **ctr));
    }
    return 0;
}

template <int NR>
static int launch_rows(const dec_params &p)
{
    const uint32_t smem = dec_smem_layout_of(NR, p.d, p.ring, p.kv_tma).bytes;
    dec_sm90_args a;
    memset(&a, 0, sizeof a);
    a.p = p;
    if (p.kv_tma && kv_tensor_maps(p, &a)) return 1;
    // --fair's tiles and --persistent's claims (dec_walk_item: a launch moves it by its items), each
    // on its own process_counter; each launch starts where the last one's ended
    static unsigned long long *fair_ctr = nullptr, fair_next = 0, *walk_ctr = nullptr, walk_next = 0;
    if (p.fair) {
        if (process_counter(&fair_ctr)) return 1;
        a.p.fair_ctr = fair_ctr;
        a.p.fair_base = fair_next;
    }
    if (p.persistent) {
        if (process_counter(&walk_ctr)) return 1;
        a.p.walk_ctr = walk_ctr;
        a.p.walk_base = walk_next;
    }
    return dispatch_head_dim<64, 128, 256>(p.d, [&](auto D) {
        const int ring = NR == DEC_BM_SM90 ? 0 : p.ring; // one 64-row group has no ring (stage_d.c: --ring takes two)
        const dec_sm90_kernel k =
            kernel_of<decltype(D)::value, NR>(ring, p.kv_tma, p.timeline != nullptr, p.overlap, p.fair > 0, p.persistent);
        if (!k) {
            if (p.fair || p.persistent)
                fprintf(stderr, "stage D: --fair / --persistent: no kernel for %d packed rows a CTA (stage_d.c's rules)\n", NR);
            else if (p.timeline) fprintf(stderr, "stage D: --timeline: no stamping kernel for %d packed rows a CTA\n", NR);
            else fprintf(stderr, "stage D: no sm90 kernel for %d packed rows a CTA at D = %d with --ring %d\n", NR, p.d, ring);
            return 1;
        }
        grid3 g = dec_grid(&p);
        if (p.persistent) { // one CTA a resident slot, walking the items (the SMs and the occupancy read once a kernel)
            static dec_sm90_kernel asked = nullptr;
            static int slots = 0;
            if (asked != k) {
                int dev = 0, sms = 0;
                if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
                    fprintf(stderr, "stage D: --persistent: the SM count: %s\n", cudaGetErrorString(cudaGetLastError()));
                    return 1;
                }
                const int per_sm = occupancy_rows<NR>(p.d, ring, p.kv_tma, false, true); // the walking twin's own (no --fair with it)
                if (sms * per_sm < 1) { // (occupancy_rows printed a failed query)
                    fprintf(stderr, "stage D: --persistent: no CTA of this kernel fits an SM (%d SMs, %d CTAs an SM)\n", sms, per_sm);
                    return 1;
                }
                asked = k, slots = sms * per_sm;
            }
            const long long items = (long long)g.x * g.y * g.z;
            g.x = (unsigned)(items < slots ? items : slots);
            g.y = g.z = 1u;
        }
        const int rc = launch_kernel(k, g, dec_sm90_block(NR, ring), smem, a);
        if (rc == 0 && p.fair) fair_next += p.fair_total; // every CTA counts its tiles: the next launch starts past them
        if (rc == 0 && p.persistent) walk_next += (unsigned long long)dec_items(&p); // every item claimed once, and each CTA's last claim
        return rc;
    });
}

extern "C" int stage_d_sm90_launch(const void *params)
{
    const dec_params &p = *(const dec_params *)params;
    int rc;
    switch (p.bm) {
    case 8: rc = launch_rows<8>(p); break;
    case 16: rc = launch_rows<16>(p); break;
    case 32: rc = launch_rows<32>(p); break;
    case 64: rc = launch_rows<64>(p); break;
    case 128: rc = launch_rows<128>(p); break;
    default: fprintf(stderr, "stage D: %d packed rows per CTA has no sm90 kernel (8, 16, 32, 64, 128)\n", p.bm); return 1;
    }
    return rc ? rc : (p.splits > 1 ? stage_d_merge_launch(&p) : 0);
}

template <int NR>
static int occupancy_rows(int d, int ring, int kt, bool fr, bool ps)
{
    const uint32_t smem = dec_smem_layout_of(NR, d, ring, kt).bytes;
    return dispatch_head_dim<64, 128, 256>(d, [&](auto D) {
        dec_sm90_kernel k = kernel_of<decltype(D)::value, NR>(ring, kt, false, 0, fr, ps); // the --fair / --persistent twins hold more registers
        if (!k) return 0; // no kernel for this ring at this D (stage_d.c refuses it before)
        int n = 0;
        if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, dec_sm90_block(NR, ring), smem) != cudaSuccess) {
            fprintf(stderr, "stage D: the occupancy query failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            return 0;
        }
        return n;
    });
}

extern "C" int stage_d_sm90_ctas_per_sm(int d, int rows, int ring, int kv_tma, int fair)
{
    switch (rows) {
    case 8: return occupancy_rows<8>(d, ring, kv_tma, fair != 0);
    case 16: return occupancy_rows<16>(d, ring, kv_tma, fair != 0);
    case 32: return occupancy_rows<32>(d, ring, kv_tma, fair != 0);
    case 128: return occupancy_rows<128>(d, ring, kv_tma, fair != 0);
    default: return occupancy_rows<64>(d, 0, kv_tma, false);
    }
}
