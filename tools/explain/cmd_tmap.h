/* explain tmap: would cuTensorMapEncodeTiled accept these parameters? The verdict is tmap_check's
 * (model/tmap_check.h), with the broken rule's name and source (notes/hardware.md section 10).
 * With --stage / --tensor: the maps stage E encodes for Q, K, V, O (host/fmha_tmaps.h), what one
 * box and one tile move (model/tma_model.h, attn/fmha_tma.h), then the same verdict. */
#ifndef FMHA_EXPLAIN_CMD_TMAP_H
#define FMHA_EXPLAIN_CMD_TMAP_H

#include "args.h"
#include "host/attention.h"
#include "host/fmha_tmaps.h"
#include "model/tma_model.h"
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
    "   or: explain tmap [--stage E] [--tensor q|k|v|o] [--layout bhsd|bshd] [--b B] [--hq HQ]\n"
    "                    [--hkv HKV] [--sq SQ] [--skv SKV] [--d D] [--cc MAJOR]\n"
    "                    [--mistake right|rank-strides|element-strides|wide-box|stride-not-16]\n"
    "The maps a TMA stage encodes (common/host/fmha_tmaps.c) for that tensor, or for Q, K, V and O\n"
    "without --tensor, or one of the FG13 mistakes through the same builder: the encode parameters\n"
    "as passed, the box in elements and bytes, the SMEM it spans, the swizzle span, the boxes one\n"
    "tile takes (Q, K, V: 128 rows, D/64 boxes; O: boxes of 16 rows, one storing warp's) and the\n"
    "bytes a full tile's expect_tx announces, then the same check.\n"
    "  --stage         the stage whose maps to show: E (e), the only stage with tensor maps (default)\n"
    "  --mistake       default right (the map the stage uses); the rest are footgun FG13's mistakes\n"
    "  shape defaults: stage E's, B=1 Hq=4 Hkv=2 Sq=256 Skv=256 D=64, BHSD\n"
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

static int tmap_judge(const tmap_params *p, int cc);

/* The stages that hand tensor maps to cuTensorMapEncodeTiled (so far only E: stages/E_tma). */
static const char TMAP_STAGES[] = "E";

/* Bytes of the swizzle span of a map's swizzle (the widest inner box it allows); 0 for none. */
static uint32_t tmap_swizzle_span_bytes(int swizzle)
{
    switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32u;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64u;
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0u;
    default: return 128u; /* 128B and the 128B_ATOM variants */
    }
}

/* One tensor's map as stage E builds it: the encode parameters, what one box and one tile of
 * the stage move, then the checker's verdict. 0 accepted, 2 rejected. */
static int tmap_attn_one(const fmha_opts *o, const fmha_params *p, fmha_tensor t, fmha_tmap_mistake mistake, int cc)
{
    tmap_params m;
    fmha_tmap_params(p, t, 256, mistake, &m);
    const int is_o = t == FMHA_TENSOR_O;
    const int tile_rows = (t == FMHA_TENSOR_Q || is_o) ? FMHA_BM : FMHA_BN;
    const char *const bar = t == FMHA_TENSOR_Q ? "q_full" : t == FMHA_TENSOR_K ? "k_full" : "v_full";
    printf("stage E, tensor %s of B=%d Hq=%d Hkv=%d Sq=%d Skv=%d D=%d, %s (%s%s)\n", fmha_tensor_name(t), o->b, o->hq,
           o->hkv, o->sq, o->skv, o->d, o->layout_bshd ? "BSHD" : "BHSD",
           mistake == FMHA_TMAP_RIGHT ? "the right map" : "FG13 mistake: ", mistake == FMHA_TMAP_RIGHT ? "" : fmha_tmap_mistake_name(mistake));
    char line[512];
    tmap_format_params(&m, line, sizeof line);
    printf("encode: cuTensorMapEncodeTiled(%s)\n", line);
    printf("        (addr: the tensor's device pointer; any 256-byte aligned value stands for it here)\n");

    const uint32_t es = (uint32_t)(tmap_elem_bits(m.data_type) / 8);
    uint64_t elems = 1;
    for (unsigned i = 0; i < m.rank; i++) elems *= m.box_dim[i];
    const uint32_t box_bytes = tma_box_bytes(&m);
    printf("box: {%u,%u,%u,%u} = %u columns x %u rows = %" PRIu64 " elements = %u bytes\n", m.box_dim[0],
           m.box_dim[1], m.box_dim[2], m.box_dim[3], m.box_dim[0], m.box_dim[1], elems, box_bytes);
    printf("SMEM: the box spans %u bytes (%u rows of %u bytes)\n", tma_smem_bytes(&m),
           tma_smem_bytes(&m) / tma_smem_row_bytes(&m), tma_smem_row_bytes(&m));
    const uint32_t span = tmap_swizzle_span_bytes(m.swizzle), inner = m.box_dim[0] * es;
    if (span)
        printf("swizzle: %s, span %u bytes; the inner box is %u bytes (%u x %u): %s\n", tmap_swizzle_name(m.swizzle),
               span, inner, m.box_dim[0], es, inner <= span ? "within the span" : "wider than the span");
    else
        printf("swizzle: %s, no span; the inner box is %u bytes\n", tmap_swizzle_name(m.swizzle), inner);

    /* A tile is tile_rows x D: ceil(D / box columns) boxes across, tile_rows / box rows down. */
    const int col_boxes = (o->d + (int)m.box_dim[0] - 1) / (int)m.box_dim[0];
    const int row_boxes = tile_rows / (int)m.box_dim[1];
    const uint64_t delivered = (uint64_t)col_boxes * (uint64_t)row_boxes * box_bytes;
    if (!is_o) {
        printf("tile: %d rows x %d columns takes %d box%s (D/%u)%s\n", tile_rows, o->d, col_boxes * row_boxes,
               col_boxes * row_boxes == 1 ? "" : "es", m.box_dim[0],
               m.box_dim[0] == FMHA_BOX_COLS ? ", one per 64-column (128-byte) swizzle-atom column" : "");
        const uint32_t tx = fmha_tile_tx_bytes(o->d, tile_rows);
        printf("expect_tx: %u bytes per full tile on %s (%d rows x %d x 2 bytes; rows past the end count too)\n", tx,
               bar, tile_rows, o->d);
        if (delivered != tx)
            printf("note: the tile's %d boxes deliver %" PRIu64 " bytes (out-of-bounds elements included), not the %u "
                   "announced: expect_tx would not match\n", col_boxes * row_boxes, delivered, tx);
    } else {
        printf("tile: %d rows x %d columns, stored in boxes of %u rows (FMHA_O_BOX_ROWS: one storing warp's rows): "
               "%d box%s per %u rows, %d per tile\n", tile_rows, o->d, m.box_dim[1], col_boxes,
               col_boxes == 1 ? "" : "es", m.box_dim[1], col_boxes * row_boxes);
        printf("store: TMA store (no expect_tx: it completes by its bulk group, commit then wait_group.read); "
               "%" PRIu64 " bytes per %u rows, %" PRIu64 " per tile\n", (uint64_t)col_boxes * box_bytes, m.box_dim[1],
               delivered);
    }
    if (o->d != 64 && o->d != 128 && o->d != 256)
        printf("note: stage E runs D = 64, 128 and 256 only (it refuses --d=%d)\n", o->d);
    return tmap_judge(&m, cc);
}

/* explain tmap --stage E / --tensor ...: the attention maps (defaults: stage E's default shape). */
static int cmd_tmap_attn(int argc, char **argv)
{
    opt_t opts[] = {{"--stage", 1, 0, 0},  {"--tensor", 1, 0, 0}, {"--layout", 1, 0, 0}, {"--b", 1, 0, 0},
                    {"--hq", 1, 0, 0},     {"--hkv", 1, 0, 0},    {"--sq", 1, 0, 0},     {"--skv", 1, 0, 0},
                    {"--d", 1, 0, 0},      {"--mistake", 1, 0, 0}, {"--cc", 1, 0, 0},    {NULL, 0, 0, 0}};
    if (parse_opts(argc, argv, 2, opts, NULL)) { fputs(TMAP_USAGE, stdout); return 0; }
    static const char *const tensors[] = {"q", "k", "v", "o"}, *const layouts[] = {"bhsd", "bshd"};
    /* Index = fmha_tmap_mistake value. */
    static const char *const mistakes[] = {"right", "rank-strides", "element-strides", "wide-box", "stride-not-16"};
    _Static_assert(sizeof mistakes / sizeof mistakes[0] == FMHA_TMAP_MISTAKE_COUNT,
                   "one --mistake name per fmha_tmap_mistake");
    fmha_opts o;
    memset(&o, 0, sizeof o);
    o.b = 1; o.hq = 4; o.hkv = 2; o.sq = 256; o.skv = 256; o.d = 64;
    opt_t *x;
    if ((x = opt_find(opts, "--stage"))->given) {
        const char *s = x->val;
        const int letter = s[0] && !s[1] && ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'));
        if (!letter) usage_error("--stage=%s: not a stage letter (the stages that use tensor maps: %s)", s, TMAP_STAGES);
        if (s[0] != 'E' && s[0] != 'e')
            usage_error("--stage=%s: stage %c builds no tensor maps (the stages that use tensor maps: %s)", s,
                        s[0] >= 'a' ? s[0] - 'a' + 'A' : s[0], TMAP_STAGES);
    }
    const int t = (x = opt_find(opts, "--tensor"))->given ? opt_choice(x, tensors, 4) : -1;
    if ((x = opt_find(opts, "--layout"))->given) o.layout_bshd = opt_choice(x, layouts, 2);
    if ((x = opt_find(opts, "--b"))->given) o.b = (int)opt_int(x, 1, 1 << 20, "a batch size >= 1");
    if ((x = opt_find(opts, "--hq"))->given) o.hq = (int)opt_int(x, 1, 1 << 16, "query heads >= 1");
    o.hkv = o.hq < o.hkv ? o.hq : o.hkv;
    if ((x = opt_find(opts, "--hkv"))->given) o.hkv = (int)opt_int(x, 1, 1 << 16, "KV heads >= 1");
    if (o.hq % o.hkv) usage_error("--hq=%d --hkv=%d: --hq must be a multiple of --hkv", o.hq, o.hkv);
    if ((x = opt_find(opts, "--sq"))->given) o.sq = (int)opt_int(x, 1, 1 << 30, "query rows >= 1");
    if ((x = opt_find(opts, "--skv"))->given) o.skv = (int)opt_int(x, 1, 1 << 30, "keys >= 1");
    if ((x = opt_find(opts, "--d"))->given) o.d = (int)opt_int(x, 8, 1024, "a head dim in [8, 1024]");
    const int mistake =
        (x = opt_find(opts, "--mistake"))->given ? opt_choice(x, mistakes, FMHA_TMAP_MISTAKE_COUNT) : 0;
    const int cc = (x = opt_find(opts, "--cc"))->given ? (int)opt_int(x, 0, 99, "a compute capability major") : 0;
    fmha_params p;
    attn_params_for(&o, &p);
    if (t >= 0) return tmap_attn_one(&o, &p, (fmha_tensor)t, (fmha_tmap_mistake)mistake, cc);
    /* No --tensor: every map the stage encodes, in the order fmha_tmaps_encode builds them. */
    int rc = 0;
    for (int i = 0; i < FMHA_TENSOR_COUNT; i++) {
        if (i) putchar('\n');
        fflush(stdout); /* keep a rejection on stderr after its own map's lines */
        const int r = tmap_attn_one(&o, &p, (fmha_tensor)i, (fmha_tmap_mistake)mistake, cc);
        rc = r > rc ? r : rc;
        fflush(stdout);
    }
    return rc;
}

static int cmd_tmap(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--tensor") || !strncmp(argv[i], "--tensor=", 9) || !strcmp(argv[i], "--stage") ||
            !strncmp(argv[i], "--stage=", 8))
            return cmd_tmap_attn(argc, argv);
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

    char line[512];
    tmap_format_params(&p, line, sizeof line);
    printf("cuTensorMapEncodeTiled(%s)\n", line);
    if (tmap_judge(&p, cc)) return 2;
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

/* The checker's verdict: "accepted" on stdout (0), or the broken rule on stderr (2). */
static int tmap_judge(const tmap_params *p, int cc)
{
    char msg[256];
    int rule = tmap_check(p, cc, msg, sizeof msg);
    if (rule != TMAP_OK) {
        fflush(stdout);
        fprintf(stderr, "%s: %s: rejected: %s\n", g_cmd, tmap_msg_flag(msg), msg);
        fprintf(stderr, "rule: %s (%s)%s\n", tmap_rule_name(rule), tmap_rule_source(rule),
                tmap_rule_uncertain(rule) ? "; uncertain: the driver's behaviour is not settled by its documentation" : "");
        return 2;
    }
    printf("accepted: no documented rule of the driver is broken%s\n",
           cc > 0 ? "" : " (compute capability unknown: the CC-gated rules were skipped; pass --cc)");
    return 0;
}

#endif
