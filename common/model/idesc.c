#include "model/idesc.h"

#include <stdio.h>

const char *idesc_fmt_name(int kind, unsigned code, int is_d)
{
    if (is_d) return code == DFMT_F16 ? "F16" : code == DFMT_F32 ? "F32" : code == DFMT_S32 ? "S32" : "?";
    if (kind == MMA_KIND_F16) return code == FMT_F16 ? "F16" : code == FMT_BF16 ? "BF16" : code == 2 ? "TF32" : "?";
    switch (code) {
    case FMT_E4M3: return "E4M3";
    case FMT_E5M2: return "E5M2";
    case FMT_E2M3: return "E2M3";
    case FMT_E3M2: return "E3M2";
    case FMT_E2M1: return "E2M1";
    default: return "?";
    }
}

int idesc_k_per_mma(int kind) { return kind == MMA_KIND_F8F6F4 ? 32 : 16; }

int idesc_check(const idesc_fields *f, int kind, char *err, size_t len, char *warn, size_t wlen)
{
    if (warn && wlen) warn[0] = '\0';
    if (f->reserved) {
        snprintf(err, len, "reserved bits set (0x%08X): bit 23 set usually means M was written at bit "
                 "23 instead of 24", f->reserved);
        return 1;
    }
    if (f->sparse) { snprintf(err, len, "sparsity is not modelled"); return 1; }
    if (f->m != 64 && f->m != 128) {
        snprintf(err, len, "M=%u: cta_group::1 dense MMAs take M = 64 or 128 (bits 24-28 hold M>>4)", f->m);
        return 1;
    }
    unsigned step = 8;
    if (kind == MMA_KIND_F8F6F4 && f->b_mn) step = 16; /* 8-bit B MN-major: N step 16 */
    if (f->n < 8 || f->n > 256 || f->n % step) {
        snprintf(err, len, "N=%u: must be in [8, 256] in steps of %u (bits 17-22 hold N>>3)", f->n, step);
        return 1;
    }
    if (kind == MMA_KIND_F16) {
        if (f->a_fmt > FMT_BF16 || f->b_fmt > FMT_BF16) {
            snprintf(err, len, "kind::f16 takes A/B formats F16 (0) or BF16 (1)");
            return 1;
        }
        if (f->a_fmt != f->b_fmt) { snprintf(err, len, "kind::f16: A and B must have the same format"); return 1; }
        if (f->d_fmt == DFMT_F16 && f->a_fmt == FMT_BF16) {
            snprintf(err, len, "bf16 inputs need an F32 accumulator (D format 1)");
            return 1;
        }
        if (f->d_fmt != DFMT_F16 && f->d_fmt != DFMT_F32) {
            snprintf(err, len, "kind::f16: D format must be F16 (0) or F32 (1)");
            return 1;
        }
    } else {
        unsigned ok[] = {FMT_E4M3, FMT_E5M2, FMT_E2M3, FMT_E3M2, FMT_E2M1};
        int a_ok = 0, b_ok = 0;
        for (int i = 0; i < 5; i++) { a_ok |= f->a_fmt == ok[i]; b_ok |= f->b_fmt == ok[i]; }
        if (!a_ok || !b_ok) { snprintf(err, len, "kind::f8f6f4: A/B format must be E4M3/E5M2/E2M3/E3M2/E2M1"); return 1; }
        if ((f->a_mn && f->a_fmt > FMT_E5M2) || (f->b_mn && f->b_fmt > FMT_E5M2)) {
            snprintf(err, len, "6- and 4-bit operands cannot be MN-major (transposed)");
            return 1;
        }
        if (f->d_fmt != DFMT_F16 && f->d_fmt != DFMT_F32) {
            snprintf(err, len, "kind::f8f6f4: D format must be F16 (0) or F32 (1)");
            return 1;
        }
    }
    if (f->m == 128 && f->n % 16 && warn)
        snprintf(warn, wlen, "N=%u with M=128: PTX allows N%%8, but CUTLASS's TS form and DeepGEMM require "
                 "N%%16; prefer a multiple of 16", f->n);
    return 0;
}
