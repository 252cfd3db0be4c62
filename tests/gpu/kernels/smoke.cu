// GPU smoke test kernels: the smallest launch whose every output element can be checked.
#include <cuda_runtime.h>

#include "host/cuda_check.h"
#include "smoke.h"

__global__ void smoke_affine_kernel(float *out, int n, float a, float b)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = a * (float)i + b;
}

__global__ void smoke_arch_kernel(int *arch)
{
#ifdef __CUDA_ARCH__
    *arch = __CUDA_ARCH__;
#endif
}

extern "C" int smoke_affine_launch(float *out, int n, float a, float b)
{
    // Fewer blocks than elements on purpose: the grid-stride loop must cover the tail.
    smoke_affine_kernel<<<7, 128>>>(out, n, a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return 0;
}

extern "C" int smoke_arch_launch(int *arch_host)
{
    int *d = nullptr;
    CUDA_CHECK(cudaMalloc(&d, sizeof(int)));
    CUDA_CHECK(cudaMemset(d, 0, sizeof(int)));
    smoke_arch_kernel<<<1, 1>>>(d);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(arch_host, d, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d));
    return 0;
}
