/* Helpers shared by the Criterion suites.
 *
 * SKIP_WITHOUT_GPU(major): skip (not pass) a GPU test when no GPU of that compute capability is
 * present, with the reason in the report. CUDA_ASSERT(call): a CUDA error is a test failure.
 * Neither touches the CUDA runtime outside a test body (Criterion runs each test in its own
 * process; the runner process must stay CUDA-free). */
#ifndef FMHA_TEST_UTIL_H
#define FMHA_TEST_UTIL_H

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "host/backend.h"
#include "host/device.h"

#define CUDA_ASSERT(call)                                                                     \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        cr_assert(e_ == cudaSuccess, "%s failed: %s", #call, cudaGetErrorString(e_));        \
    } while (0)

/* major: 9 (Hopper, sm_90a code) or 10 (Blackwell, sm_100a code). */
#define SKIP_WITHOUT_GPU(major)                                                               \
    do {                                                                                      \
        gpu_info g_;                                                                          \
        char why_[256];                                                                       \
        gpu_query(&g_);                                                                       \
        if (!backend_available((major) == 9 ? BACKEND_SM90 : BACKEND_SM100, &g_, why_,        \
                               sizeof why_))                                                  \
            cr_skip_test("%s", why_);                                                         \
    } while (0)

#endif
