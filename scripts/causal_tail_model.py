#!/usr/bin/env python3
"""How long the last wave of a causal launch runs, for each order of the query tiles.

A causal query tile x (of 128 rows, keys in tiles of 128) visits x + 1 KV tiles, so the CTAs of one
launch differ in length by up to S / 128 times. With one CTA per SM (stage F's SMEM) the GPU starts
them in launch order as SMs free up: list scheduling. This model runs that schedule with each CTA
costing its KV tiles plus a fixed prologue/epilogue (--fixed, in KV tiles) and prints the makespan
over the perfect split (total work / SMs) for three orders:
  head     longest first within each head, heads one after another (stage F's old order);
  section  longest first across L2 sections of heads (fmha_tile_of with p->pipe.lpt_heads, the
           heads whose K and V fit --mib MiB: fmha_lpt_heads);
  global   longest first across every head (balanced, but each wave reads many heads' K and V).

  scripts/causal_tail_model.py                   the benchmark's causal shapes
  scripts/causal_tail_model.py --mib 32 --fixed 0.5
The model counts no memory effects: it says what the order does to the tail, not to L2.
"""
import argparse
import heapq

SHAPES = [  # B, Hq, Hkv, S, D: the FA3-protocol and Llama causal rows of make bench (S >= 2k)
    (8, 16, 16, 2048, 128), (4, 16, 16, 4096, 128), (2, 16, 16, 8192, 128), (1, 16, 16, 16384, 128),
    (1, 64, 8, 2048, 128), (1, 64, 8, 4096, 128), (1, 64, 8, 8192, 128),
    (8, 8, 8, 2048, 256), (4, 8, 8, 4096, 256), (2, 8, 8, 8192, 256), (1, 8, 8, 16384, 256),
]


def makespan(costs, sms):
    free = [0.0] * sms  # when each SM is next free
    for c in costs:
        heapq.heappush(free, heapq.heappop(free) + c)
    return max(free)


def lpt_heads(b, hq, hkv, s, d, mib):
    """fmha_lpt_heads: the most (a power of 2) (batch, head) pairs whose K and V fit mib MiB."""
    per = s * d * 2 * 2 // (hq // hkv)
    n = 1
    while 2 * n <= b * hq and 2 * n * per <= mib << 20:
        n *= 2
    return n


def orders(b, hq, hkv, s, d, mib, fixed, bm=128, bn=128):
    nq = (s + bm - 1) // bm
    cost = [((x + 1) * bm + bn - 1) // bn + fixed for x in range(nq)]  # tile x: keys up to its last row
    nh = b * hq
    head = [cost[nq - 1 - i] for _ in range(nh) for i in range(nq)]
    sec = lpt_heads(b, hq, hkv, s, d, mib)
    section = []
    for s0 in range(0, nh, sec):
        section += [cost[nq - 1 - lvl] for lvl in range(nq) for _ in range(min(sec, nh - s0))]
    return sec, {"head": head, "section": section, "global": sorted(head, reverse=True)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sms", type=int, default=132, help="SMs, one CTA each (H200: 132)")
    ap.add_argument("--mib", type=int, default=16, help="L2 budget of a section's K and V (stage F: 16)")
    ap.add_argument("--fixed", type=float, default=1.0, help="a CTA's prologue + epilogue, in KV tiles")
    a = ap.parse_args()
    print("makespan / (work / SMs), %d SMs, %.1f KV tiles of fixed cost a CTA" % (a.sms, a.fixed))
    print("%-24s %8s %8s %8s %8s" % ("shape (causal)", "heads", "head", "section", "global"))
    for b, hq, hkv, s, d in SHAPES:
        sec, o = orders(b, hq, hkv, s, d, a.mib, a.fixed)
        ideal = sum(o["head"]) / a.sms
        shape = "B%d Hq%d/Hkv%d S%d D%d" % (b, hq, hkv, s, d) if hq != hkv else "B%d H%d S%d D%d" % (b, hq, s, d)
        print("%-24s %8d %8.3f %8.3f %8.3f" % (shape, sec, *(makespan(o[k], a.sms) / ideal for k in ("head", "section", "global"))))


if __name__ == "__main__":
    main()
