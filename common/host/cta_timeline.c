#include "host/cta_timeline.h"

#include <stdio.h>
#include <stdlib.h>

#include "attn/decode_core.h"

/* the words a CTA stamps: the kernels' layout, DEC_TL_* */
enum { W_ENTRY = DEC_TL_ENTRY, W_FIRST = DEC_TL_FIRST_TILE, W_EXIT = DEC_TL_EXIT, W_SM = DEC_TL_SM, W_WORDS = DEC_TL_WORDS };

typedef struct {
    uint64_t entry, exit;
} span_t;

static int cmp_span_entry(const void *a, const void *b)
{
    const uint64_t x = ((const span_t *)a)->entry, y = ((const span_t *)b)->entry;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of n sorted values, by the nearest rank below (q = 0.5 with n even: the mean of the two). */
static double quantile(const double *v, int n, double q)
{
    if (n <= 0) return 0.0;
    if (q == 0.5 && n % 2 == 0) return 0.5 * (v[n / 2 - 1] + v[n / 2]);
    int i = (int)(q * n);
    return v[i < n ? i : n - 1];
}

int cta_timeline_summarise(const uint64_t *w, int ctas, cta_timeline_summary *s, char *why, size_t len)
{
    if (ctas <= 0) {
        snprintf(why, len, "no CTAs");
        return 1;
    }
    uint64_t t0 = UINT64_MAX, last = 0;
    for (int c = 0; c < ctas; c++) {
        const uint64_t *x = w + (size_t)c * W_WORDS;
        if (x[W_ENTRY] == 0 || x[W_EXIT] < x[W_ENTRY]) {
            snprintf(why, len, "CTA %d: %s", c, x[W_ENTRY] == 0 ? "no entry stamp (it did not run, or did not write)"
                                                                 : "its exit stamp is before its entry");
            return c + 1;
        }
        if (x[W_FIRST] && (x[W_FIRST] < x[W_ENTRY] || x[W_FIRST] > x[W_EXIT])) {
            snprintf(why, len, "CTA %d: its first tile's stamp is outside [entry, exit]", c);
            return c + 1;
        }
        if (x[W_ENTRY] < t0) t0 = x[W_ENTRY];
        if (x[W_EXIT] > last) last = x[W_EXIT];
    }
    double *ends = malloc(sizeof(double) * (size_t)ctas), *firsts = malloc(sizeof(double) * (size_t)ctas);
    span_t *order = malloc(sizeof(span_t) * (size_t)ctas);
    if (!ends || !firsts || !order) abort();
    int nf = 0;
    double busy = 0.0;
    for (int c = 0; c < ctas; c++) {
        const uint64_t *x = w + (size_t)c * W_WORDS;
        ends[c] = (double)(x[W_EXIT] - t0) * 1e-3;
        busy += (double)(x[W_EXIT] - x[W_ENTRY]) * 1e-3;
        if (x[W_FIRST]) firsts[nf++] = (double)(x[W_FIRST] - x[W_ENTRY]) * 1e-3;
        order[c].entry = x[W_ENTRY];
        order[c].exit = x[W_EXIT];
    }
    /* waves: in entry order, a CTA that enters after some CTA of the current wave has exited starts
     * the next wave (it took a slot that CTA freed) */
    qsort(order, (size_t)ctas, sizeof(span_t), cmp_span_entry);
    int waves = 1;
    uint64_t wave_first_exit = UINT64_MAX;
    for (int i = 0; i < ctas; i++) {
        if (order[i].entry > wave_first_exit) {
            waves++;
            wave_first_exit = UINT64_MAX;
        }
        if (order[i].exit < wave_first_exit) wave_first_exit = order[i].exit;
    }
    free(order);
    qsort(ends, (size_t)ctas, sizeof(double), cmp_double);
    qsort(firsts, (size_t)nf, sizeof(double), cmp_double);
    s->ctas = ctas;
    s->waves = waves;
    s->span_us = (double)(last - t0) * 1e-3;
    s->first_tile_us = quantile(firsts, nf, 0.5);
    s->end_p10_us = quantile(ends, ctas, 0.1);
    s->end_median_us = quantile(ends, ctas, 0.5);
    s->end_last_us = ends[ctas - 1];
    s->mean_active = s->span_us > 0.0 ? busy / s->span_us : (double)ctas;
    free(ends);
    free(firsts);
    return 0;
}

int cta_timeline_write_csv(const char *path, const uint64_t *w, int ctas)
{
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    uint64_t t0 = UINT64_MAX;
    for (int c = 0; c < ctas; c++)
        if (w[(size_t)c * W_WORDS + W_ENTRY] && w[(size_t)c * W_WORDS + W_ENTRY] < t0) t0 = w[(size_t)c * W_WORDS + W_ENTRY];
    fprintf(f, "cta,sm,entry_us,first_tile_us,exit_us\n");
    for (int c = 0; c < ctas; c++) {
        const uint64_t *x = w + (size_t)c * W_WORDS;
        const double us = 1e-3;
        fprintf(f, "%d,%llu,%.3f,", c, (unsigned long long)x[W_SM], x[W_ENTRY] ? (double)(x[W_ENTRY] - t0) * us : 0.0);
        if (x[W_FIRST]) fprintf(f, "%.3f", (double)(x[W_FIRST] - t0) * us);
        fprintf(f, ",%.3f\n", x[W_EXIT] >= t0 ? (double)(x[W_EXIT] - t0) * us : 0.0);
    }
    return fclose(f) != 0;
}

void cta_timeline_describe(const cta_timeline_summary *s, char *out, size_t len)
{
    snprintf(out, len,
             "timeline: %d CTAs, %d wave%s, span %.1f us, first tile %.1f us (median), ends p10 %.1f / median %.1f / "
             "last %.1f us, %.0f CTAs resident on average",
             s->ctas, s->waves, s->waves == 1 ? "" : "s", s->span_us, s->first_tile_us, s->end_p10_us, s->end_median_us,
             s->end_last_us, s->mean_active);
}
