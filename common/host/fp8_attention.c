#include "host/fp8_attention.h"

#include <math.h>
#include <stdlib.h>

#include "attn/decode_core.h"
#include "host/fp8.h"

void fp8_attention_row(const paged_kv *c, int b, int hk, const float *q, int n, double scale, unsigned faults, int row,
                       int tile, double *o, double *lse)
{
    const int d = c->d;
    uint8_t q8[1024];
    float sq;
    e4m3_quantise_rows(q, 1, (size_t)d, 0.0f, 1, q8, &sq, NULL);
    for (int e = 0; e < d; e++) o[e] = 0.0;
    if (n <= 0) {
        *lse = -INFINITY;
        return;
    }
    double *s = malloc(sizeof(double) * (size_t)n);
    const size_t row_r = paged_kv_row(c, b, row < n ? row : 0, hk); /* the FG17 variants' wrong token */
    double m = -INFINITY;
    for (int j = 0; j < n; j++) {
        const size_t r = paged_kv_row(c, b, j, hk);
        const uint8_t *k8 = c->k + r * d;
        float dot = 0.0f; /* the MMA: e4m3 x e4m3 products summed in f32 */
        for (int e = 0; e < d; e++) dot += e4m3_decode(q8[e]) * e4m3_decode(k8[e]);
        double colscale = c->k_scale[r];
        if (faults & FP8_FAULT_K_SCALE_ON_ROWS) colscale = c->k_scale[row_r];
        if (faults & FP8_FAULT_K_SCALE_DROPPED) colscale = 1.0;
        s[j] = scale * (double)sq * colscale * dot;
        if (s[j] > m) m = s[j];
    }
    double l = 0.0;
    for (int j = 0; j < n; j++) {
        s[j] = exp(s[j] - m); /* P_j */
        l += s[j];
    }
    if (tile < 1) tile = n;
    for (int t0 = 0; t0 < n; t0 += tile) {
        const int t1 = t0 + tile < n ? t0 + tile : n;
        float pmax = 0.0f, svmax = 0.0f;
        for (int j = t0; j < t1; j++) {
            const float sv = c->v_scale[paged_kv_row(c, b, j, hk)];
            const float pv = (faults & FP8_FAULT_V_SCALE_ON_O_ROWS) ? (float)s[j] : (float)s[j] * sv;
            pmax = fmaxf(pmax, pv);
            svmax = fmaxf(svmax, sv);
        }
        const float sp = dec_p_scale(pmax, svmax);
        float acc[1024] = {0}; /* one tile's MMA: f32 sums of e4m3 products */
        for (int j = t0; j < t1; j++) {
            const size_t r = paged_kv_row(c, b, j, hk);
            const float pv = (faults & FP8_FAULT_V_SCALE_ON_O_ROWS) ? (float)s[j] : (float)s[j] * c->v_scale[r];
            const float p8 = e4m3_decode(e4m3_encode(pv / sp, 1));
            const uint8_t *v8 = c->v + r * d;
            for (int e = 0; e < d; e++) acc[e] += p8 * e4m3_decode(v8[e]);
        }
        for (int e = 0; e < d; e++) o[e] += (double)sp * acc[e];
    }
    double oscale = 1.0 / l;
    /* FG17 variant: V's scale applied to O's rows, i.e. one token's scale (here: the row's) for all */
    if (faults & FP8_FAULT_V_SCALE_ON_O_ROWS) oscale *= c->v_scale[row_r];
    for (int e = 0; e < d; e++) o[e] *= oscale;
    *lse = m + log(l);
    free(s);
}
