/* Split-KV's merge, one query row: the rule the merge kernel (stages/D_fp8_paged/merge.cu) and the
 * emu flow both run, in the safe base-2 form. Split s returned O_s (normalised over its own keys)
 * and LSE_s (natural log of its sum of exp of the scaled scores; -inf when it saw no key):
 *   m = max_s LSE_s,  w_s = exp2((LSE_s - m) log2 e),  O = sum_s w_s O_s / sum_s w_s,
 *   LSE = m + ln(sum_s w_s)
 * A split with LSE_s = -inf has w_s = 0 and its O_s is never read (an empty split writes none), so
 * garbage there cannot leak; a row that no split saw a key of gets O = 0 and LSE = -inf. The fp64
 * host reference of the same formula is common/host/lse_merge.c. */
#ifndef FMHA_ATTN_SPLIT_MERGE_H
#define FMHA_ATTN_SPLIT_MERGE_H

#include <math.h>

#include "model/hd.h"

#define MERGE_LOG2E 1.4426950408889634f
#define MERGE_LN2 0.6931471805599453f

/* The row's max LSE over its nsplit partials (lse_s, stride apart); -inf when all are empty. */
FMHA_HD float merge_max_lse(const float *lse_s, int nsplit, long stride)
{
    float m = -INFINITY;
    for (int s = 0; s < nsplit; s++) m = fmaxf(m, lse_s[s * stride]);
    return m;
}

/* Split s's weight against the max (0 for an empty split or an all-empty row). */
FMHA_HD float merge_weight(float lse, float m)
{
    return (lse == -INFINITY) ? 0.0f : exp2f((lse - m) * MERGE_LOG2E);
}

/* The merged LSE from the max and the weights' sum. */
FMHA_HD float merge_lse(float m, float wsum) { return wsum > 0.0f ? m + logf(wsum) : -INFINITY; }

/* One output element c: sum_s w_s O_s[c] / wsum (0 for an all-empty row). o_s: split 0's
 * element, splits o_stride apart. */
FMHA_HD float merge_elem(const float *o_s, long o_stride, const float *lse_s, long lse_stride, int nsplit, float m,
                         float inv_wsum)
{
    float acc = 0.0f;
    for (int s = 0; s < nsplit; s++) {
        const float w = merge_weight(lse_s[s * lse_stride], m);
        if (w > 0.0f) acc += w * o_s[s * o_stride];
    }
    return acc * inv_wsum;
}

#endif
