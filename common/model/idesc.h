/* The 32-bit instruction descriptor of tcgen05.mma for .kind::f16 and .kind::f8f6f4 (sm_100a).
 * PTX ISA 9.0 section 9.7.16.4.2 "Instruction descriptor", Table 42; the same positions in CUTLASS
 * `InstrDescriptor` (include/cute/arch/mma_sm100_desc.hpp). notes/hardware.md section 2.1.
 *
 *   bits  0-1  sparsity selector     bit 2  sparsity enable      bit 3  saturate (integer kinds)
 *   bits  4-5  D format: F16 0, F32 1, S32 2                      bit 6  reserved
 *   bits  7-9  A format  \  kind::f16: F16 0, BF16 1              bit 13 negate A
 *   bits 10-12 B format  /  kind::f8f6f4: E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5
 *   bit  14    negate B   bit 15 A major (0 K, 1 M)   bit 16 B major (0 K, 1 N)
 *   bits 17-22 N >> 3     bit 23 reserved (must be 0)  bits 24-28 M >> 4   bit 29 reserved
 *   bits 30-31 max shift (.ws only)
 * K is not encoded: 16 for kind::f16, 32 for kind::f8f6f4 (dense). The format codes mean different
 * types per kind (BF16 = 1 = E5M2): only the instruction's .kind disambiguates.
 *
 * Worked value (notes/hardware.md section 2.3): M=128, N=128, bf16 x bf16 -> f32, both K-major: 0x08200490. */
#ifndef FMHA_MODEL_IDESC_H
#define FMHA_MODEL_IDESC_H

#include <stddef.h>
#include <stdint.h>

#include "model/hd.h"

enum { MMA_KIND_F16 = 0, MMA_KIND_F8F6F4 = 1 };
enum { DFMT_F16 = 0, DFMT_F32 = 1, DFMT_S32 = 2 };
enum { FMT_F16 = 0, FMT_BF16 = 1 };                                          /* kind::f16 */
enum { FMT_E4M3 = 0, FMT_E5M2 = 1, FMT_E2M3 = 3, FMT_E3M2 = 4, FMT_E2M1 = 5 }; /* kind::f8f6f4 */

typedef struct {
    unsigned sparse_sel, sparse, saturate;
    unsigned d_fmt, a_fmt, b_fmt;
    unsigned neg_a, neg_b;
    unsigned a_mn, b_mn;  /* 1 = MN-major ("transposed") operand */
    unsigned n, m;        /* full values, e.g. 64 and 128 */
    unsigned max_shift;
    unsigned reserved;    /* decode only: bits 6, 23, 29 as found (must be 0) */
} idesc_fields;

#define IDESC_N_SHIFT 17
#define IDESC_M_SHIFT 24

FMHA_HD uint32_t idesc_encode(const idesc_fields *f)
{
    return (f->sparse_sel & 3u) | (f->sparse & 1u) << 2 | (f->saturate & 1u) << 3 |
           (f->d_fmt & 3u) << 4 | (f->a_fmt & 7u) << 7 | (f->b_fmt & 7u) << 10 |
           (f->neg_a & 1u) << 13 | (f->neg_b & 1u) << 14 | (f->a_mn & 1u) << 15 |
           (f->b_mn & 1u) << 16 | ((f->n >> 3) & 0x3Fu) << IDESC_N_SHIFT |
           ((f->m >> 4) & 0x1Fu) << IDESC_M_SHIFT | (f->max_shift & 3u) << 30;
}

FMHA_HD void idesc_decode(uint32_t v, idesc_fields *f)
{
    f->sparse_sel = v & 3u;
    f->sparse = (v >> 2) & 1u;
    f->saturate = (v >> 3) & 1u;
    f->d_fmt = (v >> 4) & 3u;
    f->a_fmt = (v >> 7) & 7u;
    f->b_fmt = (v >> 10) & 7u;
    f->neg_a = (v >> 13) & 1u;
    f->neg_b = (v >> 14) & 1u;
    f->a_mn = (v >> 15) & 1u;
    f->b_mn = (v >> 16) & 1u;
    f->n = ((v >> IDESC_N_SHIFT) & 0x3Fu) << 3;
    f->m = ((v >> IDESC_M_SHIFT) & 0x1Fu) << 4;
    f->max_shift = (v >> 30) & 3u;
    f->reserved = v & ((1u << 6) | (1u << 23) | (1u << 29));
}

/* The two descriptors the stages use: bf16 x bf16 -> f32 and e4m3 x e4m3 -> f32, dense. */
FMHA_HD uint32_t idesc_bf16_f32(unsigned m, unsigned n, unsigned a_mn, unsigned b_mn)
{
    idesc_fields f = {0, 0, 0, DFMT_F32, FMT_BF16, FMT_BF16, 0, 0, a_mn, b_mn, n, m, 0, 0};
    return idesc_encode(&f);
}

FMHA_HD uint32_t idesc_e4m3_f32(unsigned m, unsigned n, unsigned a_mn, unsigned b_mn)
{
    idesc_fields f = {0, 0, 0, DFMT_F32, FMT_E4M3, FMT_E4M3, 0, 0, a_mn, b_mn, n, m, 0, 0};
    return idesc_encode(&f);
}

/* The two plausible mis-encodings of the M and N fields (footgun FG03), applied to a correct
 * descriptor v so the footgun tests and the stage programs' --fault variants break the same bits:
 *   IDESC_MISCODE_M_AT_BIT23  M>>4 written at bit 23 instead of 24 (M = 128 reads back as 64)
 *   IDESC_MISCODE_N_BIT_LOW   N>>3 written at bit 16 instead of 17 (N = 64 reads back as 32) */
typedef enum { IDESC_MISCODE_NONE = 0, IDESC_MISCODE_M_AT_BIT23, IDESC_MISCODE_N_BIT_LOW } idesc_miscode;

FMHA_HD uint32_t idesc_miscoded(uint32_t v, idesc_miscode how)
{
    const uint32_t m = ((v >> IDESC_M_SHIFT) & 0x1Fu) << 4, n = ((v >> IDESC_N_SHIFT) & 0x3Fu) << 3;
    if (how == IDESC_MISCODE_M_AT_BIT23) return (v & ~(0x1Fu << IDESC_M_SHIFT)) | ((m >> 4) << (IDESC_M_SHIFT - 1));
    if (how == IDESC_MISCODE_N_BIT_LOW) return (v & ~(0x3Fu << IDESC_N_SHIFT)) | ((n >> 3) << (IDESC_N_SHIFT - 1));
    return v;
}

/* Host: is this a legal dense cta_group::1 MMA of the given kind (PTX 9.7.16.10.1 Table 50)?
 * 0, or nonzero with the broken rule in err. N % 16 for M = 128 is reported as a warning in
 * warn (PTX allows step 8; CUTLASS's TS form and DeepGEMM require 16: notes/hardware.md section 2.2). */
int idesc_check(const idesc_fields *f, int kind, char *err, size_t len, char *warn, size_t wlen);

/* Host: "F32" / "BF16" / "E4M3" ... for a format code of a kind. */
const char *idesc_fmt_name(int kind, unsigned code, int is_d);

/* Host: K per instruction for the kind (dense): 16 or 32. */
int idesc_k_per_mma(int kind);

#endif
