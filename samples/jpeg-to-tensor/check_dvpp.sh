#!/usr/bin/env bash
# ctest jpeg-to-tensor.SameTensorOnTheSimulatedDvpp: the same jpeg-to-tensor binary with the simulator on
# its library path runs JPEGE, JPEGD and VPC on the (simulated) DVPP hardware and must print exactly what
# it prints on the CPU, stage times aside: geometry, strides and the tensor's statistics. Both SoCs, both
# run modes (board: the CPU reads DVPP memory; PCIe card: it cannot, and Kestrel copies results out).
# With --trace (ctest jpeg-to-tensor.TraceAndStatsOnTheSimulatedDvpp) it checks instead that a trace taken
# on the simulator holds the app's spans, those of the CPU run (the simulator's own copy of Kestrel
# overwrote the file with none, issue 23 §3), and that --stats says which stage the hardware served:
# all of them, but JPEGD of a progressive JPEG, which the hardware refuses and the CPU serves.
#   check_dvpp.sh [--trace] JPEG_TO_TENSOR SIM_LIB_DIR [EMULATOR...]   (the emulated board runs it through board/emulate.sh)
set -euo pipefail
trace=0
if [ "${1:-}" == "--trace" ]; then
  trace=1
  shift
fi
app=$1 sim=$2
shift 2
app=("$@" "$app")
if [ $trace == 1 ]; then
  . "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
  command -v cjpeg >/dev/null || skip_missing "needs cjpeg (libjpeg-turbo-progs)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  sim_env=(KES_ASCEND_LIB_DIR="$sim" KES_BACKEND=ascend KES_SIM_SOC=Ascend310B4 KES_SIM_RUN_MODE=device)
  spans() { grep -o '"name":"[a-z_]*","cat":"[a-z]*"' "$1" || true; }
  KES_BACKEND=cpu KES_TRACE="$work/cpu.json" "${app[@]}" --stats >"$work/cpu.txt"
  grep -q "0 calls served by the DVPP hardware, 3 by the CPU" "$work/cpu.txt" ||
    { cat "$work/cpu.txt"; echo "FAIL: --stats on the CPU"; exit 1; }
  env "${sim_env[@]}" KES_TRACE="$work/hw.json" "${app[@]}" --stats >"$work/hw.txt"
  want=$(spans "$work/cpu.json") got=$(spans "$work/hw.json")
  [ -n "$want" ] && [ "$got" == "$want" ] ||
    { echo "FAIL: the trace taken on the simulator lost the app's spans:"; diff <(echo "$want") <(echo "$got"); exit 1; }
  for stage in JPEGE JPEGD "VPC  "; do
    grep -q "$stage by the DVPP hardware" "$work/hw.txt" || { cat "$work/hw.txt"; echo "FAIL: --stats: $stage"; exit 1; }
  done
  grep -q "3 calls served by the DVPP hardware, 0 by the CPU" "$work/hw.txt" ||
    { cat "$work/hw.txt"; echo "FAIL: --stats on the simulated DVPP"; exit 1; }
  # A progressive JPEG: the hardware refuses it, the CPU decodes it, and --stats says so.
  { printf 'P6\n64 48\n255\n'; head -c $((64 * 48 * 3)) /dev/zero | tr '\0' '\200'; } >"$work/grey.ppm"
  cjpeg -progressive -outfile "$work/progressive.jpg" "$work/grey.ppm"
  env "${sim_env[@]}" "${app[@]}" --stats "$work/progressive.jpg" >"$work/prog.txt" 2>/dev/null
  grep -q "JPEGD by the CPU (the hardware refused the input)" "$work/prog.txt" &&
    grep -q "1 by the CPU (1 refused by the hardware)" "$work/prog.txt" &&
    grep -q "VPC   by the DVPP hardware" "$work/prog.txt" ||
    { cat "$work/prog.txt"; echo "FAIL: --stats does not name the fallback"; exit 1; }
  echo "jpeg-to-tensor trace check: the simulator's trace holds the app's $(wc -l <<<"$got") spans; --stats:"
  grep -A4 "^stats" "$work/prog.txt"
  exit 0
fi
strip_times() { sed -E 's/  [0-9.]+ ms$//; /^board /d; /^pool /d'; }
for soc in Ascend310:310 Ascend310B4:310B; do
  board=${soc#*:} soc=${soc%%:*}
  cpu=$(KES_BACKEND=cpu "${app[@]}" --board "$board" | strip_times)
  grep -q "tensor 1x3x224x224" <<<"$cpu" || { echo "FAIL: the CPU run printed no tensor"; echo "$cpu"; exit 1; }
  for mode in device host; do
    hw=$(KES_ASCEND_LIB_DIR="$sim" KES_BACKEND=ascend KES_SIM_SOC=$soc KES_SIM_RUN_MODE=$mode KES_LOG_LEVEL=info \
      "${app[@]}" --board "$board" 2>"${TMPDIR:-/tmp}/jpeg-to-tensor-dvpp.log" | strip_times)
    grep -q "DVPP V1:" "${TMPDIR:-/tmp}/jpeg-to-tensor-dvpp.log" ||
      { echo "FAIL: $soc/$mode did not load the simulated DVPP"; cat "${TMPDIR:-/tmp}/jpeg-to-tensor-dvpp.log"; exit 1; }
    [ "$hw" == "$cpu" ] || { echo "FAIL: $soc/$mode printed other results:"; diff <(echo "$cpu") <(echo "$hw"); exit 1; }
    echo "jpeg-to-tensor dvpp check: $soc, run mode $mode: the same tensor as on the CPU"
  done
done
