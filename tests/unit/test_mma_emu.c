/* MMA emulator: exact integer GEMMs through every operand layout, swizzle and major-ness, against
 * a plain loop (tests/support/mma_fixture.c), for tcgen05.mma (SS and TS, M = 64 and 128, bf16 and
 * e4m3) and wgmma (SS, RS); plus the errors a broken descriptor must produce. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "model/frag_map.h"
#include "model/mma_emu.h"
#include "mma_fixture.h"

static const swizzle_mode SWZ[4] = {SWZ_NONE, SWZ_32B, SWZ_64B, SWZ_128B};

/* Run all K steps of case c on the sm100 emulator into a fresh TMEM model; compare with the loop. */
static void run_sm100(mma_case *c, int m)
{
    tmem_model *t = tmem_model_new();
    uint32_t d;
    cr_assert_eq(tmem_alloc(t, 256, &d), TMEM_OK);
    smem_image img = {c->img, 0, c->bytes};
    uint32_t idesc = c->kind == MMA_KIND_F16 ? idesc_bf16_f32((unsigned)m, (unsigned)c->n, c->ta.major, c->tb.major)
                                             : idesc_e4m3_f32((unsigned)m, (unsigned)c->n, c->ta.major, c->tb.major);
    char name[96];
    mma_case_name(c, name, sizeof name);
    for (int k = 0; k < c->k; k += c->kstep) {
        emu_status st = {0};
        emu_err e = emu_tcgen05_mma(t, &img, d, 0, 0, mma_case_desc_sm100(c, 0, k), mma_case_desc_sm100(c, 1, k),
                                    idesc, c->kind, k > 0, &st);
        cr_assert_eq(e, EMU_OK, "%s: %s", name, st.msg);
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < c->n; j++) {
            int lane = m == 128 ? i : 32 * (i / 16) + i % 16;
            float v;
            memcpy(&v, &t->cell[lane][tmem_addr_col(d) + j], 4);
            cr_assert_eq((double)v, c->ref[i * c->n + j], "%s: D(%d,%d) = %g, loop %g", name, i, j, v, c->ref[i * c->n + j]);
        }
    tmem_model_free(t);
}

Test(mma_emu, sm100_ss_every_layout_bf16)
{
    int ns[3] = {16, 64, 256};
    for (int ma = 0; ma < 2; ma++)
        for (int mb = 0; mb < 2; mb++)
            for (int s = 0; s < 4; s++)
                for (int ni = 0; ni < 3; ni++) {
                    mma_case c;
                    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 128, ns[ni], 64, (operand_major)ma, (operand_major)mb, SWZ[s], 7 + s);
                    run_sm100(&c, 128);
                    mma_case_free(&c);
                }
}

Test(mma_emu, sm100_ss_m64_and_fp8)
{
    for (int s = 0; s < 4; s++) {
        mma_case c;
        mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, 64, 32, MAJOR_K, MAJOR_MN, SWZ[s], 11);
        run_sm100(&c, 64);
        mma_case_free(&c);
        for (int mb = 0; mb < 2; mb++) {
            mma_case_make(&c, MMA_KIND_F8F6F4, FMT_E4M3, 128, 128, 128, MAJOR_K, (operand_major)mb, SWZ[s], 12);
            run_sm100(&c, 128);
            mma_case_free(&c);
        }
    }
}

Test(mma_emu, sm100_ts_a_from_tmem)
{
    /* P [128 x 64] bf16 packed two per column by four warps (32x32b, thread = row), V MN-major */
    for (int s = 0; s < 4; s++) {
        mma_case c;
        mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 128, 64, 64, MAJOR_K, MAJOR_MN, SWZ[s], 21);
        tmem_model *t = tmem_model_new();
        uint32_t base;
        cr_assert_eq(tmem_alloc(t, 256, &base), TMEM_OK);
        uint32_t a_tmem = tmem_addr(base, 0, 128), d_tmem = tmem_addr(base, 0, 0);
        for (int w = 0; w < 4; w++) {
            uint32_t regs[32 * 32];
            for (int th = 0; th < 32; th++)
                for (int j = 0; j < 32; j++) {
                    int row = 32 * w + th;
                    regs[th * 32 + j] = pack_bf16_pair(f32_to_bf16((float)c.a[row * 64 + 2 * j]),
                                                       f32_to_bf16((float)c.a[row * 64 + 2 * j + 1]));
                }
            cr_assert_eq(tmem_st(t, w, TMEM_32x32b, 32, 0, tmem_addr(a_tmem, 32 * w, 0), 32, 0, regs), TMEM_OK, "%s", t->msg);
        }
        smem_image img = {c.img, 0, c.bytes};
        for (int k = 0; k < 64; k += 16) {
            emu_status st = {0};
            /* the TS A operand advances 8 columns per k16 (two bf16 per column) */
            cr_assert_eq(emu_tcgen05_mma(t, &img, d_tmem, 1, a_tmem + (uint32_t)(k / 2), 0, mma_case_desc_sm100(&c, 1, k),
                                         idesc_bf16_f32(128, 64, 0, 1), MMA_KIND_F16, k > 0, &st), EMU_OK, "%s", st.msg);
        }
        for (int i = 0; i < 128; i++)
            for (int j = 0; j < 64; j++) {
                float v;
                memcpy(&v, &t->cell[i][j], 4);
                cr_assert_eq((double)v, c.ref[i * 64 + j], "swz %d D(%d,%d)", s, i, j);
            }
        tmem_model_free(t);
        mma_case_free(&c);
    }
}

static void run_sm90(mma_case *c)
{
    float *acc = calloc(128 * (size_t)c->n / 2, sizeof(float));
    smem_image img = {c->img, 0, c->bytes};
    char name[96];
    mma_case_name(c, name, sizeof name);
    for (int k = 0; k < c->k; k += c->kstep) {
        emu_status st = {0};
        cr_assert_eq(emu_wgmma_ss(acc, &img, mma_case_desc_sm90(c, 0, k), mma_case_desc_sm90(c, 1, k), c->n, c->kind,
                                  c->fmt, c->ta.major, c->tb.major, k > 0, &st), EMU_OK, "%s: %s", name, st.msg);
    }
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < c->n / 2; i++) {
            int r, col;
            wgmma_acc_map(t, i, &r, &col);
            cr_assert_eq((double)acc[t * (c->n / 2) + i], c->ref[r * c->n + col], "%s: thread %d reg %d", name, t, i);
        }
    free(acc);
}

Test(mma_emu, sm90_ss_every_layout)
{
    int ns[5] = {8, 16, 64, 128, 256};
    for (int m = 0; m < 2; m++)
        for (int s = 0; s < 4; s++)
            for (int ni = 0; ni < 5; ni++) {
                mma_case c;
                mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, ns[ni], 64, (operand_major)m, (operand_major)m, SWZ[s], 31);
                run_sm90(&c);
                mma_case_free(&c);
                mma_case_make(&c, MMA_KIND_F8F6F4, FMT_E4M3, 64, ns[ni], 64, MAJOR_K, MAJOR_K, SWZ[s], 32);
                run_sm90(&c);
                mma_case_free(&c);
            }
}

/* wgmma RS: A [64 x K] from registers (wgmma_a_map, bf16 pairs), B [N x K] from SMEM (MN-major as
 * P V's V), K/16 steps, against the loop. */
static void run_sm90_rs(int n, int k, uint64_t seed)
{
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, n, k, MAJOR_K, MAJOR_MN, SWZ_128B, seed);
    float *acc = calloc(128 * (size_t)n / 2, sizeof(float));
    smem_image img = {c.img, 0, c.bytes};
    for (int k0 = 0; k0 < k; k0 += 16) {
        uint32_t a[128 * 4];
        for (int t = 0; t < 128; t++)
            for (int v = 0; v < 8; v += 2) {
                int r, kk;
                wgmma_a_map(t, v, &r, &kk);
                a[t * 4 + v / 2] =
                    pack_bf16_pair(f32_to_bf16((float)c.a[r * k + k0 + kk]), f32_to_bf16((float)c.a[r * k + k0 + kk + 1]));
            }
        emu_status st = {0};
        cr_assert_eq(emu_wgmma_rs(acc, a, &img, mma_case_desc_sm90(&c, 1, k0), n, FMT_BF16, 1, k0 > 0, &st), EMU_OK, "%s",
                     st.msg);
    }
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < n / 2; i++) {
            int r, col;
            wgmma_acc_map(t, i, &r, &col);
            cr_assert_eq((double)acc[t * (n / 2) + i], c.ref[r * n + col], "N %d K %d: thread %d reg %d", n, k, t, i);
        }
    free(acc);
    mma_case_free(&c);
}

Test(mma_emu, sm90_rs_a_from_registers) { run_sm90_rs(64, 32, 41); }

/* Stage F's 176-key tile at D = 128 (--kv-tile 176): S = Q K^T as m64n176k16 SS over D = 128 (Q and
 * the K slot K-major, 128B swizzle: fmha_q_tile_rows / fmha_k_tile_cols), and O += P V as
 * m64n128k16 RS over 176 keys, eleven K steps (the V slot MN-major: fmha_v_tile_cols). */
Test(mma_emu, sm90_176_key_tile)
{
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 64, 176, 128, MAJOR_K, MAJOR_K, SWZ_128B, 51);
    run_sm90(&c);
    mma_case_free(&c);
    run_sm90_rs(128, 176, 52);
}

Test(mma_emu, broken_descriptors_are_named)
{
    mma_case c;
    mma_case_make(&c, MMA_KIND_F16, FMT_BF16, 128, 64, 16, MAJOR_K, MAJOR_K, SWZ_128B, 51);
    tmem_model *t = tmem_model_new();
    uint32_t d;
    cr_assert_eq(tmem_alloc(t, 64, &d), TMEM_OK);
    smem_image img = {c.img, 0, c.bytes};
    emu_status st = {0};
    /* an sm90 descriptor on sm100: bit 46 missing */
    cr_expect_eq(emu_tcgen05_mma(t, &img, d, 0, 0, mma_case_desc_sm90(&c, 0, 0), mma_case_desc_sm100(&c, 1, 0),
                                 idesc_bf16_f32(128, 64, 0, 0), MMA_KIND_F16, 0, &st), EMU_ERR_DESC);
    cr_expect(strstr(st.msg, "46") != NULL, "%s", st.msg);
    /* N=128 into a 64-column allocation */
    cr_expect_eq(emu_tcgen05_mma(t, &img, d, 0, 0, mma_case_desc_sm100(&c, 0, 0), mma_case_desc_sm100(&c, 1, 0),
                                 idesc_bf16_f32(128, 128, 0, 0), MMA_KIND_F16, 0, &st), EMU_ERR_TMEM);
    /* a start address beyond the image */
    cr_expect_eq(emu_tcgen05_mma(t, &img, d, 0, 0, smem_desc_advance(mma_case_desc_sm100(&c, 0, 0), c.bytes),
                                 mma_case_desc_sm100(&c, 1, 0), idesc_bf16_f32(128, 64, 0, 0), MMA_KIND_F16, 0, &st), EMU_ERR_BOUNDS);
    /* M at bit 23 */
    uint32_t bad = (1u << 4) | (1u << 7) | (1u << 10) | (8u << 17) | (4u << 23);
    cr_expect_eq(emu_tcgen05_mma(t, &img, d, 0, 0, mma_case_desc_sm100(&c, 0, 0), mma_case_desc_sm100(&c, 1, 0),
                                 bad, MMA_KIND_F16, 0, &st), EMU_ERR_IDESC);
    /* FP8 wgmma with a transpose */
    float acc[128 * 4];
    cr_expect_eq(emu_wgmma_ss(acc, &img, 0, 0, 8, MMA_KIND_F8F6F4, FMT_E4M3, 0, 1, 0, &st), EMU_ERR_IDESC);
    cr_expect(strstr(st.msg, "FG20") != NULL, "%s", st.msg);
    tmem_model_free(t);
    mma_case_free(&c);
}
