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

/* The attention stages' shape table (C and later). gpu: D {64, 128, 256} x T (query rows) {1, 17, 32, 33, 64, 128} x Skv {1, 3,
 * 113, 128, 1023, 1025, 4096} x causal, the head configuration and layout rotating over MHA (B = 2),
 * MQA (Hkv = 1, BSHD), GQA (Hq/Hkv = 8) and BSHD MHA so every combination appears; then four long
 * sequences. gpu-quick (the sanitizers): T {1, 33, 128} x Skv {3, 128, 1025}, no long ones.
 * emu: small shapes over D, tails, decode, GQA/MQA, both layouts and both causal alignments.
 * bench: the prefill protocol (host/shape_table.h). */
static const char *const heads[4] = {"--b 2 --hq 4 --hkv 4", "--b 1 --hq 4 --hkv 1 --layout bshd",
                                     "--b 1 --hq 16 --hkv 2", "--b 2 --hq 2 --hkv 2 --layout bshd"};
static const char *const long_rows[] = {
    "--d 128 --sq 4096 --skv 4096 --b 1 --hq 4 --hkv 4",
    "--d 128 --sq 4096 --skv 4096 --b 1 --hq 4 --hkv 1 --causal",
    "--d 64 --sq 2000 --skv 3000 --b 2 --hq 8 --hkv 2 --causal --layout bshd",
    "--d 256 --sq 1000 --skv 700 --b 1 --hq 2 --hkv 1 --causal",
};
static const char *const emu_rows[] = {
    "--d 64 --sq 128 --skv 256 --hq 2 --hkv 2",
    "--d 128 --sq 64 --skv 200 --hq 2 --hkv 1 --layout bshd",
    "--d 256 --sq 33 --skv 129 --hq 2 --hkv 2 --b 2",
    "--d 64 --sq 1 --skv 1023 --hq 8 --hkv 1",
    "--d 64 --sq 17 --skv 3 --hq 2 --hkv 2",
    "--d 64 --sq 32 --skv 1 --hq 2 --hkv 1 --causal",
    "--d 64 --sq 256 --skv 256 --causal --hq 2 --hkv 2",
    "--d 64 --sq 100 --skv 300 --causal --hq 2 --hkv 2 --layout bshd",
    "--d 64 --sq 300 --skv 100 --causal --hq 2 --hkv 2",
};

int shape_attn_row(shape_suite suite, int i, char *args, size_t len)
{
    static const int ds[3] = {64, 128, 256}, ts[6] = {1, 17, 32, 33, 64, 128};
    static const int skvs[7] = {1, 3, 113, 128, 1023, 1025, 4096};
    enum { PER_D = 6 * 7 * 2 };
    switch (suite) {
    case SUITE_GPU:
    case SUITE_GPU_QUICK:
        for (int idx = 0; idx < 3 * PER_D; idx++) {
            const int d = ds[idx / PER_D], k = idx % PER_D, ti = k / 14, si = k / 2 % 7, causal = k % 2;
            if (suite == SUITE_GPU_QUICK && !((ti == 0 || ti == 3 || ti == 5) && (si == 1 || si == 3 || si == 5)))
                continue;
            if (i-- > 0) continue;
            snprintf(args, len, "--d %d --sq %d --skv %d%s %s --seed %d", d, ts[ti], skvs[si],
                     causal ? " --causal" : "", heads[k % 4], k);
            return 1;
        }
        return suite == SUITE_GPU ? shape_list_row(long_rows, 4, i, args, len) : 0;
    case SUITE_EMU: return shape_list_row(emu_rows, (int)(sizeof emu_rows / sizeof emu_rows[0]), i, args, len);
    case SUITE_BENCH: return shape_bench_attn_row(0, i, args, len);
    case SUITE_BENCH_QUICK: return shape_bench_attn_row(1, i, args, len);
    default: return 0;
    }
}

