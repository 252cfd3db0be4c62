/* Stage F's own part of the attention forward: the K/V ring in SMEM, the mbarriers of its slots,
 * the pipeline switches and the entry points of its three backends (fmha_sm90.cu, fmha_sm100.cu,
 * fmha_emu.c). The attention core is common/attn/fmha_core.h, the tensor maps
 * common/attn/fmha_tma.h (as stage E), the ring's {slot, phase} state common/attn/ring.h. The one
 * idea over stage E: the single K and V buffers become a ring of R slots that a producer keeps
 * full ahead of the consumers, and the consumers' MMAs and softmax overlap. */
#ifndef FMHA_STAGE_F_FMHA_H
#define FMHA_STAGE_F_FMHA_H

#include <stdint.h>
#include <string.h>

#include "attn/fmha_core.h"
#include "attn/fmha_tma.h"
#include "attn/ring.h"
#include "model/smem_layout.h"

#define FMHA_RING_MAX 3

/* The mbarriers every backend shares (sm100 adds its own after FMHA_RING_BARS: flow_sm100.h):
 *   q_full         1 arrive.expect_tx + the Q tile's bytes
 *   k_full[slot]   1 + K_j's bytes          v_full[slot]  1 + V_j's bytes
 *   k_empty[slot]  the MMAs that read K in this slot have completed: sm90 the consumer warps
 *                  (4 per consumer warpgroup), sm100 one tcgen05.commit
 *   v_empty[slot]  the same for V */
enum {
    FMHA_F_BAR_Q_FULL = 0,
    FMHA_F_BAR_K_FULL = 1,
    FMHA_F_BAR_V_FULL = FMHA_F_BAR_K_FULL + FMHA_RING_MAX,
    FMHA_F_BAR_K_EMPTY = FMHA_F_BAR_V_FULL + FMHA_RING_MAX,
    FMHA_F_BAR_V_EMPTY = FMHA_F_BAR_K_EMPTY + FMHA_RING_MAX,
    FMHA_RING_BARS = FMHA_F_BAR_V_EMPTY + FMHA_RING_MAX,
    FMHA_F_MAX_BARS = FMHA_RING_BARS + 12 /* room for a backend's own (sm100: S, P, O) */
};

/* sm90 --persistent 1 adds its own after the ring's: the second Q buffer's full barrier and both
 * buffers' empty barriers (the consumer warps arrive once their tile's O has left the buffer);
 * then two 8-byte words that are no barriers: the tile index the producer loaded into each Q
 * buffer (-1: no tile left), written before the buffer's full barrier is armed. */
enum {
    FMHA_F_BAR_SM90_Q1_FULL = FMHA_RING_BARS,
    FMHA_F_BAR_SM90_Q_EMPTY = FMHA_RING_BARS + 1, /* + buffer */
    FMHA_F_SM90_TILE_WORD = FMHA_RING_BARS + 3    /* + buffer */
};

/* sm90: warpgroup 0 is the producer when ws = 1 (one thread issues the TMA copies, the group
 * gives its registers back), warpgroups 1 .. nc the consumers (64 query rows each: nc = 2, a
 * 128-row query tile, or --consumers 3 at D = 64, 192 rows as FlashAttention-3 takes them). With
 * ws = 0 the two consumer warpgroups are the whole CTA and consumer thread 0 also produces
 * (stage E). */
enum { FMHA_F_SM100_THREADS = 192 };
FMHA_HD int fmha_f_sm90_threads(int ws, int nc) { return 128 * (nc + (ws ? 1 : 0)); }
/* The empty barriers count the consumer warps: 4 a group. */
FMHA_HD int fmha_f_sm90_consumer_warps(int nc) { return 4 * nc; }
/* sm90 with warp specialisation: the producer group gives registers back, the consumer groups take
 * them. Two consumer groups (384 threads): 40 and 232 (128 x 40 + 256 x 232 = 64512 of the SM's
 * 65536), or with 176-key tiles 24 and 240 (FlashAttention-3's split: S, P and O take 196); three
 * (512 threads): 24 and 160 (128 x 24 + 384 x 160 = 64512). */
enum { FMHA_F_PRODUCER_REGS = 40, FMHA_F_CONSUMER_REGS = 232, FMHA_F_PRODUCER_REGS_3 = 24, FMHA_F_CONSUMER_REGS_3 = 160,
       FMHA_F_PRODUCER_REGS_176 = 24, FMHA_F_CONSUMER_REGS_176 = 240 };
/* ptxas gives every thread the launch bound's share (65536 / 384 = 168, 65536 / 512 = 128, to a
 * multiple of 8); the consumers' setmaxnreg.inc waits until the producer's .dec has put enough
 * back in the pool, for ever if it never can: the split must fit what the launch holds. */
#ifdef __cplusplus
static_assert(128 * FMHA_F_PRODUCER_REGS + 256 * FMHA_F_CONSUMER_REGS <= 384 * 168,
              "the register split must fit the 384-thread launch's 168 registers a thread");
static_assert(128 * FMHA_F_PRODUCER_REGS_3 + 384 * FMHA_F_CONSUMER_REGS_3 <= 512 * 128,
              "the register split must fit the 512-thread launch's 128 registers a thread");
static_assert(128 * FMHA_F_PRODUCER_REGS_176 + 256 * FMHA_F_CONSUMER_REGS_176 <= 384 * 168,
              "the 176-key split must fit the 384-thread launch's 168 registers a thread");
#else
_Static_assert(128 * FMHA_F_PRODUCER_REGS + 256 * FMHA_F_CONSUMER_REGS <= 384 * 168,
               "the register split must fit the 384-thread launch's 168 registers a thread");
_Static_assert(128 * FMHA_F_PRODUCER_REGS_3 + 384 * FMHA_F_CONSUMER_REGS_3 <= 512 * 128,
               "the register split must fit the 512-thread launch's 128 registers a thread");
_Static_assert(128 * FMHA_F_PRODUCER_REGS_176 + 256 * FMHA_F_CONSUMER_REGS_176 <= 384 * 168,
               "the 176-key split must fit the 384-thread launch's 168 registers a thread");
#endif
/* sm90's ping-pong: consumer group c waits on named barrier FMHA_F_TURN_BAR + c for its turn at
 * the tensor cores; group c - 1's arrival there (the last group's, for group 0) hands it over.
 * 256 threads: the waiting group and the one handing over. */
enum { FMHA_F_TURN_BAR = 1, FMHA_F_TURN_THREADS = 256 };
/* --consumers 3: a third consumer group of 64 rows; its 160 registers hold S, P and O up to D = 64. */
#define FMHA_F_SM90_THREE_OK(d) ((d) <= 64)
/* The split with two consumer groups for a key tile of bn keys: 24 / 240 with 176-key tiles, else
 * 40 / 232. The producer's .dec and the consumers' .inc take both from here: a mismatched pair
 * would leave the .inc waiting for registers nobody gives back. */
#define FMHA_F_SM90_PRODUCER_REGS_BN(bn) ((bn) == 176 ? FMHA_F_PRODUCER_REGS_176 : FMHA_F_PRODUCER_REGS)
#define FMHA_F_SM90_CONSUMER_REGS_BN(bn) ((bn) == 176 ? FMHA_F_CONSUMER_REGS_176 : FMHA_F_CONSUMER_REGS)
/* sm90's overlap holds S_j (bn / 2 registers), P_{j-1} (bn / 4) and O (d / 2) in registers, with
 * 44 more for the rest (row statistics, addresses, the loop's state): with 128-key tiles up to
 * D = 128 (160 of them), not at D = 256 (224 of the consumers' 232); with 64-key tiles at D = 256
 * (176); with 176-key tiles at D = 128 (196 of 240, as FlashAttention-3 holds them). fmha_sm90.cu,
 * stage_f.c. */
#define FMHA_F_SM90_OVERLAP_FITS(d, bn) ((bn) / 2 + (bn) / 4 + (d) / 2 + 44 <= FMHA_F_SM90_CONSUMER_REGS_BN(bn))
/* sm90's key tiles besides 128 (--kv-tile, switches; auto keeps 128), each a kernel of its own:
 * 64 at D = 256, where Q and two K/V slot pairs of 128 keys (64 + 2 x 128 KB) are past the SMEM
 * and of 64 keys (64 + 2 x 64 KB) fit, so the ring gets its second slot; 176 at D = 128
 * (FlashAttention-3's non-causal tile: Q and two pairs, 32 + 2 x 88 KB), 27% fewer KV tiles a row,
 * so fewer of each tile's fixed instructions (its waits and releases, O's rescale, the row max's
 * shuffles, the MMAs' issue). */
#define FMHA_F_SM90_COLS64_OK(d) ((d) == 256)
#define FMHA_F_SM90_COLS176_OK(d) ((d) == 128)
/* sm90 overlap: how many of a thread's Bc / 2 scores (64 at 128 keys) are exponentiated before the wait for the
 * previous tile's P V (the rest run after it, interleaved with O's rescale). Measured on the H200
 * (notes/stage-f-perf.md): 0, 8, 16 and 32 within 0.4% at D128 S8k, 8 the best causal, at S 2k
 * and at D 64; 32 is 7% slower at D 64. */
#ifndef FMHA_F_EXP_BEFORE_PV
#define FMHA_F_EXP_BEFORE_PV 8
#endif

/* The SMEM of one CTA: Q [Br x D] K-major SW128 (Br = 128, or 192 with three consumer groups) (it
 * stages O for the TMA store at the end, as in stage E), then the ring: K slots [Bc x D] K-major
 * SW128, V slots [Bc x D] MN-major SW128 (Bc = 128 keys, or sm90's 64 at D = 256, 176 at D = 128), then (sm90
 * --persistent 1) a second Q buffer, then the mbarriers (and sm100's TMEM address slot). */
enum { FMHA_F_SMEM_Q = 0, FMHA_F_SMEM_K = 1, FMHA_F_SMEM_V = FMHA_F_SMEM_K + FMHA_RING_MAX,
       FMHA_F_SMEM_Q1 = FMHA_F_SMEM_V + FMHA_RING_MAX };
#ifdef __cplusplus
static_assert(FMHA_F_SMEM_Q1 < SMEM_MAX_TILES, "the second Q buffer needs a tile of its own in smem_layout");
#else
_Static_assert(FMHA_F_SMEM_Q1 < SMEM_MAX_TILES, "the second Q buffer needs a tile of its own in smem_layout");
#endif

FMHA_HD smem_layout fmha_f_smem_layout_make_kv(int d, int ring, int rows, int qbufs, int cols)
{
    uint32_t tiles[2 + 2 * FMHA_RING_MAX];
    int n = 0;
    tiles[n++] = fmha_q_tile_rows(d, rows).bytes;
    for (int s = 0; s < FMHA_RING_MAX; s++) tiles[n++] = s < ring ? fmha_k_tile_cols(d, cols).bytes : 0u;
    for (int s = 0; s < FMHA_RING_MAX; s++) tiles[n++] = s < ring ? fmha_v_tile_cols(d, cols).bytes : 0u;
    tiles[n++] = qbufs > 1 ? fmha_q_tile_rows(d, rows).bytes : 0u;
    return smem_layout_make(tiles, n, FMHA_F_MAX_BARS);
}
FMHA_HD smem_layout fmha_f_smem_layout_make_q(int d, int ring, int rows, int qbufs)
{
    return fmha_f_smem_layout_make_kv(d, ring, rows, qbufs, FMHA_BN);
}
FMHA_HD smem_layout fmha_f_smem_layout_make_rows(int d, int ring, int rows)
{
    return fmha_f_smem_layout_make_q(d, ring, rows, 1);
}
/* The layout at FMHA_BM query rows and FMHA_BN keys (sm100, emu, sm90 with two consumer groups). */
FMHA_HD smem_layout fmha_f_smem_layout_make(int d, int ring) { return fmha_f_smem_layout_make_rows(d, ring, FMHA_BM); }

/* Short rows: a query tile of FMHA_BM rows sees fewer than FMHA_F_SHORT_KV_TILES KV tiles on
 * average (the causal mask counted, as fmha_kv_tiles_rows counts them). --persistent auto and
 * --consumers auto use it (stage_f.c says what the H200 measured either side of 24). */
#define FMHA_F_SHORT_KV_TILES 24
FMHA_HD int fmha_f_short_rows(int sq, int skv, int causal)
{
    fmha_params p;
    memset(&p, 0, sizeof p);
    p.sq = sq, p.skv = skv, p.causal = causal;
    const int nq = (sq + FMHA_BM - 1) / FMHA_BM;
    long tiles = 0;
    for (int q = 0; q < nq; q++) tiles += fmha_kv_tiles_rows(&p, q * FMHA_BM, FMHA_BM);
    return nq > 0 && tiles < (long)FMHA_F_SHORT_KV_TILES * nq;
}

/* --ring auto: the deepest ring of 1..2 slots whose SMEM fits (D = 256 with 128-key tiles: 1, with
 * 64-key tiles: 2; a third slot is a switch to measure, not the default). */
FMHA_HD int fmha_f_auto_ring_cols(int d, int cols)
{
    for (int r = 2; r > 1; r--)
        if (fmha_f_smem_layout_make_kv(d, r, FMHA_BM, 1, cols).bytes <= SMEM_OPTIN_MAX_BYTES) return r;
    return 1;
}
FMHA_HD int fmha_f_auto_ring(int d) { return fmha_f_auto_ring_cols(d, FMHA_BN); }

/* The parity a producer waits on a slot's empty barrier: the opposite of the ring's phase (a fresh
 * barrier passes it at once: FG16), or (the FG16 variant) the same one, on which the first pass
 * through the ring waits for ever. */
FMHA_HD uint32_t fmha_f_empty_parity(const ring_state *s, unsigned faults)
{
    return (faults & FMHA_FAULT_RING_SAME_PARITY) ? ring_full_parity(s) : ring_empty_parity(s);
}

/* The ring's advance; the FG15/16 variant forgets to flip the phase at the wrap, so on the second
 * pass the consumers wait for the phase that has already completed and read a slot early. */
FMHA_HD void fmha_f_ring_advance(ring_state *s, unsigned faults)
{
    const unsigned phase = s->phase;
    ring_advance(s);
    if (faults & FMHA_FAULT_RING_NO_FLIP) s->phase = phase;
}

#ifdef __cplusplus
extern "C" {
#endif
/* GPU launchers (params: const fmha_params * with device pointers and p->pipe set): build the
 * tensor maps (fmha_tmaps_encode), launch. 0, or 1 after printing what went wrong. */
int stage_f_sm100_launch(const void *params);
int stage_f_sm90_launch(const void *params);
#ifdef __cplusplus
}
#endif

/* What the softmax warps saw: of the tiles each row met after its first visible key (row_tiles),
 * those on which its max moved (max_moves) and O was rescaled; --rescale-th N > 0 makes them
 * fewer (the lagging max). */
typedef struct {
    long row_tiles, max_moves;
} stage_f_emu_stats;

/* The sm100 pipeline on the host model as an event simulation (model/role_sim.h): each role runs
 * until it waits. 0, or 1 with the model's message (a deadlock report, a read of a slot before its
 * full barrier completed, ...) in err. stats (may be NULL) gets the softmax's counts. */
int stage_f_emu_run(const fmha_params *p, uint64_t seed, stage_f_emu_stats *stats, char *err, int errlen);

#endif
