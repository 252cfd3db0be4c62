// One 4 x 16 block of an e4m3 V tile transposed in SMEM (stage D, footgun FG20: FP8 wgmma and
// tcgen05 kind::f8f6f4 read K-major operands only, so V [kv x D], as the cache stores it, must
// become Vt [D x kv] for O = P V). The calling lane takes tokens 4a..4a+3 (a = its lane) and the
// 16-byte d-chunk ch: four 16-byte reads, one per token, then four byte permutes per 4 x 4
// sub-block make 16 words, one per d, each holding the four tokens' bytes; a lane's word lands at
// bytes 4a..4a+3 of its Vt row. The kernels choose which lanes take which chunks, so that neither
// the reads (8 lanes a phase, 16 bytes each) nor the stores meet bank conflicts: decode_sm90.cu's
// 4 warps share the chunks, each lane at its own chunk of a group of 4 (dec_transpose_chunk: a
// store's rows then differ per lane but not their row % 8, so its 32 words hit 32 banks; with
// --m64-groups 2 the 8 warps of two warpgroups share them);
// decode_sm100.cu's one warp starts each lane at its own chunk.
#pragma once
#include <stdint.h>

#include "attn/decode_core.h" // dec_pv_key_of_pos
#include "model/canonical.h"

// Vt is [D x 128 keys] K-major SW128, one atom wide, so its stores take smem_sw128_row_offset (a
// shift and an XOR), not a general tile's offset (which carries the tile's fields through each of
// the 16 addresses); Vs, K's layout, keeps its tile (two atom columns at D = 256).
// TAIL (stage D's TMA gather, which lands whole pages): tokens at or past `valid` are written as
// zeros, whatever Vs holds there (a page's slots past the sequence's end, or an earlier tile's rows:
// P is 0 for those keys, but 0 x NaN is NaN in P V; footguns FG18, FG21). The kernels take it only
// on a tile that ends early, so whole tiles skip its selects.
// PERM (P's codes in registers, stage D's 64-row pipelined kernel): bytes 4a..4a+3 of a Vt row take
// the keys dec_pv_key_of_pos(4a..4a+3) instead of 4a..4a+3, the order in which a thread's S
// accumulator holds them (common/attn/decode_core.h); the stores do not change.
template <bool TAIL = false, bool PERM = false>
__device__ __forceinline__ void e4m3_transpose_block(const uint8_t *vs, uint8_t *vt, const smem_tile &tvs, int a,
                                                     int ch, int valid = 0)
{
    uint32_t x[4][4]; // [token q][word]: bytes d = 16ch + 4 word + byte
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const int tok = PERM ? dec_pv_key_of_pos(4 * a + q) : 4 * a + q;
        uint4 v = *(const uint4 *)(vs + smem_tile_offset(&tvs, tok, 16 * ch));
        if (TAIL && tok >= valid) v = make_uint4(0u, 0u, 0u, 0u);
        x[q][0] = v.x; x[q][1] = v.y; x[q][2] = v.z; x[q][3] = v.w;
    }
#pragma unroll
    for (int wd = 0; wd < 4; wd++) {
        const uint32_t t0 = __byte_perm(x[0][wd], x[1][wd], 0x5140), t1 = __byte_perm(x[0][wd], x[1][wd], 0x7362);
        const uint32_t t2 = __byte_perm(x[2][wd], x[3][wd], 0x5140), t3 = __byte_perm(x[2][wd], x[3][wd], 0x7362);
        const uint32_t out[4] = {__byte_perm(t0, t2, 0x5410), __byte_perm(t0, t2, 0x7632), __byte_perm(t1, t3, 0x5410),
                                 __byte_perm(t1, t3, 0x7632)};
#pragma unroll
        for (int k = 0; k < 4; k++) *(uint32_t *)(vt + smem_sw128_row_offset(16 * ch + 4 * wd + k, 4 * a)) = out[k];
    }
}
