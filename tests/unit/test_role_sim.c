/* The role scheduler of the pipelined stage's emu flow (common/model/role_sim.h): a producer and a
 * consumer over a K/V ring of depth 1..3 with the shared ring helper (common/attn/ring.h) move
 * every tile intact under many interleavings; the consumer checks each slot it reads holds the
 * tile it waited for, and no slot is overwritten while it is read. The broken protocols end in
 * what the GPU would do: the producer's first empty wait on parity 0 (FG16) deadlocks and the
 * report names the role, the barrier and the parity; a consumer released before its read is done
 * (FG23) is caught reading a torn slot. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "attn/ring.h"
#include "model/role_sim.h"

enum { TILES = 40, MAXD = 3, READ_STEPS = 3 };

typedef struct {
    int depth, wrong_first_parity, release_early;
    mbar_model full[MAXD], empty[MAXD];
    int slot_tile[MAXD]; /* the simulated SMEM: which tile a slot holds (-1: nothing) */
    char full_name[MAXD][16], empty_name[MAXD][16];
} ring_sim;

typedef struct {
    ring_sim *r;
    ring_state st;
    int tile, pc;
} producer;

typedef struct {
    ring_sim *r;
    ring_state st;
    int tile, pc, reads, seen;
} consumer;

static role_step producer_step(role_sim *sim, int role, void *state)
{
    producer *p = state;
    ring_sim *r = p->r;
    for (;;) {
        if (p->tile == TILES) return ROLE_STEP_DONE;
        if (p->pc == 0) { /* wait until the slot is free */
            p->pc = 1;
            int parity = (int)ring_empty_parity(&p->st);
            if (r->wrong_first_parity && p->tile < r->depth) parity ^= 1; /* FG16 */
            role_wait_on(sim, role, &r->empty[p->st.slot], parity, r->empty_name[p->st.slot]);
            return ROLE_STEP_WAIT;
        }
        r->slot_tile[p->st.slot] = p->tile; /* the copy lands */
        mbar_model_arrive(&r->full[p->st.slot]);
        ring_advance(&p->st);
        p->tile++;
        p->pc = 0;
    }
}

static role_step consumer_step(role_sim *sim, int role, void *state)
{
    consumer *c = state;
    ring_sim *r = c->r;
    char msg[160];
    for (;;) {
        if (c->tile == TILES) return ROLE_STEP_DONE;
        switch (c->pc) {
        case 0: /* wait for the slot's data */
            c->pc = 1;
            role_wait_on(sim, role, &r->full[c->st.slot], (int)ring_full_parity(&c->st), r->full_name[c->st.slot]);
            return ROLE_STEP_WAIT;
        case 1: /* the MMA starts reading the slot */
            c->seen = r->slot_tile[c->st.slot];
            if (c->seen != c->tile) {
                snprintf(msg, sizeof msg, "consumer: slot %d holds tile %d when tile %d was waited for", c->st.slot, c->seen, c->tile);
                return role_sim_fail(sim, msg);
            }
            if (r->release_early) mbar_model_arrive(&r->empty[c->st.slot]); /* FG23: released at issue */
            c->reads = 0;
            c->pc = 2;
            /* the read takes READ_STEPS steps, yielding between them */
            __attribute__((fallthrough));
        case 2:
            if (r->slot_tile[c->st.slot] != c->seen) {
                snprintf(msg, sizeof msg, "consumer: slot %d overwritten (tile %d) while tile %d was read", c->st.slot,
                         r->slot_tile[c->st.slot], c->seen);
                return role_sim_fail(sim, msg);
            }
            if (++c->reads < READ_STEPS) {
                role_yield(sim, role); /* the MMA still reads: the others may run meanwhile */
                return ROLE_STEP_WAIT;
            }
            if (!r->release_early) mbar_model_arrive(&r->empty[c->st.slot]); /* released at completion */
            ring_advance(&c->st);
            c->tile++;
            c->pc = 0;
            break;
        }
    }
}

static int run(ring_sim *r, uint64_t seed, char *report, size_t len)
{
    for (int i = 0; i < r->depth; i++) {
        mbar_model_reset(&r->full[i]);
        mbar_model_init(&r->full[i], 1);
        mbar_model_reset(&r->empty[i]);
        mbar_model_init(&r->empty[i], 1);
        r->slot_tile[i] = -1;
        snprintf(r->full_name[i], sizeof r->full_name[i], "full[%d]", i);
        snprintf(r->empty_name[i], sizeof r->empty_name[i], "empty[%d]", i);
    }
    producer p = {r, ring_make(r->depth), 0, 0};
    consumer c = {r, ring_make(r->depth), 0, 0, 0, 0};
    const role_def roles[2] = {{"producer", producer_step, &p}, {"consumer", consumer_step, &c}};
    return role_sim_run(roles, 2, seed, report, len, NULL);
}

Test(role_sim, the_ring_moves_every_tile_under_many_interleavings)
{
    char report[600];
    for (int depth = 1; depth <= MAXD; depth++)
        for (uint64_t seed = 0; seed <= 60; seed++) {
            ring_sim r = {.depth = depth};
            cr_assert_eq(run(&r, seed, report, sizeof report), 0, "depth %d seed %llu: %s", depth, (unsigned long long)seed,
                         report);
        }
}

Test(role_sim, fg16_producer_first_wait_on_parity_0_deadlocks_and_names_it)
{
    char report[600];
    ring_sim r = {.depth = 2, .wrong_first_parity = 1};
    cr_assert_eq(run(&r, 7, report, sizeof report), 1);
    fprintf(stderr, "role_sim FG16 broken: %s\n", report);
    cr_expect(strstr(report, "deadlock") && strstr(report, "producer waits on empty[0], parity 0"), "%s", report);
}

Test(role_sim, fg23_release_at_issue_is_caught_reading_a_torn_slot)
{
    char report[600];
    int caught = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        ring_sim r = {.depth = 2, .release_early = 1};
        if (run(&r, seed, report, sizeof report) && strstr(report, "overwritten")) caught++;
    }
    fprintf(stderr, "role_sim FG23 broken: %d of 40 interleavings tore a slot, e.g. %s\n", caught, report);
    cr_expect_gt(caught, 0, "some interleaving overwrites a slot under its read");
}
