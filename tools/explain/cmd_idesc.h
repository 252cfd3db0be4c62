/* explain idesc: the 32-bit tcgen05.mma instruction descriptor, encoded and decoded with
 * model/idesc.h and judged by idesc_check (notes/hardware.md sections 2.1-2.4). */
#ifndef FMHA_EXPLAIN_CMD_IDESC_H
#define FMHA_EXPLAIN_CMD_IDESC_H

#include "args.h"
#include "model/idesc.h"

static const char IDESC_USAGE[] =
    "usage: explain idesc --m M --n N --ab TYPE [--acc f32|f16] [--a-major k|mn] [--b-major k|mn]\n"
    "                     [--kind f16|f8f6f4]\n"
    "       explain idesc 0xVALUE [--kind f16|f8f6f4]\n"
    "Encode (flags) or decode (a hex value) the tcgen05.mma instruction descriptor of kind::f16 /\n"
    "kind::f8f6f4 and print its fields; the legality check (idesc_check) decides the exit status.\n"
    "  --m        M: 64 or 128 (cta_group::1, dense)\n"
    "  --n        N: 8..256 in steps of 8 (16 with M=128 recommended)\n"
    "  --ab       A and B type: bf16, f16 (kind::f16); e4m3, e5m2, e2m3, e3m2, e2m1 (kind::f8f6f4)\n"
    "  --acc      accumulator (D) type: f32 (default) or f16\n"
    "  --a-major  A operand major-ness: k (default) or mn (M-major, 'transposed')\n"
    "  --b-major  B operand major-ness: k (default) or mn (N-major, e.g. V in P*V)\n"
    "  --kind     the instruction's .kind; encoding: must agree with --ab; decoding: how to read the\n"
    "             format codes (default f16: code 1 is BF16 there and E5M2 in f8f6f4)\n"
    "exit: 0 legal descriptor (warnings are printed), 2 bad input or a descriptor the check rejects\n";

static const char *const IDESC_AB[] = {"bf16", "f16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"};
static const int IDESC_AB_KIND[] = {MMA_KIND_F16, MMA_KIND_F16, MMA_KIND_F8F6F4, MMA_KIND_F8F6F4,
                                    MMA_KIND_F8F6F4, MMA_KIND_F8F6F4, MMA_KIND_F8F6F4};
static const unsigned IDESC_AB_CODE[] = {FMT_BF16, FMT_F16, FMT_E4M3, FMT_E5M2, FMT_E2M3, FMT_E3M2, FMT_E2M1};
static const char *const KIND_NAMES[] = {"f16", "f8f6f4"}; /* index = MMA_KIND_* */

static void idesc_row(const char *bits, const char *field, unsigned value, const char *meaning)
{
    printf("  %-6s %-18s %5u%s%s\n", bits, field, value, *meaning ? "  " : "", meaning);
}

/* The field table of a decoded descriptor. The raw field values are the decoded fields (N and M
 * are stored as N>>3 and M>>4); the reserved bits come from the decoder's reserved mask. */
static void idesc_print(uint32_t v, const idesc_fields *f, int kind)
{
    char mean[96];
    printf("idesc 0x%08X  (format codes read as kind::%s)\n", v, KIND_NAMES[kind]);
    printf("  %-6s %-18s %5s  %s\n", "bits", "field", "value", "meaning");
    idesc_row("0-1", "sparsity selector", f->sparse_sel, "");
    idesc_row("2", "sparsity", f->sparse, f->sparse ? "sparse (not modelled here)" : "dense");
    idesc_row("3", "saturate", f->saturate, f->saturate ? "saturate (integer kinds only)" : "");
    idesc_row("4-5", "D format", f->d_fmt, idesc_fmt_name(kind, f->d_fmt, 1));
    idesc_row("6", "reserved", (f->reserved >> 6) & 1u, (f->reserved >> 6) & 1u ? "SET: must be 0" : "");
    idesc_row("7-9", "A format", f->a_fmt, idesc_fmt_name(kind, f->a_fmt, 0));
    idesc_row("10-12", "B format", f->b_fmt, idesc_fmt_name(kind, f->b_fmt, 0));
    idesc_row("13", "negate A", f->neg_a, f->neg_a ? "A negated" : "");
    idesc_row("14", "negate B", f->neg_b, f->neg_b ? "B negated" : "");
    idesc_row("15", "A major", f->a_mn, f->a_mn ? "A MN-major (M-major, transposed)" : "A K-major");
    idesc_row("16", "B major", f->b_mn, f->b_mn ? "B MN-major (N-major, transposed)" : "B K-major");
    snprintf(mean, sizeof mean, "N=%u", f->n);
    idesc_row("17-22", "N >> 3", f->n >> 3, mean);
    idesc_row("23", "reserved", (f->reserved >> 23) & 1u, (f->reserved >> 23) & 1u ? "SET: must be 0" : "");
    snprintf(mean, sizeof mean, "M=%u", f->m);
    idesc_row("24-28", "M >> 4", f->m >> 4, mean);
    idesc_row("29", "reserved", (f->reserved >> 29) & 1u, (f->reserved >> 29) & 1u ? "SET: must be 0" : "");
    idesc_row("30-31", "max shift", f->max_shift, f->max_shift ? "B reuse shift (.ws only)" : "");
    printf("  => tcgen05.mma.cta_group::1.kind::%s  M=%u N=%u K=%d  D=%s  A=%s %s  B=%s %s\n",
           KIND_NAMES[kind], f->m, f->n, idesc_k_per_mma(kind), idesc_fmt_name(kind, f->d_fmt, 1),
           idesc_fmt_name(kind, f->a_fmt, 0), f->a_mn ? "MN-major" : "K-major",
           idesc_fmt_name(kind, f->b_fmt, 0), f->b_mn ? "MN-major" : "K-major");
}

/* Prints the check's verdict; returns the exit status. */
static int idesc_verdict(const idesc_fields *f, int kind)
{
    char err[256], warn[256];
    if (idesc_check(f, kind, err, sizeof err, warn, sizeof warn)) {
        fprintf(stderr, "%s: invalid descriptor: %s\n", g_cmd, err);
        return 2;
    }
    printf("check: legal dense cta_group::1 kind::%s MMA\n", KIND_NAMES[kind]);
    if (warn[0]) printf("warning: %s\n", warn);
    return 0;
}

/* The flag behind an idesc_check message, so an encode error names what to change. */
static const char *idesc_err_flag(const char *err)
{
    if (!strncmp(err, "M=", 2)) return "--m";
    if (!strncmp(err, "N=", 2)) return "--n";
    if (strstr(err, "accumulator") || strstr(err, "D format")) return "--acc";
    if (strstr(err, "MN-major")) return "--a-major/--b-major";
    return "--ab";
}

static int idesc_decode_cmd(const char *text, int kind)
{
    uint32_t v = (uint32_t)parse_hex("value", text, 8);
    idesc_fields f;
    idesc_decode(v, &f);
    idesc_print(v, &f, kind);
    if (f.reserved) {
        printf("reserved bits set (0x%08X):", f.reserved);
        if (f.reserved & (1u << 23)) printf(" bit 23: M written at bit 23 instead of 24?");
        if (f.reserved & ((1u << 6) | (1u << 29))) printf(" bits 6/29: must be 0");
        printf("\n");
    } else {
        printf("reserved bits 6, 23, 29: clear\n");
    }
    /* notes/hardware.md section 2.4: M=128 written at bit 23 reads back as M=64, and the M=128,N=64 case
     * becomes exactly the valid M=64,N=64 value, so no check can flag it. */
    if (f.m == 64)
        printf("note: M=64 is also what M=128 becomes when written at bit 23 ((M>>4)<<23); "
               "if M=128 was meant, the shift is wrong\n");
    return idesc_verdict(&f, kind);
}

static int cmd_idesc(int argc, char **argv)
{
    opt_t opts[] = {{"--m", 1, 0, 0},       {"--n", 1, 0, 0},       {"--ab", 1, 0, 0},
                    {"--acc", 1, 0, 0},     {"--a-major", 1, 0, 0}, {"--b-major", 1, 0, 0},
                    {"--kind", 1, 0, 0},    {NULL, 0, 0, 0}};
    const char *value = NULL;
    if (parse_opts(argc, argv, 2, opts, &value)) { fputs(IDESC_USAGE, stdout); return 0; }
    opt_t *okind = opt_find(opts, "--kind");
    int kind = okind->given ? opt_choice(okind, KIND_NAMES, 2) : -1;
    if (value) {
        static const char *const enc_only[] = {"--m", "--n", "--ab", "--acc", "--a-major", "--b-major", NULL};
        reject_given(opts, enc_only, "not used when decoding a value (decode takes only --kind)");
        return idesc_decode_cmd(value, kind < 0 ? MMA_KIND_F16 : kind);
    }
    opt_t *om = opt_find(opts, "--m"), *on = opt_find(opts, "--n"), *oab = opt_find(opts, "--ab");
    require_given(om, "or give a hex value to decode");
    require_given(on, "or give a hex value to decode");
    require_given(oab, "the A/B element type");
    int ab = opt_choice(oab, IDESC_AB, 7);
    if (kind >= 0 && kind != IDESC_AB_KIND[ab])
        usage_error("--kind=%s: %s operands need kind::%s", KIND_NAMES[kind], IDESC_AB[ab],
                    KIND_NAMES[IDESC_AB_KIND[ab]]);
    kind = IDESC_AB_KIND[ab];
    idesc_fields f;
    memset(&f, 0, sizeof f);
    /* Range limits here only keep the numbers sane; which M and N are legal is idesc_check's call. */
    f.m = (unsigned)opt_int(om, 0, 4096, NULL);
    f.n = (unsigned)opt_int(on, 0, 4096, NULL);
    f.a_fmt = f.b_fmt = IDESC_AB_CODE[ab];
    opt_t *oacc = opt_find(opts, "--acc");
    static const char *const ACC[] = {"f16", "f32"}; /* index = DFMT_F16, DFMT_F32 */
    f.d_fmt = oacc->given ? (unsigned)opt_choice(oacc, ACC, 2) : DFMT_F32;
    opt_t *oa = opt_find(opts, "--a-major"), *ob = opt_find(opts, "--b-major");
    f.a_mn = oa->given ? (unsigned)opt_choice(oa, MAJOR_NAMES, 2) : 0u;
    f.b_mn = ob->given ? (unsigned)opt_choice(ob, MAJOR_NAMES, 2) : 0u;

    char err[256], warn[256];
    if (idesc_check(&f, kind, err, sizeof err, warn, sizeof warn)) {
        fprintf(stderr, "%s: %s: invalid descriptor: %s\n", g_cmd, idesc_err_flag(err), err);
        return 2;
    }
    uint32_t v = idesc_encode(&f);
    idesc_fields back;
    idesc_decode(v, &back);
    printf("0x%08X\n", v);
    idesc_print(v, &back, kind);
    return idesc_verdict(&back, kind);
}

#endif
