#!/usr/bin/env bash
# ctest hands.LandmarksAgreeWithArmNN: the hands sample end to end on MediaPipe's real models, checked
# against an independent runtime.
#   - palm_detection_full and hand_landmark_full (@mediapipe/hands, from the model cache) converted with
#     kes-convert; face-api's sample photos 2 and 3 (people with hands in view) as JPEGs;
#   - hands --dump writes the exact 224x224 crop each landmark run saw; Arm NN's CpuRef (Debian's
#     python3-pyarmnn, samples/common/armnn_reference.py) runs the original .tflite on those crops: the
#     hand flag and handedness must agree within 0.01 and the landmarks, mapped through the crop matrix hands printed,
#     within 0.5 px; at least the two hands of photo 2 must be hands to Arm NN too (a palm detector or
#     a rotated region gone wrong sends the landmark model crops without a hand), held upright and
#     centred in their crops as MediaPipe's region intends (judged from Arm NN's landmarks: wrist ->
#     middle finger's base within 30 degrees of up, centred vertically within 0.12);
#   - the annotated JPEGs decode at the photo's size and differ from it (the skeleton is drawn);
#   - a clip panning over photo 2: one JSON line per frame, a hand in every frame, and an MP4 holding
#     every frame; a truncated JPEG is an error naming it, and the other photo is still processed; the two
#     models swapped are refused by name.
# Needs engine/tests/models/fetch_models.sh's MediaPipe models, cjpeg/djpeg, ffmpeg/ffprobe and pyarmnn;
# exits 77 (skipped) when they are missing.
#   check.sh KES_CONVERT HANDS WORK_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
fail() { echo "FAIL: $*"; exit 1; }
[ $# -eq 3 ] || { echo "usage: check.sh KES_CONVERT HANDS WORK_DIR" >&2; exit 2; }
convert=$1 hands=$2 work=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in mediapipe/palm_detection_full.tflite mediapipe/hand_landmark_full.tflite photo2.ppm photo3.ppm; do
  [ -f "$cache/$f" ] || skip_missing "hands check: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
for tool in cjpeg djpeg ffmpeg ffprobe; do command -v $tool >/dev/null || skip_missing "hands check: needs $tool"; done
/usr/bin/python3 -c "import numpy, pyarmnn" 2>/dev/null ||
  skip_missing "hands check: needs Arm NN's Python module (apt-get install python3-pyarmnn libarmnn-cpuref-backend22 libarmnntfliteparser22)"
rm -rf "$work"
mkdir -p "$work/out" "$work/dump" "$work/video-dump"
"$convert" "$cache/mediapipe/palm_detection_full.tflite" --output "$work/palm.kom" -q
"$convert" "$cache/mediapipe/hand_landmark_full.tflite" --output "$work/hand.kom" -q
for i in 2 3; do cjpeg -quality 95 "$cache/photo$i.ppm" >"$work/photo$i.jpg"; done

# Photos: results, crops, annotated JPEGs. Four palms each at a low threshold, so that crops without a
# hand reach the landmark model too and its flag is checked on both sides.
"$hands" "$work/palm.kom" "$work/hand.kom" "$work/photo2.jpg" "$work/photo3.jpg" --out "$work/out" \
  --dump "$work/dump" --max-hands 4 --threshold 0.3 >"$work/photos.jsonl"
[ "$(wc -l <"$work/photos.jsonl")" -eq 2 ] || fail "want one JSON line per photo: $(cat "$work/photos.jsonl")"
/usr/bin/python3 "$here/../common/armnn_reference.py" check "$cache/mediapipe/hand_landmark_full.tflite" \
  "$work/photos.jsonl" "$work/dump" 2 3 0 9 2>&1 | grep -v "does not support" || fail "landmarks disagree with Arm NN"
hands_in() { /usr/bin/python3 -c "import json, sys
d = json.loads(sys.stdin.readline())
print(sum(h['presence'] >= 0.5 for h in d['hands']))"; }
[ "$(head -1 "$work/photos.jsonl" | hands_in)" -ge 2 ] || fail "photo 2: want its two hands"
for i in 2 3; do
  [ -f "$work/out/photo${i}_hands.jpg" ] || fail "no annotated photo $i"
  want=$(head -c 64 "$cache/photo$i.ppm" | sed -n 2p | awk '{ print $1 - $1 % 2, $2 - $2 % 2 }')
  got=$(djpeg "$work/out/photo${i}_hands.jpg" | head -c 64 | sed -n 2p || true)  # djpeg gets SIGPIPE
  [ "$got" = "$want" ] || fail "annotated photo $i is $got, want $want"
done
djpeg "$work/photo2.jpg" | cmp -s - <(djpeg "$work/out/photo2_hands.jpg") && fail "nothing drawn on photo 2"

# A clip: photo 2 panned by 4 px a frame, eight frames of H.264.
ffmpeg -v error -y -loop 1 -i "$work/photo2.jpg" -vf "crop=800:600:'min(4*n,150)':40,format=yuv420p" -frames:v 8 \
  -r 25 -c:v libx264 "$work/clip.mp4"
"$hands" "$work/palm.kom" "$work/hand.kom" --video "$work/clip.mp4" --out "$work/out" >"$work/video.jsonl" \
  2>"$work/video.err" || { cat "$work/video.err"; fail "video"; }
[ "$(wc -l <"$work/video.jsonl")" -eq 8 ] || fail "want 8 JSON lines for 8 frames: $(wc -l <"$work/video.jsonl")"
while read -r line; do
  [ "$(echo "$line" | hands_in)" -ge 1 ] || fail "a frame without a hand: $line"
done <"$work/video.jsonl"
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 \
  "$work/out/clip_hands.mp4")
[ "$frames" -eq 8 ] || fail "the annotated MP4 holds $frames frames, want 8"
grep -q "8 frames, 8 with hands, wrote $work/out/clip_hands.mp4" "$work/video.err" || fail "summary: $(cat "$work/video.err")"

# A bad photo is an error naming it; the good one is still processed.
head -c 2000 "$work/photo3.jpg" >"$work/truncated.jpg"
set +e
"$hands" "$work/palm.kom" "$work/hand.kom" "$work/truncated.jpg" "$work/photo2.jpg" --no-annotate \
  >"$work/bad.jsonl" 2>"$work/bad.err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "a truncated JPEG: exit $rc, want 1"
grep -q "hands: $work/truncated.jpg: " "$work/bad.err" || fail "the error does not name the file: $(cat "$work/bad.err")"
grep -q '"image": ".*photo2.jpg"' "$work/bad.jsonl" || fail "the good photo after a bad one was not processed"
# The models swapped: refused by name before any photo is read.
set +e
"$hands" "$work/hand.kom" "$work/palm.kom" "$work/photo2.jpg" >"$work/swapped.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "swapped models: exit $rc, want 1"
grep -q "hands: $work/hand.kom: the model does not take one 192x192 RGB float image" "$work/swapped.out" ||
  fail "swapped models: $(cat "$work/swapped.out")"
echo "hands check passed"
