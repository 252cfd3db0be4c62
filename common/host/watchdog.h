/* The deadlock watchdog's report and its host API.
 *
 * Every mbarrier wait in the project is bounded (common/device/mbarrier.cuh, mbar_wait): when the
 * probe budget runs out, the first thread to give up writes this report and executes `trap`. A
 * trap kills the CUDA context, so the report cannot live in device memory (nothing could copy it
 * out afterwards): it lives in mapped pinned host memory, which the host can still read after the
 * launch has failed.
 *
 * The struct is plain C with fixed-width fields so that the C host code and the CUDA device code
 * (common/device/watchdog.cuh) agree on its layout. */
#ifndef FMHA_WATCHDOG_H
#define FMHA_WATCHDOG_H

#include <stddef.h>
#include <stdint.h>

/* What fired. 0 means the watchdog is quiet. */
enum {
    FMHA_WD_QUIET = 0,
    FMHA_WD_MBAR_WAIT = 1, /* an mbarrier wait exhausted its probe budget */
};

typedef struct fmha_watchdog {
    uint32_t code;     /* FMHA_WD_*; claimed by atomicCAS: only the first firing thread writes */
    uint32_t complete; /* 1 once that thread has written every field below (set last) */
    uint32_t site;     /* which wait: a number the kernel author assigns to each wait site */
    uint32_t parity;   /* the phase parity it was waiting for */
    uint32_t block_x, block_y, block_z;
    uint32_t thread;   /* linear thread index in the block */
    uint64_t probes;   /* try_wait probes spent before giving up */
} fmha_watchdog;

#ifdef __cplusplus
static_assert(sizeof(fmha_watchdog) == 40, "host and device must agree on the report layout");
extern "C" {
#else
_Static_assert(sizeof(fmha_watchdog) == 40, "host and device must agree on the report layout");
#endif

/* Allocates one zeroed report in mapped pinned host memory: *host is where the host reads it,
 * *dev the pointer to pass to kernels. Returns 0, or 1 after printing the CUDA error. */
int watchdog_alloc(fmha_watchdog **host, fmha_watchdog **dev);

/* Frees a report from watchdog_alloc (NULL is fine). After a trap the context is gone and the
 * free reports that error; the process exit releases the memory either way. */
void watchdog_free(fmha_watchdog *host);

/* Nonzero when a kernel fired the watchdog. */
int watchdog_fired(const fmha_watchdog *w);

/* One line describing the report, e.g. "deadlock: mbarrier wait at site 3 (parity 1) in block
 * (0,2,0) thread 128 gave up after 67108864 probes". */
void watchdog_describe(const fmha_watchdog *w, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
