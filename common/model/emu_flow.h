/* What every stage's emu flow shares: the TMEM model it runs on and the error buffer, with the
 * three ways a modelled step fails, so each flow reports a broken rule the same way:
 *   emu_fail       a rule was broken (the MMA emulator's or the flow's own message)
 *   emu_fail_tmem  the TMEM model refused an access (the quadrant rule, an unallocated column)
 *   emu_wait       an mbarrier wait whose phase cannot have completed: the deadlock it would be
 *                  on the GPU, with the barrier's state and the waiter named
 * Each returns 1 after writing the message (the first one written is kept). */
#ifndef FMHA_MODEL_EMU_FLOW_H
#define FMHA_MODEL_EMU_FLOW_H

#include "model/mbar_model.h"
#include "model/tmem_model.h"

typedef struct {
    tmem_model *tm;
    char *err;  /* "" while nothing failed */
    int errlen;
} emu_flow;

int emu_fail(emu_flow *f, const char *msg);
int emu_fail_tmem(emu_flow *f);
int emu_wait(emu_flow *f, mbar_model *m, int parity, const char *waiter);

#endif
