// Stage D's split-KV merge: O_part [splits, B, Sq, Hq, D] f32 and LSE_part [splits, B, Hq, Sq]
// -> O [B, Sq, Hq, D] bf16 and LSE [B, Hq, Sq], by the rule of common/attn/split_merge.h (the
// safe base-2 form; an empty split contributes nothing, an all-empty row gives O = 0 and
// LSE = -inf). Architecture-neutral: plain loads and stores, built for sm_90a and sm_100a.
// One warp per query row; lane l holds the element pairs 2l + 64k.
#include <cuda_runtime.h>
#include <stdint.h>

#include "attn/split_merge.h"
#include "device/bf16_pack.cuh"
#include "device/launch.cuh"
#include "decode.h"
#include "host/cuda_check.h"

enum { MERGE_ROWS_PER_CTA = 4 };

static __global__ void __launch_bounds__(32 * MERGE_ROWS_PER_CTA) merge_kernel(dec_params p)
{
    const int64_t rows = (int64_t)p.b * p.sq * p.hq;
    const int64_t row = (int64_t)blockIdx.x * MERGE_ROWS_PER_CTA + threadIdx.x / 32; // (b, i, h) of O
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const int b = (int)(row / ((int64_t)p.sq * p.hq)), i = (int)(row / p.hq % p.sq), h = (int)(row % p.hq);
    const int64_t li = ((int64_t)b * p.hq + h) * p.sq + i, lse_stride = rows, o_stride = rows * p.d;
    const float *ls = p.lse_part + li;
    const float m = merge_max_lse(ls, p.splits, lse_stride);
    float wsum = 0.0f;
    for (int s = 0; s < p.splits; s++) wsum += merge_weight(ls[s * lse_stride], m);
    const float inv = wsum > 0.0f ? 1.0f / wsum : 0.0f;
    const float *os = p.o_part + row * p.d;
    for (int e = 2 * lane; e < p.d; e += 64) {
        const float x0 = merge_elem(os + e, o_stride, ls, lse_stride, p.splits, m, inv);
        const float x1 = merge_elem(os + e + 1, o_stride, ls, lse_stride, p.splits, m, inv);
        *(uint32_t *)(p.o + row * p.d + e) = pack_bf16x2(x0, x1);
    }
    if (lane == 0) p.lse[li] = merge_lse(m, wsum);
}

extern "C" int stage_d_merge_launch(const dec_params *p)
{
    const int64_t rows = (int64_t)p->b * p->sq * p->hq;
    const unsigned ctas = (unsigned)((rows + MERGE_ROWS_PER_CTA - 1) / MERGE_ROWS_PER_CTA);
    merge_kernel<<<ctas, 32 * MERGE_ROWS_PER_CTA>>>(*p);
    CUDA_CHECK_LAUNCH();
    return 0;
}
