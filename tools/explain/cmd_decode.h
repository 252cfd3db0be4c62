/* explain decode: how stage D lays a decode shape out, from the decode core the kernels use
 * (common/attn/decode_core.h, stages/D_fp8_paged/decode.h): the packing of query heads and new
 * rows into the MMA's M, which keys each new row sees, the CTAs, the split-KV choice, one CTA's
 * SMEM, and the bytes and FLOPs of the step. */
#ifndef FMHA_EXPLAIN_CMD_DECODE_H
#define FMHA_EXPLAIN_CMD_DECODE_H

#include "args.h"
#include "attn/decode_core.h"
#include "stages/D_fp8_paged/decode.h"

static const char DECODE_USAGE[] =
    "usage: explain decode [--b B] [--hq HQ] [--hkv HKV] [--sq SQ] [--skv SKV] [--d D] [--page P]\n"
    "                      [--backend sm90|sm100] [--splits N] [--slots S]\n"
    "How stage D runs one decode step over an FP8 paged cache where every sequence has SKV keys\n"
    "(the Sq new tokens included): the packed rows (query heads of a KV head x new rows), the keys\n"
    "each new row sees (causal among them), the grid, the split-KV choice, one CTA's SMEM, and the\n"
    "bytes and FLOPs that must move.\n"
    "  --b --hq --hkv --sq --skv --d --page   the shape (defaults 64 64 8 1 8192 128 64)\n"
    "  --backend  sm90 (8, 16, 32 or 64 packed rows a CTA, by the shape; the default) or sm100 (128)\n"
    "  --splits   split-KV CTAs per sequence; default: auto over --slots resident CTAs\n"
    "  --slots    resident CTAs for auto (default: the H200's 132 SMs x 2 for sm90, a B200's 148 x 1\n"
    "             for sm100; stage_D asks the occupancy API and prints the figure it used)\n"
    "exit: 0 explained, 2 bad input (the message names the flag and the rule)\n";

static const char *const DECODE_BACKENDS[] = {"sm90", "sm100"};

static int cmd_decode(int argc, char **argv)
{
    opt_t opts[] = {{"--b", 1, 0, 0},   {"--hq", 1, 0, 0},      {"--hkv", 1, 0, 0},    {"--sq", 1, 0, 0},
                    {"--skv", 1, 0, 0}, {"--d", 1, 0, 0},       {"--page", 1, 0, 0},   {"--backend", 1, 0, 0},
                    {"--splits", 1, 0, 0}, {"--slots", 1, 0, 0}, {NULL, 0, 0, 0}};
    if (parse_opts(argc, argv, 2, opts, NULL)) { fputs(DECODE_USAGE, stdout); return 0; }
#define GET(name, def, lo, hi, rule) (opt_find(opts, name)->given ? (int)opt_int(opt_find(opts, name), lo, hi, rule) : (def))
    const int b = GET("--b", 64, 1, 65535, NULL), hq = GET("--hq", 64, 1, 4096, NULL);
    const int hkv = GET("--hkv", 8, 1, 4096, NULL), sq = GET("--sq", 1, 1, 1024, NULL);
    const int skv = GET("--skv", 8192, 1, 1 << 24, NULL), d = GET("--d", 128, 64, 256, NULL);
    const int page = GET("--page", 64, 16, 256, NULL);
    const int sm100 = opt_find(opts, "--backend")->given ? opt_choice(opt_find(opts, "--backend"), DECODE_BACKENDS, 2) : 0;
    if (hq % hkv) usage_error("--hq=%d --hkv=%d: --hq must be a multiple of --hkv", hq, hkv);
    if (d != 64 && d != 128 && d != 256) usage_error("--d=%d: stage D supports D = 64, 128 and 256", d);
    if (page & (page - 1)) usage_error("--page=%d: the page size must be 16, 32, 64, 128 or 256 tokens", page);
    dec_params p = {0};
    p.b = b; p.hq = hq; p.hkv = hkv; p.sq = sq; p.d = d; p.page = page; p.max_len = skv;
    p.bm = sm100 ? DEC_BM_SM100 : dec_sm90_bm(hq / hkv * sq);
    const int slots = GET("--slots", sm100 ? 148 : 264, 1, 1 << 20, NULL);
    p.splits = opt_find(opts, "--splits")->given ? (int)opt_int(opt_find(opts, "--splits"), 1, DEC_MAX_SPLITS, NULL)
                                                 : dec_auto_splits(&p, slots);
#undef GET
    const int g = dec_group(&p), m = dec_rows(&p), mt = dec_m_tiles(&p);
    printf("packing: %d query heads per KV head x %d new rows = %d packed rows per (sequence, KV head)\n", g, sq, m);
    printf("         packed row m = i * %d + g is new row i of query head hk * %d + g", g, g);
    for (int r = 0; r < m && r < 4; r++) {
        int i, h;
        dec_unpack_row(&p, 0, r, &i, &h);
        printf("%s m=%d -> (i=%d, head %d)", r ? "," : ":", r, i, h);
    }
    printf("%s\n", m > 4 ? ", ..." : "");
    printf("         %d rows per CTA (%s): %d m-tile(s), %d padded row(s) in the last\n", p.bm,
           sm100                ? "sm100: the M = 128 MMA, one row per TMEM lane"
           : p.bm < DEC_BM_SM90 ? "sm90: the swapped MMAs' N, S^T = K Q^T"
                                : "sm90: one warpgroup's m64", mt, mt * p.bm - m);
    printf("keys:    new row i sees the first L - %d + 1 + i of a sequence's L keys:", sq);
    for (int i = 0; i < sq && i < 8; i++) printf(" %d", dec_visible_keys(&p, skv, i));
    printf("%s (L = %d)\n", sq > 8 ? " ..." : "", skv);
    const int tiles = dec_kv_tiles(skv);
    int t0, t1;
    dec_split_tiles(&p, skv, 0, &t0, &t1);
    printf("tiles:   %d KV tiles of %d keys per sequence; %d page(s) of %d tokens per tile\n", tiles, DEC_BN,
           DEC_BN / page > 0 ? DEC_BN / page : 1, page);
    printf("splits:  %d%s: split s reads tiles [s * %d, ...) (%d per split)\n", p.splits,
           opt_find(opts, "--splits")->given ? "" : " (auto: the fewest tile-times)", t1 - t0, t1 - t0);
    if (!opt_find(opts, "--splits")->given) {
        const long long base = (long long)mt * hkv * b;
        printf("         auto: %lld CTAs unsplit on %d resident slots; cost(s) = waves x (tiles per split + 1):\n        ",
               base, slots);
        for (int s = 1; s <= tiles && s <= DEC_MAX_SPLITS; s++) {
            if (s > 6 && s != p.splits) continue;
            const long long waves = (base * s + slots - 1) / slots;
            printf("%s s=%d: %lld x %d = %lld%s", s > 6 ? " ..." : "", s, waves, (tiles + s - 1) / s + 1,
                   waves * ((tiles + s - 1) / s + 1), s == p.splits ? " (chosen)" : "");
        }
        printf("\n");
    }
    const grid3 gr = dec_grid(&p);
    printf("grid:    x = split * %d + m-tile = %u, y = KV head = %u, z = sequence = %u: %llu CTAs of %d threads\n", mt, gr.x,
           gr.y, gr.z, (unsigned long long)gr.x * gr.y * gr.z, sm100 ? DEC_SM100_THREADS : DEC_SM90_THREADS);
    if (p.splits > 1) printf("         then the merge kernel: %lld rows, one warp each\n", (long long)b * sq * hq);
    /* the default gather's layout: sm90's --kv-tma auto (pages that fit: 2, the 64-row kernels then
     * keep the next tile's K in a second buffer), none on sm100 */
    const int kv_tma = sm100 ? 0 : dec_kv_tma_resolve(-1, 1, 0, page, 0u);
    const smem_layout L = dec_smem_layout_of(p.bm, d, 0, kv_tma);
    static const char *const names[DEC_SMEM_TILES] = {
        [DEC_SMEM_Q] = "Q  [bm x D] e4m3, K-major SW128",     [DEC_SMEM_K] = "K  [128 x D] e4m3, K-major SW128",
        [DEC_SMEM_VS] = "Vs [128 x D] e4m3, V as gathered",   [DEC_SMEM_VT] = "Vt [D x 128] e4m3, K-major SW128",
        [DEC_SMEM_P] = "P  [bm x 128] e4m3, K-major SW128",   [DEC_SMEM_SCALES] = "scales f32: sq [bm], sk, sv [128], row sums",
        [DEC_SMEM_K_NEXT] = "next K [128 x D] e4m3 and its scales (sm90's 64-row kernels, --kv-tma 2)"};
    printf("SMEM:    %u bytes a CTA (%u requested with the alignment slack)\n", L.used, L.bytes);
    for (int i = 0; i < DEC_SMEM_TILES; i++)
        if (i != DEC_SMEM_K_NEXT || dec_has_k_next(p.bm, 0, kv_tma)) printf("         +%6u  %s\n", L.tile[i], names[i]);
    const double kv = 2.0 * b * hkv * (double)skv * d, sc = 8.0 * b * hkv * (double)skv;
    const double q = 2.0 * b * sq * hq * d;
    double pairs = 0;
    for (int i = 0; i < sq; i++) pairs += dec_visible_keys(&p, skv, i);
    printf("bytes:   e4m3 K and V %.4g, their scales %.4g, table %.4g, Q and O %.4g: %.4g bytes (a bf16 cache: %.4g)\n", kv,
           sc, 4.0 * b * ((skv + page - 1) / page), 2.0 * q, kv + sc + 4.0 * b * ((skv + page - 1) / page) + 2.0 * q,
           2.0 * kv + 2.0 * q);
    printf("FLOPs:   4 D x %.0f visible (row, key) pairs x %d query heads x %d sequences = %.4g (%.1f per byte)\n", pairs, hq, b,
           4.0 * d * pairs * hq * b, 4.0 * d * pairs * hq * b / (kv + sc + 2.0 * q));
    return 0;
}

#endif
