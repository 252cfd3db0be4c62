#!/usr/bin/env python3
"""Fused-attention baselines: PyTorch's scaled_dot_product_attention and FlashAttention-4 (README, "How speed is measured").

For each shape and each backend asked for (cuDNN fused attention, SDPBackend.CUDNN_ATTENTION, and
PyTorch's built-in flash attention, SDPBackend.FLASH_ATTENTION), only that backend is allowed, so
a shape it refuses is reported as skipped, never silently run by another kernel. This is cuDNN
reached through PyTorch, not through cuDNN's C backend API: every line says so (impl=...).
Backend fa4 is FlashAttention-4's CuTe-DSL kernel (`flash_attn.cute.flash_attn_func`, pip
flash-attn-4; on Hopper its sm90 path), called on [B, S, H, D] copies of the same inputs with GQA
native; where it cannot be imported every fa4 line is a SKIP saying "not installed". Its kernels
are compiled on first use, inside the warm-up.

Inputs: bf16, layout [B, H, S, D], random normal. GQA (Hq != Hkv): enable_gqa=True; if the backend
refuses that, K and V are expanded with repeat_interleave before timing (gqa=repeat_interleave).
Timing: warm-up, then per sample: write a 256 MiB buffer (evicts L2), CUDA event, one SDPA call,
CUDA event. Median and min of --iters (>= 20) samples. FLOPs = 4*B*Hq*Sq*Skv*D, halved for causal.

Shapes: one from the flags (--b --hq --hkv --sq --skv --d --causal 0|1), or a file (--shapes FILE)
with one shape a line, "b hq hkv sq skv d causal", '#' starts a comment.

Output, one line per (shape, backend):
  [OK] baseline=sdpa_cudnn b=.. hq=.. hkv=.. sq=.. skv=.. d=.. causal=.. time_ms=.. time_min_ms=..
       tflops=.. gqa=none|native|repeat_interleave impl=torch-2.11.0/sdpa-cudnn-91900
  [SKIP] baseline=sdpa_flash b=.. ... reason=<why the backend refused>
  [FAIL] baseline=... reason=<error>
Exit status: 0 when every line is OK or SKIP, 1 if any FAIL, 2 bad arguments, 77 when there is no
CUDA device (or no torch) here.
"""
import argparse
import math
import statistics
import sys
import time
import warnings

BACKENDS = ("cudnn", "flash", "fa4")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--b", type=int, default=2)
    p.add_argument("--hq", type=int, default=16)
    p.add_argument("--hkv", type=int, default=None, help="KV heads (default: --hq)")
    p.add_argument("--sq", type=int, default=8192)
    p.add_argument("--skv", type=int, default=None, help="keys (default: --sq)")
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--causal", type=int, choices=(0, 1), default=0)
    p.add_argument("--shapes", help="file with one shape a line: b hq hkv sq skv d causal")
    p.add_argument("--backends", default="cudnn,flash", help="comma list of: cudnn, flash, fa4")
    p.add_argument("--iters", type=int, default=20, help="timed samples (>= 20)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--warmup-ms", type=int, default=0,
                   help="then calls (8 between syncs) until this many ms have passed, as the stage programs' timer")
    p.add_argument("--flush-mib", type=int, default=256, help="L2 flush buffer written before each sample")
    a = p.parse_args(argv)
    if a.iters < 20:
        p.error("--iters must be >= 20 (median and min of at least 20 samples)")
    a.backends = [x.strip() for x in a.backends.split(",") if x.strip()]
    for x in a.backends:
        if x not in BACKENDS:
            p.error("--backends: '%s' is not one of %s" % (x, ", ".join(BACKENDS)))
    return a


def read_shapes(a):
    if not a.shapes:
        return [(a.b, a.hq, a.hkv or a.hq, a.sq, a.skv or a.sq, a.d, a.causal)]
    shapes = []
    with open(a.shapes) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            v = line.split()
            if len(v) != 7:
                raise SystemExit("%s:%d: want 7 integers 'b hq hkv sq skv d causal', got %r" % (a.shapes, n, line))
            shapes.append(tuple(int(x) for x in v))
    return shapes


def shape_str(s):
    b, hq, hkv, sq, skv, d, causal = s
    return "b=%d hq=%d hkv=%d sq=%d skv=%d d=%d causal=%d" % (b, hq, hkv, sq, skv, d, causal)


def flops(s):
    b, hq, _, sq, skv, d, causal = s
    f = 4.0 * b * hq * sq * skv * d
    return f / 2 if causal else f


def main(argv):
    a = parse_args(argv)
    shapes = read_shapes(a)
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        import torch.nn.functional as F
    except Exception as e:  # no torch here: nothing to measure against
        print("[SKIP] baseline=sdpa: PyTorch not importable (%s)" % e)
        return 77
    if not torch.cuda.is_available():
        print("[SKIP] baseline=sdpa: no CUDA device visible to PyTorch")
        return 77

    dev = torch.device("cuda")
    fa4, fa4_why = (load_fa4() if "fa4" in a.backends else (None, None))
    kinds = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    cudnn_v = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    impl = {
        "cudnn": "torch-%s/sdpa-cudnn-%s" % (torch.__version__, cudnn_v),
        "flash": "torch-%s/sdpa-flash" % torch.__version__,
        "fa4": fa4[1] if fa4 else "flash-attn-4",
    }
    print("sdpa: torch %s, CUDA %s, cuDNN %s, GPU %s" % (torch.__version__, torch.version.cuda, cudnn_v,
                                                         torch.cuda.get_device_name(0)))
    sys.stdout.flush()
    flush = torch.empty(a.flush_mib << 20, dtype=torch.uint8, device=dev)
    ev0 = torch.cuda.Event(enable_timing=True)
    ev1 = torch.cuda.Event(enable_timing=True)
    rc = 0
    for s in shapes:
        b, hq, hkv, sq, skv, d, causal = s
        if hq % hkv:
            print("[FAIL] baseline=sdpa %s reason=hq must be a multiple of hkv" % shape_str(s))
            rc = 1
            continue
        gen = torch.Generator(device=dev)
        gen.manual_seed(1)
        try:
            q = torch.randn(b, hq, sq, d, device=dev, dtype=torch.bfloat16, generator=gen)
            k = torch.randn(b, hkv, skv, d, device=dev, dtype=torch.bfloat16, generator=gen)
            v = torch.randn(b, hkv, skv, d, device=dev, dtype=torch.bfloat16, generator=gen)
        except getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError) as e:
            for name in a.backends:
                print("[SKIP] baseline=sdpa_%s %s reason=inputs do not fit: %s"
                      % (name, shape_str(s), str(e).splitlines()[0]))
            continue
        for name in a.backends:
            if name == "fa4":
                line = run_fa4(torch, fa4, fa4_why, impl[name], s, q, k, v, flush, ev0, ev1, a)
            else:
                line = run_one(torch, F, sdpa_kernel, kinds[name], name, impl[name], s, q, k, v, flush, ev0, ev1, a)
            print(line)
            sys.stdout.flush()
            if line.startswith("[FAIL]"):
                rc = 1
        del q, k, v
        torch.cuda.empty_cache()
    return rc


def run_one(torch, F, sdpa_kernel, kind, name, impl, s, q, k, v, flush, ev0, ev1, a):
    b, hq, hkv, sq, skv, d, causal = s
    tag = "baseline=sdpa_%s %s" % (name, shape_str(s))

    def call_with(kk, vv, gqa):
        with sdpa_kernel([kind]):
            if gqa:
                return F.scaled_dot_product_attention(q, kk, vv, is_causal=bool(causal), enable_gqa=True)
            return F.scaled_dot_product_attention(q, kk, vv, is_causal=bool(causal))

    def refused(e):
        return isinstance(e, RuntimeError) and "No available kernel" in str(e)

    gqa_mode = "none"
    kk, vv = k, v
    why = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if hq != hkv:
                try:
                    out = call_with(k, v, True)
                    gqa_mode = "native"
                except RuntimeError as e:
                    if not refused(e):
                        raise
                    why.append("enable_gqa refused")
                    rep = hq // hkv
                    kk = k.repeat_interleave(rep, dim=1)
                    vv = v.repeat_interleave(rep, dim=1)
                    out = call_with(kk, vv, False)
                    gqa_mode = "repeat_interleave"
            else:
                out = call_with(k, v, False)
            torch.cuda.synchronize()
        except Exception as e:
            reasons = [str(w.message).splitlines()[0] for w in caught][:3]
            msg = "; ".join(why + reasons + [str(e).splitlines()[0]])
            msg = " ".join(msg.split())
            return ("[SKIP] %s reason=%s" if refused(e) or isinstance(e, getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError))
                    else "[FAIL] %s reason=%s") % (tag, msg)
    if not bool(torch.isfinite(out).all()):
        return "[FAIL] %s reason=non-finite output" % tag
    del out
    use_gqa = gqa_mode == "native"
    return timed_line(torch, lambda: call_with(kk, vv, use_gqa), tag, s, gqa_mode, impl, flush, ev0, ev1, a)


def timed_line(torch, call, tag, s, gqa_mode, impl, flush, ev0, ev1, a):
    """Warm-up, then --iters samples of one call each after an L2 flush: the [OK] line, or [FAIL]."""
    try:
        for _ in range(a.warmup):
            call()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        while (time.perf_counter() - t0) * 1e3 < a.warmup_ms:
            for _ in range(8):
                call()
            torch.cuda.synchronize()
        ms = []
        for i in range(a.iters):
            flush.fill_(i & 0xFF)
            ev0.record()
            call()
            ev1.record()
            ev1.synchronize()
            ms.append(ev0.elapsed_time(ev1))
    except Exception as e:
        return "[FAIL] %s reason=%s" % (tag, " ".join(str(e).split())[:300])
    med = statistics.median(ms)
    tf = flops(s) / (med * 1e-3) / 1e12
    if not math.isfinite(tf):
        return "[FAIL] %s reason=bad timing %r" % (tag, ms)
    return ("[OK] %s time_ms=%.4f time_min_ms=%.4f tflops=%.2f gqa=%s impl=%s"
            % (tag, med, min(ms), tf, gqa_mode, impl))


def load_fa4():
    """(flash_attn_func, impl string), None: or (None, why it cannot be imported)."""
    try:
        from importlib.metadata import version
        from flash_attn.cute import flash_attn_func
    except Exception as e:
        return None, "not installed (flash_attn.cute: %s)" % " ".join(str(e).split())[:160]
    def ver(pkg):
        try:
            return version(pkg)
        except Exception:
            return "?"
    return (flash_attn_func, "flash-attn-4-%s/cutlass-dsl-%s" % (ver("flash-attn-4"), ver("nvidia-cutlass-dsl"))), None


def run_fa4(torch, fa4, why, impl, s, q, k, v, flush, ev0, ev1, a):
    b, hq, hkv, sq, skv, d, causal = s
    tag = "baseline=fa4 %s" % shape_str(s)
    if fa4 is None:
        return "[SKIP] %s reason=%s" % (tag, why)
    func = fa4[0]
    qb, kb, vb = (x.transpose(1, 2).contiguous() for x in (q, k, v))  # its layout: [B, S, H, D]

    def call():
        return func(qb, kb, vb, causal=bool(causal))[0]

    try:
        out = call()
        torch.cuda.synchronize()
    except Exception as e:
        return "[FAIL] %s reason=%s" % (tag, " ".join(str(e).split())[:300])
    if not bool(torch.isfinite(out).all()):
        return "[FAIL] %s reason=non-finite output" % tag
    del out
    line = timed_line(torch, call, tag, s, "native" if hq != hkv else "none", impl, flush, ev0, ev1, a)
    del qb, kb, vb
    return line


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
