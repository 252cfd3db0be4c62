/* e4m3 (OCP E4M3FN, PTX .e4m3) on the host: encoding with round-to-nearest-even, with or without
 * saturation, and the per-(token, head) quantiser of the FP8 KV cache (stage D).
 *
 * e4m3 has no infinity: 0x7F / 0xFF (exponent 1111, mantissa 111) are NaN and the largest finite
 * value is 448 (0x7E). A value that rounds past 448 is NaN unless the conversion saturates, which
 * clamps it to +-448 (PTX cvt's .satfinite; footgun FG19). Decoding: model/numfmt.h decode_e4m3. */
#ifndef FMHA_HOST_FP8_H
#define FMHA_HOST_FP8_H

#include <stddef.h>
#include <stdint.h>

#define E4M3_MAX 448.0f

/* x -> e4m3 bits, round to nearest even; NaN in gives NaN; overflow gives NaN, or +-448 when
 * saturate is set. */
uint8_t e4m3_encode(float x, int saturate);

/* e4m3 bits -> float (exact). */
float e4m3_decode(uint8_t b);

/* Quantise rows of n values each: scale[r] = absmax(row r) / 448 (1 for an all-zero row, so a
 * scale is always finite and > 0), q = e4m3(x / scale). With saturate = 0 and a caller-given scale
 * (fixed_scale > 0, e.g. a per-tensor scale from other data), values beyond 448 * scale overflow:
 * the FG19 variant. deq (may be NULL) gets the dequantised values scale * decode(q), what the
 * reference reads. */
void e4m3_quantise_rows(const float *x, size_t rows, size_t n, float fixed_scale, int saturate, uint8_t *q,
                        float *scale, float *deq);

#endif
