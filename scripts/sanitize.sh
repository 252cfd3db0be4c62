#!/usr/bin/env bash
# make sanitize: run every GPU test binary under compute-sanitizer's memcheck, racecheck and
# synccheck, one test process at a time. Prints one summary line per (tool, binary) and fails if
# any tool reports an error. Logs: build/reports/sanitize_<tool>_<binary>.log
set -u
if ! command -v compute-sanitizer >/dev/null; then
  echo "make sanitize: compute-sanitizer not found (it ships with the CUDA toolkit on GPU machines)"
  exit 77
fi
mkdir -p build/reports
rc=0
for tool in memcheck racecheck synccheck; do
  for t in "$@"; do
    name=$(basename "$t")
    log=build/reports/sanitize_${tool}_${name}.log
    # --target-processes all: Criterion runs each test in a child process.
    FMHA_TEST_QUICK=1 compute-sanitizer --tool "$tool" --target-processes all --error-exitcode 99 \
      "$t" --jobs=1 >"$log" 2>&1
    trc=$?
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    synth=$(grep -E 'Synthesis:' "$log" | tail -n 1 | sed 's/^.*Synthesis: //')
    printf '%-10s %-24s exit=%-3s %s | %s\n' "$tool" "$name" "$trc" "${summary:-no summary}" "$synth"
    [ $trc -ne 0 ] && rc=1
  done
done
exit $rc
