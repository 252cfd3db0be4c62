// mbarrier conformance kernels: an op script executed on a real shared-memory mbarrier (compared
// with the host model, common/model/mbar_model.c), and a wait that can never complete, which the
// bounded wait must turn into a watchdog report and a trap.
#include <cuda_runtime.h>
#include <stdio.h>

#include "host/cuda_check.h"
#include "mbar_script.h"
#include "device/mbarrier.cuh"

// One thread, so the ops reach the barrier in script order and every TRY_WAIT answer is a pure
// function of the ops before it: exactly what the single-threaded model computes.
__global__ void mbar_script_kernel(const mbar_op *ops, int n, int *results, int max_results,
                                   int *n_results)
{
    __shared__ __align__(8) uint64_t bar;
    const uint32_t a = mbar_smem_addr(&bar);
    int nres = 0;
    for (int i = 0; i < n; i++) {
        const uint32_t arg = (uint32_t)ops[i].arg;
        switch (ops[i].op) {
        case MBAR_OP_INIT:
            mbar_init(a, arg);
            mbar_fence_init();
            break;
        case MBAR_OP_ARRIVE: (void)mbar_arrive(a); break;
        case MBAR_OP_ARRIVE_N: (void)mbar_arrive_n(a, arg); break;
        case MBAR_OP_EXPECT_TX: mbar_expect_tx(a, arg); break;
        case MBAR_OP_COMPLETE_TX: mbar_complete_tx(a, arg); break;
        case MBAR_OP_ARRIVE_EXPECT_TX: (void)mbar_arrive_expect_tx(a, arg); break;
        case MBAR_OP_TRY_WAIT:
            // One probe, never a wait: an incomplete phase must come back as 0, not hang.
            if (nres < max_results) results[nres] = mbar_try_wait_parity(a, arg) ? 1 : 0;
            nres++;
            break;
        default: break; // rejected by the launcher before the launch
        }
    }
    *n_results = nres;
}

extern "C" int mbar_script_launch(const mbar_op *ops, int n, int *results, int max_results,
                                  int *n_results)
{
    *n_results = 0;
    // Shared memory starts as garbage: an op before INIT would act on no barrier at all, so such a
    // script is refused rather than run.
    if (n < 1 || ops[0].op != MBAR_OP_INIT) {
        fprintf(stderr, "mbar_script_launch: the script must open with INIT\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (ops[i].op < MBAR_OP_INIT || ops[i].op > MBAR_OP_TRY_WAIT) {
            fprintf(stderr, "mbar_script_launch: op %d has unknown code %d\n", i, ops[i].op);
            return 1;
        }
    }
    mbar_op *d_ops = nullptr;
    int *d_res = nullptr, *d_n = nullptr;
    const int cap = max_results > 0 ? max_results : 1;
    CUDA_CHECK(cudaMalloc(&d_ops, sizeof(mbar_op) * (size_t)n));
    CUDA_CHECK(cudaMalloc(&d_res, sizeof(int) * (size_t)cap));
    CUDA_CHECK(cudaMalloc(&d_n, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_ops, ops, sizeof(mbar_op) * (size_t)n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_res, 0xFF, sizeof(int) * (size_t)cap)); // -1: never written
    mbar_script_kernel<<<1, 1>>>(d_ops, n, d_res, max_results, d_n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(n_results, d_n, sizeof(int), cudaMemcpyDeviceToHost));
    const int got = *n_results < max_results ? *n_results : max_results;
    if (got > 0)
        CUDA_CHECK(cudaMemcpy(results, d_res, sizeof(int) * (size_t)got, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_ops));
    CUDA_CHECK(cudaFree(d_res));
    CUDA_CHECK(cudaFree(d_n));
    return 0;
}

__global__ void mbar_watchdog_kernel(fmha_watchdog *wd, unsigned site, unsigned budget, int stall)
{
    __shared__ __align__(8) uint64_t bar;
    const uint32_t a = mbar_smem_addr(&bar);
    if (threadIdx.x == 0) {
        mbar_init(a, blockDim.x);
        mbar_fence_init();
    }
    __syncthreads();
    // Phase 0 completes everywhere, so the report must name parity 1: a watchdog that reported a
    // constant parity would not pass.
    (void)mbar_arrive(a);
    mbar_wait_budget(a, 0, wd, site, budget);
    const bool skip = stall && blockIdx.y == 1 && threadIdx.x == 0;
    if (!skip) (void)mbar_arrive(a);
    mbar_wait_budget(a, 1, wd, site, budget);
}

extern "C" int mbar_watchdog_launch(fmha_watchdog *wd_dev, unsigned site, unsigned budget,
                                    int stall)
{
    mbar_watchdog_kernel<<<dim3(1, 2, 1), 128>>>(wd_dev, site, budget, stall);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    return (int)e;
}
