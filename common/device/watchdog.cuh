// Device side of the deadlock watchdog: record who gave up on which wait, then trap.
//
// The report (host/watchdog.h) lives in mapped pinned host memory so it survives the trap. Same
// code on sm_90a and sm_100a: nothing here is architecture specific.
#ifndef FMHA_DEVICE_WATCHDOG_CUH
#define FMHA_DEVICE_WATCHDOG_CUH

#ifndef __CUDACC__
#error "device/watchdog.cuh is device code: include it from .cu files only"
#endif

#include <stdint.h>

#include "host/watchdog.h"

// How long a thread that lost the race to write the report lets the winner finish before it
// traps too. A trap from any thread ends the whole grid, so trapping at once could cut the
// winner's stores short. Bounded like every other wait in the project.
#ifndef FMHA_WD_SETTLE_SPINS
#define FMHA_WD_SETTLE_SPINS (1u << 20)
#endif

// Never returns. w may be null (then it only traps). noinline keeps the cold path out of the spin
// loops that call it. A kernel that moves registers between warpgroups (setmaxnreg: stage F on
// sm90) can make no calls at all (ptxas fails its register allocation), so it defines
// FMHA_WD_FIRE_INLINE before its includes and gets the cold path inline.
#ifdef FMHA_WD_FIRE_INLINE
#define FMHA_WD_FIRE_LINKAGE __forceinline__
#else
#define FMHA_WD_FIRE_LINKAGE __noinline__
#endif
static __device__ FMHA_WD_FIRE_LINKAGE void fmha_watchdog_fire(fmha_watchdog *w, uint32_t code,
                                                       uint32_t site, uint32_t parity,
                                                       uint64_t probes)
{
    if (w != nullptr) {
        if (atomicCAS(&w->code, (uint32_t)FMHA_WD_QUIET, code) == (uint32_t)FMHA_WD_QUIET) {
            volatile fmha_watchdog *v = w;
            v->site = site;
            v->parity = parity;
            v->block_x = blockIdx.x;
            v->block_y = blockIdx.y;
            v->block_z = blockIdx.z;
            v->thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
            v->probes = probes;
            // The fields must be visible to the host before `complete`, and all of them before the
            // trap tears the context down.
            __threadfence_system();
            v->complete = 1u;
            __threadfence_system();
        } else {
            const volatile fmha_watchdog *v = w;
            for (uint32_t i = 0; i < FMHA_WD_SETTLE_SPINS && v->complete == 0u; i++) {
            }
        }
    }
    __trap();
}

#endif
