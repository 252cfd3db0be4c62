#!/usr/bin/env bash
# Compare two builds of the stage programs at the same shapes, on this GPU, in one run: each
# shape runs A, B, A, B, ... (ROUNDS times each, alternating, so clock and thermal drift hit both
# alike) and the table shows every median time and the ratio of the medians of medians.
#   scripts/ab_compare.sh OLD_BIN_DIR NEW_BIN_DIR "stage_C --b 2 --hq 16 ..." ["stage_A ..." ...]
# ROUNDS=3 by default. Each run is unchecked and timed by the program itself (ITERS=20 samples after
# WARMUP=3 launches, as make bench). Rows of a few ms reach the H200's power cap within those 20
# samples, so their medians move with the clock; ITERS=150 WARMUP=10 times them at the capped
# steady state, where such rows stop moving (notes/device-runs.md, runs 57-58).
set -u
old=$1 new=$2; shift 2
rounds=${ROUNDS:-3} iters=${ITERS:-20} warmup=${WARMUP:-3}
printf '%-70s %-5s %s\n' "command" "build" "time_ms (median of $iters samples), per round"
for cmd in "$@"; do
  bin=${cmd%% *}; args=${cmd#* }
  to=""; tn=""
  for r in $(seq "$rounds"); do
    for side in old new; do
      dir=$old; [ $side = new ] && dir=$new
      t=$("$dir/$bin" $args --no-check --iters "$iters" --warmup "$warmup" | sed -n 's/^\[OK\].* time_ms=\([0-9.]*\).*/\1/p')
      [ -z "$t" ] && t=nan
      if [ $side = old ]; then to="$to $t"; else tn="$tn $t"; fi
    done
  done
  printf '%-70s %-5s %s\n' "$cmd" old "$to" "" new "$tn"
  awk -v a="$to" -v b="$tn" 'function med(s, n, x, i, j, t) { n = split(s, x, " ");
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
      return x[int((n + 1) / 2)] }
    BEGIN { printf "%-70s ratio old/new = %.3f (>1: new faster)\n", "", med(a) / med(b) }'
done
