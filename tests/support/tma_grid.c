#include "tma_grid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/fmha_core.h"
#include "host/attention.h"
#include "host/fmha_tmaps.h"
#include "model/tma_model.h"

/* The 2-D grid over a [300 rows x 192 bytes] tensor: both element sizes x every swizzle x inner
 * boxes from 16 bytes to the swizzle span (NONE: up to 128 bytes) x box rows 16..256 x six
 * placements; then bf16 and f32 boxes with the NaN fill past the edges. */
static const int types[3] = {CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_UINT8,
                             CU_TENSOR_MAP_DATA_TYPE_FLOAT32};
static const int type_bytes[3] = {2, 1, 4};
static const char *const type_name[3] = {"bf16", "u8", "f32"};
static const int swz[4] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
                           CU_TENSOR_MAP_SWIZZLE_128B};
static const int inners[4][6] = {{16, 48, 64, 128}, {16, 32}, {16, 32, 48, 64}, {16, 32, 64, 96, 128}};
static const int rows[4] = {16, 64, 128, 256};
/* coordinates in bytes along dim 0 (multiples of 16) and rows along dim 1 */
static const int cb[6] = {0, 64, 160, 0, 0, -16}, cr[6] = {0, 17, 0, 200, 400, -8};
static const char *const cname[6] = {"inside", "inside-offset", "cols-past-end", "rows-past-end", "wholly-out",
                                     "negative"};

static void grid_case(tma_case *x, int t, int s, int inner, int r, int k, int oob)
{
    const int es = type_bytes[t];
    memset(x, 0, sizeof *x);
    tmap_params *p = &x->p;
    p->data_type = types[t];
    p->rank = 2;
    p->global_dim[0] = (uint64_t)(192 / es);
    p->global_dim[1] = 300;
    p->global_strides[0] = 192;
    p->box_dim[0] = (uint32_t)(inner / es);
    p->box_dim[1] = (uint32_t)rows[r];
    p->element_strides[0] = p->element_strides[1] = 1;
    p->swizzle = swz[s];
    p->oob_fill = oob;
    x->coords[0] = cb[k] / es;
    x->coords[1] = cr[k];
    snprintf(x->label, sizeof x->label, "%s swz=%s inner=%dB rows=%d %s%s", type_name[t],
             tmap_swizzle_name(swz[s]), inner, rows[r], cname[k], oob ? " nan-fill" : "");
}

static int grid_2d(tma_case *c, int max)
{
    int n = 0;
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 4; s++)
            for (int in = 0; in < 6 && inners[s][in]; in++)
                for (int r = 0; r < 4; r++)
                    for (int k = 0; k < 6; k++, n++)
                        if (n < max) grid_case(&c[n], t, s, inners[s][in], r, k, 0);
    /* the NaN fill (float types only): where the box leaves the tensor */
    for (int t = 0; t < 3; t += 2)
        for (int s = 0; s < 4; s += 3)
            for (int k = 2; k < 6; k++, n++)
                if (n < max) grid_case(&c[n], t, s, 128, 1, k, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
    return n;
}

int tma_grid_cases(tma_case *c, int max)
{
    int n = grid_2d(c, max);
    /* one rank-4 attention map: K of a BSHD GQA problem, the tail tile of KV head 1, batch 1 */
    if (n < max) {
        fmha_opts o;
        memset(&o, 0, sizeof o);
        o.b = 2; o.hq = 4; o.hkv = 2; o.sq = 64; o.skv = 300; o.d = 128; o.layout_bshd = 1;
        fmha_params ap;
        attn_params_for(&o, &ap);
        memset(&c[n], 0, sizeof c[n]);
        fmha_tmap_params(&ap, FMHA_TENSOR_K, 0, FMHA_TMAP_RIGHT, &c[n].p);
        c[n].coords[0] = 64; c[n].coords[1] = 256; c[n].coords[2] = 1; c[n].coords[3] = 1;
        snprintf(c[n].label, sizeof c[n].label, "attention K map BSHD D128 tail tile");
    }
    return n + 1;
}

tmap_params tma_bf16_map_2d(int cols, int rows, int ld, int box_rows)
{
    tmap_params p;
    memset(&p, 0, sizeof p);
    p.data_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    p.rank = 2;
    p.global_dim[0] = (uint64_t)cols;
    p.global_dim[1] = (uint64_t)rows;
    p.global_strides[0] = (uint64_t)ld * 2;
    p.box_dim[0] = 64;
    p.box_dim[1] = (uint32_t)box_rows;
    for (int i = 0; i < 5; i++) p.element_strides[i] = 1;
    p.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
    p.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    p.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
    p.oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    return p;
}

uint8_t *tma_grid_tensor(void)
{
    uint8_t *t = malloc(TMA_GRID_TENSOR_BYTES);
    for (size_t i = 0; t && i < TMA_GRID_TENSOR_BYTES; i++) t[i] = (uint8_t)(1 + (i * 2654435761u >> 13) % 237); /* 1..237: never 0, never 0xEE */
    return t;
}

uint64_t tma_grid_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

uint32_t tma_grid_region(const tmap_params *p) { return (tma_smem_bytes(p) + 1023u) / 1024u * 1024u + 1024u; }

int tma_grid_model_image(const tma_case *c, const uint8_t *tensor, uint8_t *img, uint32_t *tx, char *err, size_t len)
{
    memset(img, 0xEE, tma_grid_region(&c->p));
    return tma_model_load(&c->p, 9, tensor, c->coords, img, 0, tx, err, len);
}
