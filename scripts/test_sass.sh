#!/usr/bin/env bash
# make test's last step: the SASS check of `make sass` (scripts/sass_check.sh) over the stage
# binaries the test build made, so every change's sm_90a and sm_100a code is checked for the
# instructions each stage is about (stages/*/sass.expect), here too where no GPU can run it.
# Its table lands in build/reports/sass.log; only a failing rule's lines are shown. Where no
# cuobjdump is found (make deps fetches one where it can) it says so and passes: the GPU suites
# skip the same way on a machine without a GPU. Exit 1 when a rule fails. SASS_LOG=<file> puts
# the table elsewhere (tests).
set -u
log=${SASS_LOG:-build/reports/sass.log}
mkdir -p "$(dirname "$log")"
scripts/sass_check.sh "$@" >"$log" 2>&1
rc=$?
case $rc in
  0) echo "sass: all $(grep -c '^stage ' "$log") rules of $# stages hold on sm_90a and sm_100a (make sass; table in $log)" ;;
  77) echo "sass: not checked: $(head -n 1 "$log")"; rc=0 ;;
  # sass_check.sh's failure lines, and the indented lines of cuobjdump's own message after "no SASS"
  *) echo "sass: FAILED (make sass; table in $log):"
     grep -E '^stage [^ ]+: no |^stage .* (MISSING|PRESENT [0-9]|OUT OF ORDER|OVER BUDGET)|^    ' "$log" | head -n 40 ;;
esac
exit $rc
