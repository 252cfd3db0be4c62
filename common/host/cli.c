#include "host/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIM (1 << 24) /* sizes beyond this are typos, not shapes */

typedef enum { K_INT, K_BOOL, K_BACKEND, K_INIT, K_U64, K_STR, K_HELP, K_NOCHECK, K_LAYOUT, K_AUTO_INT, K_AUTO_BOOL, K_AUTO_LEVEL } kind_t;

typedef struct {
    const char *name;
    kind_t kind;
    size_t offset;
    unsigned needs; /* OPT_* bit the stage must accept, 0 = always */
    int min;
    const char *help;
} flag_t;

#define OFF(f) offsetof(fmha_opts, f)
static const flag_t flags[] = {
    {"--b", K_INT, OFF(b), 0, 1, "batch size"},
    {"--hq", K_INT, OFF(hq), 0, 1, "query heads"},
    {"--hkv", K_INT, OFF(hkv), OPT_HKV, 1, "KV heads (Hq must be a multiple; 1 = MQA)"},
    {"--sq", K_INT, OFF(sq), 0, 1, "query rows per (batch, head)"},
    {"--skv", K_INT, OFF(skv), 0, 0, "keys per (batch, head)"},
    {"--d", K_INT, OFF(d), 0, 1, "head dimension"},
    {"--causal", K_BOOL, OFF(causal), OPT_CAUSAL, 0, "causal mask, bottom-right aligned (0/1)"},
    {"--page", K_INT, OFF(page), OPT_PAGE, 0, "KV page size in tokens: 16, 32, 64, 128 or 256"},
    {"--seqlens", K_STR, OFF(seqlens), OPT_DECODE, 0, "KV length of each sequence, comma-separated (--b of them)"},
    {"--ragged", K_BOOL, OFF(ragged), OPT_DECODE, 0, "lengths drawn at random in [1, --skv] (0/1)"},
    {"--splits", K_AUTO_INT, OFF(splits), OPT_DECODE, 0, "auto|N: split-KV CTAs per sequence"},
    {"--prefetch", K_INT, OFF(prefetch), OPT_DECODE, 0, "N: KV tiles prefetched into L2 ahead of the gather (0 = none)"},
    {"--kv-tma", K_AUTO_LEVEL, OFF(kv_tma), OPT_DECODE, 0,
     "auto|0|1|2: K and V gathered by TMA, one box a page (sm90's unpipelined kernels, and at 1 the load warps of the "
     "ring past 32 rows; 2: the next tile's boxes issued during this one; auto: 2, 0 where TMA does not apply and on "
     "the ring)"},
    {"--fair", K_INT, OFF(fair), OPT_DECODE, 0,
     "N: a CTA more than N KV tiles ahead of the grid's mean progress holds its next tile's boxes back, so the CTAs "
     "end together (sm90's kernel up to 32 packed rows with --kv-tma 2, a grid of one wave; 0 = off)"},
    {"--m64-groups", K_INT, OFF(m64_groups), OPT_DECODE, 0, "1|2: warpgroups of 64 packed rows sharing each K/V tile (sm90, past 32 rows)"},
    {"--ring", K_AUTO_INT, OFF(ring), OPT_RING, 0, "auto|N: K/V ring slots (stage F; stage D: the pipelined decode, auto: 3 on sm90 past 32 packed rows at D <= 128 where a split holds >= 8 tiles, else none; 1: none)"},
    {"--ws", K_BOOL, OFF(ws), OPT_PIPE, 0, "warp specialisation: a producer warp of its own (0/1)"},
    {"--pingpong", K_AUTO_BOOL, OFF(pingpong), OPT_PIPE, 0, "auto|0|1: two consumer warpgroups take turns at the MMAs"},
    {"--consumers", K_AUTO_INT, OFF(consumers), OPT_PIPE, 0, "auto|2|3: sm90 consumer warpgroups of 64 query rows"},
    {"--kv-tile", K_AUTO_INT, OFF(kv_tile), OPT_PIPE, 0, "auto|64|128|176: keys a KV tile (auto: 128; sm90: 64 at D = 256 gives the ring two slots, 176 at D = 128 is FA3's tile)"},
    {"--overlap", K_AUTO_BOOL, OFF(overlap), OPT_PIPE | OPT_OVERLAP, 0,
     "auto|0|1: S of tile j+1 issued before the softmax of tile j (stage F; stage D's ring past 32 rows: P V of tile j-1 "
     "under the softmax of tile j, auto: 0)"},
    {"--persistent", K_AUTO_BOOL, OFF(persistent), OPT_PIPE | OPT_PERSIST, 0,
     "auto|0|1: sm90: one CTA per SM walks the query tiles, the next tile's Q loading under this one (stage D: one "
     "CTA per resident slot walks the (sequence, KV head) items, the next item's first tile issued under this one's "
     "last; auto: 0)"},
    {"--kv-box", K_AUTO_BOOL, OFF(kv_box), OPT_PIPE, 0,
     "auto|0|1: sm90: each K/V tile in one 5-D TMA copy instead of D / 64 4-D ones (auto: 0)"},
    {"--cluster", K_AUTO_INT, OFF(cluster), OPT_PIPE, 0,
     "auto|1|2: sm90: two CTAs of neighbouring query tiles in a cluster, each K/V box loaded once and multicast "
     "into both (auto: 1)"},
    {"--rescale-th", K_AUTO_LEVEL, OFF(rescale_th), OPT_PIPE, 0,
     "auto|N: sm90 and emu: a row's max moves (and O is rescaled) only when a tile's exceeds it by more than N in log2 units, "
     "0..8 (0: whenever it grows; auto: 1, 0 at D = 128)"},
    {"--lpt-heads", K_AUTO_INT, OFF(lpt_heads), OPT_PIPE, 0,
     "auto|N: causal query tiles longest first across N heads (1: head by head; auto: the heads whose K and V fit 16 MiB)"},
    {"--layout", K_LAYOUT, OFF(layout_bshd), OPT_LAYOUT, 0, "bhsd|bshd: tensor layout (by strides)"},
    {"--backend", K_BACKEND, OFF(backend), 0, 0, "auto|sm90|sm100|emu"},
    {"--init", K_INIT, OFF(init), 0, 0, "rand|int|ramp|ones"},
    {"--seed", K_U64, OFF(seed), 0, 0, "RNG seed"},
    {"--check", K_BOOL, OFF(check), 0, 0, "verify against the host reference (default 1)"},
    {"--no-check", K_NOCHECK, OFF(check), 0, 0, "same as --check=0"},
    {"--iters", K_INT, OFF(iters), 0, 0, "timed samples on a GPU backend (0 = no timing)"},
    {"--warmup", K_INT, OFF(warmup), 0, 0, "warm-up launches before timing"},
    {"--warmup-ms", K_INT, OFF(warmup_ms), 0, 0, "then warm-up launches until this many ms have passed (0 = none)"},
    {"--csv", K_STR, OFF(csv), 0, 0, "append one result row to this CSV file"},
    {"--dump", K_STR, OFF(dump), 0, 0, "write inputs and outputs as .npy into this folder"},
    {"--timeline", K_STR, OFF(timeline), OPT_DECODE, 0,
     "FILE: each CTA's entry, first KV tile and exit (the GPU clock, the last timed launch) as a CSV, and a summary (sm90)"},
    {"--fault", K_STR, OFF(fault), 0, 0, "run one footgun's broken variant (the list is below)"},
    {"--help", K_HELP, OFF(help), 0, 0, "this text"},
};
#define NFLAGS ((int)(sizeof flags / sizeof flags[0]))

static int parse_int(const char *flag, const char *v, int min, int *out, char *err, size_t len)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno) {
        snprintf(err, len, "%s: '%s' is not an integer", flag, v);
        return 2;
    }
    if (x < min) {
        snprintf(err, len, "%s=%ld: must be >= %d", flag, x, min);
        return 2;
    }
    if (x > MAX_DIM) {
        snprintf(err, len, "%s=%ld: must be <= %d", flag, x, MAX_DIM);
        return 2;
    }
    *out = (int)x;
    return 0;
}

/* 1/true/on and 0/false/off; anything else returns 1 and leaves *out alone. */
static int parse_bool(const char *v, int *out)
{
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "on")) *out = 1;
    else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "off")) *out = 0;
    else return 1;
    return 0;
}

static int set_flag(const flag_t *f, const char *v, fmha_opts *o, char *err, size_t len)
{
    char *base = (char *)o + f->offset;
    switch (f->kind) {
    case K_INT:
        return parse_int(f->name, v, f->min, (int *)base, err, len);
    case K_BOOL:
        if (parse_bool(v, (int *)base)) {
            snprintf(err, len, "%s: '%s' is not a boolean (use 0 or 1)", f->name, v);
            return 2;
        }
        return 0;
    case K_BACKEND:
        for (int b = 0; b < BACKEND_COUNT; b++)
            if (!strcmp(v, backend_name((backend_t)b))) { *(backend_t *)base = (backend_t)b; return 0; }
        snprintf(err, len, "--backend: '%s' is not one of auto, sm90, sm100, emu", v);
        return 2;
    case K_INIT:
        for (int i = 0; i < INIT_COUNT; i++)
            if (!strcmp(v, init_name((init_t)i))) { *(init_t *)base = (init_t)i; return 0; }
        snprintf(err, len, "--init: '%s' is not one of rand, int, ramp, ones", v);
        return 2;
    case K_LAYOUT:
        if (!strcmp(v, "bhsd")) *(int *)base = 0;
        else if (!strcmp(v, "bshd")) *(int *)base = 1;
        else {
            snprintf(err, len, "--layout: '%s' is not one of bhsd, bshd", v);
            return 2;
        }
        return 0;
    case K_AUTO_INT:
        if (!strcmp(v, "auto")) { *(int *)base = 0; return 0; }
        return parse_int(f->name, v, 1, (int *)base, err, len);
    case K_AUTO_LEVEL: /* auto -1 (the stage decides), or a level 0, 1, 2, ... */
        if (!strcmp(v, "auto")) { *(int *)base = -1; return 0; }
        return parse_int(f->name, v, 0, (int *)base, err, len);
    case K_AUTO_BOOL: /* -1: the stage decides (options.h) */
        if (!strcmp(v, "auto")) *(int *)base = -1;
        else if (parse_bool(v, (int *)base)) {
            snprintf(err, len, "%s: '%s' is not auto, 0 or 1", f->name, v);
            return 2;
        }
        return 0;
    case K_U64: {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 0);
        if (*v == '\0' || *end != '\0' || errno || *v == '-') {
            snprintf(err, len, "--seed: '%s' is not a non-negative integer", v);
            return 2;
        }
        *(uint64_t *)base = (uint64_t)x;
        return 0;
    }
    case K_STR:
        if (strlen(v) >= sizeof o->csv) {
            snprintf(err, len, "%s: longer than %zu characters", f->name, sizeof o->csv - 1);
            return 2;
        }
        if (*v == '\0') {
            snprintf(err, len, "%s: empty %s", f->name,
                     strcmp(f->name, "--fault") == 0 ? "name" : strcmp(f->name, "--seqlens") == 0 ? "list" : "path");
            return 2;
        }
        strcpy(base, v);
        return 0;
    default:
        return 0;
    }
}

int cli_parse(int argc, char **argv, unsigned accepts, fmha_opts *o, char *err, size_t len)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h")) arg = "--help";
        const char *eq = strchr(arg, '=');
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        const flag_t *f = NULL;
        for (int k = 0; k < NFLAGS; k++)
            if (strlen(flags[k].name) == nlen && !strncmp(flags[k].name, arg, nlen)) f = &flags[k];
        if (!f) {
            snprintf(err, len, "unknown flag '%.*s' (see --help)", (int)nlen, arg);
            return 2;
        }
        if (f->needs && !(accepts & f->needs)) {
            snprintf(err, len, "%s: this stage does not support it (see --help)", f->name);
            return 2;
        }
        if (f->kind == K_HELP) { o->help = 1; continue; }
        if (f->kind == K_NOCHECK) {
            if (eq) { snprintf(err, len, "--no-check takes no value"); return 2; }
            o->check = 0;
            continue;
        }
        const char *v;
        if (eq) v = eq + 1;
        else if ((f->kind == K_BOOL || f->kind == K_AUTO_BOOL || f->kind == K_AUTO_LEVEL) && (i + 1 >= argc || argv[i + 1][0] == '-')) v = "1";
        else if (i + 1 < argc) v = argv[++i];
        else {
            snprintf(err, len, "%s needs a value", f->name);
            return 2;
        }
        int rc = set_flag(f, v, o, err, len);
        if (rc) return rc;
    }
    return 0;
}

int cli_validate_common(const fmha_opts *o, char *err, size_t len)
{
    if (o->hq % o->hkv != 0) {
        snprintf(err, len, "--hq=%d --hkv=%d: --hq must be a multiple of --hkv (each KV head serves "
                 "Hq/Hkv query heads)", o->hq, o->hkv);
        return 2;
    }
    size_t q_elems = (size_t)o->b * o->hq * o->sq * o->d;
    size_t kv_elems = (size_t)o->b * o->hkv * o->skv * o->d;
    const size_t limit = (size_t)1 << 34; /* 16 Gi elements: past any test or benchmark shape */
    if (q_elems > limit || kv_elems > limit) {
        snprintf(err, len, "--b/--hq/--hkv/--sq/--skv/--d: tensors of %zu and %zu elements exceed the "
                 "limit of 2^34 elements", q_elems, kv_elems);
        return 2;
    }
    return 0;
}

int cli_check_emu_budget(const fmha_opts *o, double macs, double limit, char *err, size_t len)
{
    if (o->backend != BACKEND_EMU || macs <= limit) return 0;
    snprintf(err, len, "--backend emu: %.3g multiply-adds exceed the host model's limit of %.3g; use a smaller "
             "--b/--hq/--sq/--skv/--d", macs, limit);
    return 2;
}

int cli_check_grid(double x, double y, double z, const char *what_x, const char *what_y, const char *what_z, char *err,
                   size_t len)
{
    const double lim[3] = {2147483647.0, 65535.0, 65535.0}, n[3] = {x, y, z};
    const char *what[3] = {what_x, what_y, what_z}, *axis = "xyz";
    for (int i = 0; i < 3; i++)
        if (n[i] > lim[i]) {
            snprintf(err, len, "%s: the grid's %c dimension would be %.0f blocks, over CUDA's limit of %.0f", what[i],
                     axis[i], n[i], lim[i]);
            return 2;
        }
    return 0;
}

/* A K_AUTO_BOOL's value as the flag takes it. */
static const char *auto_bool(int v) { return v < 0 ? "auto" : v ? "1" : "0"; }

void cli_usage(const char *prog, const char *title, unsigned accepts, const fmha_opts *d)
{
    printf("%s: %s\n\nusage: %s [flags]\n\n", prog, title, prog);
    for (int k = 0; k < NFLAGS; k++) {
        if (flags[k].needs && !(accepts & flags[k].needs)) continue;
        printf("  %-12s %s\n", flags[k].name, flags[k].help);
    }
    /* defaults of the flags this stage takes, nothing else */
    printf("\ndefaults: b=%d hq=%d", d->b, d->hq);
    if (accepts & OPT_HKV) printf(" hkv=%d", d->hkv);
    printf(" sq=%d skv=%d d=%d", d->sq, d->skv, d->d);
    if (accepts & OPT_CAUSAL) printf(" causal=%d", d->causal);
    if (accepts & OPT_PAGE) printf(" page=%d", d->page);
    if (accepts & OPT_LAYOUT) printf(" layout=%s", d->layout_bshd ? "bshd" : "bhsd");
    if (accepts & OPT_DECODE) {
        printf(" ragged=%d splits=", d->ragged);
        if (d->splits) printf("%d", d->splits); else printf("auto");
    }
    if ((accepts & OPT_RING) && !(accepts & OPT_PIPE)) printf(" ring=%d", d->ring);
    if ((accepts & OPT_OVERLAP) && !(accepts & OPT_PIPE)) printf(" overlap=%s", auto_bool(d->overlap));
    if ((accepts & OPT_PERSIST) && !(accepts & OPT_PIPE)) printf(" persistent=%s", auto_bool(d->persistent));
    if (accepts & OPT_PIPE) {
        printf(" ring=");
        if (d->ring) printf("%d", d->ring); else printf("auto");
        printf(" ws=%d pingpong=%s overlap=%s consumers=", d->ws, auto_bool(d->pingpong), auto_bool(d->overlap));
        if (d->consumers) printf("%d", d->consumers); else printf("auto");
        printf(" kv_tile=");
        if (d->kv_tile) printf("%d", d->kv_tile); else printf("auto");
        printf(" lpt_heads=");
        if (d->lpt_heads) printf("%d", d->lpt_heads); else printf("auto");
    }
    printf(" backend=%s init=%s seed=%llu iters=%d warmup=%d\n", backend_name(d->backend), init_name(d->init),
           (unsigned long long)d->seed, d->iters, d->warmup);
    printf("exit codes: 0 verified, 1 wrong result or CUDA error, 2 bad arguments, 77 skipped\n");
}

void cli_shape_string(const fmha_opts *o, unsigned accepts, char *buf, size_t len)
{
    int n = snprintf(buf, len, "b=%d hq=%d", o->b, o->hq);
    if (accepts & OPT_HKV) n += snprintf(buf + n, len - (size_t)n, " hkv=%d", o->hkv);
    if ((accepts & OPT_DECODE) && o->seqlens[0]) n += snprintf(buf + n, len - (size_t)n, " sq=%d d=%d", o->sq, o->d);
    else n += snprintf(buf + n, len - (size_t)n, " sq=%d skv=%d d=%d", o->sq, o->skv, o->d);
    if (accepts & OPT_CAUSAL) n += snprintf(buf + n, len - (size_t)n, " causal=%d", o->causal);
    if (accepts & OPT_PAGE) n += snprintf(buf + n, len - (size_t)n, " page=%d", o->page);
    if (accepts & OPT_LAYOUT) n += snprintf(buf + n, len - (size_t)n, " layout=%s", o->layout_bshd ? "bshd" : "bhsd");
    if (accepts & OPT_DECODE) {
        if (o->seqlens[0]) n += snprintf(buf + n, len - (size_t)n, " seqlens=%.60s%s", o->seqlens, strlen(o->seqlens) > 60 ? "..." : "");
        else if (o->ragged) n += snprintf(buf + n, len - (size_t)n, " ragged=1");
        if (o->splits) n += snprintf(buf + n, len - (size_t)n, " splits=%d", o->splits);
        else n += snprintf(buf + n, len - (size_t)n, " splits=auto");
    }
    /* stage D's ring, prefetch and kv_tma appear only when set (kv_tma: 0, 1 or 2, not auto): its rows
     * without them keep their names */
    if ((accepts & OPT_DECODE) && o->prefetch) n += snprintf(buf + n, len - (size_t)n, " prefetch=%d", o->prefetch);
    if ((accepts & OPT_DECODE) && o->kv_tma >= 0) n += snprintf(buf + n, len - (size_t)n, " kv_tma=%d", o->kv_tma);
    if ((accepts & OPT_DECODE) && o->fair) n += snprintf(buf + n, len - (size_t)n, " fair=%d", o->fair);
    if ((accepts & OPT_DECODE) && o->m64_groups > 1) n += snprintf(buf + n, len - (size_t)n, " m64_groups=%d", o->m64_groups);
    if ((accepts & OPT_RING) && !(accepts & OPT_PIPE) && o->ring) n += snprintf(buf + n, len - (size_t)n, " ring=%d", o->ring);
    if ((accepts & OPT_PERSIST) && !(accepts & OPT_PIPE) && o->persistent > 0)
        n += snprintf(buf + n, len - (size_t)n, " persistent=%d", o->persistent);
    if ((accepts & OPT_OVERLAP) && !(accepts & OPT_PIPE) && o->overlap > 0)
        n += snprintf(buf + n, len - (size_t)n, " overlap=%d", o->overlap);
    if (accepts & OPT_PIPE) {
        if (o->ring) n += snprintf(buf + n, len - (size_t)n, " ring=%d", o->ring);
        else n += snprintf(buf + n, len - (size_t)n, " ring=auto");
        n += snprintf(buf + n, len - (size_t)n, " ws=%d pingpong=%s overlap=%s", o->ws, auto_bool(o->pingpong),
                      auto_bool(o->overlap));
        if (o->consumers) n += snprintf(buf + n, len - (size_t)n, " consumers=%d", o->consumers);
        if (o->kv_tile) n += snprintf(buf + n, len - (size_t)n, " kv_tile=%d", o->kv_tile);
        if (o->lpt_heads) n += snprintf(buf + n, len - (size_t)n, " lpt_heads=%d", o->lpt_heads);
        if (o->kv_box >= 0) n += snprintf(buf + n, len - (size_t)n, " kv_box=%d", o->kv_box);
        if (o->cluster) n += snprintf(buf + n, len - (size_t)n, " cluster=%d", o->cluster);
        if (o->rescale_th >= 0) snprintf(buf + n, len - (size_t)n, " rescale_th=%d", o->rescale_th);
    }
}
