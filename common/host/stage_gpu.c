#include "host/stage_gpu.h"

#include <stdio.h>

#include <cuda_runtime_api.h>

#include "host/devfill.h"
#include "host/devmem.h"
#include "host/init.h"

int stage_inputs_on_device(const fmha_opts *o)
{
    return o->backend != BACKEND_EMU && !o->check && !o->dump[0];
}

/* Buffer i's device contents: uploaded, or made on the device (inputs from the seed and i). */
static int make_buffer(stage_buf *bufs, int i, const fmha_opts *o)
{
    stage_buf *b = &bufs[i];
    switch (b->src) {
    case BUF_UPLOAD: return dev_upload(b->dev_slot, b->host, b->bytes);
    case BUF_DEVICE_BF16:
        return dev_alloc(b->dev_slot, b->bytes) ||
               dev_fill_bf16(*b->dev_slot, b->bytes / 2, o->init, o->seed * 1000003u + (uint64_t)i, b->int_lo, b->int_hi);
    case BUF_DEVICE_POISON16: return dev_alloc(b->dev_slot, b->bytes) || dev_fill_u16(*b->dev_slot, b->bytes / 2, POISON_BF16);
    case BUF_DEVICE_POISON32: return dev_alloc(b->dev_slot, b->bytes) || dev_fill_u32(*b->dev_slot, b->bytes / 4, POISON_F32);
    case BUF_DEVICE_ALLOC: return dev_alloc(b->dev_slot, b->bytes);
    case BUF_DEVICE_E4M3:
        if (b->scale_buf < 0 || b->scale_buf >= i || bufs[b->scale_buf].src != BUF_DEVICE_ALLOC || b->e4m3_d < 1) return 1;
        return dev_alloc(b->dev_slot, b->bytes) ||
               dev_fill_e4m3_rows(*b->dev_slot, *bufs[b->scale_buf].dev_slot, b->bytes / (size_t)b->e4m3_d, b->e4m3_d,
                                  o->seed * 1000003u + (uint64_t)i);
    }
    return 1;
}

typedef struct {
    stage_launch_fn fn;
    const void *params;
} launch_ctx;

static int launch(void *ctx)
{
    const launch_ctx *c = ctx;
    return c->fn(c->params);
}

int stage_gpu_run(const stage_def *st, void *params, fmha_watchdog **wd_slot, stage_buf *bufs, int nbufs,
                  const fmha_opts *o, stage_result *r)
{
    const char *stage = st->letter;
    launch_ctx lc = {o->backend == BACKEND_SM100 ? st->launch_sm100 : st->launch_sm90, params};
    void *ctx = &lc;
    if (!lc.fn) {
        fprintf(stderr, "stage %s: no %s launcher\n", stage, backend_name(o->backend));
        return 1;
    }
    fmha_watchdog *wd_host = NULL;
    int rc = 1, trapped = 0;
    for (int i = 0; i < nbufs; i++) *bufs[i].dev_slot = NULL;
    for (int i = 0; i < nbufs; i++)
        if (make_buffer(bufs, i, o)) goto out;
    if (wd_slot && watchdog_alloc(&wd_host, wd_slot)) goto out;

    cudaError_t e = cudaSuccess;
    if (launch(ctx) || (e = cudaDeviceSynchronize()) != cudaSuccess) {
        char why[256];
        if (wd_host && watchdog_fired(wd_host)) {
            watchdog_describe(wd_host, why, sizeof why);
            fprintf(stderr, "stage %s: %s\n", stage, why);
            if (!r->model_msg[0]) snprintf(r->model_msg, sizeof r->model_msg, "the watchdog: %s", why); /* a fault's symptom */
            trapped = 1;
        } else {
            fprintf(stderr, "stage %s: kernel failed: %s\n", stage, cudaGetErrorString(e));
        }
        goto out;
    }
    for (int i = 0; i < nbufs; i++) /* a run whose inputs stayed on the device reads nothing back */
        if (bufs[i].is_output == 1 && bufs[i].src == BUF_UPLOAD && dev_download(bufs[i].host, *bufs[i].dev_slot, bufs[i].bytes))
            goto out;
    if (o->iters > 0) {
        timer_cfg cfg = {.warmup = o->warmup, .warmup_ms = o->warmup_ms, .iters = o->iters, .flush_l2 = 1};
        timer_result t;
        if (timer_measure(launch, ctx, &cfg, &t)) goto out;
        r->time_ms = t.median_ms;
        r->time_min_ms = t.min_ms;
    }
    for (int i = 0; i < nbufs; i++) /* the last launch's record of itself (the first's without timing) */
        if (bufs[i].is_output == 2 && dev_download(bufs[i].host, *bufs[i].dev_slot, bufs[i].bytes)) goto out;
    rc = 0;
out:
    for (int i = 0; i < nbufs; i++) dev_free(*bufs[i].dev_slot);
    /* after a trap the context is gone; the pinned report is released at process exit */
    if (wd_host && !trapped) watchdog_free(wd_host);
    return rc;
}
