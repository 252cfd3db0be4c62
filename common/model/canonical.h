/* Canonical SMEM layouts of MMA operand tiles: element (mn, k) -> byte offset, for K-major and
 * MN-major operands, no swizzle and 32/64/128-byte swizzle, 16-bit and 8-bit elements.
 *
 * Source: PTX 9.7.16.3.3 "Canonical Layouts" (the same for wgmma, PTX 9.7.15.5.1.2), in CuTe
 * notation with T = 16 / element bytes (8 bf16, 16 fp8) and units of elements:
 *   K-major,  no swizzle:  ((8,m),(T,2k)) : ((1T, SBO), (1, LBO))
 *   K-major,  swizzled:    ((8,m),(T,2k)) : ((S/eb, SBO), (1, T))      S = 32/64/128 bytes
 *   MN-major, no swizzle:  ((T,1,m),(8,k)) : ((1, T, SBO), (1T, LBO))
 *   MN-major, swizzled:    ((T,S/16,m),(8,k)) : ((1, T, LBO), (S/eb, SBO))
 * Read as bytes (notes/hardware.md sections 3.1-3.3):
 *   K-major none:   8 rows x 16 B core matrices; LBO steps along K, SBO along MN (per 8 rows).
 *   K-major swz:    rows S bytes apart (a row holds S/eb K-elements); SBO per 8 rows; LBO unused.
 *   MN-major none:  8 K-rows x 16 B core matrices; SBO steps along MN, LBO along K (per 8 K-rows).
 *   MN-major swz:   K-rows S bytes apart (a row holds S/eb MN-elements); LBO steps along MN per
 *                   atom column, SBO along K per 8 K-rows.  (LBO/SBO roles swap vs no swizzle.)
 * Then the swizzle XORs byte-address bits [4, 4+b) with bits [7, 7+b) (b = 3/2/1 for 128/64/32 B:
 * CuTe Swizzle<b,4,3>), on the absolute SMEM address; tiles therefore start on a 1024/512/256-byte
 * boundary and descriptors keep base offset 0.
 *
 * One MMA reads K = 32 bytes of each row (16 bf16 / 32 fp8). A descriptor covers exactly that, so
 * smem_desc_addr() needs no stride between K atoms; a whole tile with a longer K does (katom):
 * the descriptor is advanced to the next atom column for K steps past the first atom
 * (notes/hardware.md section 3.5). smem_tile_k_advance() is that rule for every case: the un-swizzled offset
 * of element (0, k). The kernels fill SMEM with smem_tile_offset() and build descriptors from the
 * same smem_tile, so the fill and the descriptor cannot disagree (footgun FG01). */
#ifndef FMHA_MODEL_CANONICAL_H
#define FMHA_MODEL_CANONICAL_H

#include <stdint.h>

#include "model/hd.h"
#include "model/smem_desc.h"

typedef enum { MAJOR_K = 0, MAJOR_MN = 1 } operand_major;

typedef struct {
    operand_major major;
    swizzle_mode swz;
    int eb;          /* element bytes: 2 (bf16/f16) or 1 (fp8) */
    int mn, k;       /* tile extents in elements */
    uint32_t lbo, sbo; /* bytes, exactly what the descriptor carries */
    uint32_t katom;  /* K-major swizzled: bytes between atom columns along K */
    uint32_t bytes;  /* SMEM the tile occupies */
} smem_tile;

FMHA_HD uint32_t swizzle_apply(uint32_t addr, swizzle_mode s)
{
    uint32_t bits = s == SWZ_128B ? 7u : s == SWZ_64B ? 3u : s == SWZ_32B ? 1u : 0u;
    return addr ^ (((addr >> 7) & bits) << 4);
}

/* Repeat of the swizzle pattern: the alignment a swizzled tile needs. */
FMHA_HD uint32_t swizzle_repeat(swizzle_mode s)
{
    return s == SWZ_128B ? 1024u : s == SWZ_64B ? 512u : s == SWZ_32B ? 256u : 16u;
}


/* Un-swizzled byte offset of element (mn, k) from the descriptor's start under the given LBO/SBO.
 * katom is only used for K-major swizzled operands whose k crosses an atom (whole tiles). */
FMHA_HD uint32_t canon_raw_offset(operand_major major, swizzle_mode swz, int eb, uint32_t lbo,
                                  uint32_t sbo, uint32_t katom, int mn, int k)
{
    const int T = 16 / eb;                 /* elements per 16 bytes */
    const int S = swizzle_span(swz);       /* bytes per swizzled row */
    const int W = S / eb;                  /* elements per swizzled row */
    if (major == MAJOR_K) {
        if (swz == SWZ_NONE)
            return (uint32_t)(mn % 8) * 16u + (uint32_t)(mn / 8) * sbo + (uint32_t)(k % T) * eb +
                   (uint32_t)(k / T) * lbo;
        return (uint32_t)(mn % 8) * S + (uint32_t)(mn / 8) * sbo + (uint32_t)(k % W) * eb +
               (uint32_t)(k / W) * katom;
    }
    if (swz == SWZ_NONE)
        return (uint32_t)(mn % T) * eb + (uint32_t)(mn / T) * sbo + (uint32_t)(k % 8) * 16u +
               (uint32_t)(k / 8) * lbo;
    return (uint32_t)(mn % W) * eb + (uint32_t)(mn / W) * lbo + (uint32_t)(k % 8) * S +
           (uint32_t)(k / 8) * sbo;
}

/* Byte address the tensor core reads for element (mn, k) of one MMA operand, given the decoded
 * descriptor (start, LBO, SBO, swizzle): the canonical layout, then the swizzle on the address. */
FMHA_HD uint32_t smem_desc_addr(operand_major major, swizzle_mode swz, int eb, uint32_t start,
                                uint32_t lbo, uint32_t sbo, int mn, int k)
{
    return swizzle_apply(start + canon_raw_offset(major, swz, eb, lbo, sbo, 0u, mn, k), swz);
}

FMHA_HD uint32_t round_up_u32(uint32_t x, uint32_t m) { return (x + m - 1) / m * m; }

/* The dense tile this project uses for each case (all offsets from a base aligned to
 * swizzle_repeat()):
 *   K-major none:  [k/T][mn][16 B]      -> SBO = 128, LBO = round8(mn) * 16
 *   K-major swz:   [k/W][mn][S B]       -> SBO = 8 * S, LBO = 16 (unused), katom = round8(mn) * S
 *   MN-major none: [k/8][mn/T][8][16 B] -> SBO = 128, LBO = ceil(mn/T) * 128
 *   MN-major swz:  [mn/W][k][S B]       -> SBO = 8 * S, LBO = round8(k) * S */
FMHA_HD smem_tile smem_tile_make(operand_major major, swizzle_mode swz, int eb, int mn, int k)
{
    smem_tile t;
    const uint32_t T = 16u / (uint32_t)eb, S = (uint32_t)swizzle_span(swz), W = S / (uint32_t)eb;
    const uint32_t umn = (uint32_t)mn, uk = (uint32_t)k;
    t.major = major; t.swz = swz; t.eb = eb; t.mn = mn; t.k = k; t.katom = 0;
    if (major == MAJOR_K && swz == SWZ_NONE) {
        t.sbo = 128u;
        t.lbo = round_up_u32(umn, 8u) * 16u;
        t.bytes = t.lbo * ((uk + T - 1) / T);
    } else if (major == MAJOR_K) {
        t.sbo = 8u * S;
        t.lbo = 16u;
        t.katom = round_up_u32(umn, 8u) * S;
        t.bytes = t.katom * ((uk + W - 1) / W);
    } else if (swz == SWZ_NONE) {
        t.sbo = 128u;
        t.lbo = ((umn + T - 1) / T) * 128u;
        t.bytes = t.lbo * ((uk + 7u) / 8u);
    } else {
        t.sbo = 8u * S;
        t.lbo = round_up_u32(uk, 8u) * S;
        t.bytes = t.lbo * ((umn + W - 1) / W);
    }
    return t;
}

FMHA_HD uint32_t smem_tile_offset_raw(const smem_tile *t, int mn, int k)
{
    return canon_raw_offset(t->major, t->swz, t->eb, t->lbo, t->sbo, t->katom, mn, k);
}

/* Where the fill writes element (mn, k) (the tile base must be swizzle_repeat()-aligned). */
FMHA_HD uint32_t smem_tile_offset(const smem_tile *t, int mn, int k)
{
    return swizzle_apply(smem_tile_offset_raw(t, mn, k), t->swz);
}

/* smem_tile_offset() of a K-major SW128 tile of 1-byte elements whose rows hold one atom (k < 128),
 * e.g. stage D's Vt [D x 128 keys]: rows 128 bytes apart, chunk c of row r at c ^ (r % 8). Written
 * out, it needs no tile in registers: a kernel that builds offsets from a smem_tile carries its
 * fields (lbo, sbo, katom) through every address, where this costs one shift and one XOR
 * (tests/unit/test_canonical.c checks it equals the tile's offset). */
FMHA_HD uint32_t smem_sw128_row_offset(int r, int c)
{
    return (uint32_t)r * 128u + ((uint32_t)c ^ (((uint32_t)r & 7u) << 4));
}

/* Descriptor start-address advance for the MMA K step that begins at element k. */
FMHA_HD uint32_t smem_tile_k_advance(const smem_tile *t, int k)
{
    return smem_tile_offset_raw(t, 0, k);
}

/* Descriptors for the tile at SMEM byte address `base`: the operand that starts at row mn0 (a
 * multiple of 8, or of the swizzle atom width for MN-major swizzled tiles; e.g. the 64-row half a
 * Hopper warpgroup reads) and at the K step starting at element k. */
FMHA_HD uint32_t smem_tile_desc_start(const smem_tile *t, uint32_t base, int mn0, int k)
{
    return base + smem_tile_offset_raw(t, mn0, k);
}

FMHA_HD uint64_t smem_tile_desc_sm100(const smem_tile *t, uint32_t base, int mn0, int k)
{
    return sm100_desc_encode(smem_tile_desc_start(t, base, mn0, k), t->lbo, t->sbo, t->swz);
}

FMHA_HD uint64_t smem_tile_desc_sm90(const smem_tile *t, uint32_t base, int mn0, int k)
{
    return sm90_desc_encode(smem_tile_desc_start(t, base, mn0, k), t->lbo, t->sbo, t->swz);
}

/* The descriptor of the K step at element k from the step-0 descriptor d0 of the same operand:
 * smem_tile_desc_sm90(t, base, mn0, k) == smem_tile_desc_sm90_k(t, smem_tile_desc_sm90(t, base,
 * mn0, 0), k) for every canonical tile (tests/unit/test_smem_desc.c checks it), because a tile's
 * offset is the sum of its row part and its K part. A kernel encodes d0 once, outside its loop. */
FMHA_HD uint64_t smem_tile_desc_sm90_k(const smem_tile *t, uint64_t d0, int k)
{
    return smem_desc_add(d0, smem_tile_k_advance(t, k));
}

#endif
