#include "model/mma_emu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/frag_map.h"
#include "model/numfmt.h"

static const char *const names[EMU_ERR_COUNT] = {"EMU_OK", "EMU_ERR_IDESC", "EMU_ERR_DESC",
                                                 "EMU_ERR_BOUNDS", "EMU_ERR_TMEM", "EMU_ERR_FORMAT"};

const char *emu_err_name(emu_err e) { return (e >= 0 && e < EMU_ERR_COUNT) ? names[e] : "?"; }

static emu_err fail(emu_status *st, emu_err e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static emu_err fail(emu_status *st, emu_err e, const char *fmt, ...)
{
    if (st) {
        va_list ap;
        va_start(ap, fmt);
        int n = snprintf(st->msg, sizeof st->msg, "%s: ", emu_err_name(e));
        vsnprintf(st->msg + n, sizeof st->msg - (size_t)n, fmt, ap);
        va_end(ap);
        st->code = e;
    }
    return e;
}

int emu_elem_bytes(int kind, unsigned fmt)
{
    if (kind == MMA_KIND_F16) return fmt <= FMT_BF16 ? 2 : 0;
    return (fmt == FMT_E4M3 || fmt == FMT_E5M2) ? 1 : 0;
}

double emu_decode(int kind, unsigned fmt, const uint8_t *p)
{
    if (kind == MMA_KIND_F16) {
        uint16_t h = (uint16_t)(p[0] | (p[1] << 8));
        return fmt == FMT_BF16 ? decode_bf16(h) : decode_f16(h);
    }
    return fmt == FMT_E4M3 ? decode_e4m3(p[0]) : decode_e5m2(p[0]);
}

emu_err emu_read_operand(const smem_image *img, const smem_desc_fields *d, operand_major major,
                         int kind, unsigned fmt, int mn, int k, double *out, emu_status *st)
{
    int eb = emu_elem_bytes(kind, fmt);
    if (!eb) return fail(st, EMU_ERR_FORMAT, "format %u of kind %d is not modelled", fmt, kind);
    uint32_t addr = smem_desc_addr(major, d->swz, eb, d->start, d->lbo, d->sbo, mn, k);
    if (addr < img->base || addr + (uint32_t)eb > img->base + img->size)
        return fail(st, EMU_ERR_BOUNDS, "element (mn=%d, k=%d) at SMEM 0x%X lies outside the image "
                    "[0x%X, 0x%X)", mn, k, addr, img->base, img->base + img->size);
    *out = emu_decode(kind, fmt, img->bytes + (addr - img->base));
    return EMU_OK;
}

/* Descriptor sanity shared by both generations. */
static emu_err check_desc(const smem_desc_fields *d, int sm100, const char *which, emu_status *st)
{
    if (sm100 && d->version != 1)
        return fail(st, EMU_ERR_DESC, "%s descriptor: bits 46-48 = %u, must be 0b001 on sm100 (an sm90 "
                    "descriptor reused without the fixed bit)", which, d->version);
    if (d->swz == SWZ_INVALID)
        return fail(st, EMU_ERR_DESC, "%s descriptor: swizzle code %u is not defined", which, d->swizzle_code);
    if (d->swz == SWZ_128B_BASE32B)
        return fail(st, EMU_ERR_DESC, "%s descriptor: 128B-with-32B-atoms swizzle is not modelled", which);
    if (d->base_offset)
        return fail(st, EMU_ERR_DESC, "%s descriptor: base offset %u is not modelled (tiles start on "
                    "their swizzle boundary)", which, d->base_offset);
    if (d->lbo_mode)
        return fail(st, EMU_ERR_DESC, "%s descriptor: absolute LBO mode (bit 52) is sm_103a only", which);
    return EMU_OK;
}

/* Lane of accumulator row `row` for an M-row MMA whose D address has lane `lane0`. */
static int d_lane(int m, int lane0, int row) { return m == 128 ? lane0 + row : 32 * (row / 16) + lane0 + row % 16; }

emu_err emu_tcgen05_mma(tmem_model *tm, const smem_image *img, uint32_t d_tmem, int a_from_tmem,
                        uint32_t a_tmem, uint64_t adesc, uint64_t bdesc, uint32_t idesc, int kind,
                        int accumulate, emu_status *st)
{
    idesc_fields f;
    idesc_decode(idesc, &f);
    char err[200], warn[200];
    if (idesc_check(&f, kind, err, sizeof err, warn, sizeof warn))
        return fail(st, EMU_ERR_IDESC, "idesc 0x%08X: %s", idesc, err);
    const int M = (int)f.m, N = (int)f.n, K = idesc_k_per_mma(kind);
    const int d_lane0 = tmem_addr_lane(d_tmem), d_col0 = tmem_addr_col(d_tmem);
    if ((M == 128 && d_lane0 != 0) || (M == 64 && d_lane0 != 0 && d_lane0 != 16))
        return fail(st, EMU_ERR_TMEM, "D address lane %d: M=%d needs lane 0%s", d_lane0, M, M == 64 ? " or 16" : "");
    for (int c = d_col0; c < d_col0 + N; c++)
        if (!tmem_col_allocated(tm, c))
            return fail(st, EMU_ERR_TMEM, "D columns [%d, %d) reach column %d, which is not allocated",
                        d_col0, d_col0 + N, c);

    smem_desc_fields da, db;
    sm100_desc_decode(bdesc, &db);
    emu_err e = check_desc(&db, 1, "B", st);
    if (e) return e;
    if (!a_from_tmem) {
        sm100_desc_decode(adesc, &da);
        if ((e = check_desc(&da, 1, "A", st))) return e;
    } else if (f.a_mn) {
        return fail(st, EMU_ERR_IDESC, "A from TMEM is always K-major: idesc bit 15 must be 0");
    }
    const int a_lane0 = tmem_addr_lane(a_tmem), a_col0 = tmem_addr_col(a_tmem);
    if (a_from_tmem && a_lane0 != d_lane0)
        return fail(st, EMU_ERR_TMEM, "TS MMA: A lane %d and D lane %d must use the same alignment", a_lane0, d_lane0);

    double *a = malloc(sizeof(double) * (size_t)M * K), *b = malloc(sizeof(double) * (size_t)N * K);
    if (!a || !b) abort();
    for (int m = 0; m < M && !e; m++)
        for (int k = 0; k < K && !e; k++) {
            if (!a_from_tmem) {
                e = emu_read_operand(img, &da, f.a_mn ? MAJOR_MN : MAJOR_K, kind, f.a_fmt, m, k, &a[m * K + k], st);
                continue;
            }
            /* TS: row m -> its lane; K packed 32/eb elements per column, lowest k in the low bits */
            int eb = emu_elem_bytes(kind, f.a_fmt), per = 4 / eb;
            int lane = d_lane(M, a_lane0, m), col = a_col0 + k / per;
            if (!tmem_col_allocated(tm, col)) {
                e = fail(st, EMU_ERR_TMEM, "TS MMA: A reads column %d, which is not allocated", col);
                break;
            }
            uint32_t w = tm->cell[lane][col];
            uint8_t bytes[4] = {(uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16), (uint8_t)(w >> 24)};
            a[m * K + k] = emu_decode(kind, f.a_fmt, bytes + (k % per) * eb);
        }
    for (int n = 0; n < N && !e; n++)
        for (int k = 0; k < K && !e; k++)
            e = emu_read_operand(img, &db, f.b_mn ? MAJOR_MN : MAJOR_K, kind, f.b_fmt, n, k, &b[n * K + k], st);
    if (!e) {
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += a[m * K + k] * b[n * K + k];
                uint32_t *cell = &tm->cell[d_lane(M, d_lane0, m)][d_col0 + n];
                float old;
                memcpy(&old, cell, 4);
                float r = (float)(accumulate ? (double)old + s : s);
                memcpy(cell, &r, 4);
            }
    }
    free(a);
    free(b);
    return e;
}

/* Shared body of the two wgmma forms: a[m*K+k] already read. */
static void wgmma_accumulate(float *acc, const double *a, const double *b, int n, int K, int scale_d)
{
    for (int tid = 0; tid < 128; tid++)
        for (int i = 0; i < n / 2; i++) {
            int row, col;
            wgmma_acc_map(tid, i, &row, &col);
            double s = 0;
            for (int k = 0; k < K; k++) s += a[row * K + k] * b[col * K + k];
            float *d = &acc[tid * (n / 2) + i];
            *d = (float)(scale_d ? (double)*d + s : s);
        }
}

static emu_err wgmma_check(int n, int kind, unsigned fmt, int trans_a, int trans_b, emu_status *st)
{
    if (n < 8 || n > 256 || n % 8) return fail(st, EMU_ERR_IDESC, "wgmma N=%d: must be 8..256 in steps of 8", n);
    if (!emu_elem_bytes(kind, fmt)) return fail(st, EMU_ERR_FORMAT, "format %u of kind %d is not modelled", fmt, kind);
    if (kind == MMA_KIND_F8F6F4 && (trans_a || trans_b))
        return fail(st, EMU_ERR_IDESC, "FP8 wgmma takes no transpose: both operands must be K-major (FG20)");
    return EMU_OK;
}

emu_err emu_wgmma_ss(float *acc, const smem_image *img, uint64_t adesc, uint64_t bdesc, int n,
                     int kind, unsigned fmt, int trans_a, int trans_b, int scale_d, emu_status *st)
{
    emu_err e = wgmma_check(n, kind, fmt, trans_a, trans_b, st);
    if (e) return e;
    const int M = 64, K = idesc_k_per_mma(kind);
    smem_desc_fields da, db;
    sm90_desc_decode(adesc, &da);
    sm90_desc_decode(bdesc, &db);
    if ((e = check_desc(&da, 0, "A", st)) || (e = check_desc(&db, 0, "B", st))) return e;
    double *a = malloc(sizeof(double) * M * K), *b = malloc(sizeof(double) * (size_t)n * K);
    if (!a || !b) abort();
    for (int m = 0; m < M && !e; m++)
        for (int k = 0; k < K && !e; k++)
            e = emu_read_operand(img, &da, trans_a ? MAJOR_MN : MAJOR_K, kind, fmt, m, k, &a[m * K + k], st);
    for (int c = 0; c < n && !e; c++)
        for (int k = 0; k < K && !e; k++)
            e = emu_read_operand(img, &db, trans_b ? MAJOR_MN : MAJOR_K, kind, fmt, c, k, &b[c * K + k], st);
    if (!e) wgmma_accumulate(acc, a, b, n, K, scale_d);
    free(a);
    free(b);
    return e;
}

emu_err emu_wgmma_rs(float *acc, const uint32_t *a_regs, const smem_image *img, uint64_t bdesc, int n,
                     unsigned fmt, int trans_b, int scale_d, emu_status *st)
{
    emu_err e = wgmma_check(n, MMA_KIND_F16, fmt, 0, trans_b, st);
    if (e) return e;
    const int K = 16;
    smem_desc_fields db;
    sm90_desc_decode(bdesc, &db);
    if ((e = check_desc(&db, 0, "B", st))) return e;
    double a[64 * 16], *b = malloc(sizeof(double) * (size_t)n * K);
    if (!b) abort();
    for (int tid = 0; tid < 128; tid++)
        for (int v = 0; v < 8; v++) {
            int row, k;
            wgmma_a_map(tid, v, &row, &k);
            uint32_t w = a_regs[tid * 4 + v / 2];
            uint8_t bytes[2] = {(uint8_t)(w >> (16 * (v & 1))), (uint8_t)(w >> (16 * (v & 1) + 8))};
            a[row * K + k] = emu_decode(MMA_KIND_F16, fmt, bytes);
        }
    for (int c = 0; c < n && !e; c++)
        for (int k = 0; k < K && !e; k++)
            e = emu_read_operand(img, &db, trans_b ? MAJOR_MN : MAJOR_K, MMA_KIND_F16, fmt, c, k, &b[c * K + k], st);
    if (!e) wgmma_accumulate(acc, a, b, n, K, scale_d);
    free(b);
    return e;
}
