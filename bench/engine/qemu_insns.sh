#!/usr/bin/env bash
# bench/engine/qemu_insns.sh — aarch64 instructions per inference on the emulated board (no ARM hardware
# here, so instructions executed stand in for time): kes-model-bench of the aarch64 build under qemu
# (board/emulate.sh), with qemu logging every translated block (in_asm) and every block it runs (exec,
# nochain so none is skipped); a block's run counts its instructions. The model runs with 1 and with 3
# timed iterations (no warm-up, 1 thread); half the difference is one inference, load excluded.
#
#   bench/engine/qemu_insns.sh MODEL.kom [AARCH64_BUILD_DIR]
# Prints one line per path: the NEON table, the scalar table (KES_CPU_DISABLE=all) and the reference
# kernels (KES_KERNELS=reference), with their ratio to NEON.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
case "${1:-}" in -h | --help | "") sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
model=$1
build=${2:-$root/build/aarch64}
bench="$build/engine/kes-model-bench"
[ -x "$bench" ] || { echo "qemu_insns.sh: build $build first (engine/kes-model-bench)" >&2; exit 1; }
[ -f "$model" ] || { echo "qemu_insns.sh: no such model '$model'" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Instructions executed by one run of kes-model-bench with $1 iterations; the rest of the environment
# (KES_CPU_DISABLE, KES_KERNELS) is the caller's. qemu writes its log into a pipe that a counter reads,
# so the log (hundreds of MB) never reaches the disk.
count() {
  local fifo="$work/log.$1"
  mkfifo "$fifo"
  python3 - "$fifo" > "$work/count" <<'EOF' &
import re, sys
block_len, total, pc, n = {}, 0, None, 0
trace = re.compile(r'^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/')
with open(sys.argv[1], errors='replace') as log:
    for line in log:
        if line.startswith('Trace '):
            m = trace.match(line)
            if m:
                total += block_len.get(int(m.group(1), 16), 0)
        elif line.startswith('IN:'):
            pc, n = None, 0
        elif line.startswith('0x') and ':' in line:
            if pc is None:
                pc = int(line.split(':')[0], 16)
            n += 1
            block_len[pc] = n
print(total)
EOF
  local reader=$!
  QEMU_LOG=in_asm,exec,nochain QEMU_LOG_FILENAME="$fifo" "$root/board/emulate.sh" "$bench" "$model" \
    --iterations "$1" --warmup 0 --threads 1 > /dev/null
  wait "$reader"
  rm -f "$fifo"
  cat "$work/count"
}

per_inference() { echo $((($(count 3) - $(count 1)) / 2)); }

neon=$(per_inference)
scalar=$(KES_CPU_DISABLE=all per_inference)
reference=$(KES_KERNELS=reference per_inference)
echo "model: $(basename "$model"), aarch64 instructions per inference (qemu, 1 thread)"
for path in "neon:$neon" "scalar (KES_CPU_DISABLE=all):$scalar" "reference (KES_KERNELS=reference):$reference"; do
  name=${path%:*} n=${path##*:}
  awk -v name="$name" -v n="$n" -v base="$neon" 'BEGIN { printf "%-36s %8.1f M  %5.1fx\n", name, n / 1e6, n / base }'
done
