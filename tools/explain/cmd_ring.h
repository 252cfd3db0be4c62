/* explain ring: what stage F's pipeline spends and how its ring turns, from the headers its
 * kernels use (stages/F_pipeline/fmha.h, flow_sm100.h, common/attn/ring.h): the SMEM of Q and R
 * K/V slot pairs against the opt-in limit, the barriers and their arrival counts, sm100's TMEM
 * column map with and without overlap, sm90's register split, and for the first tiles which slot
 * each one uses and the parities each role waits with (footgun FG16's arithmetic). */
#ifndef FMHA_EXPLAIN_CMD_RING_H
#define FMHA_EXPLAIN_CMD_RING_H

#include "args.h"
#include "attn/ring.h"
#include "stages/F_pipeline/flow_sm100.h"
#include "stages/F_pipeline/fmha.h"

static const char RING_USAGE[] =
    "usage: explain ring [--d D] [--ring R] [--backend sm90|sm100] [--overlap 0|1] [--tiles N]\n"
    "What stage F's K/V ring costs and how it turns: the SMEM of Q and R slot pairs, the barriers\n"
    "and their counts, sm100's TMEM columns (overlap 0 and 1), sm90's register split, and for the\n"
    "first tiles the slot and the parity each role waits with.\n"
    "  --d        head dim: 64, 128 (the default) or 256\n"
    "  --ring     K/V slots, 1..3 (default: --ring auto's choice for --d)\n"
    "  --backend  sm90 (the default) or sm100\n"
    "  --overlap  sm100: two S and two P buffers in TMEM (D <= 128)\n"
    "  --tiles    KV tiles to walk in the parity table (default 2 R + 1)\n"
    "exit: 0 explained, 2 bad input (the message names the flag and the rule)\n";

static const char *const RING_BACKENDS[] = {"sm90", "sm100"};

static void ring_smem(int d, int ring)
{
    const smem_layout L = fmha_f_smem_layout_make(d, ring);
    printf("SMEM:    Q [128 x %d] + %d x (K [128 x %d] + V [128 x %d]), bf16 SW128: %u bytes (%u requested with the "
           "alignment slack) of the %u-byte opt-in: %s\n",
           d, ring, d, d, L.used, L.bytes, SMEM_OPTIN_MAX_BYTES, L.bytes <= SMEM_OPTIN_MAX_BYTES ? "fits" : "DOES NOT FIT");
    printf("         +%6u  Q (O is staged here for the TMA store at the end)\n", L.tile[FMHA_F_SMEM_Q]);
    for (int s = 0; s < ring; s++)
        printf("         +%6u  K slot %d (K-major)      +%6u  V slot %d (MN-major)\n", L.tile[FMHA_F_SMEM_K + s], s,
               L.tile[FMHA_F_SMEM_V + s], s);
    printf("         +%6u  mbarriers\n", L.bars);
    int deepest = 0;
    for (int r = 1; r <= FMHA_RING_MAX; r++)
        if (fmha_f_smem_layout_make(d, r).bytes <= SMEM_OPTIN_MAX_BYTES) deepest = r;
    printf("         the deepest ring that fits at D = %d: %d slot(s); --ring auto takes %d\n", d, deepest,
           fmha_f_auto_ring(d));
    if (FMHA_F_SM90_COLS64_OK(d)) { /* stage F on sm90 with --kv-tile 64 */
        const int r64 = fmha_f_auto_ring_cols(d, 64);
        printf("         sm90 with --kv-tile 64 (64 keys a KV tile) at D = %d: Q + %d x (K [64 x %d] + V [64 x %d]) = "
               "%u bytes, so --ring auto takes %d there\n", d, r64, d, d, fmha_f_smem_layout_make_kv(d, r64, FMHA_BM, 1, 64).bytes,
               r64);
    }
    if (FMHA_F_SM90_COLS176_OK(d)) { /* stage F on sm90 with --kv-tile 176 (FlashAttention-3's tile) */
        const int r176 = fmha_f_auto_ring_cols(d, 176);
        printf("         sm90 with --kv-tile 176 (176 keys a KV tile) at D = %d: Q + %d x (K [176 x %d] + V [176 x %d]) = "
               "%u bytes, so --ring auto takes %d there\n", d, r176, d, d,
               fmha_f_smem_layout_make_kv(d, r176, FMHA_BM, 1, 176).bytes, r176);
    }
}

static void ring_barriers(int sm100, int ring, int overlap)
{
    printf("barriers: q_full 1 arrive.expect_tx + Q's bytes\n");
    for (int s = 0; s < ring; s++)
        printf("          k_full[%d], v_full[%d]: 1 arrive.expect_tx + the tile's bytes; k_empty[%d], v_empty[%d]: %s\n", s,
               s, s, s, sm100 ? "1 tcgen05.commit (after the MMAs that read the slot)"
                              : "8 consumer warps (each arrives after its wgmma.wait_group)");
    if (sm100) {
        for (int b = 0; b < fmha_f_s_buffers(overlap); b++) printf("          s_full[%d]: 1 tcgen05.commit (S in buffer %d)\n", b, b);
        printf("          p_full: %u softmax threads; o_done: 1 tcgen05.commit\n", fmha_f_bar_count(FMHA_F_BAR_P_FULL));
        printf("          named barrier %d, %d threads: warps 0-4 take the TMEM address (the load warp does not: FG12)\n",
               FMHA_F_TMEM_BAR_ID, FMHA_F_TMEM_BAR_THREADS);
    } else {
        printf("          --pingpong 1: named barriers %d and %d, %d threads each: consumer group c waits on %d + c for its "
               "turn\n", FMHA_F_TURN_BAR, FMHA_F_TURN_BAR + 1, FMHA_F_TURN_THREADS, FMHA_F_TURN_BAR);
    }
}

static void ring_tmem(int d, int overlap)
{
    const int nb = fmha_f_s_buffers(overlap);
    printf("TMEM:    %d columns allocated:", FMHA_F_TMEM_COLS);
    for (int b = 0; b < nb; b++) printf(" S%s [%u, %u)", nb > 1 ? (b ? "1" : "0") : "", fmha_f_tmem_s(b), fmha_f_tmem_s(b) + 128);
    printf(" O [%d, %d)", FMHA_F_TMEM_O, FMHA_F_TMEM_O + d);
    for (int b = 0; b < nb; b++)
        printf(" P%s [%u, %u)", nb > 1 ? (b ? "1" : "0") : "", fmha_f_tmem_p(overlap, b), fmha_f_tmem_p(overlap, b) + 64);
    const int used = nb * 128 + d + nb * 64;
    printf(": %d of %d\n", used, FMHA_F_TMEM_COLS);
}

static void ring_walk(int ring, int tiles)
{
    printf("tiles:   slot = j %% %d; the phase flips each time the slot wraps to 0\n", ring);
    printf("         tile  slot  phase  consumers wait full with  producer waits empty with\n");
    ring_state s = ring_make(ring);
    for (int j = 0; j < tiles; j++) {
        printf("         %4d  %4d  %5u  parity %u%17s parity %u%s\n", j, s.slot, s.phase, ring_full_parity(&s), "",
               fmha_f_empty_parity(&s, 0), j < ring ? "  (a fresh barrier passes it: the first pass)" : "");
        ring_advance(&s);
    }
}

static int cmd_ring(int argc, char **argv)
{
    opt_t opts[] = {{"--d", 1, 0, 0},       {"--ring", 1, 0, 0},  {"--backend", 1, 0, 0},
                    {"--overlap", 1, 0, 0}, {"--tiles", 1, 0, 0}, {NULL, 0, 0, 0}};
    if (parse_opts(argc, argv, 2, opts, NULL)) { fputs(RING_USAGE, stdout); return 0; }
#define GET(name, def, lo, hi) (opt_find(opts, name)->given ? (int)opt_int(opt_find(opts, name), lo, hi, NULL) : (def))
    const int d = GET("--d", 128, 64, 256);
    if (d != 64 && d != 128 && d != 256) usage_error("--d=%d: stage F supports D = 64, 128 and 256", d);
    const int ring = GET("--ring", fmha_f_auto_ring(d), 1, FMHA_RING_MAX);
    const int sm100 = opt_find(opts, "--backend")->given ? opt_choice(opt_find(opts, "--backend"), RING_BACKENDS, 2) : 0;
    const int overlap = GET("--overlap", 0, 0, 1);
    const int tiles = GET("--tiles", 2 * ring + 1, 1, 64);
#undef GET
    if (overlap && !sm100) usage_error("--overlap: this map is sm100's TMEM; sm90's overlap lives in registers");
    if (overlap && d > 128)
        usage_error("--overlap=1 --d=%d: two S and two P buffers and O need 2 x 128 + 2 x 64 + D <= %d columns, so D <= 128",
                    d, FMHA_F_TMEM_COLS);
    printf("pipeline: %s, D = %d, a ring of %d K/V slot pair(s)%s\n", sm100 ? "sm100 (6 warps)" : "sm90 (--ws 1: 3 warpgroups)",
           d, ring, sm100 && overlap ? ", overlap (two S buffers)" : "");
    ring_smem(d, ring);
    ring_barriers(sm100, ring, overlap);
    if (sm100) ring_tmem(d, overlap);
    else
        printf("registers: the producer group %d a thread after setmaxnreg.dec, the consumer groups %d after .inc: "
               "128 x %d + 256 x %d = %d of 65536\n", FMHA_F_PRODUCER_REGS, FMHA_F_CONSUMER_REGS, FMHA_F_PRODUCER_REGS,
               FMHA_F_CONSUMER_REGS, 128 * FMHA_F_PRODUCER_REGS + 256 * FMHA_F_CONSUMER_REGS);
    if (!sm100 && FMHA_F_SM90_COLS176_OK(d))
        printf("           with --kv-tile 176: %d and %d (S 88 + P 44 + O %d registers a consumer thread): "
               "128 x %d + 256 x %d = %d\n", FMHA_F_PRODUCER_REGS_176, FMHA_F_CONSUMER_REGS_176, d / 2,
               FMHA_F_PRODUCER_REGS_176, FMHA_F_CONSUMER_REGS_176,
               128 * FMHA_F_PRODUCER_REGS_176 + 256 * FMHA_F_CONSUMER_REGS_176);
    ring_walk(ring, tiles);
    return 0;
}

#endif
