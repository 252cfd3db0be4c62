/* explain tmem / explain wgmma-frag: who holds what. tcgen05.ld/st per-thread maps and the warp
 * quadrant rule come from model/frag_map.h and model/tmem_model.h (the rule is checked by running
 * the access on the TMEM model, so the tool and the model cannot disagree); the wgmma fragment
 * maps from model/frag_map.h. */
#ifndef FMHA_EXPLAIN_CMD_TMEM_H
#define FMHA_EXPLAIN_CMD_TMEM_H

#include "args.h"
#include "attn/decode_core.h" /* dec_pv_key_of_pos, dec_p_reg_src: stage D's P in registers */
#include "model/frag_map.h"
#include "model/tmem_model.h"

static const char TMEM_USAGE[] =
    "usage: explain tmem [--shape 32x32b|16x64b|16x128b|16x256b|16x32bx2] [--num N] [--warp W]\n"
    "                    [--lane L] [--col C] [--half-off H]\n"
    "Which (lane, column) of TMEM each thread's registers hold for tcgen05.ld/st of one warp, one\n"
    "line per thread. The access is run on the TMEM model, so the warp-quadrant rule (warp w may\n"
    "touch only lanes 32*(w%4)..32*(w%4)+31) and the .num limits are enforced.\n"
    "  --shape     data-movement shape (default 32x32b)\n"
    "  --num       repetitions .xN: a power of two, at most 128 (16x128b: 64, 16x256b: 32); default 1\n"
    "  --warp      warp index in the CTA (default 0)\n"
    "  --lane      lane field of the address (default 32*(warp%4), the warp's quadrant)\n"
    "  --col       column field of the address (default 0)\n"
    "  --half-off  16x32bx2 only: the immHalfSplitoff immediate (columns added for threads 16-31)\n"
    "exit: 0 explained, 2 bad input or an access the model rejects (the message names the rule)\n";

static const char WGMMA_USAGE[] =
    "usage: explain wgmma-frag --n N [--a | --a8] [--thread T]\n"
    "Which (row, col) of the 64xN wgmma accumulator each of the 128 threads of the warpgroup holds\n"
    "in each f32 register (m64nNk16), or with --a which (row, k) of the 64x16 bf16/f16 A operand\n"
    "each thread holds when A comes from registers (8 values in 4 b32 registers per k16 step), or\n"
    "with --a8 the same for the 64x32 e4m3 A operand (16 bytes in 4 b32 registers per k32 step),\n"
    "with the key stage D's ring past 32 rows puts there (P in registers: V's keys permuted)\n"
    "and the S accumulator register the byte is packed from.\n"
    "  --n       N: 8..256 in steps of 8 (accumulator map; not needed with --a / --a8)\n"
    "  --a       the 16-bit A-fragment map instead of the accumulator map\n"
    "  --a8      the 8-bit A-fragment map, and stage D's P in registers\n"
    "  --thread  only this thread (0..127)\n"
    "exit: 0 explained, 2 bad input\n";

static const char *const TMEM_SHAPE_NAMES[] = {"32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2"};

static int cmd_tmem(int argc, char **argv)
{
    opt_t opts[] = {{"--shape", 1, 0, 0}, {"--num", 1, 0, 0}, {"--warp", 1, 0, 0},     {"--lane", 1, 0, 0},
                    {"--col", 1, 0, 0},   {"--half-off", 1, 0, 0}, {NULL, 0, 0, 0}};
    if (parse_opts(argc, argv, 2, opts, NULL)) { fputs(TMEM_USAGE, stdout); return 0; }
    opt_t *os = opt_find(opts, "--shape"), *on = opt_find(opts, "--num"), *ow = opt_find(opts, "--warp");
    opt_t *ol = opt_find(opts, "--lane"), *oc = opt_find(opts, "--col"), *oh = opt_find(opts, "--half-off");
    tmem_shape shape = os->given ? (tmem_shape)opt_choice(os, TMEM_SHAPE_NAMES, TMEM_SHAPES) : TMEM_32x32b;
    int num = on->given ? (int)opt_int(on, 1, 128, NULL) : 1;
    int warp = ow->given ? (int)opt_int(ow, 0, 31, "a CTA has at most 32 warps (0..31)") : 0;
    int lane = ol->given ? (int)opt_int(ol, 0, TMEM_LANES - 1, NULL) : tmem_warp_lane_base(warp);
    int col = oc->given ? (int)opt_int(oc, 0, TMEM_COLS - 1, NULL) : 0;
    int half_off = 0;
    if (oh->given) {
        if (shape != TMEM_16x32bx2) usage_error("--half-off: only the 16x32bx2 shape takes the half-split offset");
        half_off = (int)opt_int(oh, 0, TMEM_COLS - 1, NULL);
    }

    /* Run the load on a model with all 512 columns allocated: every rule of the instruction is the
     * model's, and a column past the end shows up as "not allocated". */
    tmem_model *tm = tmem_model_new();
    uint32_t base = 0;
    if (!tm || tmem_alloc(tm, TMEM_COLS, &base) != TMEM_OK) {
        fprintf(stderr, "%s: could not set up the TMEM model\n", g_cmd);
        tmem_model_free(tm);
        return 1;
    }
    const int regs = tmem_regs_per_thread(shape, num);
    static uint32_t buf[32 * 4 * 128]; /* 32 threads x the most registers any shape can take */
    uint32_t taddr = tmem_addr(base, lane, col);
    tmem_err e = tmem_ld(tm, warp, shape, num, half_off, taddr, 32, buf);
    if (e != TMEM_OK) {
        fprintf(stderr, "%s: %s\n", g_cmd, tm->msg); /* the model's message starts with the error's name */
        int q = warp % 4, q0 = tmem_warp_lane_base(warp);
        if (e == TMEM_ERR_QUADRANT) {
            fprintf(stderr, "rule: warp w may touch only TMEM quadrant w%%4, lanes 32*(w%%4)..32*(w%%4)+31 "
                    "(PTX 9.7.16.8.1); warp %d is in quadrant %d (lanes %d-%d): use --lane %d", warp, q, q0,
                    q0 + 31, q0);
            if (tmem_shape_lanes(shape) == 16) fprintf(stderr, " or %d (a 16-lane shape: lower or upper half)", q0 + 16);
            fprintf(stderr, "\n");
        }
        if (e == TMEM_ERR_UNALLOCATED)
            fprintf(stderr, "--col=%d / --num=%d: the access runs past the last TMEM column (%d)\n", col, num,
                    TMEM_COLS - 1);
        if (e == TMEM_ERR_SHAPE)
            fprintf(stderr, "--num=%d: .%s takes a power of two up to %d\n", num, TMEM_SHAPE_NAMES[shape],
                    tmem_max_num(shape));
        tmem_model_free(tm);
        return 2;
    }
    tmem_model_free(tm);

    int cmin = TMEM_COLS, cmax = -1, lmin = TMEM_LANES, lmax = -1;
    for (int t = 0; t < 32; t++)
        for (int r = 0; r < regs; r++) {
            int dl, dc;
            tmem_thread_map(shape, half_off, t, r, &dl, &dc);
            if (col + dc < cmin) cmin = col + dc;
            if (col + dc > cmax) cmax = col + dc;
            if (lane + dl < lmin) lmin = lane + dl;
            if (lane + dl > lmax) lmax = lane + dl;
        }
    printf("tcgen05.ld/st.sync.aligned.%s.x%d by warp %d (quadrant %d: lanes %d-%d), taddr 0x%08X "
           "(lane %d, column %d)\n", TMEM_SHAPE_NAMES[shape], num, warp, warp % 4, tmem_warp_lane_base(warp),
           tmem_warp_lane_base(warp) + 31, taddr, lane, col);
    if (shape == TMEM_16x32bx2) printf("half-split offset %d: threads 16-31 read %d columns further\n", half_off, half_off);
    printf("touches lanes %d-%d, columns %d-%d; %d register%s per thread, listed r0.. as (lane,col)\n", lmin, lmax,
           cmin, cmax, regs, regs == 1 ? "" : "s");
    for (int t = 0; t < 32; t++) {
        printf("t%-2d:", t);
        for (int r = 0; r < regs; r++) {
            int dl, dc;
            tmem_thread_map(shape, half_off, t, r, &dl, &dc);
            printf(" (%d,%d)", lane + dl, col + dc);
        }
        printf("\n");
    }
    return 0;
}

static int cmd_wgmma(int argc, char **argv)
{
    opt_t opts[] = {{"--n", 1, 0, 0}, {"--a", 0, 0, 0}, {"--a8", 0, 0, 0}, {"--thread", 1, 0, 0}, {NULL, 0, 0, 0}};
    if (parse_opts(argc, argv, 2, opts, NULL)) { fputs(WGMMA_USAGE, stdout); return 0; }
    opt_t *on = opt_find(opts, "--n"), *oa = opt_find(opts, "--a"), *ot = opt_find(opts, "--thread");
    const int a8 = opt_find(opts, "--a8")->given;
    if (a8 && (oa->given || on->given)) usage_error("--a8: the 8-bit A fragment is 64x32 whatever N is; drop --n and --a");
    int a = oa->given, n = 0;
    int t0 = 0, t1 = 127;
    if (ot->given) t0 = t1 = (int)opt_int(ot, 0, 127, "a warpgroup has threads 0..127");
    if (a8) {
        printf("wgmma A fragment (e4m3 from registers, one k32 step): 16 bytes per thread, byte v of b32 register g;\n"
               "listed g0.v0 .. g3.v3 as (row,k) <- the key whose P stage D's ring puts there (dec_pv_key_of_pos)\n"
               "and the S accumulator register it is packed from (dec_p_reg_src, K step 0)\n");
        for (int t = t0; t <= t1; t++) {
            printf("t%-3d (warp %d lane %2d):", t, t / 32, t % 32);
            for (int g = 0; g < 4; g++)
                for (int v = 0; v < 4; v++) {
                    int row, k;
                    wgmma_a8_map(t, g, v, &row, &k);
                    printf(" (%d,%d)<-key %d d%d", row, k, dec_pv_key_of_pos(k), dec_p_reg_src(0, g, v));
                }
            printf("\n");
        }
        return 0;
    }
    if (!a) {
        require_given(on, "the accumulator's width");
        n = (int)opt_int(on, 8, 256, "wgmma m64nNk16 takes N = 8..256 in steps of 8");
        if (n % 8) usage_error("--n=%s: wgmma m64nNk16 takes N = 8..256 in steps of 8", on->val);
    } else if (on->given) {
        usage_error("--n: the A fragment is 64x16 whatever N is; drop --n or --a");
    }
    int nreg = a ? 8 : n / 2;
    if (a)
        printf("wgmma A fragment (bf16/f16 from registers, one k16 step): 8 values per thread, value v in "
               "b32 register v/2 (even v in the low half); listed v0..v7 as (row,k)\n");
    else
        printf("wgmma m64n%dk16 accumulator (f32): %d registers per thread, listed d0..d%d as (row,col)\n", n,
               nreg, nreg - 1);
    for (int t = t0; t <= t1; t++) {
        printf("t%-3d (warp %d lane %2d):", t, t / 32, t % 32);
        for (int i = 0; i < nreg; i++) {
            int row, c;
            if (a) wgmma_a_map(t, i, &row, &c);
            else wgmma_acc_map(t, i, &row, &c);
            printf(" (%d,%d)", row, c);
        }
        printf("\n");
    }
    return 0;
}

#endif
