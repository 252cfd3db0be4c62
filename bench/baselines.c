/* Baselines and ceilings measured in the same run as the stages (README, "How speed is measured"):
 *   baselines qk   --b B --hq H --sq M --skv N --d D   cuBLAS strided-batched bf16 GEMM computing the
 *                  same S = scale Q K^T as stage A (f32 output), the GEMM a library would run;
 *   baselines pv   --b B --hq H --sq M --skv N --d D   cuBLAS strided-batched bf16 GEMM computing
 *                  O = P V alone per (batch, head): P [M x N] bf16, V [N x D] bf16, O [M x D] f32
 *                  (FLOPs 2*B*H*M*N*D);
 *   baselines qkpv --b B --hq H --sq M --skv N --d D   the unfused pair a library would run for
 *                  stage B, timed as one unit: P = bf16(scale Q K^T) written to memory, then
 *                  O = P V in f32 (FLOPs 4*B*H*M*N*D, as stage B counts them);
 *   baselines gemm --n 8192                            one large bf16 GEMM: the tensor-core ceiling;
 *   baselines gemm_fp8 --n 8192                        one large e4m3 GEMM (cuBLASLt, bf16 out): the
 *                                                      FP8 ceiling stage D's MMAs are measured against;
 *   baselines copy --mib 4096                          device-to-device copy: the HBM ceiling
 *   baselines read --mib 4096                          one read-only pass: the decode ceiling
 *                                                      (bytes read + written).
 * Every timing: the project timer (warm-up, L2 flush, median and min of --iters samples). Last
 * line: "[OK] baseline=<name> ... time_ms=.. tflops=.. gbps=..". Exit 77 without a GPU. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cuda_check.h"
#include "host/devfill.h"
#include "host/device.h"
#include "host/timer.h"

typedef struct {
    cublasHandle_t h;
    int b, m, n, k;
    cublasOperation_t opa;  /* op(A); op(B) is always N */
    int lda, ldb, ldc;
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
    /* column-major: C (m x n) = op(A) (m x k) * B (k x n) */
    cublasStatus_t s = cublasGemmStridedBatchedEx(g->h, g->opa, CUBLAS_OP_N, g->m, g->n, g->k, &g->alpha, g->A,
                                                  CUDA_R_16BF, g->lda, g->sa, g->B, CUDA_R_16BF, g->ldb, g->sb, &beta,
                                                  g->C, g->ctype, g->ldc, g->sc, g->b, CUBLAS_COMPUTE_32F,
                                                  CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasGemmStridedBatchedEx failed: %d\n", (int)s);
        return 1;
    }
    return 0;
}

static size_t gemm_c_bytes(const gemm_ctx *g)
{
    return (size_t)g->b * (size_t)g->sc * (g->ctype == CUDA_R_32F ? 4 : 2);
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

typedef struct {
    const void *buf;
    void *sink;
    size_t bytes;
} read_ctx;

static int run_read(void *p)
{
    read_ctx *c = p;
    return dev_read_all(c->buf, c->bytes, c->sink);
}

static long arg_min(int argc, char **argv, const char *name, long def, long min)
{
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || v < min) {
                fprintf(stderr, "baselines: %s=%s: must be an integer >= %ld\n", name, argv[i + 1], min);
                exit(2);
            }
            return v;
        }
    return def;
}

static long arg(int argc, char **argv, const char *name, long def) { return arg_min(argc, argv, name, def, 1); }

/* Random bf16 inputs, N(0, 1) like the stage programs' timing inputs, made on the device
 * (host/devfill.h): the timing must not run on zeros, and no host copy is needed. */
static int fill_random_bf16(void *dev, size_t n)
{
    static uint64_t calls;
    return dev_fill_bf16(dev, n, INIT_RAND, 12345u + calls++, 0, 0);
}

/* Shapes, strides and buffers of one strided-batched GEMM; A and B get random bf16 unless given. */
static int setup_gemm(gemm_ctx *c, const void *given_b)
{
    c->lda = c->opa == CUBLAS_OP_T ? c->k : c->m;
    c->ldb = c->k;
    c->ldc = c->m;
    c->sa = (long long)c->m * c->k; c->sb = (long long)c->n * c->k; c->sc = (long long)c->m * c->n;
    CUDA_CHECK(cudaMalloc((void **)&c->A, (size_t)c->b * c->sa * 2));
    CUDA_CHECK(cudaMalloc(&c->C, gemm_c_bytes(c)));
    if (fill_random_bf16((void *)c->A, (size_t)c->b * c->sa)) return 1;
    if (given_b) {
        c->B = given_b;
        return 0;
    }
    CUDA_CHECK(cudaMalloc((void **)&c->B, (size_t)c->b * c->sb * 2));
    return fill_random_bf16((void *)c->B, (size_t)c->b * c->sb);
}

/* gemm_fp8: D (m x n, bf16) = A^T B with A [m][k] and B [n][k] e4m3, both K-major (the only FP8
 * layout Hopper's tensor cores read: cuBLASLt's "TN"), f32 accumulation without cuBLASLt's
 * periodic promotion (CUBLASLT_MATMUL_DESC_FAST_ACCUM: what a raw wgmma e4m3 accumulation is, as
 * in stage D), the algorithm cuBLASLt's heuristic ranks first with a 32 MiB workspace. */
typedef struct {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    void *A, *B, *C, *ws;
    size_t ws_bytes;
    float alpha, beta;
} fp8_ctx;

static int lt_ok(cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS) return 1;
    fprintf(stderr, "baselines gemm_fp8: %s failed: %d\n", what, (int)s);
    return 0;
}

static int run_fp8(void *p)
{
    fp8_ctx *g = p;
    return !lt_ok(cublasLtMatmul(g->lt, g->op, &g->alpha, g->A, g->la, g->B, g->lb, &g->beta, g->C, g->lc, g->C, g->lc,
                                 &g->algo, g->ws, g->ws_bytes, 0),
                  "cublasLtMatmul");
}

static int gemm_fp8(int n, timer_cfg *cfg)
{
    fp8_ctx g = {.alpha = 1.0f, .beta = 0.0f, .ws_bytes = (size_t)32 << 20};
    const size_t el = (size_t)n * n;
    void *scales; /* the quantiser's per-row scales: not used by the GEMM */
    CUDA_CHECK(cudaMalloc(&g.A, el));
    CUDA_CHECK(cudaMalloc(&g.B, el));
    CUDA_CHECK(cudaMalloc(&g.C, el * 2));
    CUDA_CHECK(cudaMalloc(&g.ws, g.ws_bytes));
    CUDA_CHECK(cudaMalloc(&scales, (size_t)n * 4));
    /* random e4m3 codes (never zeros, no NaN: the device quantiser of stage D's cache) */
    if (dev_fill_e4m3_rows(g.A, scales, (size_t)n, n, 777u) || dev_fill_e4m3_rows(g.B, scales, (size_t)n, n, 778u)) return 1;
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const int8_t fast = 1;
    if (!lt_ok(cublasLtCreate(&g.lt), "cublasLtCreate") ||
        !lt_ok(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate") ||
        !lt_ok(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA") ||
        !lt_ok(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB") ||
        !lt_ok(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "FAST_ACCUM") ||
        !lt_ok(cublasLtMatrixLayoutCreate(&g.la, CUDA_R_8F_E4M3, n, n, n), "layout A") ||
        !lt_ok(cublasLtMatrixLayoutCreate(&g.lb, CUDA_R_8F_E4M3, n, n, n), "layout B") ||
        !lt_ok(cublasLtMatrixLayoutCreate(&g.lc, CUDA_R_16BF, n, n, n), "layout D"))
        return 1;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    if (!lt_ok(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate") ||
        !lt_ok(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &g.ws_bytes,
                                                    sizeof g.ws_bytes), "workspace preference") ||
        !lt_ok(cublasLtMatmulAlgoGetHeuristic(g.lt, g.op, g.la, g.lb, g.lc, g.lc, pref, 1, &res, &found), "heuristic"))
        return 1;
    if (found < 1) {
        fprintf(stderr, "baselines gemm_fp8: cuBLASLt has no algorithm for an e4m3 GEMM of %d^3 here\n", n);
        return 1;
    }
    g.algo = res.algo;
    timer_result t;
    if (timer_measure(run_fp8, &g, cfg, &t)) return 1;
    const double flops = 2.0 * (double)n * n * n, bytes = 2.0 * (double)el + 2.0 * (double)el;
    const size_t ver = cublasLtGetVersion();
    printf("[OK] baseline=cublaslt_fp8_gemm cublaslt=%zu.%zu.%zu m=%d n=%d k=%d time_ms=%.4f time_min_ms=%.4f tflops=%.2f "
           "gbps=%.1f\n", ver / 10000, ver / 100 % 100, ver % 100, n, n, n, t.median_ms, t.min_ms,
           flops / (t.median_ms * 1e-3) / 1e12, bytes / (t.median_ms * 1e-3) / 1e9);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(g.la); cublasLtMatrixLayoutDestroy(g.lb); cublasLtMatrixLayoutDestroy(g.lc);
    cublasLtMatmulDescDestroy(g.op);
    cublasLtDestroy(g.lt);
    return 0;
}

/* qkpv: the unfused pair a library runs for stage B, timed as one unit. */
static int run_pair(void *p)
{
    gemm_ctx *g = p;
    return run_gemm(&g[0]) || run_gemm(&g[1]);
}

int main(int argc, char **argv)
{
    const char *sub = argc >= 2 ? argv[1] : "";
    if (strcmp(sub, "qk") && strcmp(sub, "pv") && strcmp(sub, "qkpv") && strcmp(sub, "gemm") && strcmp(sub, "gemm_fp8") &&
        strcmp(sub, "copy") && strcmp(sub, "read")) {
        fprintf(stderr, "usage: baselines qk|pv|qkpv|gemm|gemm_fp8|copy|read [--b --hq --sq --skv --d | --n | --mib] "
                "[--iters N] [--warmup-ms MS]\n");
        return 2;
    }
    gpu_info g;
    gpu_query(&g);
    if (!g.present) {
        printf("[SKIP] baseline=%s: no GPU (%s)\n", sub, g.why_absent);
        return 77;
    }
    timer_cfg cfg = {.warmup = 5, .warmup_ms = (int)arg_min(argc, argv, "--warmup-ms", 0, 0), .iters = (int)arg(argc, argv, "--iters", 30),
                     .flush_l2 = 1};
    timer_result t;
    if (!strcmp(sub, "copy")) {
        copy_ctx c = {NULL, NULL, (size_t)arg(argc, argv, "--mib", 4096) << 20};
        CUDA_CHECK(cudaMalloc(&c.dst, c.bytes));
        CUDA_CHECK(cudaMalloc((void **)&c.src, c.bytes));
        CUDA_CHECK(cudaMemset((void *)c.src, 1, c.bytes));
        if (timer_measure(run_copy, &c, &cfg, &t)) return 1;
        printf("[OK] baseline=d2d_copy bytes=%zu time_ms=%.4f time_min_ms=%.4f gbps=%.1f\n", c.bytes, t.median_ms,
               t.min_ms, 2.0 * (double)c.bytes / (t.median_ms * 1e-3) / 1e9);
        return 0;
    }
    if (!strcmp(sub, "gemm_fp8")) return gemm_fp8((int)arg(argc, argv, "--n", 8192), &cfg);
    if (!strcmp(sub, "read")) {
        read_ctx c = {NULL, NULL, (size_t)arg(argc, argv, "--mib", 4096) << 20};
        CUDA_CHECK(cudaMalloc((void **)&c.buf, c.bytes));
        CUDA_CHECK(cudaMalloc(&c.sink, 4));
        if (fill_random_bf16((void *)c.buf, c.bytes / 2)) return 1;
        if (timer_measure(run_read, &c, &cfg, &t)) return 1;
        printf("[OK] baseline=hbm_read bytes=%zu time_ms=%.4f time_min_ms=%.4f gbps=%.1f\n", c.bytes, t.median_ms,
               t.min_ms, (double)c.bytes / (t.median_ms * 1e-3) / 1e9);
        return 0;
    }
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasCreate failed\n"); return 1; }
    const int bh = (int)(arg(argc, argv, "--b", 1) * arg(argc, argv, "--hq", 1));
    const int sq = (int)arg(argc, argv, "--sq", 4096), skv = (int)arg(argc, argv, "--skv", 4096);
    const int d = (int)arg(argc, argv, "--d", 128);
    /* S^T (skv x sq, column-major) = K Q^T: A = K stored [skv][d] = (d x skv) col-major, op T; the
     * result is S stored row-major [sq][skv]. */
    const gemm_ctx qk = {.h = h, .b = bh, .m = skv, .n = sq, .k = d, .opa = CUBLAS_OP_T, .alpha = 1.0f,
                         .ctype = CUDA_R_32F};
    /* O^T (d x sq, column-major) = V^T P^T: A = V stored [skv][d] = (d x skv) col-major, op N;
     * B = P stored [sq][skv] = (skv x sq) col-major; C = O stored [sq][d] = (d x sq) col-major */
    const gemm_ctx pv = {.h = h, .b = bh, .m = d, .n = sq, .k = skv, .opa = CUBLAS_OP_N, .alpha = 1.0f,
                         .ctype = CUDA_R_32F};
    gemm_ctx c[2];
    int ngemm = 1;
    const char *name;
    if (!strcmp(sub, "gemm")) {
        long n = arg(argc, argv, "--n", 8192);
        c[0] = (gemm_ctx){.h = h, .b = 1, .m = (int)n, .n = (int)n, .k = (int)n, .opa = CUBLAS_OP_T, .alpha = 1.0f,
                          .ctype = CUDA_R_16BF};
        name = "cublas_bf16_gemm";
    } else if (!strcmp(sub, "qk")) {
        c[0] = qk;
        name = "cublas_qk_f32out";
    } else if (!strcmp(sub, "pv")) {
        c[0] = pv;
        name = "cublas_pv_f32out";
    } else {
        /* P = bf16(scale K Q^T) row-major [sq][skv], then O = P V in f32 */
        c[0] = qk;
        c[0].ctype = CUDA_R_16BF;
        c[0].alpha = 1.0f / sqrtf((float)d);
        c[1] = pv;
        ngemm = 2;
        name = "cublas_qk_bf16_pv_f32out";
    }
    if (setup_gemm(&c[0], NULL) || (ngemm == 2 && setup_gemm(&c[1], c[0].C))) return 1;
    if (timer_measure(ngemm == 2 ? run_pair : run_gemm, c, &cfg, &t)) return 1;
    double flops = 0, bytes = 0;
    for (int i = 0; i < ngemm; i++) {
        flops += 2.0 * c[i].b * (double)c[i].m * c[i].n * c[i].k;
        bytes += 2.0 * c[i].b * (double)(c[i].sa + c[i].sb) + (double)gemm_c_bytes(&c[i]);
    }
    int vmaj = 0, vmin = 0, vpat = 0;
    cublasGetProperty(MAJOR_VERSION, &vmaj);
    cublasGetProperty(MINOR_VERSION, &vmin);
    cublasGetProperty(PATCH_LEVEL, &vpat);
    printf("[OK] baseline=%s cublas=%d.%d.%d batch=%d m=%d n=%d k=%d time_ms=%.4f time_min_ms=%.4f tflops=%.2f "
           "gbps=%.1f\n", name, vmaj, vmin, vpat, c[0].b, c[0].m, c[0].n, c[0].k, t.median_ms, t.min_ms,
           flops / (t.median_ms * 1e-3) / 1e12, bytes / (t.median_ms * 1e-3) / 1e9);
    cublasDestroy(h);
    return 0;
}
