/* The stage program contract: every CLI rejection (exit 2, a message naming the flag and the
 * rule), backend selection (auto, explicit, not implemented, not available = 77), and stage_main's
 * exit code and last line for pass / fail / error. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdarg.h>
#include <string.h>

#include "host/backend.h"
#include "host/cli.h"
#include "host/runner.h"

static fmha_opts defaults(void)
{
    return (fmha_opts){.b = 1, .hq = 4, .hkv = 4, .sq = 128, .skv = 128, .d = 64,
                       .backend = BACKEND_AUTO, .init = INIT_RAND, .seed = 1, .check = 1,
                       .iters = 20, .warmup = 5};
}

static int parse(unsigned accepts, fmha_opts *o, char *err, int argc, ...)
{
    char *argv[32] = {"stage_T"};
    va_list ap;
    va_start(ap, argc);
    for (int i = 1; i < argc; i++) argv[i] = va_arg(ap, char *);
    va_end(ap);
    *o = defaults();
    err[0] = '\0';
    int rc = cli_parse(argc, argv, accepts, o, err, 512);
    if (rc == 0) rc = cli_validate_common(o, err, 512);
    return rc;
}

#define EXPECT_REJECT(needle, ...)                                                            \
    do {                                                                                      \
        fmha_opts o_;                                                                         \
        char e_[512];                                                                         \
        int rc_ = parse(OPT_HKV | OPT_CAUSAL, &o_, e_, __VA_ARGS__);                          \
        cr_expect_eq(rc_, 2, "expected exit 2 for this command line");                        \
        cr_expect(strstr(e_, needle) != NULL, "message '%s' lacks '%s'", e_, needle);         \
    } while (0)

Test(cli, accepts_both_value_forms_and_bare_booleans)
{
    fmha_opts o;
    char e[512];
    cr_assert_eq(parse(OPT_HKV | OPT_CAUSAL, &o, e, 10, "--b=2", "--sq", "64", "--causal", "--hkv", "2",
                       "--backend=emu", "--init", "int"), 0, "%s", e);
    cr_expect(o.b == 2 && o.sq == 64 && o.causal == 1 && o.hkv == 2);
    cr_expect(o.backend == BACKEND_EMU && o.init == INIT_INT);
    cr_assert_eq(parse(OPT_CAUSAL, &o, e, 4, "--causal=0", "--no-check", "--seed=0x10"), 0, "%s", e);
    cr_expect(o.causal == 0 && o.check == 0 && o.seed == 16);
    cr_assert_eq(parse(0, &o, e, 2, "--help"), 0);
    cr_expect(o.help);
}

Test(cli, pipeline_switches_take_auto)
{
    fmha_opts o;
    char e[512];
    cr_assert_eq(parse(OPT_PIPE, &o, e, 4, "--pingpong", "auto", "--overlap=0"), 0, "%s", e);
    cr_expect(o.pingpong == -1 && o.overlap == 0, "auto is -1, 0 stays 0: %d %d", o.pingpong, o.overlap);
    cr_assert_eq(parse(OPT_PIPE, &o, e, 3, "--overlap", "--pingpong=1"), 0, "%s", e);
    cr_expect(o.overlap == 1 && o.pingpong == 1, "a bare switch is 1: %d %d", o.overlap, o.pingpong);
    cr_expect_eq(parse(OPT_PIPE, &o, e, 2, "--overlap=2"), 2);
    cr_expect(strstr(e, "--overlap: '2' is not auto, 0 or 1") != NULL, "%s", e);
}

Test(cli, rejects_unknown_flag) { EXPECT_REJECT("unknown flag '--bogus'", 2, "--bogus"); }
Test(cli, rejects_missing_value) { EXPECT_REJECT("--sq needs a value", 2, "--sq"); }
Test(cli, rejects_non_integer) { EXPECT_REJECT("--d: 'abc' is not an integer", 3, "--d", "abc"); }
Test(cli, rejects_trailing_garbage) { EXPECT_REJECT("--d: '64x' is not an integer", 2, "--d=64x"); }
Test(cli, rejects_below_minimum) { EXPECT_REJECT("--b=0: must be >= 1", 2, "--b=0"); }
Test(cli, rejects_negative) { EXPECT_REJECT("--sq=-4: must be >= 1", 3, "--sq", "-4"); }
Test(cli, rejects_huge) { EXPECT_REJECT("--skv=99999999: must be <=", 2, "--skv=99999999"); }
Test(cli, rejects_bad_backend) { EXPECT_REJECT("--backend: 'sm80' is not one of", 2, "--backend=sm80"); }
Test(cli, rejects_bad_init) { EXPECT_REJECT("--init: 'zeros' is not one of", 2, "--init=zeros"); }
Test(cli, rejects_bad_bool) { EXPECT_REJECT("--causal: 'yes' is not a boolean", 2, "--causal=yes"); }
Test(cli, rejects_bad_seed) { EXPECT_REJECT("--seed: '-1' is not a non-negative integer", 2, "--seed=-1"); }
Test(cli, rejects_empty_path) { EXPECT_REJECT("--csv: empty path", 2, "--csv="); }
Test(cli, rejects_value_on_no_check) { EXPECT_REJECT("--no-check takes no value", 2, "--no-check=1"); }
Test(cli, rejects_hq_not_multiple_of_hkv)
{
    EXPECT_REJECT("--hq must be a multiple of --hkv", 3, "--hq=6", "--hkv=4");
}
Test(cli, rejects_oversized_tensors)
{
    EXPECT_REJECT("exceed the limit of 2^34 elements", 5, "--b=4096", "--hq=4096", "--sq=4096", "--hkv=1");
}
Test(cli, rejects_flag_the_stage_does_not_take)
{
    fmha_opts o;
    char e[512];
    cr_expect_eq(parse(0, &o, e, 2, "--page=16"), 2);
    cr_expect(strstr(e, "--page: this stage does not support it") != NULL, "%s", e);
    cr_expect_eq(parse(0, &o, e, 2, "--causal"), 2);
    cr_expect_eq(parse(0, &o, e, 2, "--hkv=1"), 2);
}

/* ---- backend selection on described GPUs (no GPU needed) ---- */
static gpu_info gpu(int present, int major, int minor)
{
    gpu_info g = {.present = present, .cc_major = major, .cc_minor = minor};
    strcpy(g.name, present ? "Test GPU" : "");
    strcpy(g.why_absent, present ? "" : "cudaGetDeviceCount: cudaErrorNoDevice");
    return g;
}

Test(backend, auto_picks_by_compute_capability)
{
    unsigned all = BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_SM100) | BACKEND_BIT(BACKEND_EMU);
    char msg[256];
    backend_t b;
    gpu_info none = gpu(0, 0, 0), hopper = gpu(1, 9, 0), blackwell = gpu(1, 10, 0), ampere = gpu(1, 8, 0);
    cr_expect_eq(backend_select(BACKEND_AUTO, all, &none, &b, msg, sizeof msg), 0);
    cr_expect_eq(b, BACKEND_EMU);
    cr_expect_eq(backend_select(BACKEND_AUTO, all, &hopper, &b, msg, sizeof msg), 0);
    cr_expect_eq(b, BACKEND_SM90);
    cr_expect_eq(backend_select(BACKEND_AUTO, all, &blackwell, &b, msg, sizeof msg), 0);
    cr_expect_eq(b, BACKEND_SM100);
    cr_expect_eq(backend_select(BACKEND_AUTO, all, &ampere, &b, msg, sizeof msg), 0);
    cr_expect_eq(b, BACKEND_EMU);
}

Test(backend, explicit_gpu_backend_without_that_gpu_is_a_skip)
{
    unsigned all = BACKEND_BIT(BACKEND_SM90) | BACKEND_BIT(BACKEND_SM100) | BACKEND_BIT(BACKEND_EMU);
    char msg[256];
    backend_t b;
    gpu_info none = gpu(0, 0, 0), hopper = gpu(1, 9, 0), b300 = gpu(1, 10, 3);
    cr_expect_eq(backend_select(BACKEND_SM90, all, &none, &b, msg, sizeof msg), 77);
    cr_expect(strstr(msg, "needs a CC 9.0 GPU") && strstr(msg, "cudaErrorNoDevice"), "%s", msg);
    cr_expect_eq(backend_select(BACKEND_SM100, all, &hopper, &b, msg, sizeof msg), 77);
    cr_expect(strstr(msg, "CC 9.0") != NULL, "%s", msg);
    cr_expect_eq(backend_select(BACKEND_SM100, all, &b300, &b, msg, sizeof msg), 77, "sm_100a code does not load on CC 10.3");
    cr_expect_eq(backend_select(BACKEND_SM90, all, &hopper, &b, msg, sizeof msg), 0);
    cr_expect_eq(b, BACKEND_SM90);
}

Test(backend, backend_the_stage_lacks_is_a_bad_argument)
{
    char msg[256];
    backend_t b;
    gpu_info hopper = gpu(1, 9, 0);
    cr_expect_eq(backend_select(BACKEND_SM90, BACKEND_BIT(BACKEND_EMU), &hopper, &b, msg, sizeof msg), 2);
    cr_expect(strstr(msg, "implements only emu") != NULL, "%s", msg);
}

/* ---- stage_main with a scripted stage ---- */
static int fake_outcome; /* 0 pass, 1 wrong result, 2 run error */

static int fake_validate(const fmha_opts *o, char *err, size_t len)
{
    if (o->d != 64) { snprintf(err, len, "--d=%d: this stage supports only 64", o->d); return 2; }
    return 0;
}

static int fake_run(const fmha_opts *o, stage_result *r)
{
    (void)o;
    if (fake_outcome == 2) return 1;
    r->checked = 1;
    r->passed = fake_outcome == 0;
    r->err = fake_outcome == 0 ? 0.0 : 1.0;
    return 0;
}

static const stage_def fake = {
    .letter = "T", .name = "T_test", .title = "scripted stage for the runner tests",
    .accepts = OPT_CAUSAL, .backends = BACKEND_BIT(BACKEND_EMU),
    .defaults = {.b = 1, .hq = 1, .hkv = 1, .sq = 8, .skv = 8, .d = 64, .backend = BACKEND_AUTO,
                 .check = 1, .iters = 0},
    .validate = fake_validate, .run = fake_run,
};

static char *argv_emu[] = {"stage_T", "--backend", "emu", NULL};

static void last_line(char *buf, size_t len)
{
    fflush(stdout);
    FILE *f = cr_get_redirected_stdout();
    char line[1024];
    buf[0] = '\0';
    while (fgets(line, sizeof line, f)) snprintf(buf, len, "%s", line);
}

Test(runner, pass_is_exit_0_and_ok_line, .init = cr_redirect_stdout)
{
    fake_outcome = 0;
    cr_expect_eq(stage_main(&fake, 3, argv_emu), 0);
    char l[1024];
    last_line(l, sizeof l);
    cr_expect(strncmp(l, "[OK] stage=T backend=emu b=1 hq=1 sq=8 skv=8 d=64 causal=0 err=0.000e+00", 72) == 0, "%s", l);
}

Test(runner, wrong_result_is_exit_1_and_fail_line, .init = cr_redirect_stdout)
{
    fake_outcome = 1;
    cr_expect_eq(stage_main(&fake, 3, argv_emu), 1);
    char l[1024];
    last_line(l, sizeof l);
    cr_expect(strncmp(l, "[FAIL] stage=T", 14) == 0, "%s", l);
}

Test(runner, run_error_is_exit_1, .init = cr_redirect_stdout)
{
    fake_outcome = 2;
    cr_expect_eq(stage_main(&fake, 3, argv_emu), 1);
    char l[1024];
    last_line(l, sizeof l);
    cr_expect(strncmp(l, "[FAIL] stage=T", 14) == 0, "%s", l);
}

Test(runner, stage_rule_is_exit_2, .init = cr_redirect_stdout)
{
    char *argv[] = {"stage_T", "--backend=emu", "--d=128", NULL};
    cr_expect_eq(stage_main(&fake, 3, argv), 2);
    char l[1024];
    last_line(l, sizeof l);
    cr_expect(strstr(l, "--d=128: this stage supports only 64") != NULL, "%s", l);
}

Test(runner, unavailable_backend_is_exit_77, .init = cr_redirect_stdout)
{
    char *argv[] = {"stage_T", "--backend=sm90", NULL};
    cr_expect_eq(stage_main(&fake, 2, argv), 2, "sm90 is not implemented by this stage: exit 2");
    static const stage_def gpu_stage = {
        .letter = "U", .name = "U_test", .title = "t", .backends = BACKEND_BIT(BACKEND_SM100),
        .defaults = {.b = 1, .hq = 1, .hkv = 1, .sq = 8, .skv = 8, .d = 64, .check = 1},
        .run = fake_run,
    };
    char *argv2[] = {"stage_U", "--backend=sm100", NULL};
    gpu_info g;
    gpu_query(&g);
    if (g.present && g.cc_major == 10 && g.cc_minor == 0) cr_skip_test("a CC 10.0 GPU is present");
    cr_expect_eq(stage_main(&gpu_stage, 2, argv2), 77);
    char l[1024];
    last_line(l, sizeof l);
    cr_expect(strncmp(l, "[SKIP] stage=U backend=sm100: backend sm100 needs a CC 10.0 GPU", 60) == 0, "%s", l);
}
