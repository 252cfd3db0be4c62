/* The options every stage program understands (README, "The stage program contract"), as parsed from its command
 * line. Parsing and validation live in cli.c; the per-stage rules in each stage's validate(). */
#ifndef FMHA_OPTIONS_H
#define FMHA_OPTIONS_H

#include <stdint.h>

typedef enum { BACKEND_AUTO = 0, BACKEND_SM90, BACKEND_SM100, BACKEND_EMU, BACKEND_COUNT } backend_t;
typedef enum { INIT_RAND = 0, INIT_INT, INIT_RAMP, INIT_ONES, INIT_COUNT } init_t;

/* Optional flags a stage may accept; the rest are always accepted. */
enum {
    OPT_HKV    = 1u << 0, /* --hkv (GQA/MQA) */
    OPT_CAUSAL = 1u << 1, /* --causal */
    OPT_PAGE   = 1u << 2, /* --page (paged KV) */
    OPT_LAYOUT = 1u << 3, /* --layout bhsd|bshd (tensor layouts by strides) */
    OPT_DECODE = 1u << 4, /* --seqlens, --ragged, --splits (ragged decode over a paged cache) */
    OPT_PIPE   = 1u << 5, /* --ws, --pingpong, --overlap, --consumers (stage F's pipeline switches) */
    OPT_RING   = 1u << 6, /* --ring (stage F's K/V ring; stage D's pipelined decode) */
    OPT_OVERLAP = 1u << 7, /* --overlap alone (stage D's ring past 32 rows; OPT_PIPE includes it) */
    OPT_PERSIST = 1u << 8, /* --persistent alone (stage D's decode walking items; OPT_PIPE includes it) */
};

typedef struct {
    int b, hq, hkv, sq, skv, d; /* batch, query heads, KV heads, query rows, keys, head dim */
    int causal;                 /* 0/1; bottom-right aligned when sq != skv */
    int page;                   /* paged-KV page size in tokens: 16, 32, 64, 128 or 256 */
    int layout_bshd;            /* 0: [B, H, S, D] (default); 1: [B, S, H, D] */
    char seqlens[512];          /* --seqlens 5,17,300: one KV length per sequence ("" = from --skv) */
    int ragged;                 /* lengths drawn at random in [1, skv] (1 and skv included) */
    int splits;                 /* split-KV CTAs per sequence; 0 = auto (whole waves) */
    int prefetch;               /* stage D (sm90): KV tiles prefetched into L2 ahead of the gather;
                                 * 0 = none */
    int kv_tma;                 /* stage D (sm90): K and V gathered by TMA, one box a page (0/1; 2: the
                                 * next tile's boxes issued during this one; -1 auto:
                                 * dec_kv_tma_resolve) */
    int fair;                   /* stage D (sm90's swapped kernel, the next tile's boxes ahead, one wave):
                                 * a CTA more than this many KV tiles ahead of the grid's mean progress
                                 * holds its next boxes back; 0 = off */
    int m64_groups;             /* stage D (sm90, past 32 packed rows): warpgroups of 64 rows sharing a
                                 * K/V tile (1 or 2; 0 = 1) */
    int ring;                   /* K/V ring slots; 0 = auto (stage F: the deepest of 1..2 the SMEM
                                 * holds; stage D: 3 past 32 packed rows where a split holds enough
                                 * tiles, else no ring: D_fp8_paged/ring_auto.h) */
    int ws;                     /* warp specialisation (0/1) */
    int pingpong, overlap;      /* inter-warpgroup ping-pong, intra-warpgroup overlap of S_{j+1} with
                                 * the softmax of tile j: 0/1, or -1 = auto (the stage decides) */
    int consumers;              /* sm90 consumer warpgroups of 64 query rows: 2 or 3; 0 = auto */
    int kv_tile;                /* stage F: keys a KV tile, 64 (sm90, D = 256), 176 (sm90, D = 128) or
                                 * 128; 0 = auto (128) */
    int persistent;             /* sm90: one CTA per SM walks the query tiles: 0/1, -1 = auto */
    int kv_box;                 /* stage F (sm90): each K/V tile in one 5-D TMA copy: 0/1, -1 = auto (0) */
    int cluster;                /* stage F (sm90): CTAs a cluster sharing each K/V tile's copies: 1 or 2, 0 = auto */
    int rescale_th;             /* stage F (sm90, emu): log2 units a row's max may be exceeded before it moves (O
                                 * rescaled); -1 = auto */
    int lpt_heads;              /* stage F, causal: (batch, head) pairs an L2 section orders longest
                                 * first (fmha_tile_of); 1 = head by head; 0 = auto (fmha_lpt_heads) */
    backend_t backend;
    init_t init;
    uint64_t seed;
    int check;                  /* verify against the host reference (default on) */
    int iters, warmup;          /* timed samples and warm-up launches (GPU backends) */
    int warmup_ms;              /* then warm-up launches until this many ms have passed (0: none) */
    char csv[512];              /* append one result row to this CSV file ("" = none) */
    char dump[512];             /* write inputs and outputs as .npy into this folder ("" = none) */
    char timeline[512];         /* stage D (sm90): each CTA's entry, first tile and exit of the last
                                 * timed launch, as a CSV (host/cta_timeline.h; "" = none) */
    char fault[512];            /* --fault NAME: run one footgun's broken variant ("" = none) */
    unsigned fault_bits;        /* the stage's switches for that fault (set by the runner) */
    int help;
} fmha_opts;

const char *backend_name(backend_t b);
const char *init_name(init_t i);

#endif
