#!/usr/bin/env bash
# bench/engine/zoo.sh — Kestrel against ONNX Runtime 1.30 on held-out-style public CNNs: the
# architectures of make_zoo.py (ResNet-18, SqueezeNet 1.1, ShuffleNetV2, YOLOv5n, UltraFace slim,
# iresnet ArcFace, a small U-Net, EfficientNet-B0, MobileNetV2) with random seeded weights, as their
# PyTorch exports spell them. Per model: kes-convert (a failure is a row with its error, then the next
# model), Kestrel's outputs against ORT's on one random input (kes-compare), then kes-model-bench and
# ort_bench.cjs at 1 and 2 threads, each in its own process, and kes-model-bench --profile at 1 thread
# (saved to BUILD_DIR/bench-zoo/<model>.profile.txt; its top 5 layers and its reference-kernel layers
# are printed). Ratio = Kestrel median / ORT median (≤ 1: Kestrel as fast or faster).
#
#   bench/engine/zoo.sh [BUILD_DIR] [--iterations N] [--models a,b,...] [--json FILE]
# BUILD_DIR defaults to build/host (needs engine/kes-convert, kes-model-bench, kes-compare); node and
# the model cache's onnxruntime-node (engine/tests/models/fetch_models.sh); /usr/bin/python3 with numpy
# and onnx. N runs (default 100) after 20 warm-up runs; --models picks from make_zoo.py --list.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build/host"
iterations=100
models=""
json=""
build_given=""
python=/usr/bin/python3
zoo="$root/bench/engine/make_zoo.py"
usage_error() { echo "zoo.sh: $1 (zoo.sh -h for usage)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --iterations|--models|--json)
      [ $# -ge 2 ] && [ -n "$2" ] || usage_error "$1 needs a value"
      case "$1" in --iterations) iterations=$2 ;; --models) models=$2 ;; --json) json=$2 ;; esac
      shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) usage_error "unknown option $1" ;;
    *) [ -z "$build_given" ] || usage_error "one BUILD_DIR only (got $build_given and $1)"
       build=$1; build_given=$1; shift ;;
  esac
done
[[ "$iterations" =~ ^[1-9][0-9]*$ ]] || usage_error "--iterations takes a positive integer, not '$iterations'"
[ -x "$python" ] || { echo "zoo.sh: $python missing" >&2; exit 1; }
known=$("$python" "$zoo" --list)
if [ -z "$models" ]; then
  models=$(paste -sd, <<<"$known")
else
  IFS=, read -ra wanted <<<"$models"
  [ ${#wanted[@]} -gt 0 ] || usage_error "--models names no model"
  for m in "${wanted[@]}"; do
    grep -qx -- "$m" <<<"$known" || usage_error "unknown model '$m'; known: $(paste -sd, <<<"$known")"
  done
fi
[ -d "$build" ] || usage_error "no build directory $build"
build="$(cd "$build" && pwd)"
for t in kes-convert kes-model-bench kes-compare; do
  [ -x "$build/engine/$t" ] || { echo "zoo.sh: build $build first (engine/$t): cmake --build $build -j2" >&2; exit 1; }
done
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}
export NODE_PATH="$cache/ort/node_modules"
[ -d "$NODE_PATH/onnxruntime-node" ] || { echo "zoo.sh: $NODE_PATH/onnxruntime-node missing: run engine/tests/models/fetch_models.sh" >&2; exit 1; }
if [ -n "$json" ]; then : >"$json" || { echo "zoo.sh: cannot write $json" >&2; exit 1; }; fi

work="$build/bench-zoo"
mkdir -p "$work"
# ORT's outputs on one random input (uniform in [-1, 1], seeded), written with that input as .npy files
# named as kes-compare expects (<tensor>.npy, characters outside [A-Za-z0-9._-] as '_').
cat >"$work/ort_reference.cjs" <<'EOF'
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
function npy(file, dims, data) {
    let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
    header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
    const head = Buffer.alloc(10);
    head.write('\x93NUMPY', 0, 'latin1');
    head[6] = 1;
    head.writeUInt16LE(header.length, 8);
    fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}
const safe = (name) => name.replace(/[^A-Za-z0-9._-]/g, '_');
(async () => {
    const [model, out] = process.argv.slice(2);
    fs.mkdirSync(out, {recursive: true});
    const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, graphOptimizationLevel: 'disabled'});
    const feeds = {};
    let seed = 7;
    for (const [i, name] of session.inputNames.entries()) {
        const dims = session.inputMetadata[i].shape;
        const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
        for (let j = 0; j < data.length; j++) {
            seed = (seed * 1103515245 + 12345) & 0x7fffffff;
            data[j] = (seed / 0x7fffffff) * 2 - 1;
        }
        npy(path.join(out, `input.${safe(name)}.npy`), dims, data);
        console.log(`${name}=${path.join(out, `input.${safe(name)}.npy`)}`);
        feeds[name] = new ort.Tensor('float32', data, dims);
    }
    const result = await session.run(feeds);
    for (const name of session.outputNames) npy(path.join(out, `${safe(name)}.npy`), result[name].dims, result[name].data);
})().catch((e) => { console.error(`ort_reference: ${e.message}`); process.exit(1); });
EOF

field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" <<<"$1" | tr -d '"'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
first_error() { grep -m1 -E 'KES_ERR|error' "$1" || tail -n1 "$1"; }
results=()
report=()
load=$(cut -d' ' -f1-3 /proc/loadavg)
echo "machine: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs; load average $load before the run"
echo "$iterations runs after 20 warm-up; ratio = Kestrel / ORT (≤ 1: Kestrel as fast or faster);" \
     "max |Δ|: Kestrel's outputs against ORT's on one random input (kes-compare, rtol 1e-3, atol 1e-4)"
echo
echo "models (make_zoo.py, written to $work):"
IFS=, read -ra selected <<<"$models"
generated=()
for m in "${selected[@]}"; do
  if "$python" "$zoo" "$work" --models "$m" >"$work/$m.zoo.txt" 2>&1; then
    generated+=("$m")
    sed 's/^/  /' "$work/$m.zoo.txt"
  else
    report+=("$m: make_zoo.py failed: $(tail -n1 "$work/$m.zoo.txt")")
  fi
done
echo
printf "%-20s %3s  %-22s %-22s %6s  %-10s %s\n" model thr "kestrel med / p99 ms" "ORT med / p99 ms" ratio "max |Δ|" "accuracy"
for m in "${generated[@]}"; do
  onnx="$work/$m.onnx"
  if ! "$build/engine/kes-convert" "$onnx" -o "$work/$m.kom" >"$work/$m.convert.txt" 2>"$work/$m.convert.err"; then
    err=$(first_error "$work/$m.convert.err")
    printf "%-20s %3s  conversion failed: %s\n" "$m" - "$err"
    results+=("{\"case\":\"zoo $m\",\"convert_error\":$(node -e 'console.log(JSON.stringify(process.argv[1]))' "$err")}")
    report+=("$m: conversion failed: $err")
    continue
  fi
  # Accuracy: ORT (no graph optimisation) and Kestrel on the same input bytes.
  rm -rf "$work/$m.ort" "$work/$m.kes"
  accuracy="" maxabs="-"
  if ! feeds=$(node "$work/ort_reference.cjs" "$onnx" "$work/$m.ort" 2>"$work/$m.ort.err"); then
    accuracy="ORT failed: $(tail -n1 "$work/$m.ort.err")"
  else
    args=()
    while read -r f; do args+=(--input "$f"); done <<<"$feeds"
    if ! "$build/engine/kes-model-bench" "$work/$m.kom" --threads 1 --iterations 1 --warmup 0 "${args[@]}" \
         --dump "$work/$m.kes" >"$work/$m.dump.txt" 2>&1; then
      accuracy="kestrel failed: $(first_error "$work/$m.dump.txt")"
    else
      set +e
      "$build/engine/kes-compare" "$work/$m.kes" "$work/$m.ort" --all >"$work/$m.compare.txt" 2>&1
      rc=$?
      set -e
      # The tensors kes-compare matched are the graph outputs (ORT's files); max |Δ| over all of them.
      maxabs=$(awk '$2 ~ /^\[/ && $3 ~ /^[0-9.e+-]+$/ { if ($3 + 0 > m) m = $3 + 0; n++ }
                    END { if (n) printf "%.3g", m; else print "-" }' "$work/$m.compare.txt")
      if [ $rc = 0 ]; then accuracy="ok"
      else
        accuracy="DIVERGES: $(grep -m1 -E 'first divergent|kes-compare:' "$work/$m.compare.txt" || tail -n1 "$work/$m.compare.txt")"
        report+=("$m: accuracy: $(grep -E 'diverges' "$work/$m.compare.txt" | head -3 | tr -s ' ' | paste -sd';') ($(grep -m1 'first divergent' "$work/$m.compare.txt"))")
      fi
    fi
  fi
  [[ "$accuracy" == "ok" || "$accuracy" == DIVERGES* ]] || report+=("$m: $accuracy")
  for t in 1 2; do
    k=$("$build/engine/kes-model-bench" "$work/$m.kom" --threads "$t" --iterations "$iterations" --warmup 20 --json \
        2>"$work/$m.bench.err") || k=""
    o=$(node "$root/bench/engine/ort_bench.cjs" "$onnx" "$t" "$iterations" 20 2>"$work/$m.ortbench.err") || o=""
    kt="failed" ot="failed" r="-"
    [ -n "$k" ] && kt="$(field "$k" median_ms) / $(field "$k" p99_ms)"
    [ -n "$o" ] && ot="$(printf "%.4f / %.4f" "$(field "$o" median_ms)" "$(field "$o" p99_ms)")"
    [ -n "$k" ] && [ -n "$o" ] && r=$(ratio "$(field "$k" median_ms)" "$(field "$o" median_ms)")
    [ -z "$k" ] && report+=("$m: kes-model-bench ($t threads) failed: $(tail -n1 "$work/$m.bench.err")")
    [ -z "$o" ] && report+=("$m: ort_bench.cjs ($t threads) failed: $(tail -n1 "$work/$m.ortbench.err")")
    printf "%-20s %3s  %-22s %-22s %6s  %-10s %s\n" "$m" "$t" "$kt" "$ot" "$r" "$maxabs" "$accuracy"
    results+=("{\"case\":\"zoo $m\",\"threads\":$t,\"kestrel\":${k:-null},\"ort\":${o:-null},\"max_abs_err\":\"$maxabs\"}")
  done
  "$build/engine/kes-model-bench" "$work/$m.kom" --threads 1 --iterations "$iterations" --warmup 20 --profile \
    >"$work/$m.profile.txt" 2>&1 || report+=("$m: profile failed: $(tail -n1 "$work/$m.profile.txt")")
done

# The profile's columns are fixed-width (model_bench.cpp: "%4zu  %-28.28s %-18.18s %-16.16s %-20.20s"
# then ms, %, GFLOP/s), so names are cut out by position; "reference" is a layer no fast kernel took.
echo
echo "per-layer profiles (1 thread, $work/<model>.profile.txt): top 5 layers by time, then the layers on reference kernels"
for m in "${generated[@]}"; do
  p="$work/$m.profile.txt"
  [ -s "$p" ] && grep -q 'total (layer medians)' "$p" || continue
  awk -v m="$m" '
    function trim(s) { gsub(/^ +| +$/, "", s); return s }
    /total \(layer medians\)/ { total = $NF; next }
    started && NF >= 8 {
      n++; layer[n] = trim(substr($0, 7, 28)); op[n] = trim(substr($0, 36, 18)); impl[n] = trim(substr($0, 55, 16))
      shape[n] = trim(substr($0, 72, 20)); split(trim(substr($0, 92)), v, / +/); ms[n] = v[1]; pct[n] = v[2]
      if (impl[n] == "reference") { rp[op[n]] += v[2]; rn[op[n]]++; rms[op[n]] += v[1]; rt += v[2] }
    }
    /^ +# +layer +op +kernel/ { started = 1 }
    END {
      printf "%s (%d layers, %.3f ms total of layer medians)\n", m, n, total
      for (k = 1; k <= 5 && k <= n; k++) {
        best = 0
        for (i = 1; i <= n; i++) if (!(i in used) && (best == 0 || ms[i] + 0 > ms[best] + 0)) best = i
        used[best] = 1
        printf "  %-28s %-18s %-16s %-20s %9.4f ms %6.2f%%\n", layer[best], op[best], impl[best], shape[best], ms[best], pct[best]
      }
      if (rt == 0) { print "  reference kernels: none"; exit }
      printf "  reference kernels: %.2f%% of the time:", rt
      sep = " "
      while (length(rp) > 0) {
        top = ""
        for (o in rp) if (top == "" || rms[o] + 0 > rms[top] + 0) top = o
        printf "%s%s %.2f%% (%d layers, %.4f ms)", sep, top, rp[top], rn[top], rms[top]; sep = ", "
        delete rp[top]
      }
      printf "\n"
    }' "$p"
done
if [ ${#report[@]} -gt 0 ]; then
  echo
  echo "failures:"
  printf '  %s\n' "${report[@]}"
fi
echo
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after the run (was $load)"
if [ -n "$json" ]; then
  (IFS=,; echo "[${results[*]}]") >"$json"
  echo "measurements: $json"
fi
