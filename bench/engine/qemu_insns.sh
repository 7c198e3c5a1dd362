#!/usr/bin/env bash
# bench/engine/qemu_insns.sh — aarch64 instructions per inference on the emulated board (no ARM hardware
# here, so instructions executed stand in for time): kes-model-bench of the aarch64 build under qemu
# (board/emulate.sh), counted by qemu_count.sh (qemu logs every block it translates and runs; a block's
# run counts its instructions). The model runs with 1 and with 3 timed iterations (no warm-up, 1
# thread); half the difference is one inference, load excluded. qemu_ort_insns.sh counts the same way,
# beside ONNX Runtime.
#
#   bench/engine/qemu_insns.sh MODEL.kom [AARCH64_BUILD_DIR]
# Prints one line per path: the NEON table, the scalar table (KES_CPU_DISABLE=all) and the reference
# kernels (KES_KERNELS=reference), with their ratio to NEON.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
case "${1:-}" in -h | --help | "") awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;; esac
model=$1
build=${2:-$root/build/aarch64}
bench="$build/engine/kes-model-bench"
[ -x "$bench" ] || { echo "qemu_insns.sh: build $build first (engine/kes-model-bench)" >&2; exit 1; }
[ -f "$model" ] || { echo "qemu_insns.sh: no such model '$model'" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source-path=SCRIPTDIR source=qemu_count.sh
. "$root/bench/engine/qemu_count.sh"
qemu_count_init "$work" || exit 1

# Instructions executed by one run of kes-model-bench with $1 iterations; the rest of the environment
# (KES_CPU_DISABLE, KES_KERNELS) is the caller's.
count() {
  qemu_count "$root/board/emulate.sh" "$bench" "$model" --iterations "$1" --warmup 0 --threads 1 || exit 1
}

per_inference() { local one three; one=$(count 1) || exit 1; three=$(count 3) || exit 1; echo $(((three - one) / 2)); }

neon=$(per_inference) || exit 1
scalar=$(KES_CPU_DISABLE=all per_inference) || exit 1
reference=$(KES_KERNELS=reference per_inference) || exit 1
echo "model: $(basename "$model"), aarch64 instructions per inference (qemu, 1 thread)"
for path in "neon:$neon" "scalar (KES_CPU_DISABLE=all):$scalar" "reference (KES_KERNELS=reference):$reference"; do
  name=${path%:*} n=${path##*:}
  awk -v name="$name" -v n="$n" -v base="$neon" 'BEGIN { printf "%-36s %8.1f M  %5.1fx\n", name, n / 1e6, n / base }'
done
