#include "model/layout.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *s;
    size_t pos;
    long vals[LAYOUT_MAX_LEAVES];
    int n;
    char sig[128]; /* nesting signature, e.g. "((,),,(,))" with leaves as '.' */
    size_t siglen;
    int top_first[LAYOUT_MAX_TOP], top_count[LAYOUT_MAX_TOP], ntop;
    char *err;
    size_t errlen;
} parser;

static void skip_ws(parser *p) { while (isspace((unsigned char)p->s[p->pos])) p->pos++; }

static int sig(parser *p, char c)
{
    if (p->siglen + 1 >= sizeof p->sig) {
        snprintf(p->err, p->errlen, "layout nested too deeply");
        return 2;
    }
    p->sig[p->siglen++] = c;
    p->sig[p->siglen] = '\0';
    return 0;
}

static int parse_elem(parser *p, int depth);

static int parse_int(parser *p)
{
    skip_ws(p);
    if (!isdigit((unsigned char)p->s[p->pos])) {
        snprintf(p->err, p->errlen, "position %zu: expected an integer or '(' but found '%c'", p->pos,
                 p->s[p->pos] ? p->s[p->pos] : '$');
        return 2;
    }
    long v = 0;
    while (isdigit((unsigned char)p->s[p->pos])) {
        v = v * 10 + (p->s[p->pos++] - '0');
        if (v > (1L << 40)) { snprintf(p->err, p->errlen, "position %zu: integer too large", p->pos); return 2; }
    }
    if (p->n >= LAYOUT_MAX_LEAVES) {
        snprintf(p->err, p->errlen, "more than %d leaf modes", LAYOUT_MAX_LEAVES);
        return 2;
    }
    p->vals[p->n++] = v;
    return sig(p, '.');
}

static int parse_elem(parser *p, int depth)
{
    skip_ws(p);
    if (p->s[p->pos] != '(') return parse_int(p);
    p->pos++;
    int rc = sig(p, '(');
    for (int first = 1; !rc; first = 0) {
        if (!first) {
            skip_ws(p);
            if (p->s[p->pos] == ')') { p->pos++; return sig(p, ')'); }
            if (p->s[p->pos] != ',') {
                snprintf(p->err, p->errlen, "position %zu: expected ',' or ')'", p->pos);
                return 2;
            }
            p->pos++;
            if ((rc = sig(p, ','))) return rc;
        }
        int before = p->n;
        if (depth == 0) {
            if (p->ntop >= LAYOUT_MAX_TOP) { snprintf(p->err, p->errlen, "more than %d top-level modes", LAYOUT_MAX_TOP); return 2; }
        }
        rc = parse_elem(p, depth + 1);
        if (!rc && depth == 0) {
            p->top_first[p->ntop] = before;
            p->top_count[p->ntop] = p->n - before;
            p->ntop++;
        }
    }
    return rc;
}

/* A whole shape or stride: a tuple, or a single integer (then one top-level mode). */
static int parse_tree(parser *p)
{
    skip_ws(p);
    int rc;
    if (p->s[p->pos] == '(') {
        rc = parse_elem(p, 0);
    } else {
        rc = parse_int(p);
        if (!rc) { p->top_first[0] = 0; p->top_count[0] = 1; p->ntop = 1; }
    }
    return rc;
}

int layout_parse(const char *text, layout_t *l, char *err, size_t len)
{
    const char *colon = strchr(text, ':');
    if (!colon) { snprintf(err, len, "a layout is shape:stride, e.g. (4,2):(1,4); no ':' found"); return 2; }
    char shape_txt[512], stride_txt[512];
    size_t sl = (size_t)(colon - text);
    if (sl >= sizeof shape_txt || strlen(colon + 1) >= sizeof stride_txt) { snprintf(err, len, "layout text too long"); return 2; }
    memcpy(shape_txt, text, sl);
    shape_txt[sl] = '\0';
    strcpy(stride_txt, colon + 1);

    parser ps = {.s = shape_txt, .err = err, .errlen = len}, pd = {.s = stride_txt, .err = err, .errlen = len};
    if (parse_tree(&ps)) { return 2; }
    skip_ws(&ps);
    if (ps.s[ps.pos]) { snprintf(err, len, "shape: unexpected text after position %zu", ps.pos); return 2; }
    if (parse_tree(&pd)) { return 2; }
    skip_ws(&pd);
    if (pd.s[pd.pos]) { snprintf(err, len, "stride: unexpected text after position %zu", pd.pos); return 2; }
    if (strcmp(ps.sig, pd.sig) != 0) {
        snprintf(err, len, "shape and stride must have the same nesting (shape %s, stride %s)", ps.sig, pd.sig);
        return 2;
    }
    memset(l, 0, sizeof *l);
    l->nleaves = ps.n;
    for (int i = 0; i < ps.n; i++) {
        if (ps.vals[i] < 1) { snprintf(err, len, "shape mode %d is 0: every extent must be >= 1", i); return 2; }
        l->shape[i] = ps.vals[i];
        l->stride[i] = pd.vals[i];
    }
    l->ntop = ps.ntop;
    memcpy(l->top_first, ps.top_first, sizeof l->top_first);
    memcpy(l->top_count, ps.top_count, sizeof l->top_count);
    return 0;
}

long layout_size(const layout_t *l)
{
    long s = 1;
    for (int i = 0; i < l->nleaves; i++) s *= l->shape[i];
    return s;
}

long layout_cosize(const layout_t *l)
{
    long m = 0;
    for (int i = 0; i < l->nleaves; i++) m += (l->shape[i] - 1) * l->stride[i];
    return m + 1;
}

static long eval_leaves(const layout_t *l, int first, int count, long idx)
{
    long off = 0;
    for (int i = first; i < first + count; i++) {
        off += (idx % l->shape[i]) * l->stride[i];
        idx /= l->shape[i];
    }
    return off;
}

long layout_eval(const layout_t *l, long idx) { return eval_leaves(l, 0, l->nleaves, idx); }

long layout_eval_top(const layout_t *l, const long *coord)
{
    long off = 0;
    for (int t = 0; t < l->ntop; t++) off += eval_leaves(l, l->top_first[t], l->top_count[t], coord[t]);
    return off;
}

long layout_eval_mode_last_fastest(const layout_t *l, int top, long idx)
{
    long off = 0;
    for (int i = l->top_first[top] + l->top_count[top] - 1; i >= l->top_first[top]; i--) {
        off += (idx % l->shape[i]) * l->stride[i];
        idx /= l->shape[i];
    }
    return off;
}

void layout_flat_string(const layout_t *l, char *buf, size_t len)
{
    size_t u = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < l->nleaves && u < len; i++) u += (size_t)snprintf(buf + u, len - u, "%s%ld", i ? "," : "", l->shape[i]);
    if (u < len) u += (size_t)snprintf(buf + u, len - u, "):(");
    for (int i = 0; i < l->nleaves && u < len; i++) u += (size_t)snprintf(buf + u, len - u, "%s%ld", i ? "," : "", l->stride[i]);
    if (u < len) snprintf(buf + u, len - u, ")");
}
