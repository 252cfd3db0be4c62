/* How a CTA's dynamic SMEM is laid out: each stage lists its buffers once (tiles, mbarriers, the
 * TMEM address slot) with smem_place(), and the kernel, the emu flow and the size check all read
 * the offsets and the total from that one description.
 *
 * Alignment: a 128-byte-swizzled tile must start on a 1024-byte boundary (the swizzle XORs
 * address bits [4,7) with [7,10) of the absolute address and the descriptors keep base offset 0:
 * model/canonical.h); an mbarrier needs 8 bytes. The dynamic SMEM base is only guaranteed 16-byte
 * aligned, so the kernel rounds it up (device/smem.cuh smem_align_base) and the launch asks for
 * the rounding's worst case on top of the layout (smem_launch_bytes). */
#ifndef FMHA_MODEL_SMEM_LAYOUT_H
#define FMHA_MODEL_SMEM_LAYOUT_H

#include <stdint.h>

#include "model/hd.h"

#define SMEM_TILE_ALIGN 1024u      /* the 128B swizzle repeat */
#define SMEM_BASE_MIN_ALIGN 16u    /* what the dynamic SMEM base is guaranteed */
#define SMEM_OPTIN_MAX_BYTES 232448u /* 227 KiB: the per-block opt-in limit of sm_90 and sm_100 */

/* Place `bytes` at the next multiple of `align` (a power of two) after *cursor; returns the offset
 * and moves the cursor past the buffer. */
FMHA_HD uint32_t smem_place(uint32_t *cursor, uint32_t bytes, uint32_t align)
{
    const uint32_t off = (*cursor + align - 1u) & ~(align - 1u);
    *cursor = off + bytes;
    return off;
}

/* The dynamic SMEM a launch requests for a layout of `used` bytes whose base is rounded up to
 * `align`. */
FMHA_HD uint32_t smem_launch_bytes(uint32_t used, uint32_t align) { return used + align - SMEM_BASE_MIN_ALIGN; }

/* The layout of every stage so far: operand tiles (each on a 1024-byte boundary, in the order
 * given), then the mbarriers (8 bytes each), then the 4-byte slot tcgen05.alloc writes the TMEM
 * address to. A stage names its tiles with an enum indexing tile[]. */
#define SMEM_MAX_TILES 8
typedef struct {
    uint32_t tile[SMEM_MAX_TILES]; /* offsets from the aligned base */
    uint32_t bars, tmem_slot;
    uint32_t used;  /* bytes from the aligned base */
    uint32_t bytes; /* dynamic SMEM to request: used + the base alignment's worst case */
} smem_layout;

FMHA_HD smem_layout smem_layout_make(const uint32_t *tile_bytes, int ntiles, int nbars)
{
    smem_layout l;
    uint32_t at = 0;
    for (int i = 0; i < SMEM_MAX_TILES; i++) l.tile[i] = i < ntiles ? smem_place(&at, tile_bytes[i], SMEM_TILE_ALIGN) : 0u;
    l.bars = smem_place(&at, 8u * (uint32_t)nbars, 8u);
    l.tmem_slot = smem_place(&at, 4u, 4u);
    l.used = at;
    l.bytes = smem_launch_bytes(at, SMEM_TILE_ALIGN);
    return l;
}

#endif
