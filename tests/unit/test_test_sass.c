/* scripts/test_sass.sh, make test's last step, on hand-written listings (SASS_DIR, no cuobjdump):
 * rules that hold pass with one summary line, a missing instruction fails make test and shows the
 * rule, a stack rule holds a kernel's stack frame (its spills) to a budget, and a machine with no cuobjdump at all is told the SASS was not checked without failing
 * (as the GPU suites skip without a GPU). */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Runs `env` scripts/test_sass.sh build/bin/stage_Z from `cwd`; its output lands in dir/out. */
static int run_in(const char *cwd, const char *env, const char *dir)
{
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "cd %s && SASS_LOG=%s/sass.log %s bash scripts/test_sass.sh build/bin/stage_Z > %s/out 2>&1",
             cwd, dir, env, dir);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int output_has(const char *dir, const char *needle)
{
    char path[PATH_MAX], buf[8192];
    snprintf(path, sizeof path, "%s/out", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

static void rm_rf(const char *dir)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

static const char *const LISTING = "\t\tFunction : _Z6kernelv\n"
                                   "        /*0100*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ ;\n"
                                   "        /*0110*/                   MUFU.EX2 R3, R4 ;\n";

/* A fresh folder of saved listings for stage Z (both archs: LISTING), and the environment that
 * points make sass at it and at dir/expect for the rules. */
static void fixture(char *dir, char *env, size_t env_len)
{
    if (access("scripts/test_sass.sh", R_OK) != 0) cr_skip_test("scripts/test_sass.sh not found: run from the repository root");
    cr_assert(mkdtemp(dir) != NULL);
    write_file(dir, "stage_Z.sm_90a.sass", LISTING);
    write_file(dir, "stage_Z.sm_100a.sass", LISTING);
    snprintf(env, env_len, "SASS_DIR=%s SASS_EXPECT=%s/expect", dir, dir);
}

Test(test_sass, rules_that_hold_pass_and_a_missing_instruction_fails)
{
    char dir[] = "/tmp/test_sass_XXXXXX", env[2 * PATH_MAX];
    fixture(dir, env, sizeof env);

    write_file(dir, "expect", "sm_90a HGMMA\\.64x the S MMA\nsm_100a MUFU\\.EX2 exponentials\nsm_90a !LDG\\.E\\.128 no thread copies\n");
    cr_expect_eq(run_in(".", env, dir), 0, "three rules that hold");
    cr_expect(output_has(dir, "sass: all 3 rules of 1 stages hold"), "the summary line counts the rules");
    char log[PATH_MAX + 16];
    snprintf(log, sizeof log, "%s/sass.log", dir);
    cr_expect(access(log, R_OK) == 0, "the table went to SASS_LOG, not build/reports");

    write_file(dir, "expect", "sm_90a HGMMA\\.64x the S MMA\nsm_100a UTCHMMA tcgen05.mma\n");
    cr_expect_eq(run_in(".", env, dir), 1, "a missing instruction fails make test");
    cr_expect(output_has(dir, "FAILED") && output_has(dir, "UTCHMMA") && output_has(dir, "MISSING"),
              "the failing rule is shown");
    cr_expect(!output_has(dir, "HGMMA"), "the rule that holds is not shown among the failures");

    write_file(dir, "expect", "sm_90a !MUFU\\.EX2 no exponentials\n");
    cr_expect_eq(run_in(".", env, dir), 1, "an instruction that must be absent fails it too");
    cr_expect(output_has(dir, "PRESENT"), "the forbidden instruction is shown");
    rm_rf(dir);
}

/* cuobjdump --dump-resource-usage's lines for two functions, one with a stack frame (spills) */
static const char *const RESOURCES = "\nFatbin elf code:\n================\narch = sm_90a\n"
                                     " Function _Z6kernelv:\n"
                                     "  REG:168 STACK:0 SHARED:1024 LOCAL:0 CONSTANT[0]:1152 TEXTURE:0\n"
                                     " Function _Z5spillv:\n"
                                     "  REG:255 STACK:16 SHARED:0 LOCAL:0 CONSTANT[0]:900 TEXTURE:0\n";

Test(test_sass, stack_rules_pass_within_the_budget_and_fail_over_it)
{
    char dir[] = "/tmp/test_sass_XXXXXX", env[2 * PATH_MAX];
    fixture(dir, env, sizeof env);
    write_file(dir, "stage_Z.sm_90a.res", RESOURCES);

    write_file(dir, "expect", "sm_90a stack<=0:_Z6kernel no spill\nsm_90a stack<=16:_Z[56] both within 16 bytes\n");
    cr_expect_eq(run_in(".", env, dir), 0, "frames within their budgets");
    cr_expect(output_has(dir, "sass: all 2 rules of 1 stages hold"), "both stack rules count");

    write_file(dir, "expect", "sm_90a stack<=8:_Z[56] within 8 bytes\n");
    cr_expect_eq(run_in(".", env, dir), 1, "a frame over its budget fails make test");
    cr_expect(output_has(dir, "OVER BUDGET") && output_has(dir, "16 bytes") && output_has(dir, "_Z5spillv"),
              "the failure names the function and its frame");

    write_file(dir, "expect", "sm_90a stack<=0:_Z9nosuchfnv no such kernel\n");
    cr_expect_eq(run_in(".", env, dir), 1, "a rule no function matches fails rather than passing empty");
    cr_expect(output_has(dir, "MISSING") && output_has(dir, "no function matches"), "and says so");

    write_file(dir, "expect", "sm_100a stack<=0:_Z6kernel no resource listing for this arch\n");
    cr_expect_eq(run_in(".", env, dir), 1, "no resource usage saved for the arch: not checked, so not passed");
    cr_expect(output_has(dir, "MISSING") && output_has(dir, "stage_Z.sm_100a.res"), "and the missing listing is named");

    /* the pattern reaches awk as a regex: an escaped dot is a dot, not any character */
    write_file(dir, "expect", "sm_90a stack<=0:_Z6kerne.v any character\n");
    cr_expect_eq(run_in(".", env, dir), 0, "kerne.v matches _Z6kernelv");
    write_file(dir, "expect", "sm_90a stack<=0:_Z6kerne\\.v a dot only\n");
    cr_expect_eq(run_in(".", env, dir), 1, "kerne\\.v does not match _Z6kernelv");
    rm_rf(dir);
}

Test(test_sass, no_cuobjdump_says_not_checked_and_passes)
{
    if (access("scripts/test_sass.sh", R_OK) != 0) cr_skip_test("scripts/test_sass.sh not found: run from the repository root");
    if (access("/usr/bin/cuobjdump", X_OK) == 0 || access("/bin/cuobjdump", X_OK) == 0)
        cr_skip_test("cuobjdump in /usr/bin: no PATH here hides it");
    char dir[] = "/tmp/test_sass_XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    /* a work tree of the scripts alone: no .tools/ with a fetched cuobjdump in it */
    char repo[PATH_MAX], cmd[3 * PATH_MAX];
    cr_assert(getcwd(repo, sizeof repo) != NULL);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/tree && ln -s %s/scripts %s/tree/scripts", dir, repo, dir);
    cr_assert_eq(system(cmd), 0);
    char cwd[PATH_MAX + 8];
    snprintf(cwd, sizeof cwd, "%s/tree", dir);
    cr_expect_eq(run_in(cwd, "PATH=/usr/bin:/bin CUDA_HOME=/nonexistent SASS_DIR= SASS_EXPECT=", dir), 0, "no cuobjdump: not a failure");
    cr_expect(output_has(dir, "sass: not checked") && output_has(dir, "cuobjdump not found"),
              "the step says the SASS was not checked, and why");
    rm_rf(dir);
}
