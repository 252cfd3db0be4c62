/* Running a stage's kernel on the GPU, the same way for every stage: upload the inputs, allocate
 * the deadlock watchdog, launch once through the stage_def's launcher for o->backend, report a
 * watchdog deadlock or the CUDA error, download the outputs, then time the launch when asked.
 * The stage passes a copy of its own parameter struct holding host pointers and describes its
 * buffers; each buffer's device pointer is written into that copy (dev_slot points into it), so
 * the kernel launcher needs no knowledge of this file. */
#ifndef FMHA_STAGE_GPU_H
#define FMHA_STAGE_GPU_H

#include <stddef.h>

#include "host/options.h"
#include "host/runner.h"
#include "host/timer.h"
#include "host/watchdog.h"

/* Where a buffer's device contents come from. */
typedef enum {
    BUF_UPLOAD = 0,   /* the host buffer (inputs as made, outputs poisoned) */
    BUF_DEVICE_BF16,  /* made on the device: bf16 inputs in --init's mode (host/devfill.h) */
    BUF_DEVICE_POISON16, BUF_DEVICE_POISON32, /* an output poisoned on the device (2- / 4-byte) */
    BUF_DEVICE_ALLOC, /* device scratch (split partials), or scales a BUF_DEVICE_E4M3 buffer fills */
    BUF_DEVICE_E4M3,  /* e4m3 rows of e4m3_d codes quantised on the device (host/devfill.h), their
                         scales into buffer scale_buf (an earlier BUF_DEVICE_ALLOC one) */
} buf_source;

typedef struct {
    void *host;       /* inputs: uploaded; outputs: uploaded (poisoned) and downloaded back */
    size_t bytes;
    int is_output;    /* 1: downloaded after the first launch (the one checked); 2: after the timed
                         launches, the last one's contents (a record the kernel keeps of itself) */
    void **dev_slot;  /* where to write the device pointer (a field of the parameter copy) */
    buf_source src;   /* BUF_UPLOAD unless the run keeps its inputs on the device */
    int int_lo, int_hi; /* BUF_DEVICE_BF16 with --init int: the range */
    int e4m3_d, scale_buf; /* BUF_DEVICE_E4M3: codes per row, the index of the scales' buffer */
} stage_buf;

/* A timing run (--no-check, no --dump) on a GPU makes its inputs on the device and downloads
 * nothing: the host then allocates but never fills or reads its copies. */
int stage_inputs_on_device(const fmha_opts *o);

/* params: the stage's parameter struct (a copy the caller owns; its pointer fields are overwritten
 * through the dev_slots and wd_slot). Returns 0, or 1 after printing what went wrong. */
int stage_gpu_run(const stage_def *st, void *params, fmha_watchdog **wd_slot, stage_buf *bufs, int nbufs,
                  const fmha_opts *o, stage_result *r);

#endif
