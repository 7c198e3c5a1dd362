#!/usr/bin/env bash
# The pose demo: MediaPipe's pose detection → rotated crop → 33 pose landmarks, drawn as a skeleton.
#   1. converts pose_detection and pose_landmark_full (from @mediapipe/pose, in the model cache) with kes-convert;
#   2. runs pose on face-api's photos of people (1, 4 and 6) and on the face-search demo video;
#   3. prints the annotated JPEGs and MP4 (one JSON line per photo and frame goes to poses.jsonl).
# Needs the models and photos of engine/tests/models/fetch_models.sh, cjpeg and ffmpeg.
#   demo.sh BUILD_DIR WORK_DIR      (BUILD_DIR holds engine/kes-convert and samples/pose/pose)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: demo.sh BUILD_DIR WORK_DIR" >&2
  exit 2
fi
build=$1 work=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
convert=$build/engine/kes-convert
pose=$build/samples/pose/pose
for tool in "$convert" "$pose"; do
  [ -x "$tool" ] || { echo "demo.sh: $tool missing (build the kes-convert and pose targets)" >&2; exit 1; }
done
for f in mediapipe/pose_detection.tflite mediapipe/pose_landmark_full.tflite photo1.ppm photo4.ppm photo6.ppm; do
  [ -f "$cache/$f" ] || { echo "demo.sh: $cache/$f missing (run engine/tests/models/fetch_models.sh)" >&2; exit 1; }
done
mkdir -p "$work/pose"
[ -f "$work/demo.mp4" ] || bash "$here/../face-search/make_demo_data.sh" "$cache" "$work" >/dev/null
"$convert" "$cache/mediapipe/pose_detection.tflite" --output "$work/pose_detection.kom" -q
"$convert" "$cache/mediapipe/pose_landmark_full.tflite" --output "$work/pose_landmark_full.kom" -q
photos=()
for i in 1 4 6; do
  cjpeg -quality 95 "$cache/photo$i.ppm" >"$work/pose/photo$i.jpg"
  photos+=("$work/pose/photo$i.jpg")
done
echo "pose pose_detection.kom pose_landmark_full.kom photo1.jpg photo4.jpg photo6.jpg --video demo.mp4 --max-frames 75"
"$pose" "$work/pose_detection.kom" "$work/pose_landmark_full.kom" "${photos[@]}" --video "$work/demo.mp4" --max-frames 75 \
  --out "$work/pose" >"$work/pose/poses.jsonl" 2> >(grep -v '^\[libx264 @' >&2 || true)
wait
echo
echo "Annotated (skeleton, landmarks):"
for f in "$work"/pose/*_pose* "$work"/pose/*annotated*; do [ -f "$f" ] && echo "  $f"; done
echo "One JSON line per photo and frame: $work/pose/poses.jsonl"
