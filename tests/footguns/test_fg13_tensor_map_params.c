/* FG13 — cuTensorMapEncodeTiled parameter format.
 *
 * Symptom: cuTensorMapEncodeTiled returns CUDA_ERROR_INVALID_VALUE (1) for a 2-D+ map, or worse,
 *          succeeds and the kernel reads the wrong rows. Seen on an H200 (driver 580.159): a
 *          correct 2-D bf16 map encodes; a 100-byte stride and a 256-byte inner box with 128 B
 *          swizzle both return 1.
 * Cause:   the parameter format. globalStrides has rank-1 entries in bytes (dimension 0's stride is
 *          implicit); dimension 0 is the innermost one; every stride is a multiple of 16; with a
 *          swizzle the inner box (boxDim[0] * element size) must fit in the swizzle span. Passing
 *          rank strides shifts them all (globalStrides[0] becomes the element size, 2), strides in
 *          elements pass validation when they happen to be multiples of 16 and address rows at
 *          half the right pitch, an odd row pitch is refused, a 128-column bf16 box is 256 bytes
 *          wide against a 128-byte span.
 * Fix:     bf16 [rows][cols] row-major: globalDim {cols, rows}, globalStrides {cols*2},
 *          boxDim {64, rows_box}, SWIZZLE_128B; a 128-wide head dim takes two boxes, one per
 *          128-byte atom.
 * Stage:   E
 * Levels:  emu = the checker (common/model/tmap_check.c, this file); sm90 = the driver, run in
 *          tests/gpu/test_tmap_conformance.c; sm100 compiled only, no analogue to run here.
 * Notes:   notes/footguns.md#fg13 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "model/tmap_check.h"

#define BF16_BYTES 2u

/* The map as the FIXED recipe builds it for a row-major bf16 [rows][cols] tensor. */
static tmap_params fixed_rowmajor_bf16(uint64_t rows, uint64_t cols, uint32_t rows_box)
{
    tmap_params p;
    memset(&p, 0, sizeof p);
    p.data_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    p.rank = 2;
    p.global_address = 0x7f0000000000ull; /* cudaMalloc alignment */
    p.global_dim[0] = cols;               /* innermost first */
    p.global_dim[1] = rows;
    p.global_strides[0] = cols * BF16_BYTES; /* rank-1 entries, bytes */
    p.box_dim[0] = 64;                       /* 128 bytes: one 128B swizzle atom */
    p.box_dim[1] = rows_box;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    return p;
}

/* Byte offset of element (row, col) that TMA computes from a 2-D map. */
static uint64_t tma_byte_offset(const tmap_params *p, uint64_t row, uint64_t col)
{
    return row * p->global_strides[0] + col * tmap_elem_bits(p->data_type) / 8;
}

/* Checks p at CC 9 and prints "FG13 broken (<variant>, checker): <rule>: <message>". */
static void expect_rule(const char *variant, const tmap_params *p, int rule, const char *must_mention)
{
    char msg[256];
    int r = tmap_check(p, 9, msg, sizeof msg);
    fprintf(stderr, "FG13 broken (%s, checker): %s: %s\n", variant, tmap_rule_name(r), msg);
    cr_expect_eq(r, rule, "expected %s, got %s (%s)", tmap_rule_name(rule), tmap_rule_name(r), msg);
    cr_expect(strstr(msg, must_mention) != NULL, "message \"%s\" should name %s", msg, must_mention);
}

Test(fg13, wrong_rank_strides_shift_everything)
{
    /* The rank-entry habit from row-major libraries: {elem, row pitch} for a 2-D tensor. The
     * driver reads only rank-1 entries, so the row pitch it sees is the element size. */
    const uint64_t cols = 64;
    tmap_params p = fixed_rowmajor_bf16(128, cols, 64);
    const uint64_t rank_strides[2] = {BF16_BYTES, cols * BF16_BYTES};
    p.global_strides[0] = rank_strides[0];
    p.global_strides[1] = rank_strides[1]; /* never read */
    expect_rule("rank strides {2, 128} for 2-D", &p, TMAP_R_STRIDE_MULT16, "globalStrides[0]=2");

    /* Rank 3 shifts the same way: every stride is one dimension off. */
    tmap_params q = p;
    q.rank = 3;
    q.global_dim[2] = 4;
    q.box_dim[2] = 1;
    q.element_strides[2] = 1;
    q.global_strides[0] = BF16_BYTES, q.global_strides[1] = cols * BF16_BYTES;
    q.global_strides[2] = cols * 128 * BF16_BYTES;
    expect_rule("rank strides {2, 128, 16384} for 3-D", &q, TMAP_R_STRIDE_MULT16, "globalStrides[0]=2");
}

Test(fg13, wrong_strides_in_elements_pass_and_read_wrong_rows)
{
    /* cols = 64: a pitch of 64 "elements" is a multiple of 16, so nothing refuses it. */
    const uint64_t rows = 128, cols = 64;
    tmap_params right = fixed_rowmajor_bf16(rows, cols, 64);
    tmap_params wrong = right;
    wrong.global_strides[0] = cols; /* elements, not bytes */
    char msg[256];
    const int rule = tmap_check(&wrong, 9, msg, sizeof msg);
    cr_expect_eq(rule, TMAP_OK, "the dangerous case: the checker (and the driver) accept it: %s", msg);
    /* The silent damage: element (r, 0) is read from the bytes of row r/2. */
    unsigned misread = 0, from_half = 0;
    for (uint64_t r = 1; r < rows; r++) {
        uint64_t got = tma_byte_offset(&wrong, r, 0), want = tma_byte_offset(&right, r, 0);
        misread += got != want;
        from_half += got == tma_byte_offset(&right, r / 2, (r % 2) * cols / 2);
        cr_expect_neq(got, want, "row %llu", (unsigned long long)r);
        cr_expect_eq(got, tma_byte_offset(&right, r / 2, (r % 2) * cols / 2), "row %llu is read from row %llu",
                     (unsigned long long)r, (unsigned long long)(r / 2));
    }
    const int row0_right = tma_byte_offset(&wrong, 0, 0) == tma_byte_offset(&right, 0, 0);
    fprintf(stderr, "FG13 broken (row pitch %llu in elements, checker): says %s; rows 1-%llu: %u of %llu at a wrong "
            "address, %u of them in row r/2; row 0 %s\n", (unsigned long long)cols, tmap_rule_name(rule),
            (unsigned long long)(rows - 1), misread, (unsigned long long)(rows - 1), from_half,
            row0_right ? "right" : "wrong");
    cr_expect(row0_right, "row 0 hides the bug");
}

Test(fg13, wrong_stride_not_multiple_of_16)
{
    /* The 100-byte stride seen on the H200, and an odd head dim (d = 50: 100-byte rows). */
    tmap_params p = fixed_rowmajor_bf16(128, 64, 64);
    p.global_strides[0] = 100;
    char msg[256];
    const int rule = tmap_check(&p, 9, msg, sizeof msg);
    fprintf(stderr, "FG13 broken (100-byte row pitch, checker): %s: %s\n", tmap_rule_name(rule), msg);
    cr_expect_eq(rule, TMAP_R_STRIDE_MULT16);
    cr_expect_str_eq(msg, "globalStrides[0]=100: must be a multiple of 16 bytes");
    tmap_params d50 = fixed_rowmajor_bf16(128, 50, 64);
    d50.box_dim[0] = 32; /* keep the inner box legal so the stride is the only fault */
    expect_rule("d = 50, 100-byte rows", &d50, TMAP_R_STRIDE_MULT16, "globalStrides[0]=100");
}

Test(fg13, wrong_box_wider_than_swizzle_span)
{
    /* d = 128 loaded as one box: 128 bf16 columns = 256 bytes against the 128-byte span. */
    tmap_params p = fixed_rowmajor_bf16(128, 128, 64);
    p.box_dim[0] = 128;
    expect_rule("d = 128 as one 256-byte box, 128B swizzle", &p, TMAP_R_SWIZZLE_SPAN, "256 bytes");
}

Test(fg13, fixed_rowmajor_bf16_map_passes)
{
    const uint64_t cols[] = {64, 128, 256, 512};
    const uint32_t rows_box[] = {1, 64, 128, 256};
    int maps = 0, passed = 0;
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        for (size_t j = 0; j < sizeof rows_box / sizeof rows_box[0]; j++) {
            tmap_params p = fixed_rowmajor_bf16(4096, cols[i], rows_box[j]);
            char msg[256];
            const int r9 = tmap_check(&p, 9, msg, sizeof msg);
            cr_expect_eq(r9, TMAP_OK, "cols %llu rows_box %u: %s", (unsigned long long)cols[i], rows_box[j], msg);
            const int r10 = tmap_check(&p, 10, msg, sizeof msg);
            cr_expect_eq(r10, TMAP_OK, "CC 10: %s", msg);
            maps += 2;
            passed += (r9 == TMAP_OK) + (r10 == TMAP_OK);
        }
    /* The FG13 correct map itself: dims {64,128}, stride {128}, box {64,64}. */
    tmap_params fg = fixed_rowmajor_bf16(128, 64, 64);
    const int rfg = tmap_check(&fg, 9, NULL, 0);
    fprintf(stderr, "FG13 fixed (row-major bf16 recipe, checker): %d of %d maps ok (cols 64-512, box rows 1-256, "
            "CC 9 and 10); dims {%llu,%llu} stride {%llu}: %s\n", passed, maps,
            (unsigned long long)fg.global_dim[0], (unsigned long long)fg.global_dim[1],
            (unsigned long long)fg.global_strides[0], tmap_rule_name(rfg));
    cr_expect_eq(fg.global_dim[0], 64);
    cr_expect_eq(fg.global_strides[0], 128);
    cr_expect_eq(rfg, TMAP_OK);
}

Test(fg13, fixed_wide_head_dim_takes_one_box_per_atom)
{
    /* d = 128: the same map, two boxes at column 0 and 64; the second starts 128 bytes in, which is
     * the second-atom offset the shared-memory descriptor has to know. */
    tmap_params p = fixed_rowmajor_bf16(1024, 128, 128);
    const int rule = tmap_check(&p, 9, NULL, 0);
    const uint64_t inner_bytes = p.box_dim[0] * tmap_elem_bits(p.data_type) / 8;
    const uint64_t second_box = tma_byte_offset(&p, 0, 64) - tma_byte_offset(&p, 0, 0);
    const uint64_t pitch = tma_byte_offset(&p, 1, 0);
    fprintf(stderr, "FG13 fixed (d = 128 as two 64-column boxes, checker): %s; inner box %llu bytes, second box at "
            "+%llu bytes, row pitch %llu bytes\n", tmap_rule_name(rule), (unsigned long long)inner_bytes,
            (unsigned long long)second_box, (unsigned long long)pitch);
    cr_expect_eq(rule, TMAP_OK);
    cr_expect_eq(inner_bytes, 128);
    cr_expect_eq(second_box, inner_bytes);
    cr_expect_eq(pitch, 256, "row pitch is cols*2 bytes");
}
