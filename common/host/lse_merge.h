/* Split-KV merge, the host reference (stage D): a query row's keys are split over several CTAs,
 * each returning its partial output O_s (normalised over its own keys) and LSE_s (natural log of
 * its sum of exp of the scaled scores, -inf when it saw no key). The merge, in the safe base-2
 * form a kernel uses:
 *   m = max_s LSE_s;  w_s = exp2((LSE_s - m) log2 e);  O = sum_s w_s O_s / sum_s w_s;
 *   LSE = m + ln(sum_s w_s).
 * A split with LSE = -inf has w = 0 and contributes nothing (its O is never read, so garbage or
 * NaN there cannot leak); a row whose every split is empty gets O = 0 and LSE = -inf. */
#ifndef FMHA_HOST_LSE_MERGE_H
#define FMHA_HOST_LSE_MERGE_H

/* nsplit partial rows o_parts[s * d + c] with lse_parts[s] -> o[d], *lse. */
void lse_merge_row(int nsplit, int d, const float *o_parts, const float *lse_parts, double *o, double *lse);

#endif
