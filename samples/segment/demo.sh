#!/usr/bin/env bash
# The segment demo: MediaPipe's selfie segmentation on the face-search demo video and photos.
#   1. converts selfie_segmentation (256x256; the video is 4:3, nearer square than the 144x256 landscape
#      model's 16:9) with kes-convert;
#   2. runs segment on the demo video (make_demo_data.sh: three photos with zooms and a pan, 640x480) three
#      ways: background blur, a solid green background, and photo 2 as a virtual background;
#   3. blurs the background of the demo photos 1, 3 and 6 and prints every output's path.
# Needs the models and photos of engine/tests/models/fetch_models.sh, cjpeg and ffmpeg.
#   demo.sh BUILD_DIR OUT_DIR      (BUILD_DIR holds engine/kes-convert and samples/segment/segment)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: demo.sh BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build=$1 work=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
convert=$build/engine/kes-convert
segment=$build/samples/segment/segment
for tool in "$convert" "$segment"; do
  [ -x "$tool" ] || { echo "demo.sh: $tool missing (build the kes-convert and segment targets)" >&2; exit 1; }
done
model=$cache/mediapipe/selfie_segmentation.tflite
[ -f "$model" ] || { echo "demo.sh: $model missing (run engine/tests/models/fetch_models.sh)" >&2; exit 1; }
mkdir -p "$work"
[ -f "$work/demo.mp4" ] || bash "$here/../face-search/make_demo_data.sh" "$cache" "$work" >/dev/null
"$convert" "$model" --output "$work/selfie_segmentation.kom" -q
run() { # OUT_SUBDIR ARGS...: JSON lines to OUT_SUBDIR.jsonl; FFmpeg's libx264 chatter dropped from stderr
  local dir=$work/$1
  shift
  mkdir -p "$dir"
  "$segment" "$work/selfie_segmentation.kom" --out "$dir" "$@" >"$dir.jsonl" 2> >(grep -v '^\[libx264 @' >&2 || true)
  wait
}
run blur --video "$work/demo.mp4" "$work/photo1.jpg" "$work/photo3.jpg" "$work/photo6.jpg"
run green --video "$work/demo.mp4" --background colour:00B140
run virtual --video "$work/demo.mp4" --background "$work/photo2.jpg"
echo
echo "Background blur:       $work/blur/demo_segment.mp4"
echo "                       $work/blur/photo1_segment.jpg $work/blur/photo3_segment.jpg $work/blur/photo6_segment.jpg"
echo "Green background:      $work/green/demo_segment.mp4"
echo "Virtual background:    $work/virtual/demo_segment.mp4 (photo 2 behind the people)"
echo "Per frame, the share of the picture in front: $work/blur.jsonl, $work/green.jsonl, $work/virtual.jsonl"
