/* Baselines and ceilings measured in the same run as the stages (DESIGN.md section 6):
 *   baselines qk   --b B --hq H --sq M --skv N --d D   cuBLAS strided-batched bf16 GEMM computing the
 *                  same S = scale Q K^T as stage A (f32 output), the GEMM a library would run;
 *   baselines gemm --n 8192                            one large bf16 GEMM: the tensor-core ceiling;
 *   baselines copy --mib 4096                          device-to-device copy: the HBM ceiling
 *                                                      (bytes read + written).
 * Every timing: the project timer (warm-up, L2 flush, median and min of --iters samples). Last
 * line: "[OK] baseline=<name> ... time_ms=.. tflops=.. gbps=..". Exit 77 without a GPU. */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cuda_check.h"
#include "host/device.h"
#include "host/timer.h"

typedef struct {
    cublasHandle_t h;
    int b, m, n, k;
    long long sa, sb, sc;
    const void *A, *B;
    void *C;
    float alpha;
    cudaDataType_t ctype;
} gemm_ctx;

static int run_gemm(void *p)
{
    gemm_ctx *g = p;
    const float beta = 0.0f;
    /* column-major: C (m x n) = op(A) (m x k) * op(B) (k x n); A stored k x m (transposed) */
    cublasStatus_t s = cublasGemmStridedBatchedEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->m, g->n, g->k, &g->alpha, g->A,
                                                  CUDA_R_16BF, g->k, g->sa, g->B, CUDA_R_16BF, g->k, g->sb, &beta, g->C,
                                                  g->ctype, g->m, g->sc, g->b, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasGemmStridedBatchedEx failed: %d\n", (int)s);
        return 1;
    }
    return 0;
}

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
} copy_ctx;

static int run_copy(void *p)
{
    copy_ctx *c = p;
    CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, 0));
    return 0;
}

static long arg(int argc, char **argv, const char *name, long def)
{
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || v < 1) {
                fprintf(stderr, "baselines: %s=%s: must be a positive integer\n", name, argv[i + 1]);
                exit(2);
            }
            return v;
        }
    return def;
}

/* Random bf16 in [-1, 1): the timing must not run on zeros. */
static int fill_random_bf16(void *dev, size_t n)
{
    uint16_t *h = malloc(n * 2);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        float f = (float)(x >> 8) / 16777216.0f * 2.0f - 1.0f;
        uint32_t u;
        memcpy(&u, &f, 4);
        h[i] = (uint16_t)(u >> 16);
    }
    CUDA_CHECK(cudaMemcpy(dev, h, n * 2, cudaMemcpyHostToDevice));
    free(h);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "qk") && strcmp(argv[1], "gemm") && strcmp(argv[1], "copy"))) {
        fprintf(stderr, "usage: baselines qk|gemm|copy [--b --hq --sq --skv --d | --n | --mib] [--iters N]\n");
        return 2;
    }
    gpu_info g;
    gpu_query(&g);
    if (!g.present) {
        printf("[SKIP] baseline=%s: no GPU (%s)\n", argv[1], g.why_absent);
        return 77;
    }
    timer_cfg cfg = {.warmup = 5, .iters = (int)arg(argc, argv, "--iters", 30), .flush_l2 = 1};
    timer_result t;
    if (!strcmp(argv[1], "copy")) {
        copy_ctx c = {NULL, NULL, (size_t)arg(argc, argv, "--mib", 4096) << 20};
        CUDA_CHECK(cudaMalloc(&c.dst, c.bytes));
        CUDA_CHECK(cudaMalloc((void **)&c.src, c.bytes));
        CUDA_CHECK(cudaMemset((void *)c.src, 1, c.bytes));
        if (timer_measure(run_copy, &c, &cfg, &t)) return 1;
        printf("[OK] baseline=d2d_copy bytes=%zu time_ms=%.4f time_min_ms=%.4f gbps=%.1f\n", c.bytes, t.median_ms,
               t.min_ms, 2.0 * (double)c.bytes / (t.median_ms * 1e-3) / 1e9);
        return 0;
    }
    gemm_ctx c = {0};
    if (cublasCreate(&c.h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasCreate failed\n"); return 1; }
    const char *name;
    if (!strcmp(argv[1], "gemm")) {
        long n = arg(argc, argv, "--n", 8192);
        c.b = 1; c.m = c.n = c.k = (int)n; c.alpha = 1.0f; c.ctype = CUDA_R_16BF;
        name = "cublas_bf16_gemm";
    } else {
        /* S^T (skv x sq, column-major) = K Q^T: A = K stored [skv][d] = (d x skv) col-major, op T */
        c.b = (int)(arg(argc, argv, "--b", 1) * arg(argc, argv, "--hq", 1));
        c.m = (int)arg(argc, argv, "--skv", 4096); c.n = (int)arg(argc, argv, "--sq", 4096);
        c.k = (int)arg(argc, argv, "--d", 128);
        c.alpha = 1.0f; c.ctype = CUDA_R_32F;
        name = "cublas_qk_f32out";
    }
    c.sa = (long long)c.m * c.k; c.sb = (long long)c.n * c.k; c.sc = (long long)c.m * c.n;
    size_t cbytes = (size_t)c.b * c.sc * (c.ctype == CUDA_R_32F ? 4 : 2);
    CUDA_CHECK(cudaMalloc((void **)&c.A, (size_t)c.b * c.sa * 2));
    CUDA_CHECK(cudaMalloc((void **)&c.B, (size_t)c.b * c.sb * 2));
    CUDA_CHECK(cudaMalloc(&c.C, cbytes));
    if (fill_random_bf16((void *)c.A, (size_t)c.b * c.sa) || fill_random_bf16((void *)c.B, (size_t)c.b * c.sb)) return 1;
    if (timer_measure(run_gemm, &c, &cfg, &t)) return 1;
    double flops = 2.0 * c.b * (double)c.m * c.n * c.k;
    double bytes = 2.0 * c.b * (double)(c.sa + c.sb) + (double)cbytes;
    printf("[OK] baseline=%s batch=%d m=%d n=%d k=%d time_ms=%.4f time_min_ms=%.4f tflops=%.2f gbps=%.1f\n", name, c.b,
           c.m, c.n, c.k, t.median_ms, t.min_ms, flops / (t.median_ms * 1e-3) / 1e12, bytes / (t.median_ms * 1e-3) / 1e9);
    cublasDestroy(c.h);
    return 0;
}
