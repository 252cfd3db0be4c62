#!/usr/bin/env bash
# Run Criterion test binaries (make test). Each binary runs all its tests, each in its own process
# (Criterion's isolation: a crash or a sticky CUDA error cannot leak into the next test). GPU
# suites run one test at a time so they never share the GPU, except gpu/test_stage_tables with
# GPU_TABLE_JOBS=N: its tests time nothing and spend most of their time in the CPU's fp64
# references, so N of them may share the GPU (on the H200, 6 jobs ran its 22 tests in 132 s, one
# at a time over 450). TAP reports land in build/reports/.
# TEST_FILTER='suite/*' is passed to Criterion's --filter. Exit status: non-zero if any binary fails.
set -u
mkdir -p build/reports
jobs_cpu=${JOBS:-$(nproc 2>/dev/null || echo 2)}
rc=0
tested=0; passing=0; failing=0; crashing=0; skipped=0; failed_bins=()
for t in "$@"; do
  name=${t#build/tests/}
  case $name in gpu/test_stage_tables) jobs=${GPU_TABLE_JOBS:-1} ;; gpu/*) jobs=1 ;; *) jobs=$jobs_cpu ;; esac
  log=build/reports/${name//\//_}.log
  args=(--jobs="$jobs" --verbose=1 --tap=build/reports/${name//\//_}.tap)
  [ -n "${TEST_FILTER:-}" ] && args+=(--filter="$TEST_FILTER")
  "$t" "${args[@]}" >"$log" 2>&1
  brc=$?
  # Skips and failures are shown with their reason; passes only as the per-binary synthesis.
  grep -E '\[(SKIP|FAIL)\]|\[----\].*(Assertion|failed|crash|Timed out)|Warning!|CRASH|Timeout' "$log" | head -n 40
  synth=$(grep -E 'Synthesis:' "$log" | tail -n 1 | sed 's/^.*Synthesis: //')
  printf '%-44s %s\n' "$name" "${synth:-no synthesis line (exit $brc)}"
  read -r te pa fa cr < <(echo "$synth" | awk -F'|' '{
      for (i = 1; i <= NF; i++) { split($i, kv, ":"); gsub(/ /, "", kv[1]); gsub(/[^0-9]/, "", kv[2]); v[kv[1]] = kv[2] }
      printf "%d %d %d %d\n", v["Tested"], v["Passing"], v["Failing"], v["Crashing"] }')
  sk=$(grep -cE '\[SKIP\]' "$log")
  tested=$((tested + ${te:-0})); passing=$((passing + ${pa:-0})); failing=$((failing + ${fa:-0}))
  crashing=$((crashing + ${cr:-0})); skipped=$((skipped + sk))
  if [ $brc -ne 0 ]; then rc=1; failed_bins+=("$name (exit $brc, log $log)"); fi
done
echo "TOTAL: $# binaries, tested $tested, passing $passing, failing $failing, crashing $crashing, skipped $skipped"
if [ $rc -ne 0 ]; then
  echo "FAILED binaries:"; printf '  %s\n' "${failed_bins[@]}"
fi
exit $rc
