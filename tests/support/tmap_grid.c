/* The tensor-map parameter grid (tmap_grid.h). Each family starts from a set the documentation
 * accepts and changes one thing, so a driver/checker disagreement points at one rule; a seeded
 * fuzz family at the end mixes changes to reach rule interactions. */
#include "tmap_grid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_U8    CU_TENSOR_MAP_DATA_TYPE_UINT8
#define T_F32   CU_TENSOR_MAP_DATA_TYPE_FLOAT32
#define T_F64   CU_TENSOR_MAP_DATA_TYPE_FLOAT64
#define T_BF16  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
#define T_U4A8  CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B
#define T_U4A16 CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B
#define T_U6A16 CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B
#define NTYPES  (CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B + 1)
#define NSWZ    (CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B + 1)
#define IL_NONE CU_TENSOR_MAP_INTERLEAVE_NONE
#define IL_16   CU_TENSOR_MAP_INTERLEAVE_16B
#define IL_32   CU_TENSOR_MAP_INTERLEAVE_32B
#define SW_NONE CU_TENSOR_MAP_SWIZZLE_NONE
#define SW_32   CU_TENSOR_MAP_SWIZZLE_32B
#define SW_64   CU_TENSOR_MAP_SWIZZLE_64B
#define SW_128  CU_TENSOR_MAP_SWIZZLE_128B
#define NAN_FILL CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA

static const char *const short_type[NTYPES] = {"u8",  "u16",  "u32",   "i32",   "u64",    "i64",
                                               "f16", "f32",  "f64",   "bf16",  "f32ftz", "tf32",
                                               "tf32ftz", "u4a8", "u4a16", "u6a16"};
static const char *const short_swz[NSWZ] = {"none", "sw32", "sw64", "sw128", "atom32", "atom32f8", "atom64"};

typedef struct {
    tmap_grid_case *out;
    int max, n;
} grid;

static void add(grid *g, const tmap_params *p, const char *fmt, ...)
{
    if (g->n < g->max) {
        tmap_grid_case *c = &g->out[g->n];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->label, sizeof c->label, fmt, ap);
        va_end(ap);
        c->p = *p;
    }
    g->n++;
}

static uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

/* Packed strides: every stride is computed from the dims with the padding model, so only the
 * change a family makes can break a rule. */
static void pack_strides(tmap_params *p, uint64_t row_align)
{
    uint64_t s = round_up((p->global_dim[0] * tmap_elem_bits(p->data_type) + 7) / 8, row_align);
    const uint64_t cap = 1ull << 41; /* saturate: huge dims must not wrap into small strides */
    for (unsigned i = 0; i + 1 < 5; i++) {
        p->global_strides[i] = s;
        const uint64_t d = p->global_dim[i + 1];
        s = (d && s > cap / d) ? cap : s * d;
    }
}

/* A set the documentation accepts for data type t at this rank: dims {256,16,4,3,2}, a 64-byte
 * inner box (128 elements for the packed types, which need exactly that for ALIGN16B), the
 * packed-type alignments of 32 bytes, no interleave, no swizzle. */
static tmap_params base(int t, unsigned rank)
{
    tmap_params p;
    memset(&p, 0, sizeof p);
    p.data_type = t;
    p.rank = rank;
    const uint64_t dims[5] = {256, 16, 4, 3, 2};
    const uint32_t box[5] = {0, 8, 2, 3, 1};
    size_t bits = tmap_elem_bits(t);
    for (int i = 0; i < 5; i++) {
        p.global_dim[i] = dims[i];
        p.box_dim[i] = box[i];
        p.element_strides[i] = 1;
    }
    p.box_dim[0] = tmap_is_packed(t) ? 128 : (uint32_t)(512 / (bits ? bits : 8));
    pack_strides(&p, 32);
    return p;
}

/* Row-major bf16 [rows][cols]: the FG13 shape family. */
static tmap_params bf16_2d(uint64_t cols, uint64_t rows, uint64_t stride, uint32_t box0, uint32_t box1, int swz)
{
    tmap_params p = base(T_BF16, 2);
    p.global_dim[0] = cols;
    p.global_dim[1] = rows;
    p.global_strides[0] = stride;
    p.box_dim[0] = box0;
    p.box_dim[1] = box1;
    p.swizzle = swz;
    return p;
}

/* Rank-3 bf16 map for the interleave families: a C16 (32-byte) innermost slice, strides and
 * address 32-byte aligned so only interleave/swizzle choices matter. */
static tmap_params il3(int il, int swz, uint32_t box0)
{
    tmap_params p = base(T_BF16, 3);
    p.global_dim[0] = 16;
    p.global_dim[1] = 32;
    p.global_dim[2] = 8;
    p.box_dim[0] = box0;
    p.box_dim[1] = 8;
    p.box_dim[2] = 2;
    pack_strides(&p, 32);
    p.interleave = il;
    p.swizzle = swz;
    return p;
}

static void fam_base(grid *g)
{
    for (int t = 0; t < NTYPES; t++)
        for (unsigned r = 1; r <= 5; r++) {
            tmap_params p = base(t, r);
            add(g, &p, "base_%s_r%u", short_type[t], r);
        }
    /* Every swizzle with every type at a 64-byte inner box: too wide for SWIZZLE_32B, fine for the
     * others; the packed types have their own swizzle lists. */
    for (int t = 0; t < NTYPES; t++)
        for (int s = 1; s < NSWZ; s++) {
            tmap_params p = base(t, 2);
            p.swizzle = s;
            add(g, &p, "swz_%s_%s", short_type[t], short_swz[s]);
        }
}

static void fam_rank(grid *g)
{
    const unsigned ranks[] = {0, 6, 7};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        tmap_params p = base(T_BF16, 5);
        p.rank = ranks[i];
        add(g, &p, "rank_%u", ranks[i]);
    }
    for (unsigned r = 1; r <= 5; r++) {
        tmap_params p = il3(IL_16, SW_NONE, 8);
        p.rank = r;
        add(g, &p, "interleave16_rank_%u", r);
        p = il3(IL_32, SW_32, 16);
        p.rank = r;
        add(g, &p, "interleave32_rank_%u", r);
    }
}

static void fam_stride(grid *g)
{
    /* bf16 {64 cols, 128 rows}, one 128-byte row: what the stride may be. */
    const uint64_t s2d[] = {128,        144,        100,         120,          136,        8,
                            2,          64,         0,           16,           256,        1ull << 39,
                            (1ull << 40) - 16, 1ull << 40, (1ull << 40) + 16, 1ull << 41, 1ull << 63};
    for (size_t i = 0; i < sizeof s2d / sizeof s2d[0]; i++) {
        tmap_params p = bf16_2d(64, 128, s2d[i], 64, 64, SW_128);
        add(g, &p, "stride2d_%llu", (unsigned long long)s2d[i]);
    }
    /* Strides in elements instead of bytes: a multiple of 16 passes, the rows are wrong. */
    const uint64_t cols[] = {64, 72, 96, 100, 128, 256};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        uint32_t box0 = cols[i] >= 64 ? 64 : (uint32_t)cols[i];
        tmap_params p = bf16_2d(cols[i], 128, cols[i] * 2, box0, 64, SW_128);
        add(g, &p, "stride_bytes_c%llu", (unsigned long long)cols[i]);
        p.global_strides[0] = cols[i];
        add(g, &p, "stride_elems_c%llu", (unsigned long long)cols[i]);
    }
    /* Rank strides instead of rank-1: dimension 0's element size lands in globalStrides[0]. */
    for (unsigned r = 2; r <= 5; r++) {
        tmap_params p = base(T_BF16, r);
        for (int i = 3; i > 0; i--) p.global_strides[i] = p.global_strides[i - 1];
        p.global_strides[0] = 2;
        add(g, &p, "stride_rank_entries_r%u", r);
    }
    /* Only rank-1 entries are read: junk past them must not matter. */
    {
        tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.global_strides[1] = 100;
        p.global_strides[2] = 7;
        add(g, &p, "stride_junk_past_rank");
        p = base(T_BF16, 5);
        p.global_strides[3] = 24;
        add(g, &p, "stride_r5_last_not16");
        p = base(T_BF16, 5);
        p.global_strides[3] = 1ull << 40;
        add(g, &p, "stride_r5_last_2p40");
    }
    /* Strides that break the cuda.h padding pseudo-code but are used by working code. */
    {
        tmap_params p = base(T_BF16, 4); /* BSHD tensor mapped {d, s, h, b} */
        const uint64_t d = 64, s = 128, h = 8, b = 2;
        p.global_dim[0] = d, p.global_dim[1] = s, p.global_dim[2] = h, p.global_dim[3] = b;
        p.global_strides[0] = h * d * 2, p.global_strides[1] = d * 2, p.global_strides[2] = s * h * d * 2;
        p.box_dim[0] = 64, p.box_dim[1] = 64, p.box_dim[2] = 1, p.box_dim[3] = 1;
        p.swizzle = SW_128;
        add(g, &p, "bshd_as_dshb_nonmonotonic");
        p = base(T_BF16, 3); /* GN-blog: 128-byte column atoms of a [M][K] tensor, K = 256 */
        p.global_dim[0] = 64, p.global_dim[1] = 128, p.global_dim[2] = 4;
        p.global_strides[0] = 512, p.global_strides[1] = 128;
        p.box_dim[0] = 64, p.box_dim[1] = 128, p.box_dim[2] = 2;
        p.swizzle = SW_128;
        add(g, &p, "swap_first_two_dims_3d");
        p = base(T_BF16, 3);
        p.global_strides[1] = p.global_strides[0]; /* dimension 2 overlaps dimension 1 */
        add(g, &p, "stride_padding_model_broken");
        p = base(T_BF16, 3);
        p.global_strides[0] = 0;
        p.global_strides[1] = 0;
        p.global_dim[0] = 8;
        p.box_dim[0] = 8;
        add(g, &p, "stride_all_zero_r3");
        p = base(T_BF16, 3);
        p.global_dim[1] = 1;
        p.global_strides[1] = p.global_strides[0];
        p.box_dim[1] = 1;
        p.global_strides[0] = 0; /* broadcast of a one-row dimension */
        add(g, &p, "stride_zero_dim1_is_1");
    }
    /* INTERLEAVE_32B: strides must be multiples of 32. */
    const uint64_t s32[] = {16, 32, 48, 64, 96, 1ull << 40};
    for (size_t i = 0; i < sizeof s32 / sizeof s32[0]; i++) {
        tmap_params p = il3(IL_32, SW_32, 16);
        p.global_strides[0] = s32[i];
        p.global_strides[1] = s32[i] * 32;
        add(g, &p, "il32_stride_%llu", (unsigned long long)s32[i]);
        p = il3(IL_16, SW_NONE, 8);
        p.global_strides[0] = s32[i];
        p.global_strides[1] = s32[i] * 32;
        add(g, &p, "il16_stride_%llu", (unsigned long long)s32[i]);
    }
    /* ALIGN16B packed types: strides must be multiples of 32. */
    const int packed16[] = {T_U4A16, T_U6A16};
    const uint64_t sp[] = {16, 144, 160, 192, 208};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
            tmap_params p = base(packed16[k], 2);
            p.global_dim[0] = 128;
            p.global_strides[0] = sp[i];
            add(g, &p, "stride_%s_%llu", short_type[packed16[k]], (unsigned long long)sp[i]);
        }
    const uint64_t s8[] = {16, 24, 64, 80};
    for (size_t i = 0; i < sizeof s8 / sizeof s8[0]; i++) {
        tmap_params p = base(T_U4A8, 2);
        p.global_dim[0] = 128;
        p.global_strides[0] = s8[i];
        add(g, &p, "stride_u4a8_%llu", (unsigned long long)s8[i]);
    }
}

static void fam_address(grid *g)
{
    const uint64_t off[] = {0, 1, 2, 4, 8, 16, 24, 32, 48, 64, 128};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.global_address = off[i];
        add(g, &p, "addr_bf16_%llu", (unsigned long long)off[i]);
    }
    const uint64_t off32[] = {8, 16, 32, 48, 64};
    for (size_t i = 0; i < sizeof off32 / sizeof off32[0]; i++) {
        tmap_params p = il3(IL_32, SW_32, 16);
        p.global_address = off32[i];
        add(g, &p, "addr_il32_%llu", (unsigned long long)off32[i]);
        p = il3(IL_16, SW_NONE, 8);
        p.global_address = off32[i];
        add(g, &p, "addr_il16_%llu", (unsigned long long)off32[i]);
    }
    const int packed[] = {T_U4A8, T_U4A16, T_U6A16};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof off32 / sizeof off32[0]; i++) {
            tmap_params p = base(packed[k], 2);
            p.global_address = off32[i];
            add(g, &p, "addr_%s_%llu", short_type[packed[k]], (unsigned long long)off32[i]);
        }
}

static void fam_dim(grid *g)
{
    const uint64_t v[] = {0, 1, 2, 1ull << 31, 1ull << 32, (1ull << 32) + 1, 1ull << 33};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        /* dimension 0: the row stride follows so only the dim can be wrong */
        uint64_t stride = v[i] * 2 > 128 ? round_up(v[i] * 2, 16) : 128;
        tmap_params p = bf16_2d(v[i], 128, stride, 64, 64, SW_128);
        add(g, &p, "dim0_%llu", (unsigned long long)v[i]);
        p = bf16_2d(64, v[i], 128, 64, 64, SW_128);
        add(g, &p, "dim1_%llu", (unsigned long long)v[i]);
        p = base(T_BF16, 5);
        p.global_dim[4] = v[i];
        add(g, &p, "dim4_r5_%llu", (unsigned long long)v[i]);
    }
    /* globalDim past the rank is never read. */
    {
        tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.global_dim[2] = 0;
        p.global_dim[3] = 1ull << 40;
        add(g, &p, "dim_junk_past_rank");
    }
    const uint64_t d16[] = {64, 128, 130, 192, 256, 384};
    const int packed16[] = {T_U4A16, T_U6A16};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof d16 / sizeof d16[0]; i++) {
            tmap_params p = base(packed16[k], 2);
            p.global_dim[0] = d16[i];
            pack_strides(&p, 32);
            add(g, &p, "dim0_%s_%llu", short_type[packed16[k]], (unsigned long long)d16[i]);
        }
    const uint64_t d8[] = {1, 2, 3, 255, 256};
    for (size_t i = 0; i < sizeof d8 / sizeof d8[0]; i++) {
        tmap_params p = base(T_U4A8, 2);
        p.global_dim[0] = d8[i];
        pack_strides(&p, 32);
        add(g, &p, "dim0_u4a8_%llu", (unsigned long long)d8[i]);
    }
}

static void fam_box(grid *g)
{
    const uint32_t b0[] = {0, 1, 4, 8, 12, 16, 24, 64, 128, 256, 257, 512};
    for (size_t i = 0; i < sizeof b0 / sizeof b0[0]; i++) {
        tmap_params p = bf16_2d(512, 512, 1024, b0[i], 64, SW_NONE);
        add(g, &p, "box0_bf16_%u", b0[i]);
    }
    const uint32_t b1[] = {0, 1, 255, 256, 257, 1000};
    for (size_t i = 0; i < sizeof b1 / sizeof b1[0]; i++) {
        tmap_params p = bf16_2d(512, 512, 1024, 64, b1[i], SW_NONE);
        add(g, &p, "box1_bf16_%u", b1[i]);
    }
    {
        tmap_params p = base(T_BF16, 5);
        p.box_dim[4] = 0;
        add(g, &p, "box4_r5_0");
        p.box_dim[4] = 257;
        add(g, &p, "box4_r5_257");
        p = bf16_2d(64, 8, 128, 64, 64, SW_128); /* box taller than the tensor: OOB fill */
        add(g, &p, "box_taller_than_tensor");
        p = bf16_2d(16, 128, 128, 64, 64, SW_128); /* box wider than the tensor */
        add(g, &p, "box_wider_than_tensor");
        p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.box_dim[2] = 0; /* past the rank: never read */
        add(g, &p, "box_junk_past_rank");
    }
    /* The inner box in bytes for other element sizes. */
    struct { int t; uint32_t box0; } inner[] = {
        {T_F32, 2},   {T_F32, 4},   {T_F32, 6},   {T_F32, 8},    {T_U8, 8},     {T_U8, 16},
        {T_U8, 24},   {T_U8, 32},   {T_F64, 1},   {T_F64, 2},    {T_F64, 3},    {T_U4A8, 16},
        {T_U4A8, 32}, {T_U4A8, 48}, {T_U4A8, 64}, {T_U4A16, 64}, {T_U4A16, 256}, {T_U6A16, 64},
        {T_U6A16, 256}};
    for (size_t i = 0; i < sizeof inner / sizeof inner[0]; i++) {
        tmap_params p = base(inner[i].t, 2);
        p.box_dim[0] = inner[i].box0;
        add(g, &p, "box0_%s_%u", short_type[inner[i].t], inner[i].box0);
    }
    /* With interleave the 16-byte inner-box rule does not apply (cuda.h says INTERLEAVE_NONE). */
    const uint32_t bi[] = {4, 8, 16, 32, 64, 128};
    for (size_t i = 0; i < sizeof bi / sizeof bi[0]; i++) {
        tmap_params p = il3(IL_16, SW_NONE, bi[i]);
        add(g, &p, "il16_box0_%u", bi[i]);
        p = il3(IL_32, SW_32, bi[i]);
        add(g, &p, "il32_box0_%u", bi[i]);
    }
    /* Total box size: the H200 driver refused boxes of 2 MiB and more and accepted 128 KiB; these
     * probes bracket the limit: bf16 boxes {64, 128, depth} = 16 KiB per unit of depth. */
    const uint32_t depth[] = {8, 12, 14, 15, 16, 24, 32, 64, 128};
    for (size_t i = 0; i < sizeof depth / sizeof depth[0]; i++) {
        tmap_params p = base(T_BF16, 3);
        p.global_dim[0] = 64, p.global_dim[1] = 256, p.global_dim[2] = 256;
        p.global_strides[0] = 128, p.global_strides[1] = 128 * 256;
        p.box_dim[0] = 64, p.box_dim[1] = 128, p.box_dim[2] = depth[i];
        add(g, &p, "box_total_%uKiB", 16u * depth[i]);
    }
    /* Inner box against each swizzle span: at, under and over 32/64/128 bytes. */
    const uint32_t bs[] = {8, 16, 24, 32, 48, 64, 72, 128};
    for (int s = 1; s < NSWZ; s++)
        for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
            tmap_params p = bf16_2d(512, 512, 1024, bs[i], 64, s);
            add(g, &p, "span_%s_bf16_box%u", short_swz[s], bs[i]);
        }
    /* With interleave the span rule does not apply either. */
    for (int s = 1; s < NSWZ; s++) {
        tmap_params p = il3(IL_16, s, 128);
        add(g, &p, "il16_%s_box0_128", short_swz[s]);
    }
}

static void fam_elem_stride(grid *g)
{
    const uint32_t v[] = {0, 1, 2, 3, 8, 9, 16};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        tmap_params p = bf16_2d(512, 512, 1024, 64, 64, SW_128);
        p.element_strides[0] = v[i];
        add(g, &p, "estride0_%u", v[i]);
        p = bf16_2d(512, 512, 1024, 64, 64, SW_128);
        p.element_strides[1] = v[i];
        add(g, &p, "estride1_%u", v[i]);
    }
    const uint32_t w[] = {0, 2, 8, 9};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        tmap_params p = base(T_BF16, 5);
        p.element_strides[4] = w[i];
        add(g, &p, "estride4_r5_%u", w[i]);
        p = il3(IL_16, SW_NONE, 8);
        p.element_strides[0] = w[i];
        add(g, &p, "il16_estride0_%u", w[i]);
    }
    {
        tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.element_strides[2] = 0; /* past the rank */
        add(g, &p, "estride_junk_past_rank");
    }
}

static void fam_interleave_swizzle(grid *g)
{
    const int ils[] = {IL_NONE, IL_16, IL_32};
    const char *iln[] = {"ilnone", "il16", "il32"};
    for (int k = 0; k < 3; k++)
        for (int s = 0; s < NSWZ; s++) {
            tmap_params p = il3(ils[k], s, 16);
            add(g, &p, "%s_%s", iln[k], short_swz[s]);
        }
    /* Interleave with other element sizes (the C8 / C16 slices of hw types). */
    const int ts[] = {T_U8, T_F32, T_F64};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        tmap_params p = il3(IL_16, SW_NONE, (uint32_t)(128 / tmap_elem_bits(ts[i])));
        p.data_type = ts[i];
        pack_strides(&p, 32);
        add(g, &p, "il16_%s", short_type[ts[i]]);
        p.interleave = IL_32;
        p.swizzle = SW_32;
        p.box_dim[0] = (uint32_t)(256 / tmap_elem_bits(ts[i]));
        add(g, &p, "il32_%s", short_type[ts[i]]);
    }
    /* Packed types with interleave and with every swizzle. */
    const int packed[] = {T_U4A8, T_U4A16, T_U6A16};
    for (size_t k = 0; k < 3; k++) {
        for (int il = 1; il <= 2; il++) {
            tmap_params p = base(packed[k], 3);
            p.interleave = il;
            p.swizzle = il == IL_32 ? SW_32 : SW_NONE;
            add(g, &p, "%s_%s", short_type[packed[k]], iln[il]);
        }
        for (int s = 0; s < NSWZ; s++) {
            tmap_params p = base(packed[k], 2);
            p.box_dim[0] = 128;
            p.swizzle = s;
            add(g, &p, "%s_box128_%s", short_type[packed[k]], short_swz[s]);
        }
    }
}

static void fam_enums(grid *g)
{
    const int l2[] = {0, 1, 2, 3, 4, -1, 100};
    for (size_t i = 0; i < sizeof l2 / sizeof l2[0]; i++) {
        tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.l2_promotion = l2[i];
        add(g, &p, "l2_%d", l2[i]);
    }
    for (int t = 0; t < NTYPES; t++) {
        tmap_params p = base(t, 2);
        p.oob_fill = NAN_FILL;
        add(g, &p, "nanfill_%s", short_type[t]);
    }
    const int oob[] = {2, -1, 5};
    for (size_t i = 0; i < sizeof oob / sizeof oob[0]; i++) {
        tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.oob_fill = oob[i];
        add(g, &p, "oob_%d", oob[i]);
    }
    const int dt[] = {16, 17, -1, 255};
    for (size_t i = 0; i < sizeof dt / sizeof dt[0]; i++) {
        tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.data_type = dt[i];
        add(g, &p, "dtype_%d", dt[i]);
    }
    const int il[] = {3, -1};
    for (size_t i = 0; i < sizeof il / sizeof il[0]; i++) {
        tmap_params p = il3(IL_16, SW_NONE, 8);
        p.interleave = il[i];
        add(g, &p, "interleave_%d", il[i]);
    }
    const int sw[] = {7, 8, -1};
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
        p.swizzle = sw[i];
        add(g, &p, "swizzle_%d", sw[i]);
    }
}

static void fam_fg13(grid *g)
{
    tmap_params p = bf16_2d(64, 128, 128, 64, 64, SW_128);
    add(g, &p, "fg13_correct_bf16_2d");
    p.global_strides[0] = 100;
    add(g, &p, "fg13_stride_100");
    p = bf16_2d(128, 128, 256, 128, 64, SW_128);
    add(g, &p, "fg13_box128_cols_sw128");
    p = bf16_2d(64, 128, 2, 64, 64, SW_128);
    p.global_strides[1] = 128;
    add(g, &p, "fg13_rank_strides");
    p = bf16_2d(64, 128, 64, 64, 64, SW_128);
    add(g, &p, "fg13_stride_in_elements");
}

/* Maps the FMHA stages build: Q/K/V/O tiles, FP8 K, paged KV, two 128-byte atoms for d=128. */
static void fam_fmha(grid *g)
{
    const uint64_t ds[] = {64, 128, 256};
    for (size_t i = 0; i < 3; i++) {
        const uint64_t d = ds[i], s = 1024, h = 16, b = 2;
        tmap_params p = base(T_BF16, 4);
        p.global_dim[0] = d, p.global_dim[1] = s, p.global_dim[2] = h, p.global_dim[3] = b;
        p.global_strides[0] = h * d * 2, p.global_strides[1] = d * 2, p.global_strides[2] = s * h * d * 2;
        p.box_dim[0] = 64, p.box_dim[1] = 128, p.box_dim[2] = 1, p.box_dim[3] = 1;
        p.swizzle = SW_128;
        add(g, &p, "fmha_q_bshd_d%llu", (unsigned long long)d);
        p.box_dim[0] = (uint32_t)(d > 256 ? 256 : d);
        add(g, &p, "fmha_q_bshd_d%llu_fullbox", (unsigned long long)d);
        p = base(T_BF16, 3); /* [s][d] as {64, s, d/64}: one 128-byte atom per box */
        p.global_dim[0] = 64, p.global_dim[1] = s, p.global_dim[2] = d / 64;
        p.global_strides[0] = d * 2, p.global_strides[1] = 128;
        p.box_dim[0] = 64, p.box_dim[1] = 128, p.box_dim[2] = (uint32_t)(d / 64);
        p.swizzle = SW_128;
        add(g, &p, "fmha_atoms_3d_d%llu", (unsigned long long)d);
    }
    tmap_params p = bf16_2d(128, 4096, 256, 128, 128, SW_NONE);
    p.data_type = T_U8; /* FP8 K: 128 bytes a row */
    p.global_strides[0] = 128;
    p.swizzle = SW_128;
    add(g, &p, "fmha_fp8_k_box128_sw128");
    p.box_dim[1] = 256;
    add(g, &p, "fmha_fp8_k_box256rows");
    p.box_dim[1] = 512;
    add(g, &p, "fmha_fp8_k_box512rows");
    p = base(T_U8, 4); /* paged KV: {d, page, h, pages} */
    p.global_dim[0] = 128, p.global_dim[1] = 64, p.global_dim[2] = 8, p.global_dim[3] = 1000;
    pack_strides(&p, 16);
    p.box_dim[0] = 128, p.box_dim[1] = 64, p.box_dim[2] = 1, p.box_dim[3] = 1;
    p.swizzle = SW_128;
    add(g, &p, "fmha_paged_kv_fp8");
    p = bf16_2d(130, 128, 260, 64, 64, SW_128); /* odd head dim: row pitch 260 bytes */
    add(g, &p, "fmha_odd_head_dim_130");
    p = bf16_2d(128, 128, 256, 64, 64, SW_128);
    p.global_address = 2 * 72; /* sub-tensor at column 72: 144 bytes in */
    add(g, &p, "fmha_subtensor_col72");
    p.global_address = 2 * 68;
    add(g, &p, "fmha_subtensor_col68");
}

/* A fixed-seed mix of near-valid choices: several rules at once, each value plausible. */
static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#define PICK(s, arr) (arr[xorshift(s) % (sizeof arr / sizeof arr[0])])

static void fam_fuzz(grid *g)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    const uint64_t dims[] = {1, 2, 3, 16, 64, 128, 256, 1000, 1ull << 32};
    const uint32_t boxes[] = {1, 8, 8, 16, 16, 32, 32, 64, 64, 128, 256};
    const uint32_t es[] = {1, 1, 1, 1, 1, 1, 1, 1, 2, 8, 9};
    const int ils[] = {IL_NONE, IL_NONE, IL_NONE, IL_NONE, IL_NONE, IL_NONE, IL_16, IL_32};
    const int swz[] = {SW_NONE, SW_NONE, SW_32, SW_64, SW_128, SW_128, SW_128,
                       CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B, CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B,
                       CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B};
    const int oobs[] = {0, 0, 0, 1};
    const uint64_t addrs[] = {0, 0, 0, 0, 0, 0, 16, 32, 64, 8};
    const int types[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 10, 11, 12, 13, 14, 15, 0, 6};
    for (int k = 0; k < 120; k++) {
        tmap_params p;
        memset(&p, 0, sizeof p);
        p.data_type = PICK(&seed, types);
        p.rank = 1 + (unsigned)(xorshift(&seed) % 5);
        for (int i = 0; i < 5; i++) {
            p.global_dim[i] = PICK(&seed, dims);
            p.box_dim[i] = PICK(&seed, boxes);
            p.element_strides[i] = PICK(&seed, es);
        }
        if (p.global_dim[0] > (1ull << 20)) p.global_dim[0] = 256; /* keep strides below 2^40 */
        pack_strides(&p, 16);
        for (int i = 0; i < 4; i++) {
            switch (xorshift(&seed) % 24) {
            case 0: p.global_strides[i] += 8; break;
            case 1: p.global_strides[i] /= 2; break;
            case 2: p.global_strides[i] = round_up(p.global_strides[i], 32); break;
            default: break;
            }
            if (p.global_strides[i] >= (1ull << 40)) p.global_strides[i] = 1ull << 20;
        }
        p.interleave = PICK(&seed, ils);
        if (p.rank < 3 && xorshift(&seed) % 4) p.interleave = IL_NONE; /* mostly legal ranks */
        if (xorshift(&seed) % 16 == 0) p.box_dim[xorshift(&seed) % p.rank] = 257;
        p.swizzle = PICK(&seed, swz);
        p.l2_promotion = (int)(xorshift(&seed) % 4);
        p.oob_fill = PICK(&seed, oobs);
        p.global_address = PICK(&seed, addrs);
        add(g, &p, "fuzz_%03d", k);
    }
}

int tmap_grid_cases(tmap_grid_case *out, int max)
{
    grid g = {out, out ? max : 0, 0};
    fam_base(&g);
    fam_rank(&g);
    fam_stride(&g);
    fam_address(&g);
    fam_dim(&g);
    fam_box(&g);
    fam_elem_stride(&g);
    fam_interleave_swizzle(&g);
    fam_enums(&g);
    fam_fg13(&g);
    fam_fmha(&g);
    fam_fuzz(&g);
    return g.n;
}

int tmap_grid(tmap_params *out, int max)
{
    int n = tmap_grid_cases(NULL, 0);
    if (!out || max <= 0) return n;
    tmap_grid_case *all = malloc(sizeof *all * (size_t)n);
    if (!all) return -1;
    tmap_grid_cases(all, n);
    for (int i = 0; i < n && i < max; i++) out[i] = all[i].p;
    free(all);
    return n;
}
