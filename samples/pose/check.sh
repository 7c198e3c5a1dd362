#!/usr/bin/env bash
# ctest pose.LandmarksAgreeWithArmNN: the pose sample on MediaPipe's pose_detection and pose_landmark_full
# (@mediapipe/pose, from the model cache) and face-api's sample photos 1, 4 and 6 (people standing or
# sitting, upper bodies in view). pose --dump writes the 256x256 crop each landmark run saw; Arm NN's
# CpuRef (samples/common/armnn_reference.py) runs the original pose_landmark_full.tflite on those crops:
# the pose flag within 0.01, the 33 landmarks through the printed crop matrix within 0.5 px and their
# visibility within 0.01; a person must be found in at least two of the photos (the detector and the
# rotated region from its keypoints lead to crops the landmark model, run by Arm NN, calls a pose); the
# annotated JPEGs decode at the photos' sizes.
# pose_detection.tflite holds sparse weights (the DENSIFY op, densified at conversion) and a DEPTH_TO_SPACE.
# Needs the MediaPipe models (engine/tests/models/fetch_models.sh), cjpeg/djpeg
# and pyarmnn; exits 77 (skipped) when they are missing.
#   check.sh KES_CONVERT POSE WORK_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
fail() { echo "FAIL: $*"; exit 1; }
[ $# -eq 3 ] || { echo "usage: check.sh KES_CONVERT POSE WORK_DIR" >&2; exit 2; }
convert=$1 pose=$2 work=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in mediapipe/pose_detection.tflite mediapipe/pose_landmark_full.tflite photo1.ppm photo4.ppm photo6.ppm; do
  [ -f "$cache/$f" ] || skip_missing "pose check: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
for tool in cjpeg djpeg; do command -v $tool >/dev/null || skip_missing "pose check: needs $tool"; done
/usr/bin/python3 -c "import numpy, pyarmnn" 2>/dev/null ||
  skip_missing "pose check: needs Arm NN's Python module (apt-get install python3-pyarmnn libarmnn-cpuref-backend22 libarmnntfliteparser22)"
rm -rf "$work"
mkdir -p "$work/out" "$work/dump"
"$convert" "$cache/mediapipe/pose_detection.tflite" --output "$work/detector.kom" -q || fail "pose_detection does not convert"
"$convert" "$cache/mediapipe/pose_landmark_full.tflite" --output "$work/landmark.kom" -q
for i in 1 4 6; do cjpeg -quality 95 "$cache/photo$i.ppm" >"$work/photo$i.jpg"; done
"$pose" "$work/detector.kom" "$work/landmark.kom" "$work/photo1.jpg" "$work/photo4.jpg" "$work/photo6.jpg" \
  --out "$work/out" --dump "$work/dump" >"$work/photos.jsonl"
[ "$(wc -l <"$work/photos.jsonl")" -eq 3 ] || fail "want one JSON line per photo: $(cat "$work/photos.jsonl")"
/usr/bin/python3 "$here/../common/armnn_reference.py" check "$cache/mediapipe/pose_landmark_full.tflite" \
  "$work/photos.jsonl" "$work/dump" 2 5 2>&1 | grep -v "does not support" || fail "landmarks disagree with Arm NN"
for i in 1 4 6; do
  want=$(head -c 64 "$cache/photo$i.ppm" | sed -n 2p | awk '{ print $1 - $1 % 2, $2 - $2 % 2 }')
  got=$(djpeg "$work/out/photo${i}_pose.jpg" | head -c 64 | sed -n 2p || true) # djpeg gets SIGPIPE
  [ "$got" = "$want" ] || fail "annotated photo $i is $got, want $want"
done
echo "pose check passed"
