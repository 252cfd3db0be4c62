/* The FP8 attention of stage D, emulated on the host: one decode query row against a sequence of
 * the paged FP8 cache, with every rounding where the kernel will round, so its error against the
 * fp64 attention over the dequantised cache is the yardstick for the kernel's (the FA3 rule).
 *
 * The scale scheme (notes/fp8-scales.md): K and V are e4m3 with one scale per (token, head), sk_j
 * and sv_j; the query row is quantised with its own scale sq (absmax / 448). Then
 *   S_j  = sq sk_j (q8 . k8_j)                         the K scale on the columns of S
 *   P_j  = exp(scale S_j - m),  l = sum_j P_j          (f32, unquantised)
 *   P'_j = P_j sv_j,  sp = max_j P'_j / 448,  p8_j = e4m3(P'_j / sp)   V's scale folded into P's
 *                                                      columns, then P quantised per row
 *   O    = sp sum_j p8_j v8_j / l,   LSE = m + ln l
 * so the MMAs see only e4m3 operands and per-column or per-row factors outside them: the cache is
 * never multiplied element by element. The wrong placements (footgun FG17) are switches. */
#ifndef FMHA_HOST_FP8_ATTENTION_H
#define FMHA_HOST_FP8_ATTENTION_H

#include "host/paged_kv.h"

enum {
    FP8_FAULT_K_SCALE_ON_ROWS = 1u << 0,  /* FG17: S_j scaled by the scale of key j = the row index */
    FP8_FAULT_V_SCALE_ON_O_ROWS = 1u << 1, /* FG17: V's scale applied to O instead of P's columns */
    FP8_FAULT_K_SCALE_DROPPED = 1u << 2,  /* FG17: the K scale left out */
};

/* Query row q[d] of query head h of sequence b (its KV head: h / (hq / hkv)), keys 0..n-1 of the
 * cache (n <= seqlens[b]; a decode row with causal among Sq new rows passes its own n), softmax
 * scale `scale`. o[d], *lse. faults: FP8_FAULT_*. row is the query row's index among the decode
 * rows (used by the FG17 row-scale variant only). */
void fp8_attention_row(const paged_kv *c, int b, int hkv_of_h, const float *q, int n, double scale, unsigned faults,
                       int row, double *o, double *lse);

#endif
