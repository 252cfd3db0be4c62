/* The role scheduler of the pipelined stage's emu flow (common/model/role_sim.h), on the smallest
 * pipeline (tests/support/ring_sim.c): a producer and a consumer over a K/V ring of depth 1..3
 * move every tile intact under many interleavings; the broken protocols end in what the GPU would
 * do: the producer's first empty wait on parity 0 (FG16) deadlocks and the report names the role,
 * the barrier and the parity; a slot released before its read is done (FG23) is caught torn; with
 * two consumer groups on one ring, an empty barrier that counts one group's releases tears it too;
 * stage D's load role (a tile published after the next one's copies are issued) needs two slots,
 * and its overlap (a slot released a tile later) three. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "model/role_sim.h"
#include "ring_sim.h"

Test(role_sim, the_ring_moves_every_tile_under_many_interleavings)
{
    char report[600];
    for (int depth = 1; depth <= RING_SIM_MAX_DEPTH; depth++)
        for (uint64_t seed = 0; seed <= 60; seed++) {
            const ring_sim_cfg cfg = {.depth = depth};
            int done = 0;
            cr_assert_eq(ring_sim_run(&cfg, seed, report, sizeof report, &done), 0, "depth %d seed %llu: %s", depth,
                         (unsigned long long)seed, report);
            cr_assert_eq(done, RING_SIM_TILES);
        }
}

Test(role_sim, fg16_producer_first_wait_on_parity_0_deadlocks_and_names_it)
{
    char report[600];
    const ring_sim_cfg cfg = {.depth = 2, .wrong_first_parity = 1};
    cr_assert_eq(ring_sim_run(&cfg, 7, report, sizeof report, NULL), 1);
    fprintf(stderr, "role_sim FG16 broken: %s\n", report);
    cr_expect(strstr(report, "deadlock") && strstr(report, "producer waits on empty[0], parity 0"), "%s", report);
}

/* Stage D's ring past 32 packed rows (decode_ring_sm90.cu): two consumer groups read every slot,
 * so the slot's empty barrier must count both groups' releases (the kernel: 2 x 128 consumer
 * threads). Counted right, every tile reaches both groups intact under every interleaving tried;
 * counting one group's releases (the swapped kernel's DEC_RING_EMPTY_COUNT) lets the first group
 * done free the slot, and the load warps' refill tears the tile the other group still reads, or
 * the second group's releases complete phases out of turn and the ring deadlocks. */
Test(role_sim, two_consumer_groups_need_an_empty_barrier_counting_both)
{
    char report[600];
    int torn = 0, runs = 0, tears = 0, hangs = 0;
    for (int depth = 1; depth <= RING_SIM_MAX_DEPTH; depth++)
        for (uint64_t seed = 0; seed <= 40; seed++) {
            const ring_sim_cfg right = {.depth = depth, .consumers = 2};
            int done = 0;
            cr_assert_eq(ring_sim_run(&right, seed, report, sizeof report, &done), 0, "depth %d seed %llu: %s", depth,
                         (unsigned long long)seed, report);
            cr_assert_eq(done, RING_SIM_TILES, "both groups finish every tile");
            const ring_sim_cfg one_group = {.depth = depth, .consumers = 2, .empty_count = 1};
            runs++;
            if (ring_sim_run(&one_group, seed, report, sizeof report, NULL)) {
                if (!torn++) fprintf(stderr, "role_sim two groups, empty counting one: %s\n", report);
                if (strstr(report, "deadlock")) hangs++;
                else tears++;
                cr_expect(strstr(report, "overwritten") || strstr(report, "holds tile") || strstr(report, "deadlock"),
                          "%s", report);
            }
        }
    fprintf(stderr, "role_sim two groups, empty counting one: %d of %d interleavings fail (%d torn, %d deadlocked)\n",
            torn, runs, tears, hangs);
    cr_expect_gt(torn, runs / 2, "a slot freed by one group's releases is torn or lost in most interleavings");
    cr_expect(tears > 0, "some interleavings show the torn tile itself");
}

/* Stage D's sm90 load role publishes tile t only after issuing tile t + 1's copies (publish_lag), so
 * one slot waits for itself: a deadlock at depth 1, which stage_d.c refuses (--ring 1 is the
 * unpipelined kernel). The overlap (--overlap 1) holds each slot until the next tile's first reads
 * (hold): then two slots deadlock as well (the producer waits for the slot the consumers hold, the
 * consumers for the tile it has not published), and stage_d.c asks for three or more. The ring's
 * plain loop built with DEC_RING_S_AHEAD=1 holds a slot the same way from three slots on (the next
 * tile's S issued behind the P V, the slot released after the wait for the next one); by default it
 * releases first at every depth. */
static int decode_ring_fails(int depth, int hold, int *deadlocks, char *report, size_t len)
{
    int fails = 0;
    *deadlocks = 0;
    for (uint64_t seed = 0; seed <= 40; seed++) {
        const ring_sim_cfg cfg = {.depth = depth, .consumers = 2, .publish_lag = 1, .hold = hold};
        int done = 0;
        if (ring_sim_run(&cfg, seed, report, len, &done)) {
            fails++;
            if (strstr(report, "deadlock")) (*deadlocks)++;
        } else {
            cr_expect_eq(done, RING_SIM_TILES, "depth %d hold %d seed %llu: every tile", depth, hold, (unsigned long long)seed);
        }
    }
    return fails;
}
Test(role_sim, the_decode_ring_needs_two_slots_and_its_overlap_three)
{
    char report[600];
    int dl = 0;
    cr_expect_eq(decode_ring_fails(1, 0, &dl, report, sizeof report), 41, "one slot: every interleaving stops");
    cr_expect_eq(dl, 41, "and each one is a deadlock: %s", report);
    fprintf(stderr, "role_sim decode ring, 1 slot: %s\n", report);
    cr_expect_eq(decode_ring_fails(2, 0, &dl, report, sizeof report), 0, "two slots without the overlap: %s", report);
    cr_expect_eq(decode_ring_fails(3, 0, &dl, report, sizeof report), 0, "three slots without the overlap: %s", report);
    cr_expect_eq(decode_ring_fails(2, 1, &dl, report, sizeof report), 41, "two slots with the overlap: every interleaving stops");
    cr_expect_eq(dl, 41, "and each one is a deadlock: %s", report);
    cr_expect(strstr(report, "producer waits on empty") != NULL, "the producer is named at an empty barrier: %s", report);
    fprintf(stderr, "role_sim decode ring with the overlap, 2 slots: %s\n", report);
    cr_expect_eq(decode_ring_fails(3, 1, &dl, report, sizeof report), 0, "three slots with the overlap: %s", report);
}

Test(role_sim, a_run_without_roles_is_refused)
{
    /* the scheduler's own contract: a run needs 1..ROLE_SIM_MAX_ROLES roles */
    char report[200];
    cr_expect_eq(role_sim_run(NULL, 0, 1, report, sizeof report, NULL), 1);
    cr_expect(strstr(report, "0 roles") != NULL, "%s", report);
}
