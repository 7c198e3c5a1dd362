#!/usr/bin/env bash
# The face-search demo: who is in these photos and this video?
#   1. makes the data (make_demo_data.sh): the face-api sample photos as JPEG and a 9 s video of three of
#      them with zooms and a pan;
#   2. converts BlazeFace and MobileFaceNet with kes-convert, their AIPP inserted (they consume NV12);
#   3. enrolls five people by name from photos 1 and 2 and saves the database (faces.db, faces.db.names);
#   4. loads it again and searches photos 3 to 6 and the video: the woman enrolled from photo 1 as "zoe"
#      is named in photo 3 (another night, pose and light), everyone else stays unknown; every photo gets
#      an annotated JPEG and the video an annotated MP4, and face-search prints the paths and its timing.
# Needs the models and photos of engine/tests/models/fetch_models.sh, cjpeg and ffmpeg.
#   demo.sh BUILD_DIR WORK_DIR      (BUILD_DIR holds engine/kes-convert and samples/face-search/face-search)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: demo.sh BUILD_DIR WORK_DIR" >&2
  exit 2
fi
build=$1 work=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
convert=$build/engine/kes-convert
search=$build/samples/face-search/face-search
for tool in "$convert" "$search"; do
  [ -x "$tool" ] || { echo "demo.sh: $tool missing (build the kes-convert and face-search targets)" >&2; exit 1; }
done
for f in blazeface_256.onnx mobilefacenet.tflite; do
  [ -f "$cache/$f" ] || { echo "demo.sh: $cache/$f missing (run engine/tests/models/fetch_models.sh)" >&2; exit 1; }
done
mkdir -p "$work/out"
step() { printf '\n-- %s\n' "$*"; }

step "demo data: the face-api sample photos and a video made from them"
bash "$here/make_demo_data.sh" "$cache" "$work"
step "models: BlazeFace 256 and MobileFaceNet, converted with their AIPP (NV12 in, as on a board)"
"$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256.kom" --insert-op-conf "$here/aipp_rgb_centered.cfg" >/dev/null
"$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet.kom" --dynamic-batch 1,2 \
  --insert-op-conf "$here/aipp_rgb_centered.cfg" >/dev/null
echo "$work/blazeface_256.kom, $work/mobilefacenet.kom"
models=("$work/blazeface_256.kom" "$work/mobilefacenet.kom")

# FFmpeg's libx264 reports its settings on stderr; the rest of stderr is face-search's timing.
quiet_x264() { grep -v '^\[libx264 @' >&2 || true; }

step "enroll: five people by name, from photos 1 and 2 (faces are numbered left to right)"
echo "face-search ${models[*]##*/} --enroll ava=photo1.jpg:0 ... --save faces.db"
"$search" "${models[@]}" \
  --enroll ava="$work/photo1.jpg:0" --enroll mia="$work/photo1.jpg:1" --enroll zoe="$work/photo1.jpg:2" \
  --enroll lea="$work/photo2.jpg:0" --enroll ivy="$work/photo2.jpg:1" --save "$work/faces.db" 2>/dev/null

step "search: photos 3 to 6 and the video, against the saved database"
echo "face-search ${models[*]##*/} --load faces.db --out out photo3.jpg ... photo6.jpg --video demo.mp4"
"$search" "${models[@]}" --load "$work/faces.db" --out "$work/out" \
  "$work/photo3.jpg" "$work/photo4.jpg" "$work/photo5.jpg" "$work/photo6.jpg" --video "$work/demo.mp4" \
  2> >(quiet_x264)
wait
echo
echo "Open $work/out/photo3_annotated.jpg (zoe, enrolled from photo 1, named in photo 3) and $work/out/demo_annotated.mp4."
echo "Your own photos: face-search ${models[*]} --enroll NAME=you.jpg [--save db] group.jpg --video clip.mp4|rtsp://camera"
