#include "host/devmem.h"

#include <cuda_runtime_api.h>

#include "host/cuda_check.h"

int dev_upload(void **dev, const void *host, size_t bytes)
{
    *dev = NULL;
    CUDA_CHECK(cudaMalloc(dev, bytes ? bytes : 1));
    if (bytes) CUDA_CHECK(cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice));
    return 0;
}

int dev_download(void *host, const void *dev, size_t bytes)
{
    if (bytes) CUDA_CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

void dev_free(void *dev)
{
    if (dev) cudaFree(dev);
}
