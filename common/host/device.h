/* What GPU (if any) this process sees: the facts backend selection and the benchmark CSV need. */
#ifndef FMHA_DEVICE_H
#define FMHA_DEVICE_H

#include <stddef.h>

typedef struct {
    int present;               /* 1 if cudaGetDeviceCount found at least one device */
    int cc_major, cc_minor;
    char name[256];
    int sm_count;
    int l2_bytes;
    int sm_clock_khz, mem_clock_khz; /* peak clocks as reported by the device attributes */
    size_t smem_optin;         /* max dynamic shared memory per block after opt-in */
    int driver_version, runtime_version;
    char why_absent[192];      /* when present == 0: the CUDA error that said so */
} gpu_info;

/* Never fails: without a driver or device, present = 0 and why_absent says what CUDA answered. */
void gpu_query(gpu_info *g);

#endif
