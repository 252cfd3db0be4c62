#!/usr/bin/env bash
# make run: run every stage program at its default shape on the best backend here (or one stage
# with --stage X), show its output, then a milestone table built from the row each program
# appends to its --csv file (build/run/stage_X.csv); a program that skipped (77) or refused its
# arguments (2) writes no row and is shown with its exit code.
# Arguments after "--" go to every stage program. Exit status: 1 if any stage failed or rejected
# its arguments; a skipped stage (exit 77) is reported, not failed.
set -u
only=""
if [ "${1:-}" = "--stage" ]; then only=$2; shift 2; fi
[ "${1:-}" = "--" ] && shift
mkdir -p build/run
shopt -s nullglob
bins=(build/bin/stage_*)
if [ -n "$only" ]; then
  bins=(build/bin/stage_"$only")
  if [ ! -x "${bins[0]}" ]; then
    echo "make run: no stage '$only' (stages here: $(ls stages 2>/dev/null | tr '\n' ' '))" >&2
    exit 2
  fi
fi
if [ ${#bins[@]} -eq 0 ]; then
  echo "make run: no stages exist yet (stages/ holds no stage directory), so there is nothing to run."
  echo "make run: built the common library and tools; see README.md for the stage plan."
  exit 0
fi
rc=0
rows=()
for b in "${bins[@]}"; do
  s=${b##*/stage_}
  csv=build/run/stage_$s.csv
  rm -f "$csv"
  echo "=== stage $s: $b $* --csv $csv"
  "$b" "$@" --csv "$csv" 2>&1 | tee "build/run/stage_$s.log"
  src=${PIPESTATUS[0]}
  [ $src -ne 0 ] && [ $src -ne 77 ] && rc=1
  rows+=("$s|$src")
done
# col FILE NAME: that column of the CSV's last row (the runner writes no quoted commas in these)
col() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { v = $k } END { if (k) print v }' "$1"; }
echo
echo "Milestones (this machine):"
printf '| %-5s | %-7s | %-7s | %-12s | %-10s | %-9s | %-7s | %s\n' stage backend verdict max_abs cosine time_ms tflops exit
for r in "${rows[@]}"; do
  IFS='|' read -r s src <<<"$r"
  csv=build/run/stage_$s.csv
  if [ -s "$csv" ]; then
    printf '| %-5s | %-7s | %-7s | %-12s | %-10s | %-9s | %-7s | %s\n' "$s" "$(col "$csv" backend)" "$(col "$csv" verdict)" \
      "$(col "$csv" max_abs)" "$(col "$csv" cosine)" "$(col "$csv" time_ms_median)" "$(col "$csv" tflops)" "$src"
  else
    why="no result row"; [ "$src" = 77 ] && why="skipped"; [ "$src" = 2 ] && why="bad arguments"
    printf '| %-5s | %-7s | %-7s | %-12s | %-10s | %-9s | %-7s | %s (%s: build/run/stage_%s.log)\n' "$s" - - - - - - "$src" "$why" "$s"
  fi
done
exit $rc
