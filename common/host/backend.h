/* Which backend runs a stage (README, "Backends"):
 *   auto   sm100 on a Blackwell GPU (CC 10.0: sm_100a code loads on CC 10.0 only), sm90 on a
 *          Hopper GPU (CC 9.0), else emu (the host model, available everywhere);
 *   sm90 / sm100 requested explicitly without that GPU: skipped (exit 77) with the reason;
 *   a backend the stage does not implement: a bad argument (exit 2). */
#ifndef FMHA_BACKEND_H
#define FMHA_BACKEND_H

#include <stddef.h>

#include "host/device.h"
#include "host/options.h"

#define BACKEND_BIT(b) (1u << (b))

/* 1 if this GPU can run the backend's kernels. emu: always. */
int backend_available(backend_t b, const gpu_info *g, char *why, size_t len);

/* Returns 0 (chosen set), 2 (not implemented by the stage; msg) or 77 (not available here; msg). */
int backend_select(backend_t requested, unsigned implemented, const gpu_info *g, backend_t *chosen,
                   char *msg, size_t len);

#endif
