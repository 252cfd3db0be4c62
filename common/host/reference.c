#include "host/reference.h"

#include <math.h>
#include <stdlib.h>

#include "host/bf16.h"

int ref_last_visible_key(const attn_shape *s, int row)
{
    if (!s->causal) return s->skv - 1;
    int last = row + (s->skv - s->sq);
    if (last > s->skv - 1) last = s->skv - 1;
    return last < 0 ? -1 : last;
}

static size_t q_index(const attn_shape *s, int b, int h, int i)
{
    return (((size_t)b * s->hq + h) * s->sq + i) * (size_t)s->d;
}

static size_t kv_index(const attn_shape *s, int b, int hk, int j)
{
    return (((size_t)b * s->hkv + hk) * s->skv + j) * (size_t)s->d;
}

/* One (batch, head, row): scores, softmax, P.V. round_p selects the variant (reference.h). */
static void attention_row(const attn_shape *s, const float *q, const float *k, const float *v,
                          int b, int h, int i, double *scores, double *o_row, double *lse_out,
                          int round_p)
{
    const int d = s->d;
    const int hk = h / (s->hq / s->hkv);
    const float *qr = q + q_index(s, b, h, i);
    const int last = ref_last_visible_key(s, i);

    for (int c = 0; c < d; c++) o_row[c] = 0.0;
    if (last < 0) { /* fully masked row: defined as O = 0, LSE = -inf */
        if (lse_out) *lse_out = -INFINITY;
        return;
    }
    double m = -INFINITY;
    for (int j = 0; j <= last; j++) {
        const float *kr = k + kv_index(s, b, hk, j);
        double acc = 0.0;
        for (int c = 0; c < d; c++) acc += (double)qr[c] * (double)kr[c];
        scores[j] = acc * s->scale;
        if (scores[j] > m) m = scores[j];
    }
    double l = 0.0;
    const double off = round_p >= REF_P_BF16_OFF_MAX ? exp2((round_p - REF_P_BF16_OFF_MAX + 1) / 8.0) : 1.0;
    for (int j = 0; j <= last; j++) {
        double p = exp(scores[j] - m);
        l += p;
        double pv = p;
        if (round_p == REF_P_BF16) pv = (double)bf16_round((float)p);
        else if (round_p >= REF_P_BF16_OFF_MAX) pv = (double)bf16_round((float)(p * off)) / off;
        const float *vr = v + kv_index(s, b, hk, j);
        for (int c = 0; c < d; c++) o_row[c] += pv * (double)vr[c];
    }
    for (int c = 0; c < d; c++) o_row[c] /= l;
    if (lse_out) *lse_out = m + log(l);
}

void ref_attention_row(const attn_shape *s, const float *q, const float *k, const float *v, int b, int h,
                       int i, int round_p, double *scores, double *o_row, double *lse)
{
    attention_row(s, q, k, v, b, h, i, scores, o_row, lse, round_p);
}

static void attention(const attn_shape *s, const float *q, const float *k, const float *v,
                      double *o, double *lse, int round_p)
{
    double *scores = malloc(sizeof(double) * (size_t)(s->skv > 0 ? s->skv : 1));
    if (!scores) abort();
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->hq; h++)
            for (int i = 0; i < s->sq; i++) {
                size_t row = ((size_t)b * s->hq + h) * s->sq + i;
                attention_row(s, q, k, v, b, h, i, scores, o + row * (size_t)s->d,
                              lse ? lse + row : NULL, round_p);
            }
    free(scores);
}

void ref_attention(const attn_shape *s, const float *q, const float *k, const float *v,
                   double *o, double *lse)
{
    attention(s, q, k, v, o, lse, 0);
}

void ref_attention_bf16p(const attn_shape *s, const float *q, const float *k, const float *v,
                         double *o, double *lse)
{
    attention(s, q, k, v, o, lse, 1);
}

void ref_qk(const attn_shape *s, const float *q, const float *k, double *out_s)
{
    for (int b = 0; b < s->b; b++)
        for (int h = 0; h < s->hq; h++) {
            int hk = h / (s->hq / s->hkv);
            for (int i = 0; i < s->sq; i++) {
                const float *qr = q + q_index(s, b, h, i);
                double *srow = out_s + (((size_t)b * s->hq + h) * s->sq + i) * (size_t)s->skv;
                for (int j = 0; j < s->skv; j++) {
                    const float *kr = k + kv_index(s, b, hk, j);
                    double acc = 0.0;
                    for (int c = 0; c < s->d; c++) acc += (double)qr[c] * (double)kr[c];
                    srow[j] = acc * s->scale;
                }
            }
        }
}
