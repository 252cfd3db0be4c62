/* Device buffers for the stage glue: allocate-and-upload, download, free, each CUDA call checked.
 * All return 0, or 1 after printing the CUDA error (CUDA_CHECK). */
#ifndef FMHA_DEVMEM_H
#define FMHA_DEVMEM_H

#include <stddef.h>

int dev_upload(void **dev, const void *host, size_t bytes);
int dev_download(void *host, const void *dev, size_t bytes);
void dev_free(void *dev);

#endif
