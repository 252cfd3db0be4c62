#!/usr/bin/env python3
"""make targets: the speed targets of one `make bench` CSV, each row with its rule and whether it is
met, so that a run is judged the same way every time. Standard library only: plots/plot.py reads the
CSV and picks the run (its matplotlib import waits for a figure), so both read a run one way.

  stage F (fastest attention kernel on the H200), every stage F row with Sq = Skv >= 2k, against
  the baselines of the same run at the same shape (TFLOP/s, higher is faster):
    D 128, S 8k           at least 1.0x the best of cuDNN and FlashAttention-4
    D 64 and 256, S 8k    at least 1.0x cuDNN (the FA4 ratio reported beside it)
    every other row       at least 0.9x the best of cuDNN and FA4
  stage D (FP8 paged decode), its three target shapes, times against the baseline's time:
    GQA   B64 Hq64 Hkv8 Skv 8k D128     at least 1.8x cuDNN bf16 decode
    Llama B128 Hq32 Hkv8 Skv 4k D128    at least 1.8x cuDNN bf16 decode
    MQA   B32 Hq128 Hkv1 Skv 16k D128   at least 2.5x PyTorch flash bf16 decode; its TFLOP/s
                                        against the FP8 GEMM ceiling of the same run
A rule whose baseline is missing from the run counts as not met and says so.

usage: scripts/targets.py [CSV]      (default: the H200's run that `make plots` draws: its newest full run)
       scripts/targets.py --selftest (hand-made rows with hand-derived verdicts)
"""
import csv
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import plot  # noqa: E402  (read_bench_csv, choose_runs, baseline_at, ceiling: one reading of a bench CSV)

SHAPE = plot.INTS  # b, hq, hkv, sq, skv, d, causal
DECODE = (  # (label, shape, baseline, factor)
    ("GQA B64 Hq64 Hkv8 Skv 8k D128", (64, 64, 8, 1, 8192, 128, 0), "sdpa_cudnn", 1.8),
    ("Llama B128 Hq32 Hkv8 Skv 4k D128", (128, 32, 8, 1, 4096, 128, 0), "sdpa_cudnn", 1.8),
    ("MQA B32 Hq128 Hkv1 Skv 16k D128", (32, 128, 1, 1, 16384, 128, 0), "sdpa_flash", 2.5),
)


def key(r):
    return tuple(r.get(k) for k in SHAPE)


def tflops_of(run, name, r):
    b = plot.baseline_at(run, name, lambda x: key(x) == key(r))
    return b["tflops"] if b else None


def stage_f_verdicts(run):
    out = []
    for r in run.rows:
        if r["kind"] != "stage" or r["name"] != "F" or r["status"] != "ok":
            continue
        sq, skv, d = r["sq"], r["skv"], r["d"]
        if sq != skv or skv < 2048:
            continue
        f, c, a = r["tflops"], tflops_of(run, "sdpa_cudnn", r), tflops_of(run, "fa4", r)
        have = [x for x in (c, a) if x]
        best = max(have) if have else None
        if skv == 8192 and d == 128:
            rule, need = "1.0x best", best
        elif skv == 8192 and d in (64, 256):
            rule, need = "1.0x cuDNN", c
        else:
            rule, need = "0.9x best", 0.9 * best if best else None
        note = "" if a else "FA4 not in this run"
        if need is None or f is None:
            met, note = False, "no baseline at this shape"
        else:
            met = f >= need
        out.append({"row": r, "f": f, "cudnn": c, "fa4": a, "best": best, "rule": rule, "met": met, "note": note})
    return out


def decode_verdicts(run):
    gemm, read = plot.ceiling(run, "cublaslt_fp8_gemm", "tflops"), plot.ceiling(run, "hbm_read", "gbps")
    out = []
    for label, shape, bname, factor in DECODE:
        st = next((r for r in run.rows if r["kind"] == "stage" and r["name"] == "D" and key(r) == shape), None)
        b = plot.baseline_at(run, bname, lambda x: key(x) == shape)
        v = {"label": label, "baseline": plot.SHORT[bname], "factor": factor, "met": False, "note": ""}
        if st is None or st["status"] != "ok":
            v["note"] = "no stage D row" if st is None else "stage D: " + st["status"]
        elif b is None:
            v["note"] = "no %s row" % plot.SHORT[bname]
        else:
            t, tb = st["time_ms_median"], b["time_ms_median"]
            v.update(ms=t, base_ms=tb, ratio=tb / t, met=tb / t >= factor, tflops=st["tflops"], gbps=st["gbps"])
            if factor == 2.5 and gemm and v["tflops"]:
                v["note"] = "%.0f TFLOP/s, %.1f%% of the FP8 GEMM ceiling (%.0f)" % (v["tflops"], 100 * v["tflops"] / gemm, gemm)
            elif read and v["gbps"]:
                v["note"] = "%.0f GB/s, %.1f%% of the read ceiling (%.0f)" % (v["gbps"], 100 * v["gbps"] / read, read)
        out.append(v)
    return out


def f1(x, fmt="%.1f"):
    return fmt % x if x is not None else "-"


def report(run):
    print("# Targets of %s\n" % os.path.relpath(run.path, ROOT))
    fv = stage_f_verdicts(run)
    print("## Stage F against the best attention kernels (TFLOP/s)\n")
    print("| shape | causal | stage F | cuDNN | FA4 | F / best | target | met |")
    print("|---|---|---|---|---|---|---|---|")
    for v in fv:
        r = v["row"]
        h = "H%s" % r["hq"] if r["hq"] == r["hkv"] else "Hq%s/Hkv%s" % (r["hq"], r["hkv"])
        tgt = v["rule"] + (" (F / cuDNN %.2f)" % (v["f"] / v["cudnn"]) if v["rule"] == "1.0x cuDNN" and v["cudnn"] else "")
        ratio = f1(v["f"] / v["best"], "%.3f") if v["best"] and v["f"] else "-"
        print("| B%s %s S%s D%s | %s | %s | %s | %s | %s | %s | %s%s |" % (
            r["b"], h, r["skv"], r["d"], "yes" if r["causal"] == 1 else "no", f1(v["f"]), f1(v["cudnn"]), f1(v["fa4"]),
            ratio, tgt, "yes" if v["met"] else "no", "; " + v["note"] if v["note"] else ""))
    print("\n%d of %d rows meet their target\n" % (sum(v["met"] for v in fv), len(fv)))
    dv = decode_verdicts(run)
    print("## Stage D's decode against its baselines (median ms)\n")
    print("| shape | stage D | baseline | baseline ms | faster by | target | met | |")
    print("|---|---|---|---|---|---|---|---|")
    for v in dv:
        print("| %s | %s | %s | %s | %s | %.1fx | %s | %s |" % (
            v["label"], f1(v.get("ms"), "%.4f"), v["baseline"], f1(v.get("base_ms"), "%.4f"), f1(v.get("ratio"), "%.3fx"),
            v["factor"], "yes" if v["met"] else "no", v["note"]))
    print("\n%d of %d decode rows meet their target" % (sum(v["met"] for v in dv), len(dv)))
    return 0


def h200_run():
    """The H200's newest full run, the one `make plots` draws for it (None without one)."""
    runs = plot.choose_runs(os.path.join(ROOT, "plots", "data"))
    return next((r for r in runs if "H200" in r.gpu and not r.quick), None)


def selftest():
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)
            print("FAIL:", what)

    def row(kind, name, shape, tf=None, ms=None, status="ok", gbps=None):
        r = dict(zip(SHAPE, shape))
        r.update(gpu="NVIDIA H200", date="2000-01-01", kind=kind, name=name, status=status, tflops=tf, time_ms_median=ms,
                 gbps=gbps)
        return r

    def as_run(rows):
        """The rows through a bench CSV and plots/plot.py's reader, as `make targets` reads a run."""
        p = os.path.join(tmp, "h200-2000-01-01.csv")
        with open(p, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=plot.BENCH_COLS)
            w.writeheader()
            for r in rows:
                w.writerow({k: "" if r.get(k) is None else r[k] for k in plot.BENCH_COLS})
        back = plot.read_bench_csv(p)
        check(back is not None and len(back) == len(rows), "the CSV reads back whole")
        return plot.Run(p, back)

    s8 = (2, 16, 16, 8192, 8192, 128, 0)     # D128 S8k: 1.0x best
    s8c = (2, 16, 16, 8192, 8192, 128, 1)    # its causal row
    d64 = (2, 32, 32, 8192, 8192, 64, 0)     # D64 S8k: 1.0x cuDNN
    s2 = (8, 16, 16, 2048, 2048, 128, 0)     # 0.9x best
    s2c = (8, 16, 16, 2048, 2048, 128, 1)
    s4 = (4, 16, 16, 4096, 4096, 128, 0)     # FA4 missing: cuDNN alone
    s1 = (16, 16, 16, 1024, 1024, 128, 0)    # S 1k: no target
    dec = [d[1] for d in DECODE]
    rows = [
        row("stage", "F", s8, 700.0), row("baseline", "sdpa_cudnn", s8, 650.0), row("baseline", "fa4", s8, 700.0),
        row("stage", "F", s8c, 599.9), row("baseline", "sdpa_cudnn", s8c, 600.0), row("baseline", "fa4", s8c, 550.0),
        row("stage", "F", d64, 500.0), row("baseline", "sdpa_cudnn", d64, 480.0), row("baseline", "fa4", d64, 560.0),
        row("stage", "F", s2, 450.0), row("baseline", "sdpa_cudnn", s2, 500.0), row("baseline", "fa4", s2, 480.0),
        row("stage", "F", s2c, 449.0), row("baseline", "sdpa_cudnn", s2c, 500.0), row("baseline", "fa4", s2c, 400.0),
        row("stage", "F", s4, 610.0), row("baseline", "sdpa_cudnn", s4, 600.0), row("baseline", "fa4", s4, status="not installed"),
        row("stage", "F", s1, 100.0), row("baseline", "sdpa_cudnn", s1, 500.0),
        row("stage", "C", s8, 900.0),  # another stage: not judged
        # decode: GQA exactly 1.8x, Llama 1.79x, MQA with no flash row
        row("stage", "D", dec[0], ms=0.25, gbps=4000.0), row("baseline", "sdpa_cudnn", dec[0], ms=0.45),
        row("stage", "D", dec[1], ms=0.25), row("baseline", "sdpa_cudnn", dec[1], ms=0.4475),
        row("stage", "D", dec[2], ms=0.05, tf=690.0), row("baseline", "sdpa_cudnn", dec[2], ms=0.2),
        row("ceiling", "hbm_read", (None,) * 7, gbps=4250.0), row("ceiling", "cublaslt_fp8_gemm", (None,) * 7, tf=1600.0),
    ]
    tmp = tempfile.mkdtemp()
    run = as_run(rows)
    fv = {key(v["row"]): v for v in stage_f_verdicts(run)}
    check(len(fv) == 6, "six stage F rows judged (S 1k and stage C left out), got %d" % len(fv))
    check(fv[s8]["met"] and fv[s8]["rule"] == "1.0x best", "equal to the best meets 1.0x best")
    check(not fv[s8c]["met"], "599.9 against a best of 600 misses 1.0x best")
    check(fv[d64]["met"] and fv[d64]["rule"] == "1.0x cuDNN", "D64 S8k: above cuDNN, below FA4 meets 1.0x cuDNN")
    check(fv[s2]["met"] and fv[s2]["rule"] == "0.9x best", "450 is 0.9x a best of 500: met")
    check(not fv[s2c]["met"], "449 against 0.9 x 500 misses")
    check(fv[s4]["met"] and fv[s4]["best"] == 600.0 and fv[s4]["note"] == "FA4 not in this run",
          "FA4 not installed: the best is cuDNN's, and the row says so")
    dv = decode_verdicts(run)
    check(dv[0]["met"] and abs(dv[0]["ratio"] - 1.8) < 1e-9, "GQA at exactly 1.8x cuDNN meets it")
    check("94.1% of the read ceiling" in dv[0]["note"], "GQA's bandwidth against the read ceiling: %r" % dv[0]["note"])
    check(not dv[1]["met"] and abs(dv[1]["ratio"] - 1.79) < 1e-9, "Llama at 1.79x misses 1.8x")
    check(not dv[2]["met"] and dv[2]["note"] == "no flash row", "MQA without a flash row is not met and says why")
    rows.append(row("baseline", "sdpa_flash", dec[2], ms=0.125))
    dv = decode_verdicts(as_run(rows))
    check(dv[2]["met"] and "43.1% of the FP8 GEMM ceiling" in dv[2]["note"], "MQA at 2.5x flash, 690 of 1600 TFLOP/s: %r" % dv[2]["note"])
    shutil.rmtree(tmp)
    print("targets selftest: %s" % ("FAILED (%d)" % len(fails) if fails else "passed"))
    return 1 if fails else 0


def main(argv):
    if argv[1:2] == ["--selftest"]:
        return selftest()
    if len(argv) > 1:
        if not os.path.exists(argv[1]):
            print("make targets: %s: no such file" % argv[1], file=sys.stderr)
            return 2
        rows = plot.read_bench_csv(argv[1])
        if rows is None:
            print("make targets: %s: not a make bench CSV" % argv[1], file=sys.stderr)
            return 2
        return report(plot.Run(argv[1], rows))
    run = h200_run()
    if run is None:
        print("make targets: no full H200 run in plots/data yet (make bench writes one)")
        return 0
    return report(run)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BrokenPipeError:  # `make targets | head`: the reader left early, nothing is wrong
        sys.stderr.close()
        sys.exit(0)
