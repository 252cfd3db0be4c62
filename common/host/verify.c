#include "host/verify.h"

#include <math.h>
#include <stdio.h>

#include "host/bf16.h"
#include "host/init.h"

typedef struct {
    double dot, nout, nref, ndiff;
    size_t first_unwritten, first_nonfinite, worst_finite;
    double wf_out, wf_ref, nf_out, nf_ref;
} sums;

static void start(verify_report *r, sums *s, size_t n)
{
    *r = (verify_report){0};
    *s = (sums){0};
    r->n = n;
    r->worst = s->first_unwritten = s->first_nonfinite = s->worst_finite = (size_t)-1;
}

/* Accumulate one element. Non-finite handling: both NaN, or both the same infinity, match. */
static void step(verify_report *r, sums *s, size_t i, double o, double ref, int unwritten)
{
    if (unwritten) {
        if (r->unwritten++ == 0) s->first_unwritten = i;
        r->exact_mismatch++;
        return;
    }
    if (o == 0.0) r->zeros++;
    if (!isfinite(o) || !isfinite(ref)) {
        int match = (isnan(o) && isnan(ref)) || (isinf(o) && isinf(ref) && (o > 0) == (ref > 0));
        if (!match) {
            if (r->nonfinite_mismatch++ == 0) { s->first_nonfinite = i; s->nf_out = o; s->nf_ref = ref; }
            r->exact_mismatch++;
        }
        return;
    }
    double d = fabs(o - ref);
    if (o != ref) r->exact_mismatch++;
    if (d > r->max_abs || s->worst_finite == (size_t)-1) {
        if (d > r->max_abs) r->max_abs = d;
        s->worst_finite = i; s->wf_out = o; s->wf_ref = ref;
    }
    s->dot += o * ref;
    s->nout += o * o;
    s->nref += ref * ref;
    s->ndiff += (o - ref) * (o - ref);
}

/* The worst coordinate, by severity: a NaN/Inf mismatch, else an unwritten element, else the
 * largest finite error. */
static void finish(verify_report *r, const sums *s, double unwritten_out, const double *ref)
{
    r->rel_l2 = s->nref > 0 ? sqrt(s->ndiff / s->nref) : sqrt(s->ndiff);
    if (s->nout > 0 && s->nref > 0) r->cosine = s->dot / sqrt(s->nout * s->nref);
    else r->cosine = (s->nout == 0 && s->nref == 0) ? 1.0 : 0.0;
    if (s->first_nonfinite != (size_t)-1) {
        r->worst = s->first_nonfinite; r->worst_out = s->nf_out; r->worst_ref = s->nf_ref;
    } else if (s->first_unwritten != (size_t)-1) {
        r->worst = s->first_unwritten; r->worst_out = unwritten_out; r->worst_ref = ref[r->worst];
    } else if (s->worst_finite != (size_t)-1) {
        r->worst = s->worst_finite; r->worst_out = s->wf_out; r->worst_ref = s->wf_ref;
    }
}

void verify_f32(const float *out, const double *ref, size_t n, verify_report *r)
{
    sums s;
    start(r, &s, n);
    for (size_t i = 0; i < n; i++)
        step(r, &s, i, (double)out[i], ref[i], f32_bits(out[i]) == POISON_F32);
    finish(r, &s, NAN, ref);
}

void verify_bf16(const uint16_t *out, const double *ref, size_t n, verify_report *r)
{
    sums s;
    start(r, &s, n);
    for (size_t i = 0; i < n; i++)
        step(r, &s, i, (double)bf16_to_f32(out[i]), ref[i], out[i] == POISON_BF16);
    finish(r, &s, NAN, ref);
}

int verify_exact_ok(const verify_report *r)
{
    return r->n > 0 && r->unwritten == 0 && r->nonfinite_mismatch == 0 && r->exact_mismatch == 0 &&
           r->zeros < r->n;
}

int verify_attention_ok(const verify_report *kernel, const verify_report *emulating, double floor)
{
    return kernel->n > 0 && kernel->unwritten == 0 && kernel->nonfinite_mismatch == 0 &&
           kernel->max_abs <= 2.0 * emulating->max_abs + floor;
}

void verify_format_coord(size_t idx, const int *dims, const char *const *names, int rank,
                         char *buf, size_t len)
{
    int coord[6] = {0};
    size_t rem = idx;
    for (int a = rank - 1; a >= 0; a--) {
        coord[a] = (int)(rem % (size_t)dims[a]);
        rem /= (size_t)dims[a];
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int a = 0; a < rank && used < len; a++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%d", a ? "," : "", names[a], coord[a]);
}

void verify_summary(const verify_report *r, const int *dims, const char *const *names, int rank,
                    char *buf, size_t len)
{
    char coord[128] = "-";
    if (r->worst != (size_t)-1) verify_format_coord(r->worst, dims, names, rank, coord, sizeof coord);
    snprintf(buf, len,
             "max_abs=%.3e rel_l2=%.3e cos=%.6f worst=[%s] out=%.6g ref=%.6g unwritten=%zu "
             "nonfinite_mismatch=%zu",
             r->max_abs, r->rel_l2, r->cosine, coord, r->worst_out, r->worst_ref, r->unwritten,
             r->nonfinite_mismatch);
}
