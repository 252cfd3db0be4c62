/* Comparing a kernel's output with a fp64 reference (README, "How results are checked").
 *
 * One pass computes everything the correctness ladder needs: max abs error, relative L2 error,
 * cosine similarity, the worst coordinate, NaN/Inf positions that do not match the reference, and
 * the number of elements still holding the poison pattern (never written). */
#ifndef FMHA_VERIFY_H
#define FMHA_VERIFY_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t n;
    size_t unwritten;      /* elements whose bits still equal the poison pattern */
    size_t nonfinite_mismatch; /* NaN/Inf where the reference is finite, or the reverse / other sign */
    size_t exact_mismatch; /* elements with out != ref (for exact mode) */
    size_t zeros;          /* elements equal to 0 (an all-zero output is suspect) */
    double max_abs;        /* over positions where both are finite */
    double rel_l2;         /* ||out - ref|| / ||ref|| over finite positions */
    double cosine;         /* <out, ref> / (|out| |ref|) over finite positions */
    size_t worst;          /* index of the max abs error (or of the first non-finite mismatch) */
    double worst_out, worst_ref;
} verify_report;

/* Elements whose raw bits equal POISON_F32 / POISON_BF16 (host/init.h) count as unwritten. */
void verify_f32(const float *out, const double *ref, size_t n, verify_report *r);
void verify_bf16(const uint16_t *out, const double *ref, size_t n, verify_report *r);

/* Exact mode: pass when every element was written, is finite, equals the reference exactly and
 * the output is not all zeros. */
int verify_exact_ok(const verify_report *r);

/* Attention mode (the FlashAttention-3 rule): a kernel passes when its max abs error is at most
 * 2x the error of the emulating reference plus a floor, and nothing is unwritten or mis-NaN'd. */
int verify_attention_ok(const verify_report *kernel, const verify_report *emulating, double floor);

/* "b=0,h=3,i=17,j=4" from a flat index over a row-major shape (rank <= 6). */
void verify_format_coord(size_t idx, const int *dims, const char *const *names, int rank,
                         char *buf, size_t len);

/* One-line summary: "max_abs=.. rel_l2=.. cos=.. worst=[..] out=.. ref=.. unwritten=.. nan_mismatch=..". */
void verify_summary(const verify_report *r, const int *dims, const char *const *names, int rank,
                    char *buf, size_t len);

#endif
