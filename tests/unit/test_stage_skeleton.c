/* The stage sources follow one skeleton (notes/core-in-common.md, "One step skeleton"), checked here so no stage drifts:
 *   - every stage kernel file (stages/X_name/ *.cu) opens with the identical series index;
 *   - its header says what it adds: "Key ideas" for stage A, "Key extensions over stage W" (W the
 *     stage before) for every later one, as a numbered list;
 *   - the step labels (1 prologue, 2a.. mainloop, 3 epilogue, 4 teardown) listed in the header's
 *     "Steps" block are exactly the "Step N:" labels in the code, and a stage's sm100 kernel, sm90
 *     kernel and emu flow use the same set;
 *   - in sm100 code, no warp-wide (.sync.aligned) tcgen05 instruction follows a per-thread
 *     mbarrier spin without a __syncwarp() or CTA barrier in between (the warp must be converged
 *     by construction, not by the compiler's choice).
 * The checks read the source files; each also runs on a broken sample, so it can fail. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

/* The first 7 lines: "// FMHA, one milestone at a time" and the six stage lines. */
static void series_index(const char *src, char *out, size_t len)
{
    const char *p = src;
    for (int line = 0; line < 7 && *p; line++) {
        const char *e = strchr(p, '\n');
        if (!e) e = p + strlen(p);
        p = *e ? e + 1 : e;
    }
    size_t n = (size_t)(p - src) < len - 1 ? (size_t)(p - src) : len - 1;
    memcpy(out, src, n);
    out[n] = '\0';
}

/* Step labels as a sorted, de-duplicated string "1 2a 2b 3 4". in_code: "Step 2a:" occurrences
 * or "Step 2a (warp 5):" (comments of either style); else the header's list: lines "//   2a  ..." after "// Steps". */
typedef struct { char lab[24][8]; int n; } labels;

static void add_label(labels *L, const char *s, size_t n)
{
    if (n == 0 || n >= 8) return;
    char t[8];
    memcpy(t, s, n);
    t[n] = '\0';
    for (int i = 0; i < L->n; i++)
        if (strcmp(L->lab[i], t) == 0) return;
    if (L->n < 24) strcpy(L->lab[L->n++], t);
}

static int cmp_lab(const void *a, const void *b) { return strcmp(a, b); }

static void labels_str(labels *L, char *out, size_t len)
{
    qsort(L->lab, (size_t)L->n, sizeof L->lab[0], cmp_lab);
    out[0] = '\0';
    for (int i = 0; i < L->n; i++) {
        strncat(out, L->lab[i], len - strlen(out) - 1);
        if (i + 1 < L->n) strncat(out, " ", len - strlen(out) - 1);
    }
}

static void code_labels(const char *src, char *out, size_t len)
{
    labels L = {.n = 0};
    for (const char *p = strstr(src, "Step "); p; p = strstr(p + 1, "Step ")) {
        const char *q = p + 5;
        size_t n = 0;
        while (isdigit((unsigned char)q[n]) || islower((unsigned char)q[n])) n++;
        if (n && isdigit((unsigned char)q[0]) && (q[n] == ':' || (q[n] == ' ' && q[n + 1] == '('))) add_label(&L, q, n);
    }
    labels_str(&L, out, len);
}

static void header_labels(const char *src, char *out, size_t len)
{
    labels L = {.n = 0};
    const char *p = strstr(src, "// Steps");
    if (!p) p = strstr(src, " * Steps");
    if (p) {
        p = strchr(p, '\n');
        while (p && p[1] == '/' && p[2] == '/') {
            const char *q = p + 3;
            int sp = 0;
            while (*q == ' ') { q++; sp++; }
            size_t n = 0;
            while (isdigit((unsigned char)q[n]) || islower((unsigned char)q[n])) n++;
            if (sp == 3 && n && isdigit((unsigned char)q[0]) && (q[n] == ' ' || q[n] == '.')) add_label(&L, q, n);
            p = strchr(p + 1, '\n');
        }
    }
    labels_str(&L, out, len);
}

/* Lines of sm100 code where a .sync.aligned tcgen05 call follows an mbar_wait with no
 * __syncwarp() / __syncthreads() in between (a textual scan in source order). Returns the count
 * and the first offending line number. */
static int unconverged_after_wait(const char *src, int *first_line)
{
    static const char *const aligned[] = {"tmem_ld_", "tmem_st_", "tmem_alloc(", "tmem_dealloc(", "tmem_relinquish("};
    int after_wait = 0, bad = 0, line = 1;
    *first_line = 0;
    for (const char *p = src; *p; line++) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < 511 ? n : 511), p);
        const char *code = buf;
        while (*code == ' ') code++;
        if (strncmp(code, "//", 2) != 0) {
            if (strstr(code, "mbar_wait(")) after_wait = 1;
            if (strstr(code, "__syncwarp()") || strstr(code, "__syncthreads()")) after_wait = 0;
            for (int i = 0; i < 5; i++)
                if (strstr(code, aligned[i]) && after_wait) {
                    if (!bad++) *first_line = line;
                }
        }
        p = e ? e + 1 : p + n;
    }
    return bad;
}

typedef struct { char path[512]; int kind; } src_file; /* kind: 0 sm100, 1 sm90, 2 emu */

static int stage_sources(const char *dir, src_file *out, int max)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        const char *nm = e->d_name;
        size_t l = strlen(nm);
        int kind = -1;
        if (strstr(nm, "_sm100.cu")) kind = 0;
        else if (strstr(nm, "_sm90.cu")) kind = 1;
        else if (l > 6 && strcmp(nm + l - 6, "_emu.c") == 0) kind = 2;
        if (kind < 0) continue;
        snprintf(out[n].path, sizeof out[n].path, "%s/%s", dir, nm);
        out[n++].kind = kind;
    }
    closedir(d);
    return n;
}

static int stage_dirs(char dirs[][300], int max)
{
    DIR *d = opendir("stages");
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max)
        if (isupper((unsigned char)e->d_name[0]) && e->d_name[1] == '_') snprintf(dirs[n++], 300, "stages/%s", e->d_name);
    closedir(d);
    qsort(dirs, (size_t)n, 300, (int (*)(const void *, const void *))strcmp);
    return n;
}

Test(stage_skeleton, series_index_and_key_extensions)
{
    char dirs[16][300], ref[2048] = "", idx[2048];
    const int nd = stage_dirs(dirs, 16);
    cr_assert_geq(nd, 3, "stages/ holds A, B, C at least");
    int kernels = 0;
    for (int i = 0; i < nd; i++) {
        src_file f[8];
        const int nf = stage_sources(dirs[i], f, 8);
        const char letter = dirs[i][7];
        for (int k = 0; k < nf; k++) {
            if (f[k].kind == 2) continue;
            char *src = slurp(f[k].path);
            cr_assert_not_null(src, "%s", f[k].path);
            series_index(src, idx, sizeof idx);
            if (!ref[0]) snprintf(ref, sizeof ref, "%s", idx);
            cr_expect_str_eq(idx, ref, "%s: the series index differs from the other kernel files", f[k].path);
            /* stage A states its ideas; a later one extends an earlier stage (E builds on C, not on D) */
            char want[64];
            const char *ke = NULL;
            if (letter == 'A') {
                snprintf(want, sizeof want, "// Key ideas");
                ke = strstr(src, want);
            }
            for (char base = (char)(letter - 1); letter != 'A' && base >= 'A' && !ke; base--) {
                snprintf(want, sizeof want, "// Key extensions over stage %c:", base);
                ke = strstr(src, want);
            }
            if (!ke && letter != 'A') snprintf(want, sizeof want, "// Key extensions over stage <an earlier letter>:");
            cr_expect_not_null(ke, "%s: no \"%s\" block", f[k].path, want);
            if (ke) cr_expect_not_null(strstr(ke, "//   1. "), "%s: the key extensions are a numbered list", f[k].path);
            kernels++;
            free(src);
        }
    }
    cr_expect_geq(kernels, 6, "two kernel files per stage");
    cr_expect(strstr(ref, "F_pipeline") != NULL, "the index names every stage A..F");
    /* the check can fail: a changed line is a different index */
    char broken[2048];
    snprintf(broken, sizeof broken, "%s", ref);
    broken[10] = 'X';
    cr_expect_str_neq(broken, ref);
}

Test(stage_skeleton, same_step_labels_in_every_backend)
{
    char dirs[16][300];
    const int nd = stage_dirs(dirs, 16);
    for (int i = 0; i < nd; i++) {
        src_file f[8];
        const int nf = stage_sources(dirs[i], f, 8);
        cr_expect_geq(nf, 3, "%s: an sm100 kernel, an sm90 kernel and an emu flow", dirs[i]);
        char first[256] = "";
        const char *first_path = "";
        for (int k = 0; k < nf; k++) {
            char *src = slurp(f[k].path);
            char code[256], head[256];
            code_labels(src, code, sizeof code);
            cr_expect(strncmp(code, "1 ", 2) == 0 && strstr(code, " 3 4") != NULL,
                      "%s: steps run 1 (prologue) .. 3 (epilogue) 4 (teardown): %s", f[k].path, code);
            if (f[k].kind != 2) {
                header_labels(src, head, sizeof head);
                cr_expect_str_eq(head, code, "%s: the header's step list (%s) is not the code's (%s)", f[k].path, head, code);
            }
            if (!first[0]) { snprintf(first, sizeof first, "%s", code); first_path = f[k].path; }
            else cr_expect_str_eq(code, first, "%s names steps %s, %s names %s", f[k].path, code, first_path, first);
            free(src);
        }
    }
    /* the label scan can fail: a sample with a missing step */
    char a[64], b[64];
    code_labels("// Step 1: x\n// Step 2a: y\n// Step 3: z\n// Step 4: w\n", a, sizeof a);
    code_labels("// Step 1: x\n// Step 3: z\n// Step 4: w\n", b, sizeof b);
    cr_expect_str_eq(a, "1 2a 3 4");
    cr_expect_str_neq(a, b);
}

Test(stage_skeleton, sm100_warps_converged_before_sync_aligned_tcgen05)
{
    char dirs[16][300];
    const int nd = stage_dirs(dirs, 16);
    int checked = 0;
    for (int i = 0; i < nd; i++) {
        src_file f[8];
        const int nf = stage_sources(dirs[i], f, 8);
        for (int k = 0; k < nf; k++) {
            if (f[k].kind != 0) continue;
            char *src = slurp(f[k].path);
            int line;
            const int bad = unconverged_after_wait(src, &line);
            cr_expect_eq(bad, 0, "%s:%d: a .sync.aligned tcgen05 instruction follows an mbar_wait without __syncwarp()",
                         f[k].path, line);
            checked++;
            free(src);
        }
    }
    cr_expect_geq(checked, 3);
    int line;
    cr_expect_eq(unconverged_after_wait("mbar_wait(b, 0, wd, 1);\ntcgen05_fence_after();\ntmem_ld_32x32b_x32(t, u);\n", &line), 1,
                 "the broken sample is caught");
    cr_expect_eq(line, 3);
    cr_expect_eq(unconverged_after_wait("mbar_wait(b, 0, wd, 1);\n__syncwarp();\ntmem_ld_32x32b_x32(t, u);\n", &line), 0);
}
