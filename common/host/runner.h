/* The stage runner: every stage program is `return stage_main(&stage_X, argc, argv);` (README, "The stage program contract").
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
    size_t unwritten;   /* output elements still poisoned (result_note_unwritten) */
    char model_msg[320]; /* the host model's message when it refused a step (a fault's symptom) */
    char symptom[200];   /* the stage's own words for a failed check that the figures miss (a fault's symptom) */
} stage_result;

/* A footgun's broken variant that a stage program runs with --fault NAME. */
typedef struct {
    const char *name;   /* "no-mask-guard" */
    const char *fg;     /* "FG14" */
    unsigned bits;      /* the stage's own switches (o->fault_bits) */
    unsigned backends;  /* BACKEND_BIT(...) where the variant exists */
    const char *what;   /* one line for --help */
    const char *demo;   /* flags of a shape where the symptom shows (make footgun uses them) */
} stage_fault;

/* A GPU launcher: enqueues one run of the stage's kernel with its own parameter struct (the
 * stage_def knows which type; the runner only copies it). 0, or 1 after printing a CUDA error. */
typedef int (*stage_launch_fn)(const void *params);

/* Shape suites of a stage's one shape table (stage_def.shapes): the GPU tests, their trimmed set
 * under the sanitizers, the emu tests, the benchmark (full and quick), and the benchmark's
 * ablation rows (one shape under each switch setting a stage has: stage F). */
typedef enum { SUITE_GPU = 0, SUITE_GPU_QUICK, SUITE_EMU, SUITE_BENCH, SUITE_BENCH_QUICK, SUITE_ABLATION, SUITE_COUNT } shape_suite;

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
    /* The GPU kernels' launchers, by backend (NULL where the stage has none). */
    stage_launch_fn launch_sm100, launch_sm90;
    /* The stage's shape table: writes the flags of row i of the suite (no --backend) into args and
     * returns 1, or returns 0 past the last row. `stage_X --shapes SUITE` prints them. */
    int (*shapes)(shape_suite suite, int i, char *args, size_t len);
    /* The footgun variants this stage can run (--fault NAME; `stage_X --faults` lists them). */
    const stage_fault *faults;
    int nfaults;
} stage_def;

/* "gpu", "gpu-quick", "emu", "bench", "bench-quick", "ablation"; -1 for an unknown name. */
const char *shape_suite_name(shape_suite s);
int shape_suite_parse(const char *name);

int stage_main(const stage_def *st, int argc, char **argv);

/* Write one array to <o->dump>/<stage>_<name>.npy when --dump was given (creates the folder).
 * Returns 0 on success or when no dump was asked for. */
int runner_dump(const fmha_opts *o, const char *stage, const char *name, const char *descr,
                const int *shape, int rank, const void *data, size_t elem_bytes);

/* One array of a stage's --dump list. */
typedef struct {
    const char *name;  /* file name part: <stage>_<name>.npy */
    const char *descr; /* numpy dtype: "<u2" (bf16 stored as its bits), "<f4" */
    int rank;
    int shape[4];
    const void *data;
    size_t elem_bytes;
} dump_item;

/* runner_dump for every item; 0, or 1 at the first failure. */
int runner_dump_list(const fmha_opts *o, const char *stage, const dump_item *items, int n);

/* An output check found `unwritten` of `total` elements still poisoned: fail the result and say so
 * on the detail line ("; 12 of 4096 elements of O never written"). Nothing when unwritten is 0. */
void result_note_unwritten(stage_result *r, size_t unwritten, size_t total, const char *what);

#endif
