#!/usr/bin/env python3
"""make plots: figures and the README perf table from the benchmark CSVs of real runs.

Reads every plots/data/*.csv whose header has the `make bench` columns (scripts/bench.sh); other
CSVs there (for instance the runner rows of a preliminary run) are ignored. Per GPU, each figure
comes from the newest run that holds its shapes, or all from the one file given with --csv: the
milestone plot and the README table (reference shapes only, which a quick run, *-quick.csv, has
too) from the newest run of any kind (a full run first on the same date); the sequence-length and
decode figures (every shape) from the newest full run, or the newest quick run when that GPU has
no full run. It writes, for the GPU of the newest run:
  plots/milestones.png        one bar per stage A..F at the reference shape (FA3 protocol, D = 128,
                              S = 8k: B = 2, H = 16), non-causal and causal panels; horizontal lines
                              for cuDNN (PyTorch SDPA) and flash (SDPA) at that shape and the
                              measured bf16 GEMM ceiling; each bar labelled with its ratio to its
                              baseline; a stage not in the run is an empty slot labelled "missing"
  plots/tflops_vs_seqlen.png  TFLOP/s against S for every stage and baseline: D = 64, 128, 256
                              (FA3 protocol) and the Llama-3.1 shape, non-causal and causal
  plots/decode_bandwidth.png  GB/s of stage D's decode rows and the SDPA baselines against the
                              read-only ceiling, or "not yet"
  plots/ablation.png          what each pipeline idea buys at the reference shape: stage C, stage
                              E, then stage F under each switch setting of its ablation rows
                              (kind "ablation", the switches in the note), cuDNN as a line;
                              non-causal and causal panels, or "not yet"
and regenerates the table between <!-- perf-table:begin --> and <!-- perf-table:end --> in
README.md (reference shapes, sorted by stage then shape, never by speed; missing stages shown as
missing), adding a "## Performance" section with the milestone plot when it is absent. Other GPUs'
newest runs get the same figures named <figure>-<gpu>.png.

Exit status: 0 when the figures were written, and also when there is no benchmark CSV at all (it
says "nothing to plot" and writes nothing: `make plots` before any `make bench` run is not an
error); 1 on an error; 2 on bad arguments. --selftest checks the whole pipeline on a synthetic
CSV in a temporary folder (never in plots/data) and exits 0 when every check passes.
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import sys
import tempfile

BENCH_COLS = ["date", "gpu", "sm_clock_mhz", "driver", "cuda", "kind", "name", "backend", "b", "hq", "hkv",
              "sq", "skv", "d", "causal", "status", "time_ms_median", "time_ms_min", "tflops", "gbps",
              "baseline_name", "baseline_tflops", "ratio", "note"]
STAGES = ["A", "B", "C", "D", "E", "F"]
FAMILY = {"A": "gemm", "B": "gemm", "C": "attn", "D": "decode", "E": "attn", "F": "attn"}
KIND = {"A": "GEMM", "B": "GEMM pair", "C": "attention", "D": "decode", "E": "attention", "F": "attention"}
REF = {"b": 2, "hq": 16, "s": 8192, "d": 128}          # FA3 protocol, D = 128, S = 8k
SHORT_ROWS = {"b": 8, "hq": 32, "s": 2048, "d": 64}  # FA3 protocol, D = 64, S = 2k, causal: short rows
D256_ROWS = {"b": 4, "hq": 8, "s": 4096, "d": 256}   # FA3 protocol, D = 256, S = 4k, causal: the key tile
LLAMA = {"b": 1, "hq": 64, "hkv": 8, "d": 128}
TABLE_LLAMA_S = 8192
BEGIN, END = "<!-- perf-table:begin -->", "<!-- perf-table:end -->"
INTS = ("b", "hq", "hkv", "sq", "skv", "d", "causal")
FLOATS = ("sm_clock_mhz", "time_ms_median", "time_ms_min", "tflops", "gbps", "baseline_tflops", "ratio")
BASE_STYLE = {  # baseline name -> (label, color, linestyle)
    "sdpa_cudnn": ("cuDNN (PyTorch SDPA)", "black", "--"),
    "sdpa_flash": ("flash (PyTorch SDPA)", "dimgray", ":"),
    "fa4": ("FlashAttention-4 (CuTe DSL)", "tab:red", "-."),
    "cublas_qk": ("cuBLAS QK^T GEMM", "tab:brown", "-."),
    "cublas_qkpv": ("cuBLAS QK^T + PV pair (unfused)", "tab:pink", "-."),
}
FLOP_NOTE = ("TFLOP/s: A (one GEMM) 2*B*H*S^2*D; B (two GEMMs) and attention 4*B*H*S^2*D, attention halved "
             "for causal.")
SHORT = {"sdpa_cudnn": "cuDNN", "sdpa_flash": "flash", "fa4": "FA4", "cublas_qk": "cuBLAS", "cublas_qkpv": "cuBLAS pair"}
STAGE_COLOR = {"A": "tab:blue", "B": "tab:orange", "C": "tab:green", "D": "tab:red", "E": "tab:purple",
               "F": "tab:cyan"}


# ---------------------------------------------------------------------------------------------
# Data
class Run:
    def __init__(self, path, rows):
        self.path, self.rows = path, rows
        self.gpu = rows[0]["gpu"] if rows else "?"
        self.dates = sorted({r["date"] for r in rows if r["date"]})
        self.date = self.dates[-1] if self.dates else ""
        self.quick = os.path.basename(path).endswith("-quick.csv")

    def first(self, key):
        for r in self.rows:
            if r.get(key):
                return r[key]
        return "?"

    def clock_text(self):
        c = [r["sm_clock_mhz"] for r in self.rows if r["sm_clock_mhz"] is not None]
        if not c:
            return "SM clock not recorded"
        lo, hi = min(c), max(c)
        return "SM clock %.0f MHz" % lo if lo == hi else "SM clock %.0f-%.0f MHz (after each program)" % (lo, hi)

    def title(self):
        d = self.date if len(self.dates) < 2 else "%s..%s" % (self.dates[0], self.dates[-1])
        return "%s, %s (driver %s, CUDA %s, %s)" % (self.gpu, d, self.first("driver"), self.first("cuda"),
                                                    self.clock_text())


def read_bench_csv(path):
    """Rows of a `make bench` CSV, typed; None when the file has other columns."""
    try:
        with open(path, newline="") as f:
            rd = csv.DictReader(f)
            if not rd.fieldnames or not set(BENCH_COLS) <= set(rd.fieldnames):
                return None
            rows = []
            for r in rd:
                for k in INTS:
                    r[k] = int(r[k]) if r.get(k, "").strip() not in ("", "-") else None
                for k in FLOATS:
                    v = r.get(k, "").strip()
                    try:
                        r[k] = float(v) if v not in ("", "-") else None
                    except ValueError:
                        r[k] = None
                rows.append(r)
            return rows
    except (OSError, csv.Error, UnicodeDecodeError) as e:
        print("plots: cannot read %s: %s" % (path, e), file=sys.stderr)
        return None


def choose_runs(data_dir, only=None, reference=False):
    """The run to draw per GPU, the newest first: the newest full run (quick only when a GPU has no
    full run), or with reference=True the newest run of any kind (full first on the same date)."""
    paths = [only] if only else sorted(
        os.path.join(data_dir, p) for p in os.listdir(data_dir) if p.endswith(".csv")) if os.path.isdir(data_dir) else []
    runs = []
    for p in paths:
        rows = read_bench_csv(p)
        if rows is None:
            if only:
                raise SystemExit("plots: %s does not have the make bench columns" % p)
            continue
        if rows:
            runs.append(Run(p, rows))
    best = {}
    for r in runs:
        cur = best.get(r.gpu)
        key = (lambda x: (x.date, not x.quick, os.path.basename(x.path))) if reference else \
            (lambda x: (not x.quick, x.date, os.path.basename(x.path)))
        if cur is None or key(r) > key(cur):
            best[r.gpu] = r
    return sorted(best.values(), key=lambda r: (r.date, r.path), reverse=True)


def shape_family(r):
    b, hq, hkv, sq, skv, d = (r[k] for k in ("b", "hq", "hkv", "sq", "skv", "d"))
    if None in (b, hq, sq, skv, d):
        return None
    if sq != skv:
        return "decode"
    if b == LLAMA["b"] and hq == LLAMA["hq"] and d == LLAMA["d"]:
        return "llama"
    if b * sq == 16384 and hq * d == 2048:
        return "fa3"
    return "other"


def shape_key(r):
    fam = shape_family(r)
    order = {"fa3": 0, "llama": 1, "decode": 2, "other": 3, None: 4}[fam]
    return (order, r["d"] or 0, r["sq"] or 0, r["skv"] or 0, r["causal"] or 0, r["b"] or 0)


def shape_text(r):
    if r["b"] is None:
        return "-"
    h = "H%d" % r["hq"] if r["hkv"] in (None, r["hq"]) else "Hq%d/Hkv%d" % (r["hq"], r["hkv"])
    s = "S%d" % r["sq"] if r["sq"] == r["skv"] else "Sq%d Skv%d" % (r["sq"], r["skv"])
    return "B%d %s %s D%d" % (r["b"], h, s, r["d"])


def is_ref(r, causal):
    return (shape_family(r) == "fa3" and r["d"] == REF["d"] and r["sq"] == REF["s"] and r["b"] == REF["b"]
            and (r["causal"] or 0) == causal)


def is_short_causal(r):
    """The short causal rows of stage F's second ablation panel (D = 64, S = 2k, causal)."""
    return (shape_family(r) == "fa3" and r["d"] == SHORT_ROWS["d"] and r["sq"] == SHORT_ROWS["s"]
            and r["b"] == SHORT_ROWS["b"] and (r["causal"] or 0) == 1)


def is_d256_causal(r):
    """The rows of stage F's D = 256 ablation panel (S = 4k, causal: 128- against 64-key tiles)."""
    return (shape_family(r) == "fa3" and r["d"] == D256_ROWS["d"] and r["sq"] == D256_ROWS["s"]
            and r["b"] == D256_ROWS["b"] and (r["causal"] or 0) == 1)


def is_llama_ref(r, causal):
    return shape_family(r) == "llama" and r["sq"] == TABLE_LLAMA_S and (r["causal"] or 0) == causal


def kind_of(x):
    return KIND.get(x, "stage")


def stage_rows(run, x):
    return [r for r in run.rows if r["kind"] == "stage" and r["name"] == x]


def stage_letters(run):
    extra = sorted({r["name"] for r in run.rows if r["kind"] == "stage"} - set(STAGES))
    return STAGES + extra


def slot(run, x, pick):
    """(status, row) of stage x at the shape pick() selects: status 'missing' when the stage is not
    in the run at all."""
    rows = stage_rows(run, x)
    at = [r for r in rows if pick(r)]
    if at:
        return at[-1]["status"], at[-1]
    if not rows or all(r["status"] == "missing" for r in rows):
        return "missing", None
    return "not run", None


def baseline_at(run, name, pick):
    for r in run.rows:
        if r["kind"] == "baseline" and r["name"] == name and r["status"] == "ok" and pick(r):
            return r
    return None


def ceiling(run, name, col):
    for r in run.rows:
        if r["kind"] == "ceiling" and r["name"] == name and r["status"] == "ok" and r[col]:
            return r[col]
    return None


# ---------------------------------------------------------------------------------------------
# Figures
def plt_module():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def fig_milestones(run, path):
    plt = plt_module()
    fig, axes = plt.subplots(1, 2, figsize=(14, 6.6), sharey=True)
    letters = stage_letters(run)
    gemm_ceil = ceiling(run, "cublas_gemm", "tflops")
    ymax = max([gemm_ceil or 0] + [r["tflops"] or 0 for r in run.rows if r["kind"] != "ceiling"] + [100]) * 1.18
    for ax, causal in zip(axes, (0, 1)):
        pick = lambda r, c=causal: is_ref(r, c)
        xs = range(len(letters))
        for i, x in enumerate(letters):
            fam = FAMILY.get(x, "attn")
            if fam == "gemm" and causal:
                label = "n/a: a GEMM has no causal form"
                st, r = "n/a", None
            elif fam == "decode":
                st, r = slot(run, x, lambda r: False)
                label = "missing" if st == "missing" else "decode only: see decode plot"
            else:
                st, r = slot(run, x, pick)
                label = st
            if r is not None and st == "ok" and r["tflops"]:
                ax.bar(i, r["tflops"], color=STAGE_COLOR.get(x, "tab:gray"), width=0.6)
                txt = "%.0f" % r["tflops"]
                if r["ratio"] is not None and r["baseline_name"]:
                    txt += "\n%.2fx\n%s" % (r["ratio"], SHORT.get(r["baseline_name"], r["baseline_name"]))
                if r["baseline_tflops"]:
                    ax.plot([i - 0.38, i + 0.38], [r["baseline_tflops"]] * 2, color="black", lw=2.2)
                    ax.annotate("baseline", (i + 0.38, r["baseline_tflops"]), fontsize=7, va="center",
                                xytext=(2, 0), textcoords="offset points")
                ax.text(i, r["tflops"] + ymax * 0.012, txt, ha="center", va="bottom", fontsize=8)
            else:
                ax.bar(i, ymax * 0.96, color="none", edgecolor="lightgray", hatch="//", width=0.6, linestyle="--")
                ax.text(i, ymax * 0.45, label, ha="center", va="center", fontsize=9, color="dimgray", rotation=90,
                        bbox=dict(facecolor="white", edgecolor="none", alpha=0.8))
        lines = []
        for name in ("sdpa_cudnn", "sdpa_flash", "fa4"):
            b = baseline_at(run, name, pick)
            if b:
                lab, col, ls = BASE_STYLE[name]
                lines.append(ax.axhline(b["tflops"], color=col, ls=ls, lw=1.4,
                                        label="%s: %.0f TFLOP/s" % (lab, b["tflops"])))
        if gemm_ceil:
            lines.append(ax.axhline(gemm_ceil, color="tab:red", ls="-", lw=1.2,
                                    label="bf16 GEMM ceiling (cuBLAS 8192^3): %.0f TFLOP/s" % gemm_ceil))
        ax.set_xticks(list(xs))
        ax.set_xticklabels(["%s\n%s" % (x, kind_of(x)) for x in letters])
        ax.set_xlim(-0.6, len(letters) - 0.4)
        ax.set_ylim(0, ymax)
        ax.set_title("%s: B=%d, H=%d, S=%d, D=%d" % ("causal" if causal else "non-causal", REF["b"], REF["hq"],
                                                     REF["s"], REF["d"]), fontsize=10)
        ax.set_xlabel("stage")
        if lines:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, ncol=2, frameon=False)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("TFLOP/s")
    fig.suptitle("Milestones at the reference shape: TFLOP/s per stage, ratio to its baseline (black bar)\n"
                 + run.title(), fontsize=11)
    fig.text(0.5, 0.01, FLOP_NOTE + " Baselines: A cuBLAS QK^T; B the unfused cuBLAS pair (P through memory); "
             "attention the fastest of cuDNN and flash (PyTorch SDPA) and FlashAttention-4 at the shape; "
             "all in the same run.",
             ha="center", fontsize=8, color="dimgray")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fig_seqlen(run, path):
    plt = plt_module()
    cols = [("fa3", 64), ("fa3", 128), ("fa3", 256), ("llama", 128)]
    fig, axes = plt.subplots(2, 4, figsize=(20, 9.5))
    gemm_ceil = ceiling(run, "cublas_gemm", "tflops")
    letters = stage_letters(run)
    handles = {}
    for ri, causal in enumerate((0, 1)):
        for ci, (fam, d) in enumerate(cols):
            ax = axes[ri][ci]
            sel = lambda r: shape_family(r) == fam and r["d"] == d and (r["causal"] or 0) == causal
            for x in letters:
                rows = sorted((r for r in stage_rows(run, x) if sel(r)), key=lambda r: r["sq"])
                ok = [r for r in rows if r["status"] == "ok" and r["tflops"]]
                bad = [r for r in rows if r["status"] != "ok"]
                col = STAGE_COLOR.get(x, "tab:gray")
                if ok:
                    be = ok[-1]["backend"] or "?"
                    h, = ax.plot([r["sq"] for r in ok], [r["tflops"] for r in ok], "o-", color=col, lw=2,
                                 label="stage %s (%s)" % (x, be))
                    handles.setdefault("stage " + x, h)
                if bad:
                    h = ax.scatter([r["sq"] for r in bad], [0] * len(bad), marker="x", color=col, clip_on=False,
                                   zorder=5, label="stage %s: failed/skipped at S (x on the axis, reason above)" % x)
                    handles.setdefault("bad " + x, h)
                    for r in bad:  # the reason of each missing point, from the row's status and note
                        ax.annotate(missing_reason(r), (r["sq"], 0), xytext=(0, 6), textcoords="offset points",
                                    rotation=90, fontsize=6, color=col, ha="center", va="bottom")
            for name, (lab, colr, ls) in BASE_STYLE.items():
                rows = sorted((r for r in run.rows if r["kind"] == "baseline" and r["name"] == name
                               and r["status"] == "ok" and r["tflops"] and sel(r)), key=lambda r: r["sq"])
                if rows:
                    h, = ax.plot([r["sq"] for r in rows], [r["tflops"] for r in rows], ls=ls, color=colr,
                                 marker=".", label=lab)
                    handles.setdefault(name, h)
            ticks = [512, 1024, 2048, 4096, 8192, 16384] if fam == "fa3" else [2048, 4096, 8192, 16384, 32768]
            ax.set_xscale("log", base=2)
            ax.set_xticks(ticks)
            ax.set_xticklabels(["%dk" % (t // 1024) if t >= 1024 else str(t) for t in ticks])
            ax.set_xlim(ticks[0] / 1.3, ticks[-1] * 1.3)
            ax.minorticks_off()
            if not ax.lines and not ax.collections:
                ax.text(0.5, 0.5, "no rows at these shapes in this run", ha="center", va="center",
                        color="dimgray", transform=ax.transAxes)
            ax.set_xlabel("sequence length S (Sq = Skv)")
            ax.set_ylabel("TFLOP/s")
            ax.set_ylim(bottom=0, top=(gemm_ceil or 1000) * 1.1)
            shp = ("B*S = 16k, H = %d, D = %d" % (2048 // d, d)) if fam == "fa3" else \
                "Llama-3.1: B = 1, Hq = 64, Hkv = 8, D = 128"
            ax.set_title("%s, %s" % (shp, "causal" if causal else "non-causal"), fontsize=10)
            ax.grid(alpha=0.3)
            if gemm_ceil:
                h = ax.axhline(gemm_ceil, color="tab:red", lw=1, label="bf16 GEMM ceiling %.0f TFLOP/s" % gemm_ceil)
                handles.setdefault("~ceil", h)
    missing = [x for x in letters if slot(run, x, lambda r: True)[0] == "missing"]
    keys = sorted(handles, key=lambda k: (0 if k.startswith(("stage", "bad")) else 1 if k[0] != "~" else 2,
                                          k.split()[-1] if k.startswith(("stage", "bad")) else k))
    hs = [handles[k] for k in keys]
    labels = [h.get_label() for h in hs]
    for x in missing:
        hs.append(plt.Line2D([], [], color=STAGE_COLOR.get(x, "tab:gray"), ls="none", marker="s", alpha=0.3))
        labels.append("stage %s: missing (not in this run)" % x)
    fig.legend(hs, labels, loc="lower center", ncol=4, fontsize=9, frameon=False)
    fig.suptitle("TFLOP/s against sequence length. " + FLOP_NOTE + "\n"
                 + run.title(), fontsize=11)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def missing_reason(r):
    """A few words on why a point is missing, from the CSV row's status and note."""
    note = (r.get("note") or "").lower()
    for key, words in (("time budget", "time budget"), ("refuses", "shape refused"), ("bench_max_s_gb", "S too large"),
                       ("killed after", "timeout"), ("needs a cc", "no such GPU")):
        if key in note:
            return words
    return r["status"] or "?"


def decode_bf16_bytes(r):
    """Bytes a bf16 decode with a contiguous cache must read and write at row r's shape (K and V of
    every token, Q, O): the baselines' GB/s on the same axis as stage D's FP8 bytes."""
    kv = 2.0 * r["b"] * r["hkv"] * r["skv"] * r["d"] * 2
    qo = 2.0 * r["b"] * r["hq"] * r["sq"] * r["d"] * 2
    return kv + qo


VARIANT_COLOR = {"--ring 1": "tab:red", "--ring 2": "tab:purple", "--ring 3": "tab:brown", "--ring 4": "tab:pink",
                 "--prefetch 1": "tab:cyan", "--prefetch 2": "tab:green", "--prefetch 4": "tab:olive",
                 "--kv-tma 1": "tab:blue", "--kv-tma 0": "tab:blue", "--kv-tma 2": "darkgreen", "--m64-groups 2": "tab:orange",
                 "--m64-groups 2 --kv-tma 1": "black", "--m64-groups 2 --kv-tma 0": "black",
                 "--m64-groups 2 --kv-tma 2": "dimgray", "--ring 4 --overlap 1": "gold",
                 "--fair 1": "tab:gray", "--fair 2": "lightgray", "--persistent 1": "teal"}  # none stage D's own red
VARIANT_WHAT = {"ring": "pipelined", "ring 1": "unpipelined, where auto picks the ring",
                "prefetch": "L2 prefetch", "kv-tma 1": "TMA gather", "kv-tma 0": "cp.async gather",
                "kv-tma 2": "TMA gather, the next tile's during this one",
                "m64-groups": "two warpgroups a tile", "overlap 1": "P V under the next softmax",
                "fair": "CTAs held to the grid's mean progress", "persistent": "one CTA a slot walks the items"}  # by "name value" where the value changes the meaning


def variant_what(var):
    """'--m64-groups 2 --kv-tma 0' -> 'two warpgroups a tile + cp.async gather'."""
    w = var.split()
    pairs = [(w[i][2:], w[i + 1] if i + 1 < len(w) else "") for i in range(0, len(w), 2)]
    return " + ".join(VARIANT_WHAT.get("%s %s" % (n, v), VARIANT_WHAT.get(n, "")) for n, v in pairs)


def ablation_variant(r):
    """'--ring 2', '--prefetch 2', '--kv-tma 1', '--m64-groups 2' (or several, in the note's order) from a
    decode ablation row's note ('switches: --ring 2'), else None. --splits is not a variant."""
    m = re.findall(r"--(ring|prefetch|kv-tma|m64-groups|overlap|fair|persistent) (\S+)", r.get("note") or "")
    return " ".join("--%s %s" % g for g in m) if m else None


def fig_decode(run, path):
    """GB/s against Skv per decode shape family (B, Hq, Hkv, D): stage D over the bytes of its FP8
    cache, the SDPA baselines (bf16, contiguous cache) over theirs, and the read-only ceiling."""
    plt = plt_module()
    fig, ax = plt.subplots(figsize=(13, 5.5))  # the legend sits to the right of the axes, off the lines
    rows = sorted((r for r in stage_rows(run, "D") if r["status"] == "ok" and r["gbps"]),
                  key=lambda r: (r["b"], r["hq"], r["skv"]))
    ceil = ceiling(run, "hbm_read", "gbps")
    ceil_name = "read-only ceiling (one streaming read)"
    if not ceil:
        ceil, ceil_name = ceiling(run, "d2d_copy", "gbps"), "device-to-device copy ceiling"
    ax.set_xlabel("keys per sequence Skv")
    ax.set_ylabel("GB/s (bytes that must be read and written)")
    top = [ceil or 0]
    if not rows:
        st = slot(run, "D", lambda r: True)[0]
        why = "stage D does not exist" if st == "missing" else "stage D has no decode rows that ran in this run"
        ax.text(0.5, 0.45, "not yet: %s" % why, ha="center", va="center", fontsize=15, color="dimgray",
                transform=ax.transAxes)
        ax.set_xticks([])
    else:
        fams = sorted({(r["b"], r["hq"], r["hkv"], r["d"]) for r in rows})
        markers = "osD^v"
        for i, fam in enumerate(fams):
            sub = [r for r in rows if (r["b"], r["hq"], r["hkv"], r["d"]) == fam]
            mk = markers[i % len(markers)]
            lbl = "B=%d Hq=%d Hkv=%d D=%d" % fam
            ax.plot([r["skv"] for r in sub], [r["gbps"] for r in sub], mk + "-", color=STAGE_COLOR["D"],
                    label="stage D (%s, FP8 paged), %s" % (sub[0]["backend"], lbl))
            top += [r["gbps"] for r in sub]
            # stage D's ablation rows (--ring N: the pipelined decode; --prefetch N: the L2
            # prefetch; --kv-tma 1: the TMA gather), one line per switch setting
            abl = [r for r in run.rows if r["kind"] == "ablation" and r["name"] == "D" and r["status"] == "ok"
                   and r["gbps"] and (r["b"], r["hq"], r["hkv"], r["d"]) == fam]
            for var in sorted({ablation_variant(r) for r in abl} - {None}):
                pr = sorted((r for r in abl if ablation_variant(r) == var), key=lambda r: r["skv"])
                what = variant_what(var)
                ax.plot([r["skv"] for r in pr], [r["gbps"] for r in pr], mk + "-",
                        color=VARIANT_COLOR.get(var, "tab:purple"), label="stage D %s (%s), %s" % (var, what, lbl))
                top += [r["gbps"] for r in pr]
            for name, col in (("sdpa_cudnn", "tab:gray"), ("sdpa_flash", "tab:olive")):
                pts = []
                for r in sub:
                    bl = baseline_at(run, name, lambda x, r=r: (x["b"], x["hq"], x["hkv"], x["sq"], x["skv"], x["d"]) ==
                                     (r["b"], r["hq"], r["hkv"], r["sq"], r["skv"], r["d"]))
                    if bl and bl["time_ms_median"]:
                        pts.append((r["skv"], decode_bf16_bytes(r) / (bl["time_ms_median"] * 1e-3) / 1e9))
                if pts:
                    ax.plot([x for x, _ in pts], [y for _, y in pts], mk + "--", color=col, alpha=0.8,
                            label="%s (bf16, contiguous), %s" % (name, lbl))
                    top += [y for _, y in pts]
        ax.set_xscale("log", base=2)
        ax.grid(alpha=0.3)
    ax.set_ylim(0, max(top + [1000]) * 1.15)
    if ceil:
        ax.axhline(ceil, color="tab:red", lw=1.2, ls=":", label="%s: %.0f GB/s" % (ceil_name, ceil))
    if ceil or rows:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, borderaxespad=0.0)
    ax.set_title("Decode bandwidth (stage D against bf16 SDPA at the same logical shape)\n" + run.title(), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# Per-CTA timelines (stage D --timeline FILE; committed under plots/data/timeline/)
TIMELINE_COLS = ("cta", "sm", "entry_us", "first_tile_us", "exit_us")


def read_timeline_csv(path):
    """[(cta, sm, entry, first_tile or None, exit)] of a --timeline CSV; None when it has other columns."""
    try:
        with open(path, newline="") as f:
            rd = csv.DictReader(f)
            if tuple(rd.fieldnames or ()) != TIMELINE_COLS:
                return None
            out = []
            for r in rd:
                ft = r["first_tile_us"].strip()
                out.append((int(r["cta"]), int(r["sm"]), float(r["entry_us"]), float(ft) if ft else None,
                            float(r["exit_us"])))
            return out
    except (OSError, csv.Error, ValueError, KeyError) as e:
        print("plots: cannot read %s: %s" % (path, e), file=sys.stderr)
        return None


def timeline_files(data_dir):
    d = os.path.join(data_dir, "timeline")
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(d, p) for p in os.listdir(d) if p.endswith(".csv"))


def newest_timelines(paths, most=3):
    """The timelines of the newest run: files are named <gpu>-<date>-<what>.csv (stage D's
    h200-2026-12-04-decode-gqa-...), the run being the name up to its date."""
    def run_of(p):
        m = re.match(r"(.*?\d{4}-\d{2}-\d{2}[a-z]?)-", os.path.basename(p))
        return m.group(1) if m else os.path.basename(p)
    if not paths:
        return []
    newest = max(paths, key=lambda p: (run_of(p)[-11:], run_of(p)))
    return [p for p in paths if run_of(p) == run_of(newest)][:most]


def fig_timeline(paths, path):
    """One column per timeline CSV: each CTA's life (entry to exit, its first tile marked) in launch
    order, and below it the CTAs resident over time, the shape of the launch's ramp and tail."""
    plt = plt_module()
    tls = [(p, read_timeline_csv(p)) for p in paths]
    tls = [(p, t) for p, t in tls if t]
    if not tls:
        return False
    fig, axes = plt.subplots(2, len(tls), figsize=(6.5 * len(tls), 7.5), squeeze=False,
                             gridspec_kw={"height_ratios": (3, 1.3)})
    for col, (p, t) in enumerate(tls):
        top, low = axes[0][col], axes[1][col]
        for cta, _sm, e, ft, x in t:
            top.plot((e, x), (cta, cta), color="tab:blue", lw=0.6, alpha=0.6)
        fts = [(cta, ft) for cta, _sm, _e, ft, _x in t if ft is not None]
        top.scatter([ft for _, ft in fts], [c for c, _ in fts], s=1.5, color="tab:orange", label="first KV tile ready")
        top.plot([], [], color="tab:blue", label="a CTA, entry to exit")
        top.set_ylabel("CTA (launch order)")
        top.set_title(os.path.splitext(os.path.basename(p))[0], fontsize=9)
        top.legend(loc="lower right", fontsize=7)
        top.grid(alpha=0.3)
        ev = sorted([(e, 1) for _c, _s, e, _f, _x in t] + [(x, -1) for _c, _s, _e, _f, x in t])
        xs, ys, n = [0.0], [0], 0
        for when, d in ev:
            xs.append(when)
            ys.append(n)
            n += d
            xs.append(when)
            ys.append(n)
        low.plot(xs, ys, color="tab:green")
        low.set_xlabel("us from the first CTA's entry")
        low.set_ylabel("CTAs resident")
        low.grid(alpha=0.3)
        span = max(x for *_, x in t)
        busy = sum(x - e for _c, _s, e, _f, x in t)
        firsts = sorted(ft - e for _c, _s, e, ft, _x in t if ft is not None)
        low.set_title("span %.1f us, %.0f resident on average, first tile %.1f us (median)" %
                      (span, busy / span if span > 0 else 0, firsts[len(firsts) // 2] if firsts else 0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------------------------
# README table
def fmt(v, f):
    return "" if v is None else f % v


def table_rows(run):
    """Rows of the README table: per stage A..F (then others) its reference shapes, then the
    baselines at those shapes, then the ceilings. Sorted by stage, then shape; never by speed."""
    out = []
    ref_picks = [lambda r: is_ref(r, 0), lambda r: is_ref(r, 1), lambda r: is_llama_ref(r, 0),
                 lambda r: is_llama_ref(r, 1)]
    for x in stage_letters(run):
        fam = FAMILY.get(x, "attn")
        rows = stage_rows(run, x)
        if not rows or all(r["status"] == "missing" for r in rows):
            note = rows[0]["note"] if rows else "not in this run"
            out.append([x, kind_of(x), "", "", "", "missing", "", "", "", "", "", note])
            continue
        if fam == "decode":
            picked = sorted(rows, key=shape_key)
        else:
            picked = sorted((r for r in rows if any(p(r) for p in ref_picks)), key=shape_key)
            if not picked:
                sts = {r["status"] for r in rows}
                out.append([x, kind_of(x), "", "", "", sts.pop() if len(sts) == 1 else "not run at these shapes",
                            "", "", "", "", "", rows[0]["note"] or "see the CSV"])
        fp8 = ceiling(run, "cublaslt_fp8_gemm", "tflops") if fam == "decode" else None
        for r in picked:
            out.append(stage_line(r, x, fam, fp8))
    bl = sorted((r for r in run.rows if r["kind"] == "baseline" and (is_ref(r, 0) or is_ref(r, 1) or is_llama_ref(r, 0)
                                                                     or is_llama_ref(r, 1))),
                key=lambda r: (r["name"], shape_key(r)))
    for r in bl:
        out.append(["baseline: %s" % r["name"], "", r["backend"], shape_text(r), "yes" if r["causal"] else "no",
                    r["status"], fmt(r["time_ms_median"], "%.3f"), fmt(r["time_ms_min"], "%.3f"),
                    fmt(r["tflops"], "%.1f"), "", "", r["note"] if r["status"] != "ok" else ""])
    return out


def stage_line(r, x, fam, fp8=None):
    """One README table row; a decode row's note names its FP8 cache GB/s and, where the run
    measured the e4m3 GEMM ceiling (fp8, TFLOP/s), its MMAs' share of it."""
    base = ""
    if r["baseline_name"]:
        base = r["baseline_name"] + (" %.1f" % r["baseline_tflops"] if r["baseline_tflops"] else "")
    note = r["note"] if r["status"] != "ok" else (r["note"] or "")
    if fam == "decode" and r["status"] == "ok" and r["gbps"]:
        fp8_share = "; %.1f%% of the e4m3 GEMM ceiling" % (100.0 * r["tflops"] / fp8) if fp8 and r["tflops"] else ""
        note = ("%.0f GB/s (FP8 paged bytes)%s" % (r["gbps"], fp8_share)) + ("; " + note if note else "")
    return [x, kind_of(x), r["backend"] or "", shape_text(r), "yes" if r["causal"] else "no",
            r["status"], fmt(r["time_ms_median"], "%.3f"), fmt(r["time_ms_min"], "%.3f"), fmt(r["tflops"], "%.1f"),
            base, fmt(r["ratio"], "%.2f"), note]


def md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def table_markdown(run, csv_rel):
    head = ["Stage", "Kind", "Backend", "Shape", "Causal", "Status", "Median ms", "Min ms", "TFLOP/s",
            "Baseline (TFLOP/s)", "Ratio", "Note"]
    lines = [BEGIN,
             ("Generated by `make plots` from `%s`: %s. Reference shapes (FA3 protocol D = 128, S = 8k; "
              "Llama-3.1 S = 8k); every shape is in the CSV. Sorted by stage, then shape. " % (csv_rel, run.title()))
             + FLOP_NOTE + " Ratio = stage / baseline, same run.",
             "",
             "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for row in table_rows(run):
        lines.append("| " + " | ".join(md_escape(c) for c in row) + " |")
    g = ceiling(run, "cublas_gemm", "tflops")
    c = ceiling(run, "d2d_copy", "gbps")
    lines.append("")
    rd = ceiling(run, "hbm_read", "gbps")
    g8 = ceiling(run, "cublaslt_fp8_gemm", "tflops")  # runs before it have no FP8 ceiling row
    lines.append("Ceilings in the same run: bf16 GEMM 8192^3 (cuBLAS) %s TFLOP/s;%s device-to-device copy %s GB/s "
                 "(bytes read + written); one streaming read %s GB/s." %
                 (fmt(g, "%.1f") or "not measured", " e4m3 GEMM 8192^3 (cuBLASLt) %s TFLOP/s;" % fmt(g8, "%.1f") if g8 else "",
                  fmt(c, "%.0f") or "not measured", fmt(rd, "%.0f") or "not measured"))
    lines.append(END)
    return "\n".join(lines)


def update_readme(readme, table, img_rel, extra_rel):
    with open(readme) as f:
        text = f.read()
    orig = text
    if BEGIN in text and END in text and text.index(BEGIN) < text.index(END):
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + table + text[b:]
    else:
        text = text.replace(BEGIN, "").replace(END, "")
        section = ("## Performance\n\n![Milestones: TFLOP/s per stage at the reference shape](%s)\n\n"
                   "Also: [TFLOP/s against sequence length](%s), [decode bandwidth](%s), [the pipeline ablation](%s). "
                   "`make bench` (on a GPU machine) writes `plots/data/<gpu>-<date>.csv`; `make plots` redraws the "
                   "figures and this table from it.\n\n%s\n" % (img_rel, extra_rel[0], extra_rel[1], extra_rel[2],
                                                                   table))
        m = re.search(r"^## Performance[ \t]*\n", text, re.M)
        if m:
            text = text[:m.end()] + "\n" + table + "\n" + text[m.end():]
        else:
            m = re.search(r"^## Stages[ \t]*\n", text, re.M)
            nxt = re.search(r"^## ", text[m.end():], re.M) if m else None
            if m and nxt:
                at = m.end() + nxt.start()
                text = text[:at] + section + "\n" + text[at:]
            else:
                text = text.rstrip("\n") + "\n\n" + section
    if img_rel not in text:
        a = text.index(BEGIN)
        text = text[:a] + "![Milestones: TFLOP/s per stage at the reference shape](%s)\n\n" % img_rel + text[a:]
    if text != orig:
        with open(readme, "w") as f:
            f.write(text)
    return text != orig


def ablation_label(r):
    """'ring 2, ws 1, pp 1, ov 0' from the note 'switches: --ring 2 --ws 1 --pingpong 1 --overlap 0'."""
    m = dict(re.findall(r"--(kv-tile|ring|ws|pingpong|overlap|consumers|persistent|lpt-heads|kv-box|cluster|rescale-th) (\S+)",
                        r.get("note") or ""))
    short = (("kv-tile", "keys"), ("ring", "ring"), ("ws", "ws"), ("pingpong", "pp"), ("overlap", "ov"),
             ("consumers", "groups"), ("persistent", "persistent"), ("lpt-heads", "causal order: heads"),
             ("kv-box", "one K/V box a tile"), ("cluster", "cluster"),
             ("rescale-th", "max lag"))
    return ", ".join("%s %s" % (s, m[k]) for k, s in short if k in m) or (r.get("note") or "?")


def fig_ablation(run, path):
    """Bars at the reference shape, non-causal and causal: stages C and E (their protocol rows),
    then every ablation row of the run in its order (stage F's switch ladder), cuDNN and FA4 as
    lines; a third panel the same at the short causal rows (D = 64, S = 2k: the consumer groups and
    the persistent kernel), a fourth at D = 256, S = 4k, causal (128- against 64-key tiles)."""
    plt = plt_module()
    fig, axes = plt.subplots(1, 4, figsize=(24, 6.2), sharey=True, gridspec_kw={"width_ratios": [9, 9, 5, 6]})
    abl = [r for r in run.rows if r["kind"] == "ablation"]
    ymax = max([r["tflops"] or 0 for r in run.rows if r["kind"] in ("stage", "ablation", "baseline")
                and (is_ref(r, 0) or is_ref(r, 1) or is_short_causal(r) or is_d256_causal(r))] + [100]) * 1.2
    ref_shape = "B=%d, H=%d, S=%d, D=%d" % (REF["b"], REF["hq"], REF["s"], REF["d"])
    panels = ((lambda r: is_ref(r, 0), "non-causal: " + ref_shape), (lambda r: is_ref(r, 1), "causal: " + ref_shape),
              (is_short_causal, "short causal rows: B=%d, H=%d, S=%d, D=%d"
               % (SHORT_ROWS["b"], SHORT_ROWS["hq"], SHORT_ROWS["s"], SHORT_ROWS["d"])),
              (is_d256_causal, "key tile, causal: B=%d, H=%d, S=%d, D=%d"
               % (D256_ROWS["b"], D256_ROWS["hq"], D256_ROWS["s"], D256_ROWS["d"])))
    for ax, (pick, title) in zip(axes, panels):
        bars = []
        for x in ("C", "E"):
            st, r = slot(run, x, pick)
            bars.append(("stage %s" % x, STAGE_COLOR[x], st, r))
        for r in (r for r in abl if pick(r)):
            bars.append(("%s: %s" % (r["name"], ablation_label(r)), STAGE_COLOR.get(r["name"], "tab:gray"),
                         r["status"], r))
        if not any(r is not None and r["kind"] == "ablation" for _, _, _, r in bars):
            ax.text(0.5, 0.5, "not yet: no ablation rows in this run", ha="center", va="center", fontsize=14,
                    color="dimgray", transform=ax.transAxes)
        for i, (lab, col, st, r) in enumerate(bars):
            if r is not None and st == "ok" and r["tflops"]:
                ax.bar(i, r["tflops"], color=col, width=0.65)
                txt = "%.0f" % r["tflops"]
                if r["ratio"] is not None:
                    txt += "\n%.2fx" % r["ratio"]
                ax.text(i, r["tflops"] + ymax * 0.01, txt, ha="center", va="bottom", fontsize=8)
            else:
                ax.text(i, ymax * 0.3, st or "?", ha="center", va="center", fontsize=8, color="dimgray", rotation=90)
        drawn = False
        for name in ("sdpa_cudnn", "fa4"):
            b = baseline_at(run, name, pick)
            if b:
                lab_, colr, ls = BASE_STYLE[name]
                ax.axhline(b["tflops"], color=colr, ls=ls, lw=1.4, label="%s: %.0f TFLOP/s" % (lab_, b["tflops"]))
                drawn = True
        if drawn:
            ax.legend(loc="upper left", fontsize=8)
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels([lab for lab, _, _, _ in bars], rotation=35, ha="right", fontsize=8)
        ax.set_ylim(0, ymax)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("TFLOP/s (ratio to the row's fastest baseline under each bar)")
    fig.suptitle("What each pipeline idea buys: stage C -> E (TMA) -> F's ring, producer warpgroup (ws), "
                 "ping-pong (pp), overlap (ov); on short rows the consumer groups and the persistent kernel; "
                 "at D = 256 the key tile\n"
                 + run.title(), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
def slug(gpu):
    s = re.sub(r"[^a-z0-9]+", "-", gpu.lower().replace("nvidia", "")).strip("-")
    return s or "gpu"


def run_plots(data_dir, out_dir, readme, only=None, quiet=False):
    runs = choose_runs(data_dir, only)
    ref_runs = {r.gpu: r for r in choose_runs(data_dir, only, reference=True)}
    if not runs:
        if not quiet:
            print("plots: no benchmark CSV (make bench columns) in %s: nothing to plot. Run `make bench` on a "
                  "GPU machine first." % data_dir)
        return 0
    os.makedirs(out_dir, exist_ok=True)
    names = ("milestones", "tflops_vs_seqlen", "decode_bandwidth", "ablation")
    for i, run in enumerate(runs):
        suffix = "" if i == 0 else "-" + slug(run.gpu)
        paths = [os.path.join(out_dir, n + suffix + ".png") for n in names]
        ref = ref_runs.get(run.gpu, run)
        fig_milestones(ref, paths[0])
        fig_seqlen(run, paths[1])
        fig_decode(run, paths[2])
        fig_ablation(ref, paths[3])
        if not quiet:
            print("plots: %s -> %s; %s -> %s" % (ref.path, paths[0], run.path, ", ".join(paths[1:])))
    tl = newest_timelines(timeline_files(data_dir))
    if tl and fig_timeline(tl, os.path.join(out_dir, "decode_timeline.png")) and not quiet:
        print("plots: %s -> %s" % (", ".join(tl), os.path.join(out_dir, "decode_timeline.png")))
    if readme:
        base = os.path.dirname(os.path.abspath(readme))
        rel = lambda p: os.path.relpath(os.path.abspath(p), base)
        main = ref_runs.get(runs[0].gpu, runs[0])
        table = table_markdown(main, rel(main.path))
        changed = update_readme(readme, table, rel(os.path.join(out_dir, "milestones.png")),
                                (rel(os.path.join(out_dir, "tflops_vs_seqlen.png")),
                                 rel(os.path.join(out_dir, "decode_bandwidth.png")),
                                 rel(os.path.join(out_dir, "ablation.png"))))
        if not quiet:
            print("plots: README perf table %s from %s" % ("updated" if changed else "unchanged", main.path))
    return 0


# ---------------------------------------------------------------------------------------------
# Self-test on a synthetic fixture (a temporary folder; never plots/data, never committed).
def selftest():
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    tmp = tempfile.mkdtemp(prefix="fmha-plot-selftest-")
    try:
        data, out, readme = os.path.join(tmp, "data"), os.path.join(tmp, "plots"), os.path.join(tmp, "README.md")
        os.makedirs(data)
        gpu = "SYNTHETIC SELFTEST GPU"

        def row(kind, name, backend, shape, status, tf=None, ms=None, bname="", btf=None, note="", date="2000-01-02",
                gbps=None):
            b, hq, hkv, sq, skv, d, c = shape if shape else ("",) * 7
            ratio = "%.3f" % (tf / btf) if tf and btf else ""
            return [date, gpu, "1980", "000.00", "0.0", kind, name, backend, b, hq, hkv, sq, skv, d, c, status,
                    ms or "", ms * 0.99 if ms else "", tf or "", gbps or "", bname, btf or "", ratio, note]

        ref0, ref1 = (2, 16, 16, 8192, 8192, 128, 0), (2, 16, 16, 8192, 8192, 128, 1)
        rows = [
            row("ceiling", "cublas_gemm", "cublas-x", None, "ok", 700.0, 1.5),
            row("ceiling", "cublaslt_fp8_gemm", "cublaslt-x", None, "ok", 1300.0, 0.85),
            row("ceiling", "d2d_copy", "cudaMemcpyAsync", None, "ok", None, 2.0, gbps=4000.0),
            row("baseline", "sdpa_cudnn", "torch-x/sdpa-cudnn", ref0, "ok", 600.0, 1.0),
            row("baseline", "sdpa_cudnn", "torch-x/sdpa-cudnn", ref1, "ok", 500.0, 0.6),
            row("baseline", "sdpa_flash", "torch-x/sdpa-flash", ref0, "ok", 400.0, 1.5),
            row("baseline", "sdpa_flash", "torch-x/sdpa-flash", ref1, "skipped", note="refused"),
            row("baseline", "fa4", "flash-attn-4-x/cutlass-dsl-x", ref0, "ok", 650.0, 0.9),
            row("baseline", "fa4", "flash-attn-4", ref1, "skipped", note="not installed (flash_attn.cute: no module)"),
            row("baseline", "cublas_qk", "cublas-x", ref0, "ok", 220.0, 2.4),
            row("baseline", "cublas_qk", "cublas-x", (4, 16, 16, 4096, 4096, 128, 0), "ok", 210.0, 1.3),
            row("stage", "A", "sm90", ref0, "ok", 72.5, 7.5, "cublas_qk", 220.0),
            row("stage", "A", "sm90", (4, 16, 16, 4096, 4096, 128, 0), "ok", 71.0, 3.8, "cublas_qk", 210.0),
            row("stage", "A", "sm90", (1, 32, 32, 16384, 16384, 64, 0), "skipped", note="the stage refuses this shape"),
            row("stage", "B", "sm90", ref0, "failed", bname="cublas_qkpv", note="exit 1: boom"),
            row("stage", "C", "sm90", ref0, "ok", 300.0, 2.0, "sdpa_cudnn", 600.0),
            row("stage", "C", "sm90", ref1, "ok", 250.0, 1.2, "sdpa_cudnn", 500.0),
            row("stage", "C", "sm90", (1, 64, 8, 8192, 8192, 128, 0), "ok", 310.0, 9.0),
            row("stage", "D", "", None, "missing", bname="", note="stage D does not exist yet"),
            row("stage", "E", "", None, "missing", bname="sdpa_cudnn", note="stage E does not exist yet"),
            row("stage", "F", "", None, "missing", bname="sdpa_cudnn", note="stage F does not exist yet"),
            row("ablation", "F", "sm90", ref0, "ok", 420.0, 2.6, "sdpa_cudnn", 600.0,
                note="switches: --ring 2 --ws 1 --pingpong 0 --overlap 0"),
            row("ablation", "F", "sm90", ref1, "ok", 380.0, 1.5, "sdpa_cudnn", 500.0,
                note="switches: --ring 2 --ws 1 --pingpong 1 --overlap 1"),
            row("baseline", "sdpa_cudnn", "torch-x/sdpa-cudnn", (8, 32, 32, 2048, 2048, 64, 1), "ok", 390.0, 0.35),
            row("ablation", "F", "sm90", (8, 32, 32, 2048, 2048, 64, 1), "ok", 350.0, 0.39, "sdpa_cudnn", 390.0,
                note="switches: --consumers 2 --persistent 1"),
            row("ablation", "F", "sm90", (4, 8, 8, 4096, 4096, 256, 1), "ok", 600.0, 0.46, "sdpa_cudnn", 610.0,
                note="switches: --kv-tile 64 --pingpong 1 --overlap 1"),
        ]

        def write(name, rs, cols=BENCH_COLS):
            with open(os.path.join(data, name), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(cols)
                w.writerows(rs)

        # Readme and "nothing to plot" first: an empty data folder writes nothing.
        with open(readme, "w") as f:
            f.write("# T\n\nintro\n\n## Stages\n\nstage table\n\n## Backends\n\nbackends\n")
        with open(readme) as f:
            before = f.read()
        check(run_plots(data, out, readme, quiet=True) == 0, "empty data folder: exit 0")
        check(not os.path.exists(out), "empty data folder: no figures written")
        with open(readme) as f:
            check(f.read() == before, "empty data folder: README untouched")

        write("synthetic-2000-01-02.csv", rows)
        old = [list(r) for r in rows]
        for r in old:
            r[0] = "2000-01-01"
            if r[6] == "A" and r[15] == "ok":
                r[18] = 11.0  # would show up if the older run were used
        write("synthetic-2000-01-01.csv", old)
        quick = [list(r) for r in rows]
        for r in quick:
            r[0] = "2000-01-03"
            if r[6] == "A" and r[15] == "ok":
                r[18] = 22.0  # the newer quick run makes the table; the older full run would say 72.5
        write("synthetic-2000-01-03-quick.csv", quick)
        write("runner-rows.csv", [["2000-01-02", gpu, "A", "sm90"]], cols=["date", "gpu", "stage", "backend"])

        check(run_plots(data, out, readme, quiet=True) == 0, "run_plots exit 0")
        check(ablation_label({"note": "switches: --ring 2 --ws 1 --pingpong 1 --overlap 1"}) == "ring 2, ws 1, pp 1, ov 1",
              "ablation label from the note")
        check(ablation_label({"note": "switches: --consumers 2 --persistent 1"}) == "groups 2, persistent 1",
              "ablation label of a short-rows row")
        check(ablation_label({"note": "switches: --kv-tile 64 --pingpong 0 --overlap 1"}) == "keys 64, pp 0, ov 1",
              "ablation label of a D = 256 key-tile row")
        check(ablation_label({"note": "switches: --kv-box 0"}) == "one K/V box a tile 0", "the --kv-box row's label")
        check(ablation_label({"note": "switches: --rescale-th 0"}) == "max lag 0", "the --rescale-th row's label")
        check(ablation_label({"note": "switches: --lpt-heads 1"}) == "causal order: heads 1",
              "ablation label of the causal order's row")
        check(ablation_variant({"note": "switches: --prefetch 2"}) == "--prefetch 2", "a decode row's L2 prefetch")
        check(ablation_variant({"note": "switches: --kv-tma 1"}) == "--kv-tma 1", "a decode row's TMA gather")
        check(ablation_variant({"note": "switches: --fair 1"}) == "--fair 1", "a decode row's --fair")
        check(ablation_variant({"note": "switches: --m64-groups 2 --kv-tma 1"}) == "--m64-groups 2 --kv-tma 1",
              "a decode row with two switches: both")
        check(variant_what("--kv-tma 0") == "cp.async gather" and variant_what("--kv-tma 1") == "TMA gather",
              "the gather's name follows the switch's value")
        check(variant_what("--m64-groups 2 --kv-tma 0") == "two warpgroups a tile + cp.async gather",
              "two switches named in order")
        check(ablation_variant({"note": "switches: --ring 3 --splits 1"}) == "--ring 3", "a decode row's ring")
        check(ablation_variant({"note": "switches: --ring 4 --overlap 1"}) == "--ring 4 --overlap 1"
              and variant_what("--ring 4 --overlap 1") == "pipelined + P V under the next softmax", "a decode row's overlap")
        check(variant_what("--ring 1") == "unpipelined, where auto picks the ring" and variant_what("--ring 3") == "pipelined",
              "--ring 1 is the unpipelined kernel, 2-4 the pipelined decode")
        check(ablation_variant({"note": "switches: --splits 4"}) is None, "no decode variant in a splits-only note")
        dec = {"b": 32, "hq": 128, "hkv": 1, "sq": 1, "skv": 16384, "d": 128, "causal": 0, "status": "ok",
               "backend": "sm90", "time_ms_median": 0.157, "time_ms_min": 0.156, "tflops": 219.0, "gbps": 895.0,
               "baseline_name": "sdpa_flash", "baseline_tflops": 278.0, "ratio": 0.79, "note": ""}
        check(stage_line(dec, "D", "decode", 1619.0)[-1] == "895 GB/s (FP8 paged bytes); 13.5% of the e4m3 GEMM ceiling",
              "a decode row's share of the FP8 ceiling: %r" % stage_line(dec, "D", "decode", 1619.0)[-1])
        check(stage_line(dec, "D", "decode")[-1] == "895 GB/s (FP8 paged bytes)", "no share without the ceiling")
        for n in ("milestones", "tflops_vs_seqlen", "decode_bandwidth", "ablation"):
            p = os.path.join(out, n + ".png")
            ok = os.path.exists(p) and os.path.getsize(p) > 5000
            if ok:
                with open(p, "rb") as f:
                    ok = f.read(8) == b"\x89PNG\r\n\x1a\n"
            check(ok, "%s.png written and a PNG" % n)
        with open(readme) as f:
            text = f.read()
        check(text.count(BEGIN) == 1 and text.count(END) == 1, "one pair of table markers")
        check(text.count("](plots/milestones.png)") == 1, "README embeds plots/milestones.png once")
        check(text.index("## Performance") < text.index("## Backends") and text.index("## Stages") <
              text.index("## Performance"), "Performance section after Stages, before Backends")
        table = text[text.index(BEGIN):text.index(END)]
        check("synthetic-2000-01-03-quick.csv" in table, "table made from the newest run (a quick one)")
        body = [l for l in table.splitlines() if l.startswith("| ") and not l.startswith("| Stage")]
        stages_seen = [l.split("|")[1].strip() for l in body]
        order = [s for s in stages_seen if not s.startswith("baseline")]
        check(order == sorted(order, key=lambda s: (STAGES + [s]).index(s)), "rows sorted by stage: %s" % order)
        a_rows = [l for l in body if l.startswith("| A |")]
        check(len(a_rows) == 1 and "| 22.0 |" in a_rows[0] and "| 0.33 |" in a_rows[0],
              "stage A: the reference row only, its TFLOP/s and ratio, from the newest run: %s" % a_rows)
        check(not any("| 11.0 |" in l or "| 72.5 |" in l for l in body), "older runs not used for the table")
        check(choose_runs(data)[0].path.endswith("synthetic-2000-01-02.csv"),
              "the sequence-length figure keeps the newest full run")
        check(any(l.startswith("| B |") and "| failed |" in l for l in body), "stage B shown as failed")
        c_rows = [l for l in body if l.startswith("| C |")]
        check(len(c_rows) == 3 and "Hq64/Hkv8" in c_rows[2] and "| no |" in c_rows[0] and "| yes |" in c_rows[1],
              "stage C: non-causal, causal, then Llama: %s" % c_rows)
        for x in "DEF":
            check(any(l.startswith("| %s |" % x) and "| missing |" in l for l in body), "stage %s shown as missing" % x)
        check("700.0 TFLOP/s" in table and "4000 GB/s" in table, "ceilings in the table")
        check("e4m3 GEMM 8192^3 (cuBLASLt) 1300.0 TFLOP/s" in table, "the FP8 ceiling in the table")
        check(run_plots(data, out, readme, quiet=True) == 0, "second run exit 0")
        with open(readme) as f:
            check(f.read() == text, "second run leaves README unchanged")
        # a README whose section exists but lost its markers gets them back, once
        with open(readme, "w") as f:
            f.write("# T\n\n## Performance\n\nold words\n\n## Backends\n")
        run_plots(data, out, readme, quiet=True)
        with open(readme) as f:
            t2 = f.read()
        check(t2.count("## Performance") == 1 and t2.count(BEGIN) == 1 and t2.count("](plots/milestones.png)") == 1,
              "existing Performance section reused")
        # a --timeline CSV beside the bench CSVs: drawn, and never read as a bench run
        os.makedirs(os.path.join(data, "timeline"))
        with open(os.path.join(data, "timeline", "synthetic-timeline.csv"), "w") as f:
            f.write("cta,sm,entry_us,first_tile_us,exit_us\n0,0,0.000,10.000,100.000\n1,1,0.500,,2.000\n")
        with open(os.path.join(data, "timeline", "wrong-columns.csv"), "w") as f:
            f.write("a,b\n1,2\n")
        check(read_timeline_csv(os.path.join(data, "timeline", "wrong-columns.csv")) is None, "other columns refused")
        check(read_timeline_csv(os.path.join(data, "timeline", "synthetic-timeline.csv"))[1][3] is None,
              "a CTA with no tile has no first-tile time")
        run_plots(data, out, readme, quiet=True)
        check(os.path.isfile(os.path.join(out, "decode_timeline.png")), "decode_timeline.png drawn")
        # --csv: a runner CSV is refused
        try:
            choose_runs(data, os.path.join(data, "runner-rows.csv"))
            check(False, "--csv with runner columns refused")
        except SystemExit:
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if fails:
        for f_ in fails:
            print("plot.py selftest: FAIL: %s" % f_)
        return 1
    print("plot.py selftest: OK (synthetic fixture in a temporary folder, removed)")
    return 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    p = argparse.ArgumentParser(description="Figures and the README perf table from make bench CSVs.")
    p.add_argument("--data-dir", default=os.path.join(here, "data"))
    p.add_argument("--out-dir", default=here)
    p.add_argument("--readme", default=os.path.join(root, "README.md"), help="README to update ('' = none)")
    p.add_argument("--csv", help="draw this bench CSV instead of the newest per GPU")
    p.add_argument("--selftest", action="store_true", help="check the pipeline on a synthetic CSV in a temp folder")
    a = p.parse_args(argv)
    if a.selftest:
        return selftest()
    return run_plots(a.data_dir, a.out_dir, a.readme or None, a.csv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
