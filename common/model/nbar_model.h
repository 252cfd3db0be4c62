/* A host model of a named barrier (bar.sync / barrier.sync id, count): `count` threads must
 * arrive for the barrier to release its waiters; arrivals past the count start the next
 * generation (PTX ISA 9.7.13.1 bar / barrier). It lets the emu flows and footgun FG12 show what a
 * warp that joins a barrier it does not belong to does: the barrier releases before the warp it
 * was waiting for (an early release), and the arrival left over waits for a generation nobody
 * completes (a hang). Warps arrive whole: a bar.sync is warp-wide. */
#ifndef FMHA_MODEL_NBAR_MODEL_H
#define FMHA_MODEL_NBAR_MODEL_H

typedef struct {
    int count;      /* threads per generation */
    int arrived;    /* in the current generation */
    int generation; /* completed generations */
} nbar_model;

static inline void nbar_init(nbar_model *b, int count)
{
    b->count = count;
    b->arrived = 0;
    b->generation = 0;
}

/* A warp (32 threads) arrives: returns the generation it waits for (it is released once
 * nbar_released says so). */
static inline int nbar_arrive_warp(nbar_model *b)
{
    const int gen = b->generation;
    b->arrived += 32;
    if (b->arrived >= b->count) {
        b->arrived -= b->count;
        b->generation++;
    }
    return gen;
}

static inline int nbar_released(const nbar_model *b, int gen) { return b->generation > gen; }

#endif
