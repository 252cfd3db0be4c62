/* The FP8 attention of stage D, emulated on the host: one decode query row against a sequence of
 * the paged FP8 cache, with every rounding where the kernels round, so its error against the
 * fp64 attention over the dequantised cache is the yardstick for the kernel's (the FA3 rule).
 *
 * The scale scheme (notes/fp8-scales.md): K and V are e4m3 with one scale per (token, head), sk_j
 * and sv_j; the query row is quantised with its own scale sq (absmax / 448). Then
 *   S_j  = sq sk_j (q8 . k8_j)                     K's scale on the columns of S
 *   P_j  = exp(scale S_j - m),  l = sum_j P_j      (f32, unquantised)
 *   per KV tile t of `tile` keys (the kernels' Bc):
 *   P'_j = P_j sv_j                                V's scale folded into P's columns
 *   sp_t = dec_p_scale(max_{j in t} P'_j, max_{j in t} sv_j),  p8_j = e4m3(P'_j / sp_t)
 *   O    = sum_t sp_t sum_{j in t} p8_j v8_j / l,  LSE = m + ln l
 * so the MMAs see only e4m3 operands and per-column or per-row factors outside them: the cache is
 * never multiplied element by element. (The kernels subtract the running max, not the final one:
 * P'/sp_t is the same either way, up to the floor of dec_p_scale.) The wrong placements (footgun
 * FG17) are switches. */
#ifndef FMHA_HOST_FP8_ATTENTION_H
#define FMHA_HOST_FP8_ATTENTION_H

#include "host/paged_kv.h"

enum {
    FP8_FAULT_K_SCALE_ON_ROWS = 1u << 0,  /* FG17: S_j scaled by the scale of key j = the row index */
    FP8_FAULT_V_SCALE_ON_O_ROWS = 1u << 1, /* FG17: V's scale applied to O instead of P's columns */
    FP8_FAULT_K_SCALE_DROPPED = 1u << 2,  /* FG17: the K scale left out */
};

/* Query row q[d] of a query head of sequence b whose KV head is hk, keys 0..n-1 of the cache
 * (n <= seqlens[b]: a decode row passes its own visible count), softmax scale `scale`, P quantised
 * per `tile` keys. o[d], *lse (n = 0: O = 0, LSE = -inf). faults: FP8_FAULT_*. row is the query
 * row's index among the decode rows (used by the FG17 row-scale variants only). */
void fp8_attention_row(const paged_kv *c, int b, int hk, const float *q, int n, double scale, unsigned faults,
                       int row, int tile, double *o, double *lse);

#endif
