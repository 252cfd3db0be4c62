#!/usr/bin/env bash
# What the GPU machine runs (make gpu-test): describe the machine, then `make test` with the
# Criterion bundle in .criterion-rt (made by `make criterion-bundle` where Criterion is installed),
# which ends with the SASS check here even after a part of the suite. The exit status is make
# test's; 77 (before anything else) where there is no NVIDIA GPU. GPU_TEST_SANITIZE=<seconds> also
# runs make sanitize under that time limit.
# TEST_GROUPS (the Makefile's) picks the folders of tests/ to run, e.g. "gpu footguns" in one
# command and "stages unit" in the next; GPU_TABLE_JOBS=6 runs the stage tables 6 at a time
# (scripts/run_tests.sh).
set -u
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu-test: no NVIDIA GPU here (nvidia-smi not found); skipped (exit 77)"
  exit 77
fi
if ! gpus=$(nvidia-smi -L 2>&1) || ! grep -q '^GPU ' <<<"$gpus"; then
  echo "gpu-test: no usable NVIDIA GPU here (nvidia-smi -L: $(head -n 1 <<<"$gpus")); skipped (exit 77)"
  exit 77
fi
echo "== machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader 2>&1 | head -n 2
echo "nvcc: $(nvcc --version 2>/dev/null | tail -n 1)"; echo "gcc: $(gcc --version | head -n 1)"; echo "make: $(make --version | head -n 1)"
if [ ! -f .criterion-rt/include/criterion/criterion.h ]; then
  echo "gpu-test: .criterion-rt/ is missing; run 'make criterion-bundle' where Criterion is installed and carry it" >&2
  exit 2
fi
missing=$(LD_LIBRARY_PATH=.criterion-rt/lib ldd .criterion-rt/lib/libcriterion.so.3 | grep 'not found')
[ -n "$missing" ] && { echo "gpu-test: the bundle lacks: $missing" >&2; exit 2; }
echo "== make test"
# TEST_GROUPS, when set, reaches the Makefile through the environment. TEST_SASS=1: the SASS check
# ends every gpu-test, a part of the suite included (TEST_SASS=0 leaves it out).
make test CRITERION_HOME=.criterion-rt TEST_SASS="${TEST_SASS:-1}"
trc=$?
if [ -n "${GPU_TEST_SANITIZE:-}" ]; then
  echo "== make sanitize"
  timeout "${GPU_TEST_SANITIZE}" make sanitize CRITERION_HOME=.criterion-rt
  echo "make sanitize exit $?"
fi
echo "gpu-test: make test exit $trc"
exit $trc
