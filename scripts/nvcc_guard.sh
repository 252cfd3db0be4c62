#!/usr/bin/env bash
# Run one nvcc command for a stage kernel and fail it on ptxas C7515 (wgmma serialized).
#   scripts/nvcc_guard.sh SOURCE OBJECT -- nvcc ARGS...
# The command runs unchanged: its stdout and stderr are shown as they come (stderr is teed into a
# temporary file). If nvcc fails, its exit status is returned. If it succeeds but ptxas reported
# "(C7515)", OBJECT is deleted and the guard exits 1 with a message naming SOURCE: a serialized
# wgmma pipeline loses most of the tensor-core throughput while every result stays correct, so no
# test would notice it. The Makefile applies the guard to sources under stages/ only.
set -u
if [ $# -lt 4 ] || [ "$3" != "--" ]; then
  echo "usage: $0 SOURCE OBJECT -- COMMAND [ARGS...]" >&2
  exit 2
fi
src=$1 obj=$2
shift 3

log=$(mktemp "${TMPDIR:-/tmp}/nvcc_guard.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT

# stdout goes straight through (fd 3); stderr goes through tee, to the log and back to stderr.
{ "$@" 2>&1 1>&3 3>&- | tee "$log" >&2; } 3>&1
rc=${PIPESTATUS[0]}
[ "$rc" -ne 0 ] && exit "$rc"

if grep -q '(C7515)' "$log"; then
  rm -f "$obj"
  {
    echo "$src: error: wgmma serialized (ptxas C7515): an accumulator register is written by a" \
      "non-wgmma instruction inside a wgmma pipeline stage; unroll the wgmma loop over a" \
      "compile-time head dim and keep the accumulators untouched between wgmma_fence and wgmma_wait"
    grep '(C7515)' "$log" | sed 's/^/  /'
    echo "$src: deleted $obj (scripts/nvcc_guard.sh fails stage kernels on ptxas C7515)"
  } >&2
  exit 1
fi
exit 0
