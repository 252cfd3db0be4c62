#include "model/emu_flow.h"

#include <stdio.h>

int emu_fail(emu_flow *f, const char *msg)
{
    if (!f->err[0]) snprintf(f->err, (size_t)f->errlen, "%s", msg);
    return 1;
}

int emu_fail_tmem(emu_flow *f) { return emu_fail(f, f->tm->msg); }

int emu_wait(emu_flow *f, mbar_model *m, int parity, const char *waiter)
{
    if (mbar_model_wait(m, parity) == MBAR_OK) return 0;
    char diag[256];
    mbar_model_diagnose(m, diag, sizeof diag);
    char msg[400];
    snprintf(msg, sizeof msg, "deadlock at %s: %s", waiter, diag);
    return emu_fail(f, msg);
}
