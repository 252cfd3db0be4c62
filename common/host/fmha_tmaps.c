#include "host/fmha_tmaps.h"

#include <stdio.h>
#include <string.h>

#include "host/tmap_encode.h"

void fmha_tmap_params(const fmha_params *p, fmha_tensor t, uint64_t global_address, fmha_tmap_mistake mistake,
                      tmap_params *out)
{
    const int is_q = t == FMHA_TENSOR_Q || t == FMHA_TENSOR_O;
    const int64_t sb = t == FMHA_TENSOR_Q ? p->q_sb : t == FMHA_TENSOR_K ? p->k_sb : t == FMHA_TENSOR_V ? p->v_sb : p->o_sb;
    const int64_t sh = t == FMHA_TENSOR_Q ? p->q_sh : t == FMHA_TENSOR_K ? p->k_sh : t == FMHA_TENSOR_V ? p->v_sh : p->o_sh;
    const int64_t ss = t == FMHA_TENSOR_Q ? p->q_ss : t == FMHA_TENSOR_K ? p->k_ss : t == FMHA_TENSOR_V ? p->v_ss : p->o_ss;
    const int heads = is_q ? p->hq : (sh == 0 ? 1 : p->hkv); /* a shared MQA head: stride 0, one head */
    memset(out, 0, sizeof *out);
    out->data_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    out->rank = 4;
    out->global_address = global_address;
    out->global_dim[0] = (uint64_t)p->d;
    out->global_dim[1] = (uint64_t)(is_q ? p->sq : p->skv);
    out->global_dim[2] = (uint64_t)heads;
    out->global_dim[3] = (uint64_t)p->b;
    const int64_t el[3] = {ss, sh == 0 ? (int64_t)p->d * (is_q ? p->sq : p->skv) : sh, sb};
    for (int i = 0; i < 3; i++) out->global_strides[i] = (uint64_t)el[i] * 2u; /* bytes */
    out->box_dim[0] = 64; /* 128 bytes: the 128B swizzle span */
    out->box_dim[1] = t == FMHA_TENSOR_O ? FMHA_O_BOX_ROWS : is_q ? (uint32_t)fmha_cta_rows(p) : (uint32_t)fmha_kv_cols(p);
    out->box_dim[2] = out->box_dim[3] = 1;
    for (int i = 0; i < 5; i++) out->element_strides[i] = 1;
    out->interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
    out->swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    out->l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    out->oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    if (!is_q && p->pipe.kv_box5 && mistake == FMHA_TMAP_RIGHT) {
        /* One box a tile: {64 columns, keys, D / 64 column blocks (128 bytes apart), heads, batch},
         * box {64, keys a tile, D / 64}. TMA walks dimension 0, then 1, then 2, so the box lands
         * as the D / 64 atom columns one after another, each keys x 128 bytes: where the 4-D map's
         * D / 64 boxes land (tma_tile_box_offset). One copy instead of D / 64 (CuTe's TMA atoms
         * build the same box from the SW128 tile's layout). */
        out->rank = 5;
        out->global_dim[0] = 64;
        out->global_dim[1] = (uint64_t)p->skv;
        out->global_dim[2] = (uint64_t)(p->d / 64);
        out->global_dim[3] = (uint64_t)heads;
        out->global_dim[4] = (uint64_t)p->b;
        out->global_strides[0] = (uint64_t)el[0] * 2u;
        out->global_strides[1] = 128u;
        out->global_strides[2] = (uint64_t)el[1] * 2u;
        out->global_strides[3] = (uint64_t)el[2] * 2u;
        out->box_dim[2] = (uint32_t)(p->d / 64);
        out->box_dim[3] = out->box_dim[4] = 1;
    }
    switch (mistake) {
    case FMHA_TMAP_RANK_STRIDES: /* {2, ss, sh, sb}: the element size first, the batch stride dropped */
        out->global_strides[2] = out->global_strides[1];
        out->global_strides[1] = out->global_strides[0];
        out->global_strides[0] = 2u;
        break;
    case FMHA_TMAP_ELEMENT_STRIDES:
        for (int i = 0; i < 3; i++) out->global_strides[i] = (uint64_t)el[i];
        break;
    case FMHA_TMAP_WIDE_INNER_BOX: out->box_dim[0] = (uint32_t)p->d; break;
    case FMHA_TMAP_STRIDE_NOT_16: out->global_strides[0] += 8u; break;
    default: break;
    }
}

const char *fmha_tensor_name(fmha_tensor t)
{
    static const char *const n[FMHA_TENSOR_COUNT] = {"q", "k", "v", "o"};
    return (unsigned)t < FMHA_TENSOR_COUNT ? n[t] : "?";
}

const char *fmha_tmap_mistake_name(fmha_tmap_mistake m)
{
    static const char *const n[FMHA_TMAP_MISTAKE_COUNT] = {"right", "rank strides instead of rank-1",
                                                          "strides in elements, not bytes",
                                                          "inner box wider than the swizzle span",
                                                          "a row stride not a multiple of 16 bytes"};
    return (unsigned)m < FMHA_TMAP_MISTAKE_COUNT ? n[m] : "?";
}

fmha_tmap_mistake fmha_tmap_mistake_of(unsigned faults)
{
    if (faults & FMHA_FAULT_TMAP_RANK_STRIDES) return FMHA_TMAP_RANK_STRIDES;
    if (faults & FMHA_FAULT_TMAP_ELEMENT_STRIDES) return FMHA_TMAP_ELEMENT_STRIDES;
    if (faults & FMHA_FAULT_TMAP_STRIDE_NOT_16) return FMHA_TMAP_STRIDE_NOT_16;
    if (faults & FMHA_FAULT_TMAP_WIDE_INNER_BOX) return FMHA_TMAP_WIDE_INNER_BOX;
    return FMHA_TMAP_RIGHT;
}

static const void *tensor_ptr(const fmha_params *p, fmha_tensor t)
{
    return t == FMHA_TENSOR_Q ? (const void *)p->q : t == FMHA_TENSOR_K ? (const void *)p->k
         : t == FMHA_TENSOR_V ? (const void *)p->v : (const void *)p->o;
}

int fmha_tmaps_check(const fmha_params *p, int cc_major, char *err, size_t len)
{
    for (int t = 0; t < FMHA_TENSOR_COUNT; t++) {
        tmap_params m;
        char msg[256];
        fmha_tmap_params(p, (fmha_tensor)t, 256, fmha_tmap_mistake_of(p->faults), &m);
        const int rule = tmap_check(&m, cc_major, msg, sizeof msg);
        if (rule) {
            snprintf(err, len, "%s map: %s: %s", fmha_tensor_name((fmha_tensor)t), tmap_rule_name(rule), msg);
            return rule;
        }
    }
    return 0;
}

int fmha_tmaps_encode(const fmha_params *p, int cc_major, fmha_tma_args *a, char *err, size_t len)
{
    static fmha_params last;
    static fmha_tma_args cached;
    static int last_cc = -1;
    if (last_cc == cc_major && memcmp(&last, p, sizeof *p) == 0) {
        *a = cached;
        return 0;
    }
    last_cc = -1;
    CUtensorMap *maps[FMHA_TENSOR_COUNT] = {&a->q, &a->k, &a->v, &a->o};
    for (int t = 0; t < FMHA_TENSOR_COUNT; t++) {
        tmap_params m;
        char msg[700];
        fmha_tmap_params(p, (fmha_tensor)t, 0, fmha_tmap_mistake_of(p->faults), &m);
        const int rc = tmap_encode(&m, (void *)tensor_ptr(p, (fmha_tensor)t), cc_major, maps[t], msg, sizeof msg);
        if (rc) {
            snprintf(err, len, "%s map: %s", fmha_tensor_name((fmha_tensor)t), msg);
            return rc;
        }
    }
    a->p = *p;
    cached = *a;
    last = *p;
    last_cc = cc_major;
    return 0;
}
