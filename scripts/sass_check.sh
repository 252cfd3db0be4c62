#!/usr/bin/env bash
# make sass: disassemble each stage binary for sm_90a and sm_100a and check that the instructions
# the stage is about are really there. Each stage lists them in stages/<X_name>/sass.expect, one
# rule per line: "<arch> <egrep pattern without spaces> <what it is>" (write a space in a pattern
# as [[:space:]]), e.g.
#   sm_90a  HGMMA\.64x   wgmma (QK^T on the tensor cores)
# A pattern starting with ! must NOT be there (e.g. !LDG\.E\.128: no thread copies left).
# An order rule "A>>B>>C>>F" says: every function whose name matches F (at least one) has an
# A ... C pair, and after each instruction matching A one matching B comes before the next one
# matching C, e.g.
# stage F's wait for the previous P V (C) must come after some exponentials (B) that follow the
# wait for S (A): ptxas may move a wait up to the start of its block.
# A stack rule "stack<=N:F" says: every function whose (mangled) name matches the extended regex
# F (at least one) has a stack frame of at most N bytes in `cuobjdump --dump-resource-usage`: the
# frame is where ptxas puts spilled registers (and arrays it cannot keep in registers), so a rule
# of 0 keeps a kernel's values all in registers, e.g.
#   sm_90a  stack<=0:_Z22decode_kernel_m64_ring  the MQA ring spills nothing
# Full listings land in build/sass/stage_<X>.<arch>.sass, resource usage beside them in .res.
# Exit 1 if a rule fails or cuobjdump gives no SASS for an arch (its message is shown), 77 if
# there is no cuobjdump.
# SASS_DIR=<folder> re-checks listings saved earlier (stage_<X>.<arch>.sass and .res) without cuobjdump;
# SASS_EXPECT=<file> takes the rules from there instead of the stage's sass.expect (tests).
set -u
# cuobjdump: the one on PATH, else $CUDA_HOME/bin/cuobjdump (the Makefile passes CUDA_HOME), else
# .tools/cuobjdump/bin/cuobjdump (scripts/fetch_cuobjdump.py, which `make deps` runs where the
# toolkit has no cuobjdump).
# --check-tool: only that check, printing the cuobjdump it would run (make sass runs it before
# building, so a machine without cuobjdump gets exit 77 at once; scripts/deps.sh asks it too).
cuda_home=${CUDA_HOME:-/usr/local/cuda}
sass_dir=${SASS_DIR:-build/sass}
cuobjdump=""
if [ -z "${SASS_DIR:-}" ]; then
  cuobjdump=$(command -v cuobjdump 2>/dev/null || true)
  [ -z "$cuobjdump" ] && [ -x "$cuda_home/bin/cuobjdump" ] && cuobjdump=$cuda_home/bin/cuobjdump
  if [ -z "$cuobjdump" ] && [ -x .tools/cuobjdump/bin/cuobjdump ] && [ -x .tools/cuobjdump/bin/nvdisasm ]; then
    cuobjdump=.tools/cuobjdump/bin/cuobjdump
    export PATH="$PWD/.tools/cuobjdump/bin:$PATH" # cuobjdump runs nvdisasm, found on PATH
  fi
  if [ -z "$cuobjdump" ]; then
    echo "make sass: cuobjdump not found (it ships with the CUDA toolkit: $cuda_home/bin/cuobjdump; \`make deps\` fetches it into .tools/ where the toolkit lacks it); nothing checked"
    exit 77
  fi
fi
[ "${1:-}" = --check-tool ] && { echo "$cuobjdump"; exit 0; }
mkdir -p "$sass_dir"
rc=0
[ $# -eq 0 ] && echo "make sass: no stage binaries yet, nothing to check"
# A listing holds SASS when it has instruction lines such as "/*0010*/  MOV R1, c[0x0][0x28] ;".
has_sass() { grep -qE '/\*[0-9a-f]{4,}\*/' "$1" 2>/dev/null; }
# order_pairs A B C F listing: "<A..C pairs> <pairs with no B between> <functions matching F
# with no pair> <functions matching F>".
order_pairs() {
  awk -v A="$1" -v B="$2" -v C="$3" -v F="$4" '
    function close_fn() { if (on) { fns++; if (!mine) empty++ } }
    /Function :/ { close_fn(); armed = 0; mine = 0; on = ($3 ~ F); next }
    on {
      if (armed && $0 ~ B) seen = 1
      if (armed && $0 ~ C) { n++; mine++; if (!seen) bad++; armed = 0 }
      if ($0 ~ A) { armed = 1; seen = 0 }
    }
    END { close_fn(); printf "%d %d %d %d\n", n, bad, empty, fns }' "$5"
}
declare -A bad resbad
for bin in "$@"; do
  bad=() resbad=()
  s=${bin##*/stage_}
  dir=$(ls -d stages/"$s"_* 2>/dev/null | head -n 1)
  expect=${SASS_EXPECT:-$dir/sass.expect}
  for arch in sm_90a sm_100a; do
    listing=$sass_dir/stage_$s.$arch.sass
    if [ -n "$cuobjdump" ]; then
      "$cuobjdump" --dump-sass --gpu-architecture "$arch" "$bin" >"$listing" 2>&1
      crc=$?
      "$cuobjdump" --dump-resource-usage --gpu-architecture "$arch" "$bin" >"${listing%.sass}.res" 2>&1 ||
        resbad[$arch]="cuobjdump --dump-resource-usage failed (exit $?)"
    else
      crc=0
      [ -f "$listing" ] || { echo "stage $s $arch: no listing $listing (SASS_DIR=$sass_dir)"; bad[$arch]=1; rc=1; continue; }
    fi
    # cuobjdump failed, or printed no SASS (no $arch code in the binary): show what it said
    # instead of reporting every pattern as missing.
    if [ $crc -ne 0 ] || ! has_sass "$listing"; then
      echo "stage $s $arch: no SASS from ${cuobjdump:-$listing}${cuobjdump:+ (exit $crc)}; its patterns are not checked:"
      head -n 5 "$listing" | sed 's/^/    /'
      [ -s "$listing" ] || echo "    (empty output)"
      bad[$arch]=1; rc=1
    fi
  done
  if [ ! -f "$expect" ]; then echo "stage $s: no $expect"; rc=1; continue; fi
  while read -r arch pattern what; do
    case "$arch" in ''|\#*) continue ;; esac
    [ -n "${bad[$arch]:-}" ] && continue
    case "$pattern" in *'>>'*'>>'*'>>'*)
      a=${pattern%%>>*}; rest=${pattern#*>>}; b=${rest%%>>*}; rest=${rest#*>>}; c=${rest%%>>*}; f=${rest#*>>}
      read -r pairs nob empty fns < <(order_pairs "$a" "$b" "$c" "$f" "$sass_dir/stage_$s.$arch.sass")
      if [ "${fns:-0}" -gt 0 ] && [ "${empty:-0}" -eq 0 ] && [ "${nob:-0}" -eq 0 ]; then
        printf 'stage %s %-8s %-26s %5d x in order in %d functions  (%s)\n' "$s" "$arch" "A>>B>>C" "$pairs" "$fns" "$what"
      else
        printf 'stage %s %-8s %-26s OUT OF ORDER: %d of %d A..C pairs without B, %d of %d functions without a pair (%s; A %s, B %s, C %s in %s)\n' \
          "$s" "$arch" "A>>B>>C" "${nob:-0}" "${pairs:-0}" "${empty:-0}" "${fns:-0}" "$what" "$a" "$b" "$c" "$f"; rc=1
      fi
      continue ;;
    esac
    case "$pattern" in stack\<=*:*)
      lim=${pattern#stack<=}; f=${lim#*:}; lim=${lim%%:*}
      # "<functions matching F> <largest frame> <its function>" from "Function NAME:" / "STACK:N"
      # (the pattern goes through the environment: awk -v would turn its backslashes into escapes)
      read -r fns worst wname < <(F=$f awk '
        /^[[:space:]]*Function [^ ]+:/ { name = $2; sub(/:$/, "", name); on = (name ~ ENVIRON["F"]); next }
        on && match($0, /STACK:[0-9]+/) { n++; v = substr($0, RSTART + 6, RLENGTH - 6) + 0
                                         if (n == 1 || v > w) { w = v; wn = name }; on = 0 }
        END { printf "%d %d %s\n", n, w, (n ? wn : "-") }' "$sass_dir/stage_$s.$arch.res" 2>/dev/null)
      if [ -n "${resbad[$arch]:-}" ]; then
        printf 'stage %s %-8s %-26s MISSING: %s (%s)\n' "$s" "$arch" "stack<=$lim" "${resbad[$arch]}" "$what"; rc=1
      elif [ "${fns:-0}" -eq 0 ]; then
        printf 'stage %s %-8s %-26s MISSING: no function matches %s in %s (%s)\n' "$s" "$arch" "stack<=$lim" "$f" "$sass_dir/stage_$s.$arch.res" "$what"; rc=1
      elif [ "$worst" -le "$lim" ]; then
        printf 'stage %s %-8s %-26s %5d functions, largest frame %d bytes  (%s)\n' "$s" "$arch" "stack<=$lim" "$fns" "$worst" "$what"
      else
        printf 'stage %s %-8s %-26s OVER BUDGET: %d bytes of stack frame in %s (%d functions match %s; %s)\n' "$s" "$arch" "stack<=$lim" "$worst" "$wname" "$fns" "$f" "$what"; rc=1
      fi
      continue ;;
    esac
    if [ "${pattern#!}" != "$pattern" ]; then
      n=$(grep -cE "${pattern#!}" "$sass_dir/stage_$s.$arch.sass" 2>/dev/null)
      if [ "${n:-0}" -eq 0 ]; then
        printf 'stage %s %-8s %-26s absent   (%s)\n' "$s" "$arch" "$pattern" "$what"
      else
        example=$(grep -m1 -oE "${pattern#!}[^;]*" "$sass_dir/stage_$s.$arch.sass" | head -c 90)
        printf 'stage %s %-8s %-26s PRESENT %d x, must be absent (%s)  e.g. %s\n' "$s" "$arch" "$pattern" "$n" "$what" "$example"; rc=1
      fi
      continue
    fi
    n=$(grep -cE "$pattern" "$sass_dir/stage_$s.$arch.sass" 2>/dev/null)
    if [ "${n:-0}" -gt 0 ]; then
      example=$(grep -m1 -oE "$pattern[^;]*" "$sass_dir/stage_$s.$arch.sass" | head -c 90)
      printf 'stage %s %-8s %-26s %5d x  (%s)  e.g. %s\n' "$s" "$arch" "$pattern" "$n" "$what" "$example"
    else
      printf 'stage %s %-8s %-26s MISSING (%s)\n' "$s" "$arch" "$pattern" "$what"; rc=1
    fi
  done <"$expect"
done
exit $rc
