#include "pv_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/bf16.h"
#include "host/init.h"
#include "host/rng.h"

void pv_problem_make(pv_problem *pp, int b, int h, int sq, int skv, int d, uint64_t seed)
{
    memset(pp, 0, sizeof *pp);
    pp->nq = (size_t)b * h * sq * d;
    pp->nkv = (size_t)b * h * skv * d;
    pp->q = malloc(pp->nq * 2); pp->k = malloc(pp->nkv * 2); pp->v = malloc(pp->nkv * 2);
    pp->qv = malloc(pp->nq * 4); pp->kv = malloc(pp->nkv * 4); pp->vv = malloc(pp->nkv * 4);
    float *o = malloc(pp->nq * 4);
    if (!pp->q || !pp->k || !pp->v || !pp->qv || !pp->kv || !pp->vv || !o) abort();
    rng_t r;
    rng_seed(&r, seed);
    init_bf16(pp->q, pp->qv, pp->nq, INIT_INT, &r, -1, 1);
    init_bf16(pp->k, pp->kv, pp->nkv, INIT_INT, &r, -1, 1);
    init_bf16(pp->v, pp->vv, pp->nkv, INIT_INT, &r, -1, 1);
    pv_params p = {pp->q, pp->k, pp->v, o, b, h, sq, skv, d, d == 64 ? 0.125f : 0.0625f, NULL};
    pp->p = p;
}

void pv_problem_free(pv_problem *pp)
{
    free(pp->q); free(pp->k); free(pp->v); free(pp->qv); free(pp->kv); free(pp->vv); free(pp->p.o);
    memset(pp, 0, sizeof *pp);
}

int pv_problem_run(pv_problem *pp, unsigned faults, char *err, int errlen)
{
    poison_f32(pp->p.o, pp->nq);
    return pv_emu_run(&pp->p, faults, err, errlen);
}

void pv_problem_reference(const pv_problem *pp, const int *key_of, double *ref)
{
    const pv_params *p = &pp->p;
    const int d = p->d, skv = p->skv;
    double *prow = malloc(sizeof(double) * (size_t)skv);
    if (!prow) abort();
    for (int bh = 0; bh < p->b * p->h; bh++)
        for (int i = 0; i < p->sq; i++) {
            const float *qr = pp->qv + ((size_t)bh * p->sq + i) * d;
            for (int j = 0; j < skv; j++) {
                const float *kr = pp->kv + ((size_t)bh * skv + j) * d;
                double s = 0;
                for (int c = 0; c < d; c++) s += (double)qr[c] * kr[c];
                prow[j] = bf16_round((float)s * p->scale);
            }
            double *o = ref + ((size_t)bh * p->sq + i) * d;
            for (int c = 0; c < d; c++) o[c] = 0;
            for (int j = 0; j < skv; j++) {
                const float *vr = pp->vv + ((size_t)bh * skv + j) * d;
                const double pj = prow[key_of ? key_of[j] : j];
                for (int c = 0; c < d; c++) o[c] += pj * vr[c];
            }
        }
    free(prow);
}

double cosine_f32(const float *got, const double *ref, size_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        ab += got[i] * ref[i];
        aa += (double)got[i] * got[i];
        bb += ref[i] * ref[i];
    }
    return ab / sqrt(aa * bb);
}

double cosine_f64(const double *got, const double *ref, size_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        ab += got[i] * ref[i];
        aa += got[i] * got[i];
        bb += ref[i] * ref[i];
    }
    return ab / sqrt(aa * bb);
}

size_t count_mismatch(const float *got, const double *ref, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += (double)got[i] != ref[i];
    return bad;
}

size_t count_nan(const float *got, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += isnan(got[i]) != 0;
    return c;
}

size_t count_bits(const float *got, size_t n, uint32_t bits)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += f32_bits(got[i]) == bits;
    return c;
}

void mma_case_pad(mma_case *c, uint32_t pad)
{
    uint8_t *img = calloc((size_t)c->bytes + pad, 1);
    if (!img) abort();
    memcpy(img, c->img, c->bytes);
    free(c->img);
    c->img = img;
    c->bytes += pad;
}
