/* Stage F on the host model ("emu"): the sm100 pipeline of fmha_sm100.cu as an event simulation
 * (model/role_sim.h). Each role of the kernel is a step function that runs until it waits on an
 * mbarrier model, and the scheduler interleaves them by seed (0: round robin), so one seed is one
 * timing of the GPU and many seeds explore many:
 *   load warp      Q, then K_j / V_j into ring slot j % R once its empty barrier passes (2a)
 *   MMA warp       issues the S MMAs (2b, 2b') and the P V MMAs (2e) and their commits
 *   softmax 0-3    one role per warp: online softmax, correction, P (2c, 2d), epilogue (3)
 * and the two asynchronous units the kernel drives, which is where the ring's hazards live:
 *   TMA unit       an issued load is in flight until this role lands it (model/tma_flight.h: the
 *                  box into the SMEM image, its bytes onto the full barrier), at a later step of
 *                  its choosing; only then does the full barrier's phase complete
 *   tensor core    an issued MMA or commit only enters its queue; this role executes one per
 *                  step, in an order the PTX ISA allows (9.7.16.6.2 "Pipelined tcgen05
 *                  Instructions": MMAs into the same accumulator in issue order, otherwise any
 *                  order; 9.7.16.12.1: a commit arrives once every MMA issued before it has
 *                  completed), drawn by the seed (0: issue order). An MMA reads its SMEM operands
 *                  when it executes: at its commit's issue (the MMA warp issues a tile's MMAs and
 *                  commits in one step) or later, as on the GPU
 * Same encoders, tiles, SMEM layout (fmha_f_smem_layout_make), TMEM map, barriers and counts
 * (flow_sm100.h) and step labels as the kernel.
 *
 * The model checks what the GPU would only show as wrong numbers or a hang:
 *   - an MMA that reads a ring slot whose full barrier has not completed that tile's phase (a
 *     consumer that passed its wait on a stale phase: FG15/16's ring-no-flip), or a slot into
 *     which a later tile's load has been issued: the slot was released before the MMA that reads
 *     it completed (FG23's early release);
 *   - a load issued into a slot whose empty barrier has not completed the phase it needs;
 *   - TMEM reuse out of order: S overwritten before the softmax read it, P before the P V that
 *     read it completed, O rescaled before the previous P V completed;
 *   - a deadlock, reported by role_sim with every blocked role, its barrier and parity (FG16's
 *     ring-same-parity: the load warp at its first empty wait; FG11's multicast commit: the
 *     softmax warps at s_full, whose arrive went to CTA rank 1 of a 1-CTA cluster).
 * Every CTA of the grid runs, one after the other, on one TMEM model and one SMEM image (as stage
 * E); CTA i runs with seed ^ i (seed 0: round robin in every CTA). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_sm100.h"
#include "fmha.h"
#include "host/bf16.h"
#include "host/fmha_tmaps.h"
#include "model/emu_flow.h"
#include "model/frag_map.h"
#include "model/idesc.h"
#include "model/mbar_model.h"
#include "model/mma_emu.h"
#include "model/role_sim.h"
#include "model/tma_flight.h"
#include "model/tma_model.h"
#include "model/tmem_model.h"

/* A role's step function resumes where it stopped: ROLE_BEGIN jumps to the line of its last wait
 * (the switch-on-line idiom of protothreads), so each role reads top to bottom like the kernel's
 * code, with its waits in place. Locals do not survive a wait; what must lives in the role's
 * state. A wait always returns to the scheduler, even one that would pass at once: every wait is
 * a point where the other roles may run first. */
#define ROLE_BEGIN(st) switch ((st)->pc) { case 0:
#define ROLE_WAIT(sim, role, st, barp, parity, what)                          \
    do {                                                                      \
        (st)->pc = __LINE__;                                                  \
        role_wait_on((sim), (role), (barp), (int)(parity), (what));           \
        return ROLE_STEP_WAIT;                                                \
    case __LINE__:;                                                           \
    } while (0)
#define ROLE_YIELD(sim, role, st)                                             \
    do {                                                                      \
        (st)->pc = __LINE__;                                                  \
        role_yield((sim), (role));                                            \
        return ROLE_STEP_WAIT;                                                \
    case __LINE__:;                                                           \
    } while (0)
#define ROLE_END(st) } (st)->pc = -1; return ROLE_STEP_DONE

/* ---- the run and the CTA ------------------------------------------------------------------- */

typedef struct {
    emu_flow f;
    const fmha_params *p;
    uint8_t *img;       /* the CTA's SMEM image, laid out by fmha_f_smem_layout_make */
    uint8_t *view;      /* the CTA's SMEM as the async proxy sees it */
    smem_layout L;
    smem_tile tq, tk, tv;
    tmap_params map[FMHA_TENSOR_COUNT]; /* the launchers' maps, global address 0 = the tensor's start */
    tma_store_queue st; /* O's TMA stores not yet read (across CTAs: FG22's missing wait) */
    stage_f_emu_stats stats;
} emu_ctx;

/* What the tensor core's queue holds: one MMA instruction or one commit, in issue order. */
typedef enum { OP_S_MMA, OP_PV_MMA, OP_COMMIT } tc_op_kind;
typedef struct {
    tc_op_kind kind;
    int tile, slot, buf, k; /* an MMA: its KV tile, the ring slot it reads, its S or P buffer, its K offset */
    int bar;                /* a commit: the barrier index (flow_sm100.h) */
    unsigned cta_mask;      /* a commit: 0 = this CTA's barrier, else the .multicast::cluster ctaMask */
} tc_op;
#define TC_QUEUE_MAX 256

typedef struct cta_sim cta_sim;
typedef struct { cta_sim *cs; int pc, j; ring_state s; int tb; } load_state;
typedef struct { cta_sim *cs; int pc, j; ring_state ks, vs, sb, pb, pf; int tb; } mma_state;
typedef struct {
    cta_sim *cs;
    int pc, w, j, tb;
    ring_state sb, od;
    float m[32], l[32], alpha[32];
    uint32_t pk[32 * FMHA_BN / 2]; /* P_j of the warp's 32 rows, bf16 pairs */
} softmax_state;
typedef struct { cta_sim *cs; int pc; } unit_state;

struct cta_sim {
    emu_ctx *c;
    const fmha_params *p;
    int b, h, q0, ntiles, ring, nbuf, overlap;
    uint32_t tmem, smem_q, smem_k[FMHA_RING_MAX], smem_v[FMHA_RING_MAX];
    mbar_model bar[FMHA_F_SM100_BARS];
    char bar_name[FMHA_F_SM100_BARS][16];
    mbar_model tmem_bar;          /* named barrier 1 of warps 0-4 (flow_sm100.h), counted in warps */
    int tmem_published;           /* the MMA warp has written the TMEM address into SMEM */
    tma_flight fl;
    uint64_t rng;                 /* the asynchronous units' choices (0: oldest first) */
    /* the asynchronous units and their doorbells: an idle unit waits on its bell (a model-only
     * barrier), which the issuing lane rings, so an idle unit is a waiter, not a busy loop */
    tc_op q[TC_QUEUE_MAX];        /* in issue order; executed ones are removed */
    int q_n;
    mbar_model tma_bell, tc_bell;
    ring_state tma_bell_rs, tc_bell_rs;
    int tma_asleep, tc_asleep, loads_done, mmas_done;
    /* the model's bookkeeping for its checks */
    int k_tile[FMHA_RING_MAX], v_tile[FMHA_RING_MAX]; /* the tile whose load was issued last into the slot */
    int s_last[2];                                    /* per S buffer: the last tile whose S MMAs have all executed */
    int pv_tiles_done;                                /* tiles whose P V MMAs have all executed (one accumulator: in order) */
    int s_read[FMHA_F_SOFTMAX_WARPS], p_written[FMHA_F_SOFTMAX_WARPS]; /* per softmax warp: tiles */
    int lost_arrives;                                 /* FG11: commits' arrives to absent CTAs, */
    uint32_t lost_bars;                               /* and the barriers they were meant for (bit = index) */
    int stores_flushed;
    char msg[400];
    load_state ld;
    mma_state mma;
    softmax_state sm[FMHA_F_SOFTMAX_WARPS];
    unit_state tma, tc;
};

static role_step fail(role_sim *sim, cta_sim *cs) { return role_sim_fail(sim, cs->msg); }

static uint64_t next_rand(uint64_t *x) /* xorshift64, as role_sim's */
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Ring the bell of an idle unit (once per sleep, so the model never over-arrives on it). */
static void ring_bell(mbar_model *bell, int *asleep)
{
    if (!*asleep) return;
    *asleep = 0;
    mbar_model_arrive(bell);
}

/* ---- the load warp (step 1's Q, step 2a) --------------------------------------------------- */

/* arrive.expect_tx of the tile's bytes on barrier `bar`, then its D / 64 boxes into the TMA
 * unit's flight (K-major tiles take box c at the K offset 64c, V at the MN offset). */
static int issue_tile(cta_sim *cs, fmha_tensor t, const void *global, uint32_t tile, const smem_tile *st, int row0, int head,
                      int bar)
{
    const int d = cs->p->d, rows = t == FMHA_TENSOR_Q ? FMHA_BM : FMHA_BN;
    const mbar_status ms = mbar_model_arrive_expect_tx(&cs->bar[bar], (int)fmha_tile_tx_bytes(d, rows));
    if (ms != MBAR_OK) {
        snprintf(cs->msg, sizeof cs->msg, "load warp: arrive.expect_tx on %s: %s", cs->bar_name[bar], mbar_status_name(ms));
        return 1;
    }
    for (int k = 0; k < d / FMHA_BOX_COLS; k++) {
        const uint32_t slab = st->major == MAJOR_K ? smem_tile_offset(st, 0, FMHA_BOX_COLS * k) : smem_tile_offset(st, FMHA_BOX_COLS * k, 0);
        const int32_t coords[4] = {FMHA_BOX_COLS * k, row0, head, cs->b};
        if (tma_flight_issue(&cs->fl, &cs->c->map[t], global, coords, tile + slab, &cs->bar[bar])) {
            snprintf(cs->msg, sizeof cs->msg, "load warp: %s", cs->fl.msg);
            return 1;
        }
    }
    ring_bell(&cs->tma_bell, &cs->tma_asleep);
    return 0;
}

/* The load of tile j into a slot needs the slot's empty barrier to have completed j / R phases
 * (one release per earlier tile in the slot); a wait on a stale phase lets it through earlier. */
static int check_released(cta_sim *cs, int empty, int j, const char *what)
{
    const uint32_t need = (uint32_t)(j / cs->ring);
    if (cs->bar[empty].phase >= need) return 0;
    snprintf(cs->msg, sizeof cs->msg,
             "load warp: %s_%d issued into slot %d before the slot was released: %s has completed %u phases, tile %d "
             "needs %u (the empty wait passed on a stale phase)",
             what, j, fmha_f_bar_index(empty), cs->bar_name[empty], cs->bar[empty].phase, j, need);
    return 1;
}

static int issue_kv(cta_sim *cs, int v, int j, int slot)
{
    const fmha_params *p = cs->p;
    const int empty = (v ? FMHA_F_BAR_V_EMPTY : FMHA_F_BAR_K_EMPTY) + slot, full = (v ? FMHA_F_BAR_V_FULL : FMHA_F_BAR_K_FULL) + slot;
    if (check_released(cs, empty, j, v ? "V" : "K")) return 1;
    if (v) cs->v_tile[slot] = j;
    else cs->k_tile[slot] = j;
    return issue_tile(cs, v ? FMHA_TENSOR_V : FMHA_TENSOR_K, v ? (const void *)p->v : (const void *)p->k,
                      v ? cs->smem_v[slot] : cs->smem_k[slot], v ? &cs->c->tv : &cs->c->tk, j * FMHA_BN,
                      fmha_tma_kv_head(p, cs->h, v), full);
}

/* Step 1's named barrier (bar.sync 1, 160 threads: warps 0-4 read the TMEM address the MMA warp
 * wrote), modelled by a barrier that counts warps: a warp arrives and waits for the generation it
 * arrived in, and arrivals past the count start the next one (model/nbar_model.h's rule), so a
 * sixth warp (FG12) releases the barrier early and then waits for a generation nobody completes. */
#define TMEM_BAR_WHAT "the TMEM address barrier (bar.sync 1, 160 threads)"
static int tmem_bar_arrive(cta_sim *cs)
{
    const int gen = (int)cs->tmem_bar.phase;
    mbar_model_arrive(&cs->tmem_bar);
    return gen;
}

/* After the barrier: the address must be there (an early release reads it before it is). */
static int tmem_address_read(cta_sim *cs, const char *who)
{
    if (cs->tmem_published) return 0;
    snprintf(cs->msg, sizeof cs->msg,
             "%s read the TMEM address before the MMA warp had written it: named barrier 1 (160 threads, warps 0-4) "
             "released early, a warp outside it having joined (FG12)", who);
    return 1;
}

static role_step load_step(role_sim *sim, int role, void *state)
{
    load_state *st = state;
    cta_sim *cs = st->cs;
    const unsigned faults = cs->p->faults;
    ROLE_BEGIN(st);
    if (faults & FMHA_FAULT_NAMED_BAR_JOIN) { /* FG12: the load warp joins warps 0-4's barrier */
        st->tb = tmem_bar_arrive(cs);
        ROLE_WAIT(sim, role, st, &cs->tmem_bar, st->tb & 1, TMEM_BAR_WHAT);
    }
    /* Step 1: prologue: the Q tile (query head h, batch b) */
    if (issue_tile(cs, FMHA_TENSOR_Q, cs->p->q, cs->smem_q, &cs->c->tq, cs->q0, cs->h, FMHA_F_BAR_Q_FULL)) return fail(sim, cs);
    for (st->j = 0; st->j < cs->ntiles; st->j++) {
        /* Step 2a: K_j, V_j into slot j % R once the MMAs of tile j - R have read it */
        ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_K_EMPTY + st->s.slot], fmha_f_empty_parity(&st->s, faults),
                  cs->bar_name[FMHA_F_BAR_K_EMPTY + st->s.slot]);
        if (issue_kv(cs, 0, st->j, st->s.slot)) return fail(sim, cs);
        ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_V_EMPTY + st->s.slot], fmha_f_empty_parity(&st->s, faults),
                  cs->bar_name[FMHA_F_BAR_V_EMPTY + st->s.slot]);
        if (issue_kv(cs, 1, st->j, st->s.slot)) return fail(sim, cs);
        fmha_f_ring_advance(&st->s, faults);
    }
    cs->loads_done = 1;
    ring_bell(&cs->tma_bell, &cs->tma_asleep); /* so an idle TMA unit sees it may finish */
    ROLE_END(st);
}

/* ---- the TMA unit ------------------------------------------------------------------------- */

/* Land one load in flight: the barrier of a pending box (the oldest, or one drawn by the seed)
 * gets its boxes landed until its current phase completes (model/tma_flight.h). */
static int land_one(cta_sim *cs)
{
    const int i = cs->rng ? (int)(next_rand(&cs->rng) % (uint64_t)cs->fl.n) : 0;
    mbar_model *bar = cs->fl.box[i].bar;
    if (tma_flight_wait(&cs->fl, bar, (int)(bar->phase & 1u)) == 2) { /* 1: all its boxes landed, phase still open */
        snprintf(cs->msg, sizeof cs->msg, "TMA unit: %s", cs->fl.msg);
        return 1;
    }
    return 0;
}

static role_step tma_step(role_sim *sim, int role, void *state)
{
    unit_state *st = state;
    cta_sim *cs = st->cs;
    ROLE_BEGIN(st);
    for (;;) {
        if (cs->fl.n > 0) {
            if (land_one(cs)) return fail(sim, cs);
            ROLE_YIELD(sim, role, st);
        } else if (cs->loads_done) {
            break;
        } else {
            cs->tma_asleep = 1;
            ROLE_WAIT(sim, role, st, &cs->tma_bell, ring_full_parity(&cs->tma_bell_rs), "the TMA doorbell (no load in flight)");
            ring_advance(&cs->tma_bell_rs);
        }
    }
    ROLE_END(st);
}

/* ---- the MMA warp (steps 2b, 2b', 2e) ------------------------------------------------------ */

static int tc_push(cta_sim *cs, tc_op op)
{
    if (cs->q_n == TC_QUEUE_MAX) {
        snprintf(cs->msg, sizeof cs->msg, "MMA warp: more than %d tcgen05 operations queued", TC_QUEUE_MAX);
        return 1;
    }
    cs->q[cs->q_n++] = op;
    return 0;
}

static int tc_commit(cta_sim *cs, int bar, unsigned mask)
{
    const tc_op op = {OP_COMMIT, 0, 0, 0, 0, bar, mask};
    return tc_push(cs, op);
}

/* A ring slot handed back after the MMAs just issued: by a commit, which arrives once they have
 * executed, or (FG23) by a plain arrive now, while they are still queued. */
static int release_slot(cta_sim *cs, int empty)
{
    if (!(cs->p->faults & FMHA_FAULT_EARLY_RELEASE)) return tc_commit(cs, empty, 0);
    const mbar_status ms = mbar_model_arrive(&cs->bar[empty]);
    if (ms == MBAR_OK) return 0;
    snprintf(cs->msg, sizeof cs->msg, "MMA warp: arrive on %s: %s", cs->bar_name[empty], mbar_status_name(ms));
    return 1;
}

/* Steps 2b / 2b' after the k_full wait: S_j = Q K_j^T (D/16 MMAs) into S buffer sb.slot, the
 * commit onto s_full[b] (FG11: multicast to rank 1), the slot's release; both states advance. */
static int issue_s(cta_sim *cs, mma_state *st, int j)
{
    const int slot = st->ks.slot, buf = st->sb.slot;
    for (int k = 0; k < cs->p->d; k += 16) {
        const tc_op op = {OP_S_MMA, j, slot, buf, k, 0, 0};
        if (tc_push(cs, op)) return 1;
    }
    const unsigned mask = (cs->p->faults & FMHA_FAULT_COMMIT_MULTICAST) ? FMHA_F_FG11_CTA_MASK : 0u;
    if (tc_commit(cs, FMHA_F_BAR_S_FULL + buf, mask)) return 1;
    if (fmha_f_release_slot(j, cs->ring, cs->ntiles) && release_slot(cs, FMHA_F_BAR_K_EMPTY + slot)) return 1;
    fmha_f_ring_advance(&st->ks, cs->p->faults);
    ring_advance(&st->sb);
    ring_bell(&cs->tc_bell, &cs->tc_asleep);
    return 0;
}

/* Step 2e after the p_full and v_full waits: O += P_j V_j (8 TS MMAs, P from buffer pb.slot),
 * the commit onto o_done, the slot's release. */
static int issue_pv(cta_sim *cs, mma_state *st, int j)
{
    const int slot = st->vs.slot, buf = st->pb.slot;
    for (int k = 0; k < FMHA_BN; k += 16) {
        const tc_op op = {OP_PV_MMA, j, slot, buf, k, 0, 0};
        if (tc_push(cs, op)) return 1;
    }
    if (tc_commit(cs, FMHA_F_BAR_O_DONE, 0)) return 1;
    if (fmha_f_release_slot(j, cs->ring, cs->ntiles) && release_slot(cs, FMHA_F_BAR_V_EMPTY + slot)) return 1;
    fmha_f_ring_advance(&st->vs, cs->p->faults);
    ring_advance(&st->pb);
    ring_bell(&cs->tc_bell, &cs->tc_asleep);
    return 0;
}

#define MMA_WAIT_K(sim, role, st, cs) \
    ROLE_WAIT(sim, role, st, &(cs)->bar[FMHA_F_BAR_K_FULL + (st)->ks.slot], ring_full_parity(&(st)->ks), \
              (cs)->bar_name[FMHA_F_BAR_K_FULL + (st)->ks.slot])

static role_step mma_step(role_sim *sim, int role, void *state)
{
    mma_state *st = state;
    cta_sim *cs = st->cs;
    ROLE_BEGIN(st);
    /* Step 1: TMEM allocated, its address written, then the barrier of warps 0-4 */
    cs->tmem_published = 1;
    st->tb = tmem_bar_arrive(cs);
    ROLE_WAIT(sim, role, st, &cs->tmem_bar, st->tb & 1, TMEM_BAR_WHAT);
    ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_Q_FULL], 0, cs->bar_name[FMHA_F_BAR_Q_FULL]);
    if (cs->ntiles > 0) { /* Step 2b: S_0 */
        MMA_WAIT_K(sim, role, st, cs);
        if (issue_s(cs, st, 0)) return fail(sim, cs);
    }
    for (st->j = 0; st->j < cs->ntiles; st->j++) {
        if (cs->overlap && st->j + 1 < cs->ntiles) { /* Step 2b': S_{j+1} under the softmax of tile j */
            MMA_WAIT_K(sim, role, st, cs);
            if (issue_s(cs, st, st->j + 1)) return fail(sim, cs);
        }
        /* Step 2e: O += P_j V_j */
        ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_P_FULL], ring_full_parity(&st->pf), cs->bar_name[FMHA_F_BAR_P_FULL]);
        ring_advance(&st->pf);
        ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_V_FULL + st->vs.slot], ring_full_parity(&st->vs),
                  cs->bar_name[FMHA_F_BAR_V_FULL + st->vs.slot]);
        if (issue_pv(cs, st, st->j)) return fail(sim, cs);
        if (!cs->overlap && st->j + 1 < cs->ntiles) { /* Step 2b: S_{j+1} once the softmax has read S_j */
            MMA_WAIT_K(sim, role, st, cs);
            if (issue_s(cs, st, st->j + 1)) return fail(sim, cs);
        }
    }
    cs->mmas_done = 1;
    ring_bell(&cs->tc_bell, &cs->tc_asleep);
    ROLE_END(st);
}

/* ---- the tensor core ---------------------------------------------------------------------- */

/* The operand checks of an MMA that reads ring slot `slot` for tile j: the slot's full barrier
 * has completed the tile's phase (j / R), and no later tile's load has been issued into it. */
static int check_slot(cta_sim *cs, int v, int j, int slot, int k)
{
    const char *mma = v ? "P V" : "S", *op = v ? "V" : "K";
    const int full = (v ? FMHA_F_BAR_V_FULL : FMHA_F_BAR_K_FULL) + slot, held = v ? cs->v_tile[slot] : cs->k_tile[slot];
    const uint32_t need = (uint32_t)(j / cs->ring) + 1u;
    if (cs->bar[full].phase < need) {
        snprintf(cs->msg, sizeof cs->msg,
                 "the %s MMA of tile %d (k %d) read %s slot %d before its full barrier completed: %s has completed %u "
                 "phases, tile %d is its phase %u (a consumer passed its full wait on a stale phase)",
                 mma, j, k, op, slot, cs->bar_name[full], cs->bar[full].phase, j, need - 1u);
        return 1;
    }
    if (held != j) {
        snprintf(cs->msg, sizeof cs->msg,
                 "%s slot %d, tile %d: the slot was released before the MMA that reads it completed (the load of %s_%d "
                 "was issued into it while the %s MMA of tile %d, k %d, had not yet read it)",
                 op, slot, j, op, held, mma, j, k);
        return 1;
    }
    return 0;
}

static int mma_failed(cta_sim *cs, const emu_status *es)
{
    snprintf(cs->msg, sizeof cs->msg, "tensor core: %s", es->msg);
    return 1;
}

static int exec_s(cta_sim *cs, const tc_op *op)
{
    if (op->k == 0)
        for (int w = 0; w < FMHA_F_SOFTMAX_WARPS; w++)
            if (cs->s_read[w] < op->tile - cs->nbuf + 1) {
                snprintf(cs->msg, sizeof cs->msg, "S buffer %d: S_%d written before softmax warp %d had read S_%d", op->buf,
                         op->tile, w, op->tile - cs->nbuf);
                return 1;
            }
    if (cs->bar[FMHA_F_BAR_Q_FULL].phase < 1u) {
        snprintf(cs->msg, sizeof cs->msg, "the S MMA of tile %d read Q before q_full completed", op->tile);
        return 1;
    }
    if (check_slot(cs, 0, op->tile, op->slot, op->k)) return 1;
    const emu_ctx *c = cs->c;
    const smem_image im = {c->img, 0, c->L.used};
    const uint32_t idesc = idesc_bf16_f32(FMHA_BM, FMHA_BN, 0, 0);
    emu_status es = {0};
    if (emu_tcgen05_mma(c->f.tm, &im, cs->tmem + fmha_f_tmem_s(op->buf), 0, 0, smem_tile_desc_sm100(&c->tq, cs->smem_q, 0, op->k),
                        smem_tile_desc_sm100(&c->tk, cs->smem_k[op->slot], 0, op->k), idesc, MMA_KIND_F16, op->k > 0, &es))
        return mma_failed(cs, &es);
    if (op->k + 16 == cs->p->d) cs->s_last[op->buf] = op->tile; /* one buffer's MMAs run in order */
    return 0;
}

static int exec_pv(cta_sim *cs, const tc_op *op)
{
    if (op->k == 0)
        for (int w = 0; w < FMHA_F_SOFTMAX_WARPS; w++)
            if (cs->p_written[w] < op->tile + 1) {
                snprintf(cs->msg, sizeof cs->msg, "P buffer %d: the P V MMA of tile %d read it before softmax warp %d wrote P_%d",
                         op->buf, op->tile, w, op->tile);
                return 1;
            }
    if (check_slot(cs, 1, op->tile, op->slot, op->k)) return 1;
    const emu_ctx *c = cs->c;
    const smem_image im = {c->img, 0, c->L.used};
    const uint32_t idesc = idesc_bf16_f32(FMHA_BM, (unsigned)cs->p->d, 0, 1); /* V MN-major */
    const uint32_t p_cols = cs->tmem + fmha_f_tmem_p(cs->overlap, op->buf) + (uint32_t)(op->k / 2);
    emu_status es = {0};
    if (emu_tcgen05_mma(c->f.tm, &im, cs->tmem + FMHA_F_TMEM_O, 1, p_cols, 0, smem_tile_desc_sm100(&c->tv, cs->smem_v[op->slot], 0, op->k),
                        idesc, MMA_KIND_F16, op->tile > 0 || op->k > 0, &es))
        return mma_failed(cs, &es);
    if (op->k + 16 == FMHA_BN) cs->pv_tiles_done = op->tile + 1;
    return 0;
}

/* A commit's arrive: onto this CTA's barrier, or (the multicast form) onto the barrier at the same
 * offset in each CTA of the mask. The launch has no clusters: this CTA is rank 0 of a 1-CTA
 * cluster, so an arrive meant for any other rank reaches no barrier at all (FG11). */
static int exec_commit(cta_sim *cs, const tc_op *op)
{
    const unsigned mask = op->cta_mask ? op->cta_mask : 1u;
    for (int rank = 0; rank < 16; rank++) {
        if (!(mask & (1u << rank))) continue;
        if (rank > 0) { /* no such CTA: the arrive is lost */
            cs->lost_arrives++;
            cs->lost_bars |= 1u << op->bar;
            continue;
        }
        const mbar_status ms = mbar_model_arrive(&cs->bar[op->bar]);
        if (ms != MBAR_OK) {
            snprintf(cs->msg, sizeof cs->msg, "tcgen05.commit onto %s: %s", cs->bar_name[op->bar], mbar_status_name(ms));
            return 1;
        }
    }
    return 0;
}

/* Whether queued op i may execute now: a commit once no MMA issued before it is left; an MMA once
 * no earlier MMA into the same accumulator (S buffer b, or O) is left. */
static int tc_ready(const cta_sim *cs, int i)
{
    const tc_op *op = &cs->q[i];
    for (int k = 0; k < i; k++) {
        const tc_op *e = &cs->q[k];
        if (e->kind == OP_COMMIT) continue;
        if (op->kind == OP_COMMIT || (e->kind == op->kind && (op->kind == OP_PV_MMA || e->buf == op->buf))) return 0;
    }
    return 1;
}

/* The next op to execute: the oldest (seed 0), or one drawn among those that may execute. */
static int tc_pick(cta_sim *cs)
{
    if (!cs->rng) return 0; /* op 0 is always ready */
    int cand[TC_QUEUE_MAX], n = 0;
    for (int i = 0; i < cs->q_n; i++)
        if (tc_ready(cs, i)) cand[n++] = i;
    return cand[next_rand(&cs->rng) % (uint64_t)n];
}

static int exec_op(cta_sim *cs)
{
    const int i = tc_pick(cs);
    const tc_op op = cs->q[i];
    memmove(&cs->q[i], &cs->q[i + 1], (size_t)(cs->q_n - i - 1) * sizeof cs->q[0]);
    cs->q_n--;
    switch (op.kind) {
    case OP_S_MMA: return exec_s(cs, &op);
    case OP_PV_MMA: return exec_pv(cs, &op);
    default: return exec_commit(cs, &op);
    }
}

static role_step tc_step(role_sim *sim, int role, void *state)
{
    unit_state *st = state;
    cta_sim *cs = st->cs;
    ROLE_BEGIN(st);
    for (;;) {
        if (cs->q_n > 0) {
            if (exec_op(cs)) return fail(sim, cs);
            ROLE_YIELD(sim, role, st);
        } else if (cs->mmas_done) {
            break;
        } else {
            cs->tc_asleep = 1;
            ROLE_WAIT(sim, role, st, &cs->tc_bell, ring_full_parity(&cs->tc_bell_rs), "the tensor core's queue (empty)");
            ring_advance(&cs->tc_bell_rs);
        }
    }
    ROLE_END(st);
}

/* ---- the softmax warps (steps 2c, 2d, 3) -------------------------------------------------- */

static int tmem_failed(cta_sim *cs, int w)
{
    snprintf(cs->msg, sizeof cs->msg, "softmax warp %d: %s", w, cs->c->f.tm->msg);
    return 1;
}

/* Step 2c: this warp's 32 rows of S_j from S buffer sb.slot; mask, scale, m_new, alpha, P, l. */
static int softmax_tile(cta_sim *cs, softmax_state *st)
{
    const fmha_params *p = cs->p;
    const int w = st->w, j = st->j, kv0 = j * FMHA_BN;
    if (cs->s_last[st->sb.slot] != j) {
        snprintf(cs->msg, sizeof cs->msg, "softmax warp %d read S_%d before its MMAs had executed", w, j);
        return 1;
    }
    static uint32_t s[32 * FMHA_BN]; /* scratch: the model runs on one thread */
    for (int c0 = 0; c0 < FMHA_BN; c0 += 32) {
        uint32_t chunk[32 * 32];
        if (tmem_ld(cs->c->f.tm, w, TMEM_32x32b, 32, 0, tmem_addr(cs->tmem + fmha_f_tmem_s(st->sb.slot), 32 * w, c0), 32, chunk))
            return tmem_failed(cs, w);
        for (int t = 0; t < 32; t++) memcpy(&s[t * FMHA_BN + c0], &chunk[t * 32], 32 * 4);
    }
    cs->s_read[w] = j + 1;
    const float scale_log2 = p->scale * FMHA_LOG2E;
    const int whole = fmha_tile_unmasked(p, cs->q0 + 32 * w, kv0); /* the kernel skips the mask then */
    for (int t = 0; t < 32; t++) {
        const int row = cs->q0 + 32 * w + t;
        float sv[FMHA_BN], mx = -INFINITY; /* the kernel's order: the max on the raw scores, scaled once */
        for (int n = 0; n < FMHA_BN; n++) {
            memcpy(&sv[n], &s[t * FMHA_BN + n], 4);
            if (!whole && !fmha_visible(p, row, kv0 + n)) sv[n] = -INFINITY;
            mx = fmaxf(mx, sv[n]);
        }
        const float m_tile = mx * scale_log2;
        const float m_new = fmha_row_max_next(st->m[t], m_tile, p->pipe.rescale_th); /* --rescale-th: it may lag */
        if (row < p->sq && st->m[t] > -INFINITY && m_tile > -INFINITY) { /* a tile after the row's first visible key */
            cs->c->stats.row_tiles++;
            if (m_new != st->m[t]) cs->c->stats.max_moves++;
        }
        const float base = fmha_exp_base(m_new, p->faults);
        const float alpha = exp2f(st->m[t] - base);
        float rowsum = 0;
        for (int n = 0; n < FMHA_BN; n += 2) {
            const float pe = exp2f(fmaf(sv[n], scale_log2, -base)), po = exp2f(fmaf(sv[n + 1], scale_log2, -base));
            rowsum += pe + po;
            st->pk[t * (FMHA_BN / 2) + n / 2] = pack_bf16x2_cvt_order(f32_to_bf16(po), f32_to_bf16(pe));
        }
        st->l[t] = st->l[t] * alpha + rowsum;
        st->m[t] = m_new;
        st->alpha[t] = alpha;
    }
    return 0;
}

/* Step 2d: P_j into P buffer sb.slot, once the P V that read that buffer last (tile j - B) has
 * executed. */
static int store_p(cta_sim *cs, softmax_state *st)
{
    const int w = st->w, j = st->j;
    if (cs->pv_tiles_done < j - cs->nbuf + 1) {
        snprintf(cs->msg, sizeof cs->msg, "P buffer %d: softmax warp %d wrote P_%d before the P V MMA of tile %d (which "
                 "reads it) had executed", st->sb.slot, w, j, j - cs->nbuf);
        return 1;
    }
    for (int c0 = 0; c0 < FMHA_BN / 2; c0 += 32) {
        uint32_t chunk[32 * 32];
        for (int t = 0; t < 32; t++) memcpy(&chunk[t * 32], &st->pk[t * (FMHA_BN / 2) + c0], 32 * 4);
        const uint32_t addr = tmem_addr(cs->tmem + fmha_f_tmem_p(cs->overlap, st->sb.slot), 32 * w, c0);
        if (tmem_st(cs->c->f.tm, w, TMEM_32x32b, 32, 0, addr, 32, 0, chunk)) return tmem_failed(cs, w);
    }
    cs->p_written[w] = j + 1;
    return 0;
}

/* Step 2d: O *= alpha over this warp's rows, once P V_{j-1} has executed. */
static int rescale_o(cta_sim *cs, softmax_state *st)
{
    const int w = st->w;
    if (cs->pv_tiles_done < st->j) {
        snprintf(cs->msg, sizeof cs->msg, "softmax warp %d rescaled O for tile %d before the P V MMA of tile %d had executed", w,
                 st->j, st->j - 1);
        return 1;
    }
    for (int c0 = 0; c0 < cs->p->d; c0 += 32) {
        uint32_t o[32 * 32];
        const uint32_t addr = tmem_addr(cs->tmem + FMHA_F_TMEM_O, 32 * w, c0);
        if (tmem_ld(cs->c->f.tm, w, TMEM_32x32b, 32, 0, addr, 32, o)) return tmem_failed(cs, w);
        for (int t = 0; t < 32; t++)
            for (int e = 0; e < 32; e++) {
                float x;
                memcpy(&x, &o[t * 32 + e], 4);
                x *= st->alpha[t];
                memcpy(&o[t * 32 + e], &x, 4);
            }
        if (tmem_st(cs->c->f.tm, w, TMEM_32x32b, 32, 0, addr, 32, 0, o)) return tmem_failed(cs, w);
    }
    return 0;
}

/* The stores a previous CTA (or warp) left unread (FG22's missing wait) read SMEM now. */
static int read_pending_stores(cta_sim *cs)
{
    char err[256];
    if (!tma_queue_wait_read(&cs->c->st, 10, cs->p->o, err, sizeof err)) return 0;
    snprintf(cs->msg, sizeof cs->msg, "%s", err);
    return 1;
}

/* Step 3 for warp w: O / l -> bf16 -> SMEM (the Q tile, its 32 rows) -> TMA store; LSE. */
static int epilogue(cta_sim *cs, softmax_state *st)
{
    const fmha_params *p = cs->p;
    emu_ctx *c = cs->c;
    const int w = st->w, d = p->d;
    if (cs->ntiles > 0 && cs->pv_tiles_done < cs->ntiles) {
        snprintf(cs->msg, sizeof cs->msg, "softmax warp %d read O before the last P V MMA had executed", w);
        return 1;
    }
    if (!cs->stores_flushed) { /* FG22 without the wait: the last CTA's stores read SMEM only now */
        cs->stores_flushed = 1;
        if (read_pending_stores(cs)) return 1;
    }
    for (int c0 = 0; c0 < d; c0 += 32) {
        uint32_t o[32 * 32];
        if (cs->ntiles > 0 && tmem_ld(c->f.tm, w, TMEM_32x32b, 32, 0, tmem_addr(cs->tmem + FMHA_F_TMEM_O, 32 * w, c0), 32, o))
            return tmem_failed(cs, w);
        for (int t = 0; t < 32; t++) {
            const int r = 32 * w + t, row = cs->q0 + r;
            const float inv_l = st->l[t] > 0.0f ? 1.0f / st->l[t] : 0.0f; /* a row that saw no key: O = 0 */
            for (int e = 0; e < 32; e++) { /* rows past Sq too: the store clips them */
                float x = 0.0f;
                if (cs->ntiles > 0) memcpy(&x, &o[t * 32 + e], 4);
                const uint16_t v = f32_to_bf16(x * inv_l);
                memcpy(c->img + cs->smem_q + smem_tile_offset(&c->tq, r, c0 + e), &v, 2);
            }
            if (c0 == 0 && row < p->sq)
                p->lse[((int64_t)cs->b * p->hq + cs->h) * p->sq + row] = st->l[t] > 0.0f ? st->m[t] * FMHA_LN2 + logf(st->l[t]) : -INFINITY;
        }
    }
    if (!(p->faults & FMHA_FAULT_STORE_NO_FENCE)) tma_queue_fence(&c->st, c->img); /* fence.proxy.async */
    for (int half = 0; half < 2; half++) {
        const int r0 = 32 * w + FMHA_O_BOX_ROWS * half;
        if (cs->q0 + r0 >= p->sq) break;
        for (int k = 0; k < d / FMHA_BOX_COLS; k++) {
            const int32_t coords[4] = {FMHA_BOX_COLS * k, cs->q0 + r0, cs->h, cs->b};
            if (tma_queue_store(&c->st, &c->map[FMHA_TENSOR_O], coords, cs->smem_q + smem_tile_offset(&c->tq, r0, FMHA_BOX_COLS * k))) {
                snprintf(cs->msg, sizeof cs->msg, "more TMA stores pending than the model holds");
                return 1;
            }
        }
    }
    /* wait_group.read: the stores have read SMEM (without it they read it when the next CTA runs) */
    return !(p->faults & FMHA_FAULT_STORE_NO_WAIT) && read_pending_stores(cs);
}

static role_step softmax_step(role_sim *sim, int role, void *state)
{
    softmax_state *st = state;
    cta_sim *cs = st->cs;
    ROLE_BEGIN(st);
    /* Step 1: the TMEM address, once warp 4 has written it */
    st->tb = tmem_bar_arrive(cs);
    ROLE_WAIT(sim, role, st, &cs->tmem_bar, st->tb & 1, TMEM_BAR_WHAT);
    {
        char who[32];
        snprintf(who, sizeof who, "softmax warp %d", st->w);
        if (tmem_address_read(cs, who)) return fail(sim, cs);
    }
    for (st->j = 0; st->j < cs->ntiles; st->j++) {
        /* Step 2c: online softmax on S_j */
        ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_S_FULL + st->sb.slot], ring_full_parity(&st->sb),
                  cs->bar_name[FMHA_F_BAR_S_FULL + st->sb.slot]);
        if (softmax_tile(cs, st)) return fail(sim, cs);
        /* Step 2d: P_j (overlap: before the o_done wait, its buffer's reader P V_{j-2} is done),
         * O *= alpha once P V_{j-1} is done, P_j (overlap 0: after it), arrive p_full */
        if (cs->overlap && store_p(cs, st)) return fail(sim, cs);
        if (st->j > 0) {
            ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_O_DONE], ring_full_parity(&st->od), cs->bar_name[FMHA_F_BAR_O_DONE]);
            ring_advance(&st->od);
            if (rescale_o(cs, st)) return fail(sim, cs);
        }
        if (!cs->overlap && store_p(cs, st)) return fail(sim, cs);
        mbar_model_arrive_n(&cs->bar[FMHA_F_BAR_P_FULL], 32); /* the warp's 32 threads in one instruction */
        ring_advance(&st->sb);
    }
    /* Step 3: epilogue, once the last P V is done (or, without tiles, Q has landed: O takes its place) */
    if (cs->ntiles > 0)
        ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_O_DONE], ring_full_parity(&st->od), cs->bar_name[FMHA_F_BAR_O_DONE]);
    else
        ROLE_WAIT(sim, role, st, &cs->bar[FMHA_F_BAR_Q_FULL], 0, cs->bar_name[FMHA_F_BAR_Q_FULL]);
    if (epilogue(cs, st)) return fail(sim, cs);
    ROLE_END(st);
}

/* ---- one CTA ----------------------------------------------------------------------------- */

/* Step 1: the barriers with the kernel's counts, the slots' addresses, TMEM, the roles' states. */
static int cta_init(cta_sim *cs, emu_ctx *c, int b, int h, int qt, uint64_t seed)
{
    const fmha_params *p = c->p;
    cs->c = c;
    cs->p = p;
    cs->b = b;
    cs->h = h;
    cs->q0 = qt * FMHA_BM;
    cs->ntiles = fmha_kv_tiles(p, cs->q0);
    cs->ring = p->pipe.ring;
    cs->overlap = p->pipe.overlap;
    cs->nbuf = fmha_f_s_buffers(cs->overlap);
    cs->rng = seed;
    cs->smem_q = c->L.tile[FMHA_F_SMEM_Q];
    for (int s = 0; s < FMHA_RING_MAX; s++) {
        cs->smem_k[s] = c->L.tile[FMHA_F_SMEM_K + s];
        cs->smem_v[s] = c->L.tile[FMHA_F_SMEM_V + s];
        cs->k_tile[s] = cs->v_tile[s] = -1;
    }
    cs->s_last[0] = cs->s_last[1] = -1;
    for (int i = 0; i < FMHA_F_SM100_BARS; i++) {
        mbar_model_reset(&cs->bar[i]);
        mbar_model_init(&cs->bar[i], (int)fmha_f_bar_count(i));
        const int idx = fmha_f_bar_index(i);
        if (idx < 0) snprintf(cs->bar_name[i], sizeof cs->bar_name[i], "%s", fmha_f_bar_kind(i));
        else snprintf(cs->bar_name[i], sizeof cs->bar_name[i], "%s[%d]", fmha_f_bar_kind(i), idx);
    }
    mbar_model_reset(&cs->tmem_bar);
    mbar_model_init(&cs->tmem_bar, FMHA_F_TMEM_BAR_THREADS / 32);
    cs->tmem_published = 0;
    mbar_model_reset(&cs->tma_bell);
    mbar_model_init(&cs->tma_bell, 1);
    mbar_model_reset(&cs->tc_bell);
    mbar_model_init(&cs->tc_bell, 1);
    cs->tma_bell_rs = cs->tc_bell_rs = ring_make(1);
    tma_flight_init(&cs->fl, c->img, c->view, 10);
    if (tmem_alloc(c->f.tm, FMHA_F_TMEM_COLS, &cs->tmem)) return emu_fail_tmem(&c->f);
    tmem_relinquish(c->f.tm);
    cs->ld = (load_state){cs, 0, 0, ring_make(cs->ring), 0};
    cs->mma = (mma_state){cs, 0, 0, ring_make(cs->ring), ring_make(cs->ring), ring_make(cs->nbuf), ring_make(cs->nbuf), ring_make(1), 0};
    for (int w = 0; w < FMHA_F_SOFTMAX_WARPS; w++) {
        softmax_state *s = &cs->sm[w];
        s->cs = cs;
        s->w = w;
        s->sb = ring_make(cs->nbuf);
        s->od = ring_make(1);
        for (int t = 0; t < 32; t++) {
            s->m[t] = -INFINITY;
            s->l[t] = 0.0f;
        }
    }
    cs->tma.cs = cs->tc.cs = cs;
    return 0;
}

/* role_sim's deadlock report lists each blocked role as " <name> waits on <what>, parity <p>
 * (<diag>);". The four softmax warps mostly wait at the same place: one entry for a run of equal
 * ones ("softmax warps 0-3 wait on ..."), so the entries that differ fit the caller's message. */
static const char *entry_end(const char *e) /* past the entry's ';' outside the parentheses */
{
    for (int depth = 0; *e; e++) {
        depth += (*e == '(') - (*e == ')');
        if (*e == ';' && depth == 0) return e + 1;
    }
    return e;
}

static void compact_report(const char *in, char *out, size_t len)
{
    static const char warp[] = " softmax warp ";
    size_t n = 0;
    while (*in && n + 1 < len) {
        const char *at = strstr(in, warp);
        if (!at) break;
        const int first = atoi(at + sizeof warp - 1);
        const char *rest = strstr(at, " waits on ");
        if (!rest) break;
        const char *end = entry_end(rest);
        int last = first;
        const char *next = end;
        while (!strncmp(next, warp, sizeof warp - 1)) { /* the following entries with the same rest */
            const char *r2 = strstr(next, " waits on ");
            if (!r2 || strncmp(r2, rest, (size_t)(end - rest))) break;
            last = atoi(next + sizeof warp - 1);
            next = r2 + (end - rest);
        }
        n += (size_t)snprintf(out + n, len - n, "%.*s", (int)(at - in), in);
        if (n + 1 >= len) break;
        if (last == first) n += (size_t)snprintf(out + n, len - n, "%.*s", (int)(end - at), at);
        else n += (size_t)snprintf(out + n, len - n, " softmax warps %d-%d wait on%.*s", first, last, (int)(end - rest - 9), rest + 9);
        in = next;
    }
    if (n + 1 < len) snprintf(out + n, len - n, "%s", in);
}

/* The run's message: the CTA, the FG11 headline when a commit's arrive was lost (the deadlock
 * report that follows names s_full's waiters), then role_sim's report. */
static int cta_failed(emu_ctx *c, const cta_sim *cs, int qt, uint64_t seed, const char *report)
{
    char msg[4400];
    int n = snprintf(msg, sizeof msg, "CTA (b %d, h %d, q tile %d), seed %llu: ", cs->b, cs->h, qt, (unsigned long long)seed);
    if (cs->lost_arrives) {
        n += snprintf(msg + n, sizeof msg - (size_t)n, "the multicast commits (ctaMask 0x%x) onto", FMHA_F_FG11_CTA_MASK);
        for (int i = 0; i < FMHA_F_SM100_BARS; i++)
            if (cs->lost_bars & (1u << i)) n += snprintf(msg + n, sizeof msg - (size_t)n, " %s", cs->bar_name[i]);
        n += snprintf(msg + n, sizeof msg - (size_t)n, " sent %d arrive(s) to CTA rank 1, absent without clusters; ",
                      cs->lost_arrives);
    }
    compact_report(report, msg + n, sizeof msg - (size_t)n);
    return emu_fail(&c->f, msg);
}

static int run_cta(emu_ctx *c, cta_sim *cs, int b, int h, int qt, uint64_t seed)
{
    memset(cs, 0, sizeof *cs);
    if (cta_init(cs, c, b, h, qt, seed)) return 1;
    const role_def roles[] = {
        {"load warp", load_step, &cs->ld},
        {"softmax warp 0", softmax_step, &cs->sm[0]}, {"softmax warp 1", softmax_step, &cs->sm[1]},
        {"softmax warp 2", softmax_step, &cs->sm[2]}, {"softmax warp 3", softmax_step, &cs->sm[3]},
        {"MMA warp", mma_step, &cs->mma},        {"tensor core", tc_step, &cs->tc},
        {"TMA unit", tma_step, &cs->tma},
    };
    /* the order of the deadlock report: the producer, the consumers, then the asynchronous units */
    char report[4096];
    if (role_sim_run(roles, (int)(sizeof roles / sizeof roles[0]), seed, report, sizeof report, NULL))
        return cta_failed(c, cs, qt, seed, report);
    /* Step 4: teardown: loads still in flight land (none in a right protocol); free TMEM */
    if (tma_flight_drain(&cs->fl)) return emu_fail(&c->f, cs->fl.msg);
    if (tmem_dealloc(c->f.tm, cs->tmem, FMHA_F_TMEM_COLS) || tmem_next_cta(c->f.tm)) return emu_fail_tmem(&c->f);
    return 0;
}

int stage_f_emu_run(const fmha_params *p, uint64_t seed, stage_f_emu_stats *stats, char *err, int errlen)
{
    emu_ctx c;
    memset(&c, 0, sizeof c);
    c.f = (emu_flow){tmem_model_new(), err, errlen};
    c.p = p;
    err[0] = '\0';
    if (p->pipe.ring < 1 || p->pipe.ring > FMHA_RING_MAX || (p->pipe.overlap && p->d > 128)) {
        snprintf(err, (size_t)errlen, "stage F emu: ring %d, overlap %d at D = %d is not a pipeline of the sm100 flow",
                 p->pipe.ring, p->pipe.overlap, p->d);
        tmem_model_free(c.f.tm);
        return 1;
    }
    c.L = fmha_f_smem_layout_make(p->d, p->pipe.ring);
    c.tq = fmha_q_tile(p->d);
    c.tk = fmha_k_tile(p->d);
    c.tv = fmha_v_tile(p->d);
    c.img = calloc(c.L.used, 1);
    c.view = calloc(c.L.used, 1);
    cta_sim *cs = malloc(sizeof *cs);
    for (int t = 0; t < FMHA_TENSOR_COUNT; t++)
        fmha_tmap_params(p, (fmha_tensor)t, 0, fmha_tmap_mistake_of(p->faults), &c.map[t]);
    int rc = (c.f.tm && c.img && c.view && cs) ? 0 : emu_fail(&c.f, "stage F emu: out of host memory");
    if (!rc) tma_queue_init(&c.st, c.view, c.L.used);
    /* the CTAs in the order the kernels start them (fmha_tile_of: causal, longest first) */
    const int ntiles = fmha_tile_count(p);
    for (int t = 0; t < ntiles && !rc; t++) {
        const fmha_tile tl = fmha_tile_of(p, t);
        rc = run_cta(&c, cs, tl.b, tl.h, tl.q0 / FMHA_BM, seed ? seed ^ (uint64_t)t : 0);
    }
    if (!rc) { /* the last CTA's stores, if it did not wait */
        char e[256];
        if (tma_queue_wait_read(&c.st, 10, p->o, e, sizeof e)) rc = emu_fail(&c.f, e);
    }
    if (stats) *stats = c.stats;
    free(cs);
    free(c.img);
    free(c.view);
    tmem_model_free(c.f.tm);
    return rc;
}
