/* scripts/sass_check.sh's order rule "A>>B>>C>>F" on hand-written listings (no cuobjdump needed):
 * stage F's overlap must run exponentials (B) between the wait for S_j (A) and the wait for
 * P_{j-1} V_{j-1} (C). The listing with the wait hoisted above them, which ptxas produced before
 * fmha_sm90.cu's loop kept it in place, must fail, and so must a checked function without the
 * pair; functions outside F are not looked at. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const RULE = "sm_90a DEPBAR\\.LE[[:space:]]gsb0,[[:space:]]0x1>>MUFU\\.EX2>>DEPBAR\\.LE[[:space:]]gsb0,"
                                "[[:space:]]0x0>>kernelILi[0-9]+ELb1E the overlap's softmax under its own P V\n";

/* A listing with one function of each name; `between` goes between the two waits. */
static void write_listing(const char *path, const char *fn_checked, const char *between, const char *fn_other,
                          const char *other_between)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "cannot write %s", path);
    fprintf(f, "\t\tFunction : %s\n", fn_checked);
    fprintf(f, "        /*0100*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n%s", between);
    fprintf(f, "        /*0200*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n");
    fprintf(f, "\t\tFunction : %s\n", fn_other);
    fprintf(f, "        /*0100*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n%s", other_between);
    fprintf(f, "        /*0200*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n");
    fclose(f);
}

static int check(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "SASS_DIR=%s SASS_EXPECT=%s/expect bash scripts/sass_check.sh build/bin/stage_Z > %s/out 2>&1", dir,
             dir, dir);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(sass_order, the_hoisted_wait_fails_and_the_kept_one_passes)
{
    if (access("scripts/sass_check.sh", R_OK) != 0) cr_skip_test("scripts/sass_check.sh not found: run from the repository root");
    char dir[] = "/tmp/sass_order_XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/expect", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL);
    fputs(RULE, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/stage_Z.sm_100a.sass", dir); /* the script wants both listings */
    write_listing(path, "a", "", "b", "");
    snprintf(path, sizeof path, "%s/stage_Z.sm_90a.sass", dir);
    const char *mufu = "        /*0180*/                   MUFU.EX2 R3, R4 ;\n";
    const char *max = "        /*0180*/                   FMNMX R3, R4, R5, !PT ;\n";

    /* kept: an exponential between the waits in the checked function; the other (WS = 0) has none */
    write_listing(path, "_Z11fmha_kernelILi128ELb1ELb1ELb1ELi2EEv13fmha_tma_args", mufu,
                  "_Z11fmha_kernelILi128ELb0ELb0ELb1ELi2EEv13fmha_tma_args", max);
    cr_expect_eq(check(dir), 0, "an exponential between the waits: in order");

    /* hoisted: the wait for P V right after the wait for S, only the max between */
    write_listing(path, "_Z11fmha_kernelILi128ELb1ELb1ELb1ELi2EEv13fmha_tma_args", max,
                  "_Z11fmha_kernelILi128ELb0ELb0ELb1ELi2EEv13fmha_tma_args", mufu);
    cr_expect_eq(check(dir), 1, "no exponential between the waits: out of order");

    /* two checked functions, one in order and one with no pair at all: the second one fails it */
    {
        FILE *g = fopen(path, "w");
        cr_assert(g != NULL);
        fprintf(g, "\t\tFunction : _Z11fmha_kernelILi128ELb1ELb1ELb1ELi2EEv13fmha_tma_args\n");
        fprintf(g, "        /*0100*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n%s", mufu);
        fprintf(g, "        /*0200*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n");
        fprintf(g, "\t\tFunction : _Z11fmha_kernelILi64ELb1ELb1ELb1ELi2EEv13fmha_tma_args\n");
        fprintf(g, "        /*0100*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n");
        fclose(g);
    }
    cr_expect_eq(check(dir), 1, "a checked function without an A..C pair");

    /* no function the rule looks at: nothing shows the order, which is a failure too */
    write_listing(path, "_Z11fmha_kernelILi128ELb0ELb1ELb1ELi2EEv13fmha_tma_args", mufu,
                  "_Z11fmha_kernelILi128ELb0ELb0ELb1ELi2EEv13fmha_tma_args", mufu);
    cr_expect_eq(check(dir), 1, "no A..C pair in a checked function");

    snprintf(path, sizeof path, "rm -rf %s", dir);
    cr_expect_eq(system(path), 0);
}
