/* Stage B (O = P V, identity softmax) problems for the footgun tests FG04-FG08: integer inputs,
 * the emu data flow with or without a PV_FAULT_* switch, an fp64 reference, and the measures the
 * tests assert on (cosine, exact match, poison, NaN). Also the padded SMEM image of one P x V MMA
 * case, for the tests that run a broken descriptor on the emulator and on the H200. */
#ifndef FMHA_TEST_PV_FIXTURE_H
#define FMHA_TEST_PV_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "mma_fixture.h"
#include "stages/B_pv/pv.h"

typedef struct {
    pv_params p;       /* host pointers; p.o is the output */
    uint16_t *q, *k, *v;
    float *qv, *kv, *vv;
    size_t nq, nkv;
} pv_problem;

/* Q, K, V integers in [-1, 1] with stage B's scale (1/8 for D = 64, 1/16 for D = 128): S, P and
 * every partial sum of P V are exact in f32, so the fixed flow must match the reference exactly. */
void pv_problem_make(pv_problem *pp, int b, int h, int sq, int skv, int d, uint64_t seed);
void pv_problem_free(pv_problem *pp);

/* Poison O, run stage B's emu flow with `faults`; returns pv_emu_run's code (err filled on 1). */
int pv_problem_run(pv_problem *pp, unsigned faults, char *err, int errlen);

/* fp64 O with P = bf16(scale * S) as stage B rounds it; key_of (NULL: identity) says which key's P
 * multiplies V row j: O[r][c] = sum_j P[r][key_of[j]] V[j][c]. ref has b*h*sq*d entries. */
void pv_problem_reference(const pv_problem *pp, const int *key_of, double *ref);

/* Measures of got (f32) against ref (fp64). */
double cosine_f32(const float *got, const double *ref, size_t n);  /* NaN if got holds a NaN */
size_t count_mismatch(const float *got, const double *ref, size_t n); /* (double)got != ref */
size_t count_nan(const float *got, size_t n);
size_t count_bits(const float *got, size_t n, uint32_t bits);      /* e.g. the poison pattern */
double cosine_f64(const double *got, const double *ref, size_t n);

/* An mma_case (tests/support/mma_fixture.h) whose image is followed by `pad` zero bytes, so a
 * broken descriptor that reads past the last tile stays inside the image on the emulator and in
 * the conformance kernel's SMEM alike. Replaces c->img and c->bytes. */
void mma_case_pad(mma_case *c, uint32_t pad);

#endif
