/* Flag parsing for the explain tool: "--flag value" or "--flag=value", at most one positional
 * argument, every rejection on stderr naming the flag and the rule, exit status 2. Header-only
 * (static functions) because the Makefile turns every .c file directly in tools/ into its own binary; only
 * tools/explain.c includes this. */
#ifndef FMHA_EXPLAIN_ARGS_H
#define FMHA_EXPLAIN_ARGS_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The subcommand being run, for the "explain <cmd>: ..." prefix of every message. */
static const char *g_cmd = "explain";

/* Bad input: one line on stderr, exit 2. Input errors are final, so nothing needs unwinding. */
static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

/* Operand major-ness words shared by idesc and smem-desc; index 1 = MN-major in both models. */
static const char *const MAJOR_NAMES[] = {"k", "mn"};

typedef struct {
    const char *name;  /* "--m" */
    int takes_value;   /* 0: a switch such as --a */
    const char *val;   /* the value once parsed (NULL: not given) */
    int given;
} opt_t;

/* Parse argv[first..argc) against opts (terminated by a NULL name). *positional receives the
 * one non-flag argument when positional != NULL; a second one, or one where none is taken, is an
 * error. Returns 1 when --help / -h was given (the caller prints its usage), else 0. A value that
 * starts with "--" is taken to be the next flag, so "--m --n 64" reports "--m needs a value"
 * rather than "'--n' is not an integer". */
static int parse_opts(int argc, char **argv, int first, opt_t *opts, const char **positional)
{
    int help = 0;
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) { help = 1; continue; }
        if (strncmp(arg, "--", 2) != 0) {
            if (!positional)
                usage_error("unexpected argument '%s' (this command takes only flags; see --help)", arg);
            if (*positional)
                usage_error("unexpected second argument '%s' (already have '%s')", arg, *positional);
            *positional = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        opt_t *o = NULL;
        for (opt_t *k = opts; k->name; k++)
            if (strlen(k->name) == nlen && !strncmp(k->name, arg, nlen)) o = k;
        if (!o) usage_error("unknown flag '%.*s' (see %s --help)", (int)nlen, arg, g_cmd);
        if (!o->takes_value) {
            if (eq) usage_error("%s takes no value", o->name);
            o->given = 1;
            o->val = "1";
            continue;
        }
        if (eq) o->val = eq + 1;
        else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) o->val = argv[++i];
        else usage_error("%s needs a value", o->name);
        if (!*o->val) usage_error("%s: empty value", o->name);
        o->given = 1;
    }
    return help;
}

static opt_t *opt_find(opt_t *opts, const char *name)
{
    for (opt_t *k = opts; k->name; k++)
        if (!strcmp(k->name, name)) return k;
    return NULL; /* not reached for the names the commands ask for */
}

/* Unsigned integer text: decimal, or hex with a 0x prefix (never octal: "010" is ten). */
static int text_u64(const char *s, uint64_t *out)
{
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) { base = 16; s += 2; }
    if (!*s || *s == '-' || *s == '+' || *s == ' ') return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (*end || errno) return 0;
    *out = (uint64_t)v;
    return 1;
}

/* Signed integer text, for values where a negative number should be reported as out of range
 * rather than as "not a number". */
static int text_i64(const char *s, int64_t *out)
{
    int neg = s[0] == '-';
    uint64_t v;
    if (!text_u64(s + neg, &v) || v > (uint64_t)INT64_MAX) return 0;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 1;
}

/* The value of integer flag o, which must lie in [min, max]. */
static int64_t opt_int(const opt_t *o, int64_t min, int64_t max, const char *rule)
{
    int64_t v;
    if (!text_i64(o->val, &v)) usage_error("%s: '%s' is not an integer", o->name, o->val);
    if (v < min || v > max) {
        if (rule) usage_error("%s=%s: %s", o->name, o->val, rule);
        usage_error("%s=%s: must be in [%" PRId64 ", %" PRId64 "]", o->name, o->val, min, max);
    }
    return v;
}

/* One of a fixed set of words; returns its index. */
static int opt_choice(const opt_t *o, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(o->val, names[i])) return i;
    char list[256] = "";
    size_t u = 0;
    for (int i = 0; i < n && u < sizeof list; i++)
        u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", names[i]);
    usage_error("%s: '%s' is not one of %s", o->name, o->val, list);
}

/* A comma-separated list of unsigned integers in [min, max]; returns the count (>= 1). */
static int opt_list(const opt_t *o, uint64_t *out, int maxn, uint64_t min, uint64_t max)
{
    int n = 0;
    const char *p = o->val;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[40];
        if (len == 0 || len >= sizeof item)
            usage_error("%s: entry %d of '%s' is empty or too long (expected a,b,c)", o->name, n, o->val);
        memcpy(item, p, len);
        item[len] = '\0';
        if (n >= maxn) usage_error("%s: more than %d entries in '%s'", o->name, maxn, o->val);
        uint64_t v;
        if (!text_u64(item, &v))
            usage_error("%s: entry %d '%s' is not a non-negative integer", o->name, n, item);
        if (v < min || v > max)
            usage_error("%s: entry %d = %s must be in [%" PRIu64 ", %" PRIu64 "]", o->name, n, item, min, max);
        out[n++] = v;
        if (!comma) break;
        p = comma + 1;
    }
    return n;
}

/* A hex value of at most `digits` hex digits, with or without 0x. */
static uint64_t parse_hex(const char *what, const char *s, int digits)
{
    const char *h = s;
    if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) h += 2;
    size_t n = strlen(h);
    if (n == 0 || n > (size_t)digits || strspn(h, "0123456789abcdefABCDEF") != n)
        usage_error("%s: '%s' is not a hex value of at most %d digits (e.g. 0x%0*X)", what, s, digits, digits, 0);
    return (uint64_t)strtoull(h, NULL, 16);
}

/* Flags that only make sense in the other mode of a command (encode vs decode). */
static void reject_given(opt_t *opts, const char *const *names, const char *why)
{
    for (int i = 0; names[i]; i++) {
        opt_t *o = opt_find(opts, names[i]);
        if (o && o->given) usage_error("%s: %s", o->name, why);
    }
}

static void require_given(const opt_t *o, const char *what)
{
    if (!o->given) usage_error("%s is required (%s)", o->name, what);
}

#endif
