#!/usr/bin/env bash
# bench/engine/qemu_ort_insns.sh — aarch64 instructions per inference, Kestrel beside ONNX Runtime 1.30,
# on the emulated board (no ARM hardware here: instructions executed stand in for time). Both run under
# the same qemu-aarch64-static (board/emulate.sh) with the same CPU model, 1 thread, the same input (seeded,
# uniform in [-1, 1]), and are counted the same way (qemu_count.sh: 1 and 3 inferences, half the
# difference). Kestrel: the aarch64 build's kes-model-bench on the .kom that its kes-convert writes.
# ORT: npm onnxruntime-node's arm64 library driven by ort_run.cjs in Debian's arm64 Node.js (run with
# --jitless); instructions inside libnode (V8 and Node's runtime: the JS driver) are not logged, so
# ORT's count is ORT, its N-API binding and the C/C++ runtime. Each model's outputs are compared
# (cosine, the smallest over the outputs; below 0.9999 fails the run).
#
#   bench/engine/qemu_ort_insns.sh [AARCH64_BUILD_DIR] [--models a,b,...] [--cpus c,...] [--out DIR]
# BUILD_DIR defaults to build/aarch64 (engine/kes-model-bench, engine/kes-convert). Models (default
# all): blazeface_128, blazeface_256 (the model cache of engine/tests/models/fetch_models.sh), and
# make_zoo.py's mobilenetv2, resnet18, yolov5n. CPU models (default both): cortex-a53, cortex-a76.
# Files (models, inputs, outputs) go to DIR, by default BUILD_DIR/bench-qemu-ort: give runs at the
# same time their own. Needs qemu-user-static, libc6:arm64 and libstdc++6:arm64,
# /usr/bin/python3 with numpy and onnx, cc, and on first use apt-get (arm64 enabled) to unpack Debian's
# arm64 nodejs into ~/.cache/kestrel/arm64-node (KES_ARM64_NODE_ROOT). Slow: qemu logs every block it
# runs; BlazeFace-128 takes minutes, ResNet-18 much longer. Exit 2: bad usage; 1: any other failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
all_models=(blazeface_128 blazeface_256 mobilenetv2 resnet18 yolov5n)
all_cpus=(cortex-a53 cortex-a76)
build="$root/build/aarch64"
models=""
cpus=""
out=""
build_given=""
python=/usr/bin/python3
min_cosine=0.9999
usage_error() { echo "qemu_ort_insns.sh: $1 (qemu_ort_insns.sh -h for usage)" >&2; exit 2; }
fail() { echo "qemu_ort_insns.sh: $1" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --models|--cpus|--out)
      [ $# -ge 2 ] && [ -n "$2" ] || usage_error "$1 needs a value"
      case "$1" in --models) models=$2 ;; --cpus) cpus=$2 ;; --out) out=$2 ;; esac
      shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) usage_error "unknown option $1" ;;
    *) [ -z "$build_given" ] || usage_error "one BUILD_DIR only (got $build_given and $1)"
       build=$1; build_given=$1; shift ;;
  esac
done
# pick LIST KIND KNOWN...: the comma-separated LIST, each checked against KNOWN (all of them if empty).
pick() {
  local list=$1 kind=$2 w k ok
  shift 2
  if [ -z "$list" ]; then echo "$*"; return; fi
  IFS=, read -ra wanted <<<"$list"
  for w in "${wanted[@]}"; do
    ok=""
    for k in "$@"; do [ "$w" = "$k" ] && ok=1; done
    [ -n "$ok" ] || usage_error "unknown $kind '$w'; known: $(IFS=,; echo "$*")"
  done
  echo "${wanted[*]}"
}
picked=$(pick "$models" model "${all_models[@]}") || exit 2
read -ra models <<<"$picked"
picked=$(pick "$cpus" "CPU model" "${all_cpus[@]}") || exit 2
read -ra cpus <<<"$picked"
[ ${#models[@]} -gt 0 ] || usage_error "--models names no model"
[ ${#cpus[@]} -gt 0 ] || usage_error "--cpus names no CPU model"

[ -n "$build_given" ] && [ ! -d "$build" ] && usage_error "no build directory $build"
[ -d "$build" ] || fail "no build directory $build (cmake --preset aarch64 -B $build)"
build="$(cd "$build" && pwd)"
for t in kes-model-bench kes-convert; do
  [ -x "$build/engine/$t" ] ||
    fail "build $build first (engine/$t): cmake --build $build -j2 --target kes-model-bench kes-convert"
done
# ELF e_machine 183: AArch64 (a host build's kes-model-bench would run natively and count nothing).
[ "$(od -An -tu2 -j18 -N2 "$build/engine/kes-model-bench" | tr -d ' ')" = 183 ] ||
  fail "$build/engine/kes-model-bench is not an aarch64 program (the aarch64 preset's build dir?)"
command -v qemu-aarch64-static >/dev/null || fail "qemu-aarch64-static missing (apt-get install qemu-user-static)"
[ -e /lib/ld-linux-aarch64.so.1 ] || fail "no arm64 runtime (dpkg --add-architecture arm64 && apt-get install libc6:arm64 libstdc++6:arm64)"
"$python" -c 'import numpy, onnx' 2>/dev/null || fail "$python with numpy and onnx needed (apt-get install python3-onnx)"
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}
ort_lib="$cache/ort/node_modules/onnxruntime-node/bin/napi-v6/linux/arm64/libonnxruntime.so.1"
[ -f "$ort_lib" ] || fail "$ort_lib missing: run engine/tests/models/fetch_models.sh"
for m in "${models[@]}"; do
  case "$m" in blazeface_*) [ -f "$cache/files/$m.onnx" ] || fail "$cache/files/$m.onnx missing: run engine/tests/models/fetch_models.sh" ;; esac
done

work=${out:-$build/bench-qemu-ort}
mkdir -p "$work" || fail "cannot make $work"
work="$(cd "$work" && pwd)"
# shellcheck source-path=SCRIPTDIR source=qemu_count.sh
. "$here/qemu_count.sh"
qemu_count_init "$work" || exit 1

# Debian's arm64 Node.js, unpacked (no install: nothing of the host changes). Node 18 loads
# cjs-module-lexer, acorn and undici from /usr/share/nodejs at start.
node_root=${KES_ARM64_NODE_ROOT:-$HOME/.cache/kestrel/arm64-node}
node_debs="nodejs:arm64 libnode108:arm64 libbrotli1:arm64 libc-ares2:arm64 libicu72:arm64 libnghttp2-14:arm64
           libssl3:arm64 libuv1:arm64 zlib1g:arm64 node-cjs-module-lexer node-acorn node-undici"
if [ ! -f "$node_root/.complete" ]; then
  echo "unpacking Debian's arm64 nodejs into $node_root" >&2
  debs=$(mktemp -d)
  # shellcheck disable=SC2086
  (cd "$debs" && apt-get download $node_debs >"$debs/apt.log" 2>&1) ||
    { tail -n 3 "$debs/apt.log" >&2; rm -rf "$debs"; fail "apt-get download failed (arm64 enabled? apt-get update?)"; }
  rm -rf "$node_root"
  mkdir -p "$node_root"
  for d in "$debs"/*.deb; do dpkg -x "$d" "$node_root"; done
  rm -rf "$debs"
  touch "$node_root/.complete"
fi
node="$node_root/usr/bin/node"

# One prefix (qemu -L) per CPU model: the Node.js files, and a /proc/cpuinfo of that core. qemu 7.2 shows
# an aarch64 program the host's x86 /proc/cpuinfo, and ORT (its cpuinfo library) dies on that at load
# with SIGSEGV; -L's prefix applies to /proc paths too. The Features are the kernel's for that core
# (ORT takes its ISA from the hwcaps qemu gives; the part number names the core for its kernel choice).
cpuinfo() {
  case "$1" in
    cortex-a53) part=0xd03 variant=0x0 revision=4 features="fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid" ;;
    cortex-a76) part=0xd0b variant=0x4 revision=1
                features="fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs" ;;
  esac
  printf 'processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: %s\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: %s\nCPU part\t: %s\nCPU revision\t: %s\n\n' \
    "$features" "$variant" "$part" "$revision"
}
for cpu in "${cpus[@]}"; do
  p="$work/prefix.$cpu"
  rm -rf "$p"
  mkdir -p "$p/proc"
  ln -s "$node_root/usr" "$p/usr"
  [ -d "$node_root/lib" ] && ln -s "$node_root/lib" "$p/lib"
  cpuinfo "$cpu" >"$p/proc/cpuinfo"
done
export NODE_PATH="$cache/ort/node_modules"
# on CPU PROGRAM ARGS...: the board's qemu with that CPU model and prefix.
on() { local cpu=$1; shift; KES_QEMU_CPU=$cpu KES_AARCH64_SYSROOT="$work/prefix.$cpu" "$root/board/emulate.sh" "$@"; }

# libnode's text, from an un-logged run (qemu places a program's libraries the same way every run):
# qemu logs only blocks outside it (-dfilter).
node_filter() {
  local maps range
  maps=$(on "$1" "$node" --jitless -e 'process.stdout.write(require("fs").readFileSync("/proc/self/maps", "utf8"))' \
         2>"$work/node.err") || fail "Node.js does not start under qemu ($1): $(tail -n 2 "$work/node.err")"
  range=$(awk '/libnode\.so/ && $2 ~ /x/ { print $1; exit }' <<<"$maps")
  [ -n "$range" ] || fail "no libnode text in Node's /proc/self/maps"
  printf '0..0x%x,0x%s..0xffffffffffffffff\n' $((0x${range%-*} - 1)) "${range#*-}"
}

echo "aarch64 instructions per inference: Kestrel ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')) and" \
     "ONNX Runtime $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$cache/ort/node_modules/onnxruntime-node/package.json")"
echo "$(qemu-aarch64-static --version | head -1), 1 thread; half the difference of 1 and 3 inferences;" \
     "ratio = Kestrel / ORT; cosine: smallest over the outputs"
echo
printf "%-15s %-11s %12s %12s %7s %10s\n" model "CPU model" "Kestrel M" "ORT M" ratio cosine
per() { echo $((($2 - $1) / 2)); }
failures=()
declare -A filter
for cpu in "${cpus[@]}"; do filter[$cpu]=$(node_filter "$cpu") || exit 1; done
for m in "${models[@]}"; do
  d="$work/$m"
  rm -rf "$d"
  mkdir -p "$d"
  case "$m" in
    blazeface_*) onnx="$cache/files/$m.onnx" ;;
    *) "$python" "$here/make_zoo.py" "$d" --models "$m" >"$d/zoo.txt" 2>&1 || fail "make_zoo.py $m: $(tail -n1 "$d/zoo.txt")"
       onnx="$d/$m.onnx" ;;
  esac
  on cortex-a53 "$build/engine/kes-convert" "$onnx" -o "$d/$m.kom" >"$d/convert.txt" 2>&1 ||
    { failures+=("$m: kes-convert: $(tail -n1 "$d/convert.txt")"); continue; }
  # The input: every graph input (a dynamic dimension as 1), seeded, as .npy files both sides read.
  inputs=$("$python" - "$onnx" "$d" <<'EOF' || fail "cannot write the inputs of $m"
import re, sys
import numpy as np, onnx
model = onnx.load(sys.argv[1], load_external_data=False)
known = {i.name for i in model.graph.initializer}
rng = np.random.default_rng(7)
for i in model.graph.input:
    if i.name in known:
        continue
    dims = [d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]
    path = f"{sys.argv[2]}/input.{re.sub(r'[^A-Za-z0-9._-]', '_', i.name)}.npy"
    np.save(path, rng.uniform(-1, 1, dims).astype(np.float32))
    print(f"{i.name}={path}")
EOF
  )
  kes_inputs=()
  while read -r f; do kes_inputs+=(--input "$f"); done <<<"$inputs"
  mapfile -t ort_inputs <<<"$inputs"
  for cpu in "${cpus[@]}"; do
    echo "  $m on $cpu: Kestrel" >&2
    k1=$(qemu_count on "$cpu" "$build/engine/kes-model-bench" "$d/$m.kom" --iterations 1 --warmup 0 --threads 1 "${kes_inputs[@]}") &&
    k3=$(qemu_count on "$cpu" "$build/engine/kes-model-bench" "$d/$m.kom" --iterations 3 --warmup 0 --threads 1 "${kes_inputs[@]}") &&
    on "$cpu" "$build/engine/kes-model-bench" "$d/$m.kom" --iterations 1 --warmup 0 --threads 1 "${kes_inputs[@]}" \
      --dump "$d/kestrel.$cpu" >"$d/dump.$cpu.txt" 2>&1 ||
      { failures+=("$m on $cpu: Kestrel failed (see $d)"); continue; }
    echo "  $m on $cpu: ORT" >&2
    o1=$(qemu_count --dfilter "${filter[$cpu]}" on "$cpu" "$node" --jitless "$here/ort_run.cjs" "$onnx" 1 "$d/ort.$cpu.1" "${ort_inputs[@]}") &&
    o3=$(qemu_count --dfilter "${filter[$cpu]}" on "$cpu" "$node" --jitless "$here/ort_run.cjs" "$onnx" 3 "$d/ort.$cpu" "${ort_inputs[@]}") ||
      { failures+=("$m on $cpu: ORT failed"); continue; }
    k=$(per "$k1" "$k3") o=$(per "$o1" "$o3")
    cosine=$("$python" - "$d/ort.$cpu" "$d/kestrel.$cpu" <<'EOF'
import os, sys
import numpy as np
worst, missing = 1.0, []
for f in sorted(os.listdir(sys.argv[1])):
    k = os.path.join(sys.argv[2], f)
    if not os.path.exists(k):
        missing.append(f[:-4])
        continue
    a = np.load(os.path.join(sys.argv[1], f)).astype(np.float64).ravel()
    b = np.load(k).astype(np.float64).ravel()
    if a.shape != b.shape:
        missing.append(f"{f[:-4]} (shape)")
        continue
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    worst = min(worst, 1.0 if na == nb == 0 else float(a @ b / (na * nb)) if na and nb else 0.0)
print("no Kestrel output " + ",".join(missing) if missing else f"{worst:.6f}")
EOF
    )
    printf "%-15s %-11s %12.1f %12.1f %7.2f %10s\n" "$m" "$cpu" "$(awk -v n="$k" 'BEGIN { print n / 1e6 }')" \
      "$(awk -v n="$o" 'BEGIN { print n / 1e6 }')" "$(awk -v a="$k" -v b="$o" 'BEGIN { printf "%.2f", a / b }')" "$cosine"
    awk -v c="$cosine" -v t="$min_cosine" 'BEGIN { exit !(c ~ /^[0-9.]+$/ && c + 0 >= t) }' ||
      failures+=("$m on $cpu: outputs differ (cosine $cosine, below $min_cosine)")
  done
done
if [ ${#failures[@]} -gt 0 ]; then
  echo
  echo "failures:"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
