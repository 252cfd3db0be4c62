/* explain tmap: would cuTensorMapEncodeTiled accept these parameters? The verdict is tmap_check's
 * (model/tmap_check.h), with the broken rule's name and source (notes/hardware.md section 10). */
#ifndef FMHA_EXPLAIN_CMD_TMAP_H
#define FMHA_EXPLAIN_CMD_TMAP_H

#include "args.h"
#include "host/attention.h"
#include "host/fmha_tmaps.h"
#include "model/tmap_check.h"

static const char TMAP_USAGE[] =
    "usage: explain tmap --dtype T --dims D0,D1,.. [--strides S1,..] --box B0,B1,..\n"
    "                    [--elem-strides E0,E1,..] [--swizzle none|32|64|128|128-atom-32|\n"
    "                    128-atom-32-flip-8|128-atom-64] [--interleave none|16|32]\n"
    "                    [--l2 none|64|128|256] [--oob none|nan] [--align A] [--cc MAJOR]\n"
    "Check cuTensorMapEncodeTiled parameters against every documented rule of the driver.\n"
    "Dims, box and element strides are innermost (contiguous) first, as the driver takes them.\n"
    "  --dtype         u8 u16 u32 i32 u64 i64 f16 f32 f64 bf16 f32-ftz tf32 tf32-ftz\n"
    "                  16u4-align8b 16u4-align16b 16u6-align16b\n"
    "  --dims          globalDim, 1 to 5 entries (the rank)\n"
    "  --strides       globalStrides in BYTES, rank-1 entries (dimension 0's is the element size)\n"
    "  --box           boxDim, one per dimension\n"
    "  --elem-strides  elementStrides, one per dimension (default all 1)\n"
    "  --swizzle       default none     --interleave  default none\n"
    "  --l2            default none     --oob         default none (nan: NAN_REQUEST_ZERO_FMA)\n"
    "  --align         alignment of globalAddress in bytes, a power of two (default 256, cudaMalloc)\n"
    "  --cc            compute capability major of the GPU (default 0: unknown, CC rules skipped)\n"
    "   or: explain tmap --tensor q|k|v|o [--layout bhsd|bshd] [--b B] [--hq HQ] [--hkv HKV]\n"
    "                    [--sq SQ] [--skv SKV] [--d D] [--mistake rank-strides|element-strides|wide-box]\n"
    "                    [--cc MAJOR]\n"
    "The map an attention stage builds for that tensor (common/host/fmha_tmaps.c, the TMA stages),\n"
    "or one of the FG13 mistakes through the same builder, then the same check.\n"
    "exit: 0 accepted, 2 bad input or a parameter set the driver would reject\n";

/* Index = CUtensorMapDataType value (cuda.h numbers them from 0 in this order). */
static const char *const TMAP_DTYPES[] = {"u8",  "u16",     "u32",  "i32",      "u64",          "i64",
                                          "f16", "f32",     "f64",  "bf16",     "f32-ftz",      "tf32",
                                          "tf32-ftz", "16u4-align8b", "16u4-align16b", "16u6-align16b"};
_Static_assert(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 == 9 && CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B == 15,
               "TMAP_DTYPES follows the CUtensorMapDataType order");
/* Index = CUtensorMapSwizzle / Interleave / L2promotion / FloatOOBfill value. */
static const char *const TMAP_SWIZZLES[] = {"none", "32", "64", "128", "128-atom-32", "128-atom-32-flip-8", "128-atom-64"};
static const char *const TMAP_INTERLEAVES[] = {"none", "16", "32"};
static const char *const TMAP_L2[] = {"none", "64", "128", "256"};
static const char *const TMAP_OOB[] = {"none", "nan"};

/* The flag that sets the parameter a tmap_check message starts with. */
static const char *tmap_msg_flag(const char *msg)
{
    static const char *const map[][2] = {
        {"globalStrides", "--strides"}, {"globalDim", "--dims"},     {"boxDim", "--box"},
        {"elementStrides", "--elem-strides"}, {"globalAddress", "--align"}, {"tensorRank", "--dims"},
        {"tensorDataType", "--dtype"}, {"interleave", "--interleave"}, {"swizzle", "--swizzle"},
        {"l2Promotion", "--l2"},       {"oobFill", "--oob"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strncmp(msg, map[i][0], strlen(map[i][0]))) return map[i][1];
    return "parameters";
}

static int tmap_verdict(const tmap_params *p, int cc);

/* explain tmap --tensor ...: the attention map of one tensor (defaults: stage C's default shape). */
static int cmd_tmap_attn(int argc, char **argv)
{
    opt_t opts[] = {{"--tensor", 1, 0, 0}, {"--layout", 1, 0, 0}, {"--b", 1, 0, 0},   {"--hq", 1, 0, 0},
                    {"--hkv", 1, 0, 0},    {"--sq", 1, 0, 0},     {"--skv", 1, 0, 0}, {"--d", 1, 0, 0},
                    {"--mistake", 1, 0, 0}, {"--cc", 1, 0, 0},    {NULL, 0, 0, 0}};
    if (parse_opts(argc, argv, 2, opts, NULL)) { fputs(TMAP_USAGE, stdout); return 0; }
    static const char *const tensors[] = {"q", "k", "v", "o"}, *const layouts[] = {"bhsd", "bshd"};
    static const char *const mistakes[] = {"right", "rank-strides", "element-strides", "wide-box"};
    fmha_opts o;
    memset(&o, 0, sizeof o);
    o.b = 1; o.hq = 4; o.hkv = 2; o.sq = 256; o.skv = 256; o.d = 64;
    opt_t *x;
    const int t = opt_choice(opt_find(opts, "--tensor"), tensors, 4);
    if ((x = opt_find(opts, "--layout"))->given) o.layout_bshd = opt_choice(x, layouts, 2);
    if ((x = opt_find(opts, "--b"))->given) o.b = (int)opt_int(x, 1, 1 << 20, "a batch size >= 1");
    if ((x = opt_find(opts, "--hq"))->given) o.hq = (int)opt_int(x, 1, 1 << 16, "query heads >= 1");
    o.hkv = o.hq < o.hkv ? o.hq : o.hkv;
    if ((x = opt_find(opts, "--hkv"))->given) o.hkv = (int)opt_int(x, 1, 1 << 16, "KV heads >= 1");
    if (o.hq % o.hkv) usage_error("--hq=%d --hkv=%d: --hq must be a multiple of --hkv", o.hq, o.hkv);
    if ((x = opt_find(opts, "--sq"))->given) o.sq = (int)opt_int(x, 1, 1 << 30, "query rows >= 1");
    if ((x = opt_find(opts, "--skv"))->given) o.skv = (int)opt_int(x, 1, 1 << 30, "keys >= 1");
    if ((x = opt_find(opts, "--d"))->given) o.d = (int)opt_int(x, 8, 1024, "a head dim in [8, 1024]");
    const int mistake = (x = opt_find(opts, "--mistake"))->given ? opt_choice(x, mistakes, 4) : 0;
    const int cc = (x = opt_find(opts, "--cc"))->given ? (int)opt_int(x, 0, 99, "a compute capability major") : 0;
    fmha_params p;
    attn_params_for(&o, &p);
    tmap_params m;
    fmha_tmap_params(&p, (fmha_tensor)t, 256, (fmha_tmap_mistake)mistake, &m);
    printf("tensor %s of B=%d Hq=%d Hkv=%d Sq=%d Skv=%d D=%d, %s (%s map)\n", fmha_tensor_name((fmha_tensor)t), o.b, o.hq,
           o.hkv, o.sq, o.skv, o.d, o.layout_bshd ? "BSHD" : "BHSD", fmha_tmap_mistake_name((fmha_tmap_mistake)mistake));
    printf("box: %u x %u elements, the swizzle span is 128 bytes; a %d-column tile takes %d box%s per %u rows\n",
           m.box_dim[0], m.box_dim[1], o.d, (o.d + 63) / 64, o.d > 64 ? "es" : "", m.box_dim[1]);
    return tmap_verdict(&m, cc);
}

static int cmd_tmap(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--tensor") || !strncmp(argv[i], "--tensor=", 9)) return cmd_tmap_attn(argc, argv);
    opt_t opts[] = {{"--dtype", 1, 0, 0},      {"--dims", 1, 0, 0},    {"--strides", 1, 0, 0},
                    {"--box", 1, 0, 0},        {"--elem-strides", 1, 0, 0}, {"--swizzle", 1, 0, 0},
                    {"--interleave", 1, 0, 0}, {"--l2", 1, 0, 0},      {"--oob", 1, 0, 0},
                    {"--align", 1, 0, 0},      {"--cc", 1, 0, 0},      {NULL, 0, 0, 0}};
    if (parse_opts(argc, argv, 2, opts, NULL)) { fputs(TMAP_USAGE, stdout); return 0; }
    opt_t *ot = opt_find(opts, "--dtype"), *od = opt_find(opts, "--dims"), *os = opt_find(opts, "--strides");
    opt_t *ob = opt_find(opts, "--box"), *oe = opt_find(opts, "--elem-strides");
    require_given(ot, "the element type");
    require_given(od, "globalDim, innermost first");
    require_given(ob, "boxDim, innermost first");

    tmap_params p;
    memset(&p, 0, sizeof p);
    p.data_type = opt_choice(ot, TMAP_DTYPES, 16);
    /* Zero and over-large values are left to the checker, which names the rule they break; the
     * parse limits only keep each value inside its field. */
    uint64_t v[5];
    p.rank = (unsigned)opt_list(od, v, 5, 0, UINT64_MAX);
    for (unsigned i = 0; i < p.rank; i++) p.global_dim[i] = v[i];
    if (os->given) {
        if (p.rank == 1) usage_error("--strides: a rank-1 map takes no strides (dimension 0's stride is the element size)");
        unsigned n = (unsigned)opt_list(os, v, 4, 0, UINT64_MAX);
        if (n != p.rank - 1)
            usage_error("--strides: %u entr%s, but rank %u takes %u (rank-1: dimension 0's stride is implicit, "
                        "the element size)", n, n == 1 ? "y" : "ies", p.rank, p.rank - 1);
        for (unsigned i = 0; i < n; i++) p.global_strides[i] = v[i];
    } else if (p.rank > 1) {
        usage_error("--strides is required for rank %u (%u entries, in bytes)", p.rank, p.rank - 1);
    }
    unsigned nb = (unsigned)opt_list(ob, v, 5, 0, UINT32_MAX);
    if (nb != p.rank) usage_error("--box: %u entries, but --dims has %u (one box extent per dimension)", nb, p.rank);
    for (unsigned i = 0; i < nb; i++) p.box_dim[i] = (uint32_t)v[i];
    for (unsigned i = 0; i < p.rank; i++) p.element_strides[i] = 1;
    if (oe->given) {
        unsigned ne = (unsigned)opt_list(oe, v, 5, 0, UINT32_MAX);
        if (ne != p.rank) usage_error("--elem-strides: %u entries, but --dims has %u", ne, p.rank);
        for (unsigned i = 0; i < ne; i++) p.element_strides[i] = (uint32_t)v[i];
    }
    opt_t *o;
    if ((o = opt_find(opts, "--swizzle"))->given) p.swizzle = opt_choice(o, TMAP_SWIZZLES, 7);
    if ((o = opt_find(opts, "--interleave"))->given) p.interleave = opt_choice(o, TMAP_INTERLEAVES, 3);
    if ((o = opt_find(opts, "--l2"))->given) p.l2_promotion = opt_choice(o, TMAP_L2, 4);
    if ((o = opt_find(opts, "--oob"))->given) p.oob_fill = opt_choice(o, TMAP_OOB, 2);
    p.global_address = 256;
    if ((o = opt_find(opts, "--align"))->given) {
        int64_t a = opt_int(o, 1, 1 << 20, "must be a power of two in [1, 2^20]");
        if (a & (a - 1)) usage_error("--align=%s: must be a power of two", o->val);
        p.global_address = (uint64_t)a; /* an address aligned to exactly this many bytes */
    }
    int cc = 0;
    if ((o = opt_find(opts, "--cc"))->given) cc = (int)opt_int(o, 0, 99, "a compute capability major (9 Hopper, 10 Blackwell; 0 unknown)");

    return tmap_verdict(&p, cc);
}

/* Print the parameters, the checker's verdict and one box's bytes; 0 accepted, 2 rejected. */
static int tmap_verdict(const tmap_params *pp, int cc)
{
    const tmap_params p = *pp;
    char line[512], msg[256];
    tmap_format_params(&p, line, sizeof line);
    printf("cuTensorMapEncodeTiled(%s)\n", line);
    int rule = tmap_check(&p, cc, msg, sizeof msg);
    if (rule != TMAP_OK) {
        fprintf(stderr, "%s: %s: rejected: %s\n", g_cmd, tmap_msg_flag(msg), msg);
        fprintf(stderr, "rule: %s (%s)%s\n", tmap_rule_name(rule), tmap_rule_source(rule),
                tmap_rule_uncertain(rule) ? "; uncertain: the driver's behaviour is not settled by its documentation" : "");
        return 2;
    }
    printf("accepted: no documented rule of the driver is broken%s\n",
           cc > 0 ? "" : " (compute capability unknown: the CC-gated rules were skipped; pass --cc)");
    int unit = 1;
    for (unsigned i = 0; i < p.rank; i++) unit &= p.element_strides[i] == 1;
    if (!tmap_is_packed(p.data_type) && unit) {
        /* One box's bytes is what an mbarrier's expect_tx must count for each load of this map
         * (notes/hardware.md section 10.4). Left out for element strides != 1 and packed types, whose byte
         * counts this tool does not model. */
        uint64_t elems = 1;
        for (unsigned i = 0; i < p.rank; i++) elems *= p.box_dim[i];
        printf("one box: %" PRIu64 " elements = %" PRIu64 " bytes (the expect_tx of one load)\n", elems,
               elems * tmap_elem_bits(p.data_type) / 8);
    }
    return 0;
}

#endif
