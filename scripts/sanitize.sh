#!/usr/bin/env bash
# make sanitize: compute-sanitizer memcheck, racecheck and synccheck over the GPU stage programs,
# each run as its own process (a test runner that forks its tests can hide them from the tool).
# The shapes cover tails, causal masks, GQA/MQA, both layouts and every head dimension a stage
# takes, at sizes the tools finish in seconds. One line per (tool, command); exit 1 if any tool
# reports an error or a stage fails. SANITIZE_MATCH=<extended regex> runs only the rows it matches
# (e.g. 'stage_D' or 'kv-tma|ring'), and says how many it skipped, so a gate can split the runs.
set -u
if ! command -v compute-sanitizer >/dev/null; then
  echo "make sanitize: compute-sanitizer not found (it ships with the CUDA toolkit on GPU machines)"
  exit 77
fi
runs=(
  "stage_A --backend sm90 --sq 300 --skv 200 --d 128"
  "stage_A --backend sm90 --sq 128 --skv 129 --d 256 --init int"
  "stage_B --backend sm90 --sq 200 --skv 300 --d 64"
  "stage_B --backend sm90 --sq 129 --skv 128 --d 128 --init int"
  "stage_C --backend sm90 --sq 200 --skv 1025 --causal --hq 4 --hkv 1 --d 128 --layout bshd"
  "stage_C --backend sm90 --sq 33 --skv 100 --d 256 --causal"
  "stage_C --backend sm90 --sq 1 --skv 113 --hq 8 --hkv 1 --d 64"
  "stage_E --backend sm90 --sq 200 --skv 1025 --causal --hq 4 --hkv 1 --d 128 --layout bshd"
  "stage_E --backend sm90 --sq 33 --skv 300 --d 256 --causal"
  "stage_E --backend sm90 --sq 1 --skv 113 --hq 8 --hkv 1 --d 64"
  "stage_F --backend sm90 --sq 200 --skv 1025 --causal --hq 4 --hkv 1 --d 128 --ring 2 --layout bshd"
  "stage_F --backend sm90 --sq 130 --skv 700 --hq 2 --hkv 2 --d 64 --ring 3 --pingpong 1 --overlap 1"
  "stage_F --backend sm90 --sq 33 --skv 300 --d 256 --causal --ring 1 --ws 0"
  "stage_F --backend sm90 --sq 200 --skv 513 --d 256 --hq 2 --hkv 1 --ring 1"
  "stage_F --backend sm90 --sq 200 --skv 700 --d 256 --hq 2 --hkv 1 --causal --kv-tile 64"
  "stage_F --backend sm90 --sq 300 --skv 1025 --d 128 --hq 2 --hkv 1 --causal --kv-tile 176"
  "stage_F --backend sm90 --sq 400 --skv 700 --causal --hq 2 --hkv 1 --d 64 --consumers 3"
  "stage_F --backend sm90 --sq 130 --skv 700 --hq 2 --hkv 2 --d 64 --ring 3 --kv-box 1"
  "stage_F --backend sm90 --sq 200 --skv 513 --d 256 --hq 2 --hkv 1 --causal --kv-box 1 --layout bshd"
  "stage_F --backend sm90 --sq 500 --skv 1025 --d 128 --hq 2 --hkv 1 --cluster 2 --layout bshd"
  "stage_F --backend sm90 --sq 700 --skv 700 --hq 2 --hkv 1 --d 64 --cluster 2 --pingpong 1 --overlap 0"
  "stage_D --backend sm90 --b 3 --hq 16 --hkv 2 --sq 2 --seqlens 1,130,300 --d 128 --page 16 --splits 3"
  "stage_D --backend sm90 --b 2 --hq 128 --hkv 1 --sq 1 --skv 400 --ragged --d 64 --page 256 --splits 1"
  "stage_D --backend sm90 --b 2 --hq 8 --hkv 8 --sq 1 --seqlens 65,257 --d 256 --page 64"
  "stage_D --backend sm90 --b 3 --hq 16 --hkv 2 --sq 2 --seqlens 1,130,700 --d 128 --page 16 --splits 2 --ring 2"
  "stage_D --backend sm90 --b 2 --hq 8 --hkv 1 --sq 1 --seqlens 129,520 --d 64 --page 64 --splits 1 --ring 3"
  "stage_D --backend sm90 --b 2 --hq 128 --hkv 1 --sq 1 --seqlens 129,700 --d 128 --page 64 --splits 1 --ring 2"
  "stage_D --backend sm90 --b 2 --hq 128 --hkv 1 --sq 1 --seqlens 129,700 --d 128 --page 64 --splits 2 --ring 3"
  "stage_D --backend sm90 --b 2 --hq 128 --hkv 1 --sq 1 --seqlens 129,700 --d 128 --page 64 --splits 2 --ring 3 --kv-tma 1"
  "stage_D --backend sm90 --b 3 --hq 16 --hkv 2 --sq 2 --seqlens 1,130,700 --d 128 --page 16 --splits 1 --prefetch 2"
  "stage_D --backend sm90 --b 3 --hq 16 --hkv 2 --sq 2 --seqlens 1,130,700 --d 128 --page 16 --splits 1 --kv-tma 1"
  "stage_D --backend sm90 --b 3 --hq 16 --hkv 2 --sq 2 --seqlens 1,130,700 --d 128 --page 16 --splits 1 --kv-tma 2"
  "stage_D --backend sm90 --b 2 --hq 8 --hkv 1 --sq 1 --seqlens 129,1300 --d 256 --page 64 --splits 2 --kv-tma 2"
  "stage_D --backend sm90 --b 2 --hq 128 --hkv 1 --sq 1 --seqlens 129,900 --d 128 --page 64 --splits 1 --kv-tma 2"
  "stage_D --backend sm90 --b 2 --hq 128 --hkv 1 --sq 1 --seqlens 129,520 --d 256 --page 256 --splits 2 --kv-tma 1"
  "stage_D --backend sm90 --b 3 --hq 16 --hkv 2 --sq 2 --seqlens 1,130,700 --d 128 --page 16 --splits 2 --kv-tma 0"
  "stage_D --backend sm90 --b 2 --hq 128 --hkv 1 --sq 1 --skv 400 --ragged --d 64 --page 256 --splits 1 --kv-tma 0"
  "stage_D --backend sm90 --b 2 --hq 128 --hkv 1 --sq 2 --seqlens 129,520 --d 128 --page 16 --splits 2 --m64-groups 2"
  "stage_D --backend sm90 --b 3 --hq 16 --hkv 2 --sq 2 --seqlens 1,130,700 --d 128 --page 16 --splits 2 --fair 2"
  "stage_D --backend sm90 --b 700 --hq 16 --hkv 2 --sq 2 --skv 300 --ragged --d 128 --page 64 --splits 2 --persistent 1"
)
mkdir -p build/reports
rc=0
if [ -n "${SANITIZE_MATCH:-}" ]; then
  kept=()
  for r in "${runs[@]}"; do grep -qE -- "$SANITIZE_MATCH" <<<"$r" && kept+=("$r"); done
  echo "make sanitize: SANITIZE_MATCH='$SANITIZE_MATCH': ${#kept[@]} of ${#runs[@]} rows"
  [ ${#kept[@]} -gt 0 ] || { echo "make sanitize: no row matches" >&2; exit 2; }
  runs=("${kept[@]}")
fi
for tool in memcheck racecheck synccheck; do
  for r in "${runs[@]}"; do
    set -- $r
    bin=$1; shift
    if [ ! -x "build/bin/$bin" ]; then echo "$tool $bin: missing"; rc=1; continue; fi
    log="build/reports/sanitize_${tool}_${bin}.log"
    compute-sanitizer --tool "$tool" --error-exitcode 99 "build/bin/$bin" "$@" --iters 0 >>"$log" 2>&1
    trc=$?
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1 | tr -s ' ')
    verdict=$(grep -E '^\[(OK|FAIL|SKIP)\]' "$log" | tail -n 1 | cut -c1-24)
    printf '%-10s exit=%-3s %-72s %-26s %s\n' "$tool" "$trc" "${summary:-no summary}" "${verdict:-?}" "$r"
    [ $trc -ne 0 ] && [ $trc -ne 77 ] && rc=1
  done
done
exit $rc
