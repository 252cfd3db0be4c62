#!/usr/bin/env bash
# make sass: disassemble each stage binary for sm_90a and sm_100a and check that the instructions
# the stage is about are really there. Each stage lists them in stages/<X_name>/sass.expect, one
# rule per line: "<arch> <egrep pattern without spaces> <what it is>" (write a space in a pattern
# as [[:space:]]), e.g.
#   sm_90a  HGMMA\.64x   wgmma (QK^T on the tensor cores)
# Full listings land in build/sass/stage_<X>.<arch>.sass. Exit 1 if a pattern is missing.
# SASS_DIR=<folder> re-checks listings saved earlier (stage_<X>.<arch>.sass) without cuobjdump.
set -u
sass_dir=${SASS_DIR:-build/sass}
if [ -z "${SASS_DIR:-}" ] && ! command -v cuobjdump >/dev/null; then
  echo "make sass: cuobjdump not found"; exit 77
fi
mkdir -p "$sass_dir"
rc=0
[ $# -eq 0 ] && echo "make sass: no stage binaries yet, nothing to check"
for bin in "$@"; do
  s=${bin##*/stage_}
  dir=$(ls -d stages/"$s"_* 2>/dev/null | head -n 1)
  expect="$dir/sass.expect"
  if [ -z "${SASS_DIR:-}" ]; then
    for arch in sm_90a sm_100a; do
      cuobjdump --dump-sass --gpu-architecture "$arch" "$bin" >"$sass_dir/stage_$s.$arch.sass" 2>&1 || true
    done
  fi
  if [ ! -f "$expect" ]; then echo "stage $s: no $expect"; rc=1; continue; fi
  while read -r arch pattern what; do
    case "$arch" in ''|\#*) continue ;; esac
    n=$(grep -cE "$pattern" "$sass_dir/stage_$s.$arch.sass")
    if [ "$n" -gt 0 ]; then
      example=$(grep -m1 -oE "$pattern[^;]*" "$sass_dir/stage_$s.$arch.sass" | head -c 90)
      printf 'stage %s %-8s %-26s %5d x  (%s)  e.g. %s\n' "$s" "$arch" "$pattern" "$n" "$what" "$example"
    else
      printf 'stage %s %-8s %-26s MISSING (%s)\n' "$s" "$arch" "$pattern" "$what"; rc=1
    fi
  done <"$expect"
done
exit $rc
