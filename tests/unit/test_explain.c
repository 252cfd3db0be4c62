/* The explain tool (tools/explain.c), run as a program: its answers must be the known values of
 * notes/hardware.md (2.3 instruction descriptors, 1.4/3.5 SMEM descriptors and K advance, 4.3 the
 * TMEM quadrant rule, 10.1/10.3 tensor-map rules) and the FG09 reading of the seed's TMEM layout;
 * bad input must exit 2 with the flag named and nothing on stdout. Expects `make` to have built
 * build/bin/explain (the test binaries run from the repository root). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPLAIN "build/bin/explain"

typedef struct {
    int rc;
    char out[1 << 18];
} result;

/* Runs `explain <args>`; stderr goes along with stdout unless the args redirect it. */
static result *run(const char *args, int with_stderr)
{
    cr_assert(access(EXPLAIN, X_OK) == 0, EXPLAIN " is missing: build it first (make build/bin/explain)");
    static result r;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, EXPLAIN " %s %s", args, with_stderr ? "2>&1" : "2>/dev/null");
    FILE *p = popen(cmd, "r");
    cr_assert(p != NULL, "popen(%s) failed", cmd);
    size_t n = fread(r.out, 1, sizeof r.out - 1, p);
    r.out[n] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st), "%s did not exit normally", cmd);
    r.rc = WEXITSTATUS(st);
    return &r;
}

#define EXPECT_HAS(r, s) cr_expect(strstr((r)->out, (s)) != NULL, "expected \"%s\" in:\n%s", (s), (r)->out)
#define EXPECT_LACKS(r, s) cr_expect(strstr((r)->out, (s)) == NULL, "did not expect \"%s\" in:\n%s", (s), (r)->out)

/* ---- idesc: notes/hardware.md sections 2.3, 2.4 --------------------------------------------------- */

Test(explain, idesc_encode_known_values)
{
    result *r = run("idesc --m 128 --n 128 --ab bf16 --acc f32", 0);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    cr_expect(strncmp(r->out, "0x08200490\n", 11) == 0, "first line must be the value:\n%s", r->out);
    r = run("idesc --m 128 --n 64 --ab bf16 --acc f32 --b-major mn", 0);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    cr_expect(strncmp(r->out, "0x08110490\n", 11) == 0, "PV with V MN-major:\n%s", r->out);
    r = run("idesc --m 128 --n 128 --ab e4m3", 0);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    cr_expect(strncmp(r->out, "0x08200010\n", 11) == 0, "e4m3 -> f32, kind::f8f6f4:\n%s", r->out);
}

Test(explain, idesc_decode_pv_descriptor)
{
    result *r = run("idesc 0x08110490", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "N=64");
    EXPECT_HAS(r, "M=128");
    EXPECT_HAS(r, "B MN-major");
    EXPECT_HAS(r, "A K-major");
    EXPECT_HAS(r, "BF16");
    EXPECT_HAS(r, "F32");
}

Test(explain, idesc_decode_m_written_at_bit_23)
{
    /* M=128, N=64 with M at bit 23 is exactly the legal M=64, N=64 value (notes/hardware.md section 2.4). */
    result *r = run("idesc 0x04100490", 1);
    cr_expect_eq(r->rc, 0, "a legal M=64 descriptor: %s", r->out);
    EXPECT_HAS(r, "M=64");
    EXPECT_HAS(r, "M=64 N=64");
    EXPECT_HAS(r, "bit 23");
}

Test(explain, idesc_reserved_bit_23_is_rejected)
{
    /* 0x08100490 (M=128, N=64) with the reserved bit 23 also set. */
    result *r = run("idesc 0x08900490", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "M written at bit 23");
}

Test(explain, idesc_encode_illegal_shape_names_the_flag)
{
    result *r = run("idesc --m 96 --n 64 --ab bf16", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "--m");
    r = run("idesc --m 128 --n 64 --ab bf16 --acc f16", 1);
    cr_expect_eq(r->rc, 2, "bf16 needs an f32 accumulator: %s", r->out);
    EXPECT_HAS(r, "--acc");
    r = run("idesc --m 96 --n 64 --ab bf16", 0);
    cr_expect_str_eq(r->out, "", "nothing on stdout when the check fails");
}

/* ---- smem-desc: notes/hardware.md sections 1.2, 1.4, 3.5 ----------------------------------------- */

Test(explain, smem_desc_kmajor_sw128_known_values)
{
    result *r = run("smem-desc --arch sm100 --major k --swizzle 128 --dtype bf16 --mn 128 --k 64", 0);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "0x4000404000010000");
    EXPECT_LACKS(r, "warning:");
    /* +32 bytes per K=16 step inside the 128-byte atom */
    EXPECT_HAS(r, "k=16:+32 ");
    r = run("smem-desc --arch sm90 --major k --swizzle 128 --dtype bf16 --mn 128 --k 64", 0);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "0x4000004000010000");
    EXPECT_LACKS(r, "0x4000404000010000");
}

Test(explain, smem_desc_other_worked_values)
{
    /* MN-major V tile [kv=128][d=128] as two 64-wide 128B atoms: LBO 16384, SBO 1024. */
    result *r = run("smem-desc --major mn --swizzle 128 --mn 128 --k 128", 0);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "0x4000404004000000");
    EXPECT_HAS(r, "k=16:+2048 "); /* MN-major 128B: +16 K-rows x 128 B per step */
    /* K-major no swizzle, 128 rows: LBO 2048, SBO 128. */
    r = run("smem-desc --major k --swizzle none --mn 128 --k 64", 0);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "0x0000400800800000");
}

Test(explain, smem_desc_decode_warns_about_bit_46)
{
    result *r = run("smem-desc --arch sm100 0x4000004000010000", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "warning:");
    EXPECT_HAS(r, "46");
    r = run("smem-desc --arch sm100 0x4000404000010000", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_LACKS(r, "warning:");
    EXPECT_HAS(r, "SBO 1024");
    EXPECT_HAS(r, "LBO 16");
    r = run("smem-desc --arch sm90 0x4000004000010000", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_LACKS(r, "warning:");
}

Test(explain, smem_desc_decode_element_address)
{
    /* K-major bf16 128B swizzle: row 3, k 9 is byte 3*128 + 18 = 0x192 before the swizzle; the
     * 16-byte chunk 1 is XORed with row 3 -> chunk 2: 0x1A2. */
    result *r = run("smem-desc 0x4000404000010000 --elem 3,9 --major k --dtype bf16", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "0x001A2");
}

/* ---- tmem: notes/hardware.md sections 4.3, 5.3 ---------------------------------------------------- */

Test(explain, tmem_warp1_default_lane)
{
    result *r = run("tmem --shape 32x32b --num 8 --warp 1", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "(32,0)");  /* thread 0, register 0 */
    EXPECT_HAS(r, "(63,7)");  /* thread 31, register 7 */
    EXPECT_LACKS(r, "(31,");
    EXPECT_LACKS(r, "(64,");
}

Test(explain, tmem_quadrant_violation_exits_2)
{
    result *r = run("tmem --shape 32x32b --warp 0 --lane 64", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "quadrant 0");
    r = run("tmem --shape 32x32b --warp 0 --lane 64", 0);
    cr_expect_str_eq(r->out, "", "no table for a rejected access");
    /* A 16-lane shape must also stay inside the quadrant: 56..71 crosses into quadrant 2. */
    r = run("tmem --shape 16x64b --warp 1 --lane 56", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "quadrant 1");
}

Test(explain, wgmma_fragments)
{
    /* Accumulator register 2 of thread 0 is row 8, col 0; A value 4 of thread 0 is row 0, k 8. */
    result *r = run("wgmma-frag --n 64 --thread 0", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "(0,0) (0,1) (8,0) (8,1) (0,8)");
    r = run("wgmma-frag --a --thread 0", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "(0,0) (0,1) (8,0) (8,1) (0,8) (0,9) (8,8) (8,9)");
    /* e4m3 A, thread 1 (q = 1): register 0 holds row 0, k 4..7, where stage D's ring puts keys 2, 3,
     * 10, 11, from S registers 0, 1, 4, 5 (thread 1's accumulator holds keys 2, 3 and 10, 11) */
    r = run("wgmma-frag --a8 --thread 1", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "(0,4)<-key 2 d0 (0,5)<-key 3 d1 (0,6)<-key 10 d4 (0,7)<-key 11 d5 (8,4)<-key 2 d2");
    r = run("wgmma-frag --a8 --a", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
}

/* ---- tmap: notes/hardware.md sections 10.1, 10.3 -------------------------------------------------- */

Test(explain, tmap_correct_2d_map_is_accepted)
{
    /* bf16 [128 rows][64 cols]: dims {64, 128}, stride {128 bytes}, box {64, 64}, 128B swizzle. */
    result *r = run("tmap --dtype bf16 --dims 64,128 --strides 128 --box 64,64 --swizzle 128", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "accepted");
}

Test(explain, tmap_broken_maps_are_rejected)
{
    result *r = run("tmap --dtype bf16 --dims 64,128 --strides 100 --box 64,64 --swizzle 128", 1);
    cr_expect_eq(r->rc, 2, "a 100-byte stride is not a multiple of 16: %s", r->out);
    EXPECT_HAS(r, "--strides");
    EXPECT_LACKS(r, "accepted");
    /* 128 bf16 columns = 256 bytes, wider than the 128-byte swizzle span. */
    r = run("tmap --dtype bf16 --dims 128,128 --strides 256 --box 128,64 --swizzle 128", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "--box");
    EXPECT_LACKS(r, "accepted");
    /* rank strides instead of rank-1 (notes/hardware.md section 10.3, first mistake) */
    r = run("tmap --dtype bf16 --dims 64,128 --strides 2,128 --box 64,64", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "--strides");
}

Test(explain, tmap_attention_maps)
{
    /* the K map of a BSHD GQA problem: rank 4 over the real byte strides, one 16 KB box */
    result *r = run("tmap --tensor k --layout bshd --b 2 --hq 16 --hkv 2 --skv 1000 --d 128 --cc 9", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "dim={128,1000,2,2} stride={512,256,512000} box={64,128,1,1}");
    EXPECT_HAS(r, "16384 bytes");
    /* the FG13 mistakes through the same builder are refused with the rule named */
    r = run("tmap --tensor k --mistake rank-strides", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "stride_multiple_16");
    r = run("tmap --tensor v --d 128 --mistake wide-box", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "box_inner_bytes_within_swizzle_span");
    r = run("tmap --tensor x", 1);
    cr_expect_eq(r->rc, 2, "an unknown tensor is bad input: %s", r->out);
}

Test(explain, tmap_stage_e_maps)
{
    /* K of stage E: one 64 x 128 box = 16 KB under 128B swizzle, D/64 = 2 boxes per tile, expect_tx 32 KB */
    result *r = run("tmap --stage E --tensor k --layout bshd --d 128", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "cuTensorMapEncodeTiled(type=BFLOAT16(9) rank=4");
    EXPECT_HAS(r, "box={64,128,1,1}");
    EXPECT_HAS(r, "16384 bytes");
    EXPECT_HAS(r, "SWIZZLE_128B");
    EXPECT_HAS(r, "span 128 bytes");
    EXPECT_HAS(r, "takes 2 boxes");
    EXPECT_HAS(r, "expect_tx: 32768 bytes");
    EXPECT_HAS(r, "accepted");
    /* the parameters come before the verdict */
    const char *enc = strstr(r->out, "cuTensorMapEncodeTiled("), *ok = strstr(r->out, "accepted");
    cr_expect(enc && ok && enc < ok, "encode parameters before the verdict:\n%s", r->out);
    /* the lower-case letter is the same stage */
    r = run("tmap --stage e --tensor k --layout bshd --d 128", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "16384 bytes");
    /* O is stored in boxes of one storing warp's 16 rows (FMHA_O_BOX_ROWS) */
    r = run("tmap --stage E --tensor o --layout bshd --d 128", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "box={64,16,1,1}");
    EXPECT_HAS(r, "16 rows");
    EXPECT_HAS(r, "2048 bytes");
    /* no --tensor: all four maps the stage encodes */
    r = run("tmap --stage E --d 128", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "tensor q ");
    EXPECT_HAS(r, "tensor k ");
    EXPECT_HAS(r, "tensor v ");
    EXPECT_HAS(r, "tensor o ");
}

Test(explain, tmap_stage_e_mistakes)
{
    result *r = run("tmap --stage E --tensor k --layout bshd --d 128 --mistake stride-not-16", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "stride_multiple_16");
    EXPECT_LACKS(r, "accepted");
    /* every fmha_tmap_mistake has a name the flag takes: the map is shown (stdout), whatever the verdict */
    static const char *const names[] = {"right", "rank-strides", "element-strides", "wide-box", "stride-not-16"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char args[160];
        snprintf(args, sizeof args, "tmap --stage E --tensor q --d 128 --mistake %s", names[i]);
        r = run(args, 0);
        cr_expect(strstr(r->out, "cuTensorMapEncodeTiled(") != NULL, "explain %s: no map shown:\n%s", args, r->out);
    }
    r = run("tmap --tensor q --mistake padded", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "stride-not-16");
}

Test(explain, tmap_stage_without_maps_is_bad_input)
{
    result *r = run("tmap --stage C --tensor k", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    EXPECT_HAS(r, "--stage");
    EXPECT_HAS(r, "stages that use tensor maps: E");
    r = run("tmap --stage C", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
    r = run("tmap --stage C", 0);
    cr_expect_str_eq(r->out, "", "nothing on stdout for bad input");
    r = run("tmap --stage EE --tensor k", 1);
    cr_expect_eq(r->rc, 2, "%s", r->out);
}

/* ---- layout: footgun FG09 --------------------------------------------------------------------- */

#define SEED_LAYOUT "\"((128,16),1,(4,2)):((65536,1),0,(16,64))\""

Test(explain, layout_seed_is_lane_times_65536_plus_k)
{
    const long mk[][2] = {{0, 0}, {1, 0}, {0, 1}, {5, 77}, {127, 127}, {64, 16}, {3, 64}};
    for (size_t i = 0; i < sizeof mk / sizeof mk[0]; i++) {
        long m = mk[i][0], k = mk[i][1];
        char args[256], want[96];
        snprintf(args, sizeof args, "layout " SEED_LAYOUT " --index %ld --tmem", m + 128 * k);
        result *r = run(args, 1);
        cr_expect_eq(r->rc, 0, "%s", r->out);
        snprintf(want, sizeof want, "-> offset %ld ", m * 65536 + k);
        EXPECT_HAS(r, want);
        snprintf(want, sizeof want, "(lane %ld, column %ld)", m, k);
        EXPECT_HAS(r, want);
    }
    result *r = run("layout " SEED_LAYOUT, 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "size      16384");
    EXPECT_HAS(r, "(128,16,1,4,2):(65536,1,0,16,64)");
    EXPECT_HAS(r, "(128,128):(65536,1)");
}

Test(explain, layout_identity)
{
    result *r = run("layout \"(4,2):(1,4)\"", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "identity: yes");
    r = run("layout \"(4,2):(2,1)\"", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "identity: no");
}

/* ---- bad input -------------------------------------------------------------------------------- */

Test(explain, bad_input_exits_2_naming_the_flag)
{
    static const char *const cases[][2] = {
        {"frobnicate", "frobnicate"},
        {"idesc --m 128 --n 64 --ab bf16 --bogus 1", "--bogus"},
        {"idesc --m", "--m"},
        {"idesc --m 128 --n 64 --ab bf12", "--ab"},
        {"idesc 0x0811049G", "0x0811049G"},
        {"idesc 0x123456789", "0x123456789"},
        {"smem-desc --mn 128 --k 64 --swizzle 96", "--swizzle"},
        {"smem-desc --mn 128 --k 64 --kstep 8", "--kstep"},
        {"smem-desc --mn 128 --k 64 --base 0x100", "--base"},
        {"smem-desc --arch sm100 0xZZ", "0xZZ"},
        {"tmem --lane 200", "--lane"},
        {"tmem --shape 32x32b --num 3", "--num"},
        {"wgmma-frag --n 60", "--n"},
        {"tmap --dtype bf16 --dims 64,128 --box 64,64", "--strides"},
        {"tmap --dtype bf16 --dims 64,x --strides 128 --box 64,64", "--dims"},
        {"layout \"(4,2):(1,4)\" --index 8", "--index"},
        {"layout \"(4,2):(1,4\"", "layout"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result *r = run(cases[i][0], 1);
        cr_expect_eq(r->rc, 2, "explain %s: exit %d\n%s", cases[i][0], r->rc, r->out);
        cr_expect(strstr(r->out, cases[i][1]) != NULL, "explain %s: message must name %s:\n%s", cases[i][0],
                  cases[i][1], r->out);
        r = run(cases[i][0], 0);
        cr_expect_str_eq(r->out, "", "explain %s: nothing on stdout for bad input", cases[i][0]);
    }
}

Test(explain, help_exits_0)
{
    static const char *const cmds[] = {"--help", "idesc --help", "smem-desc --help", "tmem --help",
                                       "wgmma-frag --help", "tmap --help", "layout --help"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        result *r = run(cmds[i], 0);
        cr_expect_eq(r->rc, 0, "explain %s", cmds[i]);
        cr_expect(strncmp(r->out, "usage: explain", 14) == 0, "explain %s:\n%s", cmds[i], r->out);
    }
    result *r = run("", 0);
    cr_expect_eq(r->rc, 2, "no command is bad input");
}

Test(explain, decode_layout_of_the_reference_shape)
{
    /* GQA B64 Hq64 Hkv8 Skv 8k D128 page 64 on sm90: 8 packed rows, the swapped MMAs' N = 8; 512
     * CTAs on the default 264 slots stay unsplit (2 waves x 65 = 130 tile-times against 4 x 33 at
     * s = 2), 1.109 GB to move, 15.5 FLOP a byte */
    result *r = run("decode", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "8 query heads per KV head x 1 new rows = 8 packed rows");
    EXPECT_HAS(r, "8 rows per CTA (sm90: the swapped MMAs' N");
    EXPECT_HAS(r, "1 m-tile(s), 0 padded row(s)");
    EXPECT_HAS(r, "512 CTAs of 128 threads");
    EXPECT_HAS(r, "splits:  1 (auto");
    EXPECT_HAS(r, "s=1: 2 x 65 = 130 (chosen) s=2: 4 x 33 = 132");
    EXPECT_HAS(r, "+     0  Vt [D x 128]");
    cr_expect(strstr(r->out, "next K") == NULL, "the swapped kernel keeps one K buffer: %s", r->out);
    EXPECT_HAS(r, "1.109e+09 bytes");
    EXPECT_HAS(r, "15.5 per byte");
    /* on the 396 slots the H200 gives the 8-row kernel (3 CTAs an SM), 3 splits: 4 waves x 23 */
    r = run("decode --slots 396", 1);
    EXPECT_HAS(r, "splits:  3 (auto");
    EXPECT_HAS(r, "s=3: 4 x 23 = 92 (chosen)");
    /* 64 packed rows and more: the m64 kernel */
    r = run("decode --hq 128 --hkv 1 --b 32 --skv 16384", 1);
    EXPECT_HAS(r, "64 rows per CTA (sm90: one warpgroup's m64): 2 m-tile(s)");
    /* its SMEM (D 128): Vt, Q 8 KB, K, Vs 16 KB each, P 8 KB, the scales 3.3 KB in 4 KB, then the
     * next tile's K and scales (17 KB) that --kv-tma 2 loads during this tile */
    EXPECT_HAS(r, "+ 69632  next K [128 x D] e4m3 and its scales");
    /* MQA with 4 new rows on sm100: 4 m-tiles of 128, causal counts; 128 CTAs on a B200's 148
     * slots: s = 8 is 7 waves of 17 tiles (119), under s = 1's 129; then the merge */
    r = run("decode --b 32 --hq 128 --hkv 1 --skv 16384 --sq 4 --backend sm100", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "4 m-tile(s)");
    EXPECT_HAS(r, "16381 16382 16383 16384");
    EXPECT_HAS(r, "splits:  8 (auto");
    EXPECT_HAS(r, "s=8: 7 x 17 = 119 (chosen)");
    EXPECT_HAS(r, "then the merge kernel");
    r = run("decode --hq 6 --hkv 4", 1);
    cr_expect_eq(r->rc, 2);
    EXPECT_HAS(r, "multiple of --hkv");
}

Test(explain, ring_budgets_and_parities)
{
    /* sm90, D 128, auto: 2 slot pairs, 32 KB + 2 x 64 KB of SMEM; the register split; tile 2 wraps
     * to slot 0 with phase 1: consumers wait parity 1, the producer parity 0 */
    result *r = run("ring", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "a ring of 2 K/V slot pair(s)");
    EXPECT_HAS(r, "+ 98304  V slot 0");
    EXPECT_HAS(r, "the deepest ring that fits at D = 128: 3 slot(s); --ring auto takes 2");
    EXPECT_HAS(r, "8 consumer warps");
    EXPECT_HAS(r, "128 x 40 + 256 x 232 = 64512 of 65536");
    EXPECT_HAS(r, "            2     0      1  parity 1                  parity 0");
    EXPECT_HAS(r, "            0     0      0  parity 0                  parity 1  (a fresh barrier passes it");
    /* D 256: two slot pairs do not fit; one does */
    r = run("ring --d 256 --ring 2", 1);
    EXPECT_HAS(r, "DOES NOT FIT");
    EXPECT_HAS(r, "the deepest ring that fits at D = 256: 1 slot(s)");
    /* with 64-key tiles (sm90's --kv-tile 64) two pairs do */
    EXPECT_HAS(r, "(64 keys a KV tile) at D = 256: Q + 2 x (K [64 x 256] + V [64 x 256])");
    EXPECT_HAS(r, "so --ring auto takes 2 there");
    /* sm100 with overlap: the whole 512 TMEM columns, two S and two P buffers */
    r = run("ring --backend sm100 --overlap 1", 1);
    cr_expect_eq(r->rc, 0, "%s", r->out);
    EXPECT_HAS(r, "S0 [0, 128) S1 [128, 256) O [256, 384) P0 [384, 448) P1 [448, 512): 512 of 512");
    EXPECT_HAS(r, "named barrier 1, 160 threads: warps 0-4 take the TMEM address");
    r = run("ring --backend sm100", 1);
    EXPECT_HAS(r, "S [0, 128) O [256, 384) P [128, 192): 320 of 512");
    r = run("ring --backend sm100 --overlap 1 --d 256", 1);
    cr_expect_eq(r->rc, 2);
    EXPECT_HAS(r, "so D <= 128");
    r = run("ring --ring 4", 1);
    cr_expect_eq(r->rc, 2, "the ring has 1..3 slots");
}
