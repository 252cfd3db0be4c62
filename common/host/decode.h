/* The host side of the FP8 paged decode (stage D): the sequence lengths from the flags, the rules
 * checked before any launch, the inputs (fresh bf16 queries, a paged e4m3 cache with per-token
 * scales in a shuffled block table, poisoned outputs), the GPU run, the check and the counts.
 *
 * The check: on every checked query row, the kernel's max abs error against the fp64 attention
 * over the dequantised cache must be at most twice the error of the host reference that rounds
 * where the kernels round (Q and P to e4m3 with their scales, tile by tile: common/host/
 * fp8_attention.h; O to bf16) plus a floor of 1e-5. LSE: within twice that reference's worst LSE
 * error plus 2e-4 max(1, |LSE|), and -inf exactly where a row sees no key. Every element of O and
 * LSE must have been written. A reference that is not finite means the cache holds NaN codes
 * (footgun FG19): the check fails and says so. */
#ifndef FMHA_HOST_DECODE_H
#define FMHA_HOST_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "attn/decode_core.h"
#include "host/options.h"
#include "host/paged_kv.h"
#include "host/runner.h"

typedef struct {
    dec_params p;           /* host pointers into the buffers below */
    paged_kv c;             /* lengths and block table always; codes and scales on the host unless on_device */
    uint16_t *q, *o;        /* [B, Sq, Hq, D] bf16 */
    float *lse;             /* [B, Hq, Sq] */
    float *o_part, *lse_part; /* split partials (host copies for emu; the GPU keeps its own) */
    size_t nq, nlse, npart;
    int on_device;          /* a timing run: queries and cache made on the GPU */
    int splits_auto;        /* the split count was chosen by --splits auto */
} dec_problem;

/* The lengths of the B sequences: --seqlens, else --skv each, or with --ragged drawn in [1, --skv]
 * (the first is 1 and the last --skv when B > 1). 0, or 2 with the rule named. */
int dec_lengths(const fmha_opts *o, int32_t *lens, char *err, size_t len);

/* The rules stage D checks before any launch: D in {64, 128, 256}, the lengths (dec_lengths), the
 * page size, the block table (paged_kv_validate on the table the run will build; the FG18 variant
 * corrupts one entry after this check, so the gather meets it), --splits <= DEC_MAX_SPLITS, the
 * grid, the SMEM, and the emu budget. 0, or 2 with the rule named. */
int dec_validate(const fmha_opts *o, const char *stage, int bm, uint32_t smem_bytes, char *err, size_t len);

/* The gather a run takes: --kv-tma 0 or 1 as given, auto resolved (dec_kv_tma_resolve). */
int dec_kv_tma_of(const fmha_opts *o);

/* The split count a run uses: --splits N, or for auto dec_auto_splits over `slots` resident CTAs. */
int dec_splits_for(const fmha_opts *o, const dec_params *shape, int slots);

/* Parameters, the cache and the inputs. bm: the backend's packed rows per CTA; slots: resident
 * CTAs for --splits auto. 0, or 1 when out of host memory (message printed). */
int dec_problem_make(const fmha_opts *o, int bm, int slots, dec_problem *dp);
void dec_problem_free(dec_problem *dp);

/* Upload (or make on the device), launch with the stage's launcher, download, time. 0 or 1. */
int dec_run_gpu(const stage_def *st, const fmha_opts *o, dec_problem *dp, stage_result *r);

/* The check described above; fills r. */
void dec_check(const fmha_opts *o, const dec_problem *dp, stage_result *r);

/* FLOPs (4 D per visible (query row, head, key)) and the bytes that must move: e4m3 K and V of
 * every token and KV head, their scales, the block-table entries in use, the lengths, Q read, O
 * and LSE written. */
void dec_counts(const fmha_opts *o, const dec_problem *dp, stage_result *r);

/* --dump: q, the cache (codes, scales, table, lengths), o, lse. 0 or 1. */
int dec_dump(const fmha_opts *o, const char *stage, const dec_problem *dp);

#endif
