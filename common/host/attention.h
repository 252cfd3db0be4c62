/* The host side every attention stage (C and later) shares: the parameters from the options
 * (strides of the chosen layout), the inputs (fresh random bf16, poisoned outputs), the check
 * against the fp64 reference with the FlashAttention-3 error rule, the FLOP count, the dump list
 * and the GPU run. A stage's glue then holds only its rules and its backends.
 *
 * The check (README, "How results are checked", the FlashAttention-3 rule): on every checked row, the kernel's max abs
 * error against the exact fp64 attention must be at most twice the error of a reference that
 * rounds where the kernel rounds (P to bf16 before P V, O to bf16 at the end) plus a floor of
 * 1e-5. NaN/Inf positions must match (a fully masked row is O = 0, never NaN). LSE is checked on
 * its own: within 2e-4 * max(1, |LSE|), and -inf exactly where a row sees no key. Every element
 * of O and LSE must have been written. */
#ifndef FMHA_HOST_ATTENTION_H
#define FMHA_HOST_ATTENTION_H

#include <stddef.h>

#include "attn/fmha_core.h"
#include "host/options.h"
#include "host/runner.h"

typedef struct {
    fmha_params p;            /* host pointers into the buffers below */
    uint16_t *q, *k, *v, *o;  /* bf16 in the layout of o->layout_bshd */
    float *lse;               /* [B, Hq, Sq] */
    size_t nq, nkv, nlse;     /* elements */
    int on_device;            /* a timing run: inputs made on the GPU, host copies never filled */
} attn_problem;

/* The parameters alone (strides of the chosen layout, shape, scale, causal; no buffers). */
void attn_params_for(const fmha_opts *o, fmha_params *p);

/* Parameters, inputs (init mode and seed of the options) and poisoned outputs; for a timing run
 * on a GPU (stage_inputs_on_device) the inputs are made on the device instead. 0, or 1 when out
 * of host memory (message printed). */
int attn_problem_make(const fmha_opts *o, attn_problem *ap);
void attn_problem_free(attn_problem *ap);

/* The rules every attention stage's validate() starts with: D in {64, 128, 256}, Skv >= 1, the
 * stage's CTA SMEM (smem_bytes) within the opt-in limit, the grid within CUDA's limits, and on emu
 * the work within the host model's budget. 0, or 2 with the rule named in err. */
int attn_validate(const fmha_opts *o, const char *stage, uint32_t smem_bytes, char *err, size_t len);

/* Upload, launch with the stage's launcher for o->backend, download, time. 0 or 1. */
int attn_run_gpu(const stage_def *st, const fmha_opts *o, attn_problem *ap, stage_result *r);

/* The check described above; fills r (checked, passed, err, rep, detail). */
void attn_check(const fmha_opts *o, const attn_problem *ap, stage_result *r);

/* FLOPs (4 per visible score pair and head dim element, exactly: causal with Sq != Skv included)
 * and the bytes that must move (Q, K, V read; O, LSE written). */
void attn_counts(const fmha_opts *o, const attn_problem *ap, stage_result *r);

/* --dump: q, k, v, o (bf16 bits, in the tensor layout) and lse. 0 or 1. */
int attn_dump(const fmha_opts *o, const char *stage, const attn_problem *ap);

#endif
