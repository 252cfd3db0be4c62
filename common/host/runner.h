/* The stage runner: every stage program is `return stage_main(&stage_X, argc, argv);` (DESIGN.md 4).
 *
 * stage_main parses and validates the flags (exit 2 with a message naming the flag and the rule),
 * picks the backend (exit 77 with the reason when it cannot run here), calls the stage's run(),
 * appends a CSV row when asked, and prints the contract's last line:
 *   [OK] stage=A backend=sm90 b=.. hq=.. sq=.. skv=.. d=.. err=.. time_ms=.. tflops=.. gbps=..
 * or [FAIL] / [SKIP] with the reason. It never prints a failure and exits 0. */
#ifndef FMHA_RUNNER_H
#define FMHA_RUNNER_H

#include <stddef.h>

#include "host/options.h"
#include "host/verify.h"

typedef struct {
    int checked;        /* 1 if the result was compared with the reference */
    int passed;         /* the stage's verdict (meaningful when checked) */
    double err;         /* headline error for the last line (max abs error) */
    verify_report rep;  /* full comparison, for the detail line */
    double time_ms;     /* median; < 0 when not timed */
    double time_min_ms;
    double flops;       /* counted as the stage defines (e.g. 4*B*H*Sq*Skv*D for attention) */
    double bytes;       /* minimum bytes that must move through device memory */
    char detail[1024];  /* one line printed before the verdict (verify_summary, notes) */
} stage_result;

typedef struct {
    const char *letter;     /* "A" */
    const char *name;       /* "A_qk" */
    const char *title;      /* one line for --help and the milestone table */
    unsigned accepts;       /* OPT_* bits */
    unsigned backends;      /* BACKEND_BIT(...) of the implemented backends */
    fmha_opts defaults;
    /* Stage-specific shape rules: 0, or 2 with a message naming the flag and the rule. The backend
     * is already resolved (some rules differ between emu and the GPUs). */
    int (*validate)(const fmha_opts *o, char *err, size_t len);
    /* Run on o->backend, verify when o->check, time when a GPU backend and o->iters > 0.
     * Returns 0 when it ran (verdict in res->passed), 1 on a CUDA or I/O error. */
    int (*run)(const fmha_opts *o, stage_result *res);
} stage_def;

int stage_main(const stage_def *st, int argc, char **argv);

/* Write one array to <o->dump>/<stage>_<name>.npy when --dump was given (creates the folder).
 * Returns 0 on success or when no dump was asked for. */
int runner_dump(const fmha_opts *o, const char *stage, const char *name, const char *descr,
                const int *shape, int rank, const void *data, size_t elem_bytes);

#endif
