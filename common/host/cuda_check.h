/* CUDA error checking for host code (C and CUDA C).
 *
 * CUDA_CHECK(call): on failure prints the error name, the call and where, then `return 1` from the
 * enclosing function, which must return int (1 = "wrong result or CUDA error" in the stage
 * contract). Every CUDA runtime call in the project goes through it.
 * CUDA_CHECK_LAUNCH(): the same for the last launch (cudaGetLastError), right after a <<<>>>. */
#ifndef FMHA_CUDA_CHECK_H
#define FMHA_CUDA_CHECK_H

#include <stdio.h>
#include <cuda_runtime_api.h>

#define CUDA_CHECK(call)                                                                      \
    do {                                                                                      \
        cudaError_t cuda_check_err_ = (call);                                                 \
        if (cuda_check_err_ != cudaSuccess) {                                                 \
            fprintf(stderr, "CUDA error %s (%s) at %s:%d in %s\n",                             \
                    cudaGetErrorName(cuda_check_err_), cudaGetErrorString(cuda_check_err_),   \
                    __FILE__, __LINE__, #call);                                               \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#endif
