/* FG18 — paged KV: the tail of the last page, and the block table's range.
 *
 * Symptom: (a) a sequence whose length is not a multiple of the page size, read to the end of its
 *   last page, attends to slots that hold nothing of it (here: poison, NaN, so the row turns NaN;
 *   in a real cache, stale tokens of whoever used the page before: silently wrong); (b) a
 *   block-table entry outside [0, num_pages) reads memory outside the cache; (c) an in-range entry
 *   that points at another sequence's page gives a plausible, wrong answer.
 * Cause: the page count rounds up; only seqlens[b] says where a sequence ends.
 * Fix: every loop over a sequence's keys stops at seqlens[b] (the mask of the last page), and the
 *   host checks the table and the lengths before any launch (paged_kv_validate: exit 2 naming the
 *   rule).
 * Stage: D. Level: host (the cache builder, the validation and the fp64 attention over the
 *   gathered tokens); the kernel-level variant comes with stage D.
 * Notes: notes/footguns.md#fg18 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/fp8.h"
#include "host/paged_kv.h"
#include "host/reference.h"
#include "host/rng.h"
#include "stage_run.h"
#include "test_util.h"

enum { B = 5, HKV = 2, D = 64, PAGE = 64, MAXLEN = 200 };
static const int32_t LENS[B] = {1, 63, 64, 65, 200};

static float *logical(uint64_t seed)
{
    rng_t r;
    rng_seed(&r, seed);
    float *x = malloc(sizeof(float) * B * MAXLEN * HKV * D);
    for (int i = 0; i < B * MAXLEN * HKV * D; i++) x[i] = (float)rng_normal(&r);
    return x;
}

/* One query row of sequence b, head h, over the first n keys gathered through the table. */
static void attend(const paged_kv *c, int b, int h, int n, const float *q, double *o)
{
    float *k = malloc(sizeof(float) * (size_t)n * D), *v = malloc(sizeof(float) * (size_t)n * D);
    for (int t = 0; t < n; t++) {
        paged_kv_token(c, 0, b, t, h, k + (size_t)t * D);
        paged_kv_token(c, 1, b, t, h, v + (size_t)t * D);
    }
    const attn_shape s = {1, 1, 1, 1, n, D, 1.0 / sqrt((double)D), 0};
    double *scores = malloc(sizeof(double) * (size_t)n), lse;
    ref_attention_row(&s, q, k, v, 0, 0, 0, 0, scores, o, &lse);
    free(k); free(v); free(scores);
}

static int count_nan(const double *o) { int n = 0; for (int c = 0; c < D; c++) n += isnan(o[c]); return n; }

Test(footgun, fg18_tail_page_and_table_range)
{
    float *k = logical(1), *v = logical(2);
    rng_t r;
    rng_seed(&r, 3);
    paged_kv c;
    cr_assert_eq(paged_kv_build(&c, B, HKV, D, PAGE, LENS, MAXLEN, k, v, 3, &r), 0);
    char err[256] = "";
    cr_assert_eq(paged_kv_validate(&c, err, sizeof err), 0, "the built cache is valid: %s", err);
    /* the pages are shuffled: at least one sequence's pages are not consecutive */
    int scattered = 0;
    for (int b = 0; b < B; b++)
        for (int j = 1; j * PAGE < LENS[b]; j++) scattered += c.block_table[b * c.max_pages + j] != c.block_table[b * c.max_pages + j - 1] + 1;
    cr_expect_gt(scattered, 0, "pages handed out in a shuffled order");
    /* every token gathered through the table is the dequantised logical token */
    size_t mismatched = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < LENS[b]; t++)
            for (int h = 0; h < HKV; h++) {
                float got[D], want[D], s;
                uint8_t qb[D];
                paged_kv_token(&c, 0, b, t, h, got);
                e4m3_quantise_rows(k + (((size_t)b * MAXLEN + t) * HKV + h) * D, 1, D, 0.0f, 1, qb, &s, want);
                mismatched += memcmp(got, want, sizeof got) != 0;
            }
    cr_expect_eq(mismatched, 0, "%zu token rows gathered wrong", mismatched);

    float q[D];
    for (int i = 0; i < D; i++) q[i] = (float)(i % 7) * 0.25f - 0.75f;
    /* broken (a): sequence 3 (65 tokens) read to the end of its second page (128 slots) */
    double o[D];
    attend(&c, 3, 1, 2 * PAGE, q, o);
    const int broken_nan = count_nan(o);
    fprintf(stderr, "FG18 broken (65 tokens read to the end of their last page, host): %d of %d O values NaN (the "
            "63 poisoned slots)\n", broken_nan, D);
    cr_expect_eq(broken_nan, D, "the slots past the last token are read");
    /* fixed: stop at seqlens[b] */
    attend(&c, 3, 1, LENS[3], q, o);
    fprintf(stderr, "FG18 fixed (65 tokens, stop at seqlens[b], host): %d NaN\n", count_nan(o));
    cr_expect_eq(count_nan(o), 0);
    /* broken (c): sequence 4's first page replaced by sequence 2's (in range, accepted, wrong) */
    double right[D], wrong_o[D];
    attend(&c, 4, 0, LENS[4], q, right);
    const int32_t saved = c.block_table[4 * c.max_pages];
    c.block_table[4 * c.max_pages] = c.block_table[2 * c.max_pages];
    const int accepted = paged_kv_validate(&c, err, sizeof err) == 0;
    attend(&c, 4, 0, LENS[4], q, wrong_o);
    double diff = 0;
    for (int i = 0; i < D; i++) diff = fmax(diff, fabs(wrong_o[i] - right[i]));
    fprintf(stderr, "FG18 broken (sequence 4's page 0 -> sequence 2's page, host): validation %s, max |O - O_right| "
            "%.3e\n", accepted ? "accepts it (in range)" : "refuses it", diff);
    cr_expect(accepted, "an in-range entry cannot be told from a right one");
    cr_expect_gt(diff, 1e-2, "but the answer is another sequence's");
    c.block_table[4 * c.max_pages] = saved;

    /* broken (b) and the other rules: each refused with its rule named */
    struct { const char *what, *needle; } cases[] = {
        {"entry = num_pages", "block_table[1][0]"}, {"entry = -1 in use", "block_table[4][2]"},
        {"length 0", "seqlens[0]=0"},              {"more pages than the row", "block-table row has"},
        {"page size 48", "--page=48"},              {"NaN scale of a token in use", "v_scale of sequence 3, token 64"},
    };
    cr_assert_leq(c.max_pages, 4, "the copies below hold 4 table entries per sequence");
    for (int i = 0; i < 6; i++) {
        paged_kv x = c;
        int32_t table[B * 4], lens[B];
        memcpy(table, c.block_table, sizeof(int32_t) * B * c.max_pages);
        memcpy(lens, c.seqlens, sizeof lens);
        x.block_table = table;
        x.seqlens = lens;
        float saved_scale = 0;
        size_t at = 0;
        switch (i) {
        case 0: table[1 * c.max_pages] = c.num_pages; break;
        case 1: table[4 * c.max_pages + 2] = -1; break;
        case 2: lens[0] = 0; break;
        case 3: lens[2] = c.max_pages * PAGE + 1; break;
        case 4: x.page_size = 48; break;
        case 5: at = paged_kv_row(&c, 3, 64, 1); saved_scale = c.v_scale[at]; c.v_scale[at] = NAN; break;
        }
        err[0] = '\0';
        const int rc = paged_kv_validate(&x, err, sizeof err);
        fprintf(stderr, "FG18 broken (%s, host): validation %d: %s\n", cases[i].what, rc, err);
        cr_expect_eq(rc, 2, "%s is refused", cases[i].what);
        cr_expect(strstr(err, cases[i].needle) != NULL, "%s: the rule is named (%s)", cases[i].what, err);
        if (i == 5) c.v_scale[at] = saved_scale;
    }
    cr_expect_eq(paged_kv_validate(&c, err, sizeof err), 0, "and the untouched cache still passes: %s", err);
    paged_kv_free(&c);
    free(k); free(v);
}

/* Stage level: the same mistake in stage D's kernels, through `stage_D --fault` (broken, then the
 * same shape fixed), on the host model and on the H200. */
Test(footgun, fg18_stage_d_emu)
{
    cr_expect_eq(fault_demo_pair("stage_D", "emu", "read-whole-page", "--b 2 --hq 8 --hkv 1 --sq 1 --seqlens 100,37 --d 64 --page 64 --splits 1", "NaN/Inf where the reference is finite"), 0, "read-whole-page on emu");
    /* the block-table entry past the cache: the host that skips its check lets the gather meet it
     * (emu: the model names the page); with the check, the same table is refused before any
     * launch (the host test above, paged_kv_validate) */
    cr_expect_eq(fault_demo_pair("stage_D", "emu", "table-out-of-range", "--b 2 --hq 8 --hkv 1 --sq 1 --seqlens 100,37 --d 64 --page 16", "outside the cache of"), 0);
}

Test(footgun, fg18_stage_d_h200, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    cr_expect_eq(fault_demo_pair("stage_D", "sm90", "read-whole-page", "--b 2 --hq 8 --hkv 1 --sq 1 --seqlens 100,37 --d 64 --page 64 --splits 1", "NaN/Inf where the reference is finite"), 0, "read-whole-page on the H200");
}
