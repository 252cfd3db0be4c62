/* Launcher of the bf16x2 pack-order kernel (footgun FG07): what `cvt.rn.bf16x2.f32 d, a, b` does
 * on the hardware, and what the project's pack_bf16x2() helper (common/device/bf16_pack.cuh) does. */
#ifndef FMHA_TEST_PACK_ORDER_H
#define FMHA_TEST_PACK_ORDER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For i < n, one thread each: raw[i] = cvt.rn.bf16x2.f32(a[i], b[i]) with a as the first source
 * operand, exactly as written; helper[i] = pack_bf16x2(a[i], b[i]) (a as the even-k element).
 * Host pointers. Returns 0, or 1 after printing a CUDA error. */
int pack_order_launch(const float *a, const float *b, int n, uint32_t *raw, uint32_t *helper);

#ifdef __cplusplus
}
#endif

#endif
