#!/usr/bin/env bash
# The footgun tests (tests/footguns/test_fgNN_<slug>.c): each shows a known mistake ("broken") and
# its fix ("fixed") and prints its figures on lines that start with "FGNN".
#   footgun.sh check NN   exit 2, listing the FG numbers there are, unless test_fgNN_* exists
#   footgun.sh one NN     run build/tests/footguns/test_fgNN_* --verbose and show all its output,
#                         then every stage program that has a variant of FGNN (stage_X --faults)
#                         twice at that variant's shape, on the best backend it exists on here:
#                         with --fault NAME (broken) and without (fixed), their last lines side by
#                         side; the exit status is the test's (make footgun FG=NN builds first)
#   footgun.sh all        run every build/tests/footguns/test_fg* and print a table: FG, slug,
#                         result (pass / fail / skip: every test that ran skipped), counts, then
#                         the test's "FGnn" and broken / fixed lines and its skip reasons; logs
#                         in build/reports/footgun_fgNN.log; exit 1 if any footgun test fails
# NN may be written 7, 07, fg07 or FG07. TEST_FILTER=<glob> is passed to Criterion's --filter.
set -u
cd "$(dirname "$0")/.." || exit 1
shopt -s nullglob
bindir=${FOOTGUN_BINDIR:-build/tests/footguns} # (override: for testing this script)

available() { # the FG numbers with a test source, e.g. "01 02 03"
  local f n out=()
  for f in tests/footguns/test_fg*.c; do
    n=${f##*/test_fg}; out+=("${n%%_*}")
  done
  echo "${out[*]:-none}"
}

normalize() { # 7 | 07 | fg07 | FG07 -> 07; empty when not a number
  local n=${1#[fF][gG]}
  [[ $n =~ ^[0-9]{1,2}$ ]] || return 1
  printf '%02d' "$((10#$n))"
}

usage_fail() {
  echo "make footgun: $1; use FG=NN with NN one of: $(available)" >&2
  exit 2
}

check() {
  [ -z "${1:-}" ] && usage_fail "FG is not set"
  local nn srcs
  nn=$(normalize "$1") || usage_fail "FG=$1 is not a footgun number"
  srcs=(tests/footguns/test_fg"$nn"_*.c)
  [ ${#srcs[@]} -eq 0 ] && usage_fail "no footgun test FG$nn (tests/footguns/test_fg${nn}_*.c)"
  echo "$nn $(basename "${srcs[0]}" .c)"
}

crit_args=(--jobs=1 --verbose)
[ -n "${TEST_FILTER:-}" ] && crit_args+=(--filter="$TEST_FILTER")

run_one() {
  local found nn bin
  found=$(check "${1:-}") || exit 2
  nn=${found%% *}; bin=$bindir/${found#* }
  if [ ! -x "$bin" ]; then
    echo "make footgun: $bin is not built (make tests builds it)" >&2
    exit 2
  fi
  echo "=== FG$nn: $bin ${crit_args[*]}"
  "$bin" "${crit_args[@]}" 2>&1
  local rc=$?
  echo "=== FG$nn: exit $rc ($([ $rc -eq 0 ] && echo pass || echo FAIL))"
  stage_level "$nn"
  return $rc
}

stage_level() { # NN: the stage programs' --fault variants of FGNN, broken then fixed
  local nn=$1 prog line name demo broken fixed be shown=0
  for prog in build/bin/stage_*; do
    while read -r line; do
      case $line in *" FG$nn "*) ;; *) continue ;; esac
      name=${line%% *}
      demo=$(echo "$line" | sed -n 's/.*(shows at: \(.*\))$/\1/p')
      [ $shown = 0 ] && echo "=== FG$nn at stage level (each stage program, broken then fixed, same shape and backend)"
      shown=1
      # shellcheck disable=SC2086
      broken=$("$prog" $demo --fault "$name" 2>/dev/null | tail -n 1)
      be=$(echo "$broken" | sed -n 's/.* backend=\([a-z0-9]*\) .*/\1/p')
      # shellcheck disable=SC2086
      fixed=$("$prog" $demo ${be:+--backend $be} 2>/dev/null | tail -n 1)
      echo "${prog##*/} $demo"
      echo "  broken (--fault $name): $broken"
      echo "  fixed:                  $fixed"
    done < <("$prog" --faults 2>/dev/null)
  done
  [ $shown = 0 ] && echo "=== FG$nn: no stage program has a variant of it (the test above is its only level)"
  return 0
}

# levels LOG NN: where FGNN ran: each test's level from its name (..._sm90: the GPU; ..._sm100:
# a B200; anything else: the host model or the host checker), passed or skipped, and the stage
# programs that have a --fault variant of it.
levels() {
  local log=$1 nn=$2 ran skipped stages p
  lvl() { sed -n "s/^\[$1\] [a-z0-9_]*::\([a-z0-9_]*\).*/\1/p" "$log" |
    awk -F_ '{ l = $NF; if (l != "sm90" && l != "sm100") l = "host"; if (!s[l]++) o = o (o ? ", " : "") l } END { print o }'; }
  ran=$(lvl PASS); skipped=$(lvl SKIP)
  stages=""
  for p in build/bin/stage_*; do
    "$p" --faults 2>/dev/null | grep -q " FG$nn " && stages+="${stages:+, }${p##*/} --fault"
  done
  echo "ran: ${ran:-none}${skipped:+; skipped here: $skipped}; stage level: ${stages:-none}"
}

run_all() {
  local bins=("$bindir"/test_fg*) b name nn slug log brc res synth counts sk rc=0 nfail=0
  if [ ${#bins[@]} -eq 0 ]; then
    echo "make footguns: no footgun test binaries in $bindir (make tests builds them)" >&2
    exit 2
  fi
  mkdir -p build/reports
  printf '%-4s %-24s %-6s %s\n' FG slug result tests
  for b in "${bins[@]}"; do
    [ -x "$b" ] || continue
    name=${b##*/test_fg}; nn=${name%%_*}; slug=${name#*_}
    log=build/reports/footgun_fg$nn.log
    "$b" "${crit_args[@]}" >"$log" 2>&1
    brc=$?
    synth=$(grep -E 'Synthesis:' "$log" | tail -n 1 | sed 's/^.*Synthesis: //')
    read -r pa fa cr < <(echo "$synth" | awk -F'|' '{
        for (i = 1; i <= NF; i++) { split($i, kv, ":"); gsub(/ /, "", kv[1]); gsub(/[^0-9]/, "", kv[2]); v[kv[1]] = kv[2] }
        printf "%d %d %d\n", v["Passing"], v["Failing"], v["Crashing"] }')
    sk=$(grep -cE '^\[SKIP\]' "$log")
    if [ $brc -ne 0 ]; then res=fail; rc=1; nfail=$((nfail + 1))
    elif [ "${pa:-0}" -eq 0 ] && [ "$sk" -gt 0 ]; then res=skip
    else res=pass; fi
    counts="${pa:-0} passed, ${fa:-0} failed, ${cr:-0} crashed, $sk skipped"
    [ -z "$synth" ] && counts="no Criterion synthesis (exit $brc)"
    [ $brc -ne 0 ] && counts+="; exit $brc, log $log"
    printf '%-4s %-24s %-6s %s\n' "FG$nn" "$slug" "$res" "$counts"
    echo "       levels: $(levels "$log" "$nn")"
    # The test's own figures (Criterion's "[RUN ]", "[PASS]" ... lines carry test names with
    # "fixed" in them, so they are left out); then why tests skipped, once per reason.
    grep -iE '^FG[0-9]+|broken|fixed' "$log" | grep -v '^\[' | sed 's/^/       /'
    grep -E '^\[SKIP\]' "$log" | sed 's/^\[SKIP\] [^:]*::[^:]*: //' | sort | uniq -c |
      awk '{ n = $1; $1 = ""; printf "       skipped %d: %s\n", n, substr($0, 2) }'
    [ "$res" = fail ] && grep -E '^\[(FAIL|----)\]|CRASH|Timed out' "$log" | grep -v '^\[----\] Criterion v' | head -n 10 | sed 's/^/     ! /'
  done
  echo "make footguns: ${#bins[@]} footgun tests, $nfail failed (logs: build/reports/footgun_fg*.log)"
  return $rc
}

case ${1:-} in
  check) check "${2:-}" >/dev/null ;;
  one) run_one "${2:-}" ;;
  all) run_all ;;
  *) echo "usage: $0 check NN | one NN | all" >&2; exit 2 ;;
esac
