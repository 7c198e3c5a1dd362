#!/usr/bin/env bash
# ctest face-search.SameResultsOnTheSimulatedNpu: the same face-search binary, given .om models, runs
# them on the (simulated) NPU through the Ascend executor and must print what it prints with the .kom
# models on the CPU (stdout: the enrolled faces, every face's name or "unknown" with its cosine, the
# annotated JPEGs written; the timing goes to stderr), exactly. JPEGD, VPC and JPEGE then run on the
# simulated DVPP (libacl_dvpp.so), which follows the documented rules the CPU path follows.
# The .om files are the AIPP-carrying .kom files wrapped by kes-sim-pack (the simulator's model format);
# both SoCs and both run modes (board: device memory the CPU can read; PCIe card: it cannot).
# With --trace (ctest face-search.TraceAndStatsOnTheSimulatedNpu) it runs once on the simulator instead,
# with KES_TRACE and --stats: the trace must hold the app's spans, the CPU run's 16 (the simulator's own
# copy of Kestrel overwrote the file with none, issue 23 §3), and --stats must say that the DVPP hardware
# and the NPU served the calls.
# Exits 77 (skipped) when the models are not in the cache.
#   check_npu.sh [--trace] KES_CONVERT KES_SIM_PACK FACE_SEARCH SIM_LIB_DIR WORK_DIR
set -euo pipefail
# A missing dependency skips the test, or fails it under CI (cmake/test_dependency.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
trace=0
if [ "${1:-}" == "--trace" ]; then
  trace=1
  shift
fi
convert=$1 pack=$2 search=$3 sim=$4 work=$5
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in blazeface_256.onnx mobilefacenet.tflite photo1.ppm photo3.ppm; do
  [ -f "$cache/$f" ] || skip_missing "face-search npu check: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
command -v cjpeg >/dev/null && command -v jpegtran >/dev/null || skip_missing "needs libjpeg-turbo-progs"
mkdir -p "$work/out"
aipp="$(dirname "${BASH_SOURCE[0]}")/aipp_rgb_centered.cfg"
"$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256.kom" --insert-op-conf "$aipp" >/dev/null
"$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet.kom" --dynamic-batch 1,2 \
  --insert-op-conf "$aipp" >/dev/null
cjpeg -quality 92 -outfile "$work/photo1.jpg" "$cache/photo1.ppm"
cjpeg -quality 92 -outfile "$work/photo3.jpg" "$cache/photo3.ppm"
jpegtran -crop 900x600+16+8 -outfile "$work/photo1_shifted.jpg" "$work/photo1.jpg"
# Three people enrolled by name from photo 1, searched in a shifted copy of it and in photo 3.
args=(--enroll "ava=$work/photo1.jpg:0" --enroll "mia=$work/photo1.jpg:1" --enroll "zoe=$work/photo1.jpg:2"
  --out "$work/out" "$work/photo1_shifted.jpg" "$work/photo3.jpg")
cpu=$(KES_BACKEND=cpu KES_TRACE="$work/cpu.json" "$search" "$work/blazeface_256.kom" "$work/mobilefacenet.kom" \
  "${args[@]}" 2>/dev/null)
grep -q ": zoe, cosine" <<<"$cpu" || { echo "FAIL: the CPU run named nobody"; echo "$cpu"; exit 1; }
if [ $trace == 1 ]; then
  # The app's own spans (category face-search), by name, in order of their names.
  spans() { { grep -o '"name":"[a-z]*","cat":"face-search"' "$1" || true; } | sort; }
  want=$(spans "$work/cpu.json")
  [ "$(wc -l <<<"$want")" -ge 16 ] || { echo "FAIL: the CPU run traced $(wc -l <<<"$want") face-search spans"; exit 1; }
  for m in blazeface_256 mobilefacenet; do "$pack" "$work/$m.kom" "$work/$m.om" --soc Ascend310B4 >/dev/null; done
  KES_ASCEND_LIB_DIR="$sim" KES_BACKEND=ascend KES_TRACE="$work/npu.json" \
    "$search" "$work/blazeface_256.om" "$work/mobilefacenet.om" "${args[@]}" --stats >/dev/null 2>"$work/stderr" ||
    { cat "$work/stderr"; echo "FAIL: face-search failed on the simulator"; exit 1; }
  got=$(spans "$work/npu.json")
  [ "$got" == "$want" ] ||
    { echo "FAIL: the trace taken on the simulator lost the app's spans:"; diff <(echo "$want") <(echo "$got"); exit 1; }
  # The simulated NPU's own work lands in the same trace: the AIPP its engine runs inside each model.
  grep -q '"name":"aipp_execute"' "$work/npu.json" || { echo "FAIL: no span of the simulated NPU"; exit 1; }
  grep -Eq "DVPP channel with the hardware: [1-9][0-9]* calls served by the DVPP hardware, 0 by the CPU" \
    "$work/stderr" || { cat "$work/stderr"; echo "FAIL: --stats does not say the DVPP hardware served"; exit 1; }
  [ "$(grep -c ": the NPU (a .om" "$work/stderr")" == 2 ] ||
    { cat "$work/stderr"; echo "FAIL: --stats does not say both models ran on the NPU"; exit 1; }
  echo "face-search trace check: $(wc -l <<<"$got") face-search spans in the simulator's trace, as on the CPU; --stats:"
  grep -A3 "face-search stats" "$work/stderr"
  exit 0
fi
for soc in Ascend310 Ascend310B4; do
  for m in blazeface_256 mobilefacenet; do "$pack" "$work/$m.kom" "$work/$m.$soc.om" --soc "$soc" >/dev/null; done
  for mode in device host; do
    npu=$(KES_ASCEND_LIB_DIR="$sim" KES_BACKEND=ascend KES_SIM_SOC=$soc KES_SIM_RUN_MODE=$mode \
      "$search" "$work/blazeface_256.$soc.om" "$work/mobilefacenet.$soc.om" "${args[@]}" 2>"$work/stderr") ||
      { cat "$work/stderr"; echo "FAIL: $soc/$mode: face-search failed"; exit 1; }
    # Exactly the same text: the simulated DVPP follows the documented rules Kestrel's CPU path follows
    # (JPEGD through libjpeg-turbo, VPC as OpenCV's resize), and the simulated NPU runs the same model.
    [ "$npu" == "$cpu" ] || { echo "FAIL: $soc/$mode printed other results:"; diff <(echo "$cpu") <(echo "$npu"); exit 1; }
    echo "face-search npu check: $soc, run mode $mode: the same results as on the CPU"
  done
done
