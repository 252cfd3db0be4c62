#include "host/stage_gpu.h"

#include <stdio.h>

#include <cuda_runtime_api.h>

#include "host/devmem.h"

int stage_gpu_run(const char *stage, stage_buf *bufs, int nbufs, fmha_watchdog **wd_slot,
                  timer_launch_fn launch, void *ctx, const fmha_opts *o, stage_result *r)
{
    fmha_watchdog *wd_host = NULL;
    int rc = 1, trapped = 0;
    for (int i = 0; i < nbufs; i++) *bufs[i].dev_slot = NULL;
    for (int i = 0; i < nbufs; i++)
        if (dev_upload(bufs[i].dev_slot, bufs[i].host, bufs[i].bytes)) goto out;
    if (wd_slot && watchdog_alloc(&wd_host, wd_slot)) goto out;

    cudaError_t e = cudaSuccess;
    if (launch(ctx) || (e = cudaDeviceSynchronize()) != cudaSuccess) {
        char why[256];
        if (wd_host && watchdog_fired(wd_host)) {
            watchdog_describe(wd_host, why, sizeof why);
            fprintf(stderr, "stage %s: %s\n", stage, why);
            trapped = 1;
        } else {
            fprintf(stderr, "stage %s: kernel failed: %s\n", stage, cudaGetErrorString(e));
        }
        goto out;
    }
    for (int i = 0; i < nbufs; i++)
        if (bufs[i].is_output && dev_download(bufs[i].host, *bufs[i].dev_slot, bufs[i].bytes)) goto out;
    if (o->iters > 0) {
        timer_cfg cfg = {.warmup = o->warmup, .iters = o->iters, .flush_l2 = 1};
        timer_result t;
        if (timer_measure(launch, ctx, &cfg, &t)) goto out;
        r->time_ms = t.median_ms;
        r->time_min_ms = t.min_ms;
    }
    rc = 0;
out:
    for (int i = 0; i < nbufs; i++) dev_free(*bufs[i].dev_slot);
    /* after a trap the context is gone; the pinned report is released at process exit */
    if (wd_host && !trapped) watchdog_free(wd_host);
    return rc;
}
