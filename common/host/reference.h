/* fp64 host references.
 *
 * Layouts (contiguous, element strides implied):
 *   Q   [B, Hq,  Sq,  D]      K, V [B, Hkv, Skv, D]      O [B, Hq, Sq, D]     LSE [B, Hq, Sq]
 * GQA/MQA: query head h reads KV head h / (Hq / Hkv).
 * Causal: bottom-right aligned, i.e. query row i sees keys j <= i + (Skv - Sq). When Sq > Skv the
 * first Sq - Skv rows see no key at all: those rows get O = 0 and LSE = -inf, never NaN.
 * LSE is the natural log of sum_j exp(scale * q.k_j) (with the scale), for a split-KV merge. */
#ifndef FMHA_REFERENCE_H
#define FMHA_REFERENCE_H

#include <stddef.h>

typedef struct {
    int b, hq, hkv, sq, skv, d;
    double scale;
    int causal;
} attn_shape;

/* Last key index row i may see (inclusive), or -1 if none; skv-1 without the causal mask. */
int ref_last_visible_key(const attn_shape *s, int row);

/* Exact fp64 attention. lse may be NULL. */
void ref_attention(const attn_shape *s, const float *q, const float *k, const float *v,
                   double *o, double *lse);

/* The "emulating" reference (README, "How results are checked"): the same, but P = exp(s - m) is rounded to bf16
 * before P.V, as a kernel that feeds P to a bf16 MMA does; the row sum l uses the unrounded P. Its
 * error against ref_attention is the yardstick for a kernel's error. */
void ref_attention_bf16p(const attn_shape *s, const float *q, const float *k, const float *v,
                         double *o, double *lse);

/* One row (b, h, i) of either reference: o_row[D], *lse (may be NULL). scores is scratch of Skv
 * doubles. round_p: REF_P_EXACT (0) the exact reference, REF_P_BF16 (1) the emulating one,
 * REF_P_BF16_OFF_MAX + k (k = 0..6) the emulating one for a kernel whose row max lags (stage F's
 * --rescale-th): there P = exp2(s - m') with m' up to N below the row's max, so a tile's largest P
 * is no longer exactly 1 and bf16 rounds P at scales the reference cannot know. Variant k rounds
 * every P at the scale 2^((k + 1) / 8) (P times it, rounded, divided by it); the largest P is
 * rounded too (the fp64 scaling adds 1e-16, nothing next to bf16's 2^-8). With REF_P_BF16 (scale
 * 1, and any power of two rounds alike) they are eight phases of the bf16 grid: where one key
 * dominates a row, O's error is that key's P rounding, and they sample it close to its worst.
 * For checking a sample of rows. */
enum { REF_P_EXACT = 0, REF_P_BF16 = 1, REF_P_BF16_OFF_MAX = 2, REF_P_OFF_SCALES = 7 };
void ref_attention_row(const attn_shape *s, const float *q, const float *k, const float *v, int b, int h,
                       int i, int round_p, double *scores, double *o_row, double *lse);

/* S = scale * Q K^T, S [B, Hq, Sq, Skv] (stage A). */
void ref_qk(const attn_shape *s, const float *q, const float *k, double *out_s);

#endif
