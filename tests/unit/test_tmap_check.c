/* tmap_check: one known-answer test per rule (a set that breaks only that rule gets its id, the
 * minimally fixed set passes), the FG13 cases, the messages, and the conformance grid's shape. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "model/tmap_check.h"
#include "tmap_grid.h"

/* The FG13 correct map: bf16 [128 rows][64 cols], one 64x64 box, 128-byte swizzle. */
static tmap_params good2d(void)
{
    tmap_params p;
    memset(&p, 0, sizeof p);
    p.data_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    p.rank = 2;
    p.global_address = 0x10000;
    p.global_dim[0] = 64, p.global_dim[1] = 128;
    p.global_strides[0] = 128;
    p.box_dim[0] = 64, p.box_dim[1] = 64;
    p.element_strides[0] = 1, p.element_strides[1] = 1;
    p.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    return p;
}

/* A rank-3 bf16 map with a 32-byte inner slice: legal with every interleave mode. */
static tmap_params good3d(void)
{
    tmap_params p = good2d();
    p.rank = 3;
    p.global_dim[0] = 16, p.global_dim[1] = 32, p.global_dim[2] = 8;
    p.global_strides[0] = 32, p.global_strides[1] = 1024;
    p.box_dim[0] = 16, p.box_dim[1] = 8, p.box_dim[2] = 2;
    p.element_strides[2] = 1;
    p.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    return p;
}

/* A packed ALIGN16B map: 32-byte aligned, dim0 and box0 128, strides multiples of 32. */
static tmap_params good_packed(int t)
{
    tmap_params p = good2d();
    p.data_type = t;
    p.global_dim[0] = 256;
    p.global_strides[0] = 256;
    p.box_dim[0] = 128;
    p.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    return p;
}

static void expect_rule_rules(const tmap_params *bad, const tmap_params *fixed, int rule, int cc, uint64_t rules)
{
    char msg[256];
    int r = tmap_check_rules(bad, cc, rules, msg, sizeof msg);
    cr_expect_eq(r, rule, "expected %s, got %s (%s)", tmap_rule_name(rule), tmap_rule_name(r), msg);
    cr_expect(strlen(msg) > 0, "a broken rule must come with a message");
    r = tmap_check_rules(fixed, cc, rules, msg, sizeof msg);
    cr_expect_eq(r, TMAP_OK, "fixed set still breaks %s: %s", tmap_rule_name(r), msg);
}

static void expect_rule(const tmap_params *bad, const tmap_params *fixed, int rule)
{
    expect_rule_rules(bad, fixed, rule, 9, tmap_default_rules());
}

Test(tmap_check, fixtures_are_accepted)
{
    tmap_params p = good2d();
    cr_expect_eq(tmap_check(&p, 9, NULL, 0), TMAP_OK);
    p = good3d();
    cr_expect_eq(tmap_check(&p, 9, NULL, 0), TMAP_OK);
    /* packed types are Blackwell-only under the default rules: check them at CC 10 */
    p = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B);
    cr_expect_eq(tmap_check(&p, 10, NULL, 0), TMAP_OK);
    p = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B);
    cr_expect_eq(tmap_check(&p, 10, NULL, 0), TMAP_OK);
}

Test(tmap_check, data_type_enum)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.data_type = CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B + 1;
    expect_rule(&bad, &ok, TMAP_R_DATA_TYPE_ENUM);
    bad.data_type = -1;
    expect_rule(&bad, &ok, TMAP_R_DATA_TYPE_ENUM);
}

Test(tmap_check, interleave_enum)
{
    tmap_params bad = good3d(), ok = good3d();
    bad.interleave = CU_TENSOR_MAP_INTERLEAVE_32B + 1;
    ok.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    expect_rule(&bad, &ok, TMAP_R_INTERLEAVE_ENUM);
}

Test(tmap_check, swizzle_enum)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B + 1;
    expect_rule(&bad, &ok, TMAP_R_SWIZZLE_ENUM);
    bad.swizzle = -1;
    expect_rule(&bad, &ok, TMAP_R_SWIZZLE_ENUM);
}

Test(tmap_check, l2_promotion_enum)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B + 1;
    ok.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    expect_rule(&bad, &ok, TMAP_R_L2_PROMOTION_ENUM);
}

Test(tmap_check, oob_fill_enum)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA + 1;
    ok.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    expect_rule(&bad, &ok, TMAP_R_OOB_FILL_ENUM);
}

Test(tmap_check, rank_1_to_5)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.rank = 0;
    expect_rule(&bad, &ok, TMAP_R_RANK_RANGE);
    bad.rank = 6;
    expect_rule(&bad, &ok, TMAP_R_RANK_RANGE);
    ok.rank = 1;
    expect_rule(&bad, &ok, TMAP_R_RANK_RANGE);
}

Test(tmap_check, interleave_needs_rank_3)
{
    tmap_params bad = good3d(), ok = good3d();
    bad.interleave = ok.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    bad.rank = 2;
    expect_rule(&bad, &ok, TMAP_R_INTERLEAVE_RANK);
}

Test(tmap_check, address_align_16)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.global_address += 8;
    ok.global_address += 16;
    expect_rule(&bad, &ok, TMAP_R_ADDR_ALIGN_16);
}

Test(tmap_check, address_align_32_interleave32)
{
    tmap_params bad = good3d(), ok = good3d();
    bad.interleave = ok.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    bad.swizzle = ok.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    bad.global_address += 16;
    ok.global_address += 32;
    expect_rule(&bad, &ok, TMAP_R_ADDR_ALIGN_32_INTERLEAVE);
    /* 16 bytes is enough with INTERLEAVE_16B */
    bad.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    bad.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    cr_expect_eq(tmap_check(&bad, 9, NULL, 0), TMAP_OK);
}

Test(tmap_check, address_align_32_packed16b)
{
    tmap_params bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B), ok = bad;
    bad.global_address += 16;
    expect_rule_rules(&bad, &ok, TMAP_R_ADDR_ALIGN_32_PACKED, 10, tmap_default_rules());
    bad.data_type = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B; /* ALIGN8B: 16 bytes is enough */
    cr_expect_eq(tmap_check(&bad, 10, NULL, 0), TMAP_OK);
}

Test(tmap_check, global_dim_1_to_2p32)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.global_dim[1] = 0;
    expect_rule(&bad, &ok, TMAP_R_DIM_RANGE);
    bad.global_dim[1] = (1ull << 32) + 1;
    ok.global_dim[1] = 1ull << 32;
    expect_rule(&bad, &ok, TMAP_R_DIM_RANGE);
}

Test(tmap_check, packed16b_dim0_multiple_128)
{
    tmap_params bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B), ok = bad;
    bad.global_dim[0] = 192;
    ok.global_dim[0] = 128;
    expect_rule_rules(&bad, &ok, TMAP_R_DIM0_PACKED16_MULT128, 10, tmap_default_rules());
}

Test(tmap_check, u4align8b_dim0_multiple_2)
{
    tmap_params bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B), ok = bad;
    bad.global_dim[0] = 255;
    ok.global_dim[0] = 254;
    expect_rule_rules(&bad, &ok, TMAP_R_DIM0_U4ALIGN8_MULT2, 10, tmap_default_rules());
}

Test(tmap_check, stride_multiple_16)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.global_strides[0] = 136;
    ok.global_strides[0] = 144;
    expect_rule(&bad, &ok, TMAP_R_STRIDE_MULT16);
    /* the last of rank-1 entries counts, entries past it do not */
    bad = good3d();
    bad.global_strides[1] = 1000;
    ok = good3d();
    ok.global_strides[2] = 1000;
    expect_rule(&bad, &ok, TMAP_R_STRIDE_MULT16);
}

Test(tmap_check, stride_below_2p40)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.global_strides[0] = 1ull << 40;
    ok.global_strides[0] = (1ull << 40) - 16;
    expect_rule(&bad, &ok, TMAP_R_STRIDE_MAX);
}

Test(tmap_check, stride_multiple_32_interleave32)
{
    tmap_params bad = good3d(), ok = good3d();
    bad.interleave = ok.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    bad.swizzle = ok.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    bad.global_strides[0] = 48;
    ok.global_strides[0] = 64;
    expect_rule(&bad, &ok, TMAP_R_STRIDE_MULT32_INTERLEAVE);
}

Test(tmap_check, stride_multiple_32_packed16b)
{
    tmap_params bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B), ok = bad;
    bad.global_strides[0] = 272;
    ok.global_strides[0] = 288;
    expect_rule_rules(&bad, &ok, TMAP_R_STRIDE_MULT32_PACKED, 10, tmap_default_rules());
}

Test(tmap_check, box_dim_1_to_256)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.box_dim[1] = 0;
    expect_rule(&bad, &ok, TMAP_R_BOX_RANGE);
    bad.box_dim[1] = 257;
    ok.box_dim[1] = 256;
    expect_rule(&bad, &ok, TMAP_R_BOX_RANGE);
}

Test(tmap_check, box_inner_bytes_multiple_16)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.box_dim[0] = 12; /* 24 bytes */
    ok.box_dim[0] = 16;
    expect_rule(&bad, &ok, TMAP_R_BOX_INNER_MULT16);
    /* with interleave too: see box_inner_bytes_multiple_16_with_interleave */
    /* 4-bit elements: 16 of them are 8 bytes */
    bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B);
    ok = bad;
    bad.box_dim[0] = 16;
    ok.box_dim[0] = 32;
    expect_rule_rules(&bad, &ok, TMAP_R_BOX_INNER_MULT16, 10, tmap_default_rules());
}

Test(tmap_check, packed16b_box0_128)
{
    tmap_params bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B), ok = bad;
    bad.box_dim[0] = 256;
    expect_rule_rules(&bad, &ok, TMAP_R_BOX0_PACKED16_128, 10, tmap_default_rules());
}

Test(tmap_check, element_stride_1_to_8)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.element_strides[1] = 0;
    expect_rule(&bad, &ok, TMAP_R_ELEM_STRIDE_RANGE);
    bad.element_strides[1] = 9;
    ok.element_strides[1] = 8;
    expect_rule(&bad, &ok, TMAP_R_ELEM_STRIDE_RANGE);
}

Test(tmap_check, element_stride0_range_without_interleave)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.element_strides[0] = 9;
    ok.element_strides[0] = 8;
    expect_rule(&bad, &ok, TMAP_R_ELEM_STRIDE0_RANGE);
    cr_expect(tmap_rule_uncertain(TMAP_R_ELEM_STRIDE0_RANGE));
    /* with interleave, entry 0 is a real stride and falls under the certain rule */
    bad = good3d();
    bad.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    bad.element_strides[0] = 0;
    cr_expect_eq(tmap_check(&bad, 9, NULL, 0), TMAP_R_ELEM_STRIDE_RANGE);
}

Test(tmap_check, interleave32_needs_swizzle32_documented_but_off)
{
    tmap_params bad = good3d(), ok = good3d();
    bad.interleave = ok.interleave = CU_TENSOR_MAP_INTERLEAVE_32B;
    bad.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    ok.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    expect_rule_rules(&bad, &ok, TMAP_R_INTERLEAVE32_SWIZZLE32, 9, TMAP_RULES_ALL);
    /* the H200 driver encodes it: the default rule set must accept it too */
    cr_expect_eq(tmap_check(&bad, 9, NULL, 0), TMAP_OK);
}

Test(tmap_check, box_inner_bytes_multiple_16_with_interleave)
{
    tmap_params bad = good3d(), ok = good3d();
    bad.interleave = ok.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    bad.box_dim[0] = 4; /* 8 bytes: refused by the H200 driver although cuda.h names only NONE */
    ok.box_dim[0] = 8;
    expect_rule(&bad, &ok, TMAP_R_BOX_INNER_MULT16);
}

Test(tmap_check, box_total_bytes_limit)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.rank = ok.rank = 3;
    bad.global_dim[2] = ok.global_dim[2] = 256;
    bad.global_strides[1] = ok.global_strides[1] = 128 * 128;
    bad.element_strides[2] = ok.element_strides[2] = 1;
    ok.box_dim[1] = 128, ok.box_dim[2] = 14;  /* 64*128*14*2 = 224 KiB: accepted on the H200 */
    bad.box_dim[1] = 128, bad.box_dim[2] = 15; /* 240 KiB: refused */
    expect_rule(&bad, &ok, TMAP_R_BOX_TOTAL_BYTES);
}

Test(tmap_check, box_inner_bytes_within_swizzle_span)
{
    const int sw[3] = {CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};
    const uint32_t span[3] = {32, 64, 128};
    for (int i = 0; i < 3; i++) {
        tmap_params bad = good2d(), ok = good2d();
        bad.swizzle = ok.swizzle = sw[i];
        bad.global_dim[0] = ok.global_dim[0] = 256;
        bad.global_strides[0] = ok.global_strides[0] = 512;
        bad.box_dim[0] = span[i] / 2 + 8; /* bf16: span + 16 bytes */
        ok.box_dim[0] = span[i] / 2;
        expect_rule(&bad, &ok, TMAP_R_SWIZZLE_SPAN);
    }
    /* the ATOM modes have the 128-byte span too */
    tmap_params bad = good2d(), ok = good2d();
    bad.swizzle = ok.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
    bad.box_dim[0] = 72;
    expect_rule_rules(&bad, &ok, TMAP_R_SWIZZLE_SPAN, 10, tmap_default_rules());
}

Test(tmap_check, u6_needs_interleave_none)
{
    tmap_params bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B), ok = bad;
    bad.rank = ok.rank = 3;
    bad.global_dim[2] = ok.global_dim[2] = 2;
    bad.global_strides[1] = ok.global_strides[1] = 256 * 128;
    bad.box_dim[2] = ok.box_dim[2] = 1;
    bad.element_strides[2] = ok.element_strides[2] = 1;
    bad.interleave = CU_TENSOR_MAP_INTERLEAVE_16B;
    expect_rule_rules(&bad, &ok, TMAP_R_U6_INTERLEAVE_NONE, 10, tmap_default_rules());
}

Test(tmap_check, u6_swizzle_mode)
{
    tmap_params bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B), ok = bad;
    bad.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B;
    ok.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B; /* "store only": accepted at encode time */
    expect_rule_rules(&bad, &ok, TMAP_R_U6_SWIZZLE, 10, tmap_default_rules());
}

Test(tmap_check, u4align16b_swizzle_mode)
{
    tmap_params bad = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B), ok = bad;
    bad.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B;
    ok.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B;
    expect_rule_rules(&bad, &ok, TMAP_R_U4ALIGN16_SWIZZLE, 10, tmap_default_rules());
}

Test(tmap_check, nan_fill_float_only)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.oob_fill = ok.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    bad.data_type = CU_TENSOR_MAP_DATA_TYPE_INT32;
    bad.box_dim[0] = 32; /* keep 128 bytes inner */
    expect_rule(&bad, &ok, TMAP_R_OOB_NAN_FLOAT_ONLY);
    tmap_params packed = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B);
    packed.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    cr_expect_eq(tmap_check(&packed, 10, NULL, 0), TMAP_R_OOB_NAN_FLOAT_ONLY);
    /* every non-packed float type is allowed */
    const int f[] = {CU_TENSOR_MAP_DATA_TYPE_FLOAT16,     CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                     CU_TENSOR_MAP_DATA_TYPE_FLOAT64,     CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                     CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
                     CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        tmap_params p = good2d();
        p.data_type = f[i];
        p.box_dim[0] = (uint32_t)(1024 / tmap_elem_bits(f[i])); /* 128 bytes */
        p.global_strides[0] = 1024;
        p.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
        cr_expect_eq(tmap_check(&p, 9, NULL, 0), TMAP_OK, "%s", tmap_data_type_name(f[i]));
    }
}

Test(tmap_check, swizzle_128b_atom_needs_cc10)
{
    tmap_params p = good2d();
    p.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B;
    cr_expect_eq(tmap_check(&p, 9, NULL, 0), TMAP_R_SWIZZLE_ATOM_CC10);
    cr_expect_eq(tmap_check(&p, 10, NULL, 0), TMAP_OK);
    cr_expect_eq(tmap_check(&p, 0, NULL, 0), TMAP_OK, "an unknown GPU skips the CC-gated rules");
    cr_expect(tmap_rule_uncertain(TMAP_R_SWIZZLE_ATOM_CC10));
}

Test(tmap_check, packed_type_needs_cc10)
{
    tmap_params p = good_packed(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B);
    cr_expect_eq(tmap_check(&p, 9, NULL, 0), TMAP_R_PACKED_CC10);
    cr_expect_eq(tmap_check(&p, 10, NULL, 0), TMAP_OK);
    cr_expect(tmap_rule_uncertain(TMAP_R_PACKED_CC10));
    /* switched off, the set is judged by the documented rules alone */
    uint64_t rules = tmap_default_rules() & ~TMAP_RULE_BIT(TMAP_R_PACKED_CC10);
    cr_expect_eq(tmap_check_rules(&p, 9, rules, NULL, 0), TMAP_OK);
}

/* The uncertain stride rules are off by default (see tmap_check.c for why); enabled, each one
 * names its own violation. */
Test(tmap_check, stride_nonzero_uncertain)
{
    tmap_params bad = good3d(), ok = good3d();
    bad.global_dim[1] = 1;
    bad.global_strides[0] = 0;
    uint64_t rules = tmap_default_rules() | TMAP_RULE_BIT(TMAP_R_STRIDE_NONZERO);
    expect_rule_rules(&bad, &ok, TMAP_R_STRIDE_NONZERO, 9, rules);
    cr_expect_eq(tmap_check(&bad, 9, NULL, 0), TMAP_OK, "off by default");
}

Test(tmap_check, stride0_covers_dim0_uncertain)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.global_strides[0] = 64; /* strides in elements: half a row */
    uint64_t rules = tmap_default_rules() | TMAP_RULE_BIT(TMAP_R_STRIDE0_COVERS_DIM0);
    expect_rule_rules(&bad, &ok, TMAP_R_STRIDE0_COVERS_DIM0, 9, rules);
    cr_expect_eq(tmap_check(&bad, 9, NULL, 0), TMAP_OK, "off by default");
}

Test(tmap_check, stride_padding_model_uncertain)
{
    tmap_params bad = good3d(), ok = good3d();
    bad.global_strides[1] = 512; /* < 32 * 32 */
    uint64_t rules = tmap_default_rules() | TMAP_RULE_BIT(TMAP_R_STRIDE_PADDING_MODEL);
    expect_rule_rules(&bad, &ok, TMAP_R_STRIDE_PADDING_MODEL, 9, rules);
    cr_expect_eq(tmap_check(&bad, 9, NULL, 0), TMAP_OK, "off by default");
}

Test(tmap_check, element_stride0_one_uncertain)
{
    tmap_params bad = good2d(), ok = good2d();
    bad.element_strides[0] = 2;
    uint64_t rules = tmap_default_rules() | TMAP_RULE_BIT(TMAP_R_ELEM_STRIDE0_ONE);
    expect_rule_rules(&bad, &ok, TMAP_R_ELEM_STRIDE0_ONE, 9, rules);
    cr_expect_eq(tmap_check(&bad, 9, NULL, 0), TMAP_OK, "off by default");
}

Test(tmap_check, fg13_cases)
{
    char msg[256];
    tmap_params p = good2d();
    cr_expect_eq(tmap_check(&p, 9, msg, sizeof msg), TMAP_OK, "%s", msg);
    p.global_strides[0] = 100;
    cr_expect_eq(tmap_check(&p, 9, msg, sizeof msg), TMAP_R_STRIDE_MULT16);
    cr_expect_str_eq(msg, "globalStrides[0]=100: must be a multiple of 16 bytes");
    p = good2d();
    p.global_dim[0] = 128;
    p.global_strides[0] = 256;
    p.box_dim[0] = 128; /* 256 bytes inner */
    cr_expect_eq(tmap_check(&p, 9, msg, sizeof msg), TMAP_R_SWIZZLE_SPAN);
    cr_expect(strstr(msg, "boxDim[0]=128") && strstr(msg, "256 bytes") && strstr(msg, "SWIZZLE_128B"), "%s", msg);
}

Test(tmap_check, names_sources_and_defaults)
{
    cr_expect_str_eq(tmap_rule_name(TMAP_OK), "ok");
    cr_expect_str_eq(tmap_rule_name(TMAP_R_STRIDE_MULT16), "stride_multiple_16");
    cr_expect_str_eq(tmap_rule_name(-1), "?");
    cr_expect_str_eq(tmap_rule_name(TMAP_R_COUNT), "?");
    for (int a = 1; a < TMAP_R_COUNT; a++) {
        cr_expect(strlen(tmap_rule_name(a)) > 0 && strcmp(tmap_rule_name(a), "?") != 0, "rule %d unnamed", a);
        cr_expect(strlen(tmap_rule_source(a)) > 0, "rule %s has no source", tmap_rule_name(a));
        for (int b = a + 1; b < TMAP_R_COUNT; b++)
            cr_expect(strcmp(tmap_rule_name(a), tmap_rule_name(b)) != 0, "duplicate name %s", tmap_rule_name(a));
        if (!tmap_rule_uncertain(a))
            cr_expect(tmap_default_rules() & TMAP_RULE_BIT(a), "certain rule %s must be on", tmap_rule_name(a));
    }
    cr_expect_eq(tmap_default_rules() & TMAP_RULE_BIT(TMAP_OK), 0);
    cr_expect_eq(TMAP_RULES_ALL & TMAP_RULE_BIT(TMAP_OK), 0);
}

Test(tmap_check, element_bits)
{
    cr_expect_eq(tmap_elem_bits(CU_TENSOR_MAP_DATA_TYPE_UINT8), 8);
    cr_expect_eq(tmap_elem_bits(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16), 16);
    cr_expect_eq(tmap_elem_bits(CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ), 32);
    cr_expect_eq(tmap_elem_bits(CU_TENSOR_MAP_DATA_TYPE_INT64), 64);
    cr_expect_eq(tmap_elem_bits(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B), 4);
    cr_expect_eq(tmap_elem_bits(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B), 4);
    cr_expect_eq(tmap_elem_bits(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B), 6);
    cr_expect_eq(tmap_elem_bits(16), 0);
    cr_expect_eq(tmap_elem_bits(-1), 0);
}

Test(tmap_check, first_broken_rule_is_reported)
{
    tmap_params p = good2d();
    p.global_strides[0] = 100;
    p.box_dim[1] = 300;
    p.global_address += 4;
    cr_expect_eq(tmap_check(&p, 9, NULL, 0), TMAP_R_ADDR_ALIGN_16);
}

Test(tmap_grid, has_300_sets_accepted_and_rejected)
{
    int n = tmap_grid_cases(NULL, 0);
    cr_assert_geq(n, 300);
    tmap_grid_case *c = malloc(sizeof *c * (size_t)n);
    cr_assert(c);
    cr_assert_eq(tmap_grid_cases(c, n), n);
    int accepted = 0, rejected = 0;
    int seen[TMAP_R_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        cr_expect(c[i].label[0] != '\0', "set %d has no label", i);
        for (int j = 0; j < i; j++)
            cr_expect(strcmp(c[i].label, c[j].label) != 0, "label %s twice", c[i].label);
        int r = tmap_check(&c[i].p, 9, NULL, 0);
        if (r) rejected++;
        else accepted++;
        seen[r] = 1;
        seen[tmap_check(&c[i].p, 10, NULL, 0)] = 1;
        seen[tmap_check_rules(&c[i].p, 9, TMAP_RULES_ALL, NULL, 0)] = 1;
    }
    cr_expect_geq(accepted, 50, "%d accepted", accepted);
    cr_expect_geq(rejected, 50, "%d rejected", rejected);
    for (int r = 1; r < TMAP_R_COUNT; r++)
        cr_expect(seen[r], "no grid set exercises rule %s", tmap_rule_name(r));
    free(c);
}

Test(tmap_grid, deterministic_and_params_match_cases)
{
    int n = tmap_grid(NULL, 0);
    tmap_params *a = malloc(sizeof *a * (size_t)n), *b = malloc(sizeof *b * (size_t)n);
    tmap_grid_case *c = malloc(sizeof *c * (size_t)n);
    cr_assert(a && b && c);
    cr_assert_eq(tmap_grid(a, n), n);
    cr_assert_eq(tmap_grid(b, n), n);
    cr_assert_eq(tmap_grid_cases(c, n), n);
    cr_expect_eq(memcmp(a, b, sizeof *a * (size_t)n), 0);
    for (int i = 0; i < n; i++) cr_expect_eq(memcmp(&a[i], &c[i].p, sizeof a[i]), 0, "set %d", i);
    /* a short buffer gets the first sets and the full count */
    tmap_params few[3];
    cr_expect_eq(tmap_grid(few, 3), n);
    cr_expect_eq(memcmp(few, a, sizeof few), 0);
    free(a), free(b), free(c);
}

Test(tmap_grid, has_the_fg13_cases)
{
    int n = tmap_grid_cases(NULL, 0);
    tmap_grid_case *c = malloc(sizeof *c * (size_t)n);
    cr_assert(c);
    tmap_grid_cases(c, n);
    const char *labels[3] = {"fg13_correct_bf16_2d", "fg13_stride_100", "fg13_box128_cols_sw128"};
    const int want[3] = {TMAP_OK, TMAP_R_STRIDE_MULT16, TMAP_R_SWIZZLE_SPAN};
    for (int k = 0; k < 3; k++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(c[i].label, labels[k])) {
                found = 1;
                cr_expect_eq(tmap_check(&c[i].p, 9, NULL, 0), want[k], "%s", labels[k]);
            }
        cr_expect(found, "%s missing from the grid", labels[k]);
    }
    free(c);
}
