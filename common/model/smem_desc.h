/* The 64-bit shared-memory matrix descriptors that tell the tensor cores where an operand tile is.
 *
 * sm100 (tcgen05), PTX 9.7.16.4.1, CUTLASS `SmemDescriptor` (mma_sm100_desc.hpp):
 *   bits  0-13 start address >> 4      bits 16-29 LBO >> 4      bits 32-45 SBO >> 4
 *   bits 46-48 fixed 0b001 ("version"; an sm90 descriptor lacks it and is invalid here)
 *   bits 49-51 base offset             bit 52 LBO mode (0 relative)
 *   bits 61-63 swizzle: 0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B
 * sm90 (wgmma), PTX 9.7.15.5.1.2.2, CUTLASS `GmmaDescriptor` (mma_sm90_desc.hpp):
 *   bits 0-13 start >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 base offset,
 *   bits 62-63 swizzle: 0 none, 1 128B, 2 64B, 3 32B
 * (The three common swizzles are bit-identical in both formats: 2<<61 == 1<<62 etc.)
 * What LBO and SBO mean depends on the operand's major-ness and swizzle: model/canonical.h.
 * Worked values (notes/hardware.md section 1.4): K-major bf16 128B swizzle, LBO 16, SBO 1024:
 * sm100 0x4000404000010000, sm90 0x4000004000010000. */
#ifndef FMHA_MODEL_SMEM_DESC_H
#define FMHA_MODEL_SMEM_DESC_H

#include <stdint.h>

#include "model/hd.h"

/* The project's own swizzle enum; the encoders translate it to each format's codes. */
typedef enum {
    SWZ_NONE = 0,
    SWZ_32B = 1,
    SWZ_64B = 2,
    SWZ_128B = 3,
    SWZ_128B_BASE32B = 4, /* sm100 only (tf32 transposes); not used or modelled by the stages */
    SWZ_INVALID = 5
} swizzle_mode;

/* Bytes per swizzled row ("span"): 32/64/128; 16 for no swizzle (one core-matrix row). */
FMHA_HD int swizzle_span(swizzle_mode s)
{
    return s == SWZ_32B ? 32 : s == SWZ_64B ? 64 : (s == SWZ_128B || s == SWZ_128B_BASE32B) ? 128 : 16;
}

FMHA_HD uint64_t sm100_swizzle_code(swizzle_mode s)
{
    return s == SWZ_128B_BASE32B ? 1 : s == SWZ_128B ? 2 : s == SWZ_64B ? 4 : s == SWZ_32B ? 6 : 0;
}

FMHA_HD swizzle_mode sm100_swizzle_from_code(unsigned c)
{
    return c == 0 ? SWZ_NONE : c == 1 ? SWZ_128B_BASE32B : c == 2 ? SWZ_128B : c == 4 ? SWZ_64B
         : c == 6 ? SWZ_32B : SWZ_INVALID;
}

FMHA_HD uint64_t sm90_swizzle_code(swizzle_mode s)
{
    return s == SWZ_128B ? 1 : s == SWZ_64B ? 2 : s == SWZ_32B ? 3 : 0;
}

FMHA_HD swizzle_mode sm90_swizzle_from_code(unsigned c)
{
    return c == 0 ? SWZ_NONE : c == 1 ? SWZ_128B : c == 2 ? SWZ_64B : SWZ_32B;
}

/* start, lbo, sbo in bytes (16-byte aligned; the encoders keep bits 4-17). */
FMHA_HD uint64_t sm100_desc_encode(uint32_t start, uint32_t lbo, uint32_t sbo, swizzle_mode s)
{
    return (uint64_t)((start & 0x3FFFFu) >> 4) | (uint64_t)((lbo & 0x3FFFFu) >> 4) << 16 |
           (uint64_t)((sbo & 0x3FFFFu) >> 4) << 32 | (uint64_t)1 << 46 | sm100_swizzle_code(s) << 61;
}

FMHA_HD uint64_t sm90_desc_encode(uint32_t start, uint32_t lbo, uint32_t sbo, swizzle_mode s)
{
    return (uint64_t)((start & 0x3FFFFu) >> 4) | (uint64_t)((lbo & 0x3FFFFu) >> 4) << 16 |
           (uint64_t)((sbo & 0x3FFFFu) >> 4) << 32 | sm90_swizzle_code(s) << 62;
}

/* Move the start address by `bytes` (a multiple of 16): how a descriptor walks along K. Only the
 * 14-bit start field changes, as in CUTLASS's DescriptorIterator and DeepGEMM's advance_umma_desc_lo. */
FMHA_HD uint64_t smem_desc_advance(uint64_t d, uint32_t bytes)
{
    uint64_t start = (d & 0x3FFFu) + (bytes >> 4);
    return (d & ~(uint64_t)0x3FFFu) | (start & 0x3FFFu);
}

/* smem_desc_advance without the masks, for the MMA issue path: one 64-bit add. Exact whenever the
 * moved start address stays inside the 256 KB shared window (start + bytes < 2^18: the 14-bit
 * field cannot carry into LBO), which holds for every operand inside a CTA's SMEM (at most 228
 * KB). With a compile-time `bytes` it is one uniform IADD beside each wgmma, where re-encoding
 * the descriptor per K step costs four or five instructions on the way to the MMA issue. */
FMHA_HD uint64_t smem_desc_add(uint64_t d, uint32_t bytes)
{
    return d + (uint64_t)(bytes >> 4);
}

typedef struct {
    uint32_t start, lbo, sbo;  /* bytes */
    unsigned base_offset;
    unsigned lbo_mode;         /* sm100 bit 52 */
    unsigned version;          /* sm100 bits 46-48, must be 1 */
    unsigned swizzle_code;     /* raw field value */
    swizzle_mode swz;          /* SWZ_INVALID for a code the format does not define */
    unsigned reserved;         /* any bit set outside the defined fields */
} smem_desc_fields;

FMHA_HD void sm100_desc_decode(uint64_t d, smem_desc_fields *f)
{
    f->start = (uint32_t)(d & 0x3FFFu) << 4;
    f->lbo = (uint32_t)((d >> 16) & 0x3FFFu) << 4;
    f->sbo = (uint32_t)((d >> 32) & 0x3FFFu) << 4;
    f->version = (unsigned)((d >> 46) & 7u);
    f->base_offset = (unsigned)((d >> 49) & 7u);
    f->lbo_mode = (unsigned)((d >> 52) & 1u);
    f->swizzle_code = (unsigned)(d >> 61);
    f->swz = sm100_swizzle_from_code(f->swizzle_code);
    f->reserved = (d & ((3ull << 14) | (3ull << 30) | (0xFFull << 53))) != 0;
}

FMHA_HD void sm90_desc_decode(uint64_t d, smem_desc_fields *f)
{
    f->start = (uint32_t)(d & 0x3FFFu) << 4;
    f->lbo = (uint32_t)((d >> 16) & 0x3FFFu) << 4;
    f->sbo = (uint32_t)((d >> 32) & 0x3FFFu) << 4;
    f->version = 0;
    f->base_offset = (unsigned)((d >> 49) & 7u);
    f->lbo_mode = 0;
    f->swizzle_code = (unsigned)(d >> 62);
    f->swz = sm90_swizzle_from_code(f->swizzle_code);
    f->reserved = (d & ((3ull << 14) | (3ull << 30) | (7ull << 46) | (0x3FFull << 52))) != 0;
}

#endif
