/* TMA loads in flight, for the emu flows of the TMA stages: a load is issued onto an mbarrier (its
 * bytes already announced there with expect_tx) and lands - its box written into the SMEM image,
 * its bytes completed on the barrier - only when a waiter needs it. A wait lets the pending boxes
 * of that barrier land, oldest first, until the phase it waits for has completed, and no further:
 * the latest timing the PTX ISA allows. So a protocol that works here works on any timing, and a
 * broken one shows its symptom:
 *   expect_tx one box short (FG15): the phase completes one box early; the waiter reads the SMEM
 *     without it (the previous tile's bytes, or poison), and that box lands in the next phase;
 *   expect_tx one box too many (FG15): every box lands and the phase still misses bytes: the
 *     deadlock, reported with the barrier, its parity and what is outstanding;
 *   the wrong parity on the first wait (FG16): a fresh barrier answers parity 1 at once, so the
 *     waiter reads SMEM before any box has landed.
 * One queue serves a CTA; tma_flight_drain lands everything at its end. */
#ifndef FMHA_MODEL_TMA_FLIGHT_H
#define FMHA_MODEL_TMA_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "model/mbar_model.h"
#include "model/tmap_check.h"

#define TMA_FLIGHT_MAX 64

typedef struct {
    const tmap_params *map;
    const void *global;  /* the host tensor map describes */
    int32_t coords[5];
    uint32_t dst;        /* SMEM offset in the image */
    mbar_model *bar;
} tma_flight_box;

typedef struct {
    uint8_t *smem;       /* the CTA's SMEM image */
    uint8_t *view;       /* NULL, or SMEM as the async proxy sees it (tma_store_queue's view): a
                            landed box is written there too, the async proxy wrote it */
    int cc_major;
    int n;
    tma_flight_box box[TMA_FLIGHT_MAX];
    char msg[300];       /* why the last call failed */
} tma_flight;

void tma_flight_init(tma_flight *q, uint8_t *smem, uint8_t *view, int cc_major);

/* Issue one box load (cp.async.bulk.tensor ... mbarrier::complete_tx). 0, or 2 when the queue is full. */
int tma_flight_issue(tma_flight *q, const tmap_params *map, const void *global, const int32_t *coords, uint32_t dst,
                     mbar_model *bar);

/* A wait on bar for parity: land its pending boxes until that phase has completed. 0 when it has;
 * 1 when it cannot (a deadlock on the GPU); 2 when a box was refused by the model. q->msg says why. */
int tma_flight_wait(tma_flight *q, mbar_model *bar, int parity);

/* Land every pending box (the CTA's end). 0, or 2 as above. */
int tma_flight_drain(tma_flight *q);

#endif
