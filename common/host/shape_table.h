/* The pieces a stage's shape table (stage_def.shapes) is built from: a fixed list of flag lines,
 * and the prefill benchmark protocol the attention stages and the GEMM stages both measure on.
 *
 * The protocol, in the order it runs (the reference shapes first, so that a benchmark cut short
 * still has them): the FlashAttention-3 protocol at D = 128 (B*S = 16k tokens, H = 2048 / D,
 * S in {512 .. 16k}, causal and not), the Llama-3.1 shape (B = 1, Hq = 64, Hkv = 8, D = 128,
 * S in {2k .. 32k}, causal and not), then the FA3 protocol at D = 64 and D = 256. The quick set:
 * D = 128 with S in {1k, 4k, 8k} and Llama with S in {2k, 8k}. */
#ifndef FMHA_SHAPE_TABLE_H
#define FMHA_SHAPE_TABLE_H

#include <stddef.h>

#include "host/runner.h"

/* Row i of a list of n flag lines: copies it into args and returns 1, or returns 0 past the end. */
int shape_list_row(const char *const *rows, int n, int i, char *args, size_t len);

typedef struct {
    int b, hq, hkv, s, d, causal; /* Sq = Skv = s */
} prefill_shape;

/* Row i of the prefill protocol (quick: the quick set): 1 and *out, or 0 past the end. */
int bench_prefill_shape(int quick, int i, prefill_shape *out);

/* The benchmark rows as flag lines: the attention view (every protocol shape, with --hkv and
 * --causal) and the GEMM view (the non-causal shapes with H = Hq: S = Q K^T, or the pair with
 * P V). 1 and args, or 0 past the end. */
int shape_bench_attn_row(int quick, int i, char *args, size_t len);
int shape_bench_gemm_row(int quick, int i, char *args, size_t len);

/* Row i of the product (head dim) x (shape) x (random, integer inputs), as
 * "--d D <shape> --init rand|int --seed <seed0 + shape index>". Shapes containing one of the
 * NULL-terminated `skip` substrings are left out (skip may be NULL). */
int shape_grid_row(const int *ds, int nd, const char *const *shapes, int nshapes, const char *const *skip, int seed0,
                   int i, char *args, size_t len);

/* The attention stages' table (C, E and later: the same shapes on every backend and stage), by
 * suite (shape_suite): gpu: D {64, 128, 256} x T (query rows) {1, 17, 32, 33, 64, 128} x Skv {1,
 * 3, 113, 128, 1023, 1025, 4096} x causal, the heads and layout rotating over MHA, MQA (BSHD), GQA
 * 8 and BSHD MHA, then four long sequences; gpu-quick: T {1, 33, 128} x Skv {3, 128, 1025}; emu:
 * small shapes over D, tails, decode, GQA/MQA, both layouts and both causal alignments; bench and
 * bench-quick: the prefill protocol above. 1 and args, or 0 past the end. */
int shape_attn_row(shape_suite suite, int i, char *args, size_t len);

#endif
