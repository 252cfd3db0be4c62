/* The cuTensorMapEncodeTiled rule checker (tmap_check.h). Each rule names its source: "cuda.h"
 * is the cuTensorMapEncodeTiled doc comment of CUDA 13.0's cuda.h, "hardware.md 10.1 #n" the numbered
 * list of notes/hardware.md section 10.1, "PTX 5.5.x" the PTX ISA tensor chapter. */
#include "model/tmap_check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

typedef struct {
    const char *name;
    const char *source;
    int uncertain;  /* 1: the documentation does not settle what the driver does */
    int default_on; /* enforced by tmap_check */
} rule_info;

static const rule_info rules[TMAP_R_COUNT] = {
    [TMAP_OK] = {"ok", "-", 0, 0},
    [TMAP_R_DATA_TYPE_ENUM] = {"data_type_enum", "cuda.h: tensorDataType has to be a CUtensorMapDataType; hardware.md 10.1 #2", 0, 1},
    [TMAP_R_INTERLEAVE_ENUM] = {"interleave_enum", "cuda.h: interleave of type CUtensorMapInterleave", 0, 1},
    [TMAP_R_SWIZZLE_ENUM] = {"swizzle_enum", "cuda.h: swizzle has to be of type CUtensorMapSwizzle", 0, 1},
    [TMAP_R_L2_PROMOTION_ENUM] = {"l2_promotion_enum", "cuda.h: l2Promotion must be of type CUtensorMapL2promotion", 0, 1},
    [TMAP_R_OOB_FILL_ENUM] = {"oob_fill_enum", "cuda.h: oobFill must be of type CUtensorMapFloatOOBfill", 0, 1},
    [TMAP_R_RANK_RANGE] = {"rank_1_to_5", "cuda.h: tensorRank non-zero and <= 5; hardware.md 10.1 #3", 0, 1},
    [TMAP_R_INTERLEAVE_RANK] = {"interleave_needs_rank_3", "cuda.h: interleave != NONE needs tensorRank >= 3; PTX 5.5.6", 0, 1},
    [TMAP_R_ADDR_ALIGN_16] = {"address_align_16", "cuda.h: globalAddress must be 16 byte aligned; hardware.md 10.1 #4", 0, 1},
    [TMAP_R_ADDR_ALIGN_32_INTERLEAVE] = {"address_align_32_interleave32", "cuda.h: INTERLEAVE_32B needs a 32 byte aligned globalAddress", 0, 1},
    [TMAP_R_ADDR_ALIGN_32_PACKED] = {"address_align_32_packed16b", "cuda.h: 16U6_ALIGN16B / 16U4_ALIGN16B need a 32 byte aligned globalAddress", 0, 1},
    [TMAP_R_DIM_RANGE] = {"global_dim_1_to_2p32", "cuda.h: globalDim non-zero and <= 2^32; hardware.md 10.1 #5", 0, 1},
    [TMAP_R_DIM0_PACKED16_MULT128] = {"packed16b_dim0_multiple_128", "cuda.h: 16U6_ALIGN16B / 16U4_ALIGN16B need globalDim[0] % 128 == 0", 0, 1},
    [TMAP_R_DIM0_U4ALIGN8_MULT2] = {"u4align8b_dim0_multiple_2", "cuda.h: 16U4_ALIGN8B needs globalDim[0] % 2 == 0", 0, 1},
    [TMAP_R_STRIDE_MULT16] = {"stride_multiple_16", "cuda.h: globalStrides a multiple of 16; hardware.md 10.1 #6", 0, 1},
    [TMAP_R_STRIDE_MAX] = {"stride_below_2p40", "cuda.h: globalStrides less than 2^40; hardware.md 10.1 #6", 0, 1},
    [TMAP_R_STRIDE_MULT32_INTERLEAVE] = {"stride_multiple_32_interleave32", "cuda.h: INTERLEAVE_32B needs strides a multiple of 32", 0, 1},
    [TMAP_R_STRIDE_MULT32_PACKED] = {"stride_multiple_32_packed16b", "cuda.h: 16U6_ALIGN16B / 16U4_ALIGN16B need strides a multiple of 32", 0, 1},
    [TMAP_R_BOX_RANGE] = {"box_dim_1_to_256", "cuda.h: boxDim non-zero and <= 256; hardware.md 10.1 #7", 0, 1},
    [TMAP_R_BOX_INNER_MULT16] = {"box_inner_bytes_multiple_16", "cuda.h: INTERLEAVE_NONE needs boxDim[0]*elemsize a multiple of 16 bytes; PTX 5.5.3.1. The H200 driver (580.159.04) also refuses an 8-byte inner box with INTERLEAVE_16B/32B, so it is checked for every interleave", 0, 1},
    [TMAP_R_BOX0_PACKED16_128] = {"packed16b_box0_128", "cuda.h: 16U6_ALIGN16B / 16U4_ALIGN16B need boxDim[0] == 128", 0, 1},
    [TMAP_R_ELEM_STRIDE_RANGE] = {"element_stride_1_to_8", "cuda.h: elementStrides non-zero and <= 8; hardware.md 10.1 #8", 0, 1},
    [TMAP_R_ELEM_STRIDE0_RANGE] = {"element_stride0_range_without_interleave", "cuda.h: elementStrides 1..8, yet \"the first element of this array is ignored\" without interleave", 1, 1},
    [TMAP_R_INTERLEAVE32_SWIZZLE32] = {"interleave32_needs_swizzle32", "cuda.h: INTERLEAVE_32B needs SWIZZLE_32B; hardware.md 10.1 #9. Not enforced: the H200 driver (580.159.04) encodes INTERLEAVE_32B with SWIZZLE_NONE/64B/128B, so the rule is off", 1, 0},
    [TMAP_R_SWIZZLE_SPAN] = {"box_inner_bytes_within_swizzle_span", "cuda.h: INTERLEAVE_NONE with a swizzle needs boxDim[0]*elemsize <= 32/64/128; hardware.md 10.1 #9", 0, 1},
    [TMAP_R_U6_INTERLEAVE_NONE] = {"u6_needs_interleave_none", "cuda.h: 16U6_ALIGN16B requires INTERLEAVE_NONE", 0, 1},
    [TMAP_R_U6_SWIZZLE] = {"u6_swizzle_mode", "cuda.h: 16U6_ALIGN16B supports only SWIZZLE_NONE/128B/128B_ATOM_32B/128B_ATOM_64B", 0, 1},
    [TMAP_R_U4ALIGN16_SWIZZLE] = {"u4align16b_swizzle_mode", "cuda.h: 16U4_ALIGN16B supports only SWIZZLE_NONE/128B/128B_ATOM_32B", 0, 1},
    [TMAP_R_OOB_NAN_FLOAT_ONLY] = {"nan_fill_float_only", "cuda.h: NAN_REQUEST_ZERO_FMA only for floating-point, non-packed types; hardware.md 10.1 #10", 0, 1},
    [TMAP_R_SWIZZLE_ATOM_CC10] = {"swizzle_128b_atom_needs_cc10", "hardware.md 10.1 #9 (CCCL make_tma_descriptor docs): 128B_ATOM_* swizzles need CC >= 10", 1, 1},
    [TMAP_R_PACKED_CC10] = {"packed_type_needs_cc10", "guess: the 16U4/16U6 packed types arrived with Blackwell (CUDA 12.8) for tcgen05 f8f6f4 operands", 1, 1},
    [TMAP_R_STRIDE0_COVERS_DIM0] = {"stride0_covers_dim0", "cuda.h pseudo-code: globalStrides[0] = globalDim[0]*elemsize + padding[0] (padding >= 0)", 1, 0},
    [TMAP_R_STRIDE_PADDING_MODEL] = {"stride_padding_model", "cuda.h pseudo-code: globalStrides[i] = globalStrides[i-1]*(globalDim[i] + padding[i])", 1, 0},
    [TMAP_R_STRIDE_NONZERO] = {"stride_nonzero", "guess: a zero stride is a multiple of 16 but may be refused", 1, 0},
    [TMAP_R_ELEM_STRIDE0_ONE] = {"element_stride0_one_without_interleave", "PTX 5.5.3.2: dimension-0 traversal stride must be 1 without interleave (cuda.h: ignored). Off: the H200 driver accepts elementStrides[0] = 2, 3, 8", 1, 0},
    [TMAP_R_BOX_TOTAL_BYTES] = {"box_total_bytes_limit", "undocumented: the H200 driver (580.159.04) accepts a 224 KiB box and refuses 240 KiB; TMAP_BOX_MAX_BYTES is the 227 KiB opt-in shared memory of a block", 1, 1},
};

/* Why the uncertain rules start where they do (the H200 conformance run decides each):
 * - swizzle_128b_atom_needs_cc10, packed_type_needs_cc10: on. Both are Blackwell features; if the
 *   Hopper driver encodes them anyway, turn the rule off.
 * - stride_padding_model: off. Working code breaks it all the time: a BSHD tensor mapped as
 *   {d, s, h, b} has globalStrides[1] = h*d*2 < globalStrides[0]*s, and GN-blog's 3-D "swap the
 *   first two dims" map uses {K*2, 16} (hardware.md 10.1 #6).
 * - element_stride0_range_without_interleave: on, the range is listed for the whole array.
 * - stride0_covers_dim0 (nvFuser enforces it in its own pre-check), stride_nonzero,
 *   element_stride0_one_without_interleave: off; the cuda.h text does not require them. */

const char *tmap_rule_name(int rule)
{
    return (rule >= 0 && rule < TMAP_R_COUNT) ? rules[rule].name : "?";
}

const char *tmap_rule_source(int rule)
{
    return (rule >= 0 && rule < TMAP_R_COUNT) ? rules[rule].source : "?";
}

int tmap_rule_uncertain(int rule)
{
    return (rule > 0 && rule < TMAP_R_COUNT) ? rules[rule].uncertain : 0;
}

uint64_t tmap_default_rules(void)
{
    uint64_t m = 0;
    for (int r = 1; r < TMAP_R_COUNT; r++)
        if (rules[r].default_on) m |= TMAP_RULE_BIT(r);
    return m;
}

size_t tmap_elem_bits(int t)
{
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 8;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 16;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 32;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 64;
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B:
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B: return 6;
    default: return 0;
    }
}

int tmap_is_packed(int t)
{
    return t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B || t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ||
           t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

static int is_packed16b(int t)
{
    return t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

int tmap_is_float(int t)
{
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 1;
    default: return 0;
    }
}

static const char *const type_names[] = {
    "UINT8",    "UINT16",      "UINT32",   "INT32",     "UINT64",       "INT64",
    "FLOAT16",  "FLOAT32",     "FLOAT64",  "BFLOAT16",  "FLOAT32_FTZ",  "TFLOAT32",
    "TFLOAT32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B"};
static const char *const interleave_names[] = {"INTERLEAVE_NONE", "INTERLEAVE_16B", "INTERLEAVE_32B"};
static const char *const swizzle_names[] = {
    "SWIZZLE_NONE", "SWIZZLE_32B", "SWIZZLE_64B", "SWIZZLE_128B",
    "SWIZZLE_128B_ATOM_32B", "SWIZZLE_128B_ATOM_32B_FLIP_8B", "SWIZZLE_128B_ATOM_64B"};

#define NAME_OF(tab, v) (((v) >= 0 && (size_t)(v) < sizeof(tab) / sizeof(tab[0])) ? tab[v] : "?")

const char *tmap_data_type_name(int t) { return NAME_OF(type_names, t); }
const char *tmap_interleave_name(int i) { return NAME_OF(interleave_names, i); }
const char *tmap_swizzle_name(int s) { return NAME_OF(swizzle_names, s); }

/* Swizzle span in bytes; 0 for SWIZZLE_NONE. The 128B_ATOM_* modes still swizzle within 128 B,
 * which is the span cuda.h names ("CU_TENSOR_MAP_SWIZZLE_128B* require ... <= 128"). */
static unsigned swizzle_span(int s)
{
    switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    default: return 128;
    }
}

static int is_atom_swizzle(int s)
{
    return s == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B || s == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B ||
           s == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
}

static int fail(int rule, char *msg, size_t len, const char *fmt, ...)
{
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return rule;
}

#define ON(r) (rules_on & TMAP_RULE_BIT(r))
#define FAIL(r, ...) return fail((r), msg, len, __VA_ARGS__)

int tmap_check_rules(const tmap_params *p, int cc_major, uint64_t rules_on, char *msg, size_t len)
{
    if (msg && len) msg[0] = '\0';
    const int t = p->data_type;

    /* Enum ranges. */
    if (ON(TMAP_R_DATA_TYPE_ENUM) && tmap_elem_bits(t) == 0)
        FAIL(TMAP_R_DATA_TYPE_ENUM, "tensorDataType=%d: not a CUtensorMapDataType (0..%d)", t,
             CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B);
    if (ON(TMAP_R_INTERLEAVE_ENUM) &&
        (p->interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || p->interleave > CU_TENSOR_MAP_INTERLEAVE_32B))
        FAIL(TMAP_R_INTERLEAVE_ENUM, "interleave=%d: not a CUtensorMapInterleave (0..%d)", p->interleave,
             CU_TENSOR_MAP_INTERLEAVE_32B);
    if (ON(TMAP_R_SWIZZLE_ENUM) &&
        (p->swizzle < CU_TENSOR_MAP_SWIZZLE_NONE || p->swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B))
        FAIL(TMAP_R_SWIZZLE_ENUM, "swizzle=%d: not a CUtensorMapSwizzle (0..%d)", p->swizzle,
             CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B);
    if (ON(TMAP_R_L2_PROMOTION_ENUM) && (p->l2_promotion < CU_TENSOR_MAP_L2_PROMOTION_NONE ||
                                         p->l2_promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B))
        FAIL(TMAP_R_L2_PROMOTION_ENUM, "l2Promotion=%d: not a CUtensorMapL2promotion (0..%d)",
             p->l2_promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    if (ON(TMAP_R_OOB_FILL_ENUM) && (p->oob_fill < CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE ||
                                     p->oob_fill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA))
        FAIL(TMAP_R_OOB_FILL_ENUM, "oobFill=%d: not a CUtensorMapFloatOOBfill (0..%d)", p->oob_fill,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);

    /* Rank: checked before any array is read, since the arrays hold at most 5 entries. */
    if (p->rank < 1 || p->rank > 5) {
        if (ON(TMAP_R_RANK_RANGE)) FAIL(TMAP_R_RANK_RANGE, "tensorRank=%u: must be 1..5", p->rank);
        return 0; /* nothing else can be checked without a usable rank */
    }
    const unsigned rank = p->rank;
    const int il = p->interleave, sw = p->swizzle;
    if (ON(TMAP_R_INTERLEAVE_RANK) && il != CU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3)
        FAIL(TMAP_R_INTERLEAVE_RANK, "tensorRank=%u: %s needs tensorRank >= 3", rank,
             tmap_interleave_name(il));

    /* Global address alignment. */
    const uint64_t a = p->global_address;
    if (ON(TMAP_R_ADDR_ALIGN_16) && a % 16)
        FAIL(TMAP_R_ADDR_ALIGN_16, "globalAddress=0x%" PRIx64 ": must be 16-byte aligned", a);
    if (ON(TMAP_R_ADDR_ALIGN_32_INTERLEAVE) && il == CU_TENSOR_MAP_INTERLEAVE_32B && a % 32)
        FAIL(TMAP_R_ADDR_ALIGN_32_INTERLEAVE,
             "globalAddress=0x%" PRIx64 ": must be 32-byte aligned with INTERLEAVE_32B", a);
    if (ON(TMAP_R_ADDR_ALIGN_32_PACKED) && is_packed16b(t) && a % 32)
        FAIL(TMAP_R_ADDR_ALIGN_32_PACKED, "globalAddress=0x%" PRIx64 ": must be 32-byte aligned with %s",
             a, tmap_data_type_name(t));

    /* globalDim. */
    for (unsigned i = 0; i < rank; i++)
        if (ON(TMAP_R_DIM_RANGE) && (p->global_dim[i] == 0 || p->global_dim[i] > (1ull << 32)))
            FAIL(TMAP_R_DIM_RANGE, "globalDim[%u]=%" PRIu64 ": must be 1..2^32", i, p->global_dim[i]);
    if (ON(TMAP_R_DIM0_PACKED16_MULT128) && is_packed16b(t) && p->global_dim[0] % 128)
        FAIL(TMAP_R_DIM0_PACKED16_MULT128, "globalDim[0]=%" PRIu64 ": must be a multiple of 128 with %s",
             p->global_dim[0], tmap_data_type_name(t));
    if (ON(TMAP_R_DIM0_U4ALIGN8_MULT2) && t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && p->global_dim[0] % 2)
        FAIL(TMAP_R_DIM0_U4ALIGN8_MULT2, "globalDim[0]=%" PRIu64 ": must be a multiple of 2 with 16U4_ALIGN8B",
             p->global_dim[0]);

    /* globalStrides: rank-1 entries, bytes. */
    for (unsigned i = 0; i + 1 < rank; i++) {
        const uint64_t s = p->global_strides[i];
        if (ON(TMAP_R_STRIDE_MULT16) && s % 16)
            FAIL(TMAP_R_STRIDE_MULT16, "globalStrides[%u]=%" PRIu64 ": must be a multiple of 16 bytes", i, s);
        if (ON(TMAP_R_STRIDE_MAX) && s >= (1ull << 40))
            FAIL(TMAP_R_STRIDE_MAX, "globalStrides[%u]=%" PRIu64 ": must be less than 2^40", i, s);
        if (ON(TMAP_R_STRIDE_MULT32_INTERLEAVE) && il == CU_TENSOR_MAP_INTERLEAVE_32B && s % 32)
            FAIL(TMAP_R_STRIDE_MULT32_INTERLEAVE,
                 "globalStrides[%u]=%" PRIu64 ": must be a multiple of 32 with INTERLEAVE_32B", i, s);
        if (ON(TMAP_R_STRIDE_MULT32_PACKED) && is_packed16b(t) && s % 32)
            FAIL(TMAP_R_STRIDE_MULT32_PACKED, "globalStrides[%u]=%" PRIu64 ": must be a multiple of 32 with %s",
                 i, s, tmap_data_type_name(t));
    }

    /* boxDim. */
    const size_t bits = tmap_elem_bits(t);
    for (unsigned i = 0; i < rank; i++)
        if (ON(TMAP_R_BOX_RANGE) && (p->box_dim[i] == 0 || p->box_dim[i] > 256))
            FAIL(TMAP_R_BOX_RANGE, "boxDim[%u]=%u: must be 1..256", i, p->box_dim[i]);
    const uint64_t inner_bits = (uint64_t)p->box_dim[0] * bits;
    if (ON(TMAP_R_BOX_INNER_MULT16) && inner_bits % 128)
        FAIL(TMAP_R_BOX_INNER_MULT16,
             "boxDim[0]=%u: inner box of %" PRIu64 " bits (%s) must be a multiple of 16 bytes", p->box_dim[0],
             inner_bits, tmap_data_type_name(t));
    if (ON(TMAP_R_BOX_TOTAL_BYTES)) {
        uint64_t box_bits = bits;
        for (unsigned i = 0; i < rank; i++) box_bits *= p->box_dim[i];
        if (box_bits / 8 > TMAP_BOX_MAX_BYTES)
            FAIL(TMAP_R_BOX_TOTAL_BYTES, "boxDim: a box of %" PRIu64 " bytes exceeds %u bytes (undocumented driver limit)",
                 box_bits / 8, (unsigned)TMAP_BOX_MAX_BYTES);
    }
    if (ON(TMAP_R_BOX0_PACKED16_128) && is_packed16b(t) && p->box_dim[0] != 128)
        FAIL(TMAP_R_BOX0_PACKED16_128, "boxDim[0]=%u: must be 128 with %s", p->box_dim[0], tmap_data_type_name(t));

    /* elementStrides. Entry [0] without interleave has its own id: cuda.h lists it under "must be
     * non-zero and less than or equal to 8" and also says it is ignored. */
    for (unsigned i = 0; i < rank; i++) {
        const int r = (i == 0 && il == CU_TENSOR_MAP_INTERLEAVE_NONE) ? TMAP_R_ELEM_STRIDE0_RANGE
                                                                       : TMAP_R_ELEM_STRIDE_RANGE;
        if (ON(r) && (p->element_strides[i] == 0 || p->element_strides[i] > 8))
            FAIL(r, "elementStrides[%u]=%u: must be 1..8", i, p->element_strides[i]);
    }

    /* Interleave and swizzle. */
    if (ON(TMAP_R_INTERLEAVE32_SWIZZLE32) && il == CU_TENSOR_MAP_INTERLEAVE_32B && sw != CU_TENSOR_MAP_SWIZZLE_32B)
        FAIL(TMAP_R_INTERLEAVE32_SWIZZLE32, "swizzle=%s: INTERLEAVE_32B needs SWIZZLE_32B", tmap_swizzle_name(sw));
    const unsigned span = swizzle_span(sw);
    if (ON(TMAP_R_SWIZZLE_SPAN) && il == CU_TENSOR_MAP_INTERLEAVE_NONE && span && inner_bits > 8ull * span)
        FAIL(TMAP_R_SWIZZLE_SPAN, "boxDim[0]=%u: inner box of %" PRIu64 " bytes is wider than the %u-byte span of %s",
             p->box_dim[0], inner_bits / 8, span, tmap_swizzle_name(sw));
    if (ON(TMAP_R_U6_INTERLEAVE_NONE) && t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B &&
        il != CU_TENSOR_MAP_INTERLEAVE_NONE)
        FAIL(TMAP_R_U6_INTERLEAVE_NONE, "interleave=%s: 16U6_ALIGN16B needs INTERLEAVE_NONE", tmap_interleave_name(il));
    /* 128B_ATOM_64B is "store only" for 16U6: the encoder cannot know the direction, so it is
     * accepted here. */
    if (ON(TMAP_R_U6_SWIZZLE) && t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B &&
        !(sw == CU_TENSOR_MAP_SWIZZLE_NONE || sw == CU_TENSOR_MAP_SWIZZLE_128B ||
          sw == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B || sw == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B))
        FAIL(TMAP_R_U6_SWIZZLE, "swizzle=%s: not supported with 16U6_ALIGN16B", tmap_swizzle_name(sw));
    if (ON(TMAP_R_U4ALIGN16_SWIZZLE) && t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B &&
        !(sw == CU_TENSOR_MAP_SWIZZLE_NONE || sw == CU_TENSOR_MAP_SWIZZLE_128B ||
          sw == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B))
        FAIL(TMAP_R_U4ALIGN16_SWIZZLE, "swizzle=%s: not supported with 16U4_ALIGN16B", tmap_swizzle_name(sw));

    /* OOB fill. */
    if (ON(TMAP_R_OOB_NAN_FLOAT_ONLY) && p->oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
        !tmap_is_float(t))
        FAIL(TMAP_R_OOB_NAN_FLOAT_ONLY, "oobFill=NAN_REQUEST_ZERO_FMA: needs a floating-point, non-packed type, not %s",
             tmap_data_type_name(t));

    /* Hardware generation: kept apart from the documented rules so the H200 run can refute them
     * one by one. */
    if (ON(TMAP_R_SWIZZLE_ATOM_CC10) && cc_major > 0 && cc_major < 10 && is_atom_swizzle(sw))
        FAIL(TMAP_R_SWIZZLE_ATOM_CC10, "swizzle=%s: needs compute capability >= 10 (this GPU: %d)",
             tmap_swizzle_name(sw), cc_major);
    if (ON(TMAP_R_PACKED_CC10) && cc_major > 0 && cc_major < 10 && tmap_is_packed(t))
        FAIL(TMAP_R_PACKED_CC10, "tensorDataType=%s: needs compute capability >= 10 (this GPU: %d)",
             tmap_data_type_name(t), cc_major);

    /* Uncertain stride rules: the cuda.h padding pseudo-code and the zero stride. */
    for (unsigned i = 0; i + 1 < rank; i++)
        if (ON(TMAP_R_STRIDE_NONZERO) && p->global_strides[i] == 0)
            FAIL(TMAP_R_STRIDE_NONZERO, "globalStrides[%u]=0: must be non-zero", i);
    if (rank >= 2 && ON(TMAP_R_STRIDE0_COVERS_DIM0)) {
        /* Bits, so the packed types need no rounding; a dim too large to count in bits cannot be
         * covered by any stride. */
        const uint64_t d0 = p->global_dim[0], s0 = p->global_strides[0];
        const int covered = d0 <= UINT64_MAX / 64 && s0 <= UINT64_MAX / 8 ? 8 * s0 >= d0 * bits : 0;
        if (!covered)
            FAIL(TMAP_R_STRIDE0_COVERS_DIM0, "globalStrides[0]=%" PRIu64 ": smaller than globalDim[0]*elemsize = %"
                 PRIu64 " bytes (padding model)", s0, (d0 * bits + 7) / 8);
    }
    for (unsigned i = 1; i + 1 < rank; i++) {
        /* s[i] < s[i-1]*d[i] written as a division so nothing overflows. */
        const uint64_t prev = p->global_strides[i - 1], d = p->global_dim[i], s = p->global_strides[i];
        if (ON(TMAP_R_STRIDE_PADDING_MODEL) && prev && d > s / prev)
            FAIL(TMAP_R_STRIDE_PADDING_MODEL,
                 "globalStrides[%u]=%" PRIu64 ": smaller than globalStrides[%u]*globalDim[%u] (padding model)", i, s,
                 i - 1, i);
    }
    if (ON(TMAP_R_ELEM_STRIDE0_ONE) && il == CU_TENSOR_MAP_INTERLEAVE_NONE && p->element_strides[0] != 1)
        FAIL(TMAP_R_ELEM_STRIDE0_ONE, "elementStrides[0]=%u: must be 1 without interleave", p->element_strides[0]);
    return TMAP_OK;
}

int tmap_check(const tmap_params *p, int cc_major, char *msg, size_t len)
{
    return tmap_check_rules(p, cc_major, tmap_default_rules(), msg, len);
}

void tmap_format_params(const tmap_params *p, char *buf, size_t len)
{
    size_t used = 0;
#define PUT(...)                                                                              \
    do {                                                                                      \
        if (used < len) used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__);        \
    } while (0)
    unsigned n = p->rank <= 5 ? p->rank : 5;
    if (len) buf[0] = '\0';
    PUT("type=%s(%d) rank=%u addr=+%" PRIu64 " dim={", tmap_data_type_name(p->data_type), p->data_type, p->rank,
        p->global_address);
    for (unsigned i = 0; i < n; i++) PUT("%s%" PRIu64, i ? "," : "", p->global_dim[i]);
    PUT("} stride={");
    for (unsigned i = 0; i + 1 < n; i++) PUT("%s%" PRIu64, i ? "," : "", p->global_strides[i]);
    PUT("} box={");
    for (unsigned i = 0; i < n; i++) PUT("%s%u", i ? "," : "", p->box_dim[i]);
    PUT("} estride={");
    for (unsigned i = 0; i < n; i++) PUT("%s%u", i ? "," : "", p->element_strides[i]);
    PUT("} %s %s l2=%d oob=%d", tmap_interleave_name(p->interleave), tmap_swizzle_name(p->swizzle), p->l2_promotion,
        p->oob_fill);
#undef PUT
}
