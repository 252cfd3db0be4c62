#include "host/fp8_attention.h"

#include <math.h>
#include <stdlib.h>

#include "host/fp8.h"

void fp8_attention_row(const paged_kv *c, int b, int hk, const float *q, int n, double scale, unsigned faults, int row,
                       double *o, double *lse)
{
    const int d = c->d;
    uint8_t q8[1024];
    float sq;
    e4m3_quantise_rows(q, 1, (size_t)d, 0.0f, 1, q8, &sq, NULL);
    double *s = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    double m = -INFINITY;
    for (int j = 0; j < n; j++) {
        const size_t r = paged_kv_row(c, b, j, hk);
        const uint8_t *k8 = c->k + r * d;
        float dot = 0.0f; /* the MMA: e4m3 x e4m3 products summed in f32 */
        for (int e = 0; e < d; e++) dot += e4m3_decode(q8[e]) * e4m3_decode(k8[e]);
        double colscale = c->k_scale[r];
        if (faults & FP8_FAULT_K_SCALE_ON_ROWS) colscale = c->k_scale[paged_kv_row(c, b, row < n ? row : 0, hk)];
        if (faults & FP8_FAULT_K_SCALE_DROPPED) colscale = 1.0;
        s[j] = scale * (double)sq * colscale * dot;
        if (s[j] > m) m = s[j];
    }
    for (int e = 0; e < d; e++) o[e] = 0.0;
    if (n == 0) {
        *lse = -INFINITY;
        free(s);
        return;
    }
    double l = 0.0, pmax = 0.0;
    for (int j = 0; j < n; j++) {
        s[j] = exp(s[j] - m); /* P_j */
        l += s[j];
        const double pv = (faults & FP8_FAULT_V_SCALE_ON_O_ROWS) ? s[j] : s[j] * c->v_scale[paged_kv_row(c, b, j, hk)];
        if (pv > pmax) pmax = pv;
    }
    const double sp = pmax > 0 ? pmax / 448.0 : 1.0;
    for (int j = 0; j < n; j++) {
        const size_t r = paged_kv_row(c, b, j, hk);
        const double pv = (faults & FP8_FAULT_V_SCALE_ON_O_ROWS) ? s[j] : s[j] * c->v_scale[r];
        const float p8 = e4m3_decode(e4m3_encode((float)(pv / sp), 1));
        const uint8_t *v8 = c->v + r * d;
        for (int e = 0; e < d; e++) o[e] += (double)(p8 * e4m3_decode(v8[e])); /* f32 products, summed */
    }
    double oscale = sp / l;
    /* FG17 variant: V's scale applied to O's rows, i.e. one token's scale (here: the row's) for all */
    if (faults & FP8_FAULT_V_SCALE_ON_O_ROWS) oscale *= c->v_scale[paged_kv_row(c, b, row < n ? row : 0, hk)];
    for (int e = 0; e < d; e++) o[e] *= oscale;
    *lse = m + log(l);
    free(s);
}
