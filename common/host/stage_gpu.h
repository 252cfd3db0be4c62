/* Running a stage's kernel on the GPU, the same way for every stage: upload the inputs, allocate
 * the deadlock watchdog, launch once, report a watchdog deadlock or the CUDA error, download the
 * outputs, then time the launch when asked. The stage describes its buffers; each buffer's device
 * pointer is written into the stage's own parameter struct (dev_slot points into the launch
 * context), so the kernel launcher needs no knowledge of this file. */
#ifndef FMHA_STAGE_GPU_H
#define FMHA_STAGE_GPU_H

#include <stddef.h>

#include "host/options.h"
#include "host/runner.h"
#include "host/timer.h"
#include "host/watchdog.h"

typedef struct {
    void *host;       /* inputs: uploaded; outputs: uploaded (poisoned) and downloaded back */
    size_t bytes;
    int is_output;
    void **dev_slot;  /* where to write the device pointer (a field of the launch context) */
} stage_buf;

/* launch(ctx) enqueues one run. Returns 0, or 1 after printing what went wrong. */
int stage_gpu_run(const char *stage, stage_buf *bufs, int nbufs, fmha_watchdog **wd_slot,
                  timer_launch_fn launch, void *ctx, const fmha_opts *o, stage_result *r);

#endif
