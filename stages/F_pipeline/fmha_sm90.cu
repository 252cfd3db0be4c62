// FMHA, one milestone at a time
//   A  A_qk              S = Q K^T on the tensor cores: SMEM canonical layouts, descriptors, TMEM
//   B  B_pv              O = P V with identity softmax: P in TMEM, V MN-major, the accumulate flag
//   C  C_online_softmax  full attention: online softmax, rescale, LSE, masks, multi-head grid
//   D  D_fp8_paged       FP8 paged KV cache with per-token scales, decode, split-KV
//   E  E_tma             TMA tensor maps and expect_tx replace thread loads
//   F  F_pipeline        K/V ring, warp specialisation, MMA/softmax overlap
//
// Stage F, Hopper port (sm_90a): FlashAttention-3's structure.
//
// Key extensions over stage E:
//   1. the K/V ring (--ring R): R slots for K and R for V, each with a full and an empty mbarrier;
//      the producer and each consumer walk it with one {slot, phase} state (attn/ring.h), so the
//      loads of tiles j+1 .. j+R-1 are in flight while tile j is computed
//   2. warp specialisation (--ws 1): warpgroup 0 is the producer; one thread issues every TMA
//      copy, and the group gives its registers back (setmaxnreg.dec 40) to the two consumer
//      warpgroups (setmaxnreg.inc 232), 64 query rows each (176-key tiles: 24 / 240; three
//      groups: 24 / 160, item 6).
//      --ws 0: consumer thread 0 produces between its own MMAs, as in stage E
//   3. a slot is released only after the wgmma that reads it has completed: each consumer warp
//      arrives on the slot's empty barrier after wgmma.wait_group (FG23: before it, the producer
//      refills the slot under the MMA)
//   4. inter-warpgroup ping-pong (--pingpong 1): two named barriers hand the tensor cores from
//      one consumer warpgroup to the other, so one's softmax runs under the other's GEMMs
//   5. intra-warpgroup overlap (--overlap 1): iteration j issues S_j = Q K_j^T and then
//      O += P_{j-1} V_{j-1}, and runs the softmax of tile j while that P V is in flight; O is
//      rescaled by alpha_{j-1} just before the P V that follows it
//   6. three consumer warpgroups at D = 64 (--consumers 3, template NC = 3): a 192-row query tile
//      (p.pipe.rows), 512 threads, registers 24 / 160, the ping-pong's turn going round three
//      groups; more warps to hide the softmax's latency and more MMA work per K/V tile fetched
//   7. the issue path kept short: every wgmma descriptor is encoded once, outside the loop, and
//      moved to its K step by one add (smem_tile_desc_sm90_k); the producer thread waits with a
//      suspend-time hint instead of spinning beside the consumer warps on its scheduler
//   8. --cluster 2 (template CL = 2): the CTAs of query tiles 2k and 2k + 1 form a cluster; each
//      producer copies half of every K/V tile's boxes, multicast into both CTAs' slot, and every
//      consumer warp releases a slot on both CTAs' empty barriers (produce, release)
//
// Math: as in stage C (FlashAttention-2, log2 domain, m_i, l_i, alpha, O / l_i, LSE). With causal
// the CTAs take the query tiles longest first, across the heads of an L2 section (cta_tile).
// Operands and layouts (fmha.h): Q, K slots K-major SW128, V slots MN-major SW128 in SMEM (stage
// E's tiles); S and O in registers; P re-viewed in registers as the wgmma A operand.
//
// Steps (the same labels as fmha_sm100.cu):
//   1   prologue: thread 0 initialises q_full, k_full[s], v_full[s] (1 arrive.expect_tx each),
//       k_empty[s], v_empty[s] (4 x NC consumer warps); CTA barrier; the producer issues Q and the
//       first R tiles of K and V; the consumers wait q_full
//   2a  producer, per tile j: wait k_empty[slot] (empty parity), issue K_j -> k_full[slot]; the
//       same for V_j; advance its ring state
//   2b  consumer: wait k_full[slot]; [ping-pong: wait for the turn]; S_j = Q K_j^T (D/16 wgmma
//       m64nBck16 SS, Bc the keys of a tile: 128, or 64 / 176); [overlap: then O += P_{j-1} V_{j-1}, O having been rescaled by alpha_{j-1}
//       at the end of tile j-1]; [ping-pong: hand the turn over]; wait for S_j; each warp arrives
//       on k_empty[slot] (overlap with the producer group: after the first exponentials of 2c)
//   2c  the mask (only on a tile some row sees in part); row max of the raw scores over the quad;
//       m_new, alpha, P = exp2(s x scale log2 e - m) by one FFMA and one MUFU.EX2, l_i
//   2d  overlap 0: O *= alpha_j
//   2e  wait v_full[slot]; overlap 0: O += P_j V_j (Bc/16 wgmma RS), wait, arrive v_empty[slot];
//       overlap 1: after FMHA_F_EXP_BEFORE_PV of the exponentials, wait for P_{j-1} V_{j-1};
//       then O *= alpha_j together with the other exponentials; arrive v_empty of its slot;
//       P_j into registers
//   3   epilogue: (overlap 1: the last P V); l_i over the quad; O / l_i -> bf16 -> SMEM (the Q
//       tile) -> TMA store; wait for the store to read SMEM (the persistent kernel: during the
//       next tile's first S, settle_store); LSE
//   4   teardown: nothing to free (no TMEM on Hopper)
// setmaxnreg allows no calls in the kernel: the watchdog's cold path inline (device/watchdog.cuh)
#define FMHA_WD_FIRE_INLINE 1
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
#include "device/cluster.cuh"
#include "device/fast_exp2.cuh"
#include "device/mbarrier.cuh"
#include "device/smem.cuh"
#include "device/tma.cuh"
#include "device/tma_tile.cuh"
#include "sm90/warpgroup.cuh"
#include "sm90/wgmma.cuh"
#define FMHA_SM90_DEVICE 1
#else
#define FMHA_SM90_DEVICE 0
#endif

// Watchdog site ids of the waits: the barrier a deadlock report names.
enum { SITE_Q_FULL = 1, SITE_K_FULL, SITE_V_FULL, SITE_K_EMPTY, SITE_V_EMPTY, SITE_Q_EMPTY };

// The register splits (FMHA_F_PRODUCER_REGS / FMHA_F_CONSUMER_REGS, the _176 and _3 ones) and the ping-pong's turn barriers (FMHA_F_TURN_BAR,
// FMHA_F_TURN_THREADS) are fmha.h's: `explain ring` prints them from there.

#if FMHA_SM90_DEVICE
// What every role of one CTA needs: the SMEM tiles and barriers, the coordinates. Slot s of the
// ring is found by arithmetic (base + s x stride), never by an array indexed at run time: that
// would put the array in local memory.
template <int D>
struct cta_ctx {
    fmha_params p;
    smem_tile tq, tk, tv;
    uint8_t *q;
    uint32_t k0, v0, slot_bytes; // SMEM addresses of slot 0's K and V tiles (slot s: + s x the tile size)
    uint32_t bar0;               // SMEM address of barrier 0
    uint64_t dq, dk0, dv0;       // wgmma descriptors at K step 0: this group's 64 Q rows, slot 0's K and V
    int q0, h, b, ntiles;
    uint32_t probes;
    // slot s's descriptors: the slots lie slot_bytes apart, and a descriptor is linear in its start
    __device__ __forceinline__ uint64_t dk(int s) const { return smem_desc_add(dk0, (uint32_t)s * slot_bytes); }
    __device__ __forceinline__ uint64_t dv(int s) const { return smem_desc_add(dv0, (uint32_t)s * slot_bytes); }
    __device__ __forceinline__ uint32_t bar(int i) const { return bar0 + 8u * (uint32_t)i; }
    __device__ __forceinline__ uint32_t k_full(int s) const { return bar(FMHA_F_BAR_K_FULL + s); }
    __device__ __forceinline__ uint32_t v_full(int s) const { return bar(FMHA_F_BAR_V_FULL + s); }
    __device__ __forceinline__ uint32_t k_empty(int s) const { return bar(FMHA_F_BAR_K_EMPTY + s); }
    __device__ __forceinline__ uint32_t v_empty(int s) const { return bar(FMHA_F_BAR_V_EMPTY + s); }
};

// The query tile a one-tile CTA computes: its place in fmha_tile_of's list is its linear block
// index, the order in which the GPU starts CTAs. With causal, query tile x visits about x + 1 KV
// tiles: the list puts the longest first (across the heads of an L2 section), so the short ones
// fill the last wave, instead of a few long ones running on alone at the end. (p.pipe.rows is the
// CTA's 64 x NC rows: fmha_grid's tiles are the kernel's.)
template <int NC>
__device__ __forceinline__ fmha_tile cta_tile(const fmha_params &p)
{
    return fmha_tile_of(&p, (int)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)));
}

// --persistent 1: the tile scheduler. The producer thread takes the next tile of fmha_tile_of's
// list (the order the GPU would start the one-tile CTAs: a head's query tiles together, longest
// first with causal) from one counter the whole grid shares, so a CTA that drew short tiles
// simply draws more. The counter is never reset: each launch's tiles are tile_base + 0 .. n - 1,
// and every CTA ends on one draw past them, so the host moves tile_base by n + grid per launch.
__device__ __forceinline__ int next_tile(const fmha_params &p)
{
    return (int)(atomicAdd(p.pipe.tile_counter, 1u) - p.pipe.tile_base);
}
__device__ __forceinline__ void put_tile_word(uint32_t word, int t)
{
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(word), "r"(t) : "memory");
}
__device__ __forceinline__ int get_tile_word(uint32_t word)
{
    int t;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(t) : "r"(word) : "memory");
    return t;
}

// The producer's view of the CTA: the ring's SMEM and barriers and where its tiles come from;
// little enough to live in the producer group's 40 registers (the whole fmha_params would not).
template <int D>
struct ring_ctx {
    const fmha_tma_args *a;
    uint32_t k0, v0, slot_bytes, bar0;
    int hk_k, hk_v, b;
    int kv_box5; // the maps' K and V boxes: one 5-D box a tile (host/fmha_tmaps.c), or D / 64 4-D ones
    unsigned faults;
    fmha_watchdog *wd;
    uint32_t probes;
    __device__ __forceinline__ uint32_t bar(int i) const { return bar0 + 8u * (uint32_t)i; }
};

// Step 2a: the producer's next K (or V) tile: wait for its slot to be empty, then the copy. K and
// V walk the ring with states of their own: with --ws 0 the consumer thread that produces refills
// K's slot after S and V's after P V, at different times.
// The producer warpgroup's thread (SLEEP) waits with a suspend-time hint: it has nothing else to
// do, and a spinning waiter takes issue slots from the consumer warps on its scheduler. With
// --ws 0 the producing consumer thread keeps the plain probe.
// CL = 2 (--cluster 2): the two CTAs of a cluster hold neighbouring query tiles of one head, so
// they read the same K and V. Each CTA's producer announces the whole tile on its own full barrier
// but copies only every other box (column block cb with cb % 2 == its rank), multicast into both
// CTAs' slot: the peer's half lands on this CTA's barrier too. Its empty wait counts both CTAs'
// consumer warps (the slot it refills is the peer's as well).
template <int D, int BN, bool SLEEP, int CL = 1>
__device__ __forceinline__ void produce(const ring_ctx<D> &c, ring_state &s, int j, bool is_v)
{
    const int slot = s.slot;
    const uint32_t empty = c.bar((is_v ? FMHA_F_BAR_V_EMPTY : FMHA_F_BAR_K_EMPTY) + slot);
    const uint32_t full = c.bar((is_v ? FMHA_F_BAR_V_FULL : FMHA_F_BAR_K_FULL) + slot);
    const uint32_t site = is_v ? SITE_V_EMPTY : SITE_K_EMPTY, parity = fmha_f_empty_parity(&s, c.faults);
    if constexpr (SLEEP) mbar_wait_budget_sleep(empty, parity, c.wd, site, c.probes);
    else mbar_wait_budget(empty, parity, c.wd, site, c.probes);
    mbar_arrive_expect_tx(full, fmha_tile_tx_bytes(D, BN));
    const uint32_t tile = (is_v ? c.v0 : c.k0) + (uint32_t)slot * c.slot_bytes;
    if constexpr (CL == 2) {
        const smem_tile t = is_v ? fmha_v_tile_cols(D, BN) : fmha_k_tile_cols(D, BN);
        const uint32_t rank = cluster_ctarank();
#pragma unroll
        for (int cb = 0; cb < D / FMHA_BOX_COLS; cb++)
            if ((uint32_t)(cb & 1) == rank)
                tma_load_4d_multicast(tile + tma_tile_box_offset(t, cb), is_v ? &c.a->v : &c.a->k, full, FMHA_BOX_COLS * cb,
                                      j * BN, is_v ? c.hk_v : c.hk_k, c.b, (uint16_t)0x3);
    } else if (c.kv_box5) tma_load_5d(tile, is_v ? &c.a->v : &c.a->k, full, 0, j * BN, 0, is_v ? c.hk_v : c.hk_k, c.b);
    else if (is_v) tma_load_tile<D>(tile, fmha_v_tile_cols(D, BN), &c.a->v, full, j * BN, c.hk_v, c.b);
    else tma_load_tile<D>(tile, fmha_k_tile_cols(D, BN), &c.a->k, full, j * BN, c.hk_k, c.b);
    fmha_f_ring_advance(&s, c.faults);
}

template <int D, int BN, int NC, bool FAULTS, bool PERSIST>
__device__ __forceinline__ ring_ctx<D> make_ring_ctx(const fmha_tma_args &a, const fmha_params &p, uint8_t *smem, int h, int b)
{
    const smem_layout L = fmha_f_smem_layout_make_kv(D, p.pipe.ring, 64 * NC, PERSIST ? 2 : 1, BN);
    ring_ctx<D> r;
    r.a = &a;
    r.k0 = smem_u32(smem + L.tile[FMHA_F_SMEM_K]);
    r.v0 = smem_u32(smem + L.tile[FMHA_F_SMEM_V]);
    r.slot_bytes = fmha_k_tile_cols(D, BN).bytes; // K and V tiles are the same size, placed back to back
    r.bar0 = smem_u32(smem + L.bars);
    r.hk_k = fmha_tma_kv_head(&p, h, 0);
    r.hk_v = fmha_tma_kv_head(&p, h, 1);
    r.b = b;
    r.kv_box5 = p.pipe.kv_box5;
    r.faults = FAULTS ? p.faults : 0u;
    r.wd = p.wd;
    r.probes = r.faults ? FMHA_FAULT_WAIT_PROBES : FMHA_MBAR_WAIT_PROBES;
    return r;
}

// The producer group's whole life with warp specialisation: registers back, then one thread loads
// Q and keeps the ring full. It reads the parameters from parameter memory, after the dec. With
// --persistent 1 it walks the CTA's query tiles: tile i's Q goes to buffer i % 2 once the
// consumers have released that buffer (their tile i - 2's O has left it), and the ring runs on
// from one tile to the next, so the next tile's Q and first K/V land under this tile's last ones.
template <int D, int BN, int NC, bool FAULTS, bool PERSIST, int CL>
__device__ __forceinline__ void producer_group(const fmha_tma_args &a, uint8_t *smem)
{
    wg_setmaxnreg_dec<NC == 3 ? FMHA_F_PRODUCER_REGS_3 : FMHA_F_SM90_PRODUCER_REGS_BN(BN)>();
    if (threadIdx.x != 0) return;
    const fmha_params &p = a.p;
    const smem_layout L = fmha_f_smem_layout_make_kv(D, p.pipe.ring, 64 * NC, PERSIST ? 2 : 1, BN);
    ring_state pk = ring_make(p.pipe.ring), pv = ring_make(p.pipe.ring);
    const int n = fmha_tile_count(&p);
    for (int it = 0;; it++) {
        const int qb = PERSIST ? (it & 1) : 0;
        const uint32_t bar0 = smem_u32(smem + L.bars);
        if (PERSIST && it >= 2) // the buffer's previous tile (it - 2) released by every consumer warp
            mbar_wait_budget_sleep(bar0 + 8u * (FMHA_F_BAR_SM90_Q_EMPTY + qb), (uint32_t)((it >> 1) - 1) & 1u, p.wd,
                                   SITE_Q_EMPTY, FAULTS && p.faults ? FMHA_FAULT_WAIT_PROBES : FMHA_MBAR_WAIT_PROBES);
        fmha_tile tl;
        if constexpr (PERSIST) {
            const int t = next_tile(p);
            const bool none = (unsigned)t >= (unsigned)n; // past the list (or, with a counter that
                                                         // fell behind its base, before it): no tile
            const uint32_t word = bar0 + 8u * (FMHA_F_SM90_TILE_WORD + qb);
            put_tile_word(word, none ? -1 : t); // published by the full barrier's arrive below
            if (none) { // no tile left: the consumers wake on the buffer, read -1 and finish
                mbar_arrive(bar0 + 8u * (qb ? FMHA_F_BAR_SM90_Q1_FULL : FMHA_F_BAR_Q_FULL));
                return;
            }
            tl = fmha_tile_of(&p, t);
        } else {
            tl = cta_tile<NC>(p);
        }
        const ring_ctx<D> c = make_ring_ctx<D, BN, NC, FAULTS, PERSIST>(a, p, smem, tl.h, tl.b);
        const uint32_t q_full = c.bar(qb ? FMHA_F_BAR_SM90_Q1_FULL : FMHA_F_BAR_Q_FULL);
        mbar_arrive_expect_tx(q_full, fmha_tile_tx_bytes(D, 64 * NC)); // one box of 64 * NC rows a column block
        tma_load_tile<D>(smem_u32(smem + L.tile[qb ? FMHA_F_SMEM_Q1 : FMHA_F_SMEM_Q]), fmha_q_tile_rows(D, 64 * NC), &a.q,
                         q_full, tl.q0, tl.h, tl.b);
        const int ntiles = fmha_kv_tiles_bn(&p, tl.q0, 64 * NC, BN);
        for (int j = 0; j < ntiles; j++) {
            produce<D, BN, true, CL>(c, pk, j, false);
            produce<D, BN, true, CL>(c, pv, j, true);
        }
        if constexpr (!PERSIST) return;
    }
}

// A consumer warp's release of a slot: lane 0 arrives for the warp (the barrier counts 4 x NC warps).
// CL = 2 (--cluster 2): also on the peer CTA's barrier, whose producer refills this CTA's slot too
// (the barriers count both CTAs' warps; arriving on this CTA's alone, both producers would wait for
// ever). The peer's rank is read where it is needed: kept live across the loop it would cost the
// consumers a register they do not have.
template <int CL>
__device__ __forceinline__ void arrive_slot(uint32_t bar)
{
    mbar_arrive(bar);
    if constexpr (CL == 2) mbar_arrive_cluster(bar, cluster_ctarank() ^ 1u);
}
template <int CL = 1>
__device__ __forceinline__ void release(uint32_t bar)
{
    __syncwarp();
    if (threadIdx.x % 32 == 0) arrive_slot<CL>(bar);
}
// The same, made to wait for a value: `after` (a row sum of exponentials, never negative) decides
// nothing, since !(after < 0) is always true, but the arrive now depends on it, so the compiler
// computes those exponentials before the arrive, and the P V wait that follows the arrive stays
// behind them even where register pressure would sink them below it.
template <int CL = 1>
__device__ __forceinline__ void release_after(uint32_t bar, float after)
{
    __syncwarp();
    if (threadIdx.x % 32 == 0 && !(after < 0.0f)) arrive_slot<CL>(bar);
}

// A descriptor whose high word (the layout half: stride and swizzle, a constant) ptxas can no
// longer see, because it passes through a shuffle (lane 0's is every lane's). Seeing the constant,
// ptxas moves Q's descriptor to each of S's K steps with three uniform instructions (add to the
// low word, move the constant in, add the carry to it); not seeing it, ptxas encodes the K steps'
// Q descriptors once, outside the KV loop, each beside its wgmma's K descriptor, and one 64-bit
// add a step is left (K's): 22 fewer instructions a consumer warp and KV tile at D = 128. Measured
// on the H200 (notes/stage-f-perf.md): +0.3-0.4% at D 128, -0.4% at D 64; at D 256 the 16
// registers those descriptors take cost spills. So D = 128 only.
__device__ __forceinline__ uint64_t desc_hi_opaque(uint64_t d)
{
    const uint32_t hi = __shfl_sync(0xFFFFFFFFu, (uint32_t)(d >> 32), 0);
    return ((uint64_t)hi << 32) | (uint32_t)d;
}

// The consumer's running state: its two rows per thread, the softmax statistics, O, P.
template <int D>
struct consumer_state {
    int row[2];
    float m_i[2], l_i[2];
    float o[D / 2];
};

// Step 2c, first half: mask S, the row max over the quad, m_new, alpha, the exponent's base, l_i
// rescaled. `row0` is the warpgroup's first row: a tile every one of its rows sees whole
// (fmha_tile_unmasked: all but the tail tile, and with causal all but the tiles on and past the
// diagonal) skips the per-element mask (a branch the whole warpgroup takes the same way). The max
// is taken on the raw scores and scaled once per row (the scale is positive: the order is the
// same), so each score costs one FFMA and one MUFU.EX2 (fast_exp2) on its way to P, as in
// FlashAttention-3's softmax.
template <int D, int N>
__device__ __forceinline__ void softmax_max(const fmha_params &p, consumer_state<D> &st, float (&s)[N], int kv0,
                                            int row0, float scale_log2, float (&alpha)[2], float (&base)[2])
{
    const int t = threadIdx.x % 128;
    if (!fmha_tile_unmasked_bn(&p, row0, kv0, 2 * N)) { // N scores a thread: a tile of 2N keys
#pragma unroll
        for (int i = 0; i < N; i++) {
            int r, c;
            wgmma_acc_map(t, i, &r, &c);
            if (!fmha_visible(&p, st.row[(i >> 1) & 1], kv0 + c)) s[i] = -INFINITY;
        }
    }
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int i = 0; i < N; i++) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], s[i]);
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        mx[hi] = fmaxf(mx[hi], __shfl_xor_sync(0xFFFFFFFFu, mx[hi], 1));
        mx[hi] = fmaxf(mx[hi], __shfl_xor_sync(0xFFFFFFFFu, mx[hi], 2));
        // --rescale-th N: the max lags by up to N, so alpha is exactly 1 on most tiles (rescale_o)
        const float m_new = fmha_row_max_next(st.m_i[hi], mx[hi] * scale_log2, p.pipe.rescale_th);
        base[hi] = fmha_exp_base(m_new, p.faults);
        alpha[hi] = fast_exp2(st.m_i[hi] - base[hi]);
        st.m_i[hi] = m_new;
        st.l_i[hi] *= alpha[hi];
    }
}

// Step 2c, second half, for the scores [I0, I1) of this thread: P = exp2(s x scale log2(e) - base)
// in place, and this thread's part of the row sum (the quad is summed at the end). The overlap
// runs it in two parts around the wait for P_{j-1} V_{j-1}, so that O's rescale shares a basic
// block with the second part and ptxas interleaves the FMULs with the MUFU.EX2s.
template <int I0, int I1, int N>
__device__ __forceinline__ void softmax_exp(float (&s)[N], const float (&base)[2], float scale_log2, float (&l)[2])
{
#pragma unroll
    for (int i = I0; i < I1; i++) {
        const int hi = (i >> 1) & 1;
        s[i] = fast_exp2(fmaf(s[i], scale_log2, -base[hi]));
        l[hi] += s[i];
    }
}

// All of step 2c: the max, then every exponential.
template <int D, int N>
__device__ __forceinline__ void softmax_tile(const fmha_params &p, consumer_state<D> &st, float (&s)[N], int kv0,
                                             int row0, float scale_log2, float (&alpha)[2])
{
    float base[2];
    softmax_max<D>(p, st, s, kv0, row0, scale_log2, alpha, base);
    softmax_exp<0, N>(s, base, scale_log2, st.l_i);
}

// Step 2d: O *= alpha. VOTE: skipped by the whole warp when no row of it moved its max (alpha
// exactly 1: fast_exp2(0)); a warp-uniform branch, so the D / 2 FMULs leave the issue slots, not
// just the math. The branch also ends a basic block, and ptxas schedules within one: the overlap
// at D = 128 keeps its FMULs unconditional, in one block with the second half of the exponentials,
// where they fill the MUFU.EX2s' issue gaps; branching there took 11% of the instructions and
// added 4% to the cycles at Llama S 8k (notes/stage-f-perf.md). At D = 64 the vote comes after
// the exponentials, and D = 256's loop (no overlap) votes: 0.2-2.5% and 1-7% faster at a lag of 1.
template <int D, bool VOTE = true>
__device__ __forceinline__ void rescale_o(consumer_state<D> &st, const float (&alpha)[2])
{
    if constexpr (VOTE)
        if (!__any_sync(0xFFFFFFFFu, alpha[0] != 1.0f || alpha[1] != 1.0f)) return;
#pragma unroll
    for (int i = 0; i < D / 2; i++) st.o[i] *= alpha[(i >> 1) & 1];
}

// P (f32 in S's registers) -> the bf16 A operand of P V (the register layout wgmma RS reads).
template <int N>
__device__ __forceinline__ void pack_p(const float (&s)[N], uint32_t (&pa)[N / 8][4])
{
#pragma unroll
    for (int kk = 0; kk < N / 8; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++) pa[kk][r] = pack_bf16x2(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
}

template <int D, int N>
__device__ __forceinline__ void issue_s(const cta_ctx<D> &c, int slot, float (&s)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) s[i] = 0.0f; // (the first k-step overwrites it; ptxas allocates
                                             // D = 256 without serialising only with it)
    wgmma_fence();
    wgmma_m64nN_ss_bf16_over_k_desc<2 * N, D>(s, c.tq, c.dq, c.tk, c.dk(slot)); // S: 64 rows x 2N keys
    wgmma_commit();
}

template <int D, int KK>
__device__ __forceinline__ void issue_pv(const cta_ctx<D> &c, int slot, consumer_state<D> &st, const uint32_t (&pa)[KK][4])
{
    wgmma_fence_operand(st.o);
    wgmma_fence();
    const uint64_t dv = c.dv(slot);
#pragma unroll
    for (int kk = 0; kk < KK; kk++) // K steps of 16 keys
        wgmma_m64nNk16_rs_bf16<D, 1>(st.o, pa[kk], smem_tile_desc_sm90_k(&c.tv, dv, 16 * kk), 1);
    wgmma_commit();
}

// The ping-pong's turn: wait for it before issuing this group's GEMMs, hand it over to the next
// group (c + 1, the last group to group 0) after. The barrier ids are template arguments, so each
// group's call is spelled out.
template <bool PP, int NC>
__device__ __forceinline__ void turn_wait(int cwg)
{
    if constexpr (PP) {
        if (cwg == 0) named_bar_sync<FMHA_F_TURN_BAR>(FMHA_F_TURN_THREADS);
        else if constexpr (NC == 2) named_bar_sync<FMHA_F_TURN_BAR + 1>(FMHA_F_TURN_THREADS);
        else if (cwg == 1) named_bar_sync<FMHA_F_TURN_BAR + 1>(FMHA_F_TURN_THREADS);
        else named_bar_sync<FMHA_F_TURN_BAR + 2>(FMHA_F_TURN_THREADS);
    }
}
template <bool PP, int NC>
__device__ __forceinline__ void turn_pass(int cwg)
{
    if constexpr (PP) {
        if (cwg == 0) named_bar_arrive<FMHA_F_TURN_BAR + 1>(FMHA_F_TURN_THREADS);
        else if constexpr (NC == 2) named_bar_arrive<FMHA_F_TURN_BAR>(FMHA_F_TURN_THREADS);
        else if (cwg == 1) named_bar_arrive<FMHA_F_TURN_BAR + 2>(FMHA_F_TURN_THREADS);
        else named_bar_arrive<FMHA_F_TURN_BAR>(FMHA_F_TURN_THREADS);
    }
}
#endif

// FAULTS: the kernel a footgun run launches, with the --fault switches read at run time. The
// others have no fault checks at all (about 15 instructions per KV tile and consumer warp).
// CL = 2: the kernel of a cluster of two CTAs sharing their K/V copies (produce, release).
template <int D, int BN, bool WS, bool PP, bool OV, int NC, bool FAULTS, bool PERSIST, int CL>
static __global__ void __launch_bounds__(128 * (NC + (WS ? 1 : 0)), 1) fmha_kernel(const __grid_constant__ fmha_tma_args a)
{
    static_assert(NC == 2 || (NC == 3 && WS), "a third consumer group comes with the producer warpgroup");
    static_assert(!PERSIST || WS, "the persistent kernel's tiles are walked by the producer warpgroup");
    static_assert(CL == 1 || (CL == 2 && WS && !PERSIST), "a cluster pairs one-tile CTAs whose producer thread multicasts");
#if FMHA_SM90_DEVICE
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = smem_align_base(smem_raw, SMEM_TILE_ALIGN);
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // consumer group 0 .. NC - 1 (-1: the producer group), read from lane 0 so that the compiler
    // knows it is the same in the whole warp: Q's descriptor, which depends on it, then lives in
    // uniform registers, where the wgmma reads it, instead of being rebuilt before every MMA
    const int cwg = __shfl_sync(0xFFFFFFFFu, WS ? wg - 1 : wg, 0);

    // Step 1: prologue: the barriers (thread 0), then Q and the first R tiles
    if (threadIdx.x == 0) {
        const uint32_t bar0 = smem_u32(smem + fmha_f_smem_layout_make_kv(D, a.p.pipe.ring, 64 * NC, PERSIST ? 2 : 1, BN).bars);
        mbar_init(bar0 + 8u * FMHA_F_BAR_Q_FULL, 1);
        if constexpr (PERSIST) {
            mbar_init(bar0 + 8u * FMHA_F_BAR_SM90_Q1_FULL, 1);
            for (int qb = 0; qb < 2; qb++) mbar_init(bar0 + 8u * (FMHA_F_BAR_SM90_Q_EMPTY + qb), fmha_f_sm90_consumer_warps(NC));
        }
        for (int s = 0; s < a.p.pipe.ring; s++) {
            mbar_init(bar0 + 8u * (FMHA_F_BAR_K_FULL + s), 1);
            mbar_init(bar0 + 8u * (FMHA_F_BAR_V_FULL + s), 1);
            mbar_init(bar0 + 8u * (FMHA_F_BAR_K_EMPTY + s), CL * fmha_f_sm90_consumer_warps(NC)); // CL = 2: both CTAs' warps
            mbar_init(bar0 + 8u * (FMHA_F_BAR_V_EMPTY + s), CL * fmha_f_sm90_consumer_warps(NC));
        }
        mbar_fence_init();
    }
    __syncthreads();
    if constexpr (CL == 2) cluster_sync(); // the peer's barriers exist before anyone arrives or multicasts there
    if constexpr (WS) {
        if (wg == 0) { // the producer group: nothing of the consumers' state is live here
            producer_group<D, BN, NC, FAULTS, PERSIST, CL>(a, smem);
            if constexpr (CL == 2) { // with the consumers' final cluster_sync: no CTA exits while its
                __syncwarp();       // peer's consumers may still arrive on its barriers
                cluster_sync();
            }
            return;
        }
        wg_setmaxnreg_inc<NC == 3 ? FMHA_F_CONSUMER_REGS_3 : FMHA_F_SM90_CONSUMER_REGS_BN(BN)>();
    }

    // The consumers' copy of the parameters in registers (stage E: the maps' addresses keep `a` in
    // parameter memory, and every asm "memory" clobber would reload each field)
    cta_ctx<D> c;
    c.p = a.p;
    if constexpr (!FAULTS) c.p.faults = 0u; // a constant: every fault check folds away
    const fmha_params &p = c.p;
    c.probes = p.faults ? FMHA_FAULT_WAIT_PROBES : FMHA_MBAR_WAIT_PROBES; // a footgun run expects hangs
    const int ring = p.pipe.ring;
    const smem_layout L = fmha_f_smem_layout_make_kv(D, ring, 64 * NC, PERSIST ? 2 : 1, BN);
    c.tq = fmha_q_tile_rows(D, 64 * NC); c.tk = fmha_k_tile_cols(D, BN); c.tv = fmha_v_tile_cols(D, BN);
    c.k0 = smem_u32(smem + L.tile[FMHA_F_SMEM_K]);
    c.v0 = smem_u32(smem + L.tile[FMHA_F_SMEM_V]);
    c.slot_bytes = c.tk.bytes;
    c.bar0 = smem_u32(smem + L.bars);
    c.dk0 = smem_tile_desc_sm90(&c.tk, c.k0, 0, 0);
    c.dv0 = smem_tile_desc_sm90(&c.tv, c.v0, 0, 0);
    asm volatile("" : "+l"(c.dk0), "+l"(c.dv0)); // computed once: ptxas would otherwise re-encode both from the
                                                  // SMEM addresses on every tile (six uniform instructions each)
    const bool producer = !WS && threadIdx.x == 0; // ws 0: consumer thread 0 also produces
    ring_state pk = ring_make(ring), pv = ring_make(ring); // its places in the ring
    ring_ctx<D> rc;
    const float scale_log2 = p.scale * FMHA_LOG2E;
    const bool early = p.faults & FMHA_FAULT_EARLY_RELEASE; // FG23
    ring_state ks = ring_make(ring), vs = ring_make(ring);  // the consumer's places in the ring (on across tiles)
    uint32_t pa[BN / 16][4];                                // P (overlap: of the previous tile)
    static_assert(FMHA_F_EXP_BEFORE_PV <= BN / 2, "the overlap's first exponentials are some of a thread's BN / 2 scores");

    // The CTA's query tiles: one, or (--persistent 1) those the producer drew, each announced in
    // its Q buffer's tile word. The ping-pong needs to know in advance whether the tile has KV
    // tiles (the last group's last window then hands over to nobody); the persistent kernel runs
    // without it (stage_f.c), since nobody knows which drawn tile is a CTA's last.
    static_assert(!PERSIST || (WS && !PP), "the persistent kernel: the producer group draws tiles, no ping-pong");
    const bool has_work = fmha_kv_tiles_bn(&p, cta_tile<NC>(p).q0, 64 * NC, BN) > 0; // one-tile CTAs
    if constexpr (PP) {
        if (cwg == NC - 1 && has_work) named_bar_arrive<FMHA_F_TURN_BAR>(FMHA_F_TURN_THREADS); // group 0 takes the first turn
    }
    // The persistent kernel's O store overlaps the next tile: lane 0 of each consumer warp leaves
    // its store of tile it (from Q buffer qb's SMEM) in flight, and waits for it to have read the
    // SMEM, then releases the buffer to the producer, only after the next tile's first S (or at
    // the next epilogue, or at the end): the wait no longer stands between two tiles. pend_qb:
    // the buffer whose store is in flight (-1: none).
    int pend_qb = -1;
    auto settle_store = [&]() {
        if constexpr (PERSIST) {
            if (lane == 0 && pend_qb >= 0) {
                tma_store_wait_read<0>();                            // the SMEM read: the buffer may refill
                mbar_arrive(c.bar(FMHA_F_BAR_SM90_Q_EMPTY + pend_qb)); // the producer may load its next Q
            }
            pend_qb = -1;
        }
    };
    for (int it = 0;; it++) {
    const int qb = PERSIST ? (it & 1) : 0;  // the Q buffer of this tile
    const uint32_t q_full = c.bar(qb ? FMHA_F_BAR_SM90_Q1_FULL : FMHA_F_BAR_Q_FULL);
    fmha_tile tl;
    if constexpr (PERSIST) { // buffer qb's (it / 2)-th fill, and the tile it holds
        mbar_wait_budget(q_full, (uint32_t)(it >> 1) & 1u, p.wd, SITE_Q_FULL, c.probes);
        __syncwarp();
        // Lane 0 reads the word and hands it to its warp: the one thread that reads it is the one
        // that later releases the buffer on its empty barrier, so the producer's next write is
        // ordered after every read by that arrive (racecheck does not carry the other lanes'
        // reads through lane 0's arrive, and reported all 32 as racing with the write).
        int tt = lane == 0 ? get_tile_word(c.bar(FMHA_F_SM90_TILE_WORD + qb)) : 0;
        tt = __shfl_sync(0xFFFFFFFFu, tt, 0);
        if (tt < 0) break; // no tile left
        tl = fmha_tile_of(&p, tt);
    } else {
        tl = cta_tile<NC>(p);
    }
    const bool final = !PERSIST && has_work; // the CTA's last tile with a KV tile (ping-pong only)
    c.q = smem + L.tile[qb ? FMHA_F_SMEM_Q1 : FMHA_F_SMEM_Q];
    c.dq = smem_tile_desc_sm90(&c.tq, smem_u32(c.q), 64 * cwg, 0);
    if constexpr (D == 128) c.dq = desc_hi_opaque(c.dq);
    c.q0 = tl.q0; c.h = tl.h; c.b = tl.b;
    c.ntiles = fmha_kv_tiles_bn(&p, c.q0, 64 * NC, BN);
    int next_k = 0, next_v = 0; // ws 0's producing thread: its next tiles
    if (producer) {
        rc = make_ring_ctx<D, BN, NC, FAULTS, false>(a, p, smem, c.h, c.b);
        mbar_arrive_expect_tx(q_full, fmha_tile_tx_bytes(D, 64 * NC));
        tma_load_tile<D>(smem_u32(c.q), c.tq, &a.q, q_full, c.q0, c.h, c.b);
        for (; next_k < c.ntiles && next_k < ring; next_k++, next_v++) {
            produce<D, BN, false>(rc, pk, next_k, false);
            produce<D, BN, false>(rc, pv, next_v, true);
        }
    }
    if constexpr (!PERSIST) { // also before the epilogue reuses Q for O
        mbar_wait_budget(q_full, 0u, p.wd, SITE_Q_FULL, c.probes);
        __syncwarp();
    }

    consumer_state<D> st;
    {
        int r, col;
        wgmma_acc_map(t, 0, &r, &col);
        st.row[0] = c.q0 + 64 * cwg + r;
        st.row[1] = st.row[0] + 8;
    }
    st.m_i[0] = st.m_i[1] = -INFINITY;
    st.l_i[0] = st.l_i[1] = 0.0f;
#pragma unroll
    for (int i = 0; i < D / 2; i++) st.o[i] = 0.0f;
    const int row0 = c.q0 + 64 * cwg; // this consumer group's first row
    const int last = c.ntiles - 1;

    if constexpr (OV) {
        // The overlapped loop. Tile 0 comes first on its own (no P V before it), so that every
        // iteration of the loop has the same two wgmma groups in flight, and O is rescaled right
        // after the P V that wrote it has completed, never between two in-flight groups: ptxas
        // then keeps the wgmmas asynchronous instead of serialising them (C7514 / C7515)
        auto s_tile = [&](float (&s)[BN / 2], bool with_pv) {
            // Step 2b: K_j has landed; S_j = Q K_j^T, then (with_pv) O += P_{j-1} V_{j-1}
            const int kslot = ks.slot;
            mbar_wait_budget(c.k_full(kslot), ring_full_parity(&ks), p.wd, SITE_K_FULL, c.probes);
            __syncwarp();
            turn_wait<PP, NC>(cwg);
            issue_s<D>(c, kslot, s);
            if (early) release<CL>(c.k_empty(kslot)); // FG23: K's slot released while S_j still reads it
            if (with_pv) {
                mbar_wait_budget(c.v_full(vs.slot), ring_full_parity(&vs), p.wd, SITE_V_FULL, c.probes);
                __syncwarp();
                issue_pv<D>(c, vs.slot, st, pa);
                if (early) release<CL>(c.v_empty(vs.slot)); // FG23
                turn_pass<PP, NC>(cwg);
                wgmma_wait<1>(); // S_j done; P_{j-1} V_{j-1} may still run
            } else {
                turn_pass<PP, NC>(cwg);
                if constexpr (PERSIST) { // the previous tile's O store, while this tile's first S runs
                    settle_store();
                    __syncwarp(); // lane 0 went its own way: converge before .sync.aligned
                }
                wgmma_wait<0>();
            }
            wgmma_fence_operand(s);
            if (!early && !(WS && with_pv)) release<CL>(c.k_empty(kslot)); // WS: in the loop, after the first exponentials
            fmha_f_ring_advance(&ks, p.faults);
            if (!WS && producer && next_k < c.ntiles) produce<D, BN, false>(rc, pk, next_k++, false); // ws 0: refill behind
            if constexpr (!WS) __syncwarp(); // the producing lane went its own way: converge before .sync.aligned
        };
        auto pv_wait = [&]() { // Step 2e: P_{j-1} V_{j-1} has completed: O may be rescaled
            wgmma_wait<0>();
            wgmma_fence_operand(st.o);
        };
        auto pv_release = [&]() { // and its V slot is free
            if (!early) release<CL>(c.v_empty(vs.slot));
            fmha_f_ring_advance(&vs, p.faults);
            if (!WS && producer && next_v < c.ntiles) produce<D, BN, false>(rc, pv, next_v++, true);
            if constexpr (!WS) __syncwarp();
        };
        if (c.ntiles > 0) {
            float s[BN / 2], alpha[2];
            s_tile(s, false); // settles the previous tile's O store under its S
            softmax_tile<D>(p, st, s, 0, row0, scale_log2, alpha); // Step 2c
            rescale_o<D>(st, alpha);
            pack_p(s, pa);
        }
        for (int j = 1; j < c.ntiles; j++) {
            float s[BN / 2], alpha[2], base[2];
            const int kslot = ks.slot;
            s_tile(s, true);
            // Step 2c under P_{j-1} V_{j-1}: the max and the first exponentials, then the wait for
            // that P V, then O *= alpha_j (step 2d) in one block with the remaining exponentials.
            // ptxas moves a wgmma wait up to the start of its basic block, where it would hold the
            // whole softmax until P_{j-1} V_{j-1} is done (notes/stage-f-perf.md); K_j's release, a
            // branch, starts a new block after the first exponentials and keeps the wait there.
            // (--ws 0 releases K_j in s_tile: its producing thread refills the slot right there.)
            softmax_max<D>(p, st, s, j * BN, row0, scale_log2, alpha, base);
            softmax_exp<0, FMHA_F_EXP_BEFORE_PV>(s, base, scale_log2, st.l_i);
            if (WS && !early) release_after<CL>(c.k_empty(kslot), st.l_i[0] + st.l_i[1]);
            pv_wait();
            if constexpr (D <= 64) { // the exponentials, then O's rescale where a row of the warp moved its max
                softmax_exp<FMHA_F_EXP_BEFORE_PV, BN / 2>(s, base, scale_log2, st.l_i);
                rescale_o<D, true>(st, alpha);
            } else { // O's D / 2 FMULs in the exponentials' block, on every tile (rescale_o's comment)
                rescale_o<D, false>(st, alpha);
                softmax_exp<FMHA_F_EXP_BEFORE_PV, BN / 2>(s, base, scale_log2, st.l_i);
            }
            pv_release();
            pack_p(s, pa);
        }
        if (c.ntiles > 0) { // the last tile's P V
            mbar_wait_budget(c.v_full(vs.slot), ring_full_parity(&vs), p.wd, SITE_V_FULL, c.probes);
            __syncwarp();
            turn_wait<PP, NC>(cwg);
            issue_pv<D>(c, vs.slot, st, pa);
            if (PERSIST && early) release<CL>(c.v_empty(vs.slot)); // FG23
            if (!final || (NC == 2 ? cwg == 0 : cwg != NC - 1)) turn_pass<PP, NC>(cwg); // the last group's last window passes nothing: nobody would take it
            wgmma_wait<0>();
            wgmma_fence_operand(st.o);
            if constexpr (PERSIST) { // the ring runs on into the next tile: this V slot is free, and read
                if (!early) release<CL>(c.v_empty(vs.slot));
                fmha_f_ring_advance(&vs, p.faults);
            }
        }
    } else {
        for (int j = 0; j < c.ntiles; j++) {
            const int kslot = ks.slot;
            // Step 2b: K_j has landed; S_j = Q K_j^T
            mbar_wait_budget(c.k_full(kslot), ring_full_parity(&ks), p.wd, SITE_K_FULL, c.probes);
            __syncwarp();
            float s[BN / 2];
            turn_wait<PP, NC>(cwg);
            issue_s<D>(c, kslot, s);
            if (early) release<CL>(c.k_empty(kslot)); // FG23: K's slot released while S_j still reads it
            turn_pass<PP, NC>(cwg);
            if (PERSIST && j == 0) { // the previous tile's O store, while this tile's first S runs
                settle_store();
                __syncwarp(); // lane 0 went its own way: converge before .sync.aligned
            }
            wgmma_wait<0>();
            if (!early) release<CL>(c.k_empty(kslot));
            fmha_f_ring_advance(&ks, p.faults);
            if (!WS && producer && next_k < c.ntiles) produce<D, BN, false>(rc, pk, next_k++, false); // ws 0: refill behind
            // Step 2c: mask and scale, row max, m_new, alpha, P, row sum
            float alpha[2];
            softmax_tile<D>(p, st, s, j * BN, row0, scale_log2, alpha);
            // Step 2d: the correction; step 2e: V_j has landed; O += P_j V_j
            rescale_o<D>(st, alpha);
            pack_p(s, pa);
            mbar_wait_budget(c.v_full(vs.slot), ring_full_parity(&vs), p.wd, SITE_V_FULL, c.probes);
            __syncwarp();
            turn_wait<PP, NC>(cwg);
            issue_pv<D>(c, vs.slot, st, pa);
            if (early) release<CL>(c.v_empty(vs.slot)); // FG23: V's slot released while P V still reads it
            if (!(final && cwg == NC - 1 && j == last)) turn_pass<PP, NC>(cwg); // the last group's last pass: nobody would take it
            wgmma_wait<0>();
            if (!early) release<CL>(c.v_empty(vs.slot));
            fmha_f_ring_advance(&vs, p.faults);
            if (!WS && producer && next_v < c.ntiles) produce<D, BN, false>(rc, pv, next_v++, true);
        }
    }

    // Step 3: epilogue: finish the row sums over the quad, normalise; O -> SMEM -> TMA store; LSE
    float inv_l[2];
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        st.l_i[hi] += __shfl_xor_sync(0xFFFFFFFFu, st.l_i[hi], 1);
        st.l_i[hi] += __shfl_xor_sync(0xFFFFFFFFu, st.l_i[hi], 2);
        inv_l[hi] = st.l_i[hi] > 0.0f ? 1.0f / st.l_i[hi] : 0.0f; // no visible key: O = 0
    }
#pragma unroll
    for (int i = 0; i < D / 2; i += 2) {
        int r, col;
        wgmma_acc_map(t, i, &r, &col);
        const int hi = (i >> 1) & 1;
        *(uint32_t *)(c.q + smem_tile_offset(&c.tq, 64 * cwg + r, col)) =
            pack_bf16x2(st.o[i] * inv_l[hi], st.o[i + 1] * inv_l[hi]);
    }
    fence_proxy_async(); // generic writes -> the async proxy (stage E's FG22: this stage has no variant)
    __syncwarp();
    settle_store(); // a tile without keys had no S to overlap the previous store with
    const int r0 = 64 * cwg + 16 * (warp % 4);
    if (lane == 0 && c.q0 + r0 < p.sq) {
#pragma unroll
        for (int cc = 0; cc < D / FMHA_BOX_COLS; cc++)
            tma_store_4d(&a.o, smem_u32(c.q) + smem_tile_offset(&c.tq, r0, FMHA_BOX_COLS * cc), FMHA_BOX_COLS * cc,
                         c.q0 + r0, c.h, c.b);
        tma_store_commit();
        if constexpr (!PERSIST) tma_store_wait_read<0>(); // SMEM read: the CTA may exit
    }
    __syncwarp();
    if constexpr (PERSIST) pend_qb = qb; // settled under the next tile's first S (settle_store)
    if (lane % 4 == 0) {
#pragma unroll
        for (int hi = 0; hi < 2; hi++)
            if (st.row[hi] < p.sq)
                p.lse[((int64_t)c.b * p.hq + c.h) * p.sq + st.row[hi]] =
                    st.l_i[hi] > 0.0f ? st.m_i[hi] * FMHA_LN2 + logf(st.l_i[hi]) : -INFINITY;
    }
    if constexpr (!PERSIST) break;
    } // the CTA's tiles
    settle_store(); // the last O store has read its SMEM before the CTA exits (FG22)
    if constexpr (CL == 2) cluster_sync(); // the peer's last releases have arrived here before this CTA exits
    // Step 4: teardown: nothing to free
#else
    (void)a;
#endif
}

// --persistent 1 (with the producer group): a grid of min(query tiles, SMs) CTAs, one per SM (the
// SMEM and registers of one CTA fill an SM), drawing tiles from the scheduler's counter until none
// is left. The counter is allocated once and never reset (next_tile): each launch starts where
// the last one's draws ended, so no memset precedes a timed launch.
template <int D, int BN, bool WS, bool PP, bool OV, int NC, bool FAULTS, bool PERSIST, int CL = 1>
static int launch_grid(const fmha_params &p, const fmha_tma_args &a)
{
    const uint32_t smem = fmha_f_smem_layout_make_kv(D, p.pipe.ring, 64 * NC, PERSIST ? 2 : 1, BN).bytes;
    grid3 g = fmha_grid(&p);
    if constexpr (PERSIST) {
        static int sms = 0;                  // read once: a launch inside a timed loop should not pay for it
        static unsigned *counter = nullptr;  // the scheduler's counter, for the life of the process
        static unsigned next_base = 0;       // where the next launch's draws start
        int dev = 0;
        if (sms < 1 && (cudaGetDevice(&dev) != cudaSuccess ||
                        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)) {
            sms = 0;
            fprintf(stderr, "stage F (sm90): cannot read the number of SMs for --persistent 1\n");
            return 1;
        }
        if (!counter) {
            CUDA_CHECK(cudaMalloc(&counter, sizeof *counter));
            CUDA_CHECK(cudaMemset(counter, 0, sizeof *counter));
        }
        const int n = fmha_tile_count(&p);
        g.x = (unsigned)(n < sms ? n : sms);
        g.y = g.z = 1u;
        // The arithmetic assumes launches run one after another on one device, each to its end
        // (the default stream; no CUDA graph replays a captured base).
        fmha_tma_args a2 = a;
        a2.p.pipe.tile_counter = counter;
        a2.p.pipe.tile_base = next_base;
        const int rc = launch_kernel(fmha_kernel<D, BN, WS, PP, OV, NC, FAULTS, PERSIST, 1>, g, fmha_f_sm90_threads(WS, NC), smem, a2);
        if (rc == 0) next_base += (unsigned)n + g.x; // n tiles drawn, and one draw past them by every CTA
        return rc;
    }
    if constexpr (CL == 2) { // stage_f.c's rules: an even number of query tiles, so g.x pairs up
        if (g.x % 2 != 0) {
            fprintf(stderr, "stage F (sm90): --cluster 2 with %u query tiles (stage_f.c's rules)\n", g.x);
            return 1;
        }
        return launch_kernel_cluster(fmha_kernel<D, BN, WS, PP, OV, NC, FAULTS, PERSIST, 2>, g, fmha_f_sm90_threads(WS, NC),
                                     smem, a, 2u);
    }
    return launch_kernel(fmha_kernel<D, BN, WS, PP, OV, NC, FAULTS, PERSIST, 1>, g, fmha_f_sm90_threads(WS, NC), smem, a);
}
template <int D, int BN, bool WS, bool PP, bool OV, int NC>
static int launch(const fmha_params &p, const fmha_tma_args &a)
{
    // D = 256 keeps the run-time fault checks in every run: on the H200 its kernel without them
    // measured 1-2% slower (ptxas schedules the 256-wide loop differently); at D = 64 and 128 the
    // kernel without them is 2-7% faster (notes/stage-f-perf.md).
    constexpr bool CHK = D == 256;
    if constexpr (WS && !PP) { // stage_f.c refuses --persistent with the ping-pong
        if (p.pipe.persistent) return (CHK || p.faults) ? launch_grid<D, BN, WS, PP, OV, NC, true, true>(p, a)
                                                        : launch_grid<D, BN, WS, PP, OV, NC, CHK, true>(p, a);
    }
    if constexpr (WS) { // --cluster 2 (stage_f.c: one-tile CTAs, no causal mask, an even number of query tiles)
        if (p.pipe.cluster == 2 && !p.pipe.persistent)
            return (CHK || p.faults) ? launch_grid<D, BN, WS, PP, OV, NC, true, false, 2>(p, a)
                                     : launch_grid<D, BN, WS, PP, OV, NC, CHK, false, 2>(p, a);
    }
    return (CHK || p.faults) ? launch_grid<D, BN, WS, PP, OV, NC, true, false>(p, a)
                             : launch_grid<D, BN, WS, PP, OV, NC, CHK, false>(p, a);
}

// The overlap keeps P_{j-1} (BN / 4 registers) and S_j (BN / 2) live beside O (D / 2): with 128-key
// tiles at D = 256 that is past the consumers' 232 registers, with 64-key tiles it fits, and with
// 176-key tiles at D = 128 in 240 (FMHA_F_SM90_OVERLAP_FITS; stage_f.c rejects the switch where it
// does not). Three consumer
// groups (p.pipe.rows = 192) exist at D = 64 only, with the producer group.
template <int D, int BN>
static int launch_d_bn(const fmha_params &p, const fmha_tma_args &a)
{
    const int ws = p.pipe.ws, pp = p.pipe.pingpong;
    constexpr bool OK = FMHA_F_SM90_OVERLAP_FITS(D, BN);
    const bool ov = OK && p.pipe.overlap;
    if constexpr (FMHA_F_SM90_THREE_OK(D)) {
        if (ws && p.pipe.rows == 192) {
            if (pp) return ov ? launch<D, BN, true, true, OK, 3>(p, a) : launch<D, BN, true, true, false, 3>(p, a);
            return ov ? launch<D, BN, true, false, OK, 3>(p, a) : launch<D, BN, true, false, false, 3>(p, a);
        }
    }
    if (p.pipe.rows != 0 && p.pipe.rows != FMHA_BM) {
        fprintf(stderr, "stage F (sm90): %d query rows a CTA at D = %d%s (stage_f.c's rules)\n", p.pipe.rows, D,
                ws ? "" : " without the producer group");
        return 1;
    }
    if (!ws) return ov ? launch<D, BN, false, false, OK, 2>(p, a) : launch<D, BN, false, false, false, 2>(p, a);
    if (pp) return ov ? launch<D, BN, true, true, OK, 2>(p, a) : launch<D, BN, true, true, false, 2>(p, a);
    return ov ? launch<D, BN, true, false, OK, 2>(p, a) : launch<D, BN, true, false, false, 2>(p, a);
}

// The key tile: 128 keys, or (--kv-tile, fmha.h's FMHA_F_SM90_COLS64_OK / _COLS176_OK) 64 at D = 256,
// 176 at D = 128.
template <int D>
static int launch_d(const fmha_params &p, const fmha_tma_args &a)
{
    const int bn = fmha_kv_cols(&p);
    if constexpr (FMHA_F_SM90_COLS64_OK(D)) {
        if (bn == 64) return launch_d_bn<D, 64>(p, a);
    }
    if constexpr (FMHA_F_SM90_COLS176_OK(D)) {
        if (bn == 176) return launch_d_bn<D, 176>(p, a);
    }
    if (bn != FMHA_BN) {
        fprintf(stderr, "stage F (sm90): %d keys a KV tile at D = %d (stage_f.c's rules)\n", bn, D);
        return 1;
    }
    return launch_d_bn<D, FMHA_BN>(p, a);
}

extern "C" int stage_f_sm90_launch(const void *params)
{
    const fmha_params &p = *(const fmha_params *)params;
    fmha_tma_args a;
    char err[800];
    if (fmha_tmaps_encode(&p, 9, &a, err, sizeof err)) {
        fprintf(stderr, "stage F (sm90): %s\n", err);
        return 1;
    }
    if (p.pipe.ring < 1 || p.pipe.ring > FMHA_RING_MAX) {
        fprintf(stderr, "stage F (sm90): ring %d outside 1..%d\n", p.pipe.ring, FMHA_RING_MAX);
        return 1;
    }
    return dispatch_head_dim<64, 128, 256>(p.d, [&](auto D) { return launch_d<decltype(D)::value>(p, a); });
}
