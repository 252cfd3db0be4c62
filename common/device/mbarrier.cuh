// mbarrier device helpers: one inline function per PTX instruction, plus the bounded wait.
//
// The PTX is identical on sm_90a (Hopper) and sm_100a (Blackwell): the forms used here (tx-count,
// try_wait, arrive with a count, .shared::cta) arrived with sm_90 and sm_100 changed none of them,
// so both architectures include this one header. Section numbers follow the PTX ISA 8.7 manual, the
// numbering notes/hardware.md uses (tcgen05 = 9.7.16, mbarrier = 9.7.13.15); later manuals moved
// the mbarrier section (9.7.14.16, 9.7.15.16), so each citation also gives the page anchor, which
// changes less.
//
// Barriers are named by their 32-bit shared-window address (mbar_smem_addr) because every form
// below takes a .shared::cta operand: a generic 64-bit pointer would make ptxas emit a generic to
// shared conversion for every instruction.
//
// Nothing in the project waits on an mbarrier without a bound: mbar_wait spins on one-probe
// try_wait.parity up to FMHA_MBAR_WAIT_PROBES times, then writes a watchdog report and traps, so
// a protocol bug is reported as a deadlock at a named site instead of a hung GPU.
#ifndef FMHA_DEVICE_MBARRIER_CUH
#define FMHA_DEVICE_MBARRIER_CUH

#ifndef __CUDACC__
#error "device/mbarrier.cuh is device code: include it from .cu files only"
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "mbarrier tx-count, try_wait.parity and arrive with a count need sm_90 or newer"
#endif

#include <stdint.h>

#include "device/watchdog.cuh"

// The host compilation pass sees these bodies too but never runs them; only the device pass
// (always sm_90a or sm_100a in this project) emits the PTX.
#if defined(__CUDA_ARCH__)
#define FMHA_MBAR_DEVICE 1
#else
#define FMHA_MBAR_DEVICE 0
#endif

// Probes before mbar_wait gives up. Large enough that no legitimate wait (a TMA from HBM, an MMA
// chain, a slow warp) comes near it; each try_wait probe may also suspend the thread for a
// hardware-defined time, so the real bound in seconds is longer than the count suggests. Tests
// lower it per call with mbar_wait_budget.
#ifndef FMHA_MBAR_WAIT_PROBES
#define FMHA_MBAR_WAIT_PROBES (1u << 26)
#endif

static __device__ __forceinline__ uint32_t mbar_smem_addr(const void *bar)
{
    return (uint32_t)__cvta_generic_to_shared(bar);
}

// PTX 9.7.13.15.9 mbarrier.init
// (#parallel-synchronization-and-communication-instructions-mbarrier-init).
// count in [1, 2^20-1]. One thread initialises; the others must not touch the barrier until the
// fence below and a CTA barrier have made the init visible.
static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
#if FMHA_MBAR_DEVICE
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
#endif
}

// PTX 9.7.13.4 membar/fence, fence.mbarrier_init
// (#parallel-synchronization-and-communication-instructions-membar). Releases prior
// mbarrier.init operations to the cluster scope, which is what the async proxy (TMA complete_tx,
// tcgen05.commit) and cluster peers observe; a plain __syncthreads does not cover them.
static __device__ __forceinline__ void mbar_fence_init(void)
{
#if FMHA_MBAR_DEVICE
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// PTX 9.7.13.15.13 mbarrier.arrive
// (#parallel-synchronization-and-communication-instructions-mbarrier-arrive).
// One arrival with the default .release.cta semantics. The returned state token captures the
// phase before the arrive; this project waits by parity and mostly ignores it.
static __device__ __forceinline__ uint64_t mbar_arrive(uint32_t bar)
{
    uint64_t state = 0;
#if FMHA_MBAR_DEVICE
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(bar) : "memory");
#endif
    return state;
}

// PTX 9.7.13.15.13 mbarrier.arrive with a count operand (sm_90+ without .noComplete).
// count arrivals at once, e.g. one elected lane arriving for its whole warp; count in [1, 2^20-1].
static __device__ __forceinline__ uint64_t mbar_arrive_n(uint32_t bar, uint32_t count)
{
    uint64_t state = 0;
#if FMHA_MBAR_DEVICE
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state)
                 : "r"(bar), "r"(count)
                 : "memory");
#endif
    return state;
}

// PTX 9.7.13.15.13 mbarrier.arrive.expect_tx. Performs expect-tx(bytes) and then one arrive-on
// as one operation: the producer lane's "this phase also waits for `bytes` of copies".
static __device__ __forceinline__ uint64_t mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    uint64_t state = 0;
#if FMHA_MBAR_DEVICE
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state)
                 : "r"(bar), "r"(bytes)
                 : "memory");
#endif
    return state;
}

// PTX 9.7.13.15.11 mbarrier.expect_tx
// (#parallel-synchronization-and-communication-instructions-mbarrier-expect-tx).
// Raises the current phase's tx-count by bytes without arriving. Per the PTX text an expect-tx
// never completes a phase by itself; only arrive-on and complete-tx do.
static __device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
#if FMHA_MBAR_DEVICE
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
#endif
}

// PTX 9.7.13.15.12 mbarrier.complete_tx
// (#parallel-synchronization-and-communication-instructions-mbarrier-complete-tx).
// What a TMA copy does to its barrier when its bytes land; issued by hand it lets tests drive the
// tx-count without a copy engine.
static __device__ __forceinline__ void mbar_complete_tx(uint32_t bar, uint32_t bytes)
{
#if FMHA_MBAR_DEVICE
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
#endif
}

// PTX 9.7.13.15.16 mbarrier.try_wait.parity
// (#parallel-synchronization-and-communication-instructions-mbarrier-test-wait-try-wait).
// One probe: true once the phase with this parity has completed, i.e. the barrier's current phase
// parity differs from `parity` (so a fresh barrier answers true for parity 1). The hardware may
// suspend the thread for a bounded, implementation-defined time before answering false. Default
// .acquire.cta semantics: data released by the arrivals is visible after a true answer.
static __device__ __forceinline__ bool mbar_try_wait_parity(uint32_t bar, uint32_t parity)
{
    uint32_t done = 0;
#if FMHA_MBAR_DEVICE
    asm volatile("{\n\t"
                 ".reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t"
                 "}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
#endif
    return done != 0;
}

// try_wait.parity with a suspend-time hint (same section): a thread whose phase has not completed
// may be suspended for up to `ns` nanoseconds, and resumes as soon as the phase completes. Without
// the hint the H200 answers within tens of nanoseconds, so a waiter spins; a waiter off the
// critical path (a producer waiting for a ring slot to empty) then takes issue slots from the warps
// sharing its scheduler.
static __device__ __forceinline__ bool mbar_try_wait_parity_sleep(uint32_t bar, uint32_t parity, uint32_t ns)
{
    uint32_t done = 0;
#if FMHA_MBAR_DEVICE
    asm volatile("{\n\t"
                 ".reg .pred p;\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t"
                 "}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity), "r"(ns)
                 : "memory");
#endif
    return done != 0;
}

// The bounded wait with an explicit probe budget. On exhaustion: report (site, parity, who) into
// the watchdog and trap; wd may be null, then it only traps.
static __device__ __forceinline__ void mbar_wait_budget(uint32_t bar, uint32_t parity,
                                                        fmha_watchdog *wd, uint32_t site,
                                                        uint32_t budget)
{
    for (uint32_t i = 0; i < budget; i++) {
        if (mbar_try_wait_parity(bar, parity)) return;
    }
    fmha_watchdog_fire(wd, FMHA_WD_MBAR_WAIT, site, parity, budget);
}

// The bounded wait for a waiter off the critical path: each probe may sleep up to FMHA_MBAR_SLEEP_NS,
// so the budget is the caller's divided by FMHA_MBAR_SLEEP_DIV (a deadlock is still reported, in
// about budget / 16 x 1 us at most, instead of budget x 1 us).
#ifndef FMHA_MBAR_SLEEP_NS
#define FMHA_MBAR_SLEEP_NS 1000u
#endif
#define FMHA_MBAR_SLEEP_DIV 16u
static __device__ __forceinline__ void mbar_wait_budget_sleep(uint32_t bar, uint32_t parity,
                                                              fmha_watchdog *wd, uint32_t site,
                                                              uint32_t budget)
{
    const uint32_t n = budget / FMHA_MBAR_SLEEP_DIV > 0 ? budget / FMHA_MBAR_SLEEP_DIV : 1u;
    for (uint32_t i = 0; i < n; i++) {
        if (mbar_try_wait_parity_sleep(bar, parity, FMHA_MBAR_SLEEP_NS)) return;
    }
    fmha_watchdog_fire(wd, FMHA_WD_MBAR_WAIT, site, parity, n);
}

// The wait every kernel uses: mbar_wait_budget with FMHA_MBAR_WAIT_PROBES.
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity, fmha_watchdog *wd,
                                                 uint32_t site)
{
    mbar_wait_budget(bar, parity, wd, site, FMHA_MBAR_WAIT_PROBES);
}

#endif
