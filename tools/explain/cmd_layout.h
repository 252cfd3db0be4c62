/* explain layout: evaluate a CuTe shape:stride layout with model/layout.h (footgun FG09: a layout
 * that looks scrambled can be a plain (lane << 16) + column TMEM address). */
#ifndef FMHA_EXPLAIN_CMD_LAYOUT_H
#define FMHA_EXPLAIN_CMD_LAYOUT_H

#include "args.h"
#include "model/frag_map.h"
#include "model/layout.h"

static const char LAYOUT_USAGE[] =
    "usage: explain layout \"SHAPE:STRIDE\" [--index I | --coord c0,c1,..] [--tmem]\n"
    "Size, cosize, flattened form and top-level modes of a CuTe layout such as\n"
    "  \"((128,16),1,(4,2)):((65536,1),0,(16,64))\"\n"
    "and the offset of one index or coordinate, or by default of indices 0..15. Indices split over\n"
    "the leaf modes left to right, leftmost fastest (CuTe's colexicographic order).\n"
    "  --index  a 1-D index in [0, size)\n"
    "  --coord  one coordinate per top-level mode, each in [0, that mode's size)\n"
    "  --tmem   also print offsets as a TMEM address: (lane = offset >> 16, column = offset & 0xFFFF)\n"
    "exit: 0 explained, 2 bad input\n";

#define LAYOUT_LIMIT (1L << 62) /* sizes and offsets past this would overflow a long */

/* A run of leaves as "(s0,s1):(d0,d1)", or "s:d" for one leaf. */
static void leaves_string(const long *shape, const long *stride, int n, char *buf, size_t len)
{
    size_t u = 0;
    if (n == 1) { snprintf(buf, len, "%ld:%ld", shape[0], stride[0]); return; }
    u += (size_t)snprintf(buf + u, len - u, "(");
    for (int i = 0; i < n && u < len; i++) u += (size_t)snprintf(buf + u, len - u, "%s%ld", i ? "," : "", shape[i]);
    if (u < len) u += (size_t)snprintf(buf + u, len - u, "):(");
    for (int i = 0; i < n && u < len; i++) u += (size_t)snprintf(buf + u, len - u, "%s%ld", i ? "," : "", stride[i]);
    if (u < len) snprintf(buf + u, len - u, ")");
}

/* CuTe's coalesce: drop extent-1 leaves and merge a leaf into the previous one when it continues
 * it (stride == previous shape * previous stride). The result maps every index to the same offset
 * as the original, so it is the shortest honest description of what the layout does. */
static int coalesce(const long *shape, const long *stride, int n, long *s, long *d)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (shape[i] == 1) continue;
        if (m && d[m - 1] * s[m - 1] == stride[i]) s[m - 1] *= shape[i];
        else { s[m] = shape[i]; d[m] = stride[i]; m++; }
    }
    if (!m) { s[0] = 1; d[0] = 0; m = 1; }
    return m;
}

static void coalesced_string(const long *shape, const long *stride, int n, char *buf, size_t len)
{
    long s[LAYOUT_MAX_LEAVES], d[LAYOUT_MAX_LEAVES];
    leaves_string(s, d, coalesce(shape, stride, n, s, d), buf, len);
}

/* The coalesced layout as arithmetic on the index, e.g. "(i % 128)*65536 + i / 128". */
static void formula_string(const layout_t *l, char *buf, size_t len)
{
    long s[LAYOUT_MAX_LEAVES], d[LAYOUT_MAX_LEAVES], below = 1;
    int m = coalesce(l->shape, l->stride, l->nleaves, s, d);
    size_t u = 0;
    buf[0] = '\0';
    for (int j = 0; j < m && u < len; below *= s[j], j++) {
        if (d[j] == 0) continue; /* a broadcast mode adds nothing */
        char e[64];
        const int last = j == m - 1; /* i < size, so the last mode needs no modulo */
        if (below == 1 && last) snprintf(e, sizeof e, "i");
        else if (below == 1) snprintf(e, sizeof e, "i %% %ld", s[j]);
        else if (last) snprintf(e, sizeof e, "i / %ld", below);
        else snprintf(e, sizeof e, "i / %ld %% %ld", below, s[j]);
        const char *sep = u ? " + " : "";
        if (d[j] == 1) u += (size_t)snprintf(buf + u, len - u, "%s%s", sep, e);
        else if (!strcmp(e, "i")) u += (size_t)snprintf(buf + u, len - u, "%si*%ld", sep, d[j]);
        else u += (size_t)snprintf(buf + u, len - u, "%s(%s)*%ld", sep, e, d[j]);
    }
    if (!buf[0]) snprintf(buf, len, "0");
}

static void print_offset(long off, int tmem)
{
    printf("%ld", off);
    if (tmem) printf("  (lane %d, column %d)", tmem_addr_lane((uint32_t)off), tmem_addr_col((uint32_t)off));
    printf("\n");
}

static int cmd_layout(int argc, char **argv)
{
    opt_t opts[] = {{"--index", 1, 0, 0}, {"--coord", 1, 0, 0}, {"--tmem", 0, 0, 0}, {NULL, 0, 0, 0}};
    const char *text = NULL;
    if (parse_opts(argc, argv, 2, opts, &text)) { fputs(LAYOUT_USAGE, stdout); return 0; }
    if (!text) usage_error("expected a layout \"shape:stride\", e.g. \"(4,2):(1,4)\"");
    opt_t *oi = opt_find(opts, "--index"), *oc = opt_find(opts, "--coord");
    int tmem = opt_find(opts, "--tmem")->given;
    if (oi->given && oc->given) usage_error("--index and --coord: give one of them");

    layout_t l;
    char err[256];
    if (layout_parse(text, &l, err, sizeof err)) usage_error("layout '%s': %s", text, err);
    /* Bound size and cosize before the model multiplies them out. */
    long size = 1, cos = 0, mode_size[LAYOUT_MAX_TOP];
    for (int i = 0; i < l.nleaves; i++) {
        long term;
        if (__builtin_mul_overflow(size, l.shape[i], &size) || size > LAYOUT_LIMIT ||
            __builtin_mul_overflow(l.shape[i] - 1, l.stride[i], &term) || __builtin_add_overflow(cos, term, &cos) ||
            cos > LAYOUT_LIMIT)
            usage_error("layout '%s': size or largest offset exceeds 2^62", text);
    }
    if (tmem && layout_cosize(&l) > (1L << 32))
        usage_error("--tmem: offsets reach %ld, past a 32-bit TMEM address", layout_cosize(&l) - 1);

    /* Every input check happens before the first line is printed: an error never follows a partial
     * explanation. */
    long idx = -1, coord[LAYOUT_MAX_TOP];
    for (int t = 0; t < l.ntop; t++) {
        mode_size[t] = 1;
        for (int i = 0; i < l.top_count[t]; i++) mode_size[t] *= l.shape[l.top_first[t] + i];
    }
    if (oi->given) idx = (long)opt_int(oi, 0, layout_size(&l) - 1, "must be in [0, size)");
    if (oc->given) {
        uint64_t v[LAYOUT_MAX_TOP];
        int n = opt_list(oc, v, LAYOUT_MAX_TOP, 0, (uint64_t)LAYOUT_LIMIT);
        if (n != l.ntop) usage_error("--coord: %d entries, but the layout has %d top-level modes", n, l.ntop);
        for (int t = 0; t < n; t++) {
            if ((long)v[t] >= mode_size[t])
                usage_error("--coord: entry %d = %" PRIu64 " must be < %ld (the size of mode %d)", t, v[t], mode_size[t], t);
            coord[t] = (long)v[t];
        }
    }

    char buf[1024];
    printf("layout    %s\n", text);
    layout_flat_string(&l, buf, sizeof buf);
    printf("flat      %s\n", buf);
    coalesced_string(l.shape, l.stride, l.nleaves, buf, sizeof buf);
    printf("coalesced %s   (same offsets, fewest modes)\n", buf);
    formula_string(&l, buf, sizeof buf);
    printf("offset(i) %s   (i = 1-D index, leftmost mode fastest)\n", buf);
    printf("size      %ld\n", layout_size(&l));
    printf("cosize    %ld   (1 + largest offset)\n", layout_cosize(&l));
    for (int t = 0; t < l.ntop; t++) {
        const long *s = l.shape + l.top_first[t], *d = l.stride + l.top_first[t];
        char co[256];
        leaves_string(s, d, l.top_count[t], buf, sizeof buf);
        coalesced_string(s, d, l.top_count[t], co, sizeof co);
        printf("mode %-4d %s   size %ld, coalesced %s\n", t, buf, mode_size[t], co);
    }

    if (oi->given) {
        printf("index %ld -> offset ", idx);
        print_offset(layout_eval(&l, idx), tmem);
        return 0;
    }
    if (oc->given) {
        printf("coord (");
        for (int t = 0; t < l.ntop; t++) printf("%s%ld", t ? "," : "", coord[t]);
        printf(") -> offset ");
        print_offset(layout_eval_top(&l, coord), tmem);
        return 0;
    }
    long n = layout_size(&l) < 16 ? layout_size(&l) : 16;
    for (long i = 0; i < n; i++) {
        printf("  %3ld -> ", i);
        print_offset(layout_eval(&l, i), tmem);
    }
    if (layout_size(&l) > n) printf("  ... (%ld indices)\n", layout_size(&l));
    /* Checked by evaluating the model at every index (bounded so the tool stays instant). */
    if (layout_size(&l) <= (1L << 24)) {
        long bad = -1;
        for (long i = 0; i < layout_size(&l) && bad < 0; i++)
            if (layout_eval(&l, i) != i) bad = i;
        if (bad < 0) printf("identity: yes, offset == index for all %ld indices\n", layout_size(&l));
        else printf("identity: no (index %ld -> offset %ld)\n", bad, layout_eval(&l, bad));
    } else {
        printf("identity: not checked (size above 2^24)\n");
    }
    return 0;
}

#endif
