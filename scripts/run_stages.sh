#!/usr/bin/env bash
# make run: run every stage program at its default shape on the best backend here (or one stage
# with --stage X), show its output, then a milestone table built from each program's last line.
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
  echo "=== stage $s: $b $*"
  "$b" "$@" 2>&1 | tee "build/run/stage_$s.log"
  src=${PIPESTATUS[0]}
  last=$(grep -E '^\[(OK|FAIL|SKIP)\]' "build/run/stage_$s.log" | tail -n 1)
  [ $src -ne 0 ] && [ $src -ne 77 ] && rc=1
  rows+=("$s|$src|$last")
done
echo
echo "Milestones (this machine):"
printf '| %-5s | %-7s | %-6s | %-10s | %-9s | %-7s | %s\n' stage backend result err time_ms tflops "line"
for r in "${rows[@]}"; do
  IFS='|' read -r s src last <<<"$r"
  verdict=$(echo "$last" | sed -n 's/^\[\([A-Z]*\)\].*/\1/p')
  be=$(echo "$last" | sed -n 's/.*backend=\([^ :]*\).*/\1/p')
  err=$(echo "$last" | sed -n 's/.* err=\([^ ]*\).*/\1/p')
  tm=$(echo "$last" | sed -n 's/.* time_ms=\([^ ]*\).*/\1/p')
  tf=$(echo "$last" | sed -n 's/.* tflops=\([^ ]*\).*/\1/p')
  printf '| %-5s | %-7s | %-6s | %-10s | %-9s | %-7s | exit %s\n' "$s" "${be:--}" "${verdict:-?}" "${err:--}" "${tm:--}" "${tf:--}" "$src"
done
exit $rc
