// Shared-memory addressing and the proxy fence: what every kernel of both architectures needs
// around SMEM operands (sm_90a and sm_100a share this PTX; notes/hardware.md section 9).
#pragma once

#include <stdint.h>

// The 32-bit shared-window address of a generic pointer into SMEM: every .shared::cta operand
// (mbarrier, descriptors, tcgen05.alloc's destination) takes this form.
__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// Generic-proxy SMEM writes (ordinary st.shared) -> visible to the async proxy (wgmma,
// tcgen05.mma, TMA). PTX ISA 9.7.13.4 (membar/fence). Every writing thread executes it before the
// barrier or arrive that hands the SMEM to the async consumer.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// The dynamic SMEM base rounded up to `align` bytes (1024 for 128-byte-swizzled tiles: their
// pattern repeats every 1024 bytes and descriptors assume tiles start on that boundary). The
// launcher requests smem_launch_bytes() (model/smem_layout.h), which covers this rounding.
// The rounding is an offset added to raw itself, computed on its shared-window address: the result
// keeps raw's provenance, so the compiler still knows every pointer derived from it points into
// SMEM and emits LDS/STS for their accesses. Rounded through an integer, the pointer became a
// generic one, and every load and store through it a generic LD/ST (longer latency, the window
// checked at run time).
__device__ __forceinline__ uint8_t *smem_align_base(uint8_t *raw, uint32_t align)
{
    const uint32_t a = smem_u32(raw);
    return raw + (((a + align - 1) & ~(align - 1)) - a);
}
