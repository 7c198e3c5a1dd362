#!/usr/bin/env bash
# ctest hands.SameResultsOnTheSimulatedNpu: the same hands binary, given .om models (the .kom files wrapped
# by kes-sim-pack, the simulator's model format), runs them on the simulated NPU through the Ascend
# executor, with JPEGD, VPC and JPEGE on the simulated DVPP (board/ascend-sim), and must print exactly the
# JSON it prints with the .kom models on the CPU: palms, regions, crop matrices, flags and landmarks. The
# rotated crop (kes_warp_affine) runs on the CPU in both, reading the decoded image: both SoCs and both
# run modes (board: device memory the CPU can read; PCIe card: hands' channel decodes into its host pool).
# Exits 77 (skipped) when the models are not in the cache.
#   check_npu.sh KES_CONVERT KES_SIM_PACK HANDS SIM_LIB_DIR WORK_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
fail() { echo "FAIL: $*"; exit 1; }
[ $# -eq 5 ] || { echo "usage: check_npu.sh KES_CONVERT KES_SIM_PACK HANDS SIM_LIB_DIR WORK_DIR" >&2; exit 2; }
convert=$1 pack=$2 hands=$3 sim=$4 work=$5
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in mediapipe/palm_detection_full.tflite mediapipe/hand_landmark_full.tflite photo2.ppm photo3.ppm; do
  [ -f "$cache/$f" ] || skip_missing "hands npu check: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
command -v cjpeg >/dev/null || skip_missing "hands npu check: needs cjpeg (libjpeg-turbo-progs)"
rm -rf "$work"
mkdir -p "$work/out"
"$convert" "$cache/mediapipe/palm_detection_full.tflite" --output "$work/palm.kom" -q
"$convert" "$cache/mediapipe/hand_landmark_full.tflite" --output "$work/hand.kom" -q
for i in 2 3; do cjpeg -quality 92 "$cache/photo$i.ppm" >"$work/photo$i.jpg"; done
photos=("$work/photo2.jpg" "$work/photo3.jpg")
unsized() { sed -E 's/"width": [0-9]+, "height": [0-9]+, //'; }
# Each line's decoded size, rounded down to even (as the annotated output is).
sized() { grep -oE '"width": [0-9]+, "height": [0-9]+' | awk '{ w = $2 + 0; h = $4 + 0; print w - w % 2, h - h % 2 }'; }
cpu=$(KES_BACKEND=cpu "$hands" "$work/palm.kom" "$work/hand.kom" "${photos[@]}" --no-annotate 2>/dev/null)
[ "$(grep -o '"landmarks"' <<<"$cpu" | wc -l)" -ge 2 ] || fail "the CPU run found fewer than two hands: $cpu"
for soc in Ascend310 Ascend310B4; do
  for m in palm hand; do "$pack" "$work/$m.kom" "$work/$m.$soc.om" --soc "$soc" >/dev/null; done
  for mode in device host; do
    npu=$(KES_ASCEND_LIB_DIR="$sim" KES_BACKEND=ascend KES_SIM_SOC=$soc KES_SIM_RUN_MODE=$mode \
      "$hands" "$work/palm.$soc.om" "$work/hand.$soc.om" "${photos[@]}" --out "$work/out" 2>"$work/stderr") ||
      { cat "$work/stderr"; fail "$soc/$mode: hands failed"; }
    # The decoded size aside: photo 3 is 675 pixels high, which the 310's JPEGD keeps and the 310B's and
    # the CPU's round down to even (BOARD-RULES §JPEGD); the palms, regions and landmarks are the same.
    [ "$(sized <<<"$npu")" == "$(sized <<<"$cpu")" ] || fail "$soc/$mode decoded other sizes: $(sized <<<"$npu")"
    [ "$(unsized <<<"$npu")" == "$(unsized <<<"$cpu")" ] ||
      { echo "FAIL: $soc/$mode printed other results:"; diff <(unsized <<<"$cpu") <(unsized <<<"$npu"); exit 1; }
    [ -s "$work/out/photo2_hands.jpg" ] || fail "$soc/$mode: no annotated photo"
    rm -f "$work/out/"*
    echo "hands npu check: $soc, run mode $mode: the same results as on the CPU"
  done
done
