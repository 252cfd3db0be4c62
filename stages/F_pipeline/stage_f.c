/* Stage F glue: the pipeline switches and their rules, the backends, the footgun variants, the
 * shape table (stage C's attention table, then the switch combinations and long sequences). The
 * attention host side is common/host/attention.c, the tensor maps common/host/fmha_tmaps.c; the
 * kernels are fmha_sm90.cu / fmha_sm100.cu, the host-model pipeline fmha_emu.c. */
#include <stdio.h>
#include <string.h>

#include "host/attention.h"
#include "host/backend.h"
#include "host/fmha_tmaps.h"
#include "host/runner.h"
#include "host/shape_table.h"
#include "fmha.h"

/* --kv-tile: 128 keys a KV tile, or (sm90, D = 128) FlashAttention-3's 176, 2% slower at D128 S8k
 * and 6-17% on shorter rows on the H200 (notes/stage-f-perf.md), or (sm90, D = 256) 64, where Q (64 KB) and two slot pairs of 128
 * keys (2 x 128 KB) are past the SMEM and of 64 keys (2 x 64 KB) fit, so the ring gets its second
 * slot and the overlap's registers fit (FMHA_F_SM90_OVERLAP_FITS). auto takes 128 everywhere: on
 * the H200 the 64-key kernel with both (its fastest setting) ran 1.2-1.7% slower than the 128-key
 * one at D256 S 2k-8k non-causal and causal S 16k, within 0.5% at causal S 2k-8k
 * (notes/stage-f-perf.md): twice the tiles, each with its waits and softmax bookkeeping, and
 * m64n64 MMAs that read Q once per 64 keys instead of per 128. */
static int cols_of(const fmha_opts *o) { return o->kv_tile ? o->kv_tile : FMHA_BN; }

/* The ring depth a run uses: --ring N, or auto's choice for its head dim and key tile. */
static int ring_of(const fmha_opts *o) { return o->ring ? o->ring : fmha_f_auto_ring_cols(o->d, cols_of(o)); }

/* Short rows (fmha_f_short_rows): a 128-row query tile sees fewer than FMHA_F_SHORT_KV_TILES KV
 * tiles on average, so each CTA's fixed costs (Q's load, the first K's
 * latency, the epilogue, the diagonal tiles) weigh heavily. On the H200 (notes/stage-f-perf.md,
 * the switch sweep): at 8.5 and 16.5 tiles (causal S 2k and 4k) the persistent kernel with two
 * consumer groups gained 11% and 4.5% at D 64, at 16 (S 2k) the persistent kernel 1.4-2.3% at D 128;
 * at 32 (S 4k, causal S 8k) both lost 1-6%. */
static int short_rows(const fmha_opts *o) { return fmha_f_short_rows(o->sq, o->skv, o->causal); }

/* --consumers auto: three consumer groups (a 192-row query tile) on sm90 with the producer warpgroup
 * wherever their registers hold S, P and O (D <= 64), two elsewhere. With three the ping-pong is
 * off (three warps per scheduler take turns without it) and the overlap on: D64 S8k on the H200
 * (notes/stage-f-perf.md), 2.03 ms with three groups and the overlap, 2.23 ms with three alone,
 * 2.46 ms with two groups, ping-pong and overlap. Causal short rows take two: a 192-row tile
 * crosses the diagonal over three KV tiles, a 128-row one over two (D64 causal S 2k: 0.446 ms with
 * three groups, 0.429 with two and the ping-pong, 0.401 with two and the persistent kernel). */
static int consumers_of(const fmha_opts *o)
{
    if (o->consumers) return o->consumers;
    return o->backend == BACKEND_SM90 && o->ws && FMHA_F_SM90_THREE_OK(o->d) && !(o->causal && short_rows(o)) ? 3 : 2;
}

/* The query rows of one CTA: 192 with three consumer groups, FMHA_BM otherwise. */
static int cta_rows(const fmha_opts *o) { return consumers_of(o) == 3 ? 192 : FMHA_BM; }

/* --kv-box 1: sm90 copies each K/V tile with one 5-D TMA box (host/fmha_tmaps.c: the D / 64 atom
 * columns in one copy); auto keeps the D / 64 4-D boxes: on the H200 the one box was -0.2% at
 * D 128 and +0.3-0.4% at D 64 and 256 (notes/stage-f-perf.md). The sm100 kernel and the emu flow
 * copy 4-D boxes only. */
static int kv_box_of(const fmha_opts *o) { return o->backend == BACKEND_SM90 && o->kv_box == 1; }

/* --persistent auto: on for short rows on sm90 with the producer warpgroup, where two Q buffers fit
 * the SMEM and the ping-pong is not asked for (the persistent kernel runs without it). */
static int persistent_of(const fmha_opts *o)
{
    if (o->persistent >= 0) return o->persistent > 0;
    if (o->backend != BACKEND_SM90 || !o->ws || o->pingpong == 1 || o->cluster == 2 || !short_rows(o)) return 0;
    return fmha_f_smem_layout_make_kv(o->d, ring_of(o), cta_rows(o), 2, cols_of(o)).bytes <= SMEM_OPTIN_MAX_BYTES;
}

/* The query tiles of one (batch, head): the grid's x, which --cluster 2 pairs. */
static int q_tiles(const fmha_opts *o) { return (o->sq + cta_rows(o) - 1) / cta_rows(o); }

/* --cluster 2: neighbouring query tiles of one head (grid x 2k, 2k + 1) in a cluster of two CTAs;
 * each K/V box is read from L2 once and multicast into both CTAs' ring slot, so L2 serves 41% fewer
 * sectors (ncu at Llama S 8k). The kernel needs one-tile CTAs with the producer warpgroup, the same
 * KV tiles in both CTAs (no causal mask), an even number of query tiles and the 4-D boxes. Auto
 * leaves it off: on the H200 (notes/stage-f-perf.md) it was 0.1-1.3% faster at the power cap's
 * steady state at D 128 and 0.9% at D 256, but 1-3% slower over make bench's 20 samples of a cool
 * GPU, where the pair waiting for each other's releases costs more than the L2 traffic it saves. */
static int cluster_applies(const fmha_opts *o)
{
    return o->backend == BACKEND_SM90 && o->ws && !persistent_of(o) && !o->causal && !kv_box_of(o) && q_tiles(o) % 2 == 0;
}
static int cluster_of(const fmha_opts *o) { return o->cluster ? o->cluster : 1; }

/* --rescale-th N (sm90, emu): a row keeps its running max m until a tile's max exceeds it by more
 * than N (log2 units), FlashAttention-4's conditional rescale. The result is the same function: P
 * and l are taken against the m kept, and O / l cancels it; P stays below 2^N, l below 2^N x Skv.
 * Once a row's max has settled, alpha is exactly 1 on every tile, and a warp none of whose rows
 * moved skips O's D / 2 FMULs a thread (rescale_o). N = 0 moves the max whenever it grows
 * (FlashAttention-2's rule). Auto: 1 at D = 64 and 256, where it measured 1-2% faster on the H100
 * with the error of N = 0; 0 at D = 128, whose overlap rescales O on every tile anyway
 * (notes/stage-f-perf.md). Larger N measured a little faster still, but its error on sm90 grew
 * 1.3-2x: the tile's largest P is no longer exactly 1 when bf16 rounds it. */
#define FMHA_F_RESCALE_TH_MAX 8
static int rescale_th_of(const fmha_opts *o)
{
    if (o->backend == BACKEND_SM100) return 0;
    if (o->rescale_th >= 0) return o->rescale_th;
    return o->d == 128 ? 0 : 1;
}

/* --overlap auto and --pingpong auto: what ran fastest on the H200 at every head dim measured
 * (notes/stage-f.md, notes/stage-f-perf.md): on sm90 with a producer warpgroup, the overlap
 * wherever its registers fit (D <= 128 with 128-key tiles), and the ping-pong of two consumer
 * groups only where the overlap is off (D = 256: +5% there). With the overlap the ping-pong bought
 * nothing at D 128 S 2k-4k and causal S 8k, and cost 0.4-0.8% at S 8k-16k non-causal (two runs);
 * on Llama S 8k non-causal, the longest launch, the power cap moves a round's median by up to 10%
 * either way, more than either setting. Nor with the persistent kernel (see the rule in
 * validate). The sm100 flow has no ping-pong; its overlap stays off by default, unmeasured on
 * hardware. */
static int overlap_of(const fmha_opts *o)
{
    return o->overlap >= 0 ? o->overlap
                           : (o->backend == BACKEND_SM90 && o->ws && FMHA_F_SM90_OVERLAP_FITS(o->d, cols_of(o)));
}
static int pingpong_of(const fmha_opts *o)
{
    return o->pingpong >= 0 ? o->pingpong
                            : (o->backend == BACKEND_SM90 && o->ws && consumers_of(o) == 2 && !persistent_of(o) &&
                               !overlap_of(o));
}
/* The query rows of one CTA and the keys of one KV tile that fmha_params carries (0: FMHA_BM, FMHA_BN). */
static int rows_of(const fmha_opts *o) { return cta_rows(o) == FMHA_BM ? 0 : cta_rows(o); }
/* --lpt-heads auto: causal query tiles longest first across the heads whose K and V fit 16 MiB of
 * L2 (fmha_lpt_heads; notes/stage-f-perf.md has the H200's figures for 1 and auto). */
#define FMHA_F_LPT_MIB 16
static int lpt_heads_of(const fmha_opts *o, const fmha_params *p)
{
    return o->lpt_heads ? o->lpt_heads : fmha_lpt_heads(p, FMHA_F_LPT_MIB);
}

static int pipe_cols_of(const fmha_opts *o) { return cols_of(o) == FMHA_BN ? 0 : cols_of(o); }

/* The switches each backend has, named by the rule a bad combination breaks. */
static int validate_pipe(const fmha_opts *o, char *err, size_t len)
{
    const int ring = ring_of(o), sm90 = o->backend == BACKEND_SM90;
    const int pingpong = pingpong_of(o), overlap = overlap_of(o), cols = cols_of(o);
    if (cols != 64 && cols != FMHA_BN && cols != 176) {
        snprintf(err, len, "--kv-tile=%d: a KV tile holds 64, 128 or 176 keys", cols);
        return 2;
    }
    if (cols != FMHA_BN && !sm90) {
        snprintf(err, len, "--kv-tile=%d: %d-key tiles are sm90's (the %s flow keeps S and P in 128-column TMEM "
                 "buffers: 128 keys a tile)", cols, cols, backend_name(o->backend));
        return 2;
    }
    if (cols == 64 && !FMHA_F_SM90_COLS64_OK(o->d)) {
        snprintf(err, len, "--kv-tile=64 --d=%d: 64-key tiles are built for D = 256 only, where two K/V slot pairs of "
                 "128 keys do not fit beside Q; at D <= 128 they do", o->d);
        return 2;
    }
    if (cols == 176 && !FMHA_F_SM90_COLS176_OK(o->d)) {
        snprintf(err, len, "--kv-tile=176 --d=%d: 176-key tiles are built for D = 128 only (FlashAttention-3's tile; "
                 "at D = 256 two slot pairs of them are past the SMEM)", o->d);
        return 2;
    }
    if (ring > FMHA_RING_MAX) {
        snprintf(err, len, "--ring=%d: the ring has 1 to %d slots", ring, FMHA_RING_MAX);
        return 2;
    }
    const int nc = consumers_of(o);
    if (nc != 2 && nc != 3) {
        snprintf(err, len, "--consumers=%d: sm90's consumer warpgroups are 2 (128 query rows a CTA) or 3 (192)", nc);
        return 2;
    }
    if (nc == 3 && !sm90) {
        snprintf(err, len, "--consumers=3: three consumer warpgroups are sm90's (the %s flow has one softmax group of "
                 "128 rows)", backend_name(o->backend));
        return 2;
    }
    if (nc == 3 && !o->ws) {
        snprintf(err, len, "--consumers=3 --ws=0: the third consumer group comes with the producer warpgroup; it needs "
                 "--ws 1");
        return 2;
    }
    if (nc == 3 && !FMHA_F_SM90_THREE_OK(o->d)) {
        snprintf(err, len, "--consumers=3 --d=%d: 512 threads leave a consumer 160 registers, which hold S, P and O up "
                 "to D = 64", o->d);
        return 2;
    }
    const uint32_t smem = fmha_f_smem_layout_make_kv(o->d, ring, cta_rows(o), 1, cols).bytes;
    if (smem > SMEM_OPTIN_MAX_BYTES) {
        snprintf(err, len, "--ring=%d --d=%d: Q and %d K/V slot pairs of %d keys need %u bytes of SMEM, over the %u-byte "
                 "opt-in limit (use a shallower ring%s)", ring, o->d, ring, cols, smem, SMEM_OPTIN_MAX_BYTES,
                 sm90 && cols != 64 && FMHA_F_SM90_COLS64_OK(o->d) ? ", or --kv-tile 64" : "");
        return 2;
    }
    if (!sm90 && !o->ws) {
        snprintf(err, len, "--ws=0: the %s flow is warp-specialised by design (load, MMA and softmax warps); --ws 0 is "
                 "sm90's variant", backend_name(o->backend));
        return 2;
    }
    if (!sm90 && pingpong) {
        snprintf(err, len, "--pingpong=1: the ping-pong of two consumer warpgroups is sm90's (the %s flow has one "
                 "softmax group per CTA)", backend_name(o->backend));
        return 2;
    }
    if (sm90 && pingpong && !o->ws) {
        snprintf(err, len, "--pingpong=1 --ws=0: the ping-pong hands the MMAs between the consumer warpgroups while a "
                 "producer warp of its own keeps the ring full; it needs --ws 1");
        return 2;
    }
    if (sm90 && overlap && !FMHA_F_SM90_OVERLAP_FITS(o->d, cols)) {
        snprintf(err, len, "--overlap=1 --d=%d --kv-tile=%d: S_j (%d registers), P_{j-1} (%d) and O (%d) with 44 for the "
                 "rest do not fit a consumer thread's %d registers%s", o->d, cols, cols / 2, cols / 4, o->d / 2,
                 FMHA_F_SM90_CONSUMER_REGS_BN(cols),
                 cols != 64 && FMHA_F_SM90_COLS64_OK(o->d) ? " (with --kv-tile 64 they do)" : "");
        return 2;
    }
    if (o->kv_box == 1 && !sm90) {
        snprintf(err, len, "--kv-box=1: the one-box K/V copy is sm90's kernel's (the %s flow copies D / 64 boxes a "
                 "tile)", backend_name(o->backend));
        return 2;
    }
    if (o->rescale_th > FMHA_F_RESCALE_TH_MAX) {
        snprintf(err, len, "--rescale-th=%d: a row's max may lag by at most %d (log2 units: P below 2^%d)", o->rescale_th,
                 FMHA_F_RESCALE_TH_MAX, FMHA_F_RESCALE_TH_MAX);
        return 2;
    }
    if (o->rescale_th > 0 && o->backend == BACKEND_SM100) {
        snprintf(err, len, "--rescale-th=%d: the lagging row max is sm90's and emu's (the %s flow rescales O whenever "
                 "the max grows: --rescale-th 0)", o->rescale_th, backend_name(o->backend));
        return 2;
    }
    if (o->cluster < 0 || o->cluster > 2) {
        snprintf(err, len, "--cluster=%d: 1 or 2 CTAs a cluster (auto: 1)", o->cluster);
        return 2;
    }
    if (o->cluster == 2 && !cluster_applies(o)) {
        if (!sm90)
            snprintf(err, len, "--cluster=2: the multicast K/V copy is sm90's kernel's (the %s flow loads each CTA's "
                     "tiles on its own)", backend_name(o->backend));
        else if (!o->ws)
            snprintf(err, len, "--cluster=2 --ws=0: the cluster's copies are issued by the producer warpgroup's thread "
                     "(--ws 1)");
        else if (persistent_of(o))
            snprintf(err, len, "--cluster=2 --persistent=1: the persistent kernel's CTAs draw their query tiles one by "
                     "one, so two CTAs of a cluster would not hold neighbouring tiles (--persistent 0)");
        else if (o->causal)
            snprintf(err, len, "--cluster=2 --causal=1: neighbouring query tiles of a causal mask visit different "
                     "numbers of KV tiles, and both CTAs of a cluster load the same ones");
        else if (kv_box_of(o))
            snprintf(err, len, "--cluster=2 --kv-box=1: the multicast copies the D / 64 4-D boxes (--kv-box 0)");
        else
            snprintf(err, len, "--cluster=2: a cluster pairs neighbouring query tiles, and --sq=%d makes %d tiles of %d "
                     "rows, an odd number", o->sq, q_tiles(o), cta_rows(o));
        return 2;
    }
    if (persistent_of(o) && !(sm90 && o->ws)) {
        snprintf(err, len, "--persistent=1: the persistent kernel is sm90's with the producer warpgroup (--backend sm90 "
                 "--ws 1), whose one thread walks the query tiles ahead of the consumers");
        return 2;
    }
    if (persistent_of(o) && pingpong_of(o)) {
        snprintf(err, len, "--persistent=1 --pingpong=1: the persistent kernel's tiles are drawn as CTAs ask for them, so "
                 "no consumer group knows in advance which is its CTA's last, where the ping-pong's turn must stop "
                 "(--pingpong 0)");
        return 2;
    }
    if (persistent_of(o)) {
        const uint32_t two_q = fmha_f_smem_layout_make_kv(o->d, ring, cta_rows(o), 2, cols).bytes;
        if (two_q > SMEM_OPTIN_MAX_BYTES) {
            snprintf(err, len, "--persistent=1 --ring=%d --d=%d: two Q buffers and %d K/V slot pairs of %d keys need %u bytes "
                     "of SMEM, over the %u-byte opt-in limit", ring, o->d, ring, cols, two_q, SMEM_OPTIN_MAX_BYTES);
            return 2;
        }
    }
    if (!sm90 && overlap && o->d > 128) {
        snprintf(err, len, "--overlap=1 --d=%d: two S buffers, two P buffers and O need 2 x 128 + 2 x 64 + D <= 512 TMEM "
                 "columns, so D <= 128", o->d);
        return 2;
    }
    return 0;
}

static int validate(const fmha_opts *o, char *err, size_t len)
{
    /* the attention rules first (D among 64, 128, 256 ...), with the one-slot ring's SMEM; then the
     * switches, the ring's own SMEM among them */
    if (attn_validate(o, "F", fmha_f_smem_layout_make(o->d, 1).bytes, err, len)) return 2;
    if (validate_pipe(o, err, len)) return 2;
    fmha_params p;
    attn_params_for(o, &p);
    p.pipe.rows = rows_of(o); /* the Q box of the tensor map is the CTA's query tile, */
    p.pipe.cols = pipe_cols_of(o); /* the K and V boxes its key tile */
    p.pipe.kv_box5 = kv_box_of(o);  /* in one 5-D box a tile, or D / 64 4-D ones */
    char why[400];
    if (fmha_tmaps_check(&p, o->backend == BACKEND_SM90 ? 9 : 10, why, sizeof why)) {
        snprintf(err, len, "the tensor maps of this shape break a cuTensorMapEncodeTiled rule: %s", why);
        return 2;
    }
    return 0;
}

extern const stage_def stage_F;

static int run(const fmha_opts *o, stage_result *r)
{
    attn_problem ap;
    if (attn_problem_make(o, &ap)) return 1;
    ap.p.faults = o->fault_bits;
    ap.p.pipe.ring = ring_of(o);
    ap.p.pipe.ws = o->ws;
    ap.p.pipe.pingpong = pingpong_of(o);
    ap.p.pipe.overlap = overlap_of(o);
    ap.p.pipe.rows = rows_of(o);
    ap.p.pipe.cols = pipe_cols_of(o);
    ap.p.pipe.persistent = persistent_of(o);
    ap.p.pipe.lpt_heads = lpt_heads_of(o, &ap.p);
    ap.p.pipe.kv_box5 = kv_box_of(o);
    ap.p.pipe.cluster = cluster_of(o);
    ap.p.pipe.rescale_th = (float)rescale_th_of(o);
    stage_f_emu_stats es = {0, 0};
    int rc;
    if (o->backend == BACKEND_EMU) {
        char err[320];
        rc = stage_f_emu_run(&ap.p, o->seed, &es, err, sizeof err);
        if (err[0]) snprintf(r->model_msg, sizeof r->model_msg, "%s", err);
        if (rc) fprintf(stderr, "stage F (emu): %s\n", err);
    } else {
        rc = attn_run_gpu(&stage_F, o, &ap, r);
    }
    attn_counts(o, &ap, r);
    if (attn_dump(o, "F", &ap)) rc = 1;
    if (rc == 0 && o->check) attn_check(o, &ap, r);
    const size_t n = strlen(r->detail);
    snprintf(r->detail + n, sizeof r->detail - n,
             "%sring %d (%s), ping-pong %d%s, overlap %d%s, %d query rows a CTA, %d keys a KV tile%s%s", n ? "; " : "",
             ap.p.pipe.ring, o->ring ? "--ring" : "auto: the deepest of 1..2 that fits the SMEM", ap.p.pipe.pingpong,
             o->pingpong < 0 ? " (auto)" : "", ap.p.pipe.overlap, o->overlap < 0 ? " (auto)" : "", fmha_cta_rows(&ap.p),
             fmha_kv_cols(&ap.p), o->kv_tile ? "" : " (auto)",
             ap.p.pipe.persistent ? (o->persistent < 0 ? ", persistent (auto: short rows)" : ", persistent") : "");
    if (ap.p.pipe.kv_box5) {
        const size_t m = strlen(r->detail);
        snprintf(r->detail + m, sizeof r->detail - m, ", K/V one 5-D box a tile%s", o->kv_box < 0 ? " (auto)" : "");
    }
    if (ap.p.pipe.rescale_th > 0.0f) {
        const size_t m = strlen(r->detail);
        snprintf(r->detail + m, sizeof r->detail - m, ", the row max moves past %d%s", (int)ap.p.pipe.rescale_th,
                 o->rescale_th < 0 ? " (auto)" : "");
    }
    if (o->backend == BACKEND_EMU && rc == 0) { /* what the lag did, counted by the model */
        const size_t m = strlen(r->detail);
        snprintf(r->detail + m, sizeof r->detail - m, ", the row max moved on %ld of %ld tiles after a row's first",
                 es.max_moves, es.row_tiles);
    }
    if (ap.p.pipe.cluster == 2) {
        const size_t m = strlen(r->detail);
        snprintf(r->detail + m, sizeof r->detail - m, ", K/V multicast in clusters of 2");
    }
    if (ap.p.causal) {
        const size_t m = strlen(r->detail);
        snprintf(r->detail + m, sizeof r->detail - m, ", causal tiles longest first across %d heads%s", ap.p.pipe.lpt_heads,
                 o->lpt_heads ? "" : " (auto)");
    }
    attn_problem_free(&ap);
    return rc;
}

/* The shape table. gpu: stage C's attention table (D 64..256, Sq 1..128, Skv 1..4096 with tails,
 * causal, GQA/MQA, BSHD), then every switch combination at a few shapes and long sequences. */
static const char *const switch_rows[] = {
    "--d 128 --sq 300 --skv 1025 --causal --hq 4 --hkv 1 --ring 1 --ws 0 --pingpong 0 --overlap 0 --seed 21",
    "--d 128 --sq 300 --skv 1025 --causal --hq 4 --hkv 1 --ring 2 --ws 0 --pingpong 0 --overlap 0 --seed 22",
    "--d 128 --sq 300 --skv 1025 --causal --hq 4 --hkv 1 --ring 3 --ws 0 --pingpong 0 --overlap 0 --seed 23",
    "--d 128 --sq 300 --skv 1025 --causal --hq 4 --hkv 1 --ring 2 --ws 1 --pingpong 0 --overlap 0 --persistent 0 --seed 24",
    "--d 128 --sq 300 --skv 1025 --causal --hq 4 --hkv 1 --ring 3 --ws 1 --pingpong 0 --overlap 0 --persistent 0 --seed 25",
    "--d 64 --sq 257 --skv 700 --hq 2 --hkv 2 --ring 3 --ws 1 --pingpong 0 --overlap 0 --consumers 2 --layout bshd --persistent 0 --seed 26",
    "--d 64 --sq 300 --skv 1025 --causal --hq 4 --hkv 2 --consumers 2 --persistent 0 --seed 39", /* two groups on the one-tile kernel */
    "--d 256 --sq 200 --skv 513 --causal --hq 2 --hkv 1 --ring 1 --ws 1 --pingpong 0 --overlap 0 --seed 27",
    "--d 128 --sq 128 --skv 16384 --hq 1 --hkv 1 --seed 28",
    "--d 128 --sq 256 --skv 32768 --causal --hq 1 --hkv 1 --seed 29",
    "--d 64 --sq 1 --skv 16384 --hq 8 --hkv 1 --seed 30",
    /* three consumer groups (192 query rows a CTA): tails of the 192-row tile, causal, GQA, BSHD,
     * every ping-pong and overlap setting, a long sequence (short rows with the ping-pong off take
     * the persistent kernel by default: --persistent 0 keeps the one-tile kernel in the table) */
    "--d 64 --sq 193 --skv 700 --hq 2 --hkv 1 --consumers 3 --seed 31",
    "--d 64 --sq 400 --skv 1025 --causal --hq 4 --hkv 2 --consumers 3 --pingpong 0 --overlap 0 --persistent 0 --seed 32",
    "--d 64 --sq 191 --skv 513 --causal --hq 2 --hkv 2 --consumers 3 --pingpong 1 --overlap 0 --layout bshd --seed 33",
    "--d 64 --sq 577 --skv 300 --hq 3 --hkv 1 --consumers 3 --pingpong 0 --overlap 1 --ring 3 --persistent 0 --seed 34",
    "--d 64 --sq 1 --skv 129 --hq 2 --hkv 2 --consumers 3 --seed 35",
    "--d 64 --sq 384 --skv 16384 --causal --hq 1 --hkv 1 --consumers 3 --seed 36",
    "--d 64 --sq 700 --skv 300 --causal --hq 2 --hkv 1 --consumers 3 --seed 37", /* CTAs with no KV tile */
    "--d 64 --sq 300 --skv 100 --hq 2 --hkv 2 --consumers 3 --pingpong 1 --overlap 1 --seed 38", /* one tile */
    /* the persistent kernel: CTAs drawing several query tiles (more tiles than SMs), both Q
     * buffers, tails, causal with CTAs of no KV tile, GQA, BSHD, the overlap on and off (no
     * ping-pong), three consumer groups, one and three ring slots */
    "--d 128 --b 3 --sq 2500 --skv 2100 --causal --hq 24 --hkv 6 --persistent 1 --seed 41",
    "--d 128 --b 2 --sq 4200 --skv 777 --hq 20 --hkv 20 --persistent 1 --pingpong 0 --overlap 1 --layout bshd --seed 42",
    "--d 128 --b 2 --sq 2200 --skv 1500 --causal --hq 40 --hkv 8 --persistent 1 --pingpong 0 --overlap 0 --seed 43",
    "--d 128 --b 1 --sq 3000 --skv 300 --causal --hq 48 --hkv 4 --persistent 1 --ring 1 --seed 44", /* Sq > Skv */
    "--d 64 --b 2 --sq 3000 --skv 2049 --causal --hq 32 --hkv 8 --persistent 1 --seed 45",
    "--d 64 --b 2 --sq 2500 --skv 1000 --hq 32 --hkv 32 --persistent 1 --consumers 2 --ring 3 --seed 46",
    "--d 64 --b 1 --sq 5000 --skv 5000 --causal --hq 16 --hkv 16 --persistent 1 --consumers 3 --layout bshd --seed 47",
    "--d 128 --b 1 --sq 100 --skv 5000 --hq 2 --hkv 1 --persistent 1 --seed 48", /* fewer tiles than SMs */
    /* D = 256's 64-key tiles (--kv-tile 64; the table's D 256 rows take 128) under each switch:
     * one slot pair, the ping-pong alone, stage E's flow on the ring, the overlap alone, the
     * persistent kernel (one slot pair beside two Q buffers); tails of the 64-key tile (Skv 513,
     * 700, 2000, 1100), causal, GQA, BSHD */
    "--d 256 --sq 200 --skv 513 --causal --hq 2 --hkv 1 --kv-tile 64 --ring 1 --seed 49",
    "--d 256 --sq 130 --skv 700 --hq 2 --hkv 2 --kv-tile 64 --pingpong 1 --overlap 0 --layout bshd --seed 50",
    "--d 256 --sq 300 --skv 1025 --causal --hq 4 --hkv 1 --kv-tile 64 --ws 0 --pingpong 0 --overlap 0 --seed 51",
    "--d 256 --sq 129 --skv 2000 --hq 2 --hkv 1 --kv-tile 64 --pingpong 0 --overlap 1 --seed 52",
    "--d 256 --b 2 --sq 1500 --skv 1100 --causal --hq 16 --hkv 4 --kv-tile 64 --persistent 1 --ring 1 --seed 53",
    /* causal tiles longest first across L2 sections of heads (--lpt-heads): sections that do not
     * divide the (batch, head) pairs (15 in sections of 4, 12 in sections of 5), on the one-tile
     * kernel, the persistent one with three consumer groups, and D = 256 with MQA */
    "--d 128 --b 3 --sq 700 --skv 900 --causal --hq 5 --hkv 5 --lpt-heads 4 --seed 54",
    "--d 64 --b 2 --sq 2500 --skv 2500 --causal --hq 6 --hkv 3 --persistent 1 --lpt-heads 5 --seed 55",
    "--d 256 --b 3 --sq 600 --skv 650 --causal --hq 3 --hkv 1 --lpt-heads 2 --seed 56",
    /* D = 128's 176-key tiles (--kv-tile 176, FlashAttention-3's): the tail tile (1025 = 5 x 176 +
     * 145), one exact tile, causal (the diagonal inside a 176-key tile), the ping-pong without the
     * overlap, stage E's flow on the ring, the persistent kernel (one slot pair), GQA, BSHD */
    "--d 128 --sq 300 --skv 1025 --hq 2 --hkv 1 --kv-tile 176 --seed 57",
    "--d 128 --sq 129 --skv 176 --hq 1 --hkv 1 --kv-tile 176 --seed 58",
    "--d 128 --sq 500 --skv 700 --causal --hq 4 --hkv 2 --kv-tile 176 --seed 59",
    "--d 128 --sq 200 --skv 2000 --hq 2 --hkv 2 --kv-tile 176 --pingpong 1 --overlap 0 --layout bshd --seed 60",
    "--d 128 --sq 130 --skv 900 --hq 2 --hkv 1 --kv-tile 176 --ws 0 --pingpong 0 --overlap 0 --seed 61",
    "--d 128 --b 2 --sq 2500 --skv 1900 --causal --hq 20 --hkv 4 --kv-tile 176 --persistent 1 --ring 1 --seed 62",
    /* one 5-D K/V box a tile (--kv-box 1; the rows above take auto's D / 64 4-D boxes): D 64, 128
     * with 176-key tiles, 256, causal, GQA, MQA, BSHD, the persistent kernel, the producer in a
     * consumer thread (--ws 0) */
    "--d 64 --b 2 --sq 700 --skv 1300 --causal --hq 6 --hkv 2 --kv-box 1 --seed 63",
    "--d 128 --sq 300 --skv 1025 --hq 2 --hkv 1 --kv-tile 176 --kv-box 1 --layout bshd --seed 64",
    "--d 256 --sq 200 --skv 513 --causal --hq 2 --hkv 1 --kv-box 1 --seed 65",
    "--d 64 --b 2 --sq 2500 --skv 2500 --causal --hq 6 --hkv 3 --persistent 1 --kv-box 1 --seed 66",
    "--d 128 --sq 257 --skv 900 --hq 4 --hkv 4 --ws 0 --pingpong 0 --overlap 0 --kv-box 1 --seed 67",
    /* two CTAs a cluster sharing their K/V copies (--cluster 2): every head dim and key tile,
     * ping-pong and overlap, ring 1 and 3, tails in Sq and Skv, GQA and MQA, short rows (the
     * persistent kernel's auto yields to it) and a long MQA row */
    "--d 64 --b 2 --sq 700 --skv 1300 --hq 6 --hkv 2 --cluster 2 --seed 71",
    "--d 128 --sq 500 --skv 1025 --hq 2 --hkv 1 --cluster 2 --layout bshd --seed 72",
    "--d 128 --b 2 --sq 1000 --skv 900 --hq 4 --hkv 4 --pingpong 1 --overlap 0 --cluster 2 --seed 73",
    "--d 128 --sq 700 --skv 2000 --hq 4 --hkv 2 --kv-tile 176 --cluster 2 --seed 74",
    "--d 128 --sq 500 --skv 1300 --hq 2 --hkv 2 --ring 1 --cluster 2 --seed 75",
    "--d 128 --sq 500 --skv 1300 --hq 2 --hkv 2 --ring 3 --cluster 2 --seed 76",
    "--d 256 --sq 500 --skv 513 --hq 2 --hkv 1 --cluster 2 --seed 77",
    "--d 256 --sq 700 --skv 700 --hq 2 --hkv 1 --kv-tile 64 --cluster 2 --seed 78",
    "--d 128 --sq 2048 --skv 4096 --hq 8 --hkv 1 --cluster 2 --seed 79",
    /* the row max's lag (--rescale-th; the rows above take auto's): 0, FlashAttention-2's running
     * max, on the overlap, the ping-pong (D 256) and stage E's flow; 1, where the max moves on
     * many tiles and lags on the others, on the overlap, three consumer groups, the persistent
     * kernel and the cluster; 8, the most it may lag, with integer inputs (scores of tens: P up
     * to 2^8) */
    "--d 128 --sq 500 --skv 1300 --causal --hq 4 --hkv 2 --rescale-th 0 --seed 81",
    "--d 256 --sq 200 --skv 1025 --causal --hq 2 --hkv 1 --rescale-th 0 --seed 82",
    "--d 128 --sq 257 --skv 900 --hq 4 --hkv 4 --ws 0 --pingpong 0 --overlap 0 --rescale-th 0 --seed 83",
    "--d 128 --sq 300 --skv 2000 --hq 2 --hkv 1 --rescale-th 1 --layout bshd --seed 84",
    "--d 64 --b 2 --sq 700 --skv 2000 --hq 6 --hkv 2 --consumers 3 --rescale-th 1 --seed 85",
    "--d 128 --b 2 --sq 2500 --skv 1900 --causal --hq 20 --hkv 4 --persistent 1 --rescale-th 1 --seed 86",
    "--d 128 --sq 500 --skv 1300 --hq 2 --hkv 2 --cluster 2 --rescale-th 1 --seed 87",
    "--d 128 --sq 300 --skv 1500 --causal --hq 2 --hkv 1 --init int --rescale-th 8 --seed 88",
};
static const char *const emu_rows[] = {
    "--d 64 --sq 130 --skv 300 --causal --hq 2 --hkv 1 --ring 1 --seed 1",
    "--d 64 --sq 130 --skv 700 --hq 2 --hkv 1 --ring 2 --seed 2",
    "--d 128 --sq 64 --skv 1025 --causal --hq 1 --hkv 1 --ring 3 --seed 3",
    "--d 256 --sq 33 --skv 200 --hq 2 --hkv 2 --ring 1 --seed 4 --layout bshd",
    "--d 64 --sq 1 --skv 513 --hq 4 --hkv 1 --ring 2 --seed 5",
    "--d 64 --b 2 --sq 300 --skv 400 --causal --hq 3 --hkv 1 --lpt-heads 2 --seed 6",
};

/* ablation: the reference shape (FA3 protocol, D = 128, S = 8k), non-causal and causal, under
 * each step of the ladder the ablation plot draws: stage E's flow on the ring, a deeper ring, the
 * producer warpgroup, then the ping-pong and the overlap alone and together, and the deepest ring
 * with everything. Then the short causal rows (D = 64, S = 2k): three consumer groups on the
 * one-tile kernel, two, and two on the persistent kernel (the defaults there); then D = 256's key
 * tile (d256_steps); then the reference shape's causal order and 176-key rows (ref_more_steps).
 * `make bench` runs these after the protocol rows. */
static const char *const ablation_steps[] = {
    "--ring 1 --ws 0 --pingpong 0 --overlap 0", "--ring 2 --ws 0 --pingpong 0 --overlap 0",
    "--ring 2 --ws 1 --pingpong 0 --overlap 0", "--ring 2 --ws 1 --pingpong 1 --overlap 0",
    "--ring 2 --ws 1 --pingpong 0 --overlap 1", "--ring 2 --ws 1 --pingpong 1 --overlap 1",
    "--ring 3 --ws 1 --pingpong 1 --overlap 1",
};
static const char *const short_steps[] = {
    "--consumers 3 --persistent 0", "--consumers 2 --persistent 0", "--consumers 2 --persistent 1",
};
/* D = 256's key tile (causal S 4k, where stage F trailed FA4 most): 128 keys with one slot pair
 * (the ping-pong, no overlap: the default), then 64 keys with two slot pairs: the ping-pong alone,
 * the overlap alone, both (the 64-key kernel's fastest); then head by head, and O rescaled
 * whenever a row's max grows (--rescale-th 0) against auto's lag of 1. */
static const char *const d256_steps[] = {
    "--kv-tile 128", "--kv-tile 64 --pingpong 1 --overlap 0", "--kv-tile 64 --pingpong 0 --overlap 1",
    "--kv-tile 64 --pingpong 1 --overlap 1", "--kv-tile 128 --lpt-heads 1", "--kv-tile 128 --rescale-th 0",
};
/* The reference shape's own rows after the ladder: causal head by head (--lpt-heads 1, the old
 * order; D = 256's is d256_steps' last), 176 keys a KV tile, non-causal and causal, one K/V box a
 * tile (--kv-box 1) against auto's D / 64, K/V multicast in clusters of two (--cluster 2), and
 * the row max lagging by 1 (--rescale-th 1) against auto's 0 at D = 128. */
static const char *const ref_more_steps[] = {"--causal --lpt-heads 1", "--kv-tile 176", "--causal --kv-tile 176",
                                             "--kv-box 1", "--cluster 2", "--rescale-th 1"};

static int ablation_row(int i, char *args, size_t len)
{
    const int n = (int)(sizeof ablation_steps / sizeof ablation_steps[0]);
    const int ns = (int)(sizeof short_steps / sizeof short_steps[0]);
    const int nd = (int)(sizeof d256_steps / sizeof d256_steps[0]);
    const int nl = (int)(sizeof ref_more_steps / sizeof ref_more_steps[0]);
    if (i < 0 || i >= 2 * n + ns + nd + nl) return 0;
    if (i >= 2 * n + ns + nd) {
        snprintf(args, len, "--b 2 --hq 16 --hkv 16 --sq 8192 --skv 8192 --d 128 %s", ref_more_steps[i - 2 * n - ns - nd]);
        return 1;
    }
    if (i >= 2 * n + ns) {
        snprintf(args, len, "--b 4 --hq 8 --hkv 8 --sq 4096 --skv 4096 --d 256 --causal %s", d256_steps[i - 2 * n - ns]);
        return 1;
    }
    if (i >= 2 * n) {
        snprintf(args, len, "--b 8 --hq 32 --hkv 32 --sq 2048 --skv 2048 --d 64 --causal %s", short_steps[i - 2 * n]);
        return 1;
    }
    snprintf(args, len, "--b 2 --hq 16 --hkv 16 --sq 8192 --skv 8192 --d 128%s %s", i >= n ? " --causal" : "",
             ablation_steps[i % n]);
    return 1;
}

static int shapes(shape_suite suite, int i, char *args, size_t len)
{
    const int nsw = (int)(sizeof switch_rows / sizeof switch_rows[0]);
    switch (suite) {
    case SUITE_GPU:
        if (shape_attn_row(suite, i, args, len)) return 1;
        for (int k = 0; shape_attn_row(suite, k, args, len); k++) i--;
        return shape_list_row(switch_rows, nsw, i, args, len);
    case SUITE_GPU_QUICK:
        if (shape_attn_row(suite, i, args, len)) return 1;
        for (int k = 0; shape_attn_row(suite, k, args, len); k++) i--;
        return shape_list_row(switch_rows, 3, i, args, len);
    case SUITE_EMU: return shape_list_row(emu_rows, (int)(sizeof emu_rows / sizeof emu_rows[0]), i, args, len);
    case SUITE_ABLATION: return ablation_row(i, args, len);
    default: return shape_attn_row(suite, i, args, len);
    }
}

#define ALL_BACKENDS (BACKEND_BIT(BACKEND_EMU) | BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_SM100))
#define SM100_FLOW (BACKEND_BIT(BACKEND_EMU) | BACKEND_BIT(BACKEND_SM100))
static const stage_fault faults[] = {
    {"early-release", "FG23", FMHA_FAULT_EARLY_RELEASE, ALL_BACKENDS,
     "a ring slot's empty barrier arrived before the MMA reading it completed: the producer refills it mid-MMA",
     "--d 128 --sq 256 --skv 512 --hq 2 --hkv 1 --ring 1"},
    {"ring-same-parity", "FG16", FMHA_FAULT_RING_SAME_PARITY, ALL_BACKENDS,
     "the producer waits a slot's empty barrier with the full parity: the first pass through the ring waits for ever",
     "--d 64 --sq 128 --skv 512 --hq 1 --hkv 1 --ring 2"},
    {"ring-no-flip", "FG16", FMHA_FAULT_RING_NO_FLIP, ALL_BACKENDS,
     "the ring's phase not flipped at the wrap: on the second pass the waits pass at once, before the slot is refilled",
     "--d 64 --sq 128 --skv 1024 --hq 1 --hkv 1 --ring 2"},
    {"named-bar-join", "FG12", FMHA_FAULT_NAMED_BAR_JOIN, SM100_FLOW,
     "the load warp joins warps 0-4's TMEM-address barrier (bar.sync 1, 160 threads): 6 warps at a barrier for 5",
     "--d 64 --sq 128 --skv 256 --hq 1 --hkv 1"},
    {"commit-multicast", "FG11", FMHA_FAULT_COMMIT_MULTICAST, SM100_FLOW,
     "an MMA commit sent with a cluster multicast mask in a launch without cluster peers: the arrive goes elsewhere",
     "--d 64 --sq 128 --skv 256 --hq 1 --hkv 1"},
};

const stage_def stage_F = {
    .letter = "F",
    .name = "F_pipeline",
    .title = "attention forward with a K/V ring, warp specialisation and MMA/softmax overlap",
    .accepts = OPT_HKV | OPT_CAUSAL | OPT_LAYOUT | OPT_PIPE | OPT_RING,
    .backends = ALL_BACKENDS,
    .defaults = {.b = 1, .hq = 4, .hkv = 2, .sq = 256, .skv = 256, .d = 64, .ring = 0, .ws = 1, .pingpong = -1,
                 .overlap = -1, .persistent = -1, .kv_box = -1, .rescale_th = -1, .backend = BACKEND_AUTO, .init = INIT_RAND, .seed = 1, .check = 1, .iters = 20,
                 .warmup = 3},
    .validate = validate,
    .run = run,
    .launch_sm100 = stage_f_sm100_launch,
    .launch_sm90 = stage_f_sm90_launch,
    .shapes = shapes,
    .faults = faults,
    .nfaults = (int)(sizeof faults / sizeof faults[0]),
};
