#include "host/shape_table.h"

#include <stdio.h>
#include <string.h>

int shape_list_row(const char *const *rows, int n, int i, char *args, size_t len)
{
    if (i < 0 || i >= n) return 0;
    snprintf(args, len, "%s", rows[i]);
    return 1;
}

int bench_prefill_shape(int quick, int i, prefill_shape *out)
{
    static const int fa3_full[] = {512, 1024, 2048, 4096, 8192, 16384}, fa3_quick[] = {1024, 4096, 8192};
    static const int llama_full[] = {2048, 4096, 8192, 16384, 32768}, llama_quick[] = {2048, 8192};
    const int *fa3 = quick ? fa3_quick : fa3_full, *llama = quick ? llama_quick : llama_full;
    const int nfa3 = quick ? 3 : 6, nllama = quick ? 2 : 5;
    /* blocks of rows: FA3 D=128, Llama, then (full only) FA3 D=64 and D=256; each S causal 0, 1 */
    const int blocks[4] = {2 * nfa3, 2 * nllama, quick ? 0 : 2 * nfa3, quick ? 0 : 2 * nfa3};
    const int dims[4] = {128, 128, 64, 256};
    for (int blk = 0; blk < 4; blk++) {
        if (i >= blocks[blk]) {
            i -= blocks[blk];
            continue;
        }
        const int s = (blk == 1 ? llama : fa3)[i / 2], d = dims[blk];
        out->causal = i % 2;
        out->s = s;
        out->d = d;
        if (blk == 1) {
            out->b = 1; out->hq = 64; out->hkv = 8;
        } else {
            out->b = 16384 / s; out->hq = out->hkv = 2048 / d;
        }
        return 1;
    }
    return 0;
}

int shape_bench_attn_row(int quick, int i, char *args, size_t len)
{
    prefill_shape s;
    if (!bench_prefill_shape(quick, i, &s)) return 0;
    snprintf(args, len, "--b %d --hq %d --hkv %d --sq %d --skv %d --d %d --causal %d", s.b, s.hq, s.hkv, s.s, s.s, s.d,
             s.causal);
    return 1;
}

int shape_bench_gemm_row(int quick, int i, char *args, size_t len)
{
    prefill_shape s;
    for (int k = 0; bench_prefill_shape(quick, k, &s); k++) {
        if (s.causal || i-- > 0) continue;
        snprintf(args, len, "--b %d --hq %d --sq %d --skv %d --d %d", s.b, s.hq, s.s, s.s, s.d);
        return 1;
    }
    return 0;
}

static int skipped(const char *shape, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strstr(shape, *skip)) return 1;
    return 0;
}

int shape_grid_row(const int *ds, int nd, const char *const *shapes, int nshapes, const char *const *skip, int seed0,
                   int i, char *args, size_t len)
{
    for (int idx = 0; idx < nd * nshapes * 2; idx++) {
        const int d = ds[idx / (2 * nshapes)], sh = idx / 2 % nshapes, exact = idx % 2;
        if (skipped(shapes[sh], skip) || i-- > 0) continue;
        snprintf(args, len, "--d %d %s --init %s --seed %d", d, shapes[sh], exact ? "int" : "rand", seed0 + sh);
        return 1;
    }
    return 0;
}
