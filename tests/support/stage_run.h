/* Running a stage program from a test: the same stage_main the binary runs, with an argument
 * list, so a test exercises the whole program contract (flags, rules, backend choice, checking,
 * exit code). */
#ifndef FMHA_TEST_STAGE_RUN_H
#define FMHA_TEST_STAGE_RUN_H

#include "host/runner.h"

/* args: one string of space-separated flags, e.g. "--backend emu --sq 256". Returns stage_main's
 * exit code (0 verified, 1 wrong / CUDA error, 2 bad arguments, 77 skipped). */
int stage_run(const stage_def *st, const char *args);

/* stage_run, and on a nonzero exit prints "FAILED (exit N): <stage> <args>" to stderr. Returns 1 if
 * it failed, 0 if it passed: shape tables sum it and assert the total is 0. */
int stage_run_counted(const stage_def *st, const char *args);

/* Every row of the stage's shape table in `suite` whose flags contain `filter` (NULL: all), as
 * "--backend <backend> <row> <extra>"; each failure is printed as by stage_run_counted. Returns the
 * number of failed rows and stores the number run in *runs. */
int stage_table_run(const stage_def *st, shape_suite suite, const char *backend, const char *filter,
                    const char *extra, int *runs);

/* A whole suite of the stage's table, for a test to assert on:
 *   gpu_table_failures  the gpu suite (gpu-quick under FMHA_TEST_QUICK, as the sanitizers run it)
 *                       rows of head dim d on `backend`, untimed;
 *   emu_table_failures  every emu-suite row on the host model.
 * Each returns the number of failed rows (each printed as by stage_run_counted), plus one when the
 * suite has fewer than min_rows rows (a table that lost its rows must not pass). */
int gpu_table_failures(const stage_def *st, const char *backend, int d, int min_rows);
int emu_table_failures(const stage_def *st, int min_rows);

/* Runs build/bin/<program> with args through the shell; returns its exit code (-1 if it could
 * not run). Output goes to the test's log. */
int program_exit_code(const char *program, const char *args);

/* A footgun's two runs through its stage program: `--backend B --fault F ARGS` must exit 1 with a
 * last line matching the extended regex `symptom`, and `--backend B ARGS` must pass (exit 0). Both
 * last lines (the figures of each) go to the test's log. Returns 0 when both hold, 1 otherwise. */
int fault_demo_pair(const char *program, const char *backend, const char *fault, const char *args, const char *symptom);

#endif
