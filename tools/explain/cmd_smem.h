/* explain smem-desc: the 64-bit shared-memory matrix descriptor of tcgen05 (sm100) and wgmma
 * (sm90). Encoding builds the project's dense tile (smem_tile_make, model/canonical.h) and its
 * descriptor; decoding uses sm100_desc_decode / sm90_desc_decode (model/smem_desc.h). */
#ifndef FMHA_EXPLAIN_CMD_SMEM_H
#define FMHA_EXPLAIN_CMD_SMEM_H

#include "args.h"
#include "model/canonical.h"
#include "model/smem_desc.h"

static const char SMEM_USAGE[] =
    "usage: explain smem-desc [--arch sm100|sm90] [--major k|mn] [--swizzle none|32|64|128]\n"
    "                         [--dtype bf16|f16|fp8|e4m3|e5m2] --mn MN --k K [--base ADDR]\n"
    "                         [--kstep K0] [--mn0 R0] [--elem R,C]\n"
    "       explain smem-desc [--arch sm100|sm90] 0xVALUE [--elem R,C [--major k|mn] [--dtype T]]\n"
    "Encode: build this project's dense operand tile (smem_tile_make) and print LBO, SBO, the\n"
    "K-atom stride, the tile size, the descriptor of the MMA K step starting at element K0, and\n"
    "the start-address advance of every K step. Decode: the descriptor's fields and warnings.\n"
    "  --arch     sm100 (tcgen05, default) or sm90 (wgmma): the two formats differ in bits 46-63\n"
    "  --major    k (default) or mn: which extent is contiguous in SMEM\n"
    "  --swizzle  none, 32, 64 or 128 (bytes; default 128)\n"
    "  --dtype    bf16/f16 (2 bytes, default) or fp8/e4m3/e5m2 (1 byte)\n"
    "  --mn --k   tile extents in elements (rows along M or N, columns along K)\n"
    "  --base     SMEM byte address of the tile (default 0); a multiple of the swizzle repeat\n"
    "             (1024/512/256 bytes for 128/64/32B swizzle, 16 without)\n"
    "  --kstep    first K element of the MMA K step whose descriptor is shown (default 0)\n"
    "  --mn0      first row the descriptor starts at (default 0), e.g. 64 for the second half of a\n"
    "             128-row tile read by a 64-row wgmma\n"
    "  --elem     R,C: where element (row R along M/N, column C along K) lives; when decoding,\n"
    "             the address this descriptor reads it from (C within one MMA K step)\n"
    "exit: 0 explained (warnings are printed), 2 bad input\n";

static const char *const ARCH_NAMES[] = {"sm100", "sm90"};
static const char *const SWZ_FLAG_NAMES[] = {"none", "32", "64", "128"}; /* index = swizzle_mode */
static const char *const SWZ_LABEL[] = {"no", "32B", "64B", "128B"};
static const char *const DTYPE_NAMES[] = {"bf16", "f16", "fp8", "e4m3", "e5m2"};
static const int DTYPE_BYTES[] = {2, 2, 1, 1, 1};

static const char *swz_name(swizzle_mode s)
{
    switch (s) {
    case SWZ_NONE: return "none (interleaved core matrices)";
    case SWZ_32B: return "32B";
    case SWZ_64B: return "64B";
    case SWZ_128B: return "128B";
    case SWZ_128B_BASE32B: return "128B with 32B atoms (sm100 only)";
    default: return "UNDEFINED code";
    }
}

/* Raw bits lo..hi of d, for the table's value column of fields the decoder folds into a flag. */
static unsigned desc_bits(uint64_t d, int lo, int hi)
{
    return (unsigned)((d >> lo) & ((1ull << (hi - lo + 1)) - 1));
}

static void desc_row(const char *bits, const char *field, unsigned value, const char *meaning)
{
    printf("  %-6s %-12s %6u%s%s\n", bits, field, value, *meaning ? "  " : "", meaning);
}

/* Field table and warnings of descriptor d; returns the number of warnings. */
static int smem_desc_print(uint64_t d, int sm90, smem_desc_fields *f)
{
    char m[96];
    int warnings = 0;
    if (sm90) sm90_desc_decode(d, f);
    else sm100_desc_decode(d, f);
    printf("%s smem descriptor 0x%016" PRIX64 "\n", sm90 ? "sm90 (wgmma)" : "sm100 (tcgen05)", d);
    printf("  %-6s %-12s %6s  %s\n", "bits", "field", "value", "meaning");
    snprintf(m, sizeof m, "start address 0x%05X (%u bytes)", f->start, f->start);
    desc_row("0-13", "start >> 4", f->start >> 4, m);
    desc_row("14-15", "reserved", desc_bits(d, 14, 15), "");
    snprintf(m, sizeof m, "LBO %u bytes", f->lbo);
    desc_row("16-29", "LBO >> 4", f->lbo >> 4, m);
    desc_row("30-31", "reserved", desc_bits(d, 30, 31), "");
    snprintf(m, sizeof m, "SBO %u bytes", f->sbo);
    desc_row("32-45", "SBO >> 4", f->sbo >> 4, m);
    if (sm90) {
        desc_row("46-48", "reserved", desc_bits(d, 46, 48), desc_bits(d, 46, 48) ? "SET (sm100 'version' bit?)" : "");
        desc_row("49-51", "base offset", f->base_offset, "");
        desc_row("52-61", "reserved", desc_bits(d, 52, 61), "");
        desc_row("62-63", "swizzle", f->swizzle_code, swz_name(f->swz));
    } else {
        desc_row("46-48", "version", f->version, f->version == 1 ? "0b001 (required on sm100)" : "MUST be 0b001");
        desc_row("49-51", "base offset", f->base_offset, "");
        desc_row("52", "LBO mode", f->lbo_mode, f->lbo_mode ? "absolute address (sm_103a only)" : "relative");
        desc_row("53-60", "reserved", desc_bits(d, 53, 60), "");
        desc_row("61-63", "swizzle", f->swizzle_code, swz_name(f->swz));
    }
    if (!sm90 && f->version != 1) {
        printf("warning: bits 46-48 = %u, but sm100 requires 0b001 (bit 46 set): an sm90 (wgmma) "
               "descriptor reused on sm100? OR in 1<<46\n", f->version);
        warnings++;
    }
    if (f->swz == SWZ_INVALID) {
        printf("warning: swizzle code %u is undefined on %s (valid: %s)\n", f->swizzle_code,
               sm90 ? "sm90" : "sm100", sm90 ? "0 none, 1 128B, 2 64B, 3 32B" : "0 none, 1 128B-32B-atom, 2 128B, 4 64B, 6 32B");
        warnings++;
    }
    if (f->reserved) {
        printf("warning: reserved bits are set%s\n",
               sm90 && desc_bits(d, 46, 48) ? " (bits 46-48: an sm100 descriptor used for wgmma?)" : "");
        warnings++;
    }
    if (f->base_offset) {
        printf("warning: base offset %u: non-zero only when the swizzle pattern does not start on its "
               "repeat boundary; this project's tiles are aligned and keep 0\n", f->base_offset);
        warnings++;
    }
    return warnings;
}

/* "R,C" of --elem. */
static void parse_elem(const opt_t *o, long rmax, long cmax, int *r, int *c, const char *cwhy)
{
    uint64_t v[2];
    if (opt_list(o, v, 2, 0, 1u << 20) != 2) usage_error("%s: expected R,C (row along M/N, column along K)", o->name);
    if ((long)v[0] >= rmax) usage_error("%s: row %" PRIu64 " must be < %ld", o->name, v[0], rmax);
    if ((long)v[1] >= cmax) usage_error("%s: column %" PRIu64 " must be < %ld (%s)", o->name, v[1], cmax, cwhy);
    *r = (int)v[0];
    *c = (int)v[1];
}

static int smem_decode_cmd(opt_t *opts, const char *text, int sm90)
{
    uint64_t d = parse_hex("value", text, 16);
    static const char *const enc_only[] = {"--swizzle", "--mn", "--k", "--base", "--kstep", "--mn0", NULL};
    reject_given(opts, enc_only, "not used when decoding a value (decode takes --arch, --elem, --major, --dtype)");
    /* Inputs are checked before anything is printed. */
    smem_desc_fields f;
    if (sm90) sm90_desc_decode(d, &f);
    else sm100_desc_decode(d, &f);
    opt_t *oe = opt_find(opts, "--elem"), *om = opt_find(opts, "--major"), *ot = opt_find(opts, "--dtype");
    operand_major major = MAJOR_K;
    int eb = 2, r = 0, c = 0;
    if (!oe->given) {
        if (om->given || ot->given) usage_error("%s: only used with --elem", om->given ? om->name : ot->name);
    } else {
        if (f.swz == SWZ_INVALID || f.swz == SWZ_128B_BASE32B)
            usage_error("--elem: the canonical-layout model does not cover swizzle code %u", f.swizzle_code);
        if (om->given) major = (operand_major)opt_choice(om, MAJOR_NAMES, 2);
        if (ot->given) eb = DTYPE_BYTES[opt_choice(ot, DTYPE_NAMES, 5)];
        /* One descriptor covers one MMA K step: 32 bytes of K (16 bf16 / 32 fp8). */
        parse_elem(oe, 256, 32 / eb, &r, &c, "one descriptor covers one MMA K step: 32 bytes of K");
    }
    int w = smem_desc_print(d, sm90, &f);
    if (oe->given) {
        uint32_t a = smem_desc_addr(major, f.swz, eb, f.start, f.lbo, f.sbo, r, c);
        printf("element (row %d, k %d) of a %s-major %d-byte operand is read from SMEM 0x%05X "
               "(start 0x%05X + %u)\n", r, c, major == MAJOR_K ? "K" : "MN", eb, a, f.start, a - f.start);
    }
    printf("verdict: %d warning%s\n", w, w == 1 ? "" : "s");
    return 0;
}

static int cmd_smem(int argc, char **argv)
{
    opt_t opts[] = {{"--arch", 1, 0, 0}, {"--major", 1, 0, 0}, {"--swizzle", 1, 0, 0},
                    {"--dtype", 1, 0, 0}, {"--mn", 1, 0, 0},    {"--k", 1, 0, 0},
                    {"--base", 1, 0, 0},  {"--kstep", 1, 0, 0}, {"--mn0", 1, 0, 0},
                    {"--elem", 1, 0, 0},  {NULL, 0, 0, 0}};
    const char *value = NULL;
    if (parse_opts(argc, argv, 2, opts, &value)) { fputs(SMEM_USAGE, stdout); return 0; }
    opt_t *oarch = opt_find(opts, "--arch");
    int sm90 = oarch->given ? opt_choice(oarch, ARCH_NAMES, 2) : 0;
    if (value) return smem_decode_cmd(opts, value, sm90);

    opt_t *omn = opt_find(opts, "--mn"), *ok = opt_find(opts, "--k");
    require_given(omn, "tile rows along M or N, in elements");
    require_given(ok, "tile columns along K, in elements");
    opt_t *om = opt_find(opts, "--major"), *os = opt_find(opts, "--swizzle"), *ot = opt_find(opts, "--dtype");
    operand_major major = om->given ? (operand_major)opt_choice(om, MAJOR_NAMES, 2) : MAJOR_K;
    swizzle_mode swz = os->given ? (swizzle_mode)opt_choice(os, SWZ_FLAG_NAMES, 4) : SWZ_128B;
    int dt = ot->given ? opt_choice(ot, DTYPE_NAMES, 5) : 0;
    int eb = DTYPE_BYTES[dt];
    int mn = (int)opt_int(omn, 1, 4096, NULL), k = (int)opt_int(ok, 1, 4096, NULL);
    const int kmma = 32 / eb; /* K elements per MMA: 16 for 16-bit types, 32 for 8-bit */

    uint32_t base = 0;
    opt_t *ob = opt_find(opts, "--base");
    if (ob->given) {
        base = (uint32_t)opt_int(ob, 0, 0x3FFFF, "must be below 0x40000 (the 14-bit start field holds address >> 4)");
        if (base % swizzle_repeat(swz))
            usage_error("--base=%s: a tile with %s swizzle must start on a %u-byte boundary (the swizzle XORs "
                        "absolute address bits; the descriptor's base offset stays 0)",
                        ob->val, SWZ_LABEL[swz], swizzle_repeat(swz));
    }
    int kstep = 0;
    opt_t *oks = opt_find(opts, "--kstep");
    if (oks->given) {
        kstep = (int)opt_int(oks, 0, k - 1, "must be a K element inside the tile (0 <= kstep < --k)");
        if (kstep % kmma)
            usage_error("--kstep=%s: must be a multiple of the MMA K step (%d for %d-byte elements)", oks->val, kmma, eb);
    }
    smem_tile t = smem_tile_make(major, swz, eb, mn, k);
    int mn0 = 0;
    opt_t *omn0 = opt_find(opts, "--mn0");
    /* The descriptor's first row must begin a whole row group of the canonical layout: 8 rows for
     * K-major (core matrix / swizzle rows), T = 16/eb elements for MN-major without swizzle (one
     * 16-byte core-matrix row), a whole swizzle atom width for MN-major swizzled tiles. */
    const int mn_step = major == MAJOR_K ? 8 : swz == SWZ_NONE ? 16 / eb : swizzle_span(swz) / eb;
    if (omn0->given) {
        mn0 = (int)opt_int(omn0, 0, mn - 1, "must be a row inside the tile (0 <= mn0 < --mn)");
        if (mn0 % mn_step)
            usage_error("--mn0=%d: must be a multiple of %d for %s-major%s tiles (a whole row group of the "
                        "canonical layout)", mn0, mn_step, major == MAJOR_K ? "K" : "MN",
                        swz == SWZ_NONE ? "" : " swizzled");
    }
    if ((uint64_t)base + t.bytes > 0x40000u)
        usage_error("--mn/--k/--base: the tile ends at byte %" PRIu64 ", past the 256 KiB the 14-bit address "
                    "fields can reach", (uint64_t)base + t.bytes);
    int er = 0, ec = 0;
    opt_t *oe = opt_find(opts, "--elem");
    if (oe->given) parse_elem(oe, mn, k, &er, &ec, "--k");
    /* The descriptor must read every element of its K step where the fill put it (FG01). A first
     * row that is not a whole row group breaks that; with mn0 = 0 a mismatch would be a model bug. */
    uint32_t start = smem_tile_desc_start(&t, base, mn0, kstep);
    for (int r = mn0; r < mn; r++)
        for (int c = kstep; c < kstep + kmma && c < k; c++)
            if (smem_desc_addr(major, swz, eb, start, t.lbo, t.sbo, r - mn0, c - kstep) != base + smem_tile_offset(&t, r, c)) {
                if (mn0)
                    usage_error("--mn0=%d: a descriptor starting at row %d does not read this tile as it is filled "
                                "(row %d, k %d differs); start at a multiple of %d rows", mn0, mn0, r, c, mn_step);
                fprintf(stderr, "%s: model inconsistency: the descriptor reads (row %d, k %d) elsewhere than "
                        "smem_tile_offset puts it\n", g_cmd, r, c);
                return 1;
            }
    if (sm90 && eb == 1 && major == MAJOR_MN)
        printf("warning: wgmma has no transpose for 8-bit types: both fp8 operands must be K-major on sm90\n");

    printf("tile: %s-major %s, %s swizzle, %d (M/N) x %d (K) elements at SMEM 0x%05X\n",
           major == MAJOR_K ? "K" : "MN", DTYPE_NAMES[dt], SWZ_LABEL[swz], mn, k, base);
    const char *lbo_why, *sbo_why;
    if (major == MAJOR_K && swz != SWZ_NONE) {
        lbo_why = "unused by K-major swizzled layouts (conventional 16)";
        sbo_why = "between 8-row groups along M/N (8 rows x swizzle span)";
    } else if (major == MAJOR_K) {
        lbo_why = "between core matrices adjacent along K";
        sbo_why = "between 8-row groups along M/N";
    } else if (swz == SWZ_NONE) {
        lbo_why = "between 8-K-row groups along K";
        sbo_why = "between core matrices adjacent along M/N";
    } else {
        lbo_why = "between swizzle-atom columns along M/N";
        sbo_why = "between 8-K-row groups along K (8 x swizzle span)";
    }
    printf("  LBO    %6u bytes  %s\n", t.lbo, lbo_why);
    printf("  SBO    %6u bytes  %s\n", t.sbo, sbo_why);
    if (t.katom) printf("  katom  %6u bytes  between %d-element K atom columns\n", t.katom, swizzle_span(swz) / eb);
    else printf("  katom  %6s        (only K-major swizzled tiles have K atom columns)\n", "-");
    printf("  bytes  %6u        SMEM the tile occupies\n", t.bytes);

    uint64_t d = sm90 ? smem_tile_desc_sm90(&t, base, mn0, kstep) : smem_tile_desc_sm100(&t, base, mn0, kstep);
    printf("descriptor for rows %d.. and the K step at k=%d (start = base + %u):\n", mn0, kstep, start - base);
    printf("0x%016" PRIX64 "\n", d);
    smem_desc_fields f;
    smem_desc_print(d, sm90, &f);

    printf("start-address advance per MMA K step (%d elements):", kmma);
    int shown = 0;
    for (int kk = 0; kk < k && shown < 16; kk += kmma, shown++) printf(" k=%d:+%u", kk, smem_tile_k_advance(&t, kk));
    printf("%s\n", (k + kmma - 1) / kmma > 16 ? " ..." : "");

    if (oe->given) {
        const int r = er, c = ec;
        uint32_t raw = smem_tile_offset_raw(&t, r, c), sw = smem_tile_offset(&t, r, c);
        printf("element (row %d, k %d): offset %u (0x%X) before the swizzle, %u (0x%X) after; SMEM 0x%05X\n",
               r, c, raw, raw, sw, sw, base + sw);
        /* The same element as the MMA of its K step reads it: the descriptor and the fill must
         * agree (footgun FG01). */
        int k0 = c / kmma * kmma;
        uint32_t a = smem_desc_addr(major, swz, eb, base + smem_tile_k_advance(&t, k0), t.lbo, t.sbo, r, c - k0);
        printf("  the descriptor of the K step at k=%d reads it from SMEM 0x%05X (%s)\n", k0, a,
               a == base + sw ? "same as the fill" : "DIFFERENT from the fill");
    }
    return 0;
}

#endif
