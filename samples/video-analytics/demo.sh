#!/usr/bin/env bash
# The video-analytics demo: faces tracked on three channels at once, in one process.
#   1. converts MediaPipe's BlazeFace full-range with kes-convert (AIPP inserted: it consumes NV12; batch
#      gears 1, 2 and 4: the detector runs the channels' frames together);
#   2. runs video-analytics on three channels of the face-search demo video (make_demo_data.sh: three
#      photos with zooms and a pan), as three cameras filming the same scene;
#   3. names the tracks with face-search's database when its demo (samples/face-search/demo.sh, run
#      before this one by ./kestrel.sh demo, with the same WORK_DIR) left one: the five people it enrolled,
#      with its MobileFaceNet;
#   4. prints the annotated MP4s (boxes, track ids, names and trails) and the JSON lines (counts,
#      enter/leave events with names, health) per channel.
# Needs the models and photos of engine/tests/models/fetch_models.sh, cjpeg and ffmpeg.
#   demo.sh BUILD_DIR WORK_DIR      (BUILD_DIR holds engine/kes-convert and samples/video-analytics/video-analytics)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: demo.sh BUILD_DIR WORK_DIR" >&2
  exit 2
fi
build=$1 work=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
convert=$build/engine/kes-convert
va=$build/samples/video-analytics/video-analytics
for tool in "$convert" "$va"; do
  [ -x "$tool" ] || { echo "demo.sh: $tool missing (build the kes-convert and video-analytics targets)" >&2; exit 1; }
done
model=$cache/mediapipe/face_detection_full_range.tflite
[ -f "$model" ] || { echo "demo.sh: $model missing (run engine/tests/models/fetch_models.sh)" >&2; exit 1; }
mkdir -p "$work"
[ -f "$work/demo.mp4" ] || bash "$here/../face-search/make_demo_data.sh" "$cache" "$work" >/dev/null
"$convert" "$model" --output "$work/face_full_range.kom" --dynamic-batch 1,2,4 \
  --insert-op-conf "$here/../face-search/aipp_rgb_centered.cfg" >/dev/null
names=()
if [ -f "$work/faces.db" ] && [ -f "$work/faces.db.names" ] && [ -f "$work/mobilefacenet.kom" ]; then
  names=(--load "$work/faces.db" --embedder "$work/mobilefacenet.kom")
  echo "video-analytics face_full_range.kom --load faces.db --embedder mobilefacenet.kom --out tracks demo.mp4 demo.mp4 demo.mp4"
else
  echo "(no face-search database in $work: run samples/face-search/demo.sh first to see the tracks named)"
  echo "video-analytics face_full_range.kom --out tracks demo.mp4 demo.mp4 demo.mp4"
fi
# FFmpeg's libx264 reports its settings on stderr; the rest of stderr is the timing.
"$va" "$work/face_full_range.kom" "${names[@]}" --out "$work/tracks" "$work/demo.mp4" "$work/demo.mp4" \
  "$work/demo.mp4" 2> >(grep -v '^\[libx264 @' >&2 || true)
wait
if [ ${#names[@]} -gt 0 ]; then
  echo
  echo "Tracks named on channel 0 (each track's name is the vote of its recognitions; null: unknown):"
  grep '"type":"leave"' "$work/tracks/ch0_demo.jsonl" | sed 's/^{"type":"leave","channel":0,/  /; s/}$//'
fi
echo
echo "Open $work/tracks/ch0_demo_annotated.mp4 (each face keeps its id, name and colour while in view) and read"
echo "$work/tracks/ch0_demo.jsonl (per frame: the tracks; enter and leave events; health every second)."
