// bf16x2 pack order on the hardware (footgun FG07). PTX ISA (cvt): for `cvt.rn.bf16x2.f32 d, a, b`
// "the value of a is stored in the upper half of d and b in the lower half". Packed MMA operands
// want the lower-k element in the LOW half, so the intuitive call cvt(even, odd) swaps every pair.
// cvt.rn.bf16x2.f32 needs sm_80 or later: this file is built for sm_90a and sm_100a alike.
#include <cuda_runtime.h>
#include <stdint.h>

#include "device/bf16_pack.cuh"
#include "host/cuda_check.h"
#include "pack_order.h"

__global__ void pack_order_kernel(const float *a, const float *b, int n, uint32_t *raw, uint32_t *helper)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(a[i]), "f"(b[i])); // a first, as written
    raw[i] = d;
    helper[i] = pack_bf16x2(a[i], b[i]);
}

extern "C" int pack_order_launch(const float *a_host, const float *b_host, int n, uint32_t *raw_host,
                                 uint32_t *helper_host)
{
    float *a = nullptr, *b = nullptr;
    uint32_t *raw = nullptr, *helper = nullptr;
    const size_t fb = sizeof(float) * (size_t)n, ub = sizeof(uint32_t) * (size_t)n;
    CUDA_CHECK(cudaMalloc(&a, fb));
    CUDA_CHECK(cudaMalloc(&b, fb));
    CUDA_CHECK(cudaMalloc(&raw, ub));
    CUDA_CHECK(cudaMalloc(&helper, ub));
    CUDA_CHECK(cudaMemcpy(a, a_host, fb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b, b_host, fb, cudaMemcpyHostToDevice));
    pack_order_kernel<<<(n + 127) / 128, 128>>>(a, b, n, raw, helper);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(raw_host, raw, ub, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(helper_host, helper, ub, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(raw));
    CUDA_CHECK(cudaFree(helper));
    return 0;
}
