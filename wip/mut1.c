/* Host port of wip/stage-d-swapped-mma decode_sm90.cu, thread by thread, wgmma through mma_emu. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attn/split_merge.h"
#include "host/bf16.h"
#include "host/fp8.h"
#include "host/decode.h"
#include "host/runner.h"
#include "model/frag_map.h"
#include "model/mma_emu.h"
#include "model/idesc.h"
#include "decode.h"

static int g_fix_fg20 = 0;
#define T 128
static int row_of(int t, int jr) { return 8 * (jr / 2) + 2 * (t % 4) + jr % 2; }
static int jr_of(int i) { return 2 * (i >> 2) + (i & 1); }
static uint32_t bperm(uint32_t a, uint32_t b, uint32_t s)
{
    uint8_t by[8];
    for (int i = 0; i < 4; i++) { by[i] = (uint8_t)(a >> (8 * i)); by[4 + i] = (uint8_t)(b >> (8 * i)); }
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) r |= (uint32_t)by[(s >> (4 * i)) & 7] << (8 * i);
    return r;
}
/* xor-4/8/16 reduce: lanes with equal lane%4 */
static void warp_red(float *x /*[128]*/, int is_max)
{
    for (int w = 0; w < 4; w++)
        for (int q = 0; q < 4; q++) {
            float a = is_max ? -INFINITY : 0.0f;
            /* the butterfly: the same set; order differs for sums (ok) */
            for (int l = q; l < 32; l += 4) a = is_max ? fmaxf(a, x[32 * w + l]) : a + x[32 * w + l];
            for (int l = q; l < 32; l += 4) x[32 * w + l] = a;
        }
}
static float sm_f32(uint8_t *img, uint32_t off) { float f; memcpy(&f, img + off, 4); return f; }
static void sm_wf32(uint8_t *img, uint32_t off, float f) { memcpy(img + off, &f, 4); }

static int cta(const dec_params *p, int NR, int D, int mt, int split, int hk, int b, uint8_t *img, const smem_layout *L)
{
    const int RPT = NR / 4;
    smem_tile tq = dec_q_tile(NR, D), tk = dec_k_tile(D), tvt = dec_vt_tile(D), tp = dec_p_tile(NR), tv_mn = dec_v_mn_tile(D);
    const uint32_t oQ = L->tile[DEC_SMEM_Q], oK = L->tile[DEC_SMEM_K], oVS = L->tile[DEC_SMEM_VS], oVT = L->tile[DEC_SMEM_VT],
                   oP = L->tile[DEC_SMEM_P], oSC = L->tile[DEC_SMEM_SCALES];
    const uint32_t o_sq = oSC, o_sk = o_sq + 4 * NR, o_sv = o_sk + 4 * DEC_BN, o_rmax = o_sv + 4 * DEC_BN, o_rp = o_rmax + 16 * NR,
                   o_rsv = o_rp + 16 * NR;
    if (o_rsv + 16 > L->bars) { printf("scale region overflow\n"); return 1; }
    const int M = dec_rows(p), len = p->seqlens[b], m0 = mt * NR;
    const int32_t *table = p->block_table + (int64_t)b * p->max_pages;
    const float scale_log2 = p->scale * DEC_LOG2E;
    int t0, t1;
    dec_split_tiles(p, len, split, &t0, &t1);
    static int nvis[T][8], qi[T][8], qh[T][8];
    for (int t = 0; t < T; t++)
        for (int jr = 0; jr < RPT; jr++) {
            const int m = m0 + row_of(t, jr);
            qi[t][jr] = qh[t][jr] = 0;
            if (m < M) dec_unpack_row(p, hk, m, &qi[t][jr], &qh[t][jr]);
            nvis[t][jr] = m < M ? dec_visible_keys(p, len, qi[t][jr]) : 0;
        }
    if (t0 >= t1) {
        for (int t = 0; t < 4; t++)
            for (int jr = 0; jr < RPT; jr++)
                if (m0 + row_of(t, jr) < M) p->lse_part[(((int64_t)split * p->b + b) * p->hq + qh[t][jr]) * p->sq + qi[t][jr]] = -INFINITY;
        return 0;
    }
    /* step 1 */
    float amax[T];
    for (int t = 0; t < T; t++) {
        const int r = t / 2, half = t % 2, m = m0 + r, valid = r < NR && m < M;
        int i = 0, h = 0;
        if (valid) dec_unpack_row(p, hk, m, &i, &h);
        const uint16_t *src = p->q + (((int64_t)b * p->sq + i) * p->hq + h) * D + half * (D / 2);
        amax[t] = 0;
        if (valid) for (int e = 0; e < D / 2; e++) amax[t] = fmaxf(amax[t], fabsf(bf16_to_f32(src[e])));
    }
    for (int t = 0; t < T; t += 2) { float a = fmaxf(amax[t], amax[t + 1]); amax[t] = amax[t + 1] = a; }
    for (int t = 0; t < T; t++) {
        const int r = t / 2, half = t % 2, m = m0 + r, in_tile = r < NR, valid = in_tile && m < M;
        int i = 0, h = 0;
        if (valid) dec_unpack_row(p, hk, m, &i, &h);
        const uint16_t *src = p->q + (((int64_t)b * p->sq + i) * p->hq + h) * D + half * (D / 2);
        const float sq = amax[t] > 0 ? amax[t] / DEC_E4M3_MAX : 1.0f;
        for (int e = 0; e < D / 2; e++) {
            uint8_t code = valid ? e4m3_encode(bf16_to_f32(src[e]) / sq, 1) : 0;
            if (in_tile) img[oQ + smem_tile_offset(&tq, r, half * (D / 2) + e)] = code;
        }
        if (in_tile && half == 0) sm_wf32(img, o_sq + 4 * r, sq);
    }
    static float rowfac[T][8], m_i[T][8], l_i[T][8], u_i[T][8];
    for (int t = 0; t < T; t++)
        for (int jr = 0; jr < RPT; jr++) {
            rowfac[t][jr] = scale_log2 * sm_f32(img, o_sq + 4 * row_of(t, jr));
            m_i[t][jr] = -INFINITY; l_i[t][jr] = 0; u_i[t][jr] = 1;
        }
    const int DM = D / 64, NH = NR / 2;
    float *o = calloc((size_t)DM * T * NH, 4), *s = calloc((size_t)2 * T * NH, 4);
    const int end = dec_gather_end(p, len);
    const int v_mn = (p->faults & DEC_FAULT_V_NOT_TRANSPOSED) != 0;
    smem_image im = {img, 0, L->used};
    emu_status st = {0};
    for (int j = t0; j < t1; j++) {
        const int kv0 = j * DEC_BN;
        /* 2a gather (as the kernel: cp.async of 16 B chunks; scales) */
        for (int t = 0; t < T; t++) {
            const int tok = kv0 + t;
            const int64_t row = tok < end ? dec_token_row(p, table, tok, hk) : -1;
            sm_wf32(img, o_sk + 4 * t, row < 0 ? 0.0f : p->k_scale[row]);
            sm_wf32(img, o_sv + 4 * t, row < 0 ? 0.0f : p->v_scale[row]);
            for (int e = 0; e < D; e++) {
                uint8_t kc = row < 0 ? 0 : p->k[row * D + e], vc = row < 0 ? 0 : p->v[row * D + e];
                img[oK + smem_tile_offset(&tk, t, e)] = kc;
                img[oVS + (v_mn ? smem_tile_offset(&tv_mn, e, t) : smem_tile_offset(&tk, t, e))] = vc;
            }
        }
        /* 2a' */
        if (v_mn) memcpy(img + oVT, img + oVS, tv_mn.bytes);
        else
            for (int t = 0; t < T; t++) {
                const int a = t % 32, w = t / 32;
                for (int ch = w; ch < D / 16; ch += 4) {
                    uint32_t x[4][4];
                    for (int q = 0; q < 4; q++) memcpy(x[q], img + oVS + smem_tile_offset(&tk, 4 * a + q, 16 * ch), 16);
                    for (int wd = 0; wd < 4; wd++) {
                        uint32_t t0_ = bperm(x[0][wd], x[1][wd], 0x5140), t1_ = bperm(x[0][wd], x[1][wd], 0x7362);
                        uint32_t t2_ = bperm(x[2][wd], x[3][wd], 0x5140), t3_ = bperm(x[2][wd], x[3][wd], 0x7362);
                        uint32_t out[4] = {bperm(t0_, t2_, 0x5410), bperm(t0_, t2_, 0x7632), bperm(t1_, t3_, 0x5410), bperm(t1_, t3_, 0x7632)};
                        for (int k = 0; k < 4; k++) memcpy(img + oVT + smem_tile_offset(&tvt, 16 * ch + 4 * wd + k, 4 * a), &out[k], 4);
                    }
                }
            }
        /* sanity: Vt == transpose of V */
        if (!v_mn)
            for (int n = 0; n < DEC_BN; n++)
                for (int e = 0; e < D; e++)
                    if (img[oVT + smem_tile_offset(&tvt, e, n)] != img[oVS + smem_tile_offset(&tk, n, e)]) { printf("transpose mismatch\n"); return 1; }
        /* 2b */
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < D; k += 32)
                if (emu_wgmma_ss(s + h * T * NH, &im, smem_tile_desc_sm90(&tk, oK, 0, k), smem_tile_desc_sm90(&tq, oQ, 0, k), NR,
                                 MMA_KIND_F8F6F4, FMT_E4M3, 0, 0, k > 0, &st)) { printf("emu: %s\n", st.msg); return 1; }
        /* 2c */
        static float mx[8][T];
        for (int t = 0; t < T; t++) {
            for (int jr = 0; jr < RPT; jr++) mx[jr][t] = -INFINITY;
            for (int h = 0; h < 2; h++)
                for (int i = 0; i < NH; i++) {
                    int r, c;
                    wgmma_acc_map(t, i, &r, &c);
                    const int key = 64 * h + r, jr = jr_of(i);
                    float colscale = sm_f32(img, o_sk + 4 * key);
                    if (p->faults & DEC_FAULT_K_SCALE_ON_ROWS) colscale = sm_f32(img, o_sk + 4 * c);
                    if (p->faults & DEC_FAULT_K_SCALE_DROPPED) colscale = 1.0f;
                    float *sv_ = &s[h * T * NH + t * NH + i];
                    *sv_ = kv0 + key < nvis[t][jr] ? *sv_ * rowfac[t][jr] * colscale : -INFINITY;
                    mx[jr][t] = fmaxf(mx[jr][t], *sv_);
                }
        }
        for (int jr = 0; jr < RPT; jr++) {
            warp_red(mx[jr], 1);
            for (int t = 0; t < T; t++) if (t % 32 < 4) sm_wf32(img, o_rmax + 4 * ((t / 32) * NR + row_of(t, jr)), mx[jr][t]);
        }
        /* barrier */
        static float alpha[T][8], base[T][8], pmax[8][T], svmax[T], sp[T][8];
        for (int t = 0; t < T; t++)
            for (int jr = 0; jr < RPT; jr++) {
                const int c = row_of(t, jr);
                float mt_ = -INFINITY;
                for (int w = 0; w < 4; w++) mt_ = fmaxf(mt_, sm_f32(img, o_rmax + 4 * (w * NR + c)));
                const float m_new = fmaxf(m_i[t][jr], mt_);
                base[t][jr] = fmha_exp_base(m_new, 0);
                alpha[t][jr] = exp2f(m_i[t][jr] - base[t][jr]);
                m_i[t][jr] = m_new;
                l_i[t][jr] *= alpha[t][jr];
            }
        for (int t = 0; t < T; t++) {
            for (int jr = 0; jr < RPT; jr++) pmax[jr][t] = 0;
            svmax[t] = 0;
            for (int h = 0; h < 2; h++)
                for (int i = 0; i < NH; i++) {
                    int r, c;
                    wgmma_acc_map(t, i, &r, &c);
                    const int key = 64 * h + r, jr = jr_of(i);
                    float *x = &s[h * T * NH + t * NH + i];
                    *x = exp2f(*x - base[t][jr]);
                    l_i[t][jr] += *x;
                    const float v_scale = sm_f32(img, o_sv + 4 * key);
                    if (!(p->faults & DEC_FAULT_V_SCALE_ON_O_ROWS)) *x *= v_scale;
                    pmax[jr][t] = fmaxf(pmax[jr][t], *x);
                    svmax[t] = fmaxf(svmax[t], v_scale);
                }
        }
        for (int w = 0; w < 4; w++) { /* xor 1, 2 then 4, 8, 16: the whole warp */
            float a = 0;
            for (int l = 0; l < 32; l++) a = fmaxf(a, svmax[32 * w + l]);
            for (int l = 0; l < 32; l++) svmax[32 * w + l] = a;
            sm_wf32(img, o_rsv + 4 * w, a);
        }
        for (int jr = 0; jr < RPT; jr++) {
            warp_red(pmax[jr], 1);
            for (int t = 0; t < T; t++) if (t % 32 < 4) sm_wf32(img, o_rp + 4 * ((t / 32) * NR + row_of(t, jr)), pmax[jr][t]);
        }
        /* barrier */
        for (int t = 0; t < T; t++) {
            float svm = 0;
            for (int w = 0; w < 4; w++) svm = fmaxf(svm, sm_f32(img, o_rsv + 4 * w));
            for (int jr = 0; jr < RPT; jr++) {
                const int c = row_of(t, jr);
                float pm = 0;
                for (int w = 0; w < 4; w++) pm = fmaxf(pm, sm_f32(img, o_rp + 4 * (w * NR + c)));
                sp[t][jr] = dec_p_scale(pm, svm);
            }
        }
        for (int t = 0; t < T; t++)
            for (int h = 0; h < 2; h++)
                for (int i = 0; i < NH; i++) {
                    int r, c;
                    wgmma_acc_map(t, i, &r, &c);
                    img[oP + smem_tile_offset(&tp, c, 64 * h + r)] = e4m3_encode(s[h * T * NH + t * NH + i] / sp[t][jr_of(i)], 1);
                }
        for (int t = 0; t < T; t++) {
            for (int jr = 0; jr < RPT; jr++) { alpha[t][jr] *= u_i[t][jr] / sp[t][jr]; u_i[t][jr] = sp[t][jr]; }
            for (int dm = 0; dm < DM; dm++)
                for (int i = 0; i < NH; i++) o[dm * T * NH + t * NH + i] *= alpha[t][jr_of(i)];
        }
        /* 2e */
        for (int dm = 0; dm < DM; dm++)
            for (int k = 0; k < DEC_BN; k += 32) {
                uint64_t vdesc = v_mn ? smem_tile_desc_sm90(&tv_mn, oVT, g_fix_fg20 ? 0 : 64 * dm, k) : smem_tile_desc_sm90(&tvt, oVT, 64 * dm, k);
                if (emu_wgmma_ss(o + dm * T * NH, &im, vdesc, smem_tile_desc_sm90(&tp, oP, 0, k), NR, MMA_KIND_F8F6F4, FMT_E4M3, 0, 0, 1, &st)) {
                    printf("emu: %s\n", st.msg); return 1; }
            }
    }
    /* 3 */
    static float part[8][T];
    for (int jr = 0; jr < RPT; jr++) {
        for (int t = 0; t < T; t++) part[jr][t] = l_i[t][jr];
        warp_red(part[jr], 0);
        for (int t = 0; t < T; t++) if (t % 32 < 4) sm_wf32(img, o_rmax + 4 * ((t / 32) * NR + row_of(t, jr)), part[jr][t]);
    }
    static float fin[T][8];
    for (int t = 0; t < T; t++)
        for (int jr = 0; jr < RPT; jr++) {
            const int c = row_of(t, jr);
            l_i[t][jr] = sm_f32(img, o_rmax + 4 * c) + sm_f32(img, o_rmax + 4 * (NR + c)) + sm_f32(img, o_rmax + 4 * (2 * NR + c)) +
                         sm_f32(img, o_rmax + 4 * (3 * NR + c));
            fin[t][jr] = l_i[t][jr] > 0 ? u_i[t][jr] / l_i[t][jr] : 0.0f;
            if (p->faults & DEC_FAULT_V_SCALE_ON_O_ROWS) fin[t][jr] *= sm_f32(img, o_sv + 4 * c);
        }
    const int split_out = p->splits > 1;
    for (int t = 0; t < T; t++)
        for (int dm = 0; dm < DM; dm++)
            for (int i = 0; i < NH; i++) {
                int r, c;
                wgmma_acc_map(t, i, &r, &c);
                const int jr = jr_of(i);
                if (m0 + c >= M) continue;
                const int64_t orow = (((int64_t)b * p->sq + qi[t][jr]) * p->hq + qh[t][jr]) * D + 64 * dm + r;
                const float x = o[dm * T * NH + t * NH + i] * fin[t][jr];
                if (split_out) p->o_part[(int64_t)split * p->b * p->sq * p->hq * D + orow] = x;
                else p->o[orow] = f32_to_bf16(x);
            }
    for (int t = 0; t < 4; t++)
        for (int jr = 0; jr < RPT; jr++) {
            if (m0 + row_of(t, jr) >= M) continue;
            const float lse = l_i[t][jr] > 0 ? m_i[t][jr] * DEC_LN2 + logf(l_i[t][jr]) : -INFINITY;
            const int64_t li = ((int64_t)b * p->hq + qh[t][jr]) * p->sq + qi[t][jr];
            if (split_out) p->lse_part[(int64_t)split * p->b * p->hq * p->sq + li] = lse;
            else p->lse[li] = lse;
        }
    free(o); free(s);
    return 0;
}

static void merge(const dec_params *p)
{
    const int64_t rows = (int64_t)p->b * p->sq * p->hq, lse_stride = rows, o_stride = rows * p->d;
    for (int64_t row = 0; row < rows; row++) {
        const int b = (int)(row / ((int64_t)p->sq * p->hq)), i = (int)(row / p->hq % p->sq), h = (int)(row % p->hq);
        const int64_t li = ((int64_t)b * p->hq + h) * p->sq + i;
        const float *ls = p->lse_part + li;
        const float m = merge_max_lse(ls, p->splits, lse_stride);
        float wsum = 0.0f;
        for (int s = 0; s < p->splits; s++) wsum += merge_weight(ls[s * lse_stride], m);
        const float inv = wsum > 0.0f ? 1.0f / wsum : 0.0f;
        for (int e = 0; e < p->d; e++)
            p->o[row * p->d + e] = f32_to_bf16(merge_elem(p->o_part + row * p->d + e, o_stride, ls, lse_stride, p->splits, m, inv));
        p->lse[li] = merge_lse(m, wsum);
    }
}

static int rows_for(int hq, int hkv, int sq) { int m = hq / hkv * sq; return m <= 8 ? 8 : m <= 16 ? 16 : 32; }

int main(int argc, char **argv)
{
    fmha_opts o;
    memset(&o, 0, sizeof o);
    o.b = atoi(argv[1]); o.hq = atoi(argv[2]); o.hkv = atoi(argv[3]); o.sq = atoi(argv[4]); o.skv = atoi(argv[5]);
    o.d = atoi(argv[6]); o.page = atoi(argv[7]); o.splits = atoi(argv[8]); o.seed = (uint64_t)atoll(argv[9]);
    o.ragged = argc > 10 ? atoi(argv[10]) : 0;
    if (argc > 11 && argv[11][0] != '-') snprintf(o.seqlens, sizeof o.seqlens, "%s", argv[11]);
    o.fault_bits = argc > 12 ? (unsigned)atoi(argv[12]) : 0;
    g_fix_fg20 = argc > 13 ? atoi(argv[13]) : 0;
    o.backend = BACKEND_EMU; o.init = INIT_RAND; o.check = 1; o.iters = 1;
    const int NR = rows_for(o.hq, o.hkv, o.sq);
    dec_problem dp;
    if (dec_problem_make(&o, NR, 0, &dp)) return 1;
    dec_params *p = &dp.p;
    smem_layout L = dec_smem_layout_make(NR, o.d);
    uint8_t *img = calloc(L.used, 1);
    for (int b = 0; b < p->b; b++)
        for (int hk = 0; hk < p->hkv; hk++)
            for (int x = 0; x < dec_m_tiles(p) * p->splits; x++) {
                int mt = x % dec_m_tiles(p), split = x / dec_m_tiles(p);
                memset(img, 0xA5, L.used);
                if (cta(p, NR, o.d, mt, split, hk, b, img, &L)) return 1;
            }
    if (p->splits > 1) merge(p);
    stage_result r;
    memset(&r, 0, sizeof r);
    dec_check(&o, &dp, &r);
    printf("NR %d mtiles %d splits %d: %s err %.3e\n  %s\n", NR, dec_m_tiles(p), p->splits, r.passed ? "PASS" : "FAIL", r.err, r.detail);
    dec_problem_free(&dp);
    return !r.passed;
}
