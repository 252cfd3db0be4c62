/* Test fixture for MMA tests (host emulator tests and the GPU conformance test): integer operand
 * tiles A [m x k] and B [n x k], an SMEM image holding both in the canonical layouts of
 * model/canonical.h, descriptors for every K step, and the plain-loop product D = A B^T. */
#ifndef FMHA_TEST_MMA_FIXTURE_H
#define FMHA_TEST_MMA_FIXTURE_H

#include <stdint.h>

#include "model/canonical.h"
#include "model/idesc.h"

typedef struct {
    int kind;          /* MMA_KIND_F16 or MMA_KIND_F8F6F4 */
    unsigned fmt;      /* FMT_BF16 or FMT_E4M3 */
    int eb;            /* element bytes */
    int m, n, k;
    int kstep;         /* K per MMA: 16 (bf16) or 32 (fp8) */
    smem_tile ta, tb;
    uint32_t a_off, b_off, bytes;
    uint8_t *img;
    double *a, *b;     /* [m][k], [n][k] */
    double *ref;       /* [m][n] */
} mma_case;

/* Values are integers in [-3, 3] (exact in bf16 and e4m3; all sums exact in f32). Returns 0. */
int mma_case_make(mma_case *c, int kind, unsigned fmt, int m, int n, int k, operand_major ma,
                  operand_major mb, swizzle_mode swz, uint64_t seed);
void mma_case_free(mma_case *c);

/* Descriptor of A or B (which = 0 / 1) for the K step starting at element k, with SMEM base 0. */
uint64_t mma_case_desc_sm90(const mma_case *c, int which, int k);
uint64_t mma_case_desc_sm100(const mma_case *c, int which, int k);

/* "bf16 K/MN 128B m64 n256 k64" */
void mma_case_name(const mma_case *c, char *buf, unsigned len);

#endif
