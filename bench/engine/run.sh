#!/usr/bin/env bash
# bench/engine/run.sh — P6 and the engine's efficiency and memory goals (issue 11), Kestrel beside its
# peers in one run: ONNX Runtime 1.30 (npm onnxruntime-node, driven by ort_bench.cjs) and OpenCV 4.6 DNN
# (opencv_dnn_bench.cpp) on the ONNX models; the TFLite models (no ORT peer) against this machine's
# measured FMA peak (fma_peak.cpp). Prints a table of ratios (Kestrel time / peer time: ≤ 1 is as
# fast or faster) and, with --json FILE, writes every measurement for tools/bench_table.py.
#
#   bench/engine/run.sh [BUILD_DIR] [--iterations N] [--json FILE]      (or ./kestrel.sh bench-engine)
# Needs the host build (kes-convert, kes-model-bench), node + the model cache of
# engine/tests/models/fetch_models.sh, and libopencv-dev. Medians and p99 over N runs (default 100)
# after 20 warm-up runs, at 1 and 2 threads; each engine runs in its own process.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build/host"
iterations=100
json=""
build_given=""
usage_error() { echo "run.sh: $1 (run.sh -h for usage)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --iterations|--json)
      [ $# -ge 2 ] && [ -n "$2" ] || usage_error "$1 needs a value"
      case "$1" in --iterations) iterations=$2 ;; --json) json=$2 ;; esac
      shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) usage_error "unknown option $1" ;;
    *) [ -z "$build_given" ] || usage_error "one BUILD_DIR only (got $build_given and $1)"
       build=$1; build_given=$1; shift ;;
  esac
done
# Checked before anything is built or run (an --iterations of abc reached kes-model-bench after the
# OpenCV peer was compiled and the models converted).
[[ "$iterations" =~ ^[1-9][0-9]*$ ]] || usage_error "--iterations takes a positive integer, not '$iterations'"
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}
files=$cache/files
for f in blazeface_256.onnx blazeface_128.onnx mobilefacenet.tflite mtcnn_pnet.tflite; do
  [ -f "$files/$f" ] || { echo "run.sh: $files/$f missing: run engine/tests/models/fetch_models.sh" >&2; exit 1; }
done
# The ONNX Runtime peer: node and npm's onnxruntime-node in the model cache. Without them the first
# `node ort_bench.cjs` failed with its stderr thrown away, and run.sh exited 1 saying nothing.
command -v node >/dev/null || { echo "run.sh: node not found: apt-get install nodejs npm (the ONNX Runtime peer runs in Node)" >&2; exit 1; }
if [ ! -f "$cache/ort/node_modules/onnxruntime-node/package.json" ]; then
  echo "run.sh: the ONNX Runtime peer (npm onnxruntime-node) is not in $cache/ort. Install it with" \
       "engine/tests/models/fetch_models.sh, or: mkdir -p $cache/ort && (cd $cache/ort &&" \
       "ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund onnxruntime-node@1.30.0)" >&2
  exit 1
fi
for t in engine/kes-model-bench bench/kes-fma-peak; do
  [ -x "$build/$t" ] || { echo "run.sh: build $build first ($t)" >&2; exit 1; }
done
work="$build/bench-engine"
mkdir -p "$work"
g++ -O2 -std=c++17 -I/usr/include/opencv4 "$root/bench/engine/opencv_dnn_bench.cpp" -o "$work/opencv_dnn_bench" \
  -lopencv_dnn -lopencv_core
export NODE_PATH="$cache/ort/node_modules"

for m in blazeface_256 blazeface_128; do "$build/engine/kes-convert" "$files/$m.onnx" -o "$work/$m.kom" >/dev/null; done
"$build/engine/kes-convert" "$files/mobilefacenet.tflite" -o "$work/mobilefacenet.kom" >/dev/null
"$build/engine/kes-convert" "$files/mtcnn_pnet.tflite" -o "$work/pnet.kom" >/dev/null

field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" <<<"$1" | tr -d '"'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
results=()
peak=$("$build/bench/kes-fma-peak")
peak_gflops=$(field "$peak" gflops)
echo "machine: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs; FMA peak (1 core, $(field "$peak" isa)): $peak_gflops GFLOP/s"
echo "$iterations runs after 20 warm-up; ratio = Kestrel / peer (≤ 1: Kestrel as fast or faster)"
echo
printf "%-16s %3s  %-22s %-22s %-22s %8s %8s\n" model thr "kestrel med / p99 ms" "ORT med / p99 ms" "OpenCV med / p99 ms" "vs ORT" "vs OCV"
for m in blazeface_256 blazeface_128; do
  size=${m#blazeface_}
  for t in 1 2; do
    k=$("$build/engine/kes-model-bench" "$work/$m.kom" --threads "$t" --iterations "$iterations" --warmup 20 --json)
    o=$(node "$root/bench/engine/ort_bench.cjs" "$files/$m.onnx" "$t" "$iterations" 20 2>"$work/ort.err") ||
      { cat "$work/ort.err" >&2; echo "run.sh: the ONNX Runtime peer failed on $m (its messages are above)" >&2; exit 1; }
    c=$("$work/opencv_dnn_bench" "$files/$m.onnx" "1,$size,$size,3" "$t" "$iterations" 20)
    printf "%-16s %3s  %-22s %-22s %-22s %8s %8s\n" "$m" "$t" \
      "$(field "$k" median_ms) / $(field "$k" p99_ms)" "$(field "$o" median_ms) / $(field "$o" p99_ms)" \
      "$(field "$c" median_ms) / $(field "$c" p99_ms)" \
      "$(ratio "$(field "$k" median_ms)" "$(field "$o" median_ms)")" \
      "$(ratio "$(field "$k" median_ms)" "$(field "$c" median_ms)")"
    results+=("{\"case\":\"P6 $m\",\"threads\":$t,\"kestrel\":$k,\"ort\":$o,\"opencv\":$c}")
    if [ "$t" = 1 ]; then k1=$k; o1=$o; fi
  done
  echo "  load: kestrel $(field "$k1" load_ms) ms (mmap + prepack), ORT session $(field "$o1" load_ms) ms;" \
       "peak RSS kestrel $(field "$k1" rss_kib) KiB, ORT $(field "$o1" rss_kib) KiB (Node included)"
  echo "  memory: work $(field "$k1" work) B = $(ratio "$(field "$k1" work)" "$(field "$k1" ideal)")x ideal;" \
       "packed weights $(field "$k1" packed) B = $(ratio "$(field "$k1" packed)" "$(field "$k1" packed_raw)")x their raw bytes"
  [ "$m" = blazeface_256 ] && scale_256="$(ratio "$(field "$k1" median_ms)" "$(field "$k" median_ms)")"
done
echo "  2 threads on BlazeFace-256: ${scale_256}x the 1-thread speed"
echo
printf "%-16s %3s  %-22s %10s %12s\n" model thr "kestrel med / p99 ms" "GFLOP/s" "of FMA peak"
for m in mobilefacenet pnet; do
  for t in 1 2; do
    k=$("$build/engine/kes-model-bench" "$work/$m.kom" --threads "$t" --iterations "$iterations" --warmup 20 --json)
    g=$(awk -v f="$(field "$k" gflop)" -v ms="$(field "$k" median_ms)" 'BEGIN { printf "%.1f", f / ms * 1000 }')
    printf "%-16s %3s  %-22s %10s %11s%%\n" "$m" "$t" "$(field "$k" median_ms) / $(field "$k" p99_ms)" "$g" \
      "$(awk -v g="$g" -v p="$peak_gflops" -v t="$t" 'BEGIN { printf "%.0f", 100 * g / (p * t) }')"
    results+=("{\"case\":\"P6 $m\",\"threads\":$t,\"kestrel\":$k,\"fma_peak_gflops\":$peak_gflops}")
  done
done
# The 1x1 convolutions with >= 64 output channels of MobileFaceNet, from the per-layer profile.
"$build/engine/kes-model-bench" "$work/mobilefacenet.kom" --threads 1 --iterations "$iterations" --profile |
  awk -v peak="$peak_gflops" '$4 ~ /^igemm-/ && $3 == "Conv" {
      split($5, s, ","); c = s[4]; sub(/\]/, "", c)
      if (c + 0 >= 64 && $NF + 0 > 0) { f += $NF * $(NF-2); t += $(NF-2) } }
    END { if (t > 0) printf "\nMobileFaceNet igemm convolutions with >= 64 channels: %.1f GFLOP/s = %.0f%% of the FMA peak\n", f / t, 100 * f / t / peak }'
if [ -n "$json" ]; then
  (IFS=,; echo "[${results[*]}]") >"$json"
  echo "measurements: $json"
fi
