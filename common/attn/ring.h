/* The K/V ring of the pipelined stages (F): DEPTH slots, each with a full mbarrier (the load
 * completed) and an empty one (the MMAs that read it completed), and one {slot, phase} state that
 * the producer and each consumer advance with the same helper, in the kernels and in the emu flow
 * alike (CUTLASS's PipelineState plays this role there).
 *
 * Parities: a consumer waits full[slot] with the ring's phase; the producer waits empty[slot] with
 * the opposite parity, so on its first pass through the ring (phase 0) it waits for parity 1,
 * which a freshly initialised barrier reports as complete: it does not block on slots nobody has
 * used yet (footgun FG16). The phase flips each time the slot index wraps to 0. */
#ifndef FMHA_ATTN_RING_H
#define FMHA_ATTN_RING_H

#include "model/hd.h"

typedef struct {
    int slot;       /* 0 .. depth - 1 */
    unsigned phase; /* 0, 1: flips at each wrap */
    int depth;
} ring_state;

FMHA_HD ring_state ring_make(int depth)
{
    ring_state s = {0, 0u, depth};
    return s;
}

FMHA_HD void ring_advance(ring_state *s)
{
    if (++s->slot == s->depth) {
        s->slot = 0;
        s->phase ^= 1u;
    }
}

FMHA_HD unsigned ring_full_parity(const ring_state *s) { return s->phase; }
FMHA_HD unsigned ring_empty_parity(const ring_state *s) { return s->phase ^ 1u; }

#endif
