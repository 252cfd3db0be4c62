#include "model/tma_flight.h"

#include <stdio.h>
#include <string.h>

#include "model/tma_model.h"

void tma_flight_init(tma_flight *q, uint8_t *smem, uint8_t *view, int cc_major)
{
    memset(q, 0, sizeof *q);
    q->smem = smem;
    q->view = view;
    q->cc_major = cc_major;
}

int tma_flight_issue(tma_flight *q, const tmap_params *map, const void *global, const int32_t *coords, uint32_t dst,
                     mbar_model *bar)
{
    if (q->n >= TMA_FLIGHT_MAX) {
        snprintf(q->msg, sizeof q->msg, "more than %d TMA loads in flight", TMA_FLIGHT_MAX);
        return 2;
    }
    tma_flight_box *b = &q->box[q->n++];
    b->map = map;
    b->global = global;
    for (unsigned i = 0; i < 5; i++) b->coords[i] = i < map->rank ? coords[i] : 0;
    b->dst = dst;
    b->bar = bar;
    return 0;
}

/* Land box i: its bytes into the image, its transaction bytes onto its barrier. */
static int land(tma_flight *q, int i)
{
    tma_flight_box b = q->box[i];
    memmove(&q->box[i], &q->box[i + 1], (size_t)(q->n - i - 1) * sizeof q->box[0]);
    q->n--;
    uint32_t tx = 0;
    char err[256];
    if (tma_model_load(b.map, q->cc_major, b.global, b.coords, q->smem, b.dst, &tx, err, sizeof err)) {
        snprintf(q->msg, sizeof q->msg, "TMA load refused by the model: %s", err);
        return 2;
    }
    if (q->view) tma_model_load(b.map, q->cc_major, b.global, b.coords, q->view, b.dst, &tx, err, sizeof err);
    mbar_model_complete_tx(b.bar, (int)tx);
    return 0;
}

int tma_flight_wait(tma_flight *q, mbar_model *bar, int parity)
{
    while (!mbar_model_try_wait_parity(bar, parity)) {
        int i = 0;
        while (i < q->n && q->box[i].bar != bar) i++;
        if (i == q->n) {
            char diag[200];
            mbar_model_diagnose(bar, diag, sizeof diag);
            snprintf(q->msg, sizeof q->msg, "parity %d never completes: every TMA load on it has landed and %s", parity,
                     diag);
            return 1;
        }
        if (land(q, i)) return 2;
    }
    return 0;
}

int tma_flight_drain(tma_flight *q)
{
    while (q->n)
        if (land(q, 0)) return 2;
    return 0;
}
