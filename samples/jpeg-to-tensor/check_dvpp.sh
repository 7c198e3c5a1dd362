#!/usr/bin/env bash
# ctest jpeg-to-tensor.SameTensorOnTheSimulatedDvpp: the same jpeg-to-tensor binary with the simulator on
# its library path runs JPEGE, JPEGD and VPC on the (simulated) DVPP hardware and must print exactly what
# it prints on the CPU, stage times aside: geometry, strides and the tensor's statistics. Both SoCs, both
# run modes (board: the CPU reads DVPP memory; PCIe card: it cannot, and Kestrel copies results out).
#   check_dvpp.sh JPEG_TO_TENSOR SIM_LIB_DIR [EMULATOR...]   (the emulated board runs it through board/emulate.sh)
set -euo pipefail
app=$1 sim=$2
shift 2
app=("$@" "$app")
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
