// Stage D's sm90 steps, shared by its kernels (decode_sm90.cu: the swapped and the 64-row
// kernels; decode_ring_sm90.cu: the 64-row pipelined kernel): the kernels' parameter, the gather
// (cp.async and TMA), the transpose, the softmax of the 64-row kernels, the ring's load role, the
// row reductions. The step labels are decode_sm90.cu's. Included once per translation unit: a
// unit that defines FMHA_WD_FIRE_INLINE first (setmaxnreg allows no calls) gets the watchdog's
// cold path inline.
#ifndef FMHA_STAGE_D_DECODE_SM90_STEPS_CUH
#define FMHA_STAGE_D_DECODE_SM90_STEPS_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>

#include "device/launch.cuh"
#include "decode.h"
#include "host/tmap_encode.h"
#include "model/frag_map.h"

// The kernels' one parameter: stage D's params and, for the TMA gather (--kv-tma 1), the tensor
// maps of K and V (dec_kv_tma_box's 3-D view of the cache). __grid_constant__ in the kernels, so
// the copies can take the maps' address in parameter space; zeros when the gather is cp.async.
struct dec_sm90_args {
    dec_params p;
    CUtensorMap tk, tv;
};
typedef void (*dec_sm90_kernel)(dec_sm90_args);
// decode_ring_sm90.cu: the pipelined kernel past 32 packed rows at head dim d with `ring` slots
// (nullptr where there is none)
dec_sm90_kernel dec_m64_ring_kernel(int d, int ring, int overlap, int kv_tma);

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900)
#include "device/bf16_pack.cuh"
#include "device/fast_exp2.cuh"
#include "device/cp_async.cuh"
#include "device/prefetch.cuh"
#include "device/e4m3.cuh"
#include "device/e4m3_transpose.cuh"
#include "device/mbarrier.cuh"
#include "device/named_bar.cuh"
#include "device/smem.cuh"
#include "device/tma.cuh"
#include "attn/ring.h"
#include "sm90/warpgroup.cuh"
#include "sm90/wgmma.cuh"
#define DEC_SM90_DEVICE 1
#else
#define DEC_SM90_DEVICE 0
#endif

// Resident CTAs per SM the register budget is sized for: decode is latency-bound, and each
// resident CTA has its own tile loads in flight. 2 gives 255 registers a thread (S, O and the
// tile addresses need them: 3, at 170 registers, spills 400-2600 bytes).
#ifndef DEC_SM90_MIN_CTAS
#define DEC_SM90_MIN_CTAS 2
#endif
// The swapped kernel at 8 packed rows and D <= 128 fits in 128 registers (52 bytes spill at D =
// 128), so 4 CTAs share an SM (4 x 53.6 KB of SMEM fits too): on the H200 that took GQA B64 Hkv8
// Skv 8k from 0.427 ms (3 CTAs, 3 splits) to 0.373 ms (4 CTAs, one wave unsplit). Wider tiles keep
// what ptxas picks (8 rows at D = 256: 244; 16 and 32 rows: 222 to 255, 2 CTAs).
// The pipelined kernel's ring holds 2-4 tiles of K and V, so fewer CTAs share an SM: at 8 packed
// rows and D <= 128 it asks for 2 (128 registers a thread, as the 4-CTA kernel has), elsewhere for
// 1 (255 a thread). setmaxnreg (the load warpgroup giving registers to the consumers) failed in
// ptxas for these kernels (C7600 at every consumer count tried: 176, 200, 216).
template <int D, int NR, int RING> struct swapped_min_ctas {
    static constexpr int value = RING > 0 ? ((NR <= 8 && D <= 128) ? 2 : 1) : (NR <= 8 && D <= 128) ? 4 : 1;
};
// The consumer warpgroup, plus the load warps with a ring.
static constexpr int dec_sm90_threads(int ring) { return DEC_SM90_THREADS + (ring > 0 ? DEC_SM90_LOAD_THREADS : 0); }
// A CTA's threads for `rows` packed rows: two warpgroups at 128 rows (--m64-groups 2), and the load
// warpgroup with a ring.
static constexpr int dec_sm90_block(int rows, int ring)
{
    return rows == 2 * DEC_BM_SM90 ? 2 * DEC_SM90_THREADS + (ring > 0 ? DEC_SM90_LOAD_THREADS : 0) : dec_sm90_threads(ring);
}

#if DEC_SM90_DEVICE
// --timeline: thread 0 stamps what of its CTA (DEC_TL_*: %globaltimer, or the SM's id). Only the
// kernels instantiated with TL = true stamp (kernel_of picks them when p.timeline is set): a test
// on the pointer in every kernel cost up to 0.8% of the decode (notes/device-runs.md, run 71).
static __device__ __forceinline__ void timeline_stamp(const dec_params &p, int what)
{
    if (p.timeline == nullptr || threadIdx.x != 0) return;
    const uint64_t cta = blockIdx.x + (uint64_t)gridDim.x * (blockIdx.y + (uint64_t)gridDim.y * blockIdx.z);
    uint64_t v;
    if (what == DEC_TL_SM) {
        uint32_t sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        v = sm;
    } else {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
    }
    p.timeline[cta * DEC_TL_WORDS + what] = v;
}

// --fair N (the swapped kernel with the next tile's boxes ahead, FR = true; a grid of one wave,
// which stage_d.c checks): the CTAs of one SM end up to 15 us apart in launch order (the warp
// scheduler serves older warps first, notes/fp8-decode-pipeline.md), and from the first exit on
// the grid has fewer tiles in flight. Each CTA adds the tiles whose boxes it issued to one counter
// (never reset: a launch's tiles are fair_base + 0 .. fair_total - 1), and before issuing its next
// tile's boxes, a CTA whose share of its own tiles would pass the grid's share by more than N of
// its tiles naps, a bounded number of times (a wait that can only end early, never deadlock). The
// counter is read one tile ahead: the load lands while the tile computes, so a CTA that is not
// ahead waits for nothing. Thread 0 only (warp 0 issues the boxes).
#ifndef DEC_FAIR_NAP_NS
#define DEC_FAIR_NAP_NS 256 // a nap asks for 256 ns, about 1/16 of a steady tile at the GQA target (3.96 us)
#endif
#ifndef DEC_FAIR_MAX_NAPS
#define DEC_FAIR_MAX_NAPS 64 // at most about 33 us held a tile (__nanosleep(t) sleeps between 0 and 2t)
#endif
static __device__ __forceinline__ unsigned long long fair_seen(const dec_params &p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p.fair_ctr) : "memory");
    return v - p.fair_base;
}
static __device__ __forceinline__ void fair_count(const dec_params &p)
{
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], 1;" ::"l"(p.fair_ctr) : "memory");
}
// mine of my n tiles issued (the next one included) against `seen` of the grid's fair_total:
// mine / n > seen / total + N / n, in integers. A count outside 0..total (the counter behind the
// base after a launch that stopped short, a trap) never holds: the wrapped products could.
static __device__ __forceinline__ bool fair_ahead(const dec_params &p, unsigned long long seen, int mine, int n)
{
    if (seen > p.fair_total) return false;
    return (unsigned long long)mine * p.fair_total > seen * (unsigned long long)n + (unsigned long long)p.fair * p.fair_total;
}
static __device__ __forceinline__ unsigned long long fair_hold(const dec_params &p, unsigned long long seen, int mine, int n)
{
    for (int k = 0; k < DEC_FAIR_MAX_NAPS && fair_ahead(p, seen, mine, n); k++) {
        __nanosleep(DEC_FAIR_NAP_NS);
        seen = fair_seen(p);
    }
    return seen;
}

// --persistent's claims (decode_core.h, dec_walk_item). Thread 0 adds one to the walk's counter a
// tile before its item's last tile; the add's result is first used at walk_publish, in that last
// tile, so the round trip to L2 runs under a tile instead of in front of the next item.
static __device__ __forceinline__ unsigned long long walk_claim(const dec_params &p)
{
    unsigned long long v;
    asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], 1;" : "=l"(v) : "l"(p.walk_ctr) : "memory");
    return v;
}
// Every thread of the CTA learns the item thread 0 claimed (all of them call this at the same point
// of the walk) through one SMEM word between two barriers: the second keeps thread 0's next claim
// from overwriting the word before every thread has read it.
static __device__ __forceinline__ int walk_publish(const dec_params &p, unsigned long long claimed, int nitems)
{
    __shared__ int walk_word;
    if (threadIdx.x == 0) walk_word = dec_walk_item(claimed, p.walk_base, (int)gridDim.x, nitems);
    __syncthreads();
    const int item = walk_word;
    __syncthreads();
    return item;
}

// Step 1: packed row r's query, quantised: threads 2r and 2r + 1 take half of D each, agree on the
// row's absmax, and write e4m3 codes 8 at a time. Rows past the packed rows are zeros (scale 1).
template <int D, int NR>
static __device__ __forceinline__ void quantise_q_rows(const dec_params &p, int b, int hk, int m0, uint8_t *smem_q,
                                                       const smem_tile &tq, float *sm_sq)
{
    // Threads past the tile's NR rows stay in the function: the shuffle below names the whole warp
    // (a lane that returned early would leave it waiting forever)
    const int r = threadIdx.x / 2, half = threadIdx.x % 2, m = m0 + r;
    const bool in_tile = r < NR;
    const bool valid = in_tile && m < dec_rows(&p);
    int i = 0, h = 0;
    if (valid) dec_unpack_row(&p, hk, m, &i, &h);
    const uint4 *src = (const uint4 *)(p.q + (((int64_t)b * p.sq + i) * p.hq + h) * D + half * (D / 2));
    float amax = 0.0f;
    if (valid)
#pragma unroll 4
        for (int c = 0; c < D / 16; c++) {
            amax = bf16x8_absmax(src[c], amax);
        }
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
    const float sq = amax > 0.0f ? amax / DEC_E4M3_MAX : 1.0f;
#pragma unroll 4
    for (int c = 0; c < D / 16; c++) {
        uint2 codes = {0u, 0u};
        if (valid) {
            const uint4 x = src[c];
            const uint32_t w[4] = {x.x, x.y, x.z, x.w};
            float f[8];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                f[2 * k] = __uint_as_float(w[k] << 16) / sq;
                f[2 * k + 1] = __uint_as_float(w[k] & 0xFFFF0000u) / sq;
            }
            codes.x = pack_e4m3x4(f[0], f[1], f[2], f[3]);
            codes.y = pack_e4m3x4(f[4], f[5], f[6], f[7]);
        }
        if (in_tile) *(uint2 *)(smem_q + smem_tile_offset(&tq, r, half * (D / 2) + 8 * c)) = codes;
    }
    if (in_tile && half == 0) sm_sq[r] = sq;
}

// Step 2a: the tile's K and V rows and scales by cp.async, through the block table, by NT threads
// (t = 0 .. NT - 1: the whole warpgroup, or the pipelined kernel's load role). Thread t looks up
// tokens kv0 + t + NT g (g < 128 / NT) once (their scales are its own copies); warp w then copies
// the rows of the 32 tokens its lanes looked up for each g, 16 bytes a copy, D/16 consecutive lanes
// per row (coalesced), each lane taking the row offset of its token from the lane that looked it
// up. Tokens at or past `end` (the sequence's last token + 1) are zero-filled without a read (src
// size 0). V lands in Vs in the K-major layout of K (the transpose reads it from there), or (FG20
// variant) in the MN-major layout the broken MMA reads.
template <int D, int NT>
static __device__ __forceinline__ void gather_tile(const dec_params &p, const int32_t *table, int hk, int kv0, int end,
                                                   uint8_t *smem_k, uint8_t *smem_vs, const smem_tile &tk,
                                                   const smem_tile &tv_mn, float *sm_sk, float *sm_sv, int t)
{
    constexpr int CH = D / 16, TPT = DEC_BN / NT; // chunks per row, tokens a thread looks up
    static_assert(NT % 32 == 0 && DEC_BN % NT == 0, "whole warps, whole tiles");
    static_assert(32 % CH == 0, "a warp's 32 lanes cover whole rows");
    const int lane = t % 32, w = t / 32;
    // Copy k of a lane is chunk c = lane + 32 k of its warp's rows: token c / CH, chunk c % CH.
    // With CH dividing 32 that is token lane / CH + k (32 / CH), chunk lane % CH: the chunk never
    // changes and the token moves by a constant, so neither is divided again in the loop (written
    // per copy in signed ints they cost about 20 of the loop's 49 instructions)
    const unsigned ch = (unsigned)lane % CH, nw0 = (unsigned)lane / CH;
    int64_t my_row[TPT];
#pragma unroll
    for (int g = 0; g < TPT; g++) { // every table lookup of the tile first: their loads overlap
        const int tok = kv0 + t + NT * g;
        my_row[g] = tok < end ? dec_token_row(&p, table, tok, hk) : -1;
    }
    const bool v_as_stored = p.faults & DEC_FAULT_V_NOT_TRANSPOSED;
#pragma unroll
    for (int g = 0; g < TPT; g++) {
        // past `end` (row -1): row 0's address, nothing read (src size 0, zero-filled)
        const int64_t row = my_row[g] < 0 ? 0 : my_row[g];
        const bool in = my_row[g] >= 0;
        cp_async_4(sm_sk + t + NT * g, p.k_scale + row, in ? 4 : 0);
        cp_async_4(sm_sv + t + NT * g, p.v_scale + row, in ? 4 : 0);
        // the row's byte offset and copy size, once by the lane that looked the token up
        const int64_t base = row * D;
        const int bytes = in ? 16 : 0;
        const auto copy_rows = [&](auto v_mn) { // the FG20 variant's V placement as a constant
#pragma unroll 1
            for (int k = 0; k < CH; k++) {
                const unsigned nw = nw0 + (32u / CH) * (unsigned)k;
                const int n = 32 * w + (int)nw + NT * g;
                const int64_t src = __shfl_sync(0xFFFFFFFFu, base, (int)nw) + 16 * (int)ch;
                const int by = __shfl_sync(0xFFFFFFFFu, bytes, (int)nw);
                // K-major SW128 rows of one atom up to D 128: the offset is a shift and an XOR
                // (smem_sw128_row_offset, equal to the tile's: tests/unit/test_canonical.c)
                const uint32_t off = D <= 128 ? smem_sw128_row_offset(n, 16 * (int)ch) : smem_tile_offset(&tk, n, 16 * (int)ch);
                cp_async_16(smem_k + off, p.k + src, by);
                cp_async_16(smem_vs + (decltype(v_mn)::value ? smem_tile_offset(&tv_mn, 16 * (int)ch, n) : off), p.v + src, by);
            }
        };
        if (v_as_stored) copy_rows(std::true_type{});
        else copy_rows(std::false_type{});
    }
}

// Step 2a (--prefetch N): the L2 lines a later tile's gather will read (each token's K and V row
// and its two scales), by NT threads, token by token as gather_tile takes them: no SMEM, no
// register kept, no wait; the lookups of the block table are the only loads.
template <int D, int NT>
static __device__ __forceinline__ void prefetch_tile(const dec_params &p, const int32_t *table, int hk, int kv0, int end,
                                                     int t)
{
    constexpr int TPT = DEC_BN / NT, LINES = D > 128 ? D / 128 : 1; // 128-byte lines of a row
    int64_t row[TPT];
#pragma unroll
    for (int g = 0; g < TPT; g++) { // the lookups first: their loads overlap
        const int tok = kv0 + t + NT * g;
        row[g] = tok < end ? dec_token_row(&p, table, tok, hk) : -1;
    }
#pragma unroll
    for (int g = 0; g < TPT; g++) {
        if (row[g] < 0) continue;
#pragma unroll
        for (int l = 0; l < LINES; l++) {
            prefetch_l2(p.k + row[g] * D + 128 * l);
            prefetch_l2(p.v + row[g] * D + 128 * l);
        }
        prefetch_l2(p.k_scale + row[g]);
        prefetch_l2(p.v_scale + row[g]);
    }
}

// The TMA gather's three parts, which --kv-tma 2 spreads over the tile before:
// warp 0's lane q looks up box q (tma_box_of), the lanes issue the boxes (tma_issue_boxes), every
// thread copies its token's scales (scale_row_of, scales_issue). t: the gathering thread's index,
// threadIdx.x in the unpipelined kernels, the load warps' own (0..127) in the ring past 32 rows.
static __device__ __forceinline__ int64_t tma_box_of(const dec_params &p, const int32_t *table, int kv0, int end, unsigned t)
{
    return (int)t < DEC_BN / dec_kv_tma_box_rows(p.page) ? dec_kv_tma_box(&p, table, kv0, t, end) : -1;
}
template <int D>
static __device__ __forceinline__ void tma_issue_boxes(const dec_sm90_args &a, int64_t tok, int hk, uint8_t *smem_k,
                                                       uint8_t *smem_vs, const smem_tile &tk, uint32_t bar, unsigned lane)
{
    constexpr int KB = D > 128 ? D / 128 : 1, BOXW = D > 128 ? 128 : D; // K blocks; bytes a box row reads
    const int t = lane, rows = dec_kv_tma_box_rows(a.p.page);
    const int n = __popc(__ballot_sync(0xFFFFFFFFu, tok >= 0)); // boxes before `end`: lanes 0..n-1
    if (t == 0) mbar_arrive_expect_tx(bar, (uint32_t)(2 * n * KB * rows * BOXW));
    __syncwarp();
    if (tok >= 0) {
#pragma unroll
        for (int kb = 0; kb < KB; kb++) {
            const uint32_t off = smem_tile_offset_raw(&tk, t * rows, 128 * kb); // 1024-aligned: rows % 8 == 0
            tma_load_3d(smem_u32(smem_k) + off, &a.tk, bar, 128 * kb, hk, (int)tok);
            tma_load_3d(smem_u32(smem_vs) + off, &a.tv, bar, 128 * kb, hk, (int)tok);
        }
    }
}
static __device__ __forceinline__ int64_t scale_row_of(const dec_params &p, const int32_t *table, int kv0, int end, int hk,
                                                      unsigned t)
{
    const int my_tok = kv0 + (int)t; // the token whose scales this thread copies
    return my_tok < end ? dec_token_row(&p, table, my_tok, hk) : -1;
}
static __device__ __forceinline__ void scales_issue(const dec_params &p, int64_t row, float *sm_sk, float *sm_sv, unsigned t)
{
    cp_async_4(sm_sk + t, p.k_scale + (row < 0 ? 0 : row), row < 0 ? 0 : 4);
    cp_async_4(sm_sv + t, p.v_scale + (row < 0 ? 0 : row), row < 0 ? 0 : 4);
}

// --kv-tma 2's lookups, a tile further ahead than its copies: at tile j the raw block-table
// entries of tile j+2 are loaded (table_entries_load) and not used until tile j+1 turns those of
// tile j+1, loaded a tile before, into its box rows and scale rows (rows_of_entries: adds and one
// multiply, no division: dec_tile_cursor). Loading and using the entries in one step left every
// warp waiting for the table's load each tile (ncu, B128 Hq32 Hkv8 Skv 4k: 5.7% of the stall
// samples on its first use). -1: the box or token starts at or past `end` (nothing loaded).
struct dec_table_ahead {
    dec_table_pos fb, ft;     // warp 0's lane q: box q's fixed part; every thread: its token's
    int32_t box_pg, tok_pg;   // the entries of the tile after next (box: warp 0's lanes only)
};
static __device__ __forceinline__ void table_entries_load(const dec_params &p, const int32_t *table, dec_table_pos cur,
                                                          int kv0, int end, dec_table_ahead &la)
{
    const int t = threadIdx.x, rows = dec_kv_tma_box_rows(p.page);
    la.box_pg = t * rows < DEC_BN && kv0 + t * rows < end ? __ldg(table + cur.entry + la.fb.entry) : -1; // box t
    la.tok_pg = kv0 + t < end ? __ldg(table + cur.entry + la.ft.entry) : -1;
}
static __device__ __forceinline__ void rows_of_entries(const dec_params &p, dec_table_pos cur, const dec_table_ahead &la,
                                                       int hk, int64_t &box, int64_t &row)
{
    box = la.box_pg < 0 ? -1 : (int64_t)la.box_pg * p.page + cur.offset + la.fb.offset;
    row = la.tok_pg < 0 ? -1 : ((int64_t)la.tok_pg * p.page + cur.offset + la.ft.offset) * p.hkv + hk;
}

// Step 2a (--kv-tma 1): warp 0 issues the tile's boxes (dec_kv_tma_box: one a page of the tile,
// up to the sequence's end; D = 256 two, one per 128-byte K block) for K and V into the K-major
// SW128 tiles on the CTA's kv barrier: lane q looks up box q's page (the lookups of all boxes in
// flight at once, not one after the other), lane 0 announces their bytes (FG15), then each lane
// issues its own. Every thread copies its token's two scales as gather_tile does (zero past `end`).
// A box lands a whole page, so rows past `end` hold what the page holds: the transpose zeroes V's
// (transpose_v<D, true>); K's only meet masked scores. The previous tile's reads of K (its MMAs,
// waited for) and of Vs (the transpose, then every thread's proxy fence) precede these writes
// through the barriers between the tiles.
template <int D>
static __device__ __forceinline__ void tma_gather_tile(const dec_sm90_args &a, const int32_t *table, int hk, int kv0,
                                                       int end, uint8_t *smem_k, uint8_t *smem_vs, const smem_tile &tk,
                                                       float *sm_sk, float *sm_sv, uint32_t bar)
{
    static_assert(DEC_SM90_THREADS == DEC_BN, "one thread a token for the scales");
    static_assert(DEC_BN / 8 <= 32, "a warp's lanes hold every box of a tile (pages of 8 tokens or more)");
    if (threadIdx.x < 32)
        tma_issue_boxes<D>(a, tma_box_of(a.p, table, kv0, end, threadIdx.x), hk, smem_k, smem_vs, tk, bar, threadIdx.x);
    scales_issue(a.p, scale_row_of(a.p, table, kv0, end, hk, threadIdx.x), sm_sk, sm_sv, threadIdx.x);
}

// Step 2a': Vs [128 kv x D] -> Vt [D x 128 kv]: warp w takes the 16-byte d-chunks w, w+4, ...,
// lane a tokens 4a..4a+3 of each (device/e4m3_transpose.cuh: one 4 x 16 block), each lane at its
// own chunk of a group of 4 (dec_transpose_chunk: the reads free of bank conflicts). TAIL: tokens at or
// past `valid` (of the tile) become zeros. PERM: V's keys in the order of P's registers
// (dec_pv_key_of_pos; the 64-row pipelined kernel), each lane at dec_transpose_chunk_perm's chunk.
template <int D, bool TAIL = false, int NW = DEC_SM90_THREADS / 32, bool PERM = false>
static __device__ __forceinline__ void transpose_v(const uint8_t *smem_vs, uint8_t *smem_vt, const smem_tile &tvs,
                                                   unsigned t, int valid = DEC_BN)
{
    static_assert(NW % 4 == 0, "whole groups of 4 chunks a round (dec_transpose_chunk)");
    static_assert(D % 64 == 0, "dec_transpose_chunk permutes aligned groups of 4 chunks");
    const int a = (int)(t % 32u), w = (int)(t / 32u); // t = 0 .. 127: the warpgroup's thread doing the transpose
#pragma unroll
    for (int ch = w; ch < D / 16; ch += NW)
        e4m3_transpose_block<TAIL, PERM>(smem_vs, smem_vt, tvs, a, PERM ? dec_transpose_chunk_perm(ch, a) : dec_transpose_chunk(ch, a),
                                         valid);
}

// A 64-row accumulator's row lives in the 4 lanes of a quad (wgmma_acc_map: lane % 4 picks the
// columns): its max and sum over them, two shuffles each.
static __device__ __forceinline__ float quad_max(float x)
{
    x = fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 2));
}
static __device__ __forceinline__ float quad_sum(float x)
{
    x += __shfl_xor_sync(0xFFFFFFFFu, x, 1);
    return x + __shfl_xor_sync(0xFFFFFFFFu, x, 2);
}
// Steps 2c-2d's row reductions: a packed row's values are spread over the 8 lanes of a warp with
// the same lane % 4 (lane / 4 picks the key) and over the 4 warps. The warp part is three
// shuffles; the warp totals meet in SMEM (red [4 warps][NR]) after a barrier.
static __device__ __forceinline__ float warp_max_over_keys(float x)
{
    x = fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 4));
    x = fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 8));
    return fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 16));
}
static __device__ __forceinline__ float warp_sum_over_keys(float x)
{
    x += __shfl_xor_sync(0xFFFFFFFFu, x, 4);
    x += __shfl_xor_sync(0xFFFFFFFFu, x, 8);
    return x + __shfl_xor_sync(0xFFFFFFFFu, x, 16);
}

// Steps 2c-2d for the thread's two packed rows (r and r + 8; HALVES = 1: only r, the second half
// of the registers skipped at compile time; t: the thread in its warpgroup, prow0: the group's
// first row in P): the scales (K's on S's columns), the mask, the row max
// over the quad, P and the row sum; V's scale folded into P's columns, the row's P scale, P's
// codes into SMEM; the correction O *= alpha u / sp.
// MASK: some key of the tile lies past a row's visible keys (the warp's last tiles only); FAULTS:
// an FG17 variant runs (stage D's --fault). softmax_tile runs a plain copy (neither) on every
// tile it can and one copy with both otherwise, so a plain run's full tiles carry neither the
// mask's compare and select a score nor the fault checks.
// The row factor (Q's row scale times the softmax scale in log2 units) is positive and common
// to the row, so the max is taken over s * K's column scale and the factor goes into the
// exponent's FFMA: exp2(rowfac t - base) (one FMUL a score fewer than scaling s by both).
// Keys c and c + 1's scales (c even). Up to D 128 one 8-byte load; at D 256, where O's 128
// registers a thread leave the least room, two 4-byte loads and a single softmax copy (MASK and
// FAULTS on every tile). Chosen by ptxas's spill report: the 64-row kernels at D 256 spilled
// 600-1500 bytes with the pairs or with two copies, the 64-row ring at D 128 spilled 76 bytes
// with the 4-byte loads; this way D 128 spills nothing and D 256 less than before.
template <int D> static __device__ __forceinline__ float2 scale_pair(const float *sc, int c)
{
    if constexpr (D > 128) return make_float2(sc[c], sc[c + 1]);
    else return *(const float2 *)(sc + c);
}

// Whether the 64-row softmax takes P's scale from a bound (softmax_tile_as): D <= 128; D 256 keeps
// the exact max over P' (with the bound its 64-row kernels spilled 156 bytes, 1168 loaded). With
// the load warps' V-scale maxima (SVM) the same kernels fold 1 / sp into the exponentials.
template <int D> constexpr bool dec_p_scale_bound = D <= 128;

// 1: a quarter of the 64-row softmax's exponentials on full tiles by poly_exp2 (the FMA pipe's
// cubic) instead of MUFU.EX2, whose queue two consumer warps a sub-partition share; 0 (the
// default): all on MUFU. A build switch for the A/B (notes/fp8-decode-pipeline.md).
#ifndef DEC_EXP2_POLY
#define DEC_EXP2_POLY 0
#endif

// Two build switches (0, the defaults: off; notes/fp8-decode-pipeline.md) for a consumer warp's
// O correction, which runs whenever one of its 16 rows moves its max or its P scale, and sits
// between the exponentials and P V's issue:
//   DEC_RING_MAX_LAG L: the ring's row max moves only when a tile's exceeds it by more than L (log2
//     units, fmha_row_max_next: FlashAttention-4's conditional rescale), so P stays below 2^L
//   DEC_P_SCALE_HEADROOM H: a new P scale is chosen 2^H above its bound, so the bound may grow by H
//     (as the lagging max lets it) before the scale must move; the keep rule's floor widens by H
#ifndef DEC_RING_MAX_LAG
#define DEC_RING_MAX_LAG 0
#endif
#ifndef DEC_P_SCALE_HEADROOM
#define DEC_P_SCALE_HEADROOM 0
#endif

// How far below its P scale a row's new bound may fall and the row keep that scale (0: never);
// a build switch for the A/B against the per-tile scale (notes/fp8-scales.md).
#ifndef DEC_P_SCALE_KEEP
#define DEC_P_SCALE_KEEP 16
#endif

// PREG: P's codes go into pa, A's registers of P V's four K steps (dec_p_reg_src; V's keys permuted
// to match by the load warps), not to SMEM; a row the thread does not hold (HALVES = 1) is zeros.
// Step 2d's second half, P's codes and O's correction, from P's scale a row (sp), the max's
// correction (alpha) and whether the warp's rows all kept both (same). softmax_tile_as runs it
// right after the first half; the overlapped ring (decode_ring_sm90.cu) runs the first half
// alone (SPLIT), waits for the previous tile's P V where every warp of the group meets (pa may
// still be its A operand, O its accumulator, until then), and runs this after.
// PRE: s already holds P' / sp (the exponent took 1 / sp, softmax_tile_as's EARLY), so P's codes
// need no multiply.
struct dec_p_scales {
    float sp[2], alpha[2];
    bool same;
};
template <int D, int HALVES, bool PREG, bool PRE = false>
static __device__ __forceinline__ void p_codes_and_o(const float (&s)[DEC_BN / 2], float (&o)[D / 2], float (&u_i)[2],
                                                     dec_p_scales ps, uint8_t *smem_p, uint32_t (&pa)[DEC_BN / 8], int t,
                                                     int prow0)
{
    constexpr bool BOUND = dec_p_scale_bound<D>;
    if constexpr (PREG) {
        // P's codes into A's registers: register g of K step kk takes 4 accumulator registers of
        // one row (dec_p_reg_src), the row hi = g & 1
        float inv[2];
#pragma unroll
        for (int hi = 0; hi < 2; hi++) inv[hi] = PRE ? 1.0f : __fdividef(1.0f, ps.sp[hi]); // one reciprocal a row (x 1 folds away)
#pragma unroll
        for (int kk = 0; kk < DEC_BN / 32; kk++)
#pragma unroll
            for (int g = 0; g < 4; g++) {
                const int hi = g & 1;
                pa[4 * kk + g] = hi >= HALVES ? 0u
                                              : pack_e4m3x4(s[dec_p_reg_src(kk, g, 0)] * inv[hi], s[dec_p_reg_src(kk, g, 1)] * inv[hi],
                                                            s[dec_p_reg_src(kk, g, 2)] * inv[hi], s[dec_p_reg_src(kk, g, 3)] * inv[hi]);
            }
    } else {
        // P's codes: registers i, i+1 are columns c, c+1 of one row: one 16-bit store, at a row base
        // plus one of 8 XORs and an immediate (dec_p_code_offset)
#pragma unroll
        for (int i = 0; i < DEC_BN / 2; i += 2) {
            const int hi = (i >> 1) & 1;
            if (hi >= HALVES) continue;
            const float inv = PRE ? 1.0f : __fdividef(1.0f, ps.sp[hi]); // one reciprocal a row, no division's slow path
            *(uint16_t *)(smem_p + dec_p_code_offset(t, i, prow0)) = pack_e4m3x2(s[i] * inv, s[i + 1] * inv);
        }
    }
    // the correction, in the new unit sp: O *= alpha u / sp (alpha alone where the row kept u)
#pragma unroll
    for (int hi = 0; hi < HALVES; hi++) {
        if (!BOUND || ps.sp[hi] != u_i[hi]) ps.alpha[hi] *= u_i[hi] * __fdividef(1.0f, ps.sp[hi]);
        u_i[hi] = ps.sp[hi];
    }
    if (!BOUND || !__all_sync(0xFFFFFFFFu, ps.same))
#pragma unroll
        for (int i = 0; i < D / 2; i++)
            if (((i >> 1) & 1) < HALVES) o[i] *= ps.alpha[(i >> 1) & 1];
}

// The row's P scale from the bound (emax: its largest P; svmax: the tile's largest V scale), kept
// while the new one lies within [u / DEC_P_SCALE_KEEP, u] (softmax_tile_as's comment). same: the
// row kept both scale and max.
static __device__ __forceinline__ float p_scale_of_bound(float emax, float svmax, bool fold, float u, float alpha, bool &same)
{
    const float spn = dec_p_scale(fold ? emax * svmax : emax, svmax);
    const bool keep = DEC_P_SCALE_KEEP > 0 && spn <= u && spn * (float)DEC_P_SCALE_KEEP >= u;
    same = same && keep && alpha == 1.0f;
    return keep ? u : spn;
}
// The same in log2 units for EARLY (dec_p_lscale_row: lp, the log2 of the row's largest P), the
// scale a power of two: kept within half that range, since the rounding itself may put the new
// scale up to 2x above the bound's, so the top code keeps the same floor, 448 / DEC_P_SCALE_KEEP
// (448 / (DEC_P_SCALE_KEEP x 2^DEC_P_SCALE_HEADROOM) with headroom, whose window is that much wider).
// Returns lsp = log2 sp; sp itself (the row sum's factor, O's correction) comes off the path
// from the exponent bits.
static constexpr int dec_ilog2(int x) { return x > 1 ? 1 + dec_ilog2(x / 2) : 0; }
static_assert(DEC_P_SCALE_KEEP == 0 || (DEC_P_SCALE_KEEP >= 2 && (DEC_P_SCALE_KEEP & (DEC_P_SCALE_KEEP - 1)) == 0),
              "the log2 form of the keep rule takes a power of two");
static constexpr float dec_p_keep_log2_range = (float)(dec_ilog2(DEC_P_SCALE_KEEP) - 1); // 3: within 8x
static __device__ __forceinline__ float p_lscale_of_bound(float lp, dec_p_lscale_k k, float u, float alpha, bool &same,
                                                          float &sp)
{
    const float lg = dec_p_lscale_row(lp, k);
    const float lu = dec_log2_of_pow2(u); // exact: u is one of these powers too (1 at the start)
    const bool keep = DEC_P_SCALE_KEEP > 0 && lg <= lu && lg + (dec_p_keep_log2_range + DEC_P_SCALE_HEADROOM) >= lu;
    same = same && keep && alpha == 1.0f;
    const float lsp = keep ? lu : DEC_P_SCALE_HEADROOM ? lg + (float)DEC_P_SCALE_HEADROOM : lg;
    sp = dec_pow2_of(lsp);
    return lsp;
}

// SPLIT: the first half only, its results in *split (p_codes_and_o's comment)
// SVM: the tile's largest V scale comes from the load warps (svm: their four warp maxima, written
// with the slot), so P's scale is known before the exponentials, and at D <= 128 (EARLY) 1 / sp
// goes into the exponent's FFMA, a power of two (dec_p_lscale_row): the exponentials give P / sp, the
// row sum takes them times sp once a tile, and P's codes need no multiply a score (the ring past 32
// rows). Without it V's scale max is taken here, once a key, and the codes are multiplied by 1 / sp.
template <int D, int HALVES, bool MASK, bool FAULTS, bool PREG, bool SPLIT = false, bool SVM = false>
static __device__ __forceinline__ void softmax_tile_as(const dec_params &p, float (&s)[DEC_BN / 2], float (&o)[D / 2],
                                                       float (&m_i)[2], float (&l_i)[2], float (&u_i)[2],
                                                       const int (&rloc)[2], const int (&nvis)[2],
                                                       const float (&rowfac)[2], int kv0, const float *sk,
                                                       const float *sv, uint8_t *smem_p, uint32_t (&pa)[DEC_BN / 8],
                                                       int t, int prow0, dec_p_scales *split = nullptr,
                                                       const float *svm = nullptr)
{
    constexpr bool BOUND = dec_p_scale_bound<D>;
    constexpr bool EARLY = BOUND && SVM;
    bool fold = true; // V's scale into P's columns (FG17's variant: left for O's rows)
    if constexpr (FAULTS) fold = !(p.faults & DEC_FAULT_V_SCALE_ON_O_ROWS);
    // EARLY: the tile's part of P's scale (dec_p_lscale_tile), from the load warps' V-scale
    // maxima, read first so that their load and log run beside the row max
    float svmax = 0.0f;
    dec_p_lscale_k lk = {0.0f, 0.0f};
    if constexpr (EARLY) {
        const float4 v4 = *(const float4 *)svm;
        svmax = fmaxf(fmaxf(v4.x, v4.y), fmaxf(v4.z, v4.w));
        lk = dec_p_lscale_tile(fast_log2(svmax), fold);
    }
    // Step 2c: K's scales on the columns (two adjacent keys a load), the mask, the row max. The max
    // runs as four partial maxima a row, combined at the end: one running max was a chain of 32
    // dependent FMNMX between S and the first exponential
    float part[2][4];
#pragma unroll
    for (int i = 0; i < DEC_BN / 2; i += 2) {
        int r, c;
        wgmma_acc_map(t, i, &r, &c); // c even: registers i, i + 1 are keys c, c + 1 of one row
        const int hi = (i >> 1) & 1;
        if (hi >= HALVES) continue;
        float2 cs = scale_pair<D>(sk, c);
        if constexpr (FAULTS) {
            if (p.faults & DEC_FAULT_K_SCALE_ON_ROWS) cs.x = cs.y = sk[prow0 + rloc[hi]]; // FG17: key r's scale on row r
            if (p.faults & DEC_FAULT_K_SCALE_DROPPED) cs.x = cs.y = 1.0f;                // FG17
        }
        s[i] *= cs.x;
        s[i + 1] *= cs.y;
        if constexpr (MASK) {
            if (kv0 + c >= nvis[hi]) s[i] = -INFINITY;
            if (kv0 + c + 1 >= nvis[hi]) s[i + 1] = -INFINITY;
        }
        const float v = fmaxf(s[i], s[i + 1]);
        const int k = (i >> 2) & 3; // row hi's registers are i = 4 n + 2 hi: partial n % 4
        part[hi][k] = i < 16 ? v : fmaxf(part[hi][k], v);
    }
    float tmax[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int hi = 0; hi < HALVES; hi++) tmax[hi] = fmaxf(fmaxf(part[hi][0], part[hi][1]), fmaxf(part[hi][2], part[hi][3]));
    float alpha[2] = {1.0f, 1.0f}, base[2] = {0.0f, 0.0f}, emax[2] = {0.0f, 0.0f}, sp[2] = {1.0f, 1.0f}, lsp[2] = {0.0f, 0.0f};
    bool same = true;
#pragma unroll
    for (int hi = 0; hi < HALVES; hi++) {
        tmax[hi] = quad_max(tmax[hi]);
        // the row's max in log2 units; a tile with no visible key of the row leaves it
        const float mx = tmax[hi] == -INFINITY            ? m_i[hi]
                         : EARLY && DEC_RING_MAX_LAG > 0 ? fmha_row_max_next(m_i[hi], rowfac[hi] * tmax[hi], (float)DEC_RING_MAX_LAG)
                                                         : fmaxf(m_i[hi], rowfac[hi] * tmax[hi]);
        base[hi] = fmha_exp_base(mx, 0);
        alpha[hi] = fast_exp2(m_i[hi] - base[hi]);
        m_i[hi] = mx;
        l_i[hi] *= alpha[hi];
        // P's scale from a bound on the row's largest P', its largest P times the tile's largest V
        // scale, not from P' itself: no max over 64 scores and no quad reduction a row. The codes
        // then top out at 448 sv_j / svmax for the key j of the row's largest P, a factor of the V
        // scales' spread below the exact max, still in e4m3's normal range with its 3 bits
        // (notes/fp8-scales.md). The row keeps the scale it has (u) while the new one lies within
        // [u / DEC_P_SCALE_KEEP, u]: its codes then top out at 448 / DEC_P_SCALE_KEEP or more,
        // normal, and O needs no correction where the row max stayed too, so a warp whose rows all
        // keep both skips O's D / 2 FMULs. The row's largest P comes from the exponent's own FFMA
        // on its largest score (the exponential is monotone); EARLY needs only its log (lp; a row
        // with no key gives -inf or NaN, and the floor)
        const float lp = fmaf(tmax[hi], rowfac[hi], -base[hi]);
        if constexpr (EARLY) lsp[hi] = p_lscale_of_bound(lp, lk, u_i[hi], alpha[hi], same, sp[hi]);
        else if constexpr (BOUND) emax[hi] = tmax[hi] == -INFINITY ? 0.0f : fast_exp2(lp);
    }
    float pmax[2] = {0.0f, 0.0f}, lt[2] = {0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < DEC_BN / 2; i += 2) {
        int r, c;
        wgmma_acc_map(t, i, &r, &c);
        const int hi = (i >> 1) & 1;
        if (hi >= HALVES) continue;
        // EARLY: P / sp. DEC_EXP2_POLY: on full tiles every fourth block of four registers (a
        // quarter of the scores) takes 2^x from the FMA pipe's cubic, the rest from MUFU
        const float nb = EARLY ? -(base[hi] + lsp[hi]) : -base[hi];
#if DEC_EXP2_POLY
        const bool poly = !MASK && ((i >> 2) & 3) == 3;
        const float x0 = fmaf(s[i], rowfac[hi], nb), x1 = fmaf(s[i + 1], rowfac[hi], nb);
        float e0 = poly ? poly_exp2(x0) : fast_exp2(x0);
        float e1 = poly ? poly_exp2(x1) : fast_exp2(x1);
#else // (the form the default kernels were measured with: ptxas schedules it differently)
        float e0 = fast_exp2(fmaf(s[i], rowfac[hi], nb));
        float e1 = fast_exp2(fmaf(s[i + 1], rowfac[hi], nb));
#endif
        if constexpr (MASK) { // a masked key is 0 by select: -inf times a zero Q row's factor is NaN
            if (s[i] == -INFINITY) e0 = 0.0f;
            if (s[i + 1] == -INFINITY) e1 = 0.0f;
        }
        // this thread's part of the row sum (the quad is summed at the end); EARLY: in units of sp
        if constexpr (EARLY) lt[hi] += e0 + e1;
        else l_i[hi] += e0 + e1;
        // Step 2d: V's scale folded into P's columns (FG17 variant: left for O's rows)
        const float2 v2 = scale_pair<D>(sv, c);
        s[i] = fold ? e0 * v2.x : e0;
        s[i + 1] = fold ? e1 * v2.y : e1;
        if constexpr (!BOUND) pmax[hi] = fmaxf(pmax[hi], fmaxf(s[i], s[i + 1]));
        if (!EARLY && hi == 0) svmax = fmaxf(svmax, fmaxf(v2.x, v2.y)); // V's largest scale: once a key (both rows see the same keys)
    }
    if constexpr (EARLY) {
#pragma unroll
        for (int hi = 0; hi < HALVES; hi++) l_i[hi] = fmaf(lt[hi], sp[hi], l_i[hi]);
    } else {
        svmax = quad_max(svmax);
#pragma unroll
        for (int hi = 0; hi < HALVES; hi++) {
            if constexpr (BOUND) {
                sp[hi] = p_scale_of_bound(emax[hi], svmax, fold, u_i[hi], alpha[hi], same);
            } else {
                sp[hi] = dec_p_scale(quad_max(pmax[hi]), svmax);
                same = false;
            }
        }
    }
    const dec_p_scales ps = {{sp[0], sp[1]}, {alpha[0], alpha[1]}, same};
    if constexpr (SPLIT) *split = ps;
    else p_codes_and_o<D, HALVES, PREG, EARLY>(s, o, u_i, ps, smem_p, pa, t, prow0);
}

// Steps 2c-2d, the copy a tile needs: the masked one where some key of the tile lies past a
// visible end of one of the warp's rows (a vote, so the warp stays converged for the wgmma after
// it) or an FG17 variant runs, and at D 256 always (scale_pair); the plain one elsewhere. P's
// codes go to SMEM where dec_p_code_offset says, or (PREG) into A's registers where dec_p_reg_src
// says (tests/unit/test_decode_core.c checks both against the tile and the fragment maps).
template <int D, int HALVES, bool PREG, bool SPLIT = false, bool SVM = false>
static __device__ __forceinline__ void softmax_tile_to(const dec_params &p, float (&s)[DEC_BN / 2], float (&o)[D / 2],
                                                       float (&m_i)[2], float (&l_i)[2], float (&u_i)[2], const int (&rloc)[2],
                                                       const int (&nvis)[2], const float (&rowfac)[2], int kv0,
                                                       const float *sk, const float *sv, uint8_t *smem_p,
                                                       uint32_t (&pa)[DEC_BN / 8], int t, int prow0, dec_p_scales *split = nullptr,
                                                       const float *svm = nullptr)
{
    const int nmin = HALVES == 2 ? min(nvis[0], nvis[1]) : nvis[0];
    const bool mask = __any_sync(0xFFFFFFFFu, kv0 + DEC_BN > nmin);
    const bool faults = p.faults & (DEC_FAULT_K_SCALE_ON_ROWS | DEC_FAULT_K_SCALE_DROPPED | DEC_FAULT_V_SCALE_ON_O_ROWS);
    if (D > 128 || faults || mask) // D 256: one copy (see scale_pair)
        softmax_tile_as<D, HALVES, true, true, PREG, SPLIT, SVM>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, sk, sv, smem_p,
                                                                 pa, t, prow0, split, svm);
    else
        softmax_tile_as<D, HALVES, false, false, PREG, SPLIT, SVM>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, sk, sv, smem_p,
                                                                   pa, t, prow0, split, svm);
}
// P's codes into the group's rows of P in SMEM (prow0: the group's first row)
template <int D, int HALVES>
static __device__ __forceinline__ void softmax_tile(const dec_params &p, float (&s)[DEC_BN / 2], float (&o)[D / 2],
                                                    float (&m_i)[2], float (&l_i)[2], float (&u_i)[2], const int (&rloc)[2],
                                                    const int (&nvis)[2], const float (&rowfac)[2], int kv0,
                                                    const float *sk, const float *sv, uint8_t *smem_p, int t,
                                                    int prow0)
{
    uint32_t none[DEC_BN / 8]; // no register P here
    softmax_tile_to<D, HALVES, false>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, sk, sv, smem_p, none, t, prow0);
}
// P's codes into pa, A's registers of P V (the 64-row pipelined kernel; prow0: the group's first
// row, which FG17's K-scale variant reads the scales by; svm: the load warps' V-scale maxima of the
// slot, softmax_tile_as's SVM)
// (SPLIT: the first half only, see p_codes_and_o)
template <int D, int HALVES, bool SPLIT = false>
static __device__ __forceinline__ void softmax_tile_regs(const dec_params &p, float (&s)[DEC_BN / 2], float (&o)[D / 2],
                                                         float (&m_i)[2], float (&l_i)[2], float (&u_i)[2],
                                                         const int (&rloc)[2], const int (&nvis)[2], const float (&rowfac)[2],
                                                         int kv0, const float *sk, const float *sv, const float *svm,
                                                         uint32_t (&pa)[DEC_BN / 8], int t, int prow0, dec_p_scales *split = nullptr)
{
    softmax_tile_to<D, HALVES, true, SPLIT, true>(p, s, o, m_i, l_i, u_i, rloc, nvis, rowfac, kv0, sk, sv, nullptr, pa, t, prow0,
                                                  split, svm);
}

// Step 2a' of the FG20 variant: Vs already holds V MN-major (as stored): copied to Vt unchanged.
template <int D, int NTH = DEC_SM90_THREADS>
static __device__ __forceinline__ void copy_v_as_stored(const uint8_t *smem_vs, uint8_t *smem_vt, uint32_t bytes)
{
    for (uint32_t i = 16u * threadIdx.x; i < bytes; i += 16u * NTH)
        *(uint4 *)(smem_vt + i) = *(const uint4 *)(smem_vs + i);
}

// Step 3's LSE of one packed row (query head h, new row i), natural log; -inf for a row that saw
// no key; into LSE_part of this split with split-KV, else into LSE.
static __device__ __forceinline__ void store_lse(const dec_params &p, bool split_out, int split, int b, int h, int i,
                                                 float m, float l)
{
    const float lse = l > 0.0f ? m * DEC_LN2 + logf(l) : -INFINITY;
    const int64_t li = ((int64_t)b * p.hq + h) * p.sq + i;
    if (split_out) p.lse_part[(int64_t)split * p.b * p.hq * p.sq + li] = lse;
    else p.lse[li] = lse;
}

// The 64-row kernels' rows (decode_kernel_m64, decode_kernel_m64_ring): thread t of a group whose
// first packed row is m0 holds rows m0 + rloc[hi] (fragment rows r and r + 8, hi = bit 1 of the
// accumulator index); their new-row index and query head, and the keys each sees (0 past the
// M packed rows).
static __device__ __forceinline__ void m64_rows_of(const dec_params &p, int t, int m0, int M, int hk, int len,
                                                   int (&rloc)[2], int (&nvis)[2], int (&qi)[2], int (&qh)[2])
{
    int r, c;
    wgmma_acc_map(t, 0, &r, &c);
    rloc[0] = r;
    rloc[1] = r + 8;
    for (int hi = 0; hi < 2; hi++) {
        const int m = m0 + rloc[hi];
        qi[hi] = qh[hi] = 0;
        if (m < M) dec_unpack_row(&p, hk, m, &qi[hi], &qh[hi]);
        nvis[hi] = m < M ? dec_visible_keys(&p, len, qi[hi]) : 0;
    }
}
// An empty split (a short sequence) saw no key: LSE_part = -inf for the thread's rows (one thread
// of each quad).
static __device__ __forceinline__ void m64_empty_split(const dec_params &p, int t, int m0, int M, const int (&rloc)[2],
                                                       const int (&qi)[2], const int (&qh)[2], int split, int b)
{
    if (t % 4 == 0)
        for (int hi = 0; hi < 2; hi++)
            if (m0 + rloc[hi] < M) p.lse_part[(((int64_t)split * p.b + b) * p.hq + qh[hi]) * p.sq + qi[hi]] = -INFINITY;
}
// Step 3 of the 64-row kernels: the row sums finished over the quad, O = u O_acc / l -> bf16 (or
// f32 O_part with split-KV), LSE. FG17_ROWS: the kernel runs the FG17 variant, whose V scales
// (o_row_sv: the last tile's, indexed by the group's row) become row factors of O.
template <int D, bool FG17_ROWS>
static __device__ __forceinline__ void m64_epilogue(const dec_params &p, const float (&o)[D / 2], const float (&m_i)[2],
                                                    float (&l_i)[2], const float (&u_i)[2], const int (&rloc)[2],
                                                    const int (&qi)[2], const int (&qh)[2], int t, int m0, int M,
                                                    int split, int b, const float *o_row_sv)
{
    float fin[2];
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        l_i[hi] = quad_sum(l_i[hi]);
        fin[hi] = l_i[hi] > 0.0f ? u_i[hi] / l_i[hi] : 0.0f; // no visible key: O = 0
        if (FG17_ROWS && (p.faults & DEC_FAULT_V_SCALE_ON_O_ROWS)) fin[hi] *= o_row_sv[rloc[hi]]; // FG17
    }
    const bool split_out = p.splits > 1;
    // Each row's output address once, at the thread's first column: registers i, i + 1 are then
    // that row's columns c0 + 8 (i / 4) and the next (wgmma_acc_map), an immediate offset a store.
    // (Written per store, the 64-bit row and split offsets cost about 25 instructions each, in a
    // straight run of code that every CTA meets once, cold in the instruction cache.)
    int r0, c0;
    wgmma_acc_map(t, 0, &r0, &c0);
    float *part[2];
    uint16_t *out[2];
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        const int64_t orow = (((int64_t)b * p.sq + qi[hi]) * p.hq + qh[hi]) * D + c0;
        part[hi] = p.o_part + (int64_t)split * p.b * p.sq * p.hq * D + orow;
        out[hi] = p.o + orow;
    }
#pragma unroll
    for (int hi = 0; hi < 2; hi++) {
        if (m0 + rloc[hi] >= M) continue;
#pragma unroll
        for (int i = 2 * hi; i < D / 2; i += 4) { // registers i, i + 1 of row hi
            const int dc = 8 * (i >> 2);
            if (split_out) *(float2 *)(part[hi] + dc) = make_float2(o[i] * fin[hi], o[i + 1] * fin[hi]);
            else *(uint32_t *)(out[hi] + dc) = pack_bf16x2(o[i] * fin[hi], o[i + 1] * fin[hi]);
        }
    }
    if (t % 4 == 0) {
#pragma unroll
        for (int hi = 0; hi < 2; hi++) {
            if (m0 + rloc[hi] < M) store_lse(p, split_out, split, b, qh[hi], qi[hi], m_i[hi], l_i[hi]);
        }
    }
}

// The second half of steps 2a and 2a': the tile's copies waited for (cp.async; KT: the kv barrier
// at `phase` too), V transposed to K-major (the FG20 variant copies it as stored; KT zeroes its
// rows past `end`, on the one tile that ends before DEC_BN keys: the test is CTA-uniform, whole
// tiles skip the selects), and all of it made visible to the async proxy (the MMAs) and to every
// thread. --kv-tma 2 issued the copies during the tile before and starts each tile here.
enum { DEC_SITE_KV_TMA = 3 }; // the watchdog's wait site of the TMA gather (1, 2: the ring's)
template <int D, bool KT, int NTH = DEC_SM90_THREADS>
static __device__ __forceinline__ void kv_tile_land(const dec_params &p, int kv0, int end, const uint8_t *smem_vs,
                                                    uint8_t *smem_vt, const smem_tile &tk, const smem_tile &tv_mn,
                                                    bool v_mn, uint32_t bar, uint32_t phase)
{
    cp_async_wait_all();
    if constexpr (KT) mbar_wait(bar, phase, p.wd, DEC_SITE_KV_TMA);
    __syncthreads();
    if (KT && end - kv0 < DEC_BN) transpose_v<D, true, NTH / 32>(smem_vs, smem_vt, tk, threadIdx.x, end - kv0);
    else if (!KT && v_mn) copy_v_as_stored<D, NTH>(smem_vs, smem_vt, tv_mn.bytes); // FG20 (no TMA: stage_d.c)
    else transpose_v<D, false, NTH / 32>(smem_vs, smem_vt, tk, threadIdx.x);
    fence_proxy_async();
    __syncthreads();
}

// Steps 2a and 2a' of both kernels: the tile's K, V and scales gathered (cp.async; KT: K and V by
// TMA boxes on the kv barrier `bar`, waited for at `phase`), the L2 prefetch of tiles pf_lo..pf_hi
// issued behind them (--prefetch: dec_prefetch_range), then landed and transposed (kv_tile_land).
// NTH: the CTA's threads (256: two warpgroups share the tile; the first gathers, all transpose).
template <int D, bool KT, int NTH = DEC_SM90_THREADS>
static __device__ __forceinline__ void kv_tile_in(const dec_sm90_args &a, const int32_t *table, int hk, int kv0,
                                                  int end, uint8_t *smem_k, uint8_t *smem_vs, uint8_t *smem_vt,
                                                  const smem_tile &tk, const smem_tile &tv_mn, const smem_tile &tvt,
                                                  float *sk, float *sv, bool v_mn, int pf_lo, int pf_hi, uint32_t bar,
                                                  uint32_t phase)
{
    const dec_params &p = a.p;
    if (NTH == DEC_SM90_THREADS || threadIdx.x < DEC_SM90_THREADS) { // the first warpgroup gathers
        if constexpr (KT) tma_gather_tile<D>(a, table, hk, kv0, end, smem_k, smem_vs, tk, sk, sv, bar);
        else gather_tile<D, DEC_SM90_THREADS>(p, table, hk, kv0, end, smem_k, smem_vs, tk, tv_mn, sk, sv, threadIdx.x);
        for (int q = pf_lo; q <= pf_hi; q++)
            prefetch_tile<D, DEC_SM90_THREADS>(p, table, hk, q * DEC_BN, end, threadIdx.x);
    }
    kv_tile_land<D, KT, NTH>(p, kv0, end, smem_vs, smem_vt, tk, tv_mn, v_mn, bar, phase);
}

// The pipelined decode (--ring R, the swapped kernel): load warps of their own (warps 4..) fill a
// ring of R slots ahead of the consumers (warps 0-3), which only wait for a slot, transpose its V
// and compute. The consumers meet at named barrier 1 (128 threads) instead of __syncthreads.
enum { DEC_SITE_RING_FULL = 1, DEC_SITE_RING_EMPTY = 2 }; // the watchdog's wait sites
template <int RING> static __device__ __forceinline__ void consumers_sync()
{
    if constexpr (RING > 0) named_bar_sync<1>(DEC_SM90_THREADS);
    else __syncthreads();
}

struct ring_slot {
    uint8_t *k, *vs; // [Bc x D] each, K-major SW128
    float *sk, *sv;  // [Bc] each
    uint8_t *vt;     // [D x Bc] K-major SW128: V transposed, A of O^T = V^T P^T
};
template <int D> static __device__ __forceinline__ ring_slot ring_slot_at(uint8_t *ring_base, int slot)
{
    const dec_ring_slot_offsets o = dec_ring_slot_at(D, slot);
    ring_slot r = {ring_base + o.k, ring_base + o.vs, (float *)(ring_base + o.sk), (float *)(ring_base + o.sv), ring_base + o.vt};
    return r;
}

enum { DEC_LOAD_BAR = 2 }; // the load warps' named barrier (1 is the consumers')
// svm (the 64-row ring's): the tile's largest V scale, one a load warp (warp w over keys 32w..32w+31;
// zeros past the sequence), for the consumers' P scale before their exponentials (softmax_tile_as's SVM)
// valid: the tile's tokens before the sequence's end, where the TMA gather (whole pages) left rows
// past it as the page held them: V's become zeros in the transpose (the cp.async gather zero-fills)
template <int D, bool PERM = false>
static __device__ __forceinline__ void publish(const ring_slot &sl, uint32_t full, const smem_tile &tk, int lt,
                                               float *svm = nullptr, int valid = DEC_BN)
{
    static_assert(DEC_SM90_LOAD_THREADS == 128 && DEC_BN == DEC_SM90_LOAD_THREADS, "the transpose takes a warpgroup, a key a thread");
    named_bar_sync<DEC_LOAD_BAR>(DEC_SM90_LOAD_THREADS);
    if (svm) {
        const float m = warp_max_over_keys(quad_max(sl.sv[lt])); // over the warp's 32 keys
        if ((lt & 31) == 0) svm[lt / 32] = m;
    }
    if (valid < DEC_BN) transpose_v<D, true, DEC_SM90_THREADS / 32, PERM>(sl.vs, sl.vt, tk, (unsigned)lt, valid);
    else transpose_v<D, false, DEC_SM90_THREADS / 32, PERM>(sl.vs, sl.vt, tk, (unsigned)lt);
    fence_proxy_async();
    mbar_arrive(full);
}

// The load role's loop: wait for the slot's release, gather, publish the tile before (publish).
// NCONS: the consumer threads before the load warps (the swapped kernel's one warpgroup, or the
// 64-row ring kernel's two). SLEEP: the wait for a slot's release sleeps between probes (stage F's
// producer's wait), so the load warps' probes leave the issue slots to the consumers (the 64-row
// ring kernel's; the swapped ring kernel keeps the spin it was measured with). PERM: V^T's keys in
// the order of the consumers' P registers (the 64-row ring kernel; transpose_v). svm: where slot s's
// V-scale maxima go (svm + 4 s, publish), or none (the swapped ring kernel).
// KT (--kv-tma 1, the ring past 32 rows): the gather is TMA's. The first load warp's lane q looks
// up box q (a page of the tile, tma_box_of) and issues it onto the slot's landed barrier, lane 0
// having announced the boxes' bytes (FG15); every load thread copies its token's two scales by
// cp.async. Publishing the tile before then also waits for its boxes (the landed barrier, every
// load thread) and zeroes V's rows past the sequence's end (a box lands its whole page); K's rows
// there keep what the page or the slot held, and only meet masked scores. The boxes need a page of
// whole tiles or a tile of whole pages of 8 tokens or more (dec_kv_tma_fits, stage_d.c). The gather
// of a tile is then about 40 instructions a load warp instead of the cp.async loop's 8 x 25.
template <int D, int RING, int NCONS = DEC_SM90_THREADS, bool SLEEP = false, bool PERM = false, bool KT = false>
static __device__ __forceinline__ void load_role(const dec_sm90_args &a, const int32_t *table, int hk, int t0, int t1,
                                                 int end, uint8_t *ring_base, uint32_t bars, const smem_tile &tk,
                                                 const smem_tile &tv_mn, float *svm = nullptr)
{
    static_assert(RING >= 2, "the load role publishes tile j - 1 after issuing tile j");
    const dec_params &p = a.p;
    const int lt = threadIdx.x - NCONS; // 0 .. DEC_SM90_LOAD_THREADS - 1
    ring_state s = ring_make(RING);
    int pending = -1, pending_kv0 = 0; // the slot whose copies are in flight and not yet published
    unsigned pending_parity = 0;       // KT: its landed barrier's phase
    const auto publish_pending = [&]() {
        int valid = DEC_BN; // the cp.async gather zero-fills the rows past the end itself
        if constexpr (KT) {
            mbar_wait(bars + 8u * dec_ring_land_bar(RING, pending), pending_parity, p.wd, DEC_SITE_KV_TMA);
            valid = min(end - pending_kv0, (int)DEC_BN);
        }
        publish<D, PERM>(ring_slot_at<D>(ring_base, pending), bars + 8u * dec_ring_full_bar(pending), tk, lt,
                         svm ? svm + 4 * pending : nullptr, valid);
    };
    for (int j = t0; j < t1; j++) {
        const uint32_t empty = bars + 8u * dec_ring_empty_bar(RING, s.slot);
        if constexpr (SLEEP) mbar_wait_budget_sleep(empty, ring_empty_parity(&s), p.wd, DEC_SITE_RING_EMPTY, FMHA_MBAR_WAIT_PROBES);
        else mbar_wait(empty, ring_empty_parity(&s), p.wd, DEC_SITE_RING_EMPTY);
        const ring_slot sl = ring_slot_at<D>(ring_base, s.slot);
        const int kv0 = j * DEC_BN;
        if constexpr (KT) {
            if (lt < 32)
                tma_issue_boxes<D>(a, tma_box_of(p, table, kv0, end, lt), hk, sl.k, sl.vs, tk,
                                   bars + 8u * dec_ring_land_bar(RING, s.slot), lt);
            scales_issue(p, scale_row_of(p, table, kv0, end, hk, lt), sl.sk, sl.sv, lt);
        } else {
            gather_tile<D, DEC_SM90_LOAD_THREADS>(p, table, hk, kv0, end, sl.k, sl.vs, tk, tv_mn, sl.sk, sl.sv, lt);
        }
        cp_async_commit();
        if (pending >= 0) {
            cp_async_wait_group<1>();
            publish_pending();
        }
        pending = s.slot, pending_kv0 = kv0, pending_parity = ring_full_parity(&s);
        ring_advance(&s);
    }
    cp_async_wait_all();
    publish_pending();
}

#endif

// The thread's packed rows: accumulator register i of an m64nNR fragment is column (packed row)
// 8 (i / 4) + 2 (lane % 4) + (i % 2) (model/frag_map.h); jr = 2 (i / 4) + (i % 2) numbers the NR / 4
// rows a thread holds, the same in S^T and O^T (both have the packed rows as N).
static __device__ __forceinline__ int row_of(int jr) { return 8 * (jr / 2) + 2 * (threadIdx.x % 4) + jr % 2; }
static __device__ __forceinline__ int jr_of(int i) { return 2 * (i >> 2) + (i & 1); }

#endif
