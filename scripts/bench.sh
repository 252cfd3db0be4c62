#!/usr/bin/env bash
# make bench: every stage that exists, on its best backend (--backend auto), over the standard
# shapes, with the baselines and ceilings measured in the same run (README, "How speed is measured"). Writes
# plots/data/<gpu>-<YYYY-MM-DD>.csv (quick set: ...-quick.csv), keeps every program's log under
# build/bench/<run>/, and prints a summary sorted by stage, then shape.
#
# Shapes. Each stage's own shape table (`stage_X --shapes bench`; common/host/shape_table.h holds
# the prefill protocol they share): the FlashAttention-3 protocol (B*S = 16k tokens, H = 2048/D,
# S in {512 .. 16k}, D in {64, 128, 256}, causal and not) and the Llama-3.1 shape (B = 1, Hq = 64,
# Hkv = 8, D = 128, S in {2k .. 32k}, causal and not). Stages A (S = Q K^T, one GEMM:
# 2*B*H*Sq*Skv*D FLOPs) and B (O = P V with P = bf16(scale Q K^T) kept on chip, two GEMMs:
# 4*B*H*Sq*Skv*D) list the non-causal shapes with H = Hq; attention stages count
# 4*B*Hq*Sq*Skv*D, halved for causal. Decode rows (stage D) use the decode table below.
#
# Ablation: after the protocol, each stage's `--shapes ablation` rows (stage F: the reference shape
# under each setting of --ring/--ws/--pingpong/--overlap, then the short causal D64 rows under
# --consumers/--persistent) as rows of kind "ablation" with the
# switches in the note; plots/ablation.png draws them beside stages C and E.
#
# Stages come from STAGE_TABLE (letter, shape family, baseline) and from build/bin/stage_*: a stage
# in the table without a binary is one "missing" row; a binary without a table line is one
# "skipped" row. A new stage plugs in with one line in STAGE_TABLE.
#
# Baselines: cuBLAS strided-batched bf16 GEMMs for A (bench_baselines qk: S in f32) and B
# (bench_baselines qkpv: the unfused pair, P = bf16(scale Q K^T) through memory, then O = P V,
# timed as one unit); cuDNN fused attention through PyTorch's scaled_dot_product_attention (cuDNN
# backend, not cuDNN's C API) for C and later, with PyTorch's flash backend as a second line, and
# FlashAttention-4 (flash_attn.cute, pip flash-attn-4; on Hopper its sm90 CuTe kernel) on the
# attention shapes wherever it imports, its version in the row, a "not installed" row otherwise
# (bench/sdpa_baseline.py). An attention or decode stage row's ratio is to the fastest baseline
# at its shape, named in its baseline_name column. Ceilings: one
# 8192^3 bf16 GEMM (TFLOP/s) and a device-to-device copy (GB/s, bytes read + written).
#
# Row status: ok; failed (exit 1, a crash, or a timeout; the log is kept); skipped (exit 77, or the
# stage's shape rules refused the shape with exit 2, or a row whose materialized S or P would
# exceed BENCH_MAX_S_GB, or the time budget ran out); missing (the stage does not exist yet).
#
# Environment:
#   BENCH_SHAPES=full|quick  quick: D = 128, S in {1k, 4k, 8k}, causal and not, Llama S in {2k, 8k}
#   BENCH_ITERS=20 BENCH_WARMUP=3   timed samples (>= 20) and warm-up launches per program
#   BENCH_WARMUP_MS=0        then warm-up launches until this many ms have passed, in every program
#                            and baseline alike (--warmup-ms): rows of milliseconds meet the H200's
#                            power cap within 0.1 s, so without it a program's 20 samples start from
#                            whatever clock the one before left (FA4's after its compile: a cool GPU)
#   BENCH_BUDGET_S=530       past this many seconds, the remaining runs are recorded as skipped
#                            (the stage programs run unchecked here, so they make their inputs on
#                            the device: host/devfill.h; when the host made them, a full run of
#                            stages A-C took about 530 s, mostly that set-up)
#   BENCH_TIMEOUT_S=150      one program taking longer is killed and recorded as failed
#   BENCH_MAX_S_GB=40        stage A and cuBLAS rows whose S (f32) or P (bf16) in memory, B*H*S*S*4
#                            or *2 bytes, would exceed this are skipped
#   BENCH_PYTHON=python3     the python with PyTorch for the SDPA baselines (and FlashAttention-4)
#   BENCH_FA4_TIMEOUT_S=240  the FlashAttention-4 process (its kernels compile on first use); the
#                            shapes it has not reached by then are recorded as skipped
#   BENCH_CSV=path           write the CSV there instead of plots/data/
#   BENCH_DRY_RUN=1          list what would run (no GPU needed) and write nothing
#   BENCH_PRECHECK=1         only the nvidia-smi check (make bench runs it before building)
# Exit status: 0 when the run completed (failed rows are in the CSV and the summary), 77 when
# there is no GPU here, 1 when the run could not start (missing programs, no CUDA).
set -u
cd "$(dirname "$0")/.." || exit 1

SHAPESET=${BENCH_SHAPES:-full}
ITERS=${BENCH_ITERS:-20}
WARMUP=${BENCH_WARMUP:-3}
WARMUP_MS=${BENCH_WARMUP_MS:-0}
BUDGET_S=${BENCH_BUDGET_S:-530}
TIMEOUT_S=${BENCH_TIMEOUT_S:-150}
FA4_TIMEOUT_S=${BENCH_FA4_TIMEOUT_S:-240}
MAX_S_GB=${BENCH_MAX_S_GB:-40}
PY=${BENCH_PYTHON:-python3}
DRY=${BENCH_DRY_RUN:-0}
BASELINES=build/bin/bench_baselines

case $SHAPESET in full | quick) ;; *) echo "make bench: BENCH_SHAPES=$SHAPESET: use full or quick" >&2; exit 2 ;; esac
if [ "$ITERS" -lt 20 ] 2>/dev/null; then echo "make bench: BENCH_ITERS=$ITERS: at least 20 samples" >&2; exit 2; fi
case $WARMUP_MS in '' | *[!0-9]*) echo "make bench: BENCH_WARMUP_MS=$WARMUP_MS: a whole number of ms (0 = none)" >&2; exit 2 ;; esac

# ---------------------------------------------------------------------------------------------
# Stage table: letter, shape family (qk | qkpv | attn | decode), baseline row name.
#   qk: one GEMM S = Q K^T, S written in f32 (GEMM shapes)   qkpv: two GEMMs, S on chip (GEMM shapes)
#   attn: attention (prefill shapes, --hkv --causal)        decode: the decode table (--hkv --page)
STAGE_TABLE=(
  "A qk cublas_qk"
  "B qkpv cublas_qkpv"
  "C attn sdpa_cudnn"
  "D decode sdpa_cudnn"
  "E attn sdpa_cudnn"
  "F attn sdpa_cudnn"
)

# Shapes come from each stage's own shape table (`build/bin/stage_X --shapes bench`, or
# bench-quick for BENCH_SHAPES=quick): the same table its GPU and emu tests read. Each row is the
# stage's flags; here they become "b hq hkv sq skv d causal" (hkv defaults to hq, causal to 0).
tuple_of() { # a decode row (--page) adds its page size as an 8th field
  local b=1 hq=1 hkv="" sq="" skv="" d="" c=0 page=""
  # shellcheck disable=SC2086
  set -- $1
  while [ $# -gt 0 ]; do
    case $1 in
      --b) b=$2; shift ;; --hq) hq=$2; shift ;; --hkv) hkv=$2; shift ;; --sq) sq=$2; shift ;;
      --skv) skv=$2; shift ;; --d) d=$2; shift ;; --page) page=$2; shift ;;
      --causal) if [[ ${2:-} =~ ^[01]$ ]]; then c=$2; shift; else c=1; fi ;;
    esac
    shift
  done
  echo "$b $hq ${hkv:-$hq} $sq $skv $d $c${page:+ $page}"
}
stage_shapes() { # X: the stage's benchmark rows as tuples
  local line suite=bench
  [ "$SHAPESET" = quick ] && suite=bench-quick
  build/bin/stage_"$1" --shapes "$suite" 2>/dev/null | while read -r line; do tuple_of "$line"; done
}
# The decode stages' rows ("b hq hkv sq skv d causal page"): stage D's own bench table (uniform
# lengths, one page size), the same for every decode stage.
decode_shapes() {
  local X
  for X in "${ORDER[@]}"; do
    [ "${FAMILY[$X]}" = decode ] && present "$X" && { stage_shapes "$X"; return; }
  done
}

# ---------------------------------------------------------------------------------------------
# Probe for a GPU (exit 77 without one).
if [ "$DRY" != 1 ]; then
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "make bench: no GPU here (nvidia-smi not found); the benchmark needs an NVIDIA GPU. Skipped (exit 77)."
    exit 77
  fi
  [ "${BENCH_PRECHECK:-0}" = 1 ] && exit 0 # make bench: nvidia-smi is here, so build, then probe
  if [ ! -x "$BASELINES" ]; then echo "make bench: $BASELINES not built (run it through make bench)" >&2; exit 1; fi
  probe=$("$BASELINES" copy --iters 1 --mib 64 2>&1); prc=$?
  if [ $prc -eq 77 ]; then
    echo "make bench: no usable GPU here: $(echo "$probe" | tail -n 1). Skipped (exit 77)."
    exit 77
  elif [ $prc -ne 0 ]; then
    echo "make bench: the GPU probe ($BASELINES copy) failed (exit $prc):" >&2; echo "$probe" >&2; exit 1
  fi
fi

# ---------------------------------------------------------------------------------------------
# Run facts (on every row).
T0=$(date +%s)
DATE=$(date -u +%F)
SMI_ID=${CUDA_VISIBLE_DEVICES:-0}; SMI_ID=${SMI_ID%%,*}
smi() { nvidia-smi -i "$SMI_ID" --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null | head -n 1 | sed 's/^ *//; s/ *$//'; }
if [ "$DRY" = 1 ]; then
  GPU="(dry run)"; DRIVER="-"; CUDA_V="-"
else
  GPU=$(smi name); DRIVER=$(smi driver_version)
  NVCC_BIN=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
  [ -x "$NVCC_BIN" ] || NVCC_BIN=$(command -v nvcc 2>/dev/null || true)
  CUDA_V=""
  [ -n "$NVCC_BIN" ] && CUDA_V=$("$NVCC_BIN" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -n 1)
  [ -z "$CUDA_V" ] && CUDA_V="$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1) (driver)"
fi
SLUG=$(echo "$GPU" | tr 'A-Z' 'a-z' | sed 's/nvidia//g; s/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
[ -z "$SLUG" ] && SLUG=gpu
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RUN=build/bench/$SLUG-$STAMP
if [ -n "${BENCH_CSV:-}" ]; then DEST=$BENCH_CSV
else
  # A second run on the same day gets the next free letter (b, c, ...): the day's first CSV is
  # kept, never overwritten.
  sfx=""; [ "$SHAPESET" = quick ] && sfx=-quick
  DEST=plots/data/$SLUG-$DATE$sfx.csv
  for l in b c d e f g h i j k l m n o p q r s t u v w x y z; do
    [ -e "$DEST" ] || break
    DEST=plots/data/$SLUG-$DATE$l$sfx.csv
  done
fi
CSV=$RUN/bench.csv
SUMMARY=$RUN/summary.tsv
if [ "$DRY" != 1 ]; then
  mkdir -p "$RUN" || exit 1
  ln -sfn "$(basename "$RUN")" build/bench/latest
  echo "date,gpu,sm_clock_mhz,driver,cuda,kind,name,backend,b,hq,hkv,sq,skv,d,causal,status,time_ms_median,time_ms_min,tflops,gbps,baseline_name,baseline_tflops,ratio,note" >"$CSV"
  : >"$SUMMARY"
  trap 'echo; echo "make bench: interrupted after $(( $(date +%s) - T0 )) s; partial CSV: $CSV (not copied to $DEST)"; exit 130' INT TERM
fi
echo "make bench: $SHAPESET shapes on $GPU (driver $DRIVER, CUDA $CUDA_V); logs in $RUN; budget ${BUDGET_S} s"

CLOCK=""
read_clock() { if [ "$DRY" = 1 ]; then CLOCK=""; else CLOCK=$(smi clocks.sm); fi; }
elapsed() { echo $(( $(date +%s) - T0 )); }
over_budget() { [ "$(elapsed)" -ge "$BUDGET_S" ]; }

csvq() { # one CSV field, quoted when it holds a comma, quote or newline
  local v=${1//$'\n'/ }
  case $v in *[,\"]*) v=${v//\"/\"\"}; printf '"%s"' "$v" ;; *) printf '%s' "$v" ;; esac
}
# row kind name backend b hq hkv sq skv d causal status tmed tmin tflops gbps bname btflops ratio note
row() {
  [ "$DRY" = 1 ] && return 0
  local f line="" first=1
  for f in "$DATE" "$GPU" "$CLOCK" "$DRIVER" "$CUDA_V" "$@"; do
    if [ $first = 1 ]; then first=0; else line+=","; fi
    line+=$(csvq "$f")
  done
  echo "$line" >>"$CSV"
  # The summary shows stage and ceiling rows (a stage row carries its baseline's value); sort key:
  # kind order, stage letter / name, d, family (FA3 before Llama), s, causal.
  [ "$1" = baseline ] && return 0
  local ko=1; [ "$1" = stage ] || ko=3
  local fam=0; [ "${4:-}" = 1 ] && [ "${5:-}" = 64 ] && fam=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ko" "$2" "${9:-0}" "$fam" "${7:-0}" "${10:-0}" \
    "$(printf '%-7s %-11s %-7s %-30s %-8s %9s %8s %8s %-19s %6s  %s' "$1" "$2" "$(short_be "$3")" \
       "$(shape_label "$4" "$5" "$6" "$7" "$9" "${10}")" "${11}" "$(fmt "${12}" %.3f)" "${14:--}" "${15:--}" \
       "${16:--}${17:+ ${17}}" "${18:--}" "${19:0:70}")" >>"$SUMMARY"
}
short_be() { # the summary's backend column: cublas-13.1.0 -> cublas
  local v=${1%%-*}; echo "${v:0:7}"
}
shape_label() { # b hq hkv s d causal
  [ -z "$1" ] && { echo "-"; return; }
  local h="H$2"; [ "$2" != "$3" ] && h="Hq$2/Hkv$3"
  echo "B$1 $h S$4 D$5$([ "$6" = 1 ] && echo ' causal')"
}
fmt() { awk -v x="$1" -v f="$2" 'BEGIN { if (x == "") print "-"; else printf f, x }'; }

NRUN=0
progress() { NRUN=$((NRUN + 1)); printf '[%4d s] %s\n' "$(elapsed)" "$*"; }

# last_line LOG TAG: the last "[TAG] ..." line of a log
last_line() { grep -E "^\[($2)\]" "$1" 2>/dev/null | tail -n 1; }
field() { echo "$1" | sed -n "s/.*[ ]$2=\([^ ]*\).*/\1/p" | head -n 1; }

# ---------------------------------------------------------------------------------------------
# Ceilings.
declare -A BASE_TF  # "name|b hq hkv sq skv d causal" -> TFLOP/s of an ok baseline row
# One GEMM ceiling row: ceiling_gemm SUBCOMMAND ROW_NAME LIBRARY NOTE (the library's version is
# the field of that name on the baselines program's [OK] line).
ceiling_gemm() {
  local sub=$1 name=$2 lib=$3 note=$4 log out rc
  log=$RUN/ceiling_$sub.log
  timeout "$TIMEOUT_S" "$BASELINES" "$sub" --n 8192 --iters "$ITERS" --warmup-ms "$WARMUP_MS" >"$log" 2>&1; rc=$?; read_clock
  out=$(last_line "$log" 'OK|SKIP|FAIL')
  if [ $rc -eq 0 ]; then
    row ceiling "$name" "$lib-$(field "$out" "$lib")" "" "" "" "" "" "" "" ok "$(field "$out" time_ms)" \
      "$(field "$out" time_min_ms)" "$(field "$out" tflops)" "$(field "$out" gbps)" "" "" "" "$note"
  else
    row ceiling "$name" "$lib" "" "" "" "" "" "" "" failed "" "" "" "" "" "" "" "exit $rc: ${out:-see $log}"
  fi
  progress "ceiling $name 8192^3: ${out:-exit $rc}"
}

run_ceilings() {
  local log out rc
  if [ "$DRY" = 1 ]; then
    echo "would run: $BASELINES gemm|gemm_fp8 --n 8192 --iters $ITERS; $BASELINES copy|read --mib 4096 --iters $ITERS"; return
  fi
  ceiling_gemm gemm cublas_gemm cublas "bf16 GEMM 8192x8192x8192, bf16 out, f32 accumulate"
  # the FP8 ceiling (stage D's MMAs are e4m3): cuBLASLt's e4m3 GEMM, K-major operands, fast accumulation
  ceiling_gemm gemm_fp8 cublaslt_fp8_gemm cublaslt \
    "e4m3 GEMM 8192x8192x8192 (A, B K-major), bf16 out, f32 fast accumulate: the FP8 ceiling"
  log=$RUN/ceiling_copy.log
  timeout "$TIMEOUT_S" "$BASELINES" copy --mib 4096 --iters "$ITERS" --warmup-ms "$WARMUP_MS" >"$log" 2>&1; rc=$?; read_clock
  out=$(last_line "$log" 'OK|SKIP|FAIL')
  if [ $rc -eq 0 ]; then
    row ceiling d2d_copy cudaMemcpyAsync "" "" "" "" "" "" "" ok "$(field "$out" time_ms)" \
      "$(field "$out" time_min_ms)" "" "$(field "$out" gbps)" "" "" "" "device-to-device copy of 4096 MiB; GB/s count bytes read + written"
  else
    row ceiling d2d_copy cudaMemcpyAsync "" "" "" "" "" "" "" failed "" "" "" "" "" "" "" "exit $rc: ${out:-see $log}"
  fi
  progress "ceiling d2d_copy 4 GiB: ${out:-exit $rc}"
  log=$RUN/ceiling_read.log
  timeout "$TIMEOUT_S" "$BASELINES" read --mib 4096 --iters "$ITERS" --warmup-ms "$WARMUP_MS" >"$log" 2>&1; rc=$?; read_clock
  out=$(last_line "$log" 'OK|SKIP|FAIL')
  if [ $rc -eq 0 ]; then
    row ceiling hbm_read read_kernel "" "" "" "" "" "" "" ok "$(field "$out" time_ms)" \
      "$(field "$out" time_min_ms)" "" "$(field "$out" gbps)" "" "" "" "one streaming read of 4096 MiB (16-byte loads); GB/s count bytes read: the decode ceiling"
  else
    row ceiling hbm_read read_kernel "" "" "" "" "" "" "" failed "" "" "" "" "" "" "" "exit $rc: ${out:-see $log}"
  fi
  progress "ceiling hbm_read 4 GiB: ${out:-exit $rc}"
}

# ---------------------------------------------------------------------------------------------
# Fused-attention baselines: one python process for every attention shape and backend list
# (bench/sdpa_baseline.py: cudnn and flash through PyTorch SDPA, fa4 = FlashAttention-4's CuTe
# kernel where flash_attn.cute imports; a "not installed" SKIP row where it does not).
run_sdpa() { # shapes "cudnn,flash" | "fa4"
  local shapes=$1 backends=${2:-cudnn,flash} log rc line st name key tag reason shp names impl0 what
  names=$(echo "$backends" | tr ',' '\n' | sed 's/^cudnn$/sdpa_cudnn/; s/^flash$/sdpa_flash/' | tr '\n' ' ')
  log=$RUN/baselines_$(echo "$backends" | tr ',' '_').log
  if [ "$DRY" = 1 ]; then
    echo "would run: $PY bench/sdpa_baseline.py --shapes <$(echo "$shapes" | wc -l) shapes> --backends $backends --iters $ITERS --warmup $WARMUP --warmup-ms $WARMUP_MS"
    return
  fi
  if over_budget; then
    while read -r shp; do
      for name in $names; do
        # shellcheck disable=SC2086
        row baseline "$name" "$(baseline_impl "$name")" $shp skipped "" "" "" "" "" "" "" "time budget of ${BUDGET_S} s used up"
      done
    done <<<"$shapes"
    return
  fi
  echo "$shapes" >"$RUN/baseline_shapes_$backends.txt"
  local limit=$((TIMEOUT_S * 4)); [ "$backends" = fa4 ] && limit=$FA4_TIMEOUT_S
  timeout "$limit" "$PY" bench/sdpa_baseline.py --shapes "$RUN/baseline_shapes_$backends.txt" \
    --backends "$backends" --iters "$ITERS" --warmup "$WARMUP" --warmup-ms "$WARMUP_MS" >"$log" 2>&1
  rc=$?; read_clock
  progress "baselines $names, $(echo "$shapes" | wc -l) shapes: exit $rc ($(head -n 1 "$log"))"
  while read -r shp; do
    # shellcheck disable=SC2086
    set -- $shp
    tag="b=$1 hq=$2 hkv=$3 sq=$4 skv=$5 d=$6 causal=$7"
    for name in $names; do
      impl0=$(baseline_impl "$name")
      line=$(grep -F "baseline=$name $tag " "$log" | tail -n 1)
      [ -z "$line" ] && line=$(grep -F "baseline=$name $tag" "$log" | tail -n 1)
      if [ -z "$line" ]; then
        reason=$(tail -n 1 "$log" | cut -c1-200)
        if [ $rc -eq 77 ] || [ $rc -eq 124 ]; then st=skipped; else st=failed; fi
        [ $rc -eq 124 ] && reason="killed after $limit s"
        row baseline "$name" "$impl0" "$@" "$st" "" "" "" "" "" "" "" "no result (sdpa_baseline.py exit $rc: $reason)"
        continue
      fi
      if [ "$name" = fa4 ]; then what="FlashAttention-4 (flash_attn.cute, CuTe DSL)"
      else what="PyTorch scaled_dot_product_attention, this backend only (not the cuDNN C API)"; fi
      case $line in
        "[OK]"*)
          row baseline "$name" "$(field "$line" impl)" "$@" ok "$(field "$line" time_ms)" "$(field "$line" time_min_ms)" \
            "$(field "$line" tflops)" "" "" "" "" "$what; gqa=$(field "$line" gqa)"
          BASE_TF["$name|$shp"]=$(field "$line" tflops) ;;
        "[SKIP]"*) row baseline "$name" "$impl0" "$@" skipped "" "" "" "" "" "" "" "${line#*reason=}" ;;
        *) row baseline "$name" "$impl0" "$@" failed "" "" "" "" "" "" "" "${line#*reason=}" ;;
      esac
    done
  done <<<"$shapes"
}
baseline_impl() { [ "$1" = fa4 ] && echo flash-attn-4 || echo pytorch-sdpa; }

# ---------------------------------------------------------------------------------------------
# cuBLAS GEMM baseline for one GEMM shape: qk (S in f32) or qkpv (P in bf16, then O = P V).
run_cublas() {
  local which=$1 shp=$2 name=cublas_$1 log rc out ebytes=4
  [ "$which" = qkpv ] && ebytes=2
  # shellcheck disable=SC2086
  set -- $shp
  local args=(--b "$1" --hq "$2" --sq "$4" --skv "$5" --d "$6" --iters "$ITERS" --warmup-ms "$WARMUP_MS")
  if too_big "$ebytes" "$@"; then
    [ "$DRY" = 1 ] && echo "would skip: $BASELINES $which ${args[*]} ($(s_gb "$ebytes" "$@") GB)"
    row baseline "$name" cublas "$@" skipped "" "" "" "" "" "" "" "$([ "$which" = qk ] && echo S || echo P) would take $(s_gb "$ebytes" "$@") GB > BENCH_MAX_S_GB=$MAX_S_GB"
    return
  fi
  if [ "$DRY" = 1 ]; then echo "would run: $BASELINES $which ${args[*]}"; return; fi
  if over_budget; then row baseline "$name" cublas "$@" skipped "" "" "" "" "" "" "" "time budget of ${BUDGET_S} s used up"; return; fi
  log=$RUN/${name}_b$1_h$2_s$4_d$6.log
  timeout "$TIMEOUT_S" "$BASELINES" "$which" "${args[@]}" >"$log" 2>&1; rc=$?; read_clock
  out=$(last_line "$log" 'OK|SKIP|FAIL')
  if [ $rc -eq 0 ]; then
    local what="cublasGemmStridedBatchedEx, bf16 in, S in f32"
    [ "$which" = qkpv ] && what="two cublasGemmStridedBatchedEx timed together: P = bf16(scale Q K^T) in memory, then O = P V in f32"
    row baseline "$name" "cublas-$(field "$out" cublas)" "$@" ok "$(field "$out" time_ms)" "$(field "$out" time_min_ms)" \
      "$(field "$out" tflops)" "$(field "$out" gbps)" "" "" "" "$what"
    BASE_TF["$name|$shp"]=$(field "$out" tflops)
  elif [ $rc -eq 77 ]; then
    row baseline "$name" cublas "$@" skipped "" "" "" "" "" "" "" "${out:-exit 77}"
  else
    row baseline "$name" cublas "$@" failed "" "" "" "" "" "" "" "exit $rc: $(tail -n 1 "$log" | cut -c1-200); log $log"
  fi
  progress "baseline $name $(shape_label "$1" "$2" "$3" "$4" "$6" "$7"): ${out:-exit $rc}"
}
s_gb() { awk -v e="$1" -v b="$2" -v h="$3" -v s="$5" -v k="$6" 'BEGIN { printf "%.1f", b * h * s * k * e / 1e9 }'; }
too_big() { awk -v g="$(s_gb "$@")" -v m="$MAX_S_GB" 'BEGIN { exit !(g > m) }'; } # BYTES_PER_ELEM b hq hkv sq skv ...

# ---------------------------------------------------------------------------------------------
# One stage program at one shape.
stage_flops() { # family b hq hkv sq skv d causal
  awk -v f="$1" -v b="$2" -v h="$3" -v sq="$5" -v sk="$6" -v d="$7" -v c="$8" 'BEGIN {
    if (f == "qk") x = 2 * b * h * sq * sk * d; else { x = 4 * b * h * sq * sk * d; if (c == 1) x /= 2 }
    printf "%.6e", x }'
}
run_stage() { # X family baseline "b hq hkv sq skv d c" [page] [switch flags: an ablation row]
  local X=$1 fam=$2 bname=$3 shp=$4 page=${5:-} extra=${6:-}
  local bin=build/bin/stage_$X log rc out tmpcsv st note backend tmed tmin tf gb btf ratio kind=stage
  [ -n "$extra" ] && kind=ablation
  # shellcheck disable=SC2086
  set -- $shp
  local b=$1 hq=$2 hkv=$3 sq=$4 skv=$5 d=$6 c=$7
  local wu=$WARMUP
  local fl; fl=$(stage_flops "$fam" "$@")
  awk -v x="$fl" 'BEGIN { exit !(x > 1e13) }' && wu=1 # the largest shapes: fewer warm-up launches
  local args=(--backend auto --b "$b" --hq "$hq" --sq "$sq" --skv "$skv" --d "$d" --no-check --iters "$ITERS" --warmup "$wu" --warmup-ms "$WARMUP_MS")
  case $fam in
    attn) args+=(--hkv "$hkv" --causal "$c") ;;
    decode) args+=(--hkv "$hkv" --page "$page") ;;
  esac
  # shellcheck disable=SC2206
  [ -n "$extra" ] && args+=($extra)
  [ "$bname" = - ] && bname=""
  if [ "$fam" = qk ] && too_big 4 "$@"; then
    [ "$DRY" = 1 ] && echo "would skip: $bin ${args[*]} (S: $(s_gb 4 "$@") GB)"
    row "$kind" "$X" "" "$@" skipped "" "" "" "" "$bname" "" "" "S would take $(s_gb 4 "$@") GB > BENCH_MAX_S_GB=$MAX_S_GB"
    return
  fi
  if [ "$DRY" = 1 ]; then echo "would run: $bin ${args[*]} --csv <tmp>"; return; fi
  if over_budget; then row "$kind" "$X" "" "$@" skipped "" "" "" "" "$bname" "" "" "time budget of ${BUDGET_S} s used up"; return; fi
  log=$RUN/stage_${X}_b${b}_hq${hq}_hkv${hkv}_s${sq}_d${d}_c${c}${extra:+_$(echo "$extra" | tr -d ' -')}.log
  tmpcsv=$RUN/stage_${X}.runner.csv
  rm -f "$tmpcsv"
  local t1; t1=$(date +%s)
  timeout "$TIMEOUT_S" "$bin" "${args[@]}" --csv "$tmpcsv" >"$log" 2>&1; rc=$?; read_clock
  out=$(last_line "$log" 'OK|SKIP|FAIL')
  backend=$(field "$out" backend); backend=${backend%:}
  tmed=""; tmin=""; tf=""; gb=""; btf=""; ratio=""; note=""
  if [ $rc -eq 0 ]; then
    st=ok
    tmed=$(runner_col "$tmpcsv" time_ms_median); tmin=$(runner_col "$tmpcsv" time_ms_min)
    gb=$(runner_col "$tmpcsv" gbps); [ "$gb" = - ] && gb=""
    [ -z "$backend" ] && backend=$(runner_col "$tmpcsv" backend)
    if [ -z "$tmed" ] || [ "$tmed" = - ]; then
      st=failed; tmed=""; tmin=""; note="ran but reported no time (backend ${backend:-?}); log $log"
    else
      tf=$(awk -v f="$fl" -v t="$tmed" 'BEGIN { printf "%.2f", f / (t * 1e-3) / 1e12 }')
      local own; own=$(runner_col "$tmpcsv" tflops)
      if [ -n "$own" ] && [ "$own" != - ] && awk -v a="$own" -v b="$tf" 'BEGIN { exit !(a > 1.02 * b || a < 0.98 * b) }'; then
        note="the program counts $own TFLOP/s (its own FLOP count); this row uses the bench's"
      fi
    fi
  elif [ $rc -eq 77 ]; then
    st=skipped; note=${out:-exit 77}
  elif [ $rc -eq 2 ] && ! grep -qE 'unknown flag|does not support it|needs a value' "$log"; then
    st=skipped; note="the stage refuses this shape (exit 2): ${out#*bad arguments: }"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    st=failed; note="killed after ${TIMEOUT_S} s (BENCH_TIMEOUT_S); log $log"
  else
    st=failed; note="exit $rc: $(echo "${out:-$(tail -n 1 "$log")}" | cut -c1-200); log $log"
  fi
  [ -n "$extra" ] && note="switches: $extra${note:+; $note}"
  if [ "$fam" = decode ] && [ "$st" = ok ]; then # which kernel --ring auto picked (stage D's detail line)
    local picked; picked=$(grep -oE 'ring [0-9]+ \(auto[^)]*\)' "$log" | head -n 1)
    [ -n "$picked" ] && note="${note:+$note; }$picked"
  fi
  if [ -n "$bname" ]; then
    local bkey="$bname|$b $hq $hkv $sq $skv $d $c"
    btf=${BASE_TF[$bkey]:-}
    if [ "$fam" = attn ] || [ "$fam" = decode ]; then # the ratio is to the fastest baseline of the row
      local cand ctf
      for cand in sdpa_cudnn sdpa_flash fa4; do
        ctf=${BASE_TF[$cand|$b $hq $hkv $sq $skv $d $c]:-}
        if [ -n "$ctf" ] && { [ -z "$btf" ] || awk -v x="$ctf" -v y="$btf" 'BEGIN { exit !(x > y) }'; }; then
          bname=$cand; btf=$ctf
        fi
      done
    fi
    if [ -n "$tf" ] && [ -n "$btf" ]; then
      ratio=$(awk -v a="$tf" -v b="$btf" 'BEGIN { if (b > 0) printf "%.3f", a / b }')
    elif [ -n "$tf" ]; then
      note="${note:+$note; }no $bname value at this shape"
    fi
  fi
  row "$kind" "$X" "$backend" "$b" "$hq" "$hkv" "$sq" "$skv" "$d" "$c" "$st" "$tmed" "$tmin" "$tf" "$gb" "$bname" "$btf" "$ratio" "$note"
  progress "$kind $X${extra:+ ($extra)} $(shape_label "$b" "$hq" "$hkv" "$sq" "$d" "$c"): $st ${tf:+$tf TFLOP/s }${ratio:+(x$ratio $bname) }($(( $(date +%s) - t1 )) s)$([ "$st" != ok ] && echo " ${note:0:100}")"
}
runner_col() { # FILE COLUMN: that column of the last row of a runner CSV (no quoted commas there)
  [ -f "$1" ] || return 0
  awk -F, -v col="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) k = i; next } { v = $k } END { if (k) print v }' "$1"
}

# ---------------------------------------------------------------------------------------------
# Which stages: the table plus whatever build/bin/stage_* holds.
declare -A FAMILY BASE_OF
ORDER=()
for line in "${STAGE_TABLE[@]}"; do
  read -r X fam bn <<<"$line"
  FAMILY[$X]=$fam; BASE_OF[$X]=$bn; ORDER+=("$X")
done
shopt -s nullglob
for bin in build/bin/stage_*; do
  X=${bin##*/stage_}
  [ -n "${FAMILY[$X]:-}" ] || { FAMILY[$X]=unknown; ORDER+=("$X"); }
done
IFS=$'\n' read -r -d '' -a ORDER < <(printf '%s\n' "${ORDER[@]}" | sort -u && printf '\0')
present() { [ -x "build/bin/stage_$1" ]; }
uses() { local X; for X in "${ORDER[@]}"; do present "$X" && [ "${FAMILY[$X]}" = "$1" ] && return 0; done; return 1; }

# Every (stage, shape) pair, interleaved in proportion to each stage's table (row i of n runs at
# position i/n), so the reference shapes at the head of every table run first and a time budget
# that runs out cuts every stage at the same point of the protocol.
WORK=$(for X in "${ORDER[@]}"; do
  case ${FAMILY[$X]} in qk | qkpv | attn) present "$X" || continue ;; *) continue ;; esac
  rows=$(stage_shapes "$X"); n=$(echo "$rows" | grep -c .)
  [ "$n" -gt 0 ] || continue
  echo "$rows" | awk -v X="$X" -v n="$n" -v o="$(printf '%s\n' "${ORDER[@]}" | grep -nx "$X" | cut -d: -f1)" \
    '{ printf "%.6f %03d %s %s\n", (NR - 1) / n, o, X, $0 }'
done | sort -k1,1n -k2,2n | cut -d' ' -f3-)
ATTN_SHAPES=$(echo "$WORK" | while read -r X rest; do [ "${FAMILY[$X]:-}" = attn ] && echo "$rest"; done | awk '!seen[$0]++')

DECODE_SHAPES=$(decode_shapes)
# The SDPA baselines of the decode rows: the same logical shape (bf16, contiguous KV, enable_gqa)
SDPA_SHAPES=$( { echo "$ATTN_SHAPES"; echo "$DECODE_SHAPES" | cut -d' ' -f1-7; } | grep . | awk '!seen[$0]++')

run_ceilings
[ -n "$SDPA_SHAPES" ] && run_sdpa "$SDPA_SHAPES" cudnn,flash
[ -n "$ATTN_SHAPES" ] && run_sdpa "$ATTN_SHAPES" fa4

# Decode stages first: a handful of short rows, so a time budget that runs out cuts the long
# prefill protocol, not them.
if uses decode; then
  while read -r b hq hkv sq skv d c page; do
    [ -n "$b" ] || continue
    for X in "${ORDER[@]}"; do
      [ "${FAMILY[$X]}" = decode ] && present "$X" && run_stage "$X" decode "${BASE_OF[$X]}" "$b $hq $hkv $sq $skv $d $c" "$page"
    done
  done <<<"$DECODE_SHAPES"
  # then a decode stage's `--shapes ablation` (stage D: the pipelined decode's --ring and
  # --overlap, the L2 prefetch's --prefetch, the TMA gather's --kv-tma), kind
  # "ablation", the switch in the note, its ratio to the same baselines
  for X in "${ORDER[@]}"; do
    { present "$X" && [ "${FAMILY[$X]}" = decode ]; } || continue
    while read -r line; do
      [ -n "$line" ] || continue
      sw=$(echo "$line" | grep -oE -- '--(ring|splits|prefetch|kv-tma|m64-groups|overlap) [^ ]+' | tr '\n' ' ' | sed 's/ $//')
      read -r b hq hkv sq skv d c page <<<"$(tuple_of "$line")"
      run_stage "$X" decode "${BASE_OF[$X]}" "$b $hq $hkv $sq $skv $d $c" "$page" "$sw"
    done < <(build/bin/stage_"$X" --shapes ablation 2>/dev/null)
  done
fi

# Each stage row after its baseline (a cuBLAS baseline runs once per shape, before the first
# stage that needs it).
declare -A CUBLAS_DONE
while read -r X shp; do
  [ -n "$X" ] || continue
  fam=${FAMILY[$X]}
  if [ "$fam" = qk ] || [ "$fam" = qkpv ]; then
    [ -n "${CUBLAS_DONE[$fam|$shp]:-}" ] || { run_cublas "$fam" "$shp"; CUBLAS_DONE[$fam|$shp]=1; }
  fi
  run_stage "$X" "$fam" "${BASE_OF[$X]}" "$shp"
done <<<"$WORK"
# Ablation rows after the protocol: a stage's `--shapes ablation` (stage F: the reference shape
# under each setting of its pipeline switches, then the short causal D64 rows under the consumer
# groups and the persistent kernel, then D256 causal S4k under each key tile, then the causal
# rows head by head, --lpt-heads 1), kind "ablation", the switches in the note (whatever the row
# names besides its shape: a switch dropped here would make it a second plain stage row); the
# ablation plot sets them beside stages C and E at the same shape.
for X in "${ORDER[@]}"; do
  { present "$X" && [ "${FAMILY[$X]}" = attn ]; } || continue
  while read -r line; do
    [ -n "$line" ] || continue
    sw=$(echo " $line " | sed -E 's/ --(b|hq|hkv|sq|skv|d) [^ ]+/ /g; s/ --causal( [01])? / /g' | tr -s ' ' | sed 's/^ //; s/ $//')
    run_stage "$X" attn "${BASE_OF[$X]}" "$(tuple_of "$line")" "" "$sw"
  done < <(build/bin/stage_"$X" --shapes ablation 2>/dev/null)
done

# Missing and unknown stages: one row each, never dropped.
for X in "${ORDER[@]}"; do
  if ! present "$X"; then
    dirs=(stages/"$X"_*)
    if [ ${#dirs[@]} -gt 0 ]; then why="${dirs[0]} exists but build/bin/stage_$X was not built"
    else why="stage $X does not exist yet (no stages/${X}_*)"; fi
    [ "$DRY" = 1 ] && echo "missing: stage $X ($why)"
    row stage "$X" "" "" "" "" "" "" "" "" missing "" "" "" "" "${BASE_OF[$X]#-}" "" "" "$why"
  elif [ "${FAMILY[$X]}" = unknown ]; then
    [ "$DRY" = 1 ] && echo "skipped: stage $X (no line in STAGE_TABLE)"
    row stage "$X" "" "" "" "" "" "" "" "" skipped "" "" "" "" "" "" "" "no shape table line for stage $X in scripts/bench.sh"
  fi
done

if [ "$DRY" = 1 ]; then echo "make bench (dry run): nothing measured, nothing written"; exit 0; fi

# ---------------------------------------------------------------------------------------------
mkdir -p "$(dirname "$DEST")"
cp "$CSV" "$DEST" || exit 1
echo
echo "Summary ($GPU, driver $DRIVER, CUDA $CUDA_V, $DATE; sorted by stage, then shape):"
printf '%-7s %-11s %-7s %-30s %-8s %9s %8s %8s %-19s %6s  %s\n' kind name backend shape status median_ms TFLOP/s GB/s "baseline TFLOP/s" ratio note
sort -t $'\t' -k1,1n -k2,2 -k3,3n -k4,4n -k5,5n -k6,6n "$SUMMARY" | cut -f7
echo "(baseline rows: in the CSV; $(grep -c ',baseline,[^,]*,[^,]*,.*,ok,' "$CSV") ok of $(grep -c ',baseline,' "$CSV"))"
nrows=$(($(wc -l <"$CSV") - 1))
echo
echo "make bench: $nrows rows, $(grep -c ',ok,' "$CSV") ok, $(grep -c ',failed,' "$CSV") failed, $(grep -c ',skipped,' "$CSV") skipped, $(grep -c ',missing,' "$CSV") missing"
echo "make bench: wrote $DEST (copy: $CSV); logs in $RUN; elapsed $(elapsed) s"
# The issue targets judged on this run (make targets; its rules are the H200's, and any GPU's run is
# judged by them the same way)
if command -v python3 >/dev/null 2>&1; then echo; python3 "$(dirname "$0")/targets.py" "$DEST" || true; fi
