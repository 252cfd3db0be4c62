#include "host/runner.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/backend.h"
#include "host/cli.h"
#include "host/csv.h"
#include "host/device.h"
#include "host/npy.h"

static void fmt_or_dash(char *buf, size_t len, const char *fmt, double v, int valid)
{
    if (valid) snprintf(buf, len, fmt, v);
    else snprintf(buf, len, "-");
}

static int append_csv(const stage_def *st, const fmha_opts *o, const gpu_info *g,
                      const stage_result *r, const char *verdict)
{
    static const char *const cols[] = {
        "date", "gpu", "stage", "backend", "b", "hq", "hkv", "sq", "skv", "d", "causal", "page",
        "layout", "init", "seed", "verdict", "max_abs", "rel_l2", "cosine", "time_ms_median", "time_ms_min",
        "tflops", "gbps"};
    enum { N = sizeof cols / sizeof cols[0] };
    char v[N][256];
    time_t now = time(NULL);
    strftime(v[0], sizeof v[0], "%Y-%m-%d", gmtime(&now));
    snprintf(v[1], 256, "%s", g->present ? g->name : "none");
    snprintf(v[2], 256, "%s", st->letter);
    snprintf(v[3], 256, "%s", backend_name(o->backend));
    int ints[] = {o->b, o->hq, o->hkv, o->sq, o->skv, o->d, o->causal, o->page};
    for (int i = 0; i < 8; i++) snprintf(v[4 + i], 256, "%d", ints[i]);
    snprintf(v[12], 256, "%s", o->layout_bshd ? "bshd" : "bhsd");
    snprintf(v[13], 256, "%s", init_name(o->init));
    snprintf(v[14], 256, "%llu", (unsigned long long)o->seed);
    snprintf(v[15], 256, "%s", verdict);
    fmt_or_dash(v[16], 256, "%.6e", r->rep.max_abs, r->checked);
    fmt_or_dash(v[17], 256, "%.6e", r->rep.rel_l2, r->checked);
    fmt_or_dash(v[18], 256, "%.9f", r->rep.cosine, r->checked);
    int timed = r->time_ms > 0;
    fmt_or_dash(v[19], 256, "%.6f", r->time_ms, timed);
    fmt_or_dash(v[20], 256, "%.6f", r->time_min_ms, timed);
    fmt_or_dash(v[21], 256, "%.3f", timed ? r->flops / (r->time_ms * 1e-3) / 1e12 : 0, timed && r->flops > 0);
    fmt_or_dash(v[22], 256, "%.3f", timed ? r->bytes / (r->time_ms * 1e-3) / 1e9 : 0, timed && r->bytes > 0);
    const char *fields[N];
    for (int i = 0; i < N; i++) fields[i] = v[i];
    FILE *f = csv_open(o->csv, cols, N);
    if (!f) return 1;
    csv_row(f, fields, N);
    return fclose(f) == 0 ? 0 : 1;
}

/* --csv and --dump must be writable before any work is done (a bad path is a bad argument). */
static int check_outputs(const fmha_opts *o, char *err, size_t len)
{
    if (o->csv[0]) {
        FILE *f = fopen(o->csv, "a");
        if (!f) {
            snprintf(err, len, "--csv %.400s: cannot write there (%.60s)", o->csv, strerror(errno));
            return 2;
        }
        fclose(f);
    }
    if (o->dump[0] && ((mkdir(o->dump, 0755) != 0 && errno != EEXIST) || access(o->dump, W_OK) != 0)) {
        snprintf(err, len, "--dump %.400s: cannot write into that folder (%.60s)", o->dump, strerror(errno));
        return 2;
    }
    return 0;
}

static void fault_backends(const stage_fault *f, char *be, size_t len)
{
    be[0] = '\0';
    for (int b = BACKEND_SM90; b < BACKEND_COUNT; b++)
        if (f->backends & BACKEND_BIT(b)) snprintf(be + strlen(be), len - strlen(be), "%s%s", be[0] ? "," : "",
                                                   backend_name((backend_t)b));
}

/* --faults (and the end of --help): one line per footgun variant. */
static void list_faults(const stage_def *st)
{
    if (!st->nfaults) {
        printf("faults: none in this stage\n");
        return;
    }
    printf("faults (--fault NAME runs the broken variant, names the symptom, exits 1):\n");
    for (int i = 0; i < st->nfaults; i++) {
        const stage_fault *f = &st->faults[i];
        char be[64];
        fault_backends(f, be, sizeof be);
        printf("  %-20s %s  [%s]  %s (shows at: %s)\n", f->name, f->fg, be, f->what, f->demo);
    }
}

static const stage_fault *find_fault(const stage_def *st, const char *name)
{
    for (int i = 0; i < st->nfaults; i++)
        if (strcmp(st->faults[i].name, name) == 0 || strcasecmp(st->faults[i].fg, name) == 0) return &st->faults[i];
    return NULL;
}

/* What the broken variant did, for the last line. */
static void fault_symptom(int rc, const stage_result *r, char *buf, size_t len)
{
    int n = 0;
    if (rc) n += snprintf(buf + n, len - (size_t)n, "the run failed; ");
    if (r->model_msg[0]) n += snprintf(buf + n, len - (size_t)n, "model: %s; ", r->model_msg);
    if (r->checked && !r->passed) {
        if (r->symptom[0]) n += snprintf(buf + n, len - (size_t)n, "%s; ", r->symptom);
        if (r->unwritten) n += snprintf(buf + n, len - (size_t)n, "%zu output elements never written; ", r->unwritten);
        if (r->rep.nonfinite_mismatch)
            n += snprintf(buf + n, len - (size_t)n, "%zu elements NaN/Inf where the reference is finite; ",
                          r->rep.nonfinite_mismatch);
        n += snprintf(buf + n, len - (size_t)n, "%scosine %.4f, max_abs %.3e against the reference",
                      (r->unwritten || r->rep.nonfinite_mismatch) ? "the other elements: " : "", r->rep.cosine,
                      r->rep.max_abs);
    } else if (r->checked) {
        n += snprintf(buf + n, len - (size_t)n, "none: the check passed at this shape (try its demo shape: --faults)");
    } else if (!rc && !r->model_msg[0]) {
        snprintf(buf + n, len - (size_t)n, "unchecked (--no-check): nothing observed");
    }
    if (n > 2 && buf[n - 2] == ';') buf[n - 2] = '\0';
}

static const char *const suite_names[SUITE_COUNT] = {"gpu", "gpu-quick", "emu", "bench", "bench-quick", "ablation"};

const char *shape_suite_name(shape_suite s) { return (unsigned)s < SUITE_COUNT ? suite_names[s] : "?"; }

int shape_suite_parse(const char *name)
{
    for (int i = 0; i < SUITE_COUNT; i++)
        if (strcmp(name, suite_names[i]) == 0) return i;
    return -1;
}

/* stage_X --shapes SUITE: the rows of the stage's shape table, one flag line each. */
static int list_shapes(const stage_def *st, const char *prog, const char *suite)
{
    const int s = shape_suite_parse(suite);
    if (s < 0 || !st->shapes) {
        fprintf(stderr, "%s: error: --shapes %s: %s\n", prog, suite,
                st->shapes ? "suites are gpu, gpu-quick, emu, bench, bench-quick, ablation" : "this stage has no shape table");
        return 2;
    }
    char args[512];
    for (int i = 0; st->shapes((shape_suite)s, i, args, sizeof args); i++) printf("%s\n", args);
    return 0;
}

int stage_main(const stage_def *st, int argc, char **argv)
{
    fmha_opts o = st->defaults;
    char err[512] = "";
    char prog[32];
    snprintf(prog, sizeof prog, "stage_%s", st->letter);
    if (argc == 3 && strcmp(argv[1], "--shapes") == 0) return list_shapes(st, prog, argv[2]);
    if (argc == 2 && strcmp(argv[1], "--faults") == 0) {
        list_faults(st);
        return 0;
    }

    int rc = cli_parse(argc, argv, st->accepts, &o, err, sizeof err);
    if (rc == 0 && o.help) {
        cli_usage(prog, st->title, st->accepts, &st->defaults);
        list_faults(st);
        return 0;
    }
    if (!(st->accepts & OPT_HKV)) o.hkv = o.hq; /* no GQA in this stage: one KV head per query head */
    if (rc == 0) rc = cli_validate_common(&o, err, sizeof err);

    const stage_fault *fault = NULL;
    if (rc == 0 && o.fault[0] && !(fault = find_fault(st, o.fault))) {
        int n = snprintf(err, sizeof err, "--fault %.100s: stage %s has no such fault (", o.fault, st->letter);
        for (int i = 0; i < st->nfaults && n < (int)sizeof err - 40; i++)
            n += snprintf(err + n, sizeof err - (size_t)n, "%s%s", i ? ", " : "", st->faults[i].name);
        snprintf(err + n, sizeof err - (size_t)n, "%s)", st->nfaults ? "" : "none");
        rc = 2;
    }

    gpu_info g;
    memset(&g, 0, sizeof g);
    backend_t chosen = BACKEND_EMU;
    if (rc == 0) {
        gpu_query(&g);
        /* a fault runs where its variant exists: auto picks the best backend among those */
        rc = backend_select(o.backend, fault ? (st->backends & fault->backends) : st->backends, &g, &chosen, err,
                            sizeof err);
        if (rc == 2 && fault) {
            char be[64];
            fault_backends(fault, be, sizeof be);
            snprintf(err, sizeof err, "--fault %s (%s) runs on %s only, not on --backend %s", fault->name, fault->fg, be,
                     backend_name(o.backend));
        }
        if (rc == 0) o.backend = chosen;
        if (fault) o.fault_bits = fault->bits;
    }
    /* Stage rules see the resolved backend; a skip still validates with the requested one. */
    if ((rc == 0 || rc == 77) && st->validate) {
        char verr[512] = "";
        if (st->validate(&o, verr, sizeof verr)) {
            rc = 2;
            snprintf(err, sizeof err, "%s", verr);
        }
    }
    if (rc == 0) rc = check_outputs(&o, err, sizeof err);
    if (rc == 2) {
        fprintf(stderr, "%s: error: %s\n", prog, err);
        printf("[FAIL] stage=%s bad arguments: %s\n", st->letter, err);
        return 2;
    }
    if (rc == 77) {
        printf("[SKIP] stage=%s backend=%s: %s\n", st->letter, backend_name(o.backend), err);
        return 77;
    }

    char shape[256];
    cli_shape_string(&o, st->accepts, shape, sizeof shape);
    printf("stage %s (%s): %s\n", st->letter, st->name, st->title);
    printf("running: backend=%s %s init=%s seed=%llu%s\n", backend_name(o.backend), shape,
           init_name(o.init), (unsigned long long)o.seed, g.present ? "" : " (no GPU here)");
    if (g.present) printf("gpu: %s, CC %d.%d, %d SMs\n", g.name, g.cc_major, g.cc_minor, g.sm_count);
    fflush(stdout);

    stage_result r;
    memset(&r, 0, sizeof r);
    r.time_ms = r.time_min_ms = -1.0;
    rc = st->run(&o, &r);
    if (r.detail[0]) printf("%s\n", r.detail);

    const char *verdict;
    if (rc != 0) verdict = "FAIL";
    else if (r.checked) verdict = r.passed ? "OK" : "FAIL";
    else verdict = "OK";

    char errs[32], tms[32], tfl[32], gbs[32];
    if (r.checked) snprintf(errs, sizeof errs, "%.3e", r.err);
    else snprintf(errs, sizeof errs, rc ? "-" : "unchecked");
    int timed = r.time_ms > 0;
    fmt_or_dash(tms, sizeof tms, "%.4f", r.time_ms, timed);
    fmt_or_dash(tfl, sizeof tfl, "%.2f", timed ? r.flops / (r.time_ms * 1e-3) / 1e12 : 0, timed && r.flops > 0);
    fmt_or_dash(gbs, sizeof gbs, "%.1f", timed ? r.bytes / (r.time_ms * 1e-3) / 1e9 : 0, timed && r.bytes > 0);

    if (o.csv[0] && append_csv(st, &o, &g, &r, verdict)) {
        fprintf(stderr, "%s: could not append to %s\n", prog, o.csv);
        verdict = "FAIL";
        rc = 1;
    }
    if (fault) {
        /* the broken variant: name what it did and never report success */
        char sym[700];
        fault_symptom(rc, &r, sym, sizeof sym);
        printf("[FAIL] stage=%s backend=%s %s fault=%s (%s) symptom: %s\n", st->letter, backend_name(o.backend), shape,
               fault->name, fault->fg, sym);
        return 1;
    }
    printf("[%s] stage=%s backend=%s %s err=%s time_ms=%s tflops=%s gbps=%s%s\n", verdict,
           st->letter, backend_name(o.backend), shape, errs, tms, tfl, gbs,
           rc ? " (error: see above)" : "");
    return strcmp(verdict, "OK") == 0 ? 0 : 1;
}

int runner_dump_list(const fmha_opts *o, const char *stage, const dump_item *items, int n)
{
    for (int i = 0; i < n; i++)
        if (runner_dump(o, stage, items[i].name, items[i].descr, items[i].shape, items[i].rank, items[i].data,
                        items[i].elem_bytes))
            return 1;
    return 0;
}

void result_note_unwritten(stage_result *r, size_t unwritten, size_t total, const char *what)
{
    r->unwritten += unwritten;
    if (!unwritten) return;
    r->passed = 0;
    const size_t l = strlen(r->detail);
    snprintf(r->detail + l, sizeof r->detail - l, "; %zu of %zu elements of %s never written", unwritten, total, what);
}

int runner_dump(const fmha_opts *o, const char *stage, const char *name, const char *descr,
                const int *shape, int rank, const void *data, size_t elem_bytes)
{
    if (!o->dump[0]) return 0;
    if (mkdir(o->dump, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "--dump: cannot create folder %s: %s\n", o->dump, strerror(errno));
        return 1;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s_%s.npy", o->dump, stage, name);
    return npy_write(path, descr, shape, rank, data, elem_bytes);
}
