/* Every footgun variant a stage program can run (--fault NAME, `stage_X --faults`), on the host
 * model at the shape its table names: the broken run must exit 1 with a last line that names the
 * fault and a symptom it observed (not "none"); the same flags without the fault must pass. The
 * faults' own tests (tests/footguns/) assert the exact symptoms; this checks the program contract. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "host/backend.h"
#include "stage_run.h"

extern const stage_def stage_A, stage_B, stage_C, stage_D, stage_E, stage_F;

static void every_fault(const stage_def *st, int min_faults)
{
    char prog[16], args[600];
    snprintf(prog, sizeof prog, "stage_%s", st->letter);
    cr_expect_geq(st->nfaults, min_faults, "stage %s lists its faults", st->letter);
    for (int i = 0; i < st->nfaults; i++) {
        const stage_fault *f = &st->faults[i];
        if (!(f->backends & BACKEND_BIT(BACKEND_EMU))) continue; /* a GPU-only variant: its footgun test runs it */
        char log[64];
        snprintf(log, sizeof log, "build/fault_%s_%d.log", st->letter, i); /* tests run in parallel processes */
        snprintf(args, sizeof args, "--backend emu %s --fault %s > %s 2>&1; r=$?; tail -n 1 %s | "
                 "grep -q '^\\[FAIL\\] .*fault=%s (%s) symptom: ' && ! tail -n 1 %s | grep -q 'symptom: none' "
                 "&& exit $r; exit 99", f->demo, f->name, log, log, f->name, f->fg, log);
        const int broken = program_exit_code(prog, args);
        fprintf(stderr, "stage %s --fault %s (%s): exit %d\n", st->letter, f->name, f->fg, broken);
        cr_expect_eq(broken, 1, "stage %s --fault %s: exit 1 and a named symptom on the last line (got %d)", st->letter,
                     f->name, broken);
        snprintf(args, sizeof args, "--backend emu %s > /dev/null 2>&1", f->demo);
        cr_expect_eq(program_exit_code(prog, args), 0, "stage %s without the fault passes at %s", st->letter, f->demo);
    }
}

Test(stage_faults, stage_a) { every_fault(&stage_A, 2); }
Test(stage_faults, stage_b) { every_fault(&stage_B, 9); }
Test(stage_faults, stage_c) { every_fault(&stage_C, 3); }
Test(stage_faults, stage_d) { every_fault(&stage_D, 7); }
Test(stage_faults, stage_e) { every_fault(&stage_E, 10); }
Test(stage_faults, stage_f) { every_fault(&stage_F, 4); }

Test(stage_faults, unknown_fault_is_a_bad_argument)
{
    cr_expect_eq(program_exit_code("stage_C", "--fault no-such-fault > /dev/null 2>&1"), 2);
    cr_expect_eq(program_exit_code("stage_C", "--fault one-softmax-warp --backend sm90 > /dev/null 2>&1"), 2,
                 "an emu-only fault on sm90 is refused, not skipped");
    cr_expect_eq(program_exit_code("stage_B", "--faults | grep -c FG0 | grep -q 9"), 0, "stage B lists nine faults");
}
