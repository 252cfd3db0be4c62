#include "host/timer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "host/cuda_check.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double timer_median(const double *v, int n)
{
    if (n <= 0) return 0.0;
    double *c = malloc(sizeof(double) * (size_t)n);
    if (!c) abort();
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    double m = (n % 2) ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static int measure(timer_launch_fn launch, void *ctx, const timer_cfg *cfg, timer_result *out,
                   void *flush, size_t flush_bytes, cudaEvent_t ev0, cudaEvent_t ev1, double *ms)
{
    for (int i = 0; i < cfg->warmup; i++) {
        if (launch(ctx)) return 1;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    if (cfg->warmup_ms > 0) { /* the GPU kept busy: 8 launches between syncs, no L2 flush */
        const double t0 = wall_ms();
        while (wall_ms() - t0 < cfg->warmup_ms) {
            for (int i = 0; i < 8; i++)
                if (launch(ctx)) return 1;
            CUDA_CHECK(cudaDeviceSynchronize());
        }
    }
    for (int i = 0; i < cfg->iters; i++) {
        if (flush) CUDA_CHECK(cudaMemsetAsync(flush, i & 0xFF, flush_bytes, 0));
        CUDA_CHECK(cudaEventRecord(ev0, 0));
        if (launch(ctx)) return 1;
        CUDA_CHECK(cudaEventRecord(ev1, 0));
        CUDA_CHECK(cudaEventSynchronize(ev1));
        float t = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&t, ev0, ev1));
        ms[i] = t;
    }
    out->samples = cfg->iters;
    out->median_ms = timer_median(ms, cfg->iters);
    out->min_ms = out->max_ms = ms[0];
    for (int i = 1; i < cfg->iters; i++) {
        if (ms[i] < out->min_ms) out->min_ms = ms[i];
        if (ms[i] > out->max_ms) out->max_ms = ms[i];
    }
    return 0;
}

int timer_measure(timer_launch_fn launch, void *ctx, const timer_cfg *cfg, timer_result *out)
{
    memset(out, 0, sizeof *out);
    if (cfg->iters <= 0) return 0;
    void *flush = NULL;
    size_t flush_bytes = 0;
    if (cfg->flush_l2) {
        int l2 = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
        flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : (64 << 20));
        CUDA_CHECK(cudaMalloc(&flush, flush_bytes));
    }
    cudaEvent_t ev0, ev1;
    CUDA_CHECK(cudaEventCreate(&ev0));
    CUDA_CHECK(cudaEventCreate(&ev1));
    double *ms = malloc(sizeof(double) * (size_t)cfg->iters);
    if (!ms) abort();
    int rc = measure(launch, ctx, cfg, out, flush, flush_bytes, ev0, ev1, ms);
    free(ms);
    cudaEventDestroy(ev0);
    cudaEventDestroy(ev1);
    if (flush) cudaFree(flush);
    return rc;
}
