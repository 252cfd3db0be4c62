#include "ring_sim.h"

#include <stdio.h>

#include "attn/ring.h"
#include "model/role_sim.h"

typedef struct {
    const ring_sim_cfg *cfg;
    mbar_model full[RING_SIM_MAX_DEPTH], empty[RING_SIM_MAX_DEPTH];
    int slot_tile[RING_SIM_MAX_DEPTH]; /* the simulated SMEM: which tile a slot holds (-1: none) */
    char full_name[RING_SIM_MAX_DEPTH][16], empty_name[RING_SIM_MAX_DEPTH][16];
} ring;

typedef struct {
    ring *r;
    ring_state st;
    int tile, pc, reads, seen, id;
    int prev_slot, prev_seen; /* hold: the slot of the tile before, still read (-1: none) */
} role_state;

static role_step producer_step(role_sim *sim, int role, void *state)
{
    role_state *p = state;
    ring *r = p->r;
    for (;;) {
        if (p->tile == RING_SIM_TILES) {
            if (r->cfg->publish_lag && p->prev_slot >= 0) { /* the last tile, published after its copy landed */
                mbar_model_arrive(&r->full[p->prev_slot]);
                p->prev_slot = -1;
            }
            return ROLE_STEP_DONE;
        }
        if (p->pc == 0) { /* wait until the slot is free */
            p->pc = 1;
            int parity = (int)ring_empty_parity(&p->st);
            if (r->cfg->wrong_first_parity && p->tile < r->cfg->depth) parity ^= 1; /* FG16 */
            role_wait_on(sim, role, &r->empty[p->st.slot], parity, r->empty_name[p->st.slot]);
            return ROLE_STEP_WAIT;
        }
        r->slot_tile[p->st.slot] = p->tile; /* the copy lands */
        if (r->cfg->publish_lag) { /* the tile before is published only now, after this copy's issue */
            if (p->prev_slot >= 0) mbar_model_arrive(&r->full[p->prev_slot]);
            p->prev_slot = p->st.slot;
        } else {
            mbar_model_arrive(&r->full[p->st.slot]);
        }
        ring_advance(&p->st);
        p->tile++;
        p->pc = 0;
    }
}

/* A slot the consumer still reads must hold the tile it started on: 1 (the run stopped with the
 * report) when it was overwritten. */
static int torn(role_sim *sim, const ring *r, int id, int slot, int seen)
{
    char msg[160];
    if (r->slot_tile[slot] == seen) return 0;
    snprintf(msg, sizeof msg, "consumer %d: slot %d overwritten (tile %d) while tile %d was read", id, slot, r->slot_tile[slot],
             seen);
    role_sim_fail(sim, msg);
    return 1;
}

static role_step consumer_step(role_sim *sim, int role, void *state)
{
    role_state *c = state;
    ring *r = c->r;
    char msg[160];
    for (;;) {
        if (c->tile == RING_SIM_TILES) {
            if (c->prev_slot >= 0) { /* hold: the last tile's P V completes after the loop */
                mbar_model_arrive(&r->empty[c->prev_slot]);
                c->prev_slot = -1;
            }
            return ROLE_STEP_DONE;
        }
        if (c->pc == 0) { /* wait for the slot's data */
            c->pc = 1;
            const unsigned parity = r->cfg->tile_parity ? (unsigned)(c->tile & 1) : ring_full_parity(&c->st); /* FG16 */
            role_wait_on(sim, role, &r->full[c->st.slot], (int)parity, r->full_name[c->st.slot]);
            return ROLE_STEP_WAIT;
        }
        if (c->pc == 1) { /* the MMA starts reading the slot */
            c->seen = r->slot_tile[c->st.slot];
            if (c->seen != c->tile) {
                snprintf(msg, sizeof msg, "consumer %d: slot %d holds tile %d when tile %d was waited for", c->id, c->st.slot,
                         c->seen, c->tile);
                return role_sim_fail(sim, msg);
            }
            if (r->cfg->release_early) mbar_model_arrive(&r->empty[c->st.slot]); /* FG23: released at issue */
            c->reads = 0;
            c->pc = 2;
        }
        if (torn(sim, r, c->id, c->st.slot, c->seen)) return ROLE_STEP_FAILED;
        if (c->prev_slot >= 0) { /* hold: the tile before is still read (its P V) */
            if (torn(sim, r, c->id, c->prev_slot, c->prev_seen)) return ROLE_STEP_FAILED;
            mbar_model_arrive(&r->empty[c->prev_slot]); /* its P V completed within this tile's softmax */
            c->prev_slot = -1;
        }
        if (++c->reads < RING_SIM_READ_STEPS) {
            role_yield(sim, role); /* the MMA still reads: the others may run meanwhile */
            return ROLE_STEP_WAIT;
        }
        if (r->cfg->hold) { /* released a tile later, after the next tile's first reads */
            c->prev_slot = c->st.slot;
            c->prev_seen = c->seen;
        } else if (!r->cfg->release_early) {
            mbar_model_arrive(&r->empty[c->st.slot]); /* released at completion */
        }
        ring_advance(&c->st);
        c->tile++;
        c->pc = 0;
    }
}

int ring_sim_run(const ring_sim_cfg *cfg, uint64_t seed, char *report, size_t len, int *tiles_done)
{
    ring r;
    r.cfg = cfg;
    const int nc = cfg->consumers > 1 ? RING_SIM_MAX_CONSUMERS : 1;
    for (int i = 0; i < cfg->depth; i++) {
        mbar_model_reset(&r.full[i]);
        mbar_model_init(&r.full[i], 1);
        mbar_model_reset(&r.empty[i]);
        mbar_model_init(&r.empty[i], cfg->empty_count > 0 ? cfg->empty_count : nc);
        r.slot_tile[i] = -1;
        snprintf(r.full_name[i], sizeof r.full_name[i], "full[%d]", i);
        snprintf(r.empty_name[i], sizeof r.empty_name[i], "empty[%d]", i);
    }
    role_state p = {&r, ring_make(cfg->depth), 0, 0, 0, 0, 0, -1, -1};
    role_state c[RING_SIM_MAX_CONSUMERS] = {{&r, ring_make(cfg->depth), 0, 0, 0, 0, 0, -1, -1},
                                            {&r, ring_make(cfg->depth), 0, 0, 0, 0, 1, -1, -1}};
    const role_def roles[1 + RING_SIM_MAX_CONSUMERS] = {
        {"producer", producer_step, &p}, {"consumer 0", consumer_step, &c[0]}, {"consumer 1", consumer_step, &c[1]}};
    const int rc = role_sim_run(roles, 1 + nc, seed, report, len, NULL);
    if (tiles_done) *tiles_done = nc > 1 && c[1].tile < c[0].tile ? c[1].tile : c[0].tile;
    return rc;
}
