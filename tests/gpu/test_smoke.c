/* GPU smoke test: a real kernel launch on the Hopper machine, every element checked; the event
 * timer measures it. Skips with the reason where no CC 9.0 GPU is present. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <time.h>

#include "host/bf16.h"
#include "host/init.h"
#include "host/timer.h"
#include "kernels/smoke.h"
#include "test_util.h"

Test(gpu_smoke, affine_kernel_writes_every_element)
{
    SKIP_WITHOUT_GPU(9);
    const int n = 100003; /* not a multiple of the block or grid size */
    float *h = malloc(sizeof(float) * n), *d = NULL;
    poison_f32(h, n);
    CUDA_ASSERT(cudaMalloc((void **)&d, sizeof(float) * n));
    CUDA_ASSERT(cudaMemcpy(d, h, sizeof(float) * n, cudaMemcpyHostToDevice)); /* poison on the GPU */
    cr_assert_eq(smoke_affine_launch(d, n, 0.5f, -3.0f), 0);
    CUDA_ASSERT(cudaMemcpy(h, d, sizeof(float) * n, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        cr_assert(f32_bits(h[i]) != POISON_F32, "element %d never written", i);
        cr_assert_eq(h[i], 0.5f * (float)i - 3.0f, "element %d = %g", i, h[i]);
    }
    cudaFree(d);
    free(h);
}

Test(gpu_smoke, runs_sm90a_code)
{
    SKIP_WITHOUT_GPU(9);
    int arch = 0;
    cr_assert_eq(smoke_arch_launch(&arch), 0);
    cr_expect_eq(arch, 900, "the kernel that ran was compiled for __CUDA_ARCH__ %d", arch);
}

static float *g_buf;
static int launch_smoke(void *ctx)
{
    (void)ctx;
    return smoke_affine_launch(g_buf, 1 << 24, 1.0f, 0.0f);
}

Test(gpu_smoke, event_timer_measures_a_kernel)
{
    SKIP_WITHOUT_GPU(9);
    CUDA_ASSERT(cudaMalloc((void **)&g_buf, sizeof(float) << 24));
    timer_cfg cfg = {.warmup = 3, .iters = 21, .flush_l2 = 1};
    timer_result t;
    cr_assert_eq(timer_measure(launch_smoke, NULL, &cfg, &t), 0);
    cr_expect_eq(t.samples, 21);
    cr_expect(t.min_ms > 0 && t.min_ms <= t.median_ms && t.median_ms <= t.max_ms,
              "min %g median %g max %g", t.min_ms, t.median_ms, t.max_ms);
    /* 64 MiB written: at under 10 TB/s this takes more than 6 us */
    cr_expect(t.min_ms > 0.006, "min %g ms is faster than any HBM could write 64 MiB", t.min_ms);
    cudaFree(g_buf);
}

static int g_launches;
static int launch_counted(void *ctx)
{
    g_launches++;
    return launch_smoke(ctx);
}

/* --warmup-ms: after the counted warm-up the timer keeps launching (8 between syncs) until the wall
 * time has passed, then takes its samples: more launches than warmup + iters, and at least that
 * long before the first sample. */
Test(gpu_smoke, timed_warmup_keeps_launching_for_its_milliseconds)
{
    SKIP_WITHOUT_GPU(9);
    CUDA_ASSERT(cudaMalloc((void **)&g_buf, sizeof(float) << 24));
    timer_result t;
    timer_cfg plain = {.warmup = 3, .iters = 21, .flush_l2 = 1};
    g_launches = 0;
    cr_assert_eq(timer_measure(launch_counted, NULL, &plain, &t), 0);
    cr_expect_eq(g_launches, 3 + 21, "without --warmup-ms: the warm-up and the samples only (%d)", g_launches);
    const int ms = 40;
    timer_cfg warm = {.warmup = 3, .warmup_ms = ms, .iters = 21, .flush_l2 = 1};
    g_launches = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    cr_assert_eq(timer_measure(launch_counted, NULL, &warm, &t), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double took = 1e3 * (double)(b.tv_sec - a.tv_sec) + 1e-6 * (double)(b.tv_nsec - a.tv_nsec);
    const int extra = g_launches - 3 - 21;
    cr_expect(extra >= 8 && extra % 8 == 0, "the timed warm-up launched %d more, in groups of 8", extra);
    /* each launch writes 64 MiB (more than 6 us): the extra launches fill about the 40 ms */
    cr_expect(took >= ms, "the whole measurement took %.1f ms, under its %d ms warm-up", took, ms);
    cr_expect(extra * t.min_ms >= 0.5 * ms, "%d extra launches of %.3f ms cannot have filled %d ms", extra, t.min_ms, ms);
    cudaFree(g_buf);
}
