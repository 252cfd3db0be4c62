#include "stage_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int stage_run(const stage_def *st, const char *args)
{
    char buf[1024];
    char *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", args);
    argv[argc++] = (char *)st->name;
    for (char *tok = strtok(buf, " "); tok && argc < 63; tok = strtok(NULL, " ")) argv[argc++] = tok;
    argv[argc] = NULL;
    fflush(stdout);
    int rc = stage_main(st, argc, argv);
    fflush(stdout);
    return rc;
}

int stage_run_counted(const stage_def *st, const char *args)
{
    int rc = stage_run(st, args);
    if (rc != 0) fprintf(stderr, "FAILED (exit %d): %s %s\n", rc, st->name, args);
    return rc != 0;
}

int stage_table_run(const stage_def *st, shape_suite suite, const char *backend, const char *filter,
                    const char *extra, int *runs)
{
    char row[512], args[768];
    int failed = 0;
    *runs = 0;
    for (int i = 0; st->shapes && st->shapes(suite, i, row, sizeof row); i++) {
        if (filter && !strstr(row, filter)) continue;
        snprintf(args, sizeof args, "--backend %s %s %s", backend, row, extra ? extra : "");
        (*runs)++;
        failed += stage_run_counted(st, args);
    }
    return failed;
}

static int too_few(const stage_def *st, shape_suite suite, int runs, int min_rows)
{
    if (runs >= min_rows) return 0;
    fprintf(stderr, "FAILED: stage %s's %s suite has %d rows, fewer than %d\n", st->letter, shape_suite_name(suite), runs,
            min_rows);
    return 1;
}

int gpu_table_failures(const stage_def *st, const char *backend, int d, int min_rows)
{
    const shape_suite suite = getenv("FMHA_TEST_QUICK") ? SUITE_GPU_QUICK : SUITE_GPU;
    char filter[32];
    snprintf(filter, sizeof filter, "--d %d ", d);
    int runs;
    const int failed = stage_table_run(st, suite, backend, filter, "--iters 0", &runs);
    return failed + too_few(st, suite, runs, min_rows);
}

int emu_table_failures(const stage_def *st, int min_rows)
{
    int runs;
    const int failed = stage_table_run(st, SUITE_EMU, "emu", NULL, "", &runs);
    return failed + too_few(st, SUITE_EMU, runs, min_rows);
}

int program_exit_code(const char *program, const char *args)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "build/bin/%s %s", program, args);
    fflush(stdout);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

int fault_demo_pair(const char *program, const char *backend, const char *fault, const char *args, const char *symptom)
{
    char cmd[1400], log[128];
    snprintf(log, sizeof log, "build/fault_demo_%s_%s_%s.log", program, backend, fault); /* tests run in parallel */
    snprintf(cmd, sizeof cmd, "--backend %s --fault %s %s > %s 2>&1; r=$?; tail -n 1 %s >&2; "
             "[ $r -eq 1 ] && tail -n 1 %s | grep -Eq '%s'", backend, fault, args, log, log, log, symptom);
    const int broken = program_exit_code(program, cmd);
    snprintf(cmd, sizeof cmd, "--backend %s %s > %s 2>&1; r=$?; tail -n 2 %s >&2; exit $r", backend, args, log, log);
    const int fixed = program_exit_code(program, cmd);
    fprintf(stderr, "%s --fault %s on %s: the broken run %s; the fixed run exits %d\n", program, fault, backend,
            broken == 0 ? "shows the symptom" : "does NOT show the symptom", fixed);
    return broken != 0 || fixed != 0;
}
