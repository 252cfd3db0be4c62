/* A producer and a consumer over a K/V ring (common/attn/ring.h) on the role scheduler
 * (common/model/role_sim.h): the smallest pipeline, for the scheduler's tests and footguns FG16 /
 * FG23. The producer waits empty[slot], "copies" tile t into the slot and arrives on full[slot];
 * the consumer waits full[slot], checks the slot holds the tile it waited for, reads it for
 * RING_SIM_READ_STEPS steps (yielding between them, as an MMA in flight) checking it is not
 * overwritten, then arrives on empty[slot]. With `consumers` 2 (stage D's ring past 32 rows: two
 * consumer groups read every slot) both consumers read every tile, and empty[slot] counts one
 * arrival from each. Stage D's sm90 rings, as built:
 *   publish_lag  the producer publishes tile t (arrives on full) only after it acquired the slot of
 *                tile t + 1 and issued that copy (the load warps' cp.async.wait_group 1)
 *   hold         a consumer releases tile t's slot only after it waited for tile t + 1 and read
 *                it a first time (--overlap 1: P V of tile t runs under tile t + 1's S and softmax)
 * Broken variants:
 *   wrong_first_parity  FG16: the producer's first wait on each slot uses parity 0 (deadlock)
 *   tile_parity         FG16: the consumer waits full with parity (tile & 1), not the ring's phase
 *   release_early       FG23: the consumer releases the slot when its read starts
 *   empty_count         an empty barrier that counts fewer arrivals than there are consumers (one
 *                       group's releases): the first consumer done frees the slot */
#ifndef FMHA_TEST_RING_SIM_H
#define FMHA_TEST_RING_SIM_H

#include <stddef.h>
#include <stdint.h>

#define RING_SIM_MAX_DEPTH 3
#define RING_SIM_MAX_CONSUMERS 2
#define RING_SIM_TILES 40
#define RING_SIM_READ_STEPS 3

typedef struct {
    int depth; /* 1..RING_SIM_MAX_DEPTH */
    int wrong_first_parity, tile_parity, release_early;
    int consumers;   /* 1 (0 means 1) or 2 */
    int empty_count; /* empty[slot]'s arrival count; 0: one a consumer (right) */
    int publish_lag, hold;
} ring_sim_cfg;

/* One interleaving (seed 0: round robin). 0 when every tile arrived intact, else 1 with the
 * scheduler's or a consumer's report; *tiles_done (may be NULL): tiles the slowest consumer
 * finished. */
int ring_sim_run(const ring_sim_cfg *cfg, uint64_t seed, char *report, size_t len, int *tiles_done);

#endif
