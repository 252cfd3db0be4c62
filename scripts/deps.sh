#!/usr/bin/env bash
# Install what the project needs (Debian packages; cuobjdump from NVIDIA's wheels), only when
# missing, and say so.
#   deps.sh criterion    Criterion (the test framework) — what `make test` needs
#   deps.sh matplotlib   python3-matplotlib — what `make plots` needs
#   deps.sh cuobjdump    cuobjdump for `make sass` (and make test's SASS step): where neither PATH
#                        nor $CUDA_HOME/bin has it, NVIDIA's nvidia-cuda-cuobjdump and -nvdisasm
#                        wheels are fetched from PyPI into .tools/ (scripts/fetch_cuobjdump.py);
#                        a failed fetch is a warning, not an error (make test then says the SASS
#                        was not checked)
#   deps.sh all          all three (what `make deps` and `make test` run)
#   deps.sh bundle       what `make test CRITERION_HOME=<bundle>` runs (the GPU machine, no apt):
#                        checks the bundle and only reports whether /usr/bin/python3 imports
#                        matplotlib (the plot self-test skips without it); installs nothing
# Where CRITERION_HOME points at a bundle (scripts/criterion_bundle.sh), Criterion counts as present.
set -euo pipefail
want=${1:-all}

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi

install_pkgs() {
  echo "deps: installing $* (apt-get)"
  if ! $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/tmp/fmha-apt.log 2>&1; then
    echo "deps: first install attempt failed; running apt-get update and retrying"
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get update -q >>/tmp/fmha-apt.log 2>&1 || true
    if ! $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >>/tmp/fmha-apt.log 2>&1; then
      echo "deps: apt-get install $* failed; log: /tmp/fmha-apt.log" >&2
      tail -n 20 /tmp/fmha-apt.log >&2
      exit 1
    fi
  fi
  echo "deps: installed $*"
}

case $want in criterion | matplotlib | cuobjdump | all | bundle) ;; *) echo "deps: unknown set '$want' (criterion, matplotlib, cuobjdump, all, bundle)" >&2; exit 2 ;; esac

# cuobjdump: not a Debian package of the toolkit's; see the header. Never fails the caller.
want_cuobjdump() {
  local found
  if found=$(scripts/sass_check.sh --check-tool 2>/dev/null); then # the lookup make sass uses
    echo "deps: cuobjdump: $found"
  elif got=$(python3 scripts/fetch_cuobjdump.py .tools/cuobjdump 2>/tmp/fmha-cuobjdump.log); then
    echo "deps: fetched cuobjdump and nvdisasm (NVIDIA's PyPI wheels) into ${got%/cuobjdump}"
  else
    echo "deps: cuobjdump not found and not fetched ($(tail -n 1 /tmp/fmha-cuobjdump.log)); make sass cannot run here"
  fi
}
if [ "$want" = cuobjdump ]; then want_cuobjdump; exit 0; fi

if [ "$want" = bundle ]; then
  if [ -z "${CRITERION_HOME:-}" ]; then
    echo "deps: 'bundle' needs CRITERION_HOME (a folder made by scripts/criterion_bundle.sh)" >&2
    exit 2
  fi
  if [ ! -f "$CRITERION_HOME/include/criterion/criterion.h" ]; then
    echo "deps: CRITERION_HOME=$CRITERION_HOME holds no include/criterion/criterion.h" >&2
    exit 1
  fi
  echo "deps: Criterion from bundle $CRITERION_HOME"
  if /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1; then
    echo "deps: matplotlib importable by /usr/bin/python3"
  else
    echo "deps: matplotlib not importable by /usr/bin/python3; the plot self-test will skip (not installed here: CRITERION_HOME is set)"
  fi
  exit 0
fi

need=()
if [ "$want" = criterion ] || [ "$want" = all ]; then
  if [ -n "${CRITERION_HOME:-}" ]; then
    if [ -f "$CRITERION_HOME/include/criterion/criterion.h" ]; then
      echo "deps: Criterion from bundle $CRITERION_HOME"
    else
      echo "deps: CRITERION_HOME=$CRITERION_HOME holds no include/criterion/criterion.h" >&2
      exit 1
    fi
  elif have_pkg libcriterion-dev; then
    echo "deps: libcriterion-dev already installed"
  else
    need+=(libcriterion-dev)
  fi
fi
if [ "$want" = matplotlib ] || [ "$want" = all ]; then
  if have_pkg python3-matplotlib; then
    echo "deps: python3-matplotlib already installed"
  elif [ "$want" = matplotlib ] && /usr/bin/env python3 -c 'import matplotlib' 2>/dev/null; then
    echo "deps: matplotlib importable by python3 (not from apt)"
  else
    need+=(python3-matplotlib)
  fi
fi
[ "$want" = all ] && want_cuobjdump
if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "deps: missing ${need[*]} and no apt-get on this machine" >&2
    exit 1
  fi
  install_pkgs "${need[@]}"
fi
