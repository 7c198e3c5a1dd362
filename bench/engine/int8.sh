#!/usr/bin/env bash
# bench/engine/int8.sh — the int8 goals, every ratio taken in one run (the machine is shared: the load,
# from uptime, is printed with the numbers):
#   Q1  Kestrel int8 vs Kestrel f32 on the same model: BlazeFace 128 quantized by ONNX Runtime's
#       quantize_static (QDQ: u8 activations, int8 per-channel weights; fetch_models.sh makes it) beside
#       the float BlazeFace 128, at 1 and 2 threads. Ratio = f32 time / int8 time (≥ 1: int8 faster).
#   Q2  Kestrel int8 vs ONNX Runtime 1.30 (npm onnxruntime-node, ort_bench.cjs) on the same QDQ model.
#       Ratio = Kestrel time / ORT time (≤ 1: Kestrel faster).
# With --qemu AARCH64_BUILD_DIR, Q1 on aarch64 instead: instructions per inference under qemu
# (qemu_count.sh: 1 and 3 inferences, half the difference; load-independent) on cortex-a53 and
# cortex-a76, f32 / int8.
#
#   bench/engine/int8.sh [HOST_BUILD_DIR] [--iterations N]     (medians over N runs after 20 warm-up)
#   bench/engine/int8.sh --qemu [AARCH64_BUILD_DIR]
# Needs the build's engine/kes-model-bench, the host build's engine/kes-convert, and the model cache of
# engine/tests/models/fetch_models.sh (files/blazeface_128.onnx, quant/blazeface_128_qdq.onnx, ort/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
usage_error() { echo "int8.sh: $1 (int8.sh -h for usage)" >&2; exit 2; }
build=""
iterations=100
qemu=0
while [ $# -gt 0 ]; do
  case "$1" in
    --iterations) [ $# -ge 2 ] || usage_error "--iterations needs a value"; iterations=$2; shift 2 ;;
    --qemu) qemu=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) usage_error "unknown option $1" ;;
    *) [ -z "$build" ] || usage_error "one build directory only (got $build and $1)"; build=$1; shift ;;
  esac
done
[[ "$iterations" =~ ^[1-9][0-9]*$ ]] || usage_error "--iterations takes a positive integer, not '$iterations'"
[ -n "$build" ] || build="$root/build/$([ "$qemu" = 1 ] && echo aarch64 || echo host)"
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}
float_onnx=$cache/files/blazeface_128.onnx
qdq_onnx=$cache/quant/blazeface_128_qdq.onnx
for f in "$float_onnx" "$qdq_onnx"; do
  [ -f "$f" ] || { echo "int8.sh: $f missing: run engine/tests/models/fetch_models.sh" >&2; exit 1; }
done
[ -x "$build/engine/kes-model-bench" ] || { echo "int8.sh: build $build first (engine/kes-model-bench)" >&2; exit 1; }
# The converter is the host build's in both cases (an aarch64 one would run under qemu; .kom files do
# not depend on the machine that converted them).
convert="$root/build/host/engine/kes-convert"
[ -x "$convert" ] || { echo "int8.sh: build the host's engine/kes-convert first (build/host)" >&2; exit 1; }
work="$build/bench-int8"
mkdir -p "$work"
"$convert" "$float_onnx" -o "$work/f32.kom" >/dev/null
"$convert" "$qdq_onnx" -o "$work/int8.kom" >/dev/null

field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" <<<"$1" | tr -d '"'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

if [ "$qemu" = 1 ]; then
  # shellcheck source-path=SCRIPTDIR source=qemu_count.sh
  . "$root/bench/engine/qemu_count.sh"
  qemu_count_init "$work" || exit 1
  count() { qemu_count "$root/board/emulate.sh" "$build/engine/kes-model-bench" "$1" --iterations "$2" --warmup 0 --threads 1; }
  per_inference() { local one three; one=$(count "$1" 1) || exit 1; three=$(count "$1" 3) || exit 1; echo $(((three - one) / 2)); }
  echo "Q1 on aarch64: BlazeFace 128, instructions per inference (qemu-aarch64, 1 thread); ratio = f32 / int8"
  printf "%-12s %14s %14s %8s\n" cpu "f32 (M)" "int8 (M)" ratio
  for cpu in cortex-a53 cortex-a76; do
    f=$(KES_QEMU_CPU=$cpu per_inference "$work/f32.kom") || exit 1
    q=$(KES_QEMU_CPU=$cpu per_inference "$work/int8.kom") || exit 1
    awk -v c="$cpu" -v f="$f" -v q="$q" 'BEGIN { printf "%-12s %14.1f %14.1f %8.2f\n", c, f / 1e6, q / 1e6, f / q }'
  done
  exit 0
fi

[ -f "$cache/ort/node_modules/onnxruntime-node/package.json" ] ||
  { echo "int8.sh: the ONNX Runtime peer (npm onnxruntime-node) is not in $cache/ort: run fetch_models.sh" >&2; exit 1; }
export NODE_PATH="$cache/ort/node_modules"
echo "machine: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs; load:$(uptime | sed 's/.*load average://')"
# Minima beside the medians: on a loaded machine the medians measure the other processes too (a run
# longer than a time slice is preempted more often), the fastest run less so.
echo "BlazeFace 128, $iterations runs after 20 warm-up, ms (median / min); Q1 = f32 / int8, Q2 = Kestrel int8 / ORT int8 (of medians / of minima)"
printf "%3s %16s %16s %16s %12s %12s\n" thr "kes f32" "kes int8" "ORT int8" Q1 Q2
for t in 1 2; do
  f=$("$build/engine/kes-model-bench" "$work/f32.kom" --threads "$t" --iterations "$iterations" --warmup 20 --json)
  q=$("$build/engine/kes-model-bench" "$work/int8.kom" --threads "$t" --iterations "$iterations" --warmup 20 --json)
  o=$(node "$root/bench/engine/ort_bench.cjs" "$qdq_onnx" "$t" "$iterations" 20 2>"$work/ort.err") ||
    { cat "$work/ort.err" >&2; echo "int8.sh: the ONNX Runtime peer failed (its messages are above)" >&2; exit 1; }
  fm=$(field "$f" median_ms) qm=$(field "$q" median_ms) om=$(field "$o" median_ms)
  fn=$(field "$f" min_ms) qn=$(field "$q" min_ms) on=$(field "$o" min_ms)
  printf "%3s %16s %16s %16s %12s %12s\n" "$t" "$(printf '%.2f / %.2f' "$fm" "$fn")" "$(printf '%.2f / %.2f' "$qm" "$qn")" \
    "$(printf '%.2f / %.2f' "$om" "$on")" "$(ratio "$fm" "$qm") / $(ratio "$fn" "$qn")" "$(ratio "$qm" "$om") / $(ratio "$qn" "$on")"
done
echo "load after:$(uptime | sed 's/.*load average://')"
