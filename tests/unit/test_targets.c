/* scripts/targets.py (make targets): the issue targets of a bench CSV judged the same way every
 * time. Its --selftest holds hand-made rows against verdicts derived by hand (a row equal to its
 * target meets it, 599.9 against 600 misses, a missing FA4 or flash row named); then the committed
 * run plots/data/h200-2026-12-04b.csv gives the figures notes/stage-f-perf.md tabulated from it
 * (33 of 34 stage F rows; GQA 1.741x, Llama 1.714x cuDNN, MQA 0.793x flash). Skips without python3. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int have_python(void) { return system("python3 -c 'import csv' >/dev/null 2>&1") == 0; }

Test(targets, selftest_passes, .timeout = 60)
{
    if (access("scripts/targets.py", R_OK) != 0)
        cr_skip_test("scripts/targets.py not found: run from the repository root (make test does)");
    if (!have_python()) cr_skip_test("no python3 on PATH");
    int st = system("python3 scripts/targets.py --selftest");
    cr_assert(WIFEXITED(st), "targets.py --selftest did not exit normally (status %d)", st);
    cr_expect_eq(WEXITSTATUS(st), 0, "targets.py --selftest exit %d: see the FAIL lines above", WEXITSTATUS(st));
}

Test(targets, the_committed_run_gives_its_noted_figures, .timeout = 60)
{
    const char *csv = "plots/data/h200-2026-12-04b.csv";
    if (access("scripts/targets.py", R_OK) != 0 || access(csv, R_OK) != 0)
        cr_skip_test("run from the repository root (make test does)");
    if (!have_python()) cr_skip_test("no python3 on PATH");
    FILE *f = popen("python3 scripts/targets.py plots/data/h200-2026-12-04b.csv", "r");
    cr_assert_not_null(f);
    static char out[65536];
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    const int st = pclose(f);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "targets.py exit status %d", st);
    cr_expect_not_null(strstr(out, "33 of 34 rows meet their target"), "stage F's count:\n%s", out);
    cr_expect_not_null(strstr(out, "| B1 Hq64/Hkv8 S8192 D128 | no | 685.8 | 692.3 | 725.5 | 0.945 | 1.0x best | no |"),
                       "the miss, Llama S8k non-causal at 0.945x FA4");
    cr_expect_not_null(strstr(out, "| GQA B64 Hq64 Hkv8 Skv 8k D128 | 0.2816 | cuDNN | 0.4903 | 1.741x | 1.8x | no |"), "GQA");
    cr_expect_not_null(strstr(out, "| Llama B128 Hq32 Hkv8 Skv 4k D128 | 0.2856 | cuDNN | 0.4897 | 1.714x | 1.8x | no |"), "Llama");
    cr_expect_not_null(strstr(out, "| MQA B32 Hq128 Hkv1 Skv 16k D128 | 0.1565 | flash | 0.1242 | 0.793x | 2.5x | no |"), "MQA");
    cr_expect_not_null(strstr(out, "0 of 3 decode rows meet their target"), "decode's count");
}
