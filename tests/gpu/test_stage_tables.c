/* Every stage on the GPU over its own shape table (the gpu suite of stage_X --shapes; gpu-quick
 * under the sanitizers, FMHA_TEST_QUICK): sm90 on the H200, sm100 on a B200 (skipped elsewhere).
 * Each row is the whole stage program (stage_main): poisoned outputs, fresh inputs, the stage's
 * fp64 check (exact for integer inputs in A and B, the FlashAttention-3 rule with LSE and NaN
 * positions in C), exit code 0 only when verified. One test per stage and head dim.
 *   A  D {64, 128, 256} x Sq/Skv in {128 .. 4096} with tails, exact and random
 *   B  D {64 (the seed's non-square 128 x 64 P V), 128} x Skv up to 4097, exact and random
 *   C  D {64, 128, 256} x T {1 .. 128} x Skv {1 .. 4096} x causal, MHA/MQA/GQA, BHSD/BSHD, long
 *      sequences
 *   D  the FP8 paged decode: page 16..256, ragged lengths (1, page and tile multiples +-1), Sq 1..8,
 *      GQA 8 and MQA 128, D {64, 128, 256}, split-KV off and on, shuffled block tables; then the
 *      pipelined decode (--ring 2..4, the swapped kernel's and past 32 rows the two-group one),
 *      the L2 prefetch (--prefetch 1..4), the TMA gather (--kv-tma 1, and 2 with the next tile's
 *      boxes ahead: sm90's default, so the table runs it too; 1 on the ring past 32 rows), the
 *      cp.async gather (--kv-tma 0)
 *      and two warpgroups on one K/V tile (--m64-groups 2), sm90 only, so their rows are listed
 *      here, not in the table the sm100 run shares
 *   E  stage C's table, with TMA copies
 *   F  stage C's table through the ring (its default switches), then every switch combination at
 *      a few shapes (ring 1..3, ws 0/1, ping-pong, overlap) and Skv 16k / 32k; five runs bitwise
 *      identical */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "stage_run.h"
#include "test_util.h"

extern const stage_def stage_A, stage_B, stage_C, stage_D, stage_E, stage_F;

static void table(const stage_def *st, const char *backend, int d)
{
    cr_expect_eq(gpu_table_failures(st, backend, d, 1), 0, "stage %s on %s, D=%d: see the FAILED lines", st->letter,
                 backend, d);
}

Test(stage_a_gpu, sm90_d64, .timeout = 300) { SKIP_WITHOUT_GPU(9); table(&stage_A, "sm90", 64); }
Test(stage_a_gpu, sm90_d128, .timeout = 300) { SKIP_WITHOUT_GPU(9); table(&stage_A, "sm90", 128); }
Test(stage_a_gpu, sm90_d256, .timeout = 300) { SKIP_WITHOUT_GPU(9); table(&stage_A, "sm90", 256); }
Test(stage_a_gpu, sm100_d128, .timeout = 300) { SKIP_WITHOUT_GPU(10); table(&stage_A, "sm100", 128); }

Test(stage_b_gpu, sm90_d64_non_square_pv, .timeout = 300) { SKIP_WITHOUT_GPU(9); table(&stage_B, "sm90", 64); }
Test(stage_b_gpu, sm90_d128, .timeout = 300) { SKIP_WITHOUT_GPU(9); table(&stage_B, "sm90", 128); }
Test(stage_b_gpu, sm100_d64, .timeout = 300) { SKIP_WITHOUT_GPU(10); table(&stage_B, "sm100", 64); }

Test(stage_c_gpu, sm90_d64, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_C, "sm90", 64); }
Test(stage_c_gpu, sm90_d128, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_C, "sm90", 128); }
Test(stage_c_gpu, sm90_d256, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_C, "sm90", 256); }
Test(stage_c_gpu, sm100_d128, .timeout = 600) { SKIP_WITHOUT_GPU(10); table(&stage_C, "sm100", 128); }

Test(stage_d_gpu, sm90_d64, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_D, "sm90", 64); }
Test(stage_d_gpu, sm90_d128, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_D, "sm90", 128); }
Test(stage_d_gpu, sm90_d256, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_D, "sm90", 256); }
Test(stage_d_gpu, sm100_d128, .timeout = 600) { SKIP_WITHOUT_GPU(10); table(&stage_D, "sm100", 128); }

/* Stage D's sm90-only rows (listed here, not in the table the sm100 run shares), untimed: the
 * number that failed (each printed as by stage_run_counted); the first `quick` under
 * FMHA_TEST_QUICK (the sanitizers). */
static int sm90_rows_failures(const char *const *rows, size_t n, size_t quick)
{
    if (getenv("FMHA_TEST_QUICK") && quick < n) n = quick;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        char args[512];
        snprintf(args, sizeof args, "--backend sm90 %s --iters 0", rows[i]);
        failed += stage_run_counted(&stage_D, args);
    }
    return failed;
}
#define SM90_ROWS(rows, quick, what)                                                                         \
    cr_expect_eq(sm90_rows_failures(rows, sizeof rows / sizeof rows[0], quick), 0,                             \
                 "stage D " what " on sm90: see the FAILED lines")

/* The pipelined decode (--ring): every ring depth, packed rows 8 / 16 / 32, D 64 / 128 / 256, page
 * 16..256, ragged and exact lengths (1, a single tile, tile multiples +-1), split on and off, one
 * sequence of 128 tiles (the ring wraps 32-64 times), and the GQA bench shape's heads and length at
 * B 8 (at the bench's B 64 one checked run took over 100 s on the H200). */
static const char *const ring_rows[] = {
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 1 --ring 2 --seed 1",
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 4 --ring 3 --seed 1",
    "--b 6 --hq 64 --hkv 8 --sq 2 --skv 2100 --ragged --d 128 --page 16 --ring 2 --seed 2",
    "--b 5 --hq 64 --hkv 8 --sq 1 --seqlens 1,127,128,129,257 --d 64 --page 64 --ring 4 --seed 5",
    "--b 5 --hq 64 --hkv 8 --sq 4 --seqlens 3,63,64,65,1023 --d 64 --page 16 --splits 3 --ring 2 --seed 6",
    "--b 4 --hq 16 --hkv 2 --sq 2 --seqlens 255,256,257,600 --d 256 --page 128 --ring 2 --seed 7",
    "--b 2 --hq 32 --hkv 4 --sq 3 --skv 4097 --d 128 --page 128 --ring 3 --seed 9",
    "--b 1 --hq 8 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --ring 2 --seed 10",
    "--b 8 --hq 16 --hkv 16 --sq 1 --skv 900 --ragged --d 256 --page 32 --splits 2 --ring 2 --seed 11",
    "--b 3 --hq 8 --hkv 1 --sq 1 --skv 128 --d 128 --page 256 --ring 2 --seed 12",
    "--b 4 --hq 32 --hkv 8 --sq 1 --skv 3000 --ragged --d 128 --page 32 --ring 4 --seed 13",
    "--b 8 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --ring 2 --seed 14",
};
Test(stage_d_gpu, sm90_ring, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(ring_rows, 3, "--ring");
}

/* The pipelined decode past 32 packed rows (--ring R with two consumer warpgroups of 64 rows on each
 * slot, decode_ring_sm90.cu): MQA's 128 rows, 80 (the second group partly past the rows) and 40
 * (the second group empty: it still computes and releases every slot), 512 and 1024 rows (4 and 8
 * m-tiles), ring 2..4, D 64 / 128, page 16..256, ragged, split on and off with empty and one-tile
 * splits, one sequence of 128 tiles (the ring wraps 64 times). */
static const char *const ring_m64_rows[] = {
    "--b 3 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 256 --ring 2 --seed 141",
    "--b 2 --hq 128 --hkv 1 --sq 4 --skv 700 --ragged --d 64 --page 16 --splits 1 --ring 3 --seed 142",
    "--b 3 --hq 40 --hkv 1 --sq 2 --skv 900 --ragged --d 128 --page 32 --splits 2 --ring 2 --seed 143",
    "--b 3 --hq 40 --hkv 1 --sq 1 --skv 700 --ragged --d 64 --page 32 --ring 4 --seed 144",
    "--b 1 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --ring 2 --seed 145",
    "--b 4 --hq 128 --hkv 1 --sq 8 --skv 1500 --ragged --d 64 --page 256 --splits 5 --ring 2 --seed 146",
    "--b 2 --hq 64 --hkv 1 --sq 1 --seqlens 1,129 --d 128 --page 128 --splits 3 --ring 3 --seed 147",
    /* four slots at D = 128 (no P tile): every slot reused, a ragged tail, splits */
    "--b 3 --hq 128 --hkv 1 --sq 2 --skv 2500 --ragged --d 128 --page 16 --splits 2 --ring 4 --seed 154",
};
Test(stage_d_gpu, sm90_ring_m64, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(ring_m64_rows, 2, "--ring past 32 rows");
}

/* The ring past 32 rows with the TMA gather (--kv-tma 1: the load warps issue a box a page onto the
 * slot's landed barrier, V's rows past the sequence's end zeroed in the transpose): the rows above
 * with pages 16..256, lengths at and around page and tile boundaries (a box past the end is not
 * issued; one that straddles it lands the page's tail), ring 2..4, D 64 / 128, 128, 80, 64 and
 * 40 packed rows, 256 and 512 (2 and 4 m-tiles), Sq > 1, one-tile and empty splits, one sequence
 * of 128 tiles. */
static const char *const ring_m64_tma_rows[] = {
    "--b 3 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 256 --ring 2 --kv-tma 1 --seed 171",
    "--b 2 --hq 128 --hkv 1 --sq 4 --skv 700 --ragged --d 64 --page 16 --splits 1 --ring 3 --kv-tma 1 --seed 172",
    "--b 3 --hq 40 --hkv 1 --sq 2 --skv 900 --ragged --d 128 --page 32 --splits 2 --ring 3 --kv-tma 1 --seed 173",
    "--b 3 --hq 80 --hkv 1 --sq 1 --skv 700 --ragged --d 64 --page 128 --ring 4 --kv-tma 1 --seed 174",
    "--b 1 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --ring 3 --kv-tma 1 --seed 175",
    "--b 2 --hq 64 --hkv 1 --sq 1 --seqlens 1,129 --d 128 --page 128 --splits 3 --ring 3 --kv-tma 1 --seed 176",
    "--b 3 --hq 128 --hkv 1 --sq 2 --skv 2500 --ragged --d 128 --page 16 --splits 2 --ring 4 --kv-tma 1 --seed 177",
    "--b 5 --hq 128 --hkv 1 --sq 1 --seqlens 63,64,65,128,1000 --d 128 --page 64 --splits 2 --ring 3 --kv-tma 1 --seed 178",
    "--b 3 --hq 40 --hkv 1 --sq 1 --skv 700 --ragged --d 64 --page 32 --ring 4 --kv-tma 1 --seed 179",
};
Test(stage_d_gpu, sm90_ring_m64_tma, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(ring_m64_tma_rows, 2, "--ring past 32 rows with --kv-tma 1");
}

/* The overlap in the ring past 32 rows (--overlap 1: P V of tile j - 1 under the softmax of tile j,
 * its slot released a tile later): ring 3 and 4, D 64 / 128, MQA's 128 rows, 80 and 40 (warps past
 * the rows wait for the P V without a softmax), Sq > 1, ragged lengths with one-tile and empty
 * splits, pages 16..256, and one sequence of 128 tiles. */
static const char *const ring_overlap_rows[] = {
    "--b 3 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 64 --ring 4 --overlap 1 --seed 161",
    "--b 2 --hq 128 --hkv 1 --sq 4 --skv 700 --ragged --d 64 --page 16 --splits 1 --ring 3 --overlap 1 --seed 162",
    "--b 3 --hq 40 --hkv 1 --sq 1 --skv 900 --ragged --d 128 --page 32 --splits 2 --ring 3 --overlap 1 --seed 163",
    "--b 3 --hq 80 --hkv 1 --sq 1 --skv 1100 --ragged --d 64 --page 256 --ring 4 --overlap 1 --seed 164",
    "--b 1 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --ring 4 --overlap 1 --seed 165",
    "--b 2 --hq 64 --hkv 1 --sq 1 --seqlens 1,129 --d 128 --page 128 --splits 3 --ring 3 --overlap 1 --seed 166",
    "--b 4 --hq 128 --hkv 1 --sq 2 --skv 2500 --ragged --d 128 --page 16 --splits 2 --ring 4 --overlap 1 --seed 167",
};
Test(stage_d_gpu, sm90_ring_overlap, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(ring_overlap_rows, 2, "--overlap 1 (the ring past 32 rows)");
}

/* --ring auto: the pipelined decode past 32 packed rows where each split holds at least 8 tiles
 * (stages/D_fp8_paged/ring_auto.h), the unpipelined kernel below: each row passes its check, and its detail
 * line names the kernel the rule picked (grep on the program's output). */
static int ring_auto_row(const char *args, int want_ring)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "--backend sm90 %s --iters 0 > build/ring_auto.log 2>&1; r=$?; tail -n 2 build/ring_auto.log >&2; "
             "[ $r -eq 0 ] && %s grep -q 'ring 3 (auto' build/ring_auto.log", args, want_ring ? "" : "!");
    const int rc = program_exit_code("stage_D", cmd);
    if (rc) fprintf(stderr, "FAILED: stage_D %s (want %s)\n", args, want_ring ? "ring 3 (auto)" : "no ring");
    return rc != 0;
}
Test(stage_d_gpu, sm90_ring_auto, .timeout = 300)
{
    SKIP_WITHOUT_GPU(9);
    int failed = 0;
    failed += ring_auto_row("--b 2 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 128 --page 64 --splits 1 --seed 148", 1); /* 32 tiles */
    failed += ring_auto_row("--b 3 --hq 128 --hkv 1 --sq 1 --skv 9000 --ragged --d 64 --page 32 --splits 2 --seed 149", 1);
    failed += ring_auto_row("--b 2 --hq 128 --hkv 1 --sq 1 --skv 1024 --d 128 --page 64 --splits 1 --seed 150", 1); /* 8 tiles */
    failed += ring_auto_row("--b 2 --hq 128 --hkv 1 --sq 1 --skv 896 --d 128 --page 64 --splits 1 --seed 153", 0); /* 7 tiles */
    failed += ring_auto_row("--b 2 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 256 --page 64 --splits 1 --seed 151", 0); /* D 256 */
    failed += ring_auto_row("--b 2 --hq 128 --hkv 1 --sq 1 --skv 4096 --d 128 --page 64 --splits 1 --kv-tma 2 --seed 152", 0);
    cr_expect_eq(failed, 0, "--ring auto: see the FAILED lines");
}

/* The L2 prefetch (--prefetch N, sm90's unpipelined kernels): it must change nothing but the time.
 * Both kernels (the swapped one up to 32 packed rows, m64 past them: MQA), N 1..4, splits on and
 * off, ragged lengths and sequences shorter than N tiles, page 16..256, D 64 / 128 / 256. */
static const char *const prefetch_rows[] = {
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 1 --prefetch 1 --seed 51",
    "--b 6 --hq 64 --hkv 8 --sq 2 --skv 2100 --ragged --d 128 --page 16 --prefetch 2 --seed 52",
    "--b 5 --hq 64 --hkv 8 --sq 1 --seqlens 1,127,128,129,700 --d 64 --page 64 --splits 1 --prefetch 4 --seed 53",
    "--b 4 --hq 16 --hkv 2 --sq 2 --seqlens 255,256,257,1500 --d 256 --page 128 --prefetch 2 --seed 54",
    "--b 2 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 256 --splits 1 --prefetch 2 --seed 55",
    "--b 2 --hq 128 --hkv 1 --sq 1 --skv 5000 --d 64 --page 32 --splits 3 --prefetch 1 --seed 56",
    "--b 1 --hq 8 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --prefetch 3 --seed 57",
    "--b 4 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --prefetch 2 --seed 58",
};
Test(stage_d_gpu, sm90_prefetch, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(prefetch_rows, 2, "--prefetch");
}

/* The TMA gather (--kv-tma 1, sm90's unpipelined kernels; the m64 kernels' default): one box a page for K and V, V's rows
 * past the sequence zeroed in SMEM. Both kernels (swapped up to 32 packed rows, m64 past them),
 * every page size (a box per page below 128 tokens, a box per tile above), lengths of 1, tile and
 * page multiples +-1 (boxes that stop inside a tile, a tile with one box), split on and off, D 64
 * (a 64-byte box row in a 128-byte SW128 row) / 128 / 256 (two boxes a page, one per K block),
 * one sequence of 128 tiles (the barrier's phase flips 128 times), with the prefetch. */
static const char *const kv_tma_rows[] = {
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 1 --kv-tma 1 --seed 71",
    "--b 6 --hq 64 --hkv 8 --sq 2 --skv 2100 --ragged --d 128 --page 16 --kv-tma 1 --seed 72",
    "--b 5 --hq 64 --hkv 8 --sq 1 --seqlens 1,127,128,129,257 --d 64 --page 64 --splits 1 --kv-tma 1 --seed 73",
    "--b 5 --hq 64 --hkv 8 --sq 4 --seqlens 3,63,64,65,1023 --d 64 --page 32 --splits 3 --kv-tma 1 --seed 74",
    "--b 4 --hq 16 --hkv 2 --sq 2 --seqlens 255,256,257,600 --d 256 --page 128 --kv-tma 1 --seed 75",
    "--b 8 --hq 16 --hkv 16 --sq 1 --skv 900 --ragged --d 256 --page 32 --splits 2 --kv-tma 1 --seed 76",
    "--b 3 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 256 --kv-tma 1 --seed 77",
    "--b 2 --hq 128 --hkv 1 --sq 4 --skv 700 --ragged --d 64 --page 16 --splits 1 --kv-tma 1 --seed 78",
    "--b 2 --hq 32 --hkv 4 --sq 3 --skv 4097 --d 128 --page 256 --kv-tma 1 --seed 79",
    "--b 1 --hq 8 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --kv-tma 1 --seed 80",
    "--b 4 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --kv-tma 1 --prefetch 1 --seed 81",
};
Test(stage_d_gpu, sm90_kv_tma, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(kv_tma_rows, 2, "--kv-tma");
}

/* The TMA gather with the next tile's copies issued during the current one (--kv-tma 2, sm90's
 * default: the swapped kernel up to 32 packed rows, and the 64-row kernels past them, whose K and
 * scales alternate between two buffers): splits of one tile (nothing issued ahead) and empty splits
 * (short sequences split 3 and 5 ways), a last tile that ends inside a box, page 16..256, D 64 /
 * 128 / 256, Sq 1..4, MQA's 128 rows and 80 (two m-tiles, the second half empty), both with one
 * and with two warpgroups a tile (--m64-groups 2: the first issues the copies), one sequence of
 * 128 tiles (the barrier's phase flips 128 times while the next tile is always in flight), with
 * the prefetch. */
static const char *const kv_ahead_rows[] = {
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 1 --kv-tma 2 --seed 121",
    "--b 6 --hq 64 --hkv 8 --sq 2 --skv 2100 --ragged --d 128 --page 16 --kv-tma 2 --seed 122",
    "--b 5 --hq 64 --hkv 8 --sq 1 --seqlens 1,127,128,129,257 --d 64 --page 64 --splits 3 --kv-tma 2 --seed 123",
    "--b 5 --hq 64 --hkv 8 --sq 4 --seqlens 3,63,64,65,1023 --d 64 --page 32 --splits 5 --kv-tma 2 --seed 124",
    "--b 4 --hq 16 --hkv 2 --sq 2 --seqlens 255,256,257,600 --d 256 --page 128 --kv-tma 2 --seed 125",
    "--b 8 --hq 16 --hkv 16 --sq 1 --skv 900 --ragged --d 256 --page 32 --splits 2 --kv-tma 2 --seed 126",
    "--b 2 --hq 32 --hkv 4 --sq 3 --skv 4097 --d 128 --page 256 --kv-tma 2 --seed 127",
    "--b 1 --hq 8 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --kv-tma 2 --seed 128",
    "--b 4 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --kv-tma 2 --prefetch 1 --seed 129",
    "--b 3 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 256 --kv-tma 2 --seed 130",
    "--b 2 --hq 128 --hkv 1 --sq 4 --skv 700 --ragged --d 64 --page 16 --splits 1 --kv-tma 2 --seed 131",
    "--b 2 --hq 40 --hkv 1 --sq 2 --skv 1300 --d 256 --page 32 --splits 3 --kv-tma 2 --seed 132",
    "--b 1 --hq 128 --hkv 1 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --kv-tma 2 --seed 133",
    "--b 3 --hq 64 --hkv 1 --sq 1 --seqlens 129,1,640 --d 128 --page 128 --splits 3 --kv-tma 2 --prefetch 1 --seed 134",
    "--b 2 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 64 --splits 2 --m64-groups 2 --kv-tma 2 --seed 135",
    "--b 3 --hq 40 --hkv 1 --sq 2 --skv 900 --ragged --d 256 --page 16 --m64-groups 2 --kv-tma 2 --seed 136",
};
Test(stage_d_gpu, sm90_kv_tma_ahead, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(kv_ahead_rows, 2, "--kv-tma 2");
}

/* The CTAs held to the grid's mean progress (--fair N: a CTA ahead naps before its next tile's
 * boxes): a timing change only, so the same rows as the default gather must pass: 8, 16 and 32
 * packed rows, D 64 / 128 / 256, page 16..256, ragged lengths (CTAs of 1 tile beside CTAs of 64),
 * split on and off, leads of 1, 2 and 8 tiles, and the GQA target's heads and length at B 8. */
static const char *const fair_rows[] = {
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 1 --fair 1 --seed 181",
    "--b 6 --hq 64 --hkv 8 --sq 2 --skv 2100 --ragged --d 128 --page 16 --splits 2 --fair 2 --seed 182",
    "--b 5 --hq 64 --hkv 8 --sq 1 --seqlens 1,127,128,129,8000 --d 64 --page 128 --splits 1 --fair 1 --seed 183",
    "--b 4 --hq 16 --hkv 2 --sq 2 --seqlens 255,256,257,600 --d 256 --page 256 --fair 1 --seed 184",
    "--b 3 --hq 32 --hkv 2 --sq 2 --skv 3000 --ragged --d 128 --page 32 --splits 3 --fair 8 --seed 185",
    "--b 8 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --fair 1 --seed 186",
};
Test(stage_d_gpu, sm90_fair, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(fair_rows, 2, "--fair");
}

/* The persistent walk (--persistent 1: one CTA a resident slot claims the grid's items one by one,
 * the claimed item's first boxes issued under this one's last tile): grids of 2-9 items a CTA,
 * ragged lengths (items of 1 tile, empty splits claimed and given their -inf LSE), split on and
 * off, 8, 16 and 32 packed rows, D 64 / 128 / 256, page 16..256. */
static const char *const persistent_rows[] = {
    "--b 128 --hq 32 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --persistent 1 --seed 191",
    "--b 200 --hq 16 --hkv 8 --sq 2 --skv 700 --ragged --d 64 --page 16 --splits 2 --persistent 1 --seed 192",
    "--b 96 --hq 32 --hkv 4 --sq 2 --skv 3000 --ragged --d 128 --page 128 --persistent 1 --seed 193",
    "--b 300 --hq 16 --hkv 16 --sq 1 --skv 600 --ragged --d 256 --page 256 --persistent 1 --seed 194",
    "--b 64 --hq 64 --hkv 8 --sq 1 --skv 2048 --d 128 --page 64 --splits 3 --persistent 1 --seed 195",
    "--b 100 --hq 32 --hkv 4 --sq 3 --skv 900 --d 128 --page 32 --persistent 1 --seed 196",
};
Test(stage_d_gpu, sm90_persistent, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(persistent_rows, 2, "--persistent");
}

/* The cp.async gather (--kv-tma 0: 16 bytes a lane, zero fill past the end), no longer sm90's
 * default: the TMA rows' shapes again, both kernels, every page size, split on and off, D 64 / 128
 * / 256, with the prefetch and with two warpgroups a tile. */
static const char *const cp_async_rows[] = {
    "--b 6 --hq 64 --hkv 8 --sq 1 --skv 1000 --ragged --d 128 --page 64 --splits 1 --kv-tma 0 --seed 101",
    "--b 6 --hq 64 --hkv 8 --sq 2 --skv 2100 --ragged --d 128 --page 16 --kv-tma 0 --seed 102",
    "--b 5 --hq 64 --hkv 8 --sq 1 --seqlens 1,127,128,129,257 --d 64 --page 64 --splits 1 --kv-tma 0 --seed 103",
    "--b 5 --hq 64 --hkv 8 --sq 4 --seqlens 3,63,64,65,1023 --d 64 --page 32 --splits 3 --kv-tma 0 --seed 104",
    "--b 4 --hq 16 --hkv 2 --sq 2 --seqlens 255,256,257,600 --d 256 --page 128 --kv-tma 0 --seed 105",
    "--b 8 --hq 16 --hkv 16 --sq 1 --skv 900 --ragged --d 256 --page 32 --splits 2 --kv-tma 0 --seed 106",
    "--b 3 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 256 --kv-tma 0 --seed 107",
    "--b 2 --hq 128 --hkv 1 --sq 4 --skv 700 --ragged --d 64 --page 16 --splits 1 --kv-tma 0 --seed 108",
    "--b 1 --hq 8 --hkv 8 --sq 1 --skv 16384 --d 128 --page 64 --splits 1 --kv-tma 0 --seed 109",
    "--b 4 --hq 64 --hkv 8 --sq 1 --skv 8192 --d 128 --page 64 --kv-tma 0 --prefetch 1 --seed 110",
    "--b 2 --hq 128 --hkv 1 --sq 1 --skv 3000 --d 128 --page 128 --m64-groups 2 --kv-tma 0 --seed 111",
};
Test(stage_d_gpu, sm90_cp_async_gather, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(cp_async_rows, 2, "--kv-tma 0");
}

/* Two warpgroups of 64 packed rows on one K/V tile (--m64-groups 2, the unswapped kernel past 32
 * rows): MQA's 128 rows in one CTA; 96, 80 and 40 rows (the second group partly or wholly past the
 * rows); 160 rows (two m-tiles, the last with an empty second group); Sq 1..8, D 64 / 128 / 256,
 * page 16..256, split on and off, ragged, with the TMA gather at each D, with the prefetch. */
static const char *const m64_groups_rows[] = {
    "--b 3 --hq 128 --hkv 1 --sq 1 --skv 3000 --ragged --d 128 --page 256 --m64-groups 2 --seed 91",
    "--b 2 --hq 128 --hkv 1 --sq 4 --skv 700 --ragged --d 64 --page 16 --splits 1 --m64-groups 2 --seed 92",
    "--b 4 --hq 128 --hkv 1 --sq 8 --skv 1500 --ragged --d 64 --page 256 --splits 5 --m64-groups 2 --seed 93",
    "--b 2 --hq 96 --hkv 1 --sq 1 --seqlens 1,1029 --d 256 --page 64 --m64-groups 2 --seed 94",
    "--b 3 --hq 40 --hkv 1 --sq 2 --skv 900 --ragged --d 128 --page 32 --splits 2 --m64-groups 2 --seed 95",
    "--b 2 --hq 128 --hkv 1 --sq 1 --skv 5000 --d 128 --page 64 --splits 3 --m64-groups 2 --kv-tma 1 --seed 96",
    "--b 2 --hq 128 --hkv 1 --sq 1 --skv 3000 --d 128 --page 128 --m64-groups 2 --prefetch 1 --seed 97",
    "--b 3 --hq 40 --hkv 1 --sq 1 --skv 700 --ragged --d 64 --page 32 --m64-groups 2 --kv-tma 1 --seed 98",  /* group 1 empty */
    "--b 2 --hq 40 --hkv 1 --sq 4 --skv 1300 --d 256 --page 256 --splits 2 --m64-groups 2 --kv-tma 1 --seed 99", /* 2 m-tiles */
};
Test(stage_d_gpu, sm90_m64_groups, .timeout = 600)
{
    SKIP_WITHOUT_GPU(9);
    SM90_ROWS(m64_groups_rows, 2, "--m64-groups");
}

Test(stage_e_gpu, sm90_d64, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_E, "sm90", 64); }
Test(stage_e_gpu, sm90_d128, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_E, "sm90", 128); }
Test(stage_e_gpu, sm90_d256, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_E, "sm90", 256); }
Test(stage_e_gpu, sm100_d128, .timeout = 600) { SKIP_WITHOUT_GPU(10); table(&stage_E, "sm100", 128); }

Test(stage_f_gpu, sm90_d64, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_F, "sm90", 64); }
Test(stage_f_gpu, sm90_d128, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_F, "sm90", 128); }
Test(stage_f_gpu, sm90_d256, .timeout = 600) { SKIP_WITHOUT_GPU(9); table(&stage_F, "sm90", 256); }
Test(stage_f_gpu, sm100_d128, .timeout = 600) { SKIP_WITHOUT_GPU(10); table(&stage_F, "sm100", 128); }

/* Stage F's pipeline gives the same bits every run: five runs of one shape (a ring that wraps,
 * causal, GQA) on each switch setting that reorders the work (the producer warpgroup, the
 * ping-pong, the overlap, three consumer groups), O and LSE compared byte for byte with the first run's. The schedule of
 * loads and MMAs changes from run to run; the arithmetic must not. */
Test(stage_f_gpu, sm90_five_runs_bitwise_identical, .timeout = 300)
{
    SKIP_WITHOUT_GPU(9);
    static const char *const sw[] = {
        "--d 128 --ws 0 --ring 1", "--d 128 --ws 1 --ring 2", "--d 128 --ws 1 --ring 3 --pingpong 1 --overlap 1",
        "--d 64 --ws 1 --ring 2 --consumers 3 --pingpong 1 --overlap 1"};
    for (unsigned k = 0; k < sizeof sw / sizeof sw[0]; k++) {
        char cmd[900];
        snprintf(cmd, sizeof cmd,
                 "set -e; d=build/determinism_f_%u; rm -rf $d; for i in 1 2 3 4 5; do mkdir -p $d/$i; "
                 "build/bin/stage_F --backend sm90 --sq 700 --skv 1500 --causal --hq 4 --hkv 2 %s "
                 "--dump $d/$i > /dev/null; done; for i in 2 3 4 5; do cmp $d/1/F_o_bf16bits_in_layout.npy "
                 "$d/$i/F_o_bf16bits_in_layout.npy && cmp $d/1/F_lse.npy $d/$i/F_lse.npy; done; rm -rf $d",
                 k, sw[k]);
        cr_expect_eq(system(cmd), 0, "stage F %s: five runs, the same O and LSE bits", sw[k]);
    }
}
