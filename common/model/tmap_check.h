/* A host-side checker for cuTensorMapEncodeTiled parameters: every documented rule of the CUDA
 * driver's tiled tensor-map encoder, each with its own id, so a parameter set the driver would
 * reject (CUDA_ERROR_INVALID_VALUE, FG13) is named before any GPU is involved. The rules come from
 * the cuTensorMapEncodeTiled doc comment in cuda.h (CUDA 13.0) and notes/hardware.md section 10;
 * tests/gpu/test_tmap_conformance.c holds the checker against the real driver.
 *
 * Rules whose driver behaviour is not settled by the documentation are marked uncertain
 * (tmap_rule_uncertain); tmap_default_rules() is the best current guess of which of them the
 * driver enforces, and the H200 conformance run decides. */
#ifndef FMHA_TMAP_CHECK_H
#define FMHA_TMAP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

typedef struct {
    int data_type;              /* CUtensorMapDataType value */
    unsigned rank;              /* 1..5 */
    uint64_t global_address;    /* only its alignment matters to the checker */
    uint64_t global_dim[5];
    uint64_t global_strides[4]; /* rank-1 entries, bytes */
    uint32_t box_dim[5];
    uint32_t element_strides[5];
    int interleave, swizzle, l2_promotion, oob_fill; /* CUtensorMap* enum values */
} tmap_params;

/* One id per rule, in about the order tmap_check tests them (the first broken rule is the one
 * reported). Enum ranges come first because the other rules need the element size. */
typedef enum {
    TMAP_OK = 0,
    TMAP_R_DATA_TYPE_ENUM,          /* tensorDataType a CUtensorMapDataType */
    TMAP_R_INTERLEAVE_ENUM,         /* interleave a CUtensorMapInterleave */
    TMAP_R_SWIZZLE_ENUM,            /* swizzle a CUtensorMapSwizzle */
    TMAP_R_L2_PROMOTION_ENUM,       /* l2Promotion a CUtensorMapL2promotion */
    TMAP_R_OOB_FILL_ENUM,           /* oobFill a CUtensorMapFloatOOBfill */
    TMAP_R_RANK_RANGE,              /* 1 <= tensorRank <= 5 */
    TMAP_R_INTERLEAVE_RANK,         /* interleave != NONE needs tensorRank >= 3 */
    TMAP_R_ADDR_ALIGN_16,           /* globalAddress 16-byte aligned */
    TMAP_R_ADDR_ALIGN_32_INTERLEAVE,/* INTERLEAVE_32B: globalAddress 32-byte aligned */
    TMAP_R_ADDR_ALIGN_32_PACKED,    /* 16U4_ALIGN16B / 16U6_ALIGN16B: 32-byte aligned */
    TMAP_R_DIM_RANGE,               /* 1 <= globalDim[i] <= 2^32 */
    TMAP_R_DIM0_PACKED16_MULT128,   /* ALIGN16B packed types: globalDim[0] % 128 == 0 */
    TMAP_R_DIM0_U4ALIGN8_MULT2,     /* 16U4_ALIGN8B: globalDim[0] % 2 == 0 */
    TMAP_R_STRIDE_MULT16,           /* globalStrides[i] % 16 == 0 */
    TMAP_R_STRIDE_MAX,              /* globalStrides[i] < 2^40 */
    TMAP_R_STRIDE_MULT32_INTERLEAVE,/* INTERLEAVE_32B: globalStrides[i] % 32 == 0 */
    TMAP_R_STRIDE_MULT32_PACKED,    /* ALIGN16B packed types: globalStrides[i] % 32 == 0 */
    TMAP_R_BOX_RANGE,               /* 1 <= boxDim[i] <= 256 */
    TMAP_R_BOX_INNER_MULT16,        /* boxDim[0] * elemsize % 16 bytes == 0 (any interleave: H200 run) */
    TMAP_R_BOX0_PACKED16_128,       /* ALIGN16B packed types: boxDim[0] == 128 */
    TMAP_R_ELEM_STRIDE_RANGE,       /* 1 <= elementStrides[i] <= 8 */
    TMAP_R_ELEM_STRIDE0_RANGE,      /* uncertain: the same for [0] without interleave ("ignored") */
    TMAP_R_INTERLEAVE32_SWIZZLE32,  /* documented, not enforced: INTERLEAVE_32B needs SWIZZLE_32B */
    TMAP_R_SWIZZLE_SPAN,            /* INTERLEAVE_NONE: boxDim[0] * elemsize <= swizzle span */
    TMAP_R_U6_INTERLEAVE_NONE,      /* 16U6_ALIGN16B needs INTERLEAVE_NONE */
    TMAP_R_U6_SWIZZLE,              /* 16U6_ALIGN16B: NONE, 128B, 128B_ATOM_32B, 128B_ATOM_64B */
    TMAP_R_U4ALIGN16_SWIZZLE,       /* 16U4_ALIGN16B: NONE, 128B, 128B_ATOM_32B */
    TMAP_R_OOB_NAN_FLOAT_ONLY,      /* NAN_REQUEST_ZERO_FMA: floating, non-packed types only */
    TMAP_R_SWIZZLE_ATOM_CC10,       /* 128B_ATOM_* swizzles: compute capability >= 10 */
    TMAP_R_PACKED_CC10,             /* uncertain: 16U4/16U6 packed types need CC >= 10 */
    TMAP_R_STRIDE_NONZERO,          /* uncertain: globalStrides[i] != 0 */
    TMAP_R_STRIDE0_COVERS_DIM0,     /* uncertain: globalStrides[0] >= globalDim[0] * elemsize */
    TMAP_R_STRIDE_PADDING_MODEL,    /* uncertain: globalStrides[i] >= globalStrides[i-1]*globalDim[i] */
    TMAP_R_ELEM_STRIDE0_ONE,        /* uncertain: INTERLEAVE_NONE needs elementStrides[0] == 1 */
    TMAP_R_BOX_TOTAL_BYTES,         /* undocumented: the whole box must fit a limit (H200 run) */
    TMAP_R_COUNT
} tmap_rule;

/* Largest box (all of boxDim times the element size) the checker accepts. The H200 driver
 * 580.159.04 accepted 224 KiB and refused 240 KiB (grid probes box_total_*); the limit matches the
 * 227 KiB of shared memory a block may opt into on Hopper and Blackwell (sharedMemPerBlockOptin =
 * 232448 bytes): a box larger than that could never land in SMEM. */
#define TMAP_BOX_MAX_BYTES 232448u

#define TMAP_RULE_BIT(r) (1ull << (r))
#define TMAP_RULES_ALL   ((1ull << TMAP_R_COUNT) - 2ull) /* every rule bit, not TMAP_OK's */

/* 0 = the driver should accept; otherwise the first broken rule (a tmap_rule) and a one-line
 * message in msg naming the parameter, its value and the rule, e.g.
 * "globalStrides[0]=100: must be a multiple of 16 bytes". msg may be NULL.
 * cc_major: the GPU's compute capability major; the CC-gated rules (TMAP_R_SWIZZLE_ATOM_CC10,
 * TMAP_R_PACKED_CC10) are skipped when it is <= 0 (GPU unknown). Checks tmap_default_rules(). */
int tmap_check(const tmap_params *p, int cc_major, char *msg, size_t len);

/* The same with an explicit rule set (TMAP_RULE_BIT(r) per enforced rule), so a conformance
 * disagreement can be traced to the one uncertain rule that would explain it. */
int tmap_check_rules(const tmap_params *p, int cc_major, uint64_t rules, char *msg, size_t len);

/* The rules tmap_check enforces: every certain rule plus the uncertain ones currently believed to
 * be enforced by the driver. */
uint64_t tmap_default_rules(void);

const char *tmap_rule_name(int rule);   /* short stable name, e.g. "stride_multiple_16"; 0: "ok" */
const char *tmap_rule_source(int rule); /* where the rule comes from */
int tmap_rule_uncertain(int rule);      /* 1: driver behaviour to be decided by the H200 run */

size_t tmap_elem_bits(int data_type);   /* 4/6 for the packed types, else 8*bytes; 0 if invalid */
int tmap_is_packed(int data_type);      /* 16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B */
int tmap_is_float(int data_type);       /* floating-point, non-packed */

/* Names for printing parameter values ("BFLOAT16", "SWIZZLE_128B", ...); "?" out of range. */
const char *tmap_data_type_name(int data_type);
const char *tmap_interleave_name(int interleave);
const char *tmap_swizzle_name(int swizzle);

/* One line describing p (type, rank, address, dims, strides, box, element strides, enums). */
void tmap_format_params(const tmap_params *p, char *buf, size_t len);

#endif
